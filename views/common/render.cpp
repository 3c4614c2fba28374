#include "views/common/render.h"

#include "core/errors.h"
#include "views/view_kinds.h"

namespace stallscope {

const std::vector<RendererEntry>& renderers() {
    // Each kind's renderers, from the kinds table (views/common/view_kinds.cpp).
    static const std::vector<RendererEntry> all = [] {
        std::vector<RendererEntry> entries;
        for (const ViewKind& kind : viewKinds())
            for (const auto& [view, render] : kind.renderers)
                entries.push_back({view, {std::string(kind.name)}, render});
        return entries;
    }();
    return all;
}

QImage renderView(const std::string& view, const Workspace& workspace, const ProfileInfo& profile,
                  const RenderOptions& options) {
    std::string known;
    for (const RendererEntry& entry : renderers()) {
        if (entry.view != view) continue;
        for (const std::string& kind : entry.kinds)
            if (kind == profile.kind) return entry.render(workspace, profile, options);
    }
    for (const RendererEntry& entry : renderers()) {
        if (entry.view == view) {
            for (const std::string& kind : entry.kinds) known += (known.empty() ? "" : ", ") + kind;
        }
    }
    if (known.empty()) {
        std::string views;
        for (const RendererEntry& entry : renderers())
            if (views.find(entry.view) == std::string::npos)
                views += (views.empty() ? "" : ", ") + entry.view;
        throw InputError("unknown view '" + view + "'" +
                         (views.empty() ? std::string() : " (views: " + views + ")"));
    }
    throw InputError("view '" + view + "' does not draw " + profile.kind + " profiles (it draws " +
                     known + ")");
}

}  // namespace stallscope
