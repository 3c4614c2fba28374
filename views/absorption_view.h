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

#include "absorption_chart.h"
#include "noise/absorption.h"
#include "render.h"
#include "suggestions_dock.h"
#include "workspace.h"

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
// Absorption per mode vs the parameter, performance on the right axis.
charts::ChartSpec sweepChart(const noise::AbsorptionReport& report, const SweepGroup& sweep);

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

// `render absorption PROFILE`: the curve charts in a grid, the sweep when there is one, and the
// comparison table below.
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

  signals:
    void suggestionsReady(const QList<SuggestionItem>& suggestions);
    void loadFailed(const QString& message);

  private:
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
