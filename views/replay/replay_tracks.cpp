#include "views/replay/replay_tracks.h"

#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <cmath>

#include "views/common/format.h"
#include "views/common/timeline_lod.h"
#include "views/common/timeline_view.h"

namespace stallscope {

using replay::kNoCycle;
using replay::kNone;

namespace replaycolors {
QColor baseLatency() {
    return QColor(158, 202, 225);
}
QColor queued() {
    return QColor(107, 174, 214);
}
QColor transfer() {
    return QColor(33, 113, 181);
}
QColor baseStall() {
    return QColor(49, 163, 84);
}
QColor transferStall() {
    return QColor(136, 65, 157);
}
QColor slack() {
    return QColor(150, 150, 150);
}
QColor backtail() {
    return QColor(90, 90, 90);
}
QColor highlight() {
    return QColor(230, 85, 13);
}
QColor completion() {
    return QColor(214, 39, 40);
}
QColor unit(const QString& name) {
    // Unit colours stay clear of the DMA palette (blues, stall green and purple), so a busy
    // matrix unit never reads as a transfer or a stall.
    if (name == QLatin1String("mxu")) return QColor(0, 137, 123);
    if (name == QLatin1String("vpu")) return QColor(230, 145, 0);
    if (name == QLatin1String("scalar")) return QColor(121, 85, 72);
    return QColor::fromHsv(static_cast<int>(qHash(name) % 360), 120, 170);
}
QColor op(const QString& name) {
    // Stable, light colours so black labels stay readable.
    return QColor::fromHsv(static_cast<int>(qHash(name) % 360), 70, 235);
}
}  // namespace replaycolors

namespace {

QString number(double v) {
    return QLocale().toString(v, 'f', 0);
}

QString cycleText(uint64_t c) {
    return c == kNoCycle ? QObject::tr("never") : number(static_cast<double>(c));
}

// Horizontal span [x(a), x(b)] of a bar as a rect, at least `minWidth` wide.
QRectF span(const TimeMapping& m, double a, double b, double top, double height,
            double minWidth = 0) {
    const double x0 = m.x(a), x1 = m.x(b);
    return QRectF(x0, top, std::max(x1 - x0, minWidth), height);
}

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

DmaSegments dmaSegments(const replay::DmaTiming& t, double backtailCycle, const TimeMapping& m,
                        const QRectF& bar) {
    DmaSegments s;
    const double top = bar.top(), h = bar.height();
    const double issue = static_cast<double>(t.issueCycle);
    const double ready = static_cast<double>(t.readyCycle);
    const double start = static_cast<double>(t.startCycle);
    const double complete = static_cast<double>(t.completeCycle);
    s.base = span(m, issue, ready, top, h);
    if (start > ready) s.queue = span(m, ready, start, top, h);
    s.transfer = span(m, start, complete, top, h);
    if (t.waitCycle != kNoCycle) {
        const double wait = static_cast<double>(t.waitCycle);
        s.waitX = m.x(wait);
        const double lowerTop = top + h / 2, lowerH = h - h / 2;
        if (wait < ready) s.baseStall = span(m, wait, ready, lowerTop, lowerH);
        if (wait < complete)
            s.transferStall = span(m, std::max(wait, ready), complete, lowerTop, lowerH);
        if (wait > complete) s.slack = span(m, complete, wait, top, h);
    }
    if (backtailCycle < issue) {
        const double y = top + h / 2;
        s.backtail = QLineF(m.x(backtailCycle), y, m.x(issue), y);
    }
    return s;
}

// ---- HLO band -------------------------------------------------------------------------------

namespace {
struct HloFrame : TrackFrame {
    struct Item {
        uint32_t first, count;
        double start, end;
    };
    std::vector<Item> items;
};
}  // namespace

std::shared_ptr<const TrackFrame> HloTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<HloFrame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    foldRow(doc_->opRuns.starts, doc_->opRuns.ends, window, upp * kFoldPixels,
            [&](size_t first, size_t count, double start, double end) {
                frame->items.push_back(
                    {static_cast<uint32_t>(first), static_cast<uint32_t>(count), start, end});
            });
    return frame;
}

void HloTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                     const TrackFrame* base, const std::optional<TimelineItem>& selected) const {
    const auto* frame = dynamic_cast<const HloFrame*>(base);
    if (!frame) return;
    const QRectF band(rect.left(), rect.top() + 3, rect.width(), rect.height() - 6);
    const QFontMetrics metrics(painter.font());
    for (const auto& item : frame->items) {
        const QRectF r = span(mapping, item.start, item.end, band.top(), band.height(), 1);
        if (r.right() < rect.left() || r.left() > rect.right()) continue;
        if (item.count > 1) {
            painter.fillRect(r, QColor(200, 200, 200));
            continue;
        }
        const auto& hlo = doc_->trace.hlos[doc_->opRuns.hlo[item.first]];
        const QString name = QString::fromStdString(hlo.name);
        painter.fillRect(r, replaycolors::op(name));
        if (r.width() > 40) {
            painter.setPen(Qt::black);
            const QRectF visible = r.intersected(QRectF(rect));
            painter.drawText(visible.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                             metrics.elidedText(name, Qt::ElideRight, int(visible.width()) - 5));
        }
        if (selected && selected->id == item.first) {
            painter.setPen(QPen(Qt::black, 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(r);
        }
    }
}

std::optional<TimelineItem> HloTrack::hitTest(const QPoint& pos, const QRect&,
                                              const TimeMapping& mapping,
                                              const TrackFrame* base) const {
    const auto* frame = dynamic_cast<const HloFrame*>(base);
    if (!frame) return std::nullopt;
    for (const auto& item : frame->items) {
        if (pos.x() >= mapping.x(item.start) - 1 && pos.x() <= mapping.x(item.end) + 1)
            return TimelineItem{item.count == 1 ? int64_t(item.first) : -1, item.start, item.end,
                                item.count, 0};
    }
    return std::nullopt;
}

QString HloTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0)
        return QObject::tr("%1 op runs folded (zoom in)\n%2 – %3 cycles")
            .arg(item.count)
            .arg(number(item.start), number(item.end));
    const size_t run = static_cast<size_t>(item.id);
    const auto& hlo = doc_->trace.hlos[doc_->opRuns.hlo[run]];
    return QObject::tr("%1 (%2)\n%3 instructions, %4 cycles (%5 µs)")
        .arg(QString::fromStdString(hlo.name), QString::fromStdString(hlo.category))
        .arg(doc_->opRuns.instrCount[run])
        .arg(number(item.end - item.start))
        .arg(doc_->microseconds(item.end - item.start), 0, 'f', 3);
}

DetailFields HloTrack::details(const TimelineItem& item) const {
    if (item.id < 0)
        return {{QObject::tr("folded op runs"), QString::number(item.count)},
                {QObject::tr("start cycle"), number(item.start)},
                {QObject::tr("end cycle"), number(item.end)}};
    const size_t run = static_cast<size_t>(item.id);
    const auto& hlo = doc_->trace.hlos[doc_->opRuns.hlo[run]];
    return {{QObject::tr("HLO op"), QString::fromStdString(hlo.name)},
            {QObject::tr("HLO id"), QString::number(hlo.id)},
            {QObject::tr("category"), QString::fromStdString(hlo.category)},
            {QObject::tr("first instruction"), QString::number(doc_->opRuns.firstInstr[run])},
            {QObject::tr("instructions"), QString::number(doc_->opRuns.instrCount[run])},
            {QObject::tr("start cycle"), number(item.start)},
            {QObject::tr("end cycle"), number(item.end)},
            {QObject::tr("cycles"), number(item.end - item.start)}};
}

// ---- DMA lanes ------------------------------------------------------------------------------

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

// ---- units ----------------------------------------------------------------------------------

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

// ---- dependency arrows ----------------------------------------------------------------------

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

// ---- assembly -------------------------------------------------------------------------------

DmaLaneTrack* ReplayTracks::laneOf(size_t dma) const {
    if (!doc || dma >= doc->dmaLane.size()) return nullptr;
    const uint32_t lane = doc->dmaLane[dma];
    return lane < lanes.size() ? lanes[lane].get() : nullptr;
}

ReplayTracks installReplayTracks(TimelineView& view, const ReplayDocumentPtr& doc,
                                 ReplayTrackSelection which) {
    ReplayTracks tracks;
    tracks.doc = doc;
    view.setExtent(TimeRange{0, std::max(1.0, doc->totalCycles())});
    const double ghz = doc->clockGhz();
    view.setTimeFormat({QObject::tr("cycles"), format::cycles, [ghz](double cycles) {
                            const double us = cycles / (ghz * 1000.0);
                            return QStringLiteral("%1 µs").arg(QString::number(us, 'g', 4));
                        }});
    if (which.hlo && !doc->opRuns.starts.empty()) {
        tracks.hlo = std::make_shared<HloTrack>(doc);
        view.addTrack(tracks.hlo);
    }
    if (which.dma)
        for (size_t l = 0; l < doc->lanes.size(); ++l) {
            tracks.lanes.push_back(std::make_shared<DmaLaneTrack>(doc, l));
            view.addTrack(tracks.lanes.back());
        }
    if (which.units)
        for (size_t u = 0; u < doc->units.size(); ++u) {
            tracks.units.push_back(std::make_shared<UnitTrack>(doc, u));
            view.addTrack(tracks.units.back());
        }
    tracks.dependencies = std::make_shared<DependencyOverlay>(doc);
    std::vector<const DmaLaneTrack*> lanes;
    for (const auto& l : tracks.lanes) lanes.push_back(l.get());
    std::vector<const UnitTrack*> units;
    for (const auto& u : tracks.units) units.push_back(u.get());
    tracks.dependencies->setTracks(tracks.hlo.get(), lanes, units);
    view.addOverlay(tracks.dependencies);
    // Minimap: stall cycles over time.
    const auto density = doc;
    view.setOverviewPainter([density](QPainter& painter, const QRect& r, TimeRange all) {
        const auto& bins = density->stallDensity;
        if (bins.empty() || all.length() <= 0) return;
        const double peak = std::max(1.0, *std::max_element(bins.begin(), bins.end()));
        // The bins cover [0, total cycles]; the minimap spans the view's extent, which may be
        // wider (a comparison shares one axis between a shorter and a longer run).
        const double binCycles = density->totalCycles() / double(bins.size());
        const double w = binCycles / all.length() * r.width();
        QColor c = replaycolors::transferStall();
        c.setAlpha(170);
        for (size_t b = 0; b < bins.size(); ++b) {
            const double h = bins[b] / peak * (r.height() - 2);
            if (h <= 0) continue;
            const double x =
                r.left() + (double(b) * binCycles - all.start) / all.length() * r.width();
            painter.fillRect(QRectF(x, r.bottom() - h, std::max(1.0, w), h), c);
        }
    });
    view.fitAll();
    return tracks;
}

}  // namespace stallscope
