#pragma once

// A small chart description and the only code that touches Qt Charts (deprecated from Qt 6.10
// in favour of Qt Graphs): swapping the backend means rewriting absorption_chart.cpp only.

#include <QColor>
#include <QImage>
#include <QList>
#include <QPointF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>
#include <vector>

class QWidget;

namespace stallscope::charts {

struct ChartSeries {
    enum class Style { Line, LineWithPoints, Dashed, Band };
    QString name;  // empty: not in the legend
    QColor color;
    Style style = Style::Line;
    QList<QPointF> points;  // for Band: the lower edge
    QList<QPointF> upper;   // for Band: the upper edge, same x as `points`
    bool secondaryAxis = false;
    // LineWithPoints: these of `points` get a hollow triangle instead of a dot (e.g. a value
    // that is only a lower bound).
    QList<QPointF> open;
};

// A vertical line at x (k1, k2) across the plot.
struct ChartMarker {
    double x = 0;
    QColor color;
    bool dotted = false;
    QString name;   // legend entry
    QString label;  // short text at the top of the line ("k1"); labels never overlap
};

// An interval on the x axis, such as the range a fitted knee may lie in: a translucent band
// across the plot, or (lane >= 0) a bar in lane `lane` of a strip along the bottom of the plot,
// hatched to tell a second kind apart.
struct ChartSpan {
    double from = 0, to = 0;
    QColor color;
    bool hatched = false;
    int lane = -1;
};

struct ChartSpec {
    QString title;
    QString xLabel, yLabel, y2Label;  // y2Label non-empty: a secondary axis on the right
    std::vector<ChartSeries> series;
    std::vector<ChartMarker> markers;
    std::vector<ChartSpan> spans;  // bands under everything else, lane bars over the plot
    QStringList notes;             // lines of text at the bottom left of the plot, above the lanes
    QString openLegend;            // legend entry for the hollow triangles of ChartSeries::open
    bool legendRight = false;  // a column right of the plot (many series) instead of a row below
    std::optional<double> xMin, xMax, yMin, yMax, y2Min, y2Max;
};

struct RenderedChart {
    QImage image;
    // Data point to pixel in `image` (secondary: the right-hand axis).
    std::function<QPointF(QPointF value, bool secondary)> toPixel;
};

// Draws the chart into an image of `size` (needs a QGuiApplication; works offscreen).
RenderedChart renderChart(const ChartSpec& spec, QSize size);
// An interactive widget showing the chart.
QWidget* createChartWidget(const ChartSpec& spec, QWidget* parent = nullptr);
// Writes the chart as SVG. Returns false when the file cannot be written.
bool writeChartSvg(const ChartSpec& spec, QSize size, const QString& path);

}  // namespace stallscope::charts
