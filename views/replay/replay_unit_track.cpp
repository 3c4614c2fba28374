// One utilization track per unit: the unit's busy fraction per pixel column, with the DMA
// completions marked.
#include <QPainter>
#include <cmath>

#include "views/common/timeline_lod.h"
#include "views/replay/replay_tracks.h"
#include "views/replay/replay_tracks_internal.h"

namespace stallscope {

using replay_tracks::number;
using replay_tracks::span;

QString UnitTrack::title() const {
    const auto& u = doc_->units[unit_];
    return QObject::tr("%1 busy (%2%)").arg(u.name).arg(u.overall * 100, 0, 'f', 1);
}

double UnitTrack::busyBetween(double from, double to) const {
    // Exact: merge this unit's busy spans of the instructions that can reach into [from, to).
    const auto& u = doc_->units[unit_];
    const auto& trace = doc_->trace;
    const auto& cycles = doc_->analysis.sim.cycle;
    const auto [lo, hi] = doc_->instructionsIn(from - doc_->maxBusy, to);
    double busy = 0, openStart = 0, openEnd = -1;
    for (uint32_t i = lo; i < hi; ++i) {
        const auto& in = trace.instrs[i];
        if (in.unit != u.unit || in.kind != replay::InstrKind::Plain) continue;
        const double s = static_cast<double>(cycles[i]), e = s + in.busy;
        if (s > openEnd) {
            if (openEnd > openStart)
                busy += std::max(0.0, std::min(openEnd, to) - std::max(openStart, from));
            openStart = s;
            openEnd = e;
        } else {
            openEnd = std::max(openEnd, e);
        }
    }
    if (openEnd > openStart)
        busy += std::max(0.0, std::min(openEnd, to) - std::max(openStart, from));
    return busy;
}

std::shared_ptr<const TrackFrame> UnitTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<Frame>();
    const double total = doc_->totalCycles();
    window.start = std::max(0.0, std::floor(window.start / upp) * upp);
    window.end = std::min(total, window.end);
    if (window.end <= window.start) return frame;
    // Bounded work and memory whatever the request: at most kMaxColumns columns.
    constexpr double kMaxColumns = 1 << 16;
    upp = std::max(upp, window.length() / kMaxColumns);
    frame->window = window;
    frame->unitsPerPixel = upp;
    const size_t columns = static_cast<size_t>(std::ceil(window.length() / upp));
    frame->busy.assign(columns, 0);
    frame->completions.assign(columns, 0);
    const auto& u = doc_->units[unit_];
    if (upp >= u.busy.binWidth()) {
        for (size_t c = 0; c < columns; ++c) {
            const double a = window.start + c * upp, b = std::min(window.end, a + upp);
            frame->busy[c] = static_cast<float>(u.busy.busyBetween(a, b) / std::max(1e-9, b - a));
        }
    } else {
        // Zoomed in below the prefix table's bins: accumulate each merged busy span exactly.
        const auto& trace = doc_->trace;
        const auto& cycles = doc_->analysis.sim.cycle;
        const auto [lo, hi] = doc_->instructionsIn(window.start - doc_->maxBusy, window.end);
        std::vector<double> busy(columns, 0);
        const auto add = [&](double s, double e) {
            s = std::max(s, window.start);
            e = std::min(e, window.end);
            if (e <= s) return;
            const size_t c0 = std::min(columns - 1, static_cast<size_t>((s - window.start) / upp));
            const size_t c1 = std::min(columns - 1, static_cast<size_t>((e - window.start) / upp));
            for (size_t c = c0; c <= c1; ++c) {
                const double a = std::max(s, window.start + c * upp);
                const double b = std::min(e, window.start + (c + 1) * upp);
                if (b > a) busy[c] += b - a;
            }
        };
        double openStart = 0, openEnd = -1;
        for (uint32_t i = lo; i < hi; ++i) {
            const auto& in = trace.instrs[i];
            if (in.unit != u.unit || in.kind != replay::InstrKind::Plain) continue;
            const double s = static_cast<double>(cycles[i]), e = s + in.busy;
            if (s > openEnd) {
                if (openEnd > openStart) add(openStart, openEnd);
                openStart = s;
                openEnd = e;
            } else {
                openEnd = std::max(openEnd, e);
            }
        }
        if (openEnd > openStart) add(openStart, openEnd);
        for (size_t c = 0; c < columns; ++c) {
            const double a = window.start + c * upp, b = std::min(window.end, a + upp);
            frame->busy[c] = static_cast<float>(std::min(1.0, busy[c] / std::max(1e-9, b - a)));
        }
    }
    const auto& completions = doc_->completions;
    auto it = std::lower_bound(completions.begin(), completions.end(), window.start);
    for (; it != completions.end() && *it < window.end;) {
        const size_t c = std::min(columns - 1, static_cast<size_t>((*it - window.start) / upp));
        const double columnEnd = window.start + (c + 1) * upp;
        auto next = std::lower_bound(it, completions.end(), columnEnd);
        // The last column is clamped, and rounding can put *it past columnEnd: always advance.
        if (next == it) next = std::upper_bound(it, completions.end(), *it);
        frame->completions[c] += static_cast<uint32_t>(next - it);
        it = next;
    }
    return frame;
}

void UnitTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                      const TrackFrame* base, const std::optional<TimelineItem>& selected) const {
    const auto* frame = dynamic_cast<const Frame*>(base);
    const int chartTop = rect.top() + 8, chartBottom = rect.bottom() - 3;
    const double chartHeight = chartBottom - chartTop;
    painter.fillRect(QRect(rect.left(), chartTop, rect.width(), int(chartHeight)),
                     QColor(247, 247, 247));
    if (!frame || frame->busy.empty()) return;
    const QColor colour = replaycolors::unit(doc_->units[unit_].name);
    const double upp = frame->unitsPerPixel;
    const size_t first = static_cast<size_t>(
        std::max(0.0, std::floor((mapping.window.start - frame->window.start) / upp)));
    const size_t last = std::min(
        frame->busy.size(), static_cast<size_t>(std::max(
                                0.0, std::ceil((mapping.window.end - frame->window.start) / upp))) +
                                1);
    // Runs of equal height become one rectangle.
    size_t c = first;
    while (c < last) {
        const int h = static_cast<int>(std::lround(frame->busy[c] * chartHeight));
        size_t d = c + 1;
        while (d < last && static_cast<int>(std::lround(frame->busy[d] * chartHeight)) == h) ++d;
        if (h > 0) {
            const double x0 = mapping.x(frame->window.start + c * upp);
            const double x1 = mapping.x(frame->window.start + d * upp);
            painter.fillRect(QRectF(x0, chartBottom - h, std::max(1.0, x1 - x0), h), colour);
        }
        c = d;
    }
    // DMA completions along the top edge: a tick each while they stand apart; when they crowd
    // (closer than 4 px on average) a thin strip whose opacity follows the count per pixel, so
    // thousands of completions do not paint a solid red bar over the chart.
    QVector<QLineF> ticks;
    std::vector<std::pair<int, uint32_t>> perPixel;  // x, completions
    for (size_t k = first; k < last; ++k) {
        if (frame->completions[k] == 0) continue;
        const double x = mapping.x(frame->window.start + (k + 0.5) * upp);
        ticks.append(QLineF(x, rect.top() + 1, x, rect.top() + 7));
        const int px = static_cast<int>(std::floor(x));
        if (!perPixel.empty() && perPixel.back().first == px)
            perPixel.back().second += frame->completions[k];
        else
            perPixel.push_back({px, frame->completions[k]});
    }
    if (static_cast<double>(ticks.size()) * 4 <= rect.width()) {
        painter.setPen(QPen(replaycolors::completion(), 1.5));
        painter.drawLines(ticks);
    } else {
        uint32_t most = 1;
        for (const auto& [x, n] : perPixel) most = std::max(most, n);
        QColor c = replaycolors::completion();
        for (const auto& [x, n] : perPixel) {
            c.setAlphaF(static_cast<float>(0.25 + 0.75 * std::sqrt(double(n) / double(most))));
            painter.fillRect(QRectF(x, rect.top() + 2, 1, 4), c);
        }
    }
    if (selected) {
        QColor band(0, 0, 0, 40);
        painter.fillRect(
            QRectF(mapping.x(selected->start), rect.top(),
                   std::max(2.0, mapping.x(selected->end) - mapping.x(selected->start)),
                   rect.height()),
            band);
    }
}

std::optional<TimelineItem> UnitTrack::hitTest(const QPoint& pos, const QRect&,
                                               const TimeMapping& mapping,
                                               const TrackFrame* base) const {
    const auto* frame = dynamic_cast<const Frame*>(base);
    if (!frame || frame->busy.empty()) return std::nullopt;
    // A few pixels wide, so the tooltip speaks about what the eye sees.
    const double t = mapping.time(pos.x());
    const double halfWidth = 2 * mapping.unitsPerPixel();
    const double a = std::max(0.0, t - halfWidth), b = std::min(doc_->totalCycles(), t + halfWidth);
    if (b <= a) return std::nullopt;
    return TimelineItem{static_cast<int64_t>(unit_), a, b, 1, 0};
}

QString UnitTrack::toolTip(const TimelineItem& item) const {
    const auto& u = doc_->units[unit_];
    const double busy = busyBetween(item.start, item.end);
    const size_t done = countInRange(doc_->completions, item.start, item.end);
    return QObject::tr("%1 busy %2% over cycles %3 – %4\n%5 DMA completion(s)")
        .arg(u.name)
        .arg(100.0 * busy / std::max(1e-9, (item.end - item.start)), 0, 'f', 1)
        .arg(number(item.start), number(item.end))
        .arg(done);
}

DetailFields UnitTrack::details(const TimelineItem& item) const {
    const auto& u = doc_->units[unit_];
    const double busy = busyBetween(item.start, item.end);
    return {{QObject::tr("unit"), u.name},
            {QObject::tr("from cycle"), number(item.start)},
            {QObject::tr("to cycle"), number(item.end)},
            {QObject::tr("busy cycles"), number(busy)},
            {QObject::tr("busy"),
             QStringLiteral("%1%").arg(100.0 * busy / std::max(1e-9, (item.end - item.start)), 0,
                                       'f', 1)},
            {QObject::tr("DMA completions"),
             QString::number(countInRange(doc_->completions, item.start, item.end))},
            {QObject::tr("busy over the trace"),
             QStringLiteral("%1%").arg(u.overall * 100, 0, 'f', 1)}};
}

QList<LegendEntry> UnitTrack::legend() const {
    return {{QObject::tr("%1 busy").arg(doc_->units[unit_].name),
             replaycolors::unit(doc_->units[unit_].name)},
            {QObject::tr("DMA completion"), replaycolors::completion(), LegendEntry::Style::Line}};
}

}  // namespace stallscope
