#pragma once

// Step-time breakdown of a trace profile, drawn: the series a step splits into (compute split
// into GEMM, attention and other kernels, then communication, copies, memsets and the causes of
// idle), a stacked bar per step with the step-time line, and the strip the timeline shows above
// its tracks. One painter function serves the Steps tab, `render steps`, PNG/SVG export and
// tests.

#include <QColor>
#include <QImage>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <functional>
#include <optional>
#include <vector>

#include "core/trace/step_analysis.h"
#include "core/workspace.h"

namespace stallscope::steps {

// A stacked series: a device category, or a part of compute.
struct Series {
    QString key;    // CSV/JSON name: "gemm", "attention", "other_compute", "communication", ...
    QString label;  // legend text
    QColor color;
    int64_t (*value)(const trace::DeviceStepBreakdown&);
};
// Bottom to top: the device's own work first, idle last.
const std::vector<Series>& series();
QColor categoryColor(trace::StepCategory category);

// The breakdown of one step on one device; nullptr when the analysis has none.
const trace::DeviceStepBreakdown* breakdownOf(const trace::StepAnalysis& analysis, int step,
                                              int device);
// The device's own span of a step (in a multi-host run its host's step; the breakdown sums to
// it), else the step's.
std::pair<int64_t, int64_t> spanOf(const trace::StepAnalysis& analysis, int step, int device);
int64_t durationOf(const trace::StepAnalysis& analysis, int step, int device);
// A step's number as the trace gives it: its marker's ("ProfilerStep#5" is 5, as on the
// timeline), else its index.
QString stepNumber(const trace::Step& step);
// Its marker's name ("ProfilerStep#5"), else "Step <index>".
QString stepName(const trace::Step& step);

struct ChartOptions {
    int device = 0;           // index into StepAnalysis::devices
    bool normalized = false;  // each bar as 100 % of its step; the step-time line keeps ns
    QString title;            // default: "Step time on <device>"
    double yMax = 0;          // ns at the top of the axis (one scale for two charts); 0: fit
};
// A drawn segment, for hover, clicks and tests.
struct Segment {
    QRectF rect;
    int step = 0;    // StepAnalysis::steps index
    int series = 0;  // index into series()
    int64_t ns = 0;
    double share = 0;  // of the step, 0..1
};
struct ChartLayout {
    QRectF plot;                // the bars' area
    std::vector<QRectF> bars;   // per step, the whole bar's column
    std::vector<QPointF> line;  // the step-time line's points, per step
    std::vector<Segment> segments;
    std::vector<QString> axisLabels;  // the step numbers drawn under the bars, left to right
};
ChartLayout paintStepChart(QPainter& painter, const QRectF& area,
                           const trace::StepAnalysis& analysis, const ChartOptions& options);

// The strip above the timeline: per step a bar over the step's time span, split in proportion
// to its series, with the step's name where it fits. `x` maps profile ns to pixels.
void paintStepStrip(QPainter& painter, const QRectF& rect, const trace::StepAnalysis& analysis,
                    int device, const std::function<double(double)>& x);

// One sentence per step for a tooltip: "Step 3 (ProfilerStep#3): 13.4 ms — compute 62 %, …".
QString stepSummary(const trace::StepAnalysis& analysis, int step, int device);

// `render steps PROFILE`: the step chart of the first device (the stored analysis, else
// computed), under the profile's step summary.
QImage renderSteps(const Workspace& workspace, const ProfileInfo& profile, QSize size);

// The breakdown table as CSV: step, name, start_ns, duration_ns, then ns per series.
QString breakdownCsv(const trace::StepAnalysis& analysis, int device);

}  // namespace stallscope::steps
