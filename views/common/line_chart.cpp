#include "views/common/line_chart.h"
#include "views/common/format.h"

#include <QApplication>
#include <QGraphicsItem>
#include <QPainter>
#include <QSvgGenerator>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>
#include <optional>

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

// Ticks at round values, anchored at 0, about six of them.
void niceTicks(QValueAxis& axis) {
    axis.setTickType(QValueAxis::TicksDynamic);
    axis.setTickAnchor(0);
    axis.setTickInterval(format::tickStep(axis.max() - axis.min(), 6));
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

// Hollow triangles, drawn over the line and dots.
QScatterSeries* openTriangles(const QList<QPointF>& points, const QColor& color) {
    auto* series = new QScatterSeries;
    series->append(points);
    series->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    series->setMarkerSize(11);
    series->setBrush(Qt::white);
    series->setPen(QPen(color, 1.8));
    return series;
}

struct BuiltChart {
    QChart* chart;
    Range x, y, y2;
    bool hasY2;
};

// Something drawn over a chart in plot coordinates, laid out whenever it paints so it follows
// every resize of the plot area: a child item of the chart, in a small font of the legend's.
class PlotOverlay : public QGraphicsItem {
  public:
    QRectF boundingRect() const override { return QRectF(-1e5, -1e5, 2e5, 2e5); }

  protected:
    PlotOverlay(QChart* chart, Range x, qreal z, bool bold)
        : QGraphicsItem(chart), chart_(chart), x_(x) {
        setZValue(z);
        font_ = overlayFont(chart->legend()->font(), bold);
    }
    static QFont overlayFont(const QFont& legendFont, bool bold) {
        QFont font = legendFont;
        font.setPointSizeF(7.5);
        font.setBold(bold);
        font.setItalic(!bold);
        return font;
    }
    // The plot area, or nothing to draw in.
    std::optional<QRectF> plot() const {
        const QRectF area = chart_->plotArea();
        if (area.width() <= 0 || x_.max <= x_.min) return std::nullopt;
        return area;
    }
    double px(const QRectF& plot, double v) const {
        return plot.left() + (v - x_.min) / (x_.max - x_.min) * plot.width();
    }

    QChart* chart_;
    Range x_;
    QFont font_;
};

// The markers' labels at the top of the plot, in the marker's colour on a light backing. A
// label sits right of its line (left when that would leave the plot) in the first row where it
// overlaps no other label.
class MarkerLabels : public PlotOverlay {
  public:
    MarkerLabels(QChart* chart, std::vector<ChartMarker> markers, Range x)
        : PlotOverlay(chart, x, 100, true), markers_(std::move(markers)) {}

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        const auto area = this->plot();
        if (!area) return;
        const QRectF plot = *area;
        const QFontMetricsF metrics(font_);
        std::vector<size_t> order;
        for (size_t i = 0; i < markers_.size(); ++i)
            if (!markers_[i].label.isEmpty()) order.push_back(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return markers_[a].x < markers_[b].x; });
        struct Placed {
            double left, right;
            int row;
        };
        std::vector<Placed> placed;
        const double height = metrics.height();
        painter->save();
        painter->setFont(font_);
        for (size_t i : order) {
            const ChartMarker& m = markers_[i];
            const double x = px(plot, m.x);
            if (x < plot.left() - 0.5 || x > plot.right() + 0.5) continue;
            const double width = metrics.horizontalAdvance(m.label) + 4;
            double left = x + 2;
            if (left + width > plot.right()) left = x - 2 - width;
            int row = 0;
            for (bool clash = true; clash;) {
                clash = false;
                for (const Placed& p : placed)
                    if (p.row == row && left < p.right + 1 && p.left < left + width + 1) {
                        clash = true;
                        ++row;
                        break;
                    }
            }
            placed.push_back({left, left + width, row});
            const QRectF box(left, plot.top() + 2 + row * (height + 1), width, height);
            painter->fillRect(box, QColor(255, 255, 255, 215));
            painter->setPen(m.color.darker(115));
            painter->drawText(box, Qt::AlignCenter, m.label);
        }
        painter->restore();
    }

  private:
    std::vector<ChartMarker> markers_;
};

constexpr double kLaneHeight = 5, kLaneGap = 2;

// What is drawn around the plot, laid out whenever it paints (like the marker labels): the lane
// bars of the spans that have a lane, one lane per index upwards from the x axis, and the notes
// above the title, one per line, small and italic.
class PlotFooter : public PlotOverlay {
  public:
    PlotFooter(QChart* chart, std::vector<ChartSpan> spans, QStringList notes, Range x)
        : PlotOverlay(chart, x, 101, false), spans_(std::move(spans)), notes_(std::move(notes)) {}

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        const auto area = this->plot();
        if (!area) return;
        const QRectF plot = *area;
        painter->save();
        painter->setClipRect(plot);
        for (const ChartSpan& span : spans_) {
            if (span.lane < 0 || !(span.to > span.from)) continue;
            const double bottom = plot.bottom() - kLaneGap - span.lane * (kLaneHeight + kLaneGap);
            const QRectF bar(QPointF(px(plot, span.from), bottom - kLaneHeight),
                             QPointF(std::max(px(plot, span.to), px(plot, span.from) + 2), bottom));
            QColor fill = span.color;
            fill.setAlpha(span.hatched ? 200 : 150);
            if (span.hatched) {
                painter->fillRect(bar, QColor(255, 255, 255, 200));
                painter->fillRect(bar, QBrush(fill, Qt::BDiagPattern));
                painter->setPen(QPen(fill, 1));
                painter->drawRect(bar);
            } else {
                painter->fillRect(bar, fill);
            }
        }
        painter->setClipping(false);
        // The notes in the room the top margin leaves above the title.
        const QFontMetricsF metrics(font_);
        painter->setFont(font_);
        painter->setPen(QColor(150, 60, 0));
        double top = 3;
        for (const QString& note : notes_) {
            const QString text = metrics.elidedText(note, Qt::ElideRight, plot.width());
            painter->drawText(QRectF(plot.left(), top, plot.width(), metrics.height()),
                              Qt::AlignLeft | Qt::AlignVCenter, text);
            top += metrics.height();
        }
        painter->restore();
    }

    // The height the notes need above the plot.
    static double notesHeight(const QFont& legendFont, int count) {
        return count * QFontMetricsF(overlayFont(legendFont, false)).height() + 2;
    }

  private:
    std::vector<ChartSpan> spans_;
    QStringList notes_;
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
    chart->setMargins(QMargins(
        4,
        4 + int(std::ceil(spec.notes.isEmpty() ? 0.0
                                               : PlotFooter::notesHeight(chart->legend()->font(),
                                                                         int(spec.notes.size())))),
        4, 4));
    chart->legend()->setAlignment(spec.legendRight ? Qt::AlignRight : Qt::AlignBottom);
    chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
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

    // Spans first, then bands, so lines draw over them.
    for (const ChartSpan& span : spec.spans) {
        if (span.lane >= 0 || !(span.to > span.from)) continue;
        const double top = built.y.max, bottom = built.y.min;
        auto* lower = lineSeries({QPointF(span.from, bottom), QPointF(span.to, bottom)}, span.color,
                                 Qt::SolidLine, 0);
        auto* upper = lineSeries({QPointF(span.from, top), QPointF(span.to, top)}, span.color,
                                 Qt::SolidLine, 0);
        auto* area = new QAreaSeries(upper, lower);
        QColor fill = span.color;
        fill.setAlpha(span.hatched ? 110 : 40);
        area->setBrush(span.hatched ? QBrush(fill, Qt::BDiagPattern) : QBrush(fill));
        area->setPen(Qt::NoPen);
        attach(area, false, {});
    }
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
                QList<QPointF> filled;
                for (const QPointF& p : s.points)
                    if (!s.open.contains(p)) filled.append(p);
                auto* dots = new QScatterSeries;
                dots->append(filled);
                dots->setMarkerSize(6);
                dots->setColor(s.color);
                dots->setBorderColor(s.color);
                attach(dots, s.secondaryAxis, {});
                if (!s.open.isEmpty()) attach(openTriangles(s.open, s.color), s.secondaryAxis, {});
                break;
            }
        }
    }
    if (!spec.openLegend.isEmpty())
        attach(openTriangles({}, QColor(70, 70, 70)), false, spec.openLegend);

    new MarkerLabels(chart, spec.markers, built.x);          // owned by the chart
    new PlotFooter(chart, spec.spans, spec.notes, built.x);  // owned by the chart
    return built;
}

QChartView* makeView(const ChartSpec& spec, BuiltChart& built, QWidget* parent) {
    built = buildChart(spec);
    auto* view = new QChartView(built.chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setFrameShape(QFrame::NoFrame);
    return view;
}

// Lays the chart out at `size` (the chart computes its plot area on resize events). A legend
// row that would not fit the width (Qt elides its entries) becomes a column on the right.
void layOut(QChartView& view, QSize size) {
    QLegend* legend = view.chart()->legend();
    if (legend->alignment() == Qt::AlignBottom) {
        const QFontMetricsF metrics(legend->font());
        double width = 0;
        for (QLegendMarker* marker : legend->markers())
            if (!marker->label().isEmpty())
                width += metrics.horizontalAdvance(marker->label()) + 40;
        if (width > size.width() - 16) legend->setAlignment(Qt::AlignRight);
    }
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
