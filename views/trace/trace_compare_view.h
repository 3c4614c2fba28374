#pragma once

// Before/after comparison of two trace profiles (issue 8): the summary line, both timelines
// stacked with a linked time scale (aligned at their starts), the per-op delta table (sortable,
// filterable, CSV export) and the CDFs of normalized op durations.

#include <QWidget>
#include <memory>

#include "core/compare/trace_compare.h"
#include "core/trace/step_analysis.h"
#include "views/common/async_job.h"
#include "views/common/render.h"
#include "views/common/time_navigation.h"
#include "views/trace/steps_panel.h"
#include "views/trace/trace_tracks.h"
#include "views/trace/transfer_compare.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTableWidget;
class QStandardItemModel;
class QSortFilterProxyModel;

namespace stallscope {

class TimelineView;

// Two step curves of the fraction of slices at or below a normalized duration: B solid orange,
// A dashed blue on top (visible where they coincide), A's median (1.0) marked; x on a log scale
// when the values span more than a decade.
class CdfChart : public QWidget {
  public:
    static const QColor kColorA, kColorB;
    explicit CdfChart(QWidget* parent = nullptr);
    // `op`: the op the curves cover, or trace::kAllOps (named in the title and x-axis title).
    void setCurves(std::vector<trace::CdfPoint> a, std::vector<trace::CdfPoint> b,
                   const QString& op = {});
    void paintChart(QPainter& painter, const QRect& rect) const;
    QRect plotArea(const QRect& rect) const;
    double xOf(double value, const QRect& plot) const;
    QString xTitle() const;
    QSize sizeHint() const override { return {420, 260}; }

  protected:
    void paintEvent(QPaintEvent*) override;

  private:
    std::vector<trace::CdfPoint> a_, b_;
    QString op_;
    double low_ = 0.1, high_ = 10;
    bool log_ = false;
};

struct TraceComparisonData {
    TraceSourcePtr a, b;
    trace::TraceComparison comparison;
    // Where each one's step time goes (stored with the profiles after the first analysis).
    std::shared_ptr<const trace::StepAnalysis> stepsA, stepsB;
    // Their transfers, per run and per transfer (stored with the profiles at import).
    TransferComparisonData transfers;
};
// Opens both profiles and compares them (off the GUI thread).
TraceComparisonData loadTraceComparison(const std::string& workspacePath, int64_t a, int64_t b);

class CompareView : public QWidget {
    Q_OBJECT
  public:
    explicit CompareView(QWidget* parent = nullptr);
    // The delta model's columns of the change (shown second and third).
    static constexpr int kDeltaTotalColumn = 11, kDeltaPctColumn = 12;
    void open(const std::string& workspacePath, int64_t a, int64_t b);  // on a worker
    void setData(TraceComparisonData data);

    TimelineView* timelineA() const { return timelineA_; }
    TimelineView* timelineB() const { return timelineB_; }
    QTableView* deltaTable() const { return table_; }
    QStandardItemModel* deltaModel() const { return model_; }
    CdfChart* cdfChart() const { return chart_; }
    QComboBox* cdfOpBox() const { return cdfOp_; }
    // Steps side by side: per category share of step time in A and B, both step charts on one
    // scale, and which recommendations went, came or stayed.
    QTableWidget* stepDeltaTable() const { return stepTable_; }
    QLabel* stepRecommendationLabel() const { return stepRecommendations_; }
    StepChartWidget* stepChartA() const { return stepChartA_; }
    StepChartWidget* stepChartB() const { return stepChartB_; }
    // Transfers before/after: per module run, per transfer, and one run's lifetimes A over B.
    TransferComparePane* transferPane() const { return transferPane_; }
    // Shows the CDFs of another op (trace::kAllOps: all ops, each ÷ its own median in A).
    void setCdfOp(const std::string& op);
    QString summary() const;
    void setOpFilter(const QString& text);
    QString deltaCsv() const;  // the shown rows in the shown order
    bool exportCsv(const QString& path, QString* error = nullptr) const;
    // Both timelines synchronous (headless rendering and tests).
    void setAsynchronous(bool on);

  signals:
    void loaded();

  private:
    void showLoadError(const QString& error);
    async::JobSlot loadJob_{this, [this](const QString& error) { showLoadError(error); }};
    void linkWindows();
    QWidget* buildStepsPane();
    void showSteps();
    TraceComparisonData data_;
    QTableWidget* stepTable_ = nullptr;
    QLabel* stepRecommendations_ = nullptr;
    StepChartWidget* stepChartA_ = nullptr;
    StepChartWidget* stepChartB_ = nullptr;
    TransferComparePane* transferPane_ = nullptr;
    std::unique_ptr<TraceTimelineBinding> bindingA_, bindingB_;
    QLabel* summary_ = nullptr;
    QLabel* labelA_ = nullptr;
    QLabel* labelB_ = nullptr;
    TimelineView* timelineA_ = nullptr;
    TimelineView* timelineB_ = nullptr;
    QLineEdit* filter_ = nullptr;
    QTableView* table_ = nullptr;
    QStandardItemModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QComboBox* cdfOp_ = nullptr;
    CdfChart* chart_ = nullptr;
    TimeNavigation* navigation_ = new TimeNavigation(this);
};

QWidget* createCompareView(const ProfileInfo& a, const ProfileInfo& b,
                           const QString& workspacePath);

// `render compare A --against B` for trace profiles (`--op` picks the CDF's op).
QImage renderTraceCompare(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options);
// `render transfers A --against B`: the same comparison with its Transfers tab shown.
QImage renderTransferCompare(const Workspace& workspace, const ProfileInfo& profile,
                             const RenderOptions& options);

}  // namespace stallscope
