#include "views/estimates/estimates_chart.h"

#include <QFontMetricsF>
#include <QPainterPath>
#include <cmath>

#include "views/common/chart_kit.h"
#include "views/common/format.h"

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
    QFont font = beginChart(p, area, 9);
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
        p.drawText(QRectF(toX(v) - 30, plot.bottom() + 2, 60, 14), Qt::AlignCenter,
                   format::shortNumber(v));
        p.drawText(QRectF(plot.left() - 62, toY(v) - 8, 56, 16), Qt::AlignRight | Qt::AlignVCenter,
                   format::shortNumber(v));
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
    QFont font = beginChart(p, area, 9);
    title(p, area, "MAPE per estimator and hardware target");
    if (report.byEstimatorHardware.empty()) {
        paintMessage(p, area, "No MAPE: no row has a measured latency.");
        p.restore();
        return;
    }
    double max = 0;
    for (const auto& m : report.byEstimatorHardware) max = std::max(max, m.mapePct);
    const double step = format::tickStep(max * 1.15, 4);
    const double axisMax = std::max(1.0, std::ceil(max * 1.15 / step) * step);
    const QFontMetricsF legendFm(font);
    double legendWidth = legendFm.horizontalAdvance("estimator");
    for (const auto& e : data.estimators)
        legendWidth = std::max(legendWidth, legendFm.horizontalAdvance(QString::fromStdString(e)));
    legendWidth = std::min(legendWidth + 26, area.width() * 0.3);
    const QRectF plot(area.left() + 70, area.top() + 36, area.width() - 70 - legendWidth - 24,
                      area.height() - 36 - 44);
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
    p.drawLine(plot.bottomLeft(), plot.topLeft());
    p.save();
    p.translate(area.left() + 14, plot.center().y());
    p.rotate(-90);
    p.setPen(kText);
    p.drawText(QRectF(-100, -10, 200, 20), Qt::AlignCenter, "MAPE (%)");
    p.restore();
    p.setPen(kText);
    p.drawText(QRectF(plot.left(), plot.bottom() + 22, plot.width(), 16), Qt::AlignCenter,
               "hardware target");
    // Legend: estimator colours.
    {
        double ly = plot.top();
        const double lx = plot.right() + 16;
        QFont bold = font;
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(lx, ly - 18, legendWidth, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   "estimator");
        p.setFont(font);
        for (size_t e = 0; e < data.estimators.size(); ++e, ly += 17) {
            p.fillRect(QRectF(lx, ly + 2, 12, 12), seriesColor(static_cast<int>(e) + 1));
            p.setPen(kText);
            p.drawText(QRectF(lx + 18, ly, legendWidth - 18, 16), Qt::AlignLeft | Qt::AlignVCenter,
                       legendFm.elidedText(QString::fromStdString(data.estimators[e]),
                                           Qt::ElideRight, legendWidth - 18));
        }
    }
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
            p.drawText(QRectF(bar.left() - 14, bar.top() - 15, bar.width() + 28, 14),
                       Qt::AlignCenter, QString::number(m.mapePct, 'f', 1) + "%");
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

void paintSpeedupTable(QPainter& p, const QRectF& area, const estimates::EstimateReport& report) {
    QFont font = beginChart(p, area, 9);
    const QFontMetricsF fm(font);
    title(p, area,
          "Relative speedup error across hardware transitions (Table V): predicted vs. measured "
          "speedup");
    if (report.speedupMeans.empty()) {
        paintMessage(p, area,
                     "No speedup errors: they need measured latencies of the same workload on at "
                     "least two hardware targets.");
        p.restore();
        return;
    }
    // Columns: transition, estimator, workloads, predicted, measured, error, |error|.
    const QStringList headers{"transition", "estimator", "workloads", "predicted",
                              "measured",   "error",     "|error|"};
    const double widths[] = {0.2, 0.18, 0.12, 0.13, 0.13, 0.12, 0.12};
    const double left = area.left() + 10, width = area.width() - 20;
    const double rowHeight = 17;
    double y = area.top() + 32;
    auto drawRow = [&](const QStringList& cells, bool bold, const QColor& background) {
        if (background.isValid()) p.fillRect(QRectF(left, y, width, rowHeight), background);
        QFont f = font;
        f.setBold(bold);
        p.setFont(f);
        double x = left;
        for (int c = 0; c < cells.size(); ++c) {
            const double w = widths[c] * width;
            const Qt::Alignment align = (c < 2 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter;
            p.setPen(kText);
            p.drawText(QRectF(x + 4, y, w - 8, rowHeight), align,
                       QFontMetricsF(f).elidedText(cells[c], Qt::ElideRight, w - 8));
            x += w;
        }
        y += rowHeight;
    };
    drawRow(headers, true, QColor());
    p.setPen(kAxis);
    p.drawLine(QPointF(left, y), QPointF(left + width, y));
    const double bottom = area.bottom() - 8;
    int row = 0, hidden = 0;
    auto pct = [](double v, bool sign) {
        if (std::abs(v) < 0.05) v = 0;  // no "-0.0%"
        return (sign && v > 0 ? "+" : "") + QString::number(v, 'f', 1) + "%";
    };
    for (const auto& s : report.speedupMeans) {
        if (y + rowHeight * (2 + report.speedupMeanAbs.size()) > bottom) {
            ++hidden;
            continue;
        }
        drawRow({QString::fromStdString(s.from) + " → " + QString::fromStdString(s.to),
                 QString::fromStdString(s.estimator), QString::number(s.workloads),
                 QString::number(s.predictedSpeedup, 'f', 3),
                 QString::number(s.measuredSpeedup, 'f', 3), pct(s.errorPct, true),
                 pct(s.absErrorPct, false)},
                false, row++ % 2 ? QColor(0xf4, 0xf6, 0xf9) : QColor());
    }
    p.setPen(kAxis);
    p.drawLine(QPointF(left, y + 1), QPointF(left + width, y + 1));
    y += 3;
    for (const auto& s : report.speedupMeanAbs) {
        if (y + rowHeight > bottom) break;
        drawRow({"mean over " + QString::number(s.speedups) + " speedups",
                 QString::fromStdString(s.estimator), "", "", "", pct(s.meanErrorPct, true),
                 pct(s.meanAbsErrorPct, false)},
                true, QColor());
    }
    if (hidden > 0) {
        p.setPen(QColor(0x9a, 0x5b, 0x00));
        p.setFont(font);
        p.drawText(QRectF(left, y + 2, width, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   QString("%1 more transition rows in the Speedup errors table").arg(hidden));
        y += 18;
    }
    // Cost against accuracy, when there is room.
    if (!report.costs.empty() && y + rowHeight * (2 + report.costs.size()) + 10 < bottom) {
        y += 10;
        QFont bold = font;
        bold.setBold(true);
        p.setFont(bold);
        p.setPen(kText);
        p.drawText(QRectF(left, y, width, rowHeight), Qt::AlignLeft | Qt::AlignVCenter,
                   "Estimator cost against accuracy");
        y += rowHeight;
        p.setFont(font);
        for (const auto& c : report.costs) {
            const QString text = QString("%1: %2 s wall over %3 timed rows · MAPE %4")
                                     .arg(QString::fromStdString(c.estimator))
                                     .arg(QString::number(c.wallS, 'f', c.wallS < 10 ? 2 : 0))
                                     .arg(c.timedRows)
                                     .arg(c.rows ? QString::number(c.mapePct, 'f', 1) + "% over " +
                                                       QString::number(c.rows) + " rows"
                                                 : QString("no measurements"));
            p.drawText(QRectF(left + 4, y, width - 8, rowHeight), Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(text, Qt::ElideRight, width - 8));
            y += rowHeight;
        }
    }
    p.restore();
}

}  // namespace stallscope::charts
