#pragma once

// The Steps tab of a trace profile: where each step's time goes on a device (stacked bars with
// the step-time line, a table), the device idle gaps with what the host did meanwhile, and the
// recommendations. Clicking a bar, a row, a gap or a recommendation asks the owner to show it
// on the timeline.

#include <QWidget>
#include <memory>

#include "core/trace/step_analysis.h"
#include "views/trace/step_chart.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QTableWidget;
class QTabWidget;

namespace stallscope {

// Paints the step chart and reports hovers and clicks on its bars.
class StepChartWidget : public QWidget {
    Q_OBJECT
  public:
    explicit StepChartWidget(QWidget* parent = nullptr);
    void setAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis);
    void setOptions(const steps::ChartOptions& options);
    const steps::ChartLayout& chartLayout() const { return layout_; }
    // The step whose column holds `pos`, or -1.
    int stepAt(const QPointF& pos) const;

  signals:
    void stepClicked(int step);

  protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

  private:
    std::shared_ptr<const trace::StepAnalysis> analysis_;
    steps::ChartOptions options_;
    steps::ChartLayout layout_;
};

class StepsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit StepsPanel(QWidget* parent = nullptr);
    void setAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis);
    void showMessage(const QString& text);  // while loading, or why there is nothing
    const std::shared_ptr<const trace::StepAnalysis>& analysis() const { return analysis_; }
    int device() const;
    StepChartWidget* chart() const { return chart_; }
    QTableWidget* stepTable() const { return stepTable_; }
    QTableWidget* gapTable() const { return gapTable_; }
    QListWidget* recommendations() const { return recommendations_; }
    QString summaryText() const;

  signals:
    void stepActivated(int step);
    void rangeActivated(int64_t start, int64_t end, int64_t track);  // store ns
    void recommendationActivated(int index);
    void deviceChanged(int device);

  private:
    void refresh();

    std::shared_ptr<const trace::StepAnalysis> analysis_;
    QComboBox* device_ = nullptr;
    QCheckBox* normalized_ = nullptr;
    QLabel* summary_ = nullptr;
    StepChartWidget* chart_ = nullptr;
    QTabWidget* tables_ = nullptr;
    QTableWidget* stepTable_ = nullptr;
    QTableWidget* gapTable_ = nullptr;
    QListWidget* recommendations_ = nullptr;
};

// "4 steps (ProfilerStep#N) · median 13.4 ms · p95 13.6 ms" and the biggest categories.
QString stepOverviewText(const trace::StepAnalysis& analysis);

}  // namespace stallscope
