// One DMA lane per link: each DMA's lifetime as a bar in its row (base latency, queueing,
// transfer, the stall at its WAIT, slack and backtail), rows folded when zoomed out.
#include <QPainter>

#include "views/common/timeline_lod.h"
#include "views/replay/replay_tracks.h"
#include "views/replay/replay_tracks_internal.h"

namespace stallscope {

using replay::kNoCycle;
using replay::kNone;
using replay_tracks::cycleText;
using replay_tracks::number;
using replay_tracks::span;

namespace {

void drawFolded(QPainter& painter, const QRectF& r, uint32_t count, double stallShare) {
    const QColor calm = replaycolors::queued();
    const QColor hot = replaycolors::transferStall();
    const double s = std::clamp(stallShare, 0.0, 1.0);
    QColor mix = QColor::fromRgbF(calm.redF() + (hot.redF() - calm.redF()) * s,
                                  calm.greenF() + (hot.greenF() - calm.greenF()) * s,
                                  calm.blueF() + (hot.blueF() - calm.blueF()) * s);
    painter.fillRect(r, mix);
    if (r.width() > 28 && count > 1) {
        painter.setPen(Qt::white);
        painter.drawText(r, Qt::AlignCenter, QString::number(count));
    }
}

}  // namespace

DmaLaneTrack::DmaLaneTrack(ReplayDocumentPtr doc, size_t lane)
    : doc_(std::move(doc)), lane_(lane) {}

QString DmaLaneTrack::title() const {
    const auto& lane = doc_->lanes[lane_];
    QString name = lane.name;
    name.replace(QLatin1String("->"), QStringLiteral("→"));
    return QObject::tr("DMA %1 · %2").arg(name).arg(lane.dmaCount);
}

int DmaLaneTrack::shownRows() const {
    return std::clamp(static_cast<int>(doc_->lanes[lane_].rows.size()), 1, kMaxRowsShown);
}

int DmaLaneTrack::shownRow(size_t dma) const {
    return std::min(static_cast<int>(doc_->dmaRow[dma]), shownRows() - 1);
}

QRectF DmaLaneTrack::barRect(const QRect& trackRect, int row) const {
    return QRectF(trackRect.left(), trackRect.top() + kTopPad + row * kRowHeight + 2,
                  trackRect.width(), kRowHeight - 4);
}

TimelineItem DmaLaneTrack::itemFor(size_t dma) const {
    const auto& t = doc_->analysis.sim.dmas[dma];
    const double end = static_cast<double>(
        t.waitCycle == kNoCycle ? t.completeCycle : std::max(t.completeCycle, t.waitCycle));
    return TimelineItem{static_cast<int64_t>(dma), static_cast<double>(t.issueCycle), end, 1,
                        shownRow(dma)};
}

std::shared_ptr<const TrackFrame> DmaLaneTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<Frame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    const auto& rows = doc_->lanes[lane_].rows;
    frame->rows.resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        auto& out = frame->rows[r];
        foldRow(
            row.starts, row.ends, window, upp * kFoldPixels,
            [&](size_t first, size_t count, double start, double end) {
                out.push_back({static_cast<uint32_t>(first), static_cast<uint32_t>(count), start,
                               end, row.stallPrefix[first + count] - row.stallPrefix[first]});
            });
    }
    return frame;
}

void DmaLaneTrack::paintDma(QPainter& painter, size_t dma, const TimeMapping& mapping,
                            const QRectF& bar, bool selected) const {
    const auto& t = doc_->analysis.sim.dmas[dma];
    const auto& dep = doc_->analysis.deps.dmas;
    const double backtail =
        dma < dep.size() ? static_cast<double>(dep[dma].backtailCycle) : double(t.issueCycle);
    const DmaSegments s = dmaSegments(t, backtail, mapping, bar);
    const bool highlighted = selected || highlighted_.count(dma);
    if (!s.backtail.isNull()) {
        painter.setPen(QPen(highlighted ? replaycolors::highlight() : replaycolors::backtail(),
                            highlighted ? 2.5 : 1));
        painter.drawLine(s.backtail);
        const double x = s.backtail.x1();
        painter.drawLine(QLineF(x, bar.top() + 1, x, bar.bottom() - 1));
    }
    painter.fillRect(s.base, replaycolors::baseLatency());
    if (!s.queue.isNull()) painter.fillRect(s.queue, replaycolors::queued());
    painter.fillRect(s.transfer, replaycolors::transfer());
    if (!s.baseStall.isNull()) painter.fillRect(s.baseStall, replaycolors::baseStall());
    if (!s.transferStall.isNull()) painter.fillRect(s.transferStall, replaycolors::transferStall());
    if (!s.slack.isNull()) {
        painter.fillRect(s.slack, QColor(225, 225, 225));
        painter.fillRect(s.slack, QBrush(replaycolors::slack(), Qt::BDiagPattern));
    }
    if (s.waitX >= 0) {
        painter.setPen(QPen(Qt::black, 1));
        painter.drawLine(QLineF(s.waitX, bar.top() - 1, s.waitX, bar.bottom() + 1));
    }
    // The DMA id where the lifetime bar has room for it.
    const QRectF life = s.base.united(s.transfer);
    const QString label = QString::number(doc_->trace.dmas[dma].id);
    QFont small = painter.font();
    small.setPixelSize(9);
    const QFontMetricsF metrics(small);
    if (life.width() > metrics.horizontalAdvance(label) + 8) {
        painter.save();
        painter.setFont(small);
        painter.setPen(QColor(20, 45, 80));
        painter.drawText(QRectF(life.left(), life.top(), life.width(), life.height() / 2 + 1),
                         Qt::AlignCenter, label);
        painter.restore();
    }
    if (highlighted) {
        const QRectF whole = s.base.united(s.transfer).united(s.slack.isNull() ? s.base : s.slack);
        painter.setPen(QPen(selected ? Qt::black : replaycolors::highlight(), 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(whole.adjusted(-1, -1, 1, 1));
    }
}

void DmaLaneTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                         const TrackFrame* base,
                         const std::optional<TimelineItem>& selected) const {
    const auto* frame = dynamic_cast<const Frame*>(base);
    if (!frame) return;
    const auto& rows = doc_->lanes[lane_].rows;
    const int shown = shownRows();
    const QRect clip = painter.clipBoundingRect().toAlignedRect();
    for (size_t r = 0; r < frame->rows.size(); ++r) {
        const int drawRow = std::min(static_cast<int>(r), shown - 1);
        const QRectF bar = barRect(rect, drawRow);
        if (!clip.isEmpty() && (bar.bottom() < clip.top() || bar.top() > clip.bottom())) continue;
        for (const Item& item : frame->rows[r]) {
            const double x0 = mapping.x(item.start), x1 = mapping.x(item.end);
            if (x1 < rect.left() - 2000 || x0 > rect.right()) continue;
            if (item.count == 1) {
                const size_t dma = rows[r].dmas[item.first];
                const bool isSelected = selected && selected->id == static_cast<int64_t>(dma);
                paintDma(painter, dma, mapping, bar, isSelected);
            } else {
                const double length = std::max(1.0, item.end - item.start);
                drawFolded(painter, QRectF(x0, bar.top(), std::max(1.0, x1 - x0), bar.height()),
                           item.count, item.stall / length);
            }
        }
    }
    // Ghosts: where the suggestion would issue the DMA, dashed, on top.
    for (const auto& ghost : ghosts_) {
        const QRectF g = ghostRect(ghost, rect, mapping);
        if (g.isNull()) continue;
        const auto& t = doc_->analysis.sim.dmas[ghost.dma];
        QColor fill = replaycolors::highlight();
        fill.setAlpha(60);
        painter.fillRect(g, fill);
        painter.setPen(QPen(replaycolors::highlight(), 1.5, Qt::DashLine));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(g);
        // Arrow from the current ISSUE to the proposed one.
        const double y = g.center().y();
        const double from = mapping.x(static_cast<double>(t.issueCycle));
        painter.setPen(QPen(replaycolors::highlight(), 1.5));
        painter.drawLine(QLineF(from, y, g.left(), y));
        const double dir = g.left() < from ? 1 : -1;
        QPolygonF head;
        head << QPointF(g.left(), y) << QPointF(g.left() + dir * 6, y - 4)
             << QPointF(g.left() + dir * 6, y + 4);
        painter.setBrush(replaycolors::highlight());
        painter.drawPolygon(head);
    }
}

QRectF DmaLaneTrack::ghostRect(const SuggestionPreview::Ghost& ghost, const QRect& trackRect,
                               const TimeMapping& mapping) const {
    if (ghost.dma >= doc_->dmaLane.size() || doc_->dmaLane[ghost.dma] != lane_) return {};
    const QRectF bar = barRect(trackRect, shownRow(ghost.dma));
    return span(mapping, ghost.issueCycle, ghost.completeCycle, bar.top(), bar.height(), 2);
}

std::optional<TimelineItem> DmaLaneTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                  const TimeMapping& mapping,
                                                  const TrackFrame* base) const {
    const auto* frame = dynamic_cast<const Frame*>(base);
    if (!frame) return std::nullopt;
    const int row = (pos.y() - rect.top() - kTopPad) / kRowHeight;
    if (row < 0 || row >= shownRows()) return std::nullopt;
    const auto& rows = doc_->lanes[lane_].rows;
    // The last shown row also holds the deeper rows.
    const size_t lastRow = row == shownRows() - 1 ? frame->rows.size() : size_t(row) + 1;
    for (size_t r = static_cast<size_t>(row); r < lastRow; ++r) {
        const auto& items = frame->rows[r];
        const double t = mapping.time(pos.x());
        const double slop = 2 * mapping.unitsPerPixel();
        auto it = std::lower_bound(items.begin(), items.end(), t - slop,
                                   [](const Item& item, double v) { return item.end < v; });
        for (; it != items.end() && it->start <= t + slop; ++it) {
            if (it->count == 1) {
                TimelineItem item = itemFor(rows[r].dmas[it->first]);
                return item;
            }
            return TimelineItem{-1, it->start, it->end, it->count, row};
        }
    }
    return std::nullopt;
}

QString DmaLaneTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0)
        return QObject::tr("%1 DMAs folded (zoom in to see them)\ncycles %2 – %3")
            .arg(item.count)
            .arg(number(item.start), number(item.end));
    const size_t d = static_cast<size_t>(item.id);
    const auto& dma = doc_->trace.dmas[d];
    const auto& t = doc_->analysis.sim.dmas[d];
    QString text = QObject::tr("DMA %1 · %2 · %3 B\nissue %4 → ready %5 → complete %6, wait %7")
                       .arg(dma.id)
                       .arg(doc_->lanes[lane_].name)
                       .arg(number(double(dma.bytes())))
                       .arg(cycleText(t.issueCycle), cycleText(t.readyCycle),
                            cycleText(t.completeCycle), cycleText(t.waitCycle));
    if (t.baseStall + t.transferStall > 0)
        text += QObject::tr("\nstall %1 cycles: base latency %2, transfer %3")
                    .arg(number(double(t.baseStall + t.transferStall)), number(double(t.baseStall)),
                         number(double(t.transferStall)));
    if (t.slack > 0) text += QObject::tr("\nslack %1 cycles").arg(number(double(t.slack)));
    if (d < doc_->analysis.deps.dmas.size()) {
        const auto& dep = doc_->analysis.deps.dmas[d];
        text += QObject::tr("\nbacktail: could issue from cycle %1 (%2 cycles earlier, %3)")
                    .arg(number(double(dep.backtailCycle)),
                         number(double(t.issueCycle) - double(dep.backtailCycle)),
                         QString::fromUtf8(replay::constraintName(dep.binding).data()));
    }
    return text;
}

DetailFields DmaLaneTrack::details(const TimelineItem& item) const {
    if (item.id < 0)
        return {{QObject::tr("folded DMAs"), QString::number(item.count)},
                {QObject::tr("start cycle"), number(item.start)},
                {QObject::tr("end cycle"), number(item.end)}};
    const size_t d = static_cast<size_t>(item.id);
    const auto& dma = doc_->trace.dmas[d];
    const auto& t = doc_->analysis.sim.dmas[d];
    const auto& spaces = doc_->trace.machine.spaces;
    const auto region = [&](const replay::Region& r) {
        return QStringLiteral("%1 @ 0x%2, %3 B")
            .arg(QString::fromStdString(spaces[r.space].name))
            .arg(r.address, 0, 16)
            .arg(r.bytes);
    };
    DetailFields f{
        {QObject::tr("DMA id"), QString::number(dma.id)},
        {QObject::tr("link"), doc_->lanes[lane_].name},
        {QObject::tr("bytes"), number(double(dma.bytes()))},
        {QObject::tr("source"), region(dma.src)},
        {QObject::tr("destination"), region(dma.dst)},
        {QObject::tr("issue instruction"), QString::number(dma.issueInstr)},
        {QObject::tr("wait instruction"),
         dma.waitInstr == kNone ? QObject::tr("none") : QString::number(dma.waitInstr)},
        {QObject::tr("issue cycle"), cycleText(t.issueCycle)},
        {QObject::tr("ready cycle"), cycleText(t.readyCycle)},
        {QObject::tr("transfer start"), cycleText(t.startCycle)},
        {QObject::tr("complete cycle"), cycleText(t.completeCycle)},
        {QObject::tr("wait cycle"), cycleText(t.waitCycle)},
        {QObject::tr("base-latency stall"), number(double(t.baseStall))},
        {QObject::tr("transfer stall"), number(double(t.transferStall))},
        {QObject::tr("slack"), number(double(t.slack))},
        {QObject::tr("lifetime (µs)"),
         QString::number(doc_->microseconds(double(t.completeCycle - t.issueCycle)), 'f', 3)}};
    if (d < doc_->analysis.deps.dmas.size()) {
        const auto& dep = doc_->analysis.deps.dmas[d];
        f.append({QObject::tr("backtail instruction"), QString::number(dep.backtailInstr)});
        f.append({QObject::tr("backtail cycle"), number(double(dep.backtailCycle))});
        f.append({QObject::tr("backtail length"),
                  number(double(t.issueCycle) - double(dep.backtailCycle))});
        f.append({QObject::tr("binding constraint"),
                  QString::fromUtf8(replay::constraintName(dep.binding).data())});
        f.append({QObject::tr("constraint instruction"), dep.bindingInstr == kNone
                                                             ? QObject::tr("none")
                                                             : QString::number(dep.bindingInstr)});
        f.append({QObject::tr("backtail cycle if relocated"),
                  number(double(dep.backtailCycleRelocated))});
        f.append({QObject::tr("lightweight chain"), QString::number(dep.chainCount)});
    }
    f.append({QObject::tr("packed row"), QString::number(doc_->dmaRow[d])});
    return f;
}

QList<LegendEntry> DmaLaneTrack::legend() const {
    return {{QObject::tr("base latency"), replaycolors::baseLatency()},
            {QObject::tr("queued"), replaycolors::queued()},
            {QObject::tr("transfer"), replaycolors::transfer()},
            {QObject::tr("base-latency stall"), replaycolors::baseStall()},
            {QObject::tr("transfer stall"), replaycolors::transferStall()},
            {QObject::tr("slack"), replaycolors::slack(), LegendEntry::Style::Hatched},
            {QObject::tr("backtail"), replaycolors::backtail(), LegendEntry::Style::Line},
            {QObject::tr("proposed issue"), replaycolors::highlight(), LegendEntry::Style::Dashed}};
}

}  // namespace stallscope
