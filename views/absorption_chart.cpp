#include "absorption_chart.h"

#include <QApplication>
#include <QPainter>
#include <QSvgGenerator>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

namespace stallscope::charts {

namespace {

struct Range {
    double min = 0, max = 1;
};

// Data range of the series on one axis, padded, unless the spec fixes it.
Range valueRange(const ChartSpec& spec, bool xAxis, bool secondary) {
    double lo = INFINITY, hi = -INFINITY;
    for (const ChartSeries& s : spec.series) {
        if (!xAxis && s.secondaryAxis != secondary) continue;
        for (const auto* list : {&s.points, &s.upper})
            for (const QPointF& p : *list) {
                lo = std::min(lo, xAxis ? p.x() : p.y());
                hi = std::max(hi, xAxis ? p.x() : p.y());
            }
    }
    if (!std::isfinite(lo)) lo = 0, hi = 1;
    if (hi <= lo) hi = lo + 1;
    const double pad = xAxis ? 0 : 0.05 * (hi - lo);
    Range r{lo - pad, hi + pad};
    const auto& fixedMin = xAxis ? spec.xMin : secondary ? spec.y2Min : spec.yMin;
    const auto& fixedMax = xAxis ? spec.xMax : secondary ? spec.y2Max : spec.yMax;
    if (fixedMin) r.min = *fixedMin;
    if (fixedMax) r.max = *fixedMax;
    if (r.max <= r.min) r.max = r.min + 1;
    return r;
}

// Ticks at round values (1, 2 or 5 times a power of ten), anchored at 0, about six of them.
void niceTicks(QValueAxis& axis) {
    const double span = axis.max() - axis.min();
    const double raw = span / 6;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = power;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= raw) {
            step = m * power;
            break;
        }
    axis.setTickType(QValueAxis::TicksDynamic);
    axis.setTickAnchor(0);
    axis.setTickInterval(step);
}

QLineSeries* lineSeries(const QList<QPointF>& points, const QColor& color, Qt::PenStyle style,
                        qreal width) {
    auto* series = new QLineSeries;
    series->append(points);
    QPen pen(color, width, style);
    pen.setCapStyle(Qt::FlatCap);
    series->setPen(pen);
    return series;
}

struct BuiltChart {
    QChart* chart;
    Range x, y, y2;
    bool hasY2;
};

BuiltChart buildChart(const ChartSpec& spec) {
    auto* chart = new QChart;
    chart->setTitle(spec.title);
    QFont titleFont = chart->titleFont();
    titleFont.setBold(true);
    titleFont.setPointSizeF(10);
    chart->setTitleFont(titleFont);
    chart->setBackgroundBrush(Qt::white);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setAlignment(Qt::AlignBottom);
    QFont legendFont = chart->legend()->font();
    legendFont.setPointSizeF(8);
    chart->legend()->setFont(legendFont);

    BuiltChart built{chart, valueRange(spec, true, false), valueRange(spec, false, false),
                     valueRange(spec, false, true), !spec.y2Label.isEmpty()};
    auto* xAxis = new QValueAxis;
    xAxis->setTitleText(spec.xLabel);
    xAxis->setRange(built.x.min, built.x.max);
    auto* yAxis = new QValueAxis;
    yAxis->setTitleText(spec.yLabel);
    yAxis->setRange(built.y.min, built.y.max);
    for (QValueAxis* axis : {xAxis, yAxis}) {
        QFont f = axis->labelsFont();
        f.setPointSizeF(8);
        axis->setLabelsFont(f);
        axis->setTitleFont(f);
        axis->setGridLineColor(QColor(225, 225, 225));
        axis->setLabelFormat("%.4g");
        niceTicks(*axis);
    }
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    QValueAxis* y2Axis = nullptr;
    if (built.hasY2) {
        y2Axis = new QValueAxis;
        y2Axis->setTitleText(spec.y2Label);
        y2Axis->setRange(built.y2.min, built.y2.max);
        QFont f = y2Axis->labelsFont();
        f.setPointSizeF(8);
        y2Axis->setLabelsFont(f);
        y2Axis->setTitleFont(f);
        y2Axis->setGridLineVisible(false);
        y2Axis->setLabelFormat("%.4g");
        niceTicks(*y2Axis);
        chart->addAxis(y2Axis, Qt::AlignRight);
    }

    auto attach = [&](QAbstractSeries* series, bool secondary, const QString& name) {
        series->setName(name);
        chart->addSeries(series);
        series->attachAxis(xAxis);
        series->attachAxis(secondary && y2Axis ? y2Axis : yAxis);
        if (name.isEmpty())
            for (QLegendMarker* marker : chart->legend()->markers(series))
                marker->setVisible(false);
    };

    // Bands first so lines draw over them.
    for (const ChartSeries& s : spec.series) {
        if (s.style != ChartSeries::Style::Band) continue;
        auto* lower = lineSeries(s.points, s.color, Qt::SolidLine, 0);
        auto* upper = lineSeries(s.upper, s.color, Qt::SolidLine, 0);
        auto* area = new QAreaSeries(upper, lower);
        QColor fill = s.color;
        fill.setAlpha(60);
        area->setBrush(fill);
        area->setPen(Qt::NoPen);
        attach(area, s.secondaryAxis, s.name);
    }
    for (const ChartMarker& m : spec.markers) {
        const double top = built.y.max, bottom = built.y.min;
        auto* line = lineSeries({QPointF(m.x, bottom), QPointF(m.x, top)}, m.color,
                                m.dotted ? Qt::DotLine : Qt::DashLine, 1.5);
        attach(line, false, m.name);
    }
    for (const ChartSeries& s : spec.series) {
        switch (s.style) {
            case ChartSeries::Style::Band:
                break;
            case ChartSeries::Style::Line:
            case ChartSeries::Style::Dashed:
                attach(
                    lineSeries(s.points, s.color,
                               s.style == ChartSeries::Style::Dashed ? Qt::DashLine : Qt::SolidLine,
                               s.style == ChartSeries::Style::Dashed ? 1.5 : 2.0),
                    s.secondaryAxis, s.name);
                break;
            case ChartSeries::Style::LineWithPoints: {
                attach(lineSeries(s.points, s.color, Qt::SolidLine, 2.0), s.secondaryAxis, s.name);
                auto* dots = new QScatterSeries;
                dots->append(s.points);
                dots->setMarkerSize(6);
                dots->setColor(s.color);
                dots->setBorderColor(s.color);
                attach(dots, s.secondaryAxis, {});
                break;
            }
        }
    }
    return built;
}

QChartView* makeView(const ChartSpec& spec, BuiltChart& built, QWidget* parent) {
    built = buildChart(spec);
    auto* view = new QChartView(built.chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setFrameShape(QFrame::NoFrame);
    return view;
}

// Lays the chart out at `size` (the chart computes its plot area on resize events).
void layOut(QChartView& view, QSize size) {
    view.resize(size);
    view.chart()->resize(size);
    QCoreApplication::sendPostedEvents();
}

}  // namespace

RenderedChart renderChart(const ChartSpec& spec, QSize size) {
    BuiltChart built{};
    std::unique_ptr<QChartView> view(makeView(spec, built, nullptr));
    layOut(*view, size);
    RenderedChart out;
    out.image = QImage(size, QImage::Format_ARGB32);
    out.image.fill(Qt::white);
    {
        QPainter painter(&out.image);
        painter.setRenderHint(QPainter::Antialiasing);
        view->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), QRect(QPoint(0, 0), size));
    }
    const QRectF plot = built.chart->plotArea();
    const Range x = built.x, y = built.y, y2 = built.y2;
    out.toPixel = [plot, x, y, y2](QPointF v, bool secondary) {
        const Range& r = secondary ? y2 : y;
        return QPointF(plot.left() + (v.x() - x.min) / (x.max - x.min) * plot.width(),
                       plot.bottom() - (v.y() - r.min) / (r.max - r.min) * plot.height());
    };
    return out;
}

QWidget* createChartWidget(const ChartSpec& spec, QWidget* parent) {
    BuiltChart built{};
    return makeView(spec, built, parent);
}

bool writeChartSvg(const ChartSpec& spec, QSize size, const QString& path) {
    BuiltChart built{};
    std::unique_ptr<QChartView> view(makeView(spec, built, nullptr));
    layOut(*view, size);
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(spec.title);
    QPainter painter;
    if (!painter.begin(&generator)) return false;
    view->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), QRect(QPoint(0, 0), size));
    return painter.end();
}

}  // namespace stallscope::charts
