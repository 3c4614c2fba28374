#pragma once

// Views of a noise-injection profile: absorption curves (paper Figs. 2, 4, 6), the comparison
// table across machines and kernels (Table 1) and absorption against a swept parameter
// (Figs. 7-8).

#include <QImage>
#include <QList>
#include <QString>
#include <QWidget>
#include <map>
#include <string>
#include <vector>

#include "core/noise/absorption.h"
#include "core/workspace.h"
#include "views/common/async_job.h"
#include "views/common/line_chart.h"
#include "views/common/render.h"
#include "views/common/suggestion_item.h"

class QComboBox;
class QLabel;
class QStackedWidget;
class QTabWidget;
class QTableWidget;

namespace stallscope {

// One curve chart's worth of curves: every mode of a (machine, region, params).
struct CurveGroup {
    std::string machine, region;
    std::map<std::string, std::string> params;
    QString label() const;
};
std::vector<CurveGroup> curveGroups(const noise::AbsorptionReport& report);

// A parameter swept over several values for one (machine, region).
struct SweepGroup {
    std::string machine, region, param;
    QString label() const;
};
std::vector<SweepGroup> sweepGroups(const noise::AbsorptionReport& report);

// The colour of a noise mode in every chart.
QColor modeColor(const std::string& mode);

// Normalized runtime (median / t0) vs k per mode, the quartile band, the fitted model dashed,
// k1 (dashed) and k2 (dotted) marked. y is clipped at `yClip` so the knees stay readable.
charts::ChartSpec curvesChart(const noise::AbsorptionReport& report, const CurveGroup& group,
                              double yClip = 3.0);
// Absorption per mode vs the parameter, one series per mode and combination of the other
// parameters, lower bounds (no degradation seen) as hollow triangles, performance on the right
// axis.
charts::ChartSpec sweepChart(const noise::AbsorptionReport& report, const SweepGroup& sweep);
// The sweep's points: one row per curve (value of the parameter, other parameters, mode).
QString sweepCsv(const noise::AbsorptionReport& report, const SweepGroup& sweep);

// Table 1: one row per (machine, region, params).
struct ComparisonRow {
    QString machine, region, params, cores, performance, fp, l1, memory, integer, cls, evidence;
};
std::vector<ComparisonRow> comparisonRows(const noise::AbsorptionReport& report);
QString comparisonCsv(const noise::AbsorptionReport& report);
// The medians and the fit of one group, one row per (mode, k).
QString curvesCsv(const noise::AbsorptionReport& report, const CurveGroup& group);

// Suggestions dock entries from the classification.
QList<SuggestionItem> absorptionSuggestionItems(const noise::AbsorptionReport& report);

// The comparison table at its natural size (every column as wide as its content).
QImage renderComparisonTable(const noise::AbsorptionReport& report);
bool writeComparisonTableSvg(const noise::AbsorptionReport& report, const QString& path);

// `render absorption PROFILE`: the curve charts and the sweep charts in a grid (at most six; a
// note says how many were left out), and the comparison table below.
// The charts `render absorption` draws, in order, and the note on what was left out.
struct ReportCharts {
    std::vector<charts::ChartSpec> charts;
    QString note;  // empty when every chart is drawn
};
ReportCharts reportCharts(const noise::AbsorptionReport& report);

QImage renderAbsorption(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options);
QImage renderAbsorptionReport(const noise::AbsorptionReport& report, QSize size);

// The tab the main window opens for a "noise" profile. Loads off the GUI thread.
QWidget* createNoiseView(const ProfileInfo& profile, const QString& workspacePath);

class AbsorptionView : public QWidget {
    Q_OBJECT
  public:
    AbsorptionView(const ProfileInfo& profile, const QString& workspacePath,
                   QWidget* parent = nullptr);
    // Shows an already computed report (tests, or a caller that has one).
    void setReport(const noise::AbsorptionReport& report);
    const noise::AbsorptionReport& report() const { return report_; }
    QTabWidget* tabs() const { return tabs_; }
    QTableWidget* table() const { return table_; }
    // Writes what the current tab shows: format "PNG", "SVG" or "CSV". False when the file
    // cannot be written or there is nothing to export.
    bool exportTo(const QString& format, const QString& path);

  signals:
    void suggestionsReady(const QList<SuggestionItem>& suggestions);
    void loadFailed(const QString& message);

  private:
    // SQL and fitting run on a worker with its own read-only connection.
    void showLoadError(const QString& error);
    async::JobSlot loadJob_{this, [this](const QString& error) { showLoadError(error); }};
    void showCurves(int index);
    void showSweep(int index);
    void exportCurrent(const QString& format);
    charts::ChartSpec currentSpec() const;

    noise::AbsorptionReport report_;
    std::vector<CurveGroup> groups_;
    std::vector<SweepGroup> sweeps_;
    QLabel* status_;
    QTabWidget* tabs_;
    QComboBox* groupBox_;
    QWidget* curvesHolder_;
    QTableWidget* table_;
    QComboBox* sweepBox_;
    QWidget* sweepHolder_;
    int currentGroup_ = 0, currentSweep_ = 0;
};

}  // namespace stallscope
