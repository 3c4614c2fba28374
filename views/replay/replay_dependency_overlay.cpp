// Dependency arrows: from the producers and constraints of the selected DMA to its ISSUE, with
// the constraints' names placed clear of the DMA bars.
#include <QPainter>
#include <QPainterPath>
#include <cmath>

#include "views/replay/replay_tracks.h"
#include "views/replay/replay_tracks_internal.h"

namespace stallscope {

using replay::kNone;

void DependencyOverlay::setTracks(const TimelineTrack* hlo, std::vector<const DmaLaneTrack*> lanes,
                                  std::vector<const UnitTrack*> units) {
    hlo_ = hlo;
    lanes_ = std::move(lanes);
    units_ = std::move(units);
}

void DependencyOverlay::setEdges(size_t dma, std::vector<replay::DependencyEdge> edges) {
    dma_ = dma;
    edges_ = std::move(edges);
}

std::optional<QPointF> DependencyOverlay::anchor(
    uint32_t instr, const TimeMapping& mapping,
    const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    const auto& in = doc_->trace.instrs[instr];
    const double x = mapping.x(static_cast<double>(doc_->analysis.sim.cycle[instr]));
    if (in.dma != kNone) {
        for (const DmaLaneTrack* lane : lanes_) {
            if (doc_->dmaLane[in.dma] != lane->lane()) continue;
            const QRect r = trackRect(lane);
            if (r.isEmpty()) return std::nullopt;
            return QPointF(x, lane->barRect(r, lane->shownRow(in.dma)).center().y());
        }
    }
    for (const UnitTrack* unit : units_) {
        if (doc_->units[unit->unit()].unit != in.unit) continue;
        const QRect r = trackRect(unit);
        if (r.isEmpty()) break;
        return QPointF(x, r.center().y());
    }
    if (hlo_) {
        const QRect r = trackRect(hlo_);
        if (!r.isEmpty()) return QPointF(x, r.center().y());
    }
    return std::nullopt;
}

void DependencyOverlay::paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
                              const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    if (mode_ == Mode::Off || edges_.empty()) return;
    const bool relaxed = mode_ == Mode::Relaxed;
    const QColor colour = relaxed ? QColor(217, 95, 2) : QColor(27, 94, 170);
    painter.setRenderHint(QPainter::Antialiasing, true);
    for (const auto& e : edges_) {
        if (e.relaxed != relaxed) continue;
        const auto a = anchor(e.from, mapping, trackRect);
        const auto b = anchor(e.to, mapping, trackRect);
        if (!a || !b) continue;
        QPainterPath path(*a);
        const double bend = std::max(20.0, std::abs(b->x() - a->x()) * 0.3);
        path.cubicTo(QPointF(a->x() + bend, a->y()), QPointF(b->x() - bend, b->y()), *b);
        painter.setPen(QPen(colour, 1.6));
        painter.setBrush(Qt::NoBrush);
        painter.drawPath(path);
        const double angle = std::atan2(b->y() - path.pointAtPercent(0.95).y(),
                                        b->x() - path.pointAtPercent(0.95).x());
        QPolygonF head;
        head << *b << *b - QPointF(std::cos(angle - 0.4) * 8, std::sin(angle - 0.4) * 8)
             << *b - QPointF(std::cos(angle + 0.4) * 8, std::sin(angle + 0.4) * 8);
        painter.setBrush(colour);
        painter.drawPolygon(head);
        painter.drawEllipse(*a, 2.5, 2.5);
    }
    // Names after the arrows, so no arrow crosses a label.
    QColor fill(Qt::white);
    fill.setAlpha(230);
    for (const Label& label : labels(painter.fontMetrics(), dataArea, mapping, trackRect)) {
        const QPointF nearest(std::clamp(label.from.x(), label.rect.left(), label.rect.right()),
                              std::clamp(label.from.y(), label.rect.top(), label.rect.bottom()));
        if (QLineF(label.from, nearest).length() > 6) {
            painter.setPen(QPen(colour, 1, Qt::DotLine));
            painter.drawLine(label.from, nearest);
        }
        painter.setPen(QPen(colour.lighter(150), 1));
        painter.setBrush(fill);
        painter.drawRoundedRect(label.rect, 3, 3);
        painter.setPen(colour.darker(130));
        painter.drawText(label.rect, Qt::AlignCenter, label.text);
    }
    painter.setBrush(Qt::NoBrush);
    painter.setRenderHint(QPainter::Antialiasing, false);
}

bool DependencyOverlay::overlapsDmaBar(
    const QRectF& rect, const TimeMapping& mapping,
    const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    // Bars are drawn at least a pixel wide: a little slack on either side.
    const double from = mapping.time(rect.left() - 2), to = mapping.time(rect.right() + 2);
    for (const DmaLaneTrack* lane : lanes_) {
        const QRect track = trackRect(lane);
        if (track.isEmpty() || !QRectF(track).intersects(rect)) continue;
        const auto& rows = doc_->lanes[lane->lane()].rows;
        for (size_t r = 0; r < rows.size(); ++r) {
            const int shown = std::min(static_cast<int>(r), lane->shownRows() - 1);
            if (!lane->barRect(track, shown).intersects(rect)) continue;
            // A row's lifetimes do not overlap, so its ends are sorted like its starts.
            const auto& ends = rows[r].ends;
            const auto it = std::lower_bound(ends.begin(), ends.end(), from);
            if (it != ends.end() && rows[r].starts[size_t(it - ends.begin())] <= to) return true;
        }
    }
    return false;
}

std::vector<DependencyOverlay::Label> DependencyOverlay::labels(
    const QFontMetrics& metrics, const QRect& dataArea, const TimeMapping& mapping,
    const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    std::vector<Label> placed;
    if (mode_ == Mode::Off) return placed;
    const bool relaxed = mode_ == Mode::Relaxed;
    const QRectF area(dataArea);
    for (const auto& e : edges_) {
        if (e.relaxed != relaxed || e.kind == replay::ConstraintKind::None) continue;
        const auto a = anchor(e.from, mapping, trackRect);
        if (!a || !anchor(e.to, mapping, trackRect)) continue;
        const QString text = QString::fromUtf8(replay::constraintName(e.kind).data());
        const QSizeF size(metrics.horizontalAdvance(text) + 8, metrics.height() + 2);
        const auto free = [&](const QRectF& r) {
            if (!area.contains(r) || overlapsDmaBar(r, mapping, trackRect)) return false;
            return std::none_of(placed.begin(), placed.end(), [&](const Label& other) {
                return other.rect.adjusted(-2, -2, 2, 2).intersects(r);
            });
        };
        // Beside the start first (right, then left of it), then ever further up and down.
        const double right = a->x() + 4, left = a->x() - 4 - size.width();
        std::vector<QPointF> candidates{{right, a->y() - 4 - size.height()},
                                        {right, a->y() + 4},
                                        {left, a->y() - 4 - size.height()},
                                        {left, a->y() + 4}};
        const double step = size.height() + 2;
        const int steps = static_cast<int>(area.height() / step) + 1;
        for (int k = 1; k <= steps; ++k)
            for (double x : {right, left})
                for (int sign : {-1, 1})
                    candidates.emplace_back(x, a->y() - size.height() / 2 + sign * k * step);
        const auto spot = std::find_if(candidates.begin(), candidates.end(),
                                       [&](const QPointF& p) { return free(QRectF(p, size)); });
        // Nowhere free (the start is scrolled away, or lanes fill the view): the arrow alone;
        // the details panel names the binding constraint.
        if (spot != candidates.end()) placed.push_back({text, QRectF(*spot, size), *a});
    }
    return placed;
}

}  // namespace stallscope
