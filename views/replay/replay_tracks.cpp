#include "views/replay/replay_tracks.h"

#include <QPainter>

#include "views/common/format.h"
#include "views/common/timeline_lod.h"
#include "views/common/timeline_view.h"
#include "views/replay/replay_tracks_internal.h"

namespace stallscope {

using replay::kNoCycle;
using replay_tracks::number;
using replay_tracks::span;

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
