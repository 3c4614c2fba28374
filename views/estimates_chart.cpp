#include "estimates_chart.h"

#include <QFontMetricsF>
#include <QPainterPath>
#include <cmath>

#include "cpi_chart.h"

namespace stallscope::charts {

namespace {

const QColor kText(0x30, 0x30, 0x30);
const QColor kGrid(0xe4, 0xe4, 0xe4);
const QColor kAxis(0x90, 0x90, 0x90);

int indexOf(const std::vector<std::string>& list, const std::string& value) {
    const auto it = std::find(list.begin(), list.end(), value);
    return it == list.end() ? 0 : static_cast<int>(it - list.begin());
}

void drawMarker(QPainter& p, const QPointF& c, int shape, const QColor& color, double r) {
    p.setPen(QPen(color.darker(140), 1));
    p.setBrush(color);
    switch (shape % 4) {
        case 0:
            p.drawEllipse(c, r, r);
            break;
        case 1:
            p.drawRect(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r));
            break;
        case 2: {
            const QPointF pts[3] = {{c.x(), c.y() - r * 1.2},
                                    {c.x() - r * 1.1, c.y() + r * 0.9},
                                    {c.x() + r * 1.1, c.y() + r * 0.9}};
            p.drawPolygon(pts, 3);
            break;
        }
        default: {
            const QPointF pts[4] = {{c.x(), c.y() - r * 1.3},
                                    {c.x() + r * 1.3, c.y()},
                                    {c.x(), c.y() + r * 1.3},
                                    {c.x() - r * 1.3, c.y()}};
            p.drawPolygon(pts, 4);
        }
    }
}

void title(QPainter& p, const QRectF& area, const QString& text) {
    QFont bold = p.font();
    bold.setBold(true);
    p.save();
    p.setFont(bold);
    p.setPen(kText);
    p.drawText(QRectF(area.left() + 8, area.top() + 4, area.width() - 16, 22),
               Qt::AlignLeft | Qt::AlignVCenter, text);
    p.restore();
}

}  // namespace

void paintEstimateScatter(QPainter& p, const QRectF& area, const estimates::EstimateData& data,
                          std::vector<ScatterPoint>* points) {
    p.save();
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSizeF(9);
    p.setFont(font);
    title(p, area, "Predicted vs. measured latency (µs, log-log)");
    double lo = INFINITY, hi = 0;
    for (const auto& r : data.rows) {
        if (!r.measuredUs || !(*r.measuredUs > 0) || !(r.predictedUs > 0)) continue;
        lo = std::min({lo, *r.measuredUs, r.predictedUs});
        hi = std::max({hi, *r.measuredUs, r.predictedUs});
    }
    if (!(hi > 0)) {
        paintMessage(p, area, "No rows with both a measured and a predicted latency.");
        p.restore();
        return;
    }
    // Whole decades around the data, at least one.
    double logLo = std::floor(std::log10(lo)), logHi = std::ceil(std::log10(hi));
    if (logHi <= logLo) logHi = logLo + 1;
    const QFontMetricsF fm(font);
    double legendWidth = 0;
    for (const auto& e : data.estimators)
        legendWidth = std::max(legendWidth, fm.horizontalAdvance(QString::fromStdString(e)));
    for (const auto& h : data.hardware)
        legendWidth = std::max(legendWidth, fm.horizontalAdvance(QString::fromStdString(h)));
    legendWidth = std::min(legendWidth + 30, area.width() * 0.3);
    const double side = std::min(area.width() - 72 - legendWidth - 24, area.height() - 30 - 46);
    if (side < 40) {
        p.restore();
        return;
    }
    const QRectF plot(area.left() + 72, area.top() + 30, side, side);
    auto toX = [&](double v) {
        return plot.left() + (std::log10(v) - logLo) / (logHi - logLo) * plot.width();
    };
    auto toY = [&](double v) {
        return plot.bottom() - (std::log10(v) - logLo) / (logHi - logLo) * plot.height();
    };
    for (double d = logLo; d <= logHi + 1e-9; d += 1) {
        const double v = std::pow(10.0, d);
        p.setPen(kGrid);
        p.drawLine(QPointF(toX(v), plot.top()), QPointF(toX(v), plot.bottom()));
        p.drawLine(QPointF(plot.left(), toY(v)), QPointF(plot.right(), toY(v)));
        p.setPen(kText);
        p.drawText(QRectF(toX(v) - 30, plot.bottom() + 2, 60, 14), Qt::AlignCenter, shortNumber(v));
        p.drawText(QRectF(plot.left() - 62, toY(v) - 8, 56, 16), Qt::AlignRight | Qt::AlignVCenter,
                   shortNumber(v));
    }
    p.setPen(kAxis);
    p.drawRect(plot);
    p.setPen(QPen(QColor(0x60, 0x60, 0x60), 1.2, Qt::DashLine));
    p.drawLine(plot.bottomLeft(), plot.topRight());
    p.setPen(kText);
    p.drawText(QRectF(plot.left(), plot.bottom() + 18, plot.width(), 16), Qt::AlignCenter,
               "measured (µs)");
    p.save();
    p.translate(area.left() + 14, plot.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-80, -10, 160, 20), Qt::AlignCenter, "predicted (µs)");
    p.restore();
    p.setRenderHint(QPainter::Antialiasing, true);
    for (size_t i = 0; i < data.rows.size(); ++i) {
        const auto& r = data.rows[i];
        if (!r.measuredUs || !(*r.measuredUs > 0) || !(r.predictedUs > 0)) continue;
        const QPointF c(toX(*r.measuredUs), toY(r.predictedUs));
        drawMarker(p, c, indexOf(data.hardware, r.hardware),
                   seriesColor(indexOf(data.estimators, r.estimator) + 1), 4);
        if (points) points->push_back({c, i});
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    // Legend: colours for estimators, shapes for hardware.
    double ly = plot.top();
    const double lx = plot.right() + 20;
    p.setPen(kText);
    p.drawText(QRectF(lx, ly, legendWidth, 16), Qt::AlignLeft | Qt::AlignVCenter, "estimator");
    ly += 18;
    for (size_t e = 0; e < data.estimators.size(); ++e, ly += 17) {
        p.fillRect(QRectF(lx, ly + 2, 12, 12), seriesColor(static_cast<int>(e) + 1));
        p.setPen(kText);
        p.drawText(QRectF(lx + 18, ly, legendWidth - 18, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   QString::fromStdString(data.estimators[e]));
    }
    ly += 8;
    p.drawText(QRectF(lx, ly, legendWidth, 16), Qt::AlignLeft | Qt::AlignVCenter, "hardware");
    ly += 18;
    p.setRenderHint(QPainter::Antialiasing, true);
    for (size_t h = 0; h < data.hardware.size(); ++h, ly += 17) {
        drawMarker(p, QPointF(lx + 6, ly + 8), static_cast<int>(h), QColor(0x80, 0x80, 0x80), 4);
        p.setPen(kText);
        p.drawText(QRectF(lx + 18, ly, legendWidth - 18, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   QString::fromStdString(data.hardware[h]));
    }
    p.restore();
}

void paintEstimateMape(QPainter& p, const QRectF& area, const estimates::EstimateData& data,
                       const estimates::EstimateReport& report) {
    p.save();
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSizeF(9);
    p.setFont(font);
    title(p, area, "MAPE per estimator and hardware");
    if (report.byEstimatorHardware.empty()) {
        paintMessage(p, area, "No MAPE: no row has a measured latency.");
        p.restore();
        return;
    }
    double max = 0;
    for (const auto& m : report.byEstimatorHardware) max = std::max(max, m.mapePct);
    const double step = niceStep(max * 1.12, 4);
    const double axisMax = std::max(1.0, std::ceil(max * 1.12 / step) * step);
    const QRectF plot(area.left() + 64, area.top() + 30, area.width() - 64 - 16,
                      area.height() - 30 - 26);
    if (plot.width() < 20 || plot.height() < 20) {
        p.restore();
        return;
    }
    for (double v = 0; v <= axisMax * 1.0001; v += step) {
        const double y = plot.bottom() - v / axisMax * plot.height();
        p.setPen(kGrid);
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(kText);
        p.drawText(QRectF(plot.left() - 60, y - 8, 54, 16), Qt::AlignRight | Qt::AlignVCenter,
                   QString::number(v, 'g', 3) + "%");
    }
    p.setPen(kAxis);
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    const double groupWidth = plot.width() / static_cast<double>(data.hardware.size());
    const double barWidth = std::min(
        48.0, groupWidth * 0.75 / static_cast<double>(std::max<size_t>(1, data.estimators.size())));
    const QFontMetricsF fm(font);
    for (size_t h = 0; h < data.hardware.size(); ++h) {
        const double start =
            plot.left() + static_cast<double>(h) * groupWidth +
            (groupWidth - barWidth * static_cast<double>(data.estimators.size())) / 2;
        for (const auto& m : report.byEstimatorHardware) {
            if (m.hardware != data.hardware[h]) continue;
            const int e = indexOf(data.estimators, m.estimator);
            const double height = m.mapePct / axisMax * plot.height();
            const QRectF bar(start + e * barWidth, plot.bottom() - height, barWidth - 2, height);
            p.fillRect(bar, seriesColor(e + 1));
            p.setPen(kText);
            p.drawText(QRectF(bar.left() - 12, bar.top() - 15, bar.width() + 24, 14),
                       Qt::AlignCenter, QString::number(m.mapePct, 'f', 1));
        }
        p.setPen(kText);
        p.drawText(QRectF(plot.left() + static_cast<double>(h) * groupWidth, plot.bottom() + 4,
                          groupWidth, 16),
                   Qt::AlignCenter,
                   fm.elidedText(QString::fromStdString(data.hardware[h]), Qt::ElideRight,
                                 groupWidth - 4));
    }
    p.restore();
}

}  // namespace stallscope::charts
