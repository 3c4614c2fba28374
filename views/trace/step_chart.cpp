#include "views/trace/step_chart.h"

#include <QFontMetricsF>
#include <QPainterPath>
#include <QStringList>
#include <algorithm>
#include <cmath>

#include "core/analysis/cache.h"
#include "core/trace/step_registration.h"
#include "views/common/chart_kit.h"
#include "views/common/export.h"
#include "views/common/format.h"

namespace stallscope::steps {

using trace::DeviceStepBreakdown;
using trace::StepCategory;

namespace {

int64_t at(const DeviceStepBreakdown& b, StepCategory c) {
    return b.at(c);
}

QString percent(double share) {
    return QStringLiteral("%1 %").arg(share * 100, 0, 'f', share < 0.1 ? 1 : 0);
}

}  // namespace

QColor categoryColor(StepCategory category) {
    switch (category) {
        case StepCategory::Compute:
            return QColor(76, 154, 76);
        case StepCategory::Communication:
            return QColor(230, 160, 50);
        case StepCategory::Memcpy:
            return QColor(60, 120, 190);
        case StepCategory::Memset:
            return QColor(140, 185, 225);
        case StepCategory::HostWait:
            return QColor(150, 105, 195);
        case StepCategory::Input:
            return QColor(215, 75, 70);
        case StepCategory::Idle:
            return QColor(200, 200, 200);
    }
    return Qt::gray;
}

const std::vector<Series>& series() {
    static const std::vector<Series> all{
        {"gemm", QObject::tr("GEMM / conv"), QColor(46, 120, 50),
         [](const DeviceStepBreakdown& b) { return b.gemm; }},
        {"attention", QObject::tr("Attention"), QColor(96, 170, 80),
         [](const DeviceStepBreakdown& b) { return b.attention; }},
        {"other_compute", QObject::tr("Other kernels"), QColor(160, 205, 130),
         [](const DeviceStepBreakdown& b) { return b.otherCompute; }},
        {"communication", QObject::tr("Communication (exposed)"),
         categoryColor(StepCategory::Communication),
         [](const DeviceStepBreakdown& b) { return at(b, StepCategory::Communication); }},
        {"memcpy", QObject::tr("Memory copies (exposed)"), categoryColor(StepCategory::Memcpy),
         [](const DeviceStepBreakdown& b) { return at(b, StepCategory::Memcpy); }},
        {"memset", QObject::tr("Memsets"), categoryColor(StepCategory::Memset),
         [](const DeviceStepBreakdown& b) { return at(b, StepCategory::Memset); }},
        {"host_wait", QObject::tr("Idle: host launching / syncing"),
         categoryColor(StepCategory::HostWait),
         [](const DeviceStepBreakdown& b) { return at(b, StepCategory::HostWait); }},
        {"input", QObject::tr("Idle: waiting for input"), categoryColor(StepCategory::Input),
         [](const DeviceStepBreakdown& b) { return at(b, StepCategory::Input); }},
        {"idle", QObject::tr("Idle: other"), categoryColor(StepCategory::Idle),
         [](const DeviceStepBreakdown& b) { return at(b, StepCategory::Idle); }},
    };
    return all;
}

const DeviceStepBreakdown* breakdownOf(const trace::StepAnalysis& analysis, int step, int device) {
    // Step-major, then device: the usual place first, a search when a step lacks a device.
    const size_t devices = analysis.devices.size();
    const size_t guess = size_t(step) * devices + size_t(device);
    if (guess < analysis.breakdown.size() && analysis.breakdown[guess].step == step &&
        analysis.breakdown[guess].device == device)
        return &analysis.breakdown[guess];
    for (const DeviceStepBreakdown& b : analysis.breakdown)
        if (b.step == step && b.device == device) return &b;
    return nullptr;
}

// The device's own span of a step (in a multi-host run, its host's step), else the step's.
std::pair<int64_t, int64_t> spanOf(const trace::StepAnalysis& analysis, int step, int device) {
    if (const DeviceStepBreakdown* b = breakdownOf(analysis, step, device); b && b->end > b->start)
        return {b->start, b->end};
    const trace::Step& s = analysis.steps[size_t(step)];
    return {s.start, s.end};
}
int64_t durationOf(const trace::StepAnalysis& analysis, int step, int device) {
    const auto [start, end] = spanOf(analysis, step, device);
    return end - start;
}

namespace {

// The series with their colours beside the chart (all of them and the step-time line), or
// below it wrapped (`shown` only, at the boxes laid out in `below`).
void paintLegend(QPainter& painter, QPointF origin, bool right, double width, double line,
                 const std::vector<size_t>& shown, const std::vector<QRectF>& below) {
    const auto& all = series();
    if (right) {
        double ly = origin.y();
        const double lx = origin.x();
        for (const Series& s : all) {
            painter.fillRect(QRectF(lx, ly + 2, 12, line - 4), s.color);
            painter.setPen(QColor(40, 40, 40));
            painter.drawText(QRectF(lx + 16, ly, width, line), Qt::AlignLeft | Qt::AlignVCenter,
                             s.label);
            ly += line + 3;
        }
        painter.setPen(QPen(QColor(30, 30, 30), 1.6));
        painter.drawLine(QPointF(lx, ly + line / 2), QPointF(lx + 12, ly + line / 2));
        painter.setPen(QColor(40, 40, 40));
        painter.drawText(QRectF(lx + 16, ly, width, line), Qt::AlignLeft | Qt::AlignVCenter,
                         QObject::tr("Step time"));
        return;
    }
    for (size_t i = 0; i < shown.size(); ++i) {
        const QRectF box = below[i].translated(origin);
        painter.fillRect(QRectF(box.left(), box.top() + 2, 12, line - 4), all[shown[i]].color);
        painter.setPen(QColor(40, 40, 40));
        painter.drawText(QRectF(box.left() + 18, box.top(), box.width() - 18, line),
                         Qt::AlignLeft | Qt::AlignVCenter, all[shown[i]].label);
    }
}

}  // namespace

ChartLayout paintStepChart(QPainter& painter, const QRectF& area,
                           const trace::StepAnalysis& analysis, const ChartOptions& options) {
    ChartLayout layout;
    const QFont font = charts::beginChart(painter, area, 9);
    const QFontMetricsF fm(font);
    if (analysis.steps.empty() || analysis.devices.empty()) {
        charts::paintMessage(painter, area, QObject::tr("This profile has no steps."));
        painter.restore();
        return layout;
    }
    const int device = std::clamp(options.device, 0, int(analysis.devices.size()) - 1);
    const QString deviceName = QString::fromStdString(analysis.devices[size_t(device)].name);
    const QString title =
        options.title.isEmpty() ? QObject::tr("Step time on %1").arg(deviceName) : options.title;
    const double line = fm.height();
    painter.setPen(Qt::black);
    QFont bold = font;
    bold.setBold(true);
    painter.setFont(bold);
    painter.drawText(QRectF(area.left() + 8, area.top() + 4, area.width() - 16, line),
                     Qt::AlignLeft | Qt::AlignVCenter, title);
    painter.setFont(font);

    // Legend on the right: the series with their colours, those present first.
    const auto& all = series();
    double legendWidth = 0;
    for (const Series& s : all) legendWidth = std::max(legendWidth, fm.horizontalAdvance(s.label));
    legendWidth += 30;
    const bool legendRight = area.width() > 520;
    // Narrow charts put the legend under the axis, wrapped, naming only the series drawn.
    std::vector<size_t> shown;
    for (size_t k = 0; k < all.size(); ++k)
        for (size_t i = 0; i < analysis.steps.size(); ++i)
            if (const DeviceStepBreakdown* b = breakdownOf(analysis, int(i), device);
                b && all[k].value(*b) > 0) {
                shown.push_back(k);
                break;
            }
    std::vector<QRectF> below;  // swatch + text boxes, relative to the legend's top-left
    double rowWidth = 0, rows = shown.empty() ? 0 : 1;
    const double available = area.width() - 16;
    for (size_t k : shown) {
        const double w = 18 + fm.horizontalAdvance(all[k].label) + 14;
        if (rowWidth > 0 && rowWidth + w > available) {
            rowWidth = 0;
            ++rows;
        }
        below.push_back(QRectF(rowWidth, (rows - 1) * (line + 2), w, line));
        rowWidth += w;
    }
    const double legendHeight = legendRight ? 0 : rows * (line + 2) + 4;
    const double top = area.top() + line + 14;
    const double bottom = area.bottom() - line - 10 - legendHeight;
    const double left = area.left() + fm.horizontalAdvance(QStringLiteral("000.0 ms")) + 14;
    const double right = area.right() - (legendRight ? legendWidth + 16 : 12);
    layout.plot = QRectF(left, top, std::max(10.0, right - left), std::max(10.0, bottom - top));
    const QRectF& plot = layout.plot;

    int64_t longest = 1;
    for (size_t i = 0; i < analysis.steps.size(); ++i)
        longest = std::max(longest, durationOf(analysis, int(i), device));
    const double yMax = options.normalized ? 1.0
                        : options.yMax > 0 ? options.yMax
                                           : double(longest) * 1.08;
    auto y = [&](double value) { return plot.bottom() - value / yMax * plot.height(); };

    // Axis and grid.
    painter.setPen(QColor(225, 225, 225));
    const double step = options.normalized ? 0.25 : format::tickStep(yMax, 5);
    for (double v = 0; v <= yMax + 1e-9; v += step) {
        painter.setPen(QColor(228, 228, 228));
        painter.drawLine(QPointF(plot.left(), y(v)), QPointF(plot.right(), y(v)));
        painter.setPen(QColor(90, 90, 90));
        const QString label = options.normalized ? QStringLiteral("%1 %").arg(v * 100, 0, 'f', 0)
                                                 : format::nanoseconds(v);
        painter.drawText(QRectF(area.left(), y(v) - line / 2, left - area.left() - 6, line),
                         Qt::AlignRight | Qt::AlignVCenter, label);
    }
    painter.setPen(QColor(120, 120, 120));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());

    // Bars.
    const size_t n = analysis.steps.size();
    const double slot = plot.width() / double(n);
    const double barWidth = std::max(1.0, std::min(60.0, slot * 0.72));
    const int labelEvery = std::max(1, int(std::ceil(fm.horizontalAdvance("0000") / slot)));
    painter.setRenderHint(QPainter::Antialiasing, false);
    for (size_t i = 0; i < n; ++i) {
        const trace::Step& s = analysis.steps[i];
        const double cx = plot.left() + slot * (double(i) + 0.5);
        const QRectF column(cx - barWidth / 2, plot.top(), barWidth, plot.height());
        layout.bars.push_back(column);
        const DeviceStepBreakdown* b = breakdownOf(analysis, int(i), device);
        const double duration = double(std::max<int64_t>(durationOf(analysis, int(i), device), 1));
        double base = 0;
        if (b) {
            for (size_t k = 0; k < all.size(); ++k) {
                const int64_t ns = all[k].value(*b);
                if (ns <= 0) continue;
                const double value = options.normalized ? double(ns) / duration : double(ns);
                const QRectF rect(QPointF(column.left(), y(base + value)),
                                  QPointF(column.right(), y(base)));
                painter.fillRect(rect, all[k].color);
                layout.segments.push_back({rect, int(i), int(k), ns, double(ns) / duration});
                base += value;
            }
        }
        if (int(i) % labelEvery == 0) {
            painter.setPen(QColor(70, 70, 70));
            painter.drawText(
                QRectF(cx - slot * labelEvery / 2, plot.bottom() + 3, slot * labelEvery, line),
                Qt::AlignHCenter | Qt::AlignTop, stepNumber(s));
            layout.axisLabels.push_back(stepNumber(s));
        }
    }
    painter.setPen(QColor(90, 90, 90));
    painter.drawText(QRectF(plot.left(), plot.bottom() + 3, plot.width(), line + 6),
                     Qt::AlignRight | Qt::AlignBottom, QObject::tr("step"));

    // Step-time line (on the ns axis; in the normalised view it is scaled to the longest step).
    painter.setRenderHint(QPainter::Antialiasing, true);
    QPainterPath path;
    for (size_t i = 0; i < n; ++i) {
        const double cx = plot.left() + slot * (double(i) + 0.5);
        const double d = double(durationOf(analysis, int(i), device));
        const QPointF p(
            cx, options.normalized ? plot.bottom() - d / double(longest) * plot.height() : y(d));
        layout.line.push_back(p);
        if (i == 0)
            path.moveTo(p);
        else
            path.lineTo(p);
    }
    painter.setPen(QPen(QColor(30, 30, 30), 1.6));
    painter.setBrush(Qt::NoBrush);
    if (n > 1) painter.drawPath(path);
    for (const QPointF& p : layout.line)
        if (slot >= 6) painter.drawEllipse(p, 2.2, 2.2);

    paintLegend(painter,
                legendRight ? QPointF(right + 16, top)
                            : QPointF(area.left() + 8, area.bottom() - legendHeight + 2),
                legendRight, legendWidth, line, shown, below);
    painter.restore();
    return layout;
}

void paintStepStrip(QPainter& painter, const QRectF& rect, const trace::StepAnalysis& analysis,
                    int device, const std::function<double(double)>& x) {
    const auto& all = series();
    const QFontMetricsF fm(painter.font());
    for (size_t i = 0; i < analysis.steps.size(); ++i) {
        const trace::Step& s = analysis.steps[i];
        const auto [start, end] = spanOf(analysis, int(i), device);
        const double x0 = x(double(start)), x1 = x(double(end));
        if (x1 < rect.left() || x0 > rect.right()) continue;
        const DeviceStepBreakdown* b = breakdownOf(analysis, int(i), device);
        const double duration = double(std::max<int64_t>(end - start, 1));
        double at = x0;
        if (b) {
            for (const Series& series : all) {
                const int64_t ns = series.value(*b);
                if (ns <= 0) continue;
                const double w = (x1 - x0) * double(ns) / duration;
                painter.fillRect(QRectF(at, rect.top(), std::max(w, 0.0), rect.height()),
                                 series.color);
                at += w;
            }
        }
        painter.setPen(QColor(255, 255, 255));
        painter.drawLine(QPointF(x0, rect.top()), QPointF(x0, rect.bottom()));
        const QString label =
            QString::fromStdString(s.name.empty() ? std::to_string(s.index) : s.name);
        const double width = std::min(x1, rect.right()) - std::max(x0, rect.left());
        if (width > fm.horizontalAdvance(label) + 8) {
            const QRectF text(std::max(x0, rect.left()) + 4, rect.top(), width - 8, rect.height());
            painter.setPen(QColor(0, 0, 0, 110));
            painter.drawText(text.translated(1, 1), Qt::AlignLeft | Qt::AlignVCenter, label);
            painter.setPen(Qt::white);
            painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, label);
        }
    }
}

QString stepNumber(const trace::Step& step) {
    const size_t hash = step.name.rfind('#');
    if (hash != std::string::npos && hash + 1 < step.name.size() &&
        std::all_of(step.name.begin() + long(hash) + 1, step.name.end(),
                    [](char c) { return c >= '0' && c <= '9'; }))
        return QString::fromStdString(step.name.substr(hash + 1));
    return QString::number(step.index);
}

QString stepName(const trace::Step& step) {
    return step.name.empty() ? QObject::tr("Step %1").arg(step.index)
                             : QString::fromStdString(step.name);
}

QString stepSummary(const trace::StepAnalysis& analysis, int step, int device) {
    if (step < 0 || size_t(step) >= analysis.steps.size()) return {};
    const trace::Step& s = analysis.steps[size_t(step)];
    QString text = stepName(s);
    const int64_t own = durationOf(analysis, step, device);
    text += QStringLiteral(": %1").arg(format::nanoseconds(double(own)));
    const DeviceStepBreakdown* b = breakdownOf(analysis, step, device);
    if (!b) return text;
    QStringList parts;
    const double duration = double(std::max<int64_t>(own, 1));
    for (const Series& series : series()) {
        const int64_t ns = series.value(*b);
        if (ns > 0)
            parts << QStringLiteral("%1 %2").arg(series.label.toLower(),
                                                 percent(double(ns) / duration));
    }
    return text + QStringLiteral(" — ") + parts.join(QStringLiteral(", "));
}

QImage renderSteps(const Workspace& workspace, const ProfileInfo& profile, QSize size) {
    const trace::StepAnalysis analysis =
        *analysis::read(workspace, profile.id, trace::stepsAnalysis());
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintStepChart(
        painter, QRectF(QPointF(0, 0), QSizeF(size)), analysis,
        {0, false,
         QObject::tr("%1 — step time on %2")
             .arg(QString::fromStdString(profile.name),
                  analysis.devices.empty() ? QObject::tr("no device")
                                           : QString::fromStdString(analysis.devices.front().name)),
         0});
    return image;
}

QString breakdownCsv(const trace::StepAnalysis& analysis, int device) {
    QStringList header{"step", "name", "start_ns", "duration_ns"};
    for (const Series& s : series()) header << s.key + "_ns";
    QString out = exporting::csvRow(header) + '\n';
    for (size_t i = 0; i < analysis.steps.size(); ++i) {
        const trace::Step& s = analysis.steps[i];
        const auto [start, end] = spanOf(analysis, int(i), device);
        QStringList row{QString::number(s.index), QString::fromStdString(s.name),
                        QString::number(start), QString::number(end - start)};
        const DeviceStepBreakdown* b = breakdownOf(analysis, int(i), device);
        for (const Series& series : series()) row << QString::number(b ? series.value(*b) : 0);
        out += exporting::csvRow(row) + '\n';
    }
    return out;
}

}  // namespace stallscope::steps
