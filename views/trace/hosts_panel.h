#pragma once

// The Hosts tab of a multi-host run profile: step time per host and step as a heat strip (the
// colour says how far a host is from the step's median across hosts), the slowest host of each
// step and by how much, and the ops whose per-host time varies most. Clicking a cell asks the
// owner to show that host at that step on the timeline.

#include <QImage>
#include <QWidget>
#include <memory>

#include "core/trace/hosts.h"
#include "core/workspace.h"

class QLabel;
class QTableWidget;

namespace stallscope {

using HostsAnalysisPtr = std::shared_ptr<const trace::HostsAnalysis>;

// Where paintHostHeatmap drew each cell, for clicks and tests.
struct HostHeatmapLayout {
    QRectF grid;
    std::vector<std::vector<QRectF>> cells;  // [host][step]; empty rect: the host has no such step
};
// The colour of a step time `ratio` times the step's median: white at 1, red from +2 % up to
// +50 % and more, blue below.
QColor stepRatioColor(double ratio);
HostHeatmapLayout paintHostHeatmap(QPainter& painter, const QRectF& area,
                                   const trace::HostsAnalysis& analysis);

// `render hosts PROFILE`: the heat strip of a multi-host run (the stored analysis, else computed).
QImage renderHosts(const Workspace& workspace, const ProfileInfo& profile, QSize size);

class HostHeatmapWidget : public QWidget {
    Q_OBJECT
  public:
    explicit HostHeatmapWidget(QWidget* parent = nullptr);
    void setAnalysis(HostsAnalysisPtr analysis);
    const HostHeatmapLayout& heatmapLayout() const { return layout_; }
    // The (host, step) under `pos`, or (-1, -1).
    std::pair<int, int> cellAt(const QPointF& pos) const;

  signals:
    void cellClicked(int host, int step);

  protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

  private:
    HostsAnalysisPtr analysis_;
    HostHeatmapLayout layout_;
};

class HostsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit HostsPanel(QWidget* parent = nullptr);
    void setAnalysis(HostsAnalysisPtr analysis);
    const HostsAnalysisPtr& analysis() const { return analysis_; }
    HostHeatmapWidget* heatmap() const { return heatmap_; }
    QTableWidget* stragglerTable() const { return stragglers_; }
    QTableWidget* opTable() const { return ops_; }
    // Per host: slices, steps, median and slowest step, and where its device time went (the
    // step categories' shares, as `hosts` prints them). A click shows its slowest step.
    QTableWidget* hostTable() const { return hostTable_; }

  signals:
    // Show `host` at `step` (indices into the analysis) on the timeline.
    void hostStepActivated(int host, int step);

  private:
    HostsAnalysisPtr analysis_;
    QLabel* summary_ = nullptr;
    HostHeatmapWidget* heatmap_ = nullptr;
    QTableWidget* hostTable_ = nullptr;
    QTableWidget* stragglers_ = nullptr;
    QTableWidget* ops_ = nullptr;
};

}  // namespace stallscope
