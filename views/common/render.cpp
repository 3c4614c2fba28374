#include "views/common/render.h"

#include "views/replay/replay_compare_view.h"

#include "core/errors.h"
#include "views/cpi/cpi_compare_view.h"
#include "views/cpi/cpi_view.h"
#include "views/estimates/estimates_view.h"
#include "views/noise/absorption_view.h"
#include "views/noise/noise_compare_view.h"
#include "views/replay/replay_render.h"
#include "views/trace/trace_compare_view.h"
#include "views/trace/trace_view.h"

namespace stallscope {

const std::vector<RendererEntry>& renderers() {
    // One entry per view and the kinds it draws; each view module adds its own line.
    static const std::vector<RendererEntry> all{
        {"cpi", {"cpi"}, renderCpi},
        {"absorption", {"noise"}, renderAbsorption},
        {"estimates", {"estimates"}, renderEstimates},
        {"timeline", {"replay"}, renderReplayTimeline},
        {"timeline", {"trace"}, renderTraceTimeline},
        {"compare", {"trace"}, renderTraceCompare},
        {"compare", {"replay"}, renderReplayCompare},
        {"compare", {"cpi"}, renderCpiCompare},
        {"compare", {"noise"}, renderNoiseCompare},
        {"dma", {"replay"}, renderReplayDma},
        {"utilization", {"replay"}, renderReplayUtilization},
        {"dcache", {"replay"}, renderReplayDcache},
        {"overview", {"replay"}, renderReplayOverview},
    };
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
