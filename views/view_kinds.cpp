#include "views/view_kinds.h"

#include "core/errors.h"
#include "core/kinds.h"
#include "views/cpi/cpi_compare_view.h"
#include "views/cpi/cpi_view.h"
#include "views/estimates/estimates_view.h"
#include "views/noise/absorption_view.h"
#include "views/noise/noise_compare_view.h"
#include "views/replay/replay_compare_view.h"
#include "views/replay/replay_profile_tab.h"
#include "views/replay/replay_render.h"
#include "views/trace/hosts_panel.h"
#include "views/trace/step_chart.h"
#include "views/trace/trace_compare_view.h"
#include "views/trace/trace_view.h"

namespace stallscope {

const std::vector<ViewKind>& viewKinds() {
    static const std::vector<ViewKind> all{
        {kinds::kReplay,
         // Overview, timeline and data-cache pages of one profile.
         [](const ProfileInfo& profile, const QString& path) -> QWidget* {
             return new ReplayProfileTab(profile, path);
         },
         [](const ProfileInfo& a, const ProfileInfo& b, const QString& path) -> QWidget* {
             return new ReplayCompareView(a, b, path);
         },
         {},
         {},
         {{"timeline", renderReplayTimeline},
          {"dma", renderReplayDma},
          {"utilization", renderReplayUtilization},
          {"dcache", renderReplayDcache},
          {"overview", renderReplayOverview},
          {"compare", renderReplayCompare}}},
        {kinds::kNoise,
         createNoiseView,
         [](const ProfileInfo& a, const ProfileInfo& b, const QString& path) -> QWidget* {
             return new NoiseCompareView(a, b, path);
         },
         [](QWidget* view, QObject* context, ViewKind::SuggestionsHandler handler) {
             if (auto* absorption = qobject_cast<AbsorptionView*>(view))
                 QObject::connect(absorption, &AbsorptionView::suggestionsReady, context,
                                  std::move(handler));
         },
         {},
         {{"absorption", renderAbsorption}, {"compare", renderNoiseCompare}}},
        {kinds::kCpi,
         createCpiView,
         [](const ProfileInfo& a, const ProfileInfo& b, const QString& path) -> QWidget* {
             return new CpiCompareView(a, b, path);
         },
         [](QWidget* view, QObject* context, ViewKind::SuggestionsHandler handler) {
             if (auto* cpi = qobject_cast<CpiView*>(view))
                 QObject::connect(cpi, &CpiView::suggestionsChanged, context, std::move(handler));
         },
         {},
         {{"cpi", renderCpi}, {"compare", renderCpiCompare}}},
        {kinds::kEstimates, createEstimatesView, {}, {}, {}, {{"estimates", renderEstimates}}},
        {kinds::kTrace,
         createTraceView,
         createCompareView,
         // Step recommendations, each shown on the timeline when clicked.
         [](QWidget* view, QObject* context, ViewKind::SuggestionsHandler handler) {
             if (auto* trace = qobject_cast<TraceView*>(view))
                 QObject::connect(trace, &TraceView::suggestionsReady, context, std::move(handler));
         },
         [](QWidget* view, int index) {
             if (auto* trace = qobject_cast<TraceView*>(view)) trace->showSuggestion(index);
         },
         {{"timeline", renderTraceTimeline},
          {"overview", renderTraceOverview},
          {"compare", renderTraceCompare},
          {"transfers", renderTransferCompare},
          {"steps",
           [](const Workspace& workspace, const ProfileInfo& profile,
              const RenderOptions& options) {
               return steps::renderSteps(workspace, profile, options.size);
           }},
          {"hosts",
           [](const Workspace& workspace, const ProfileInfo& profile,
              const RenderOptions& options) {
               return renderHosts(workspace, profile, options.size);
           }}},
         [](QWidget* view, int index, bool apply) {
             if (auto* trace = qobject_cast<TraceView*>(view))
                 trace->previewSuggestion(index, apply);
         }},
    };
    return all;
}

const ViewKind* findViewKind(std::string_view name) {
    for (const ViewKind& kind : viewKinds())
        if (kind.name == name) return &kind;
    return nullptr;
}

const std::vector<RendererEntry>& renderers() {
    // Each kind's renderers, from the kinds table.
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
