#pragma once

// The step analysis in the trace view: the Steps tab, a step picker in the find bar ([ and ]
// step through), the step strip above the tracks and the step boundaries over them, the
// overview's Steps section and the recommendations in the suggestions dock.

#include <map>
#include <memory>
#include <optional>

#include "core/graph/step_savings.h"
#include "core/trace/step_analysis.h"
#include "views/common/timeline_track.h"
#include "views/trace/trace_panel.h"

class QComboBox;

namespace stallscope {

class StepBoundaryOverlay;
class StepsPanel;

class StepsTracePanel : public TracePanel {
    Q_OBJECT
  public:
    explicit StepsTracePanel(TracePanelHost& host);
    ~StepsTracePanel() override;

    std::string_view analysis() const override { return "steps"; }
    QString title() const override { return tr("Steps"); }
    QWidget* widget() override;
    QList<QWidget*> findBarWidgets() override;
    QString overviewHtml() const override;
    void setResult(const analysis::Result& result) override;
    void showMessage(const QString& text) override;
    void clear() override;
    std::vector<std::shared_ptr<TimelineTrack>> leadingTracks() const override;
    QList<SuggestionItem> suggestions() const override;
    // Recommendations by their re-simulated saving (the critical path's), largest first.
    void showSuggestion(int index) override;
    // The recommendation at suggestion `index`, when an edit expresses it (its kind, as the
    // what-if names it).
    std::optional<QString> editKindOf(int index) const;
    void otherResult(std::string_view name, const analysis::Result& result) override;

    void setAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis);
    const std::shared_ptr<const trace::StepAnalysis>& result() const { return steps_; }
    StepsPanel* stepsPanel() const { return panel_; }
    QComboBox* stepPicker() const { return picker_; }
    // Zooms the timeline to step `index` (StepAnalysis::steps) with a margin.
    void showStep(int index);
    // Zooms to where recommendation `index` shows.
    void showRecommendation(int index);

  signals:
    void stepsReady();

  private:
    void setDevice(int device);
    void followWindow(TimeRange window);
    // The recommendation's re-simulated saving, if an edit expresses it.
    const graph::StepSaving* savingOf(const trace::StepRecommendation& r) const;
    // Recommendation indices by re-simulated saving (those without one after, in order).
    std::vector<int> byResimulatedSaving() const;

    std::shared_ptr<const trace::StepAnalysis> steps_;
    std::shared_ptr<StepBoundaryOverlay> boundaries_;
    StepsPanel* panel_ = nullptr;
    QComboBox* picker_ = nullptr;
    int device_ = 0;
    // Per device, its utilisation lane, kept while the analysis is (it caches the busy time).
    mutable std::map<int, std::shared_ptr<TimelineTrack>> utilisation_;
    std::vector<graph::StepSaving> savings_;
};

}  // namespace stallscope
