// The trace view as its panels' host (views/trace/trace_panel.h): loading each panel's
// analysis, and what panels ask of the view.

#include <QTabWidget>
#include <QTextBrowser>
#include <algorithm>

#include "core/analysis/cache.h"
#include "core/analysis/registry.h"
#include "views/common/timeline_view.h"
#include "views/shell/elided_label.h"
#include "views/trace/critical_path_trace_panel.h"
#include "views/trace/steps_trace_panel.h"
#include "views/trace/trace_view.h"
#include "views/trace/whatif_box.h"

namespace stallscope {

std::unique_ptr<Workspace> openForAnalyses(const std::string& workspacePath) {
    try {
        return Workspace::open(workspacePath);  // stores a first analysis
    } catch (const std::exception&) {
        return Workspace::open(workspacePath, Workspace::Mode::ReadOnly);  // computes only
    }
}

namespace {

struct Loaded {
    analysis::Result result;
    std::string notice;
};

}  // namespace

// Each applying panel's analysis, obtained through the cache on a worker of its own.
void TraceView::loadAnalyses(const std::string& workspacePath, int64_t profileId) {
    for (size_t i = 0; i < panels_.size(); ++i) {
        TracePanel* panel = panels_[i].get();
        if (!panel->appliesTo(source_.get())) continue;
        const analysis::Definition* definition = analysis::find(panel->analysis());
        if (!definition) continue;
        const QString analysing = tr("Analysing %1…")
                                      .arg(QString::fromUtf8(panel->analysis().data(),
                                                             qsizetype(panel->analysis().size())));
        panel->showMessage(analysing);
        analysisJobs_[i]->start(
            [workspacePath, profileId, definition] {
                const std::unique_ptr<Workspace> workspace = openForAnalyses(workspacePath);
                analysis::Obtained got = analysis::obtain(*workspace, profileId, *definition);
                return Loaded{std::move(got.result), std::move(got.notice)};
            },
            [this, panel, analysing](Loaded loaded) {
                // The status line said it was analysing: it is done (a panel that says more
                // replaces this below).
                if (status_->text() == analysing) status_->setText({});
                if (!loaded.notice.empty()) status_->setText(QString::fromStdString(loaded.notice));
                setAnalysis(panel->analysis(), loaded.result);
            });
    }
}

void TraceView::setAnalysis(std::string_view name, const analysis::Result& result) {
    for (const auto& panel : panels_)
        if (panel->analysis() == name) panel->setResult(result);
    for (const auto& panel : panels_)
        if (panel->analysis() != name) panel->otherResult(name, result);
}

void TraceView::panelChanged() {
    if (binding_ && source_) {
        std::vector<std::shared_ptr<TimelineTrack>> leading;
        std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> companions;
        for (const auto& panel : panels_) {
            for (auto& track : panel->leadingTracks()) leading.push_back(std::move(track));
            for (auto& entry : panel->companionTracks()) companions.push_back(std::move(entry));
        }
        binding_->setCompanionTracks(std::move(companions));
        binding_->setLeadingTracks(std::move(leading));
    }
    refreshOverview();
    emit suggestionsReady(suggestionItems());
}

void TraceView::refreshOverview() {
    overview_->setHtml(overviewHtml());
}

void TraceView::setStatus(const QString& text) {
    status_->setText(text);
}

void TraceView::raisePanel(const QWidget* widget) {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->widget(i) == widget) tabs_->setCurrentIndex(i);
}

void TraceView::showRange(int64_t start, int64_t end) {
    if (!source_) return;
    const double from = double(start - source_->origin()), to = double(end - source_->origin());
    const double margin = std::max((to - from) * 0.03, 1.0);
    timeline_->setWindow({from - margin, to + margin});
}

// Panels by suggestion order (transfer edits, re-simulated, before the step bounds).
namespace {
std::vector<TracePanel*> bySuggestionOrder(const std::vector<std::unique_ptr<TracePanel>>& all) {
    std::vector<TracePanel*> out;
    for (const auto& p : all) out.push_back(p.get());
    std::stable_sort(out.begin(), out.end(), [](const TracePanel* a, const TracePanel* b) {
        return a->suggestionOrder() < b->suggestionOrder();
    });
    return out;
}
}  // namespace

QList<SuggestionItem> TraceView::suggestionItems() const {
    QList<SuggestionItem> items;
    for (const TracePanel* panel : bySuggestionOrder(panels_)) items += panel->suggestions();
    return items;
}

void TraceView::previewSuggestion(int index, bool apply) {
    showSuggestion(index);
    auto* steps = panel<StepsTracePanel>();
    auto* path = panel<CriticalPathTracePanel>();
    if (!steps || !path) return;
    for (TracePanel* p : bySuggestionOrder(panels_)) {
        const int count = int(p->suggestions().size());
        if (index >= count) {
            index -= count;
            continue;
        }
        if (p != steps) return;
        const std::optional<QString> kind = steps->editKindOf(index);
        if (!kind) return;
        raisePanel(path->widget());
        path->whatif()->proposeRecommendation(*kind);
        if (apply)
            path->whatif()->apply();
        else
            path->whatif()->preview();
        return;
    }
}

void TraceView::showSuggestion(int index) {
    for (TracePanel* panel : bySuggestionOrder(panels_)) {
        const int count = int(panel->suggestions().size());
        if (index < count) {
            panel->showSuggestion(index);
            return;
        }
        index -= count;
    }
}

}  // namespace stallscope
