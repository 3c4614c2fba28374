#pragma once

// The painted CPI charts (stacked bars, MAPE bars, the kernel metric table) and the colours of
// GSI classes and categories they share with the CPI views: built from the view kit
// (views/common/chart_kit.h), drawing into any QPainter.

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cpi/cpi.h"
#include "views/common/chart_kit.h"

namespace stallscope::charts {

// The colour of a GSI class (Base green, Idle grey, Ctrl purple, Sync magenta, MemData blue,
// MemStruct teal, ComData amber, ComStruct red); a raw category alone gets its class colour.
QColor categoryColor(const std::string& category);

// Colours for the categories of one chart: the hue is the category's GSI class, and the
// categories of one class that appear together get shades spread evenly from light to dark (in
// stacking order), so no two of them look alike (lg_throttle vs mio_throttle, W25..W32). The
// chart, its legend and its tables use the same palette.
using Palette = std::unordered_map<std::string, QColor>;
Palette categoryPalette(const std::vector<std::string>& categories);

// A kernel name short enough for a label that keeps what tells kernels apart: the launch id
// ("#3 "), the function name and the last template arguments, without the return type, e.g.
// "#0 enable_if<!T7, void>::type kernel<int, …, float>>(T13)" -> "#0 kernel<int, …, float>(T13)".
QString shortKernelName(const std::string& kernel);

struct StackChartOptions {
    bool normalized = false;  // each bar as 100%
    QString title;
    QString notice;      // a line under the title (e.g. why some kernels have no stack)
    int maxKernels = 0;  // 0: as many as stay readable at this size (top by cycles)
};

// A drawn bar segment, for hover and tests.
struct StackSegment {
    QRectF rect;
    int stack = 0;  // index into CpiData::stacks
    std::string category;
    double cycles = 0;
    double share = 0;  // of the bar's total, 0..1
    QColor color;
};

// What paintStackChart drew, for tests and the widget's status.
struct StackChartLayout {
    std::vector<std::string> kernels;  // drawn kernels, left to right
    int hiddenKernels = 0;             // kernels left out (the note names how many)
    double barWidth = 0;
};

// Stacked bars: one group per kernel (kernels of one group together, each group marked under
// the axis), one bar per source (hw first and set apart, then each model), totals on the bars,
// a legend of the categories on the right. When the kernels do not fit readably, the costliest
// ones (by the hw total, else the first source) are drawn and a note says how many are left out.
StackChartLayout paintStackChart(QPainter& painter, const QRectF& area, const cpi::CpiData& data,
                                 const StackChartOptions& options,
                                 std::vector<StackSegment>* segments = nullptr);

// MAPE per model: one group of bars for all kernels and one per kernel group (AMALI Figs. 10-11).
void paintMapeChart(QPainter& painter, const QRectF& area, const cpi::MapeReport& mape,
                    const std::vector<std::string>& models);

// Kernel x metric table for profiles without stacks: metrics as rows (name, unit), kernels as
// columns, as many as fit, with a note of what is left out.
void paintMetricTable(QPainter& painter, const QRectF& area, const cpi::MetricTable& table,
                      const QString& title);

}  // namespace stallscope::charts
