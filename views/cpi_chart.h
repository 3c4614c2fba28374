#pragma once

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <functional>
#include <vector>

#include "cpi/cpi.h"

class QWidget;

namespace stallscope::charts {

// Custom-painted charts shared by the CPI and estimates views, the headless renderer and the
// PNG/SVG export: one paint function per chart, drawing into any QPainter.

// Same category, same colour, in every view: the hue comes from the category's GSI class, the
// shade from the name.
QColor categoryColor(const std::string& category);
// Distinct colours for series (models, estimators) by position.
QColor seriesColor(int index);

// Tick step of about `target` ticks over [0, max]: 1, 2 or 5 times a power of ten.
double niceStep(double max, int target);
// "13.5k", "2.1M", "950".
QString shortNumber(double value);

struct StackChartOptions {
    bool normalized = false;  // each bar as 100%
    QString title;
};

// A drawn bar segment, for hover and tests.
struct StackSegment {
    QRectF rect;
    int stack = 0;  // index into CpiData::stacks
    std::string category;
    double cycles = 0;
    double share = 0;  // of the bar's total, 0..1
};

// Stacked bars: one group per kernel, one bar per source (hw first, then each model) side by
// side (AMALI Figs. 2 and 16), a legend of the categories on the right.
void paintStackChart(QPainter& painter, const QRectF& area, const cpi::CpiData& data,
                     const StackChartOptions& options,
                     std::vector<StackSegment>* segments = nullptr);

// MAPE per model: one group of bars for all kernels and one per kernel group (AMALI Figs. 10-11).
void paintMapeChart(QPainter& painter, const QRectF& area, const cpi::MapeReport& mape,
                    const std::vector<std::string>& models);

// A centred message where a chart has nothing to draw.
void paintMessage(QPainter& painter, const QRectF& area, const QString& text);

// Writes `paint` as SVG (size in pixels). Returns false when the file cannot be written.
bool writeSvg(const QString& path, const QSize& size, const QString& title,
              const std::function<void(QPainter&, const QRectF&)>& paint);

}  // namespace stallscope::charts
