#pragma once

// The critical path in the trace view (core/graph/critical_path.h): a Critical path tab (a
// step picker, the step's time by kind as a bar, its segments in time order, and each step
// recommendation re-simulated), the path as a strip above the tracks and outlined on the tracks
// it ran on (C toggles both), and the overview's section. A trace without a graph says why.

#include <QWidget>
#include <memory>

#include "core/graph/critical_path.h"
#include "views/trace/trace_panel.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QTableWidget;

namespace stallscope {

class CriticalPathOverlay;
class WhatifBox;

// The selected step's time by kind: one stacked bar with a legend of the kinds on it.
class PathKindBar : public QWidget {
  public:
    explicit PathKindBar(QWidget* parent = nullptr);
    void setShares(const std::array<int64_t, graph::kPathKinds.size()>& byKind);
    QSize sizeHint() const override { return {480, 44}; }

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    std::array<int64_t, graph::kPathKinds.size()> byKind_{};
};

class CriticalPathTracePanel : public TracePanel {
    Q_OBJECT
  public:
    explicit CriticalPathTracePanel(TracePanelHost& host);
    ~CriticalPathTracePanel() override;

    std::string_view analysis() const override { return "critical_path"; }
    QString title() const override { return tr("Critical path"); }
    QWidget* widget() override { return page_; }
    QString overviewHtml() const override;
    int overviewOrder() const override { return 1; }  // right after the steps
    void setResult(const analysis::Result& result) override;
    void showMessage(const QString& text) override;
    void clear() override;
    std::vector<std::shared_ptr<TimelineTrack>> leadingTracks() const override;
    // The what-if's last Preview: each re-simulated lane under the track it re-simulates.
    std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> companionTracks()
        const override;

    void setPath(std::shared_ptr<const graph::CriticalPath> path);
    const std::shared_ptr<const graph::CriticalPath>& result() const { return path_; }
    // The path on the timeline (strip and outlines): C toggles it.
    void setShownOnTimeline(bool shown);
    bool shownOnTimeline() const { return shown_; }
    void showStep(int index);
    // Zooms to segment `row` of the shown step, with the step around it for context.
    void showSegment(int row);
    QTableWidget* segmentTable() const { return segments_; }
    QTableWidget* savingTable() const { return savings_; }
    PathKindBar* kindBar() const { return bar_; }
    // Edits of this trace re-simulated, saved as derived profiles, compared (whatif_box.h).
    WhatifBox* whatif() const { return whatif_; }

  private:
    void fillSavings();

    std::shared_ptr<const graph::CriticalPath> path_;
    std::shared_ptr<CriticalPathOverlay> overlay_;
    bool shown_ = true;
    int step_ = -1;
    QWidget* page_ = nullptr;
    QLabel* summary_ = nullptr;
    QComboBox* picker_ = nullptr;
    QCheckBox* onTimeline_ = nullptr;
    PathKindBar* bar_ = nullptr;
    QTableWidget* segments_ = nullptr;
    QTableWidget* savings_ = nullptr;
    WhatifBox* whatif_ = nullptr;
};

}  // namespace stallscope
