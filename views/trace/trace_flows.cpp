#include "views/trace/trace_tracks.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPainter>
#include <QPainterPath>
#include <QStaticText>
#include <QTimeZone>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/sqlite.h"
#include "views/common/format.h"
#include "views/common/timeline_view.h"

// Flow arrows over the trace tracks, the tracks in order, and the binding of a profile to a
// timeline.

namespace stallscope {

TraceFlowOverlay::TraceFlowOverlay(TraceSourcePtr source, std::shared_ptr<const TrackMap> shown,
                                   const TimelineView* view)
    : source_(std::move(source)), shown_(std::move(shown)), view_(view) {}

std::optional<TraceFlowOverlay::FlowArrow> TraceFlowOverlay::arrowFor(const trace::FlowRow& f,
                                                                      const QRect& a,
                                                                      const QRect& b,
                                                                      const TimeMapping& mapping,
                                                                      int64_t origin) {
    const int fromRow = std::max(0, f.fromDepth), toRow = std::max(0, f.toDepth);
    QPointF p0(mapping.x(double(f.fromTs - origin)), a.top() + TraceSliceTrack::rowCenter(fromRow));
    QPointF p1(mapping.x(double(f.toTs - origin)), b.top() + TraceSliceTrack::rowCenter(toRow));
    const double dx = p1.x() - p0.x(), dy = p1.y() - p0.y();
    QPointF c1, c2;
    if (std::abs(dy) < 1.0) {
        // Along one row: an arc over the row from the source's end to the target's top-left
        // corner, so neither the line nor the head covers the slices' labels.
        if (std::abs(dx) < 2.0) return std::nullopt;  // back to back: nothing to show
        const double top =
            a.top() + TraceSliceTrack::kPadding + fromRow * TraceSliceTrack::kRowHeight;
        p0.setY(top + 1);
        p1.setY(top + 1);
        const double lift = std::min(14.0, 4.0 + std::abs(dx) * 0.2);
        c1 = p0 + QPointF(dx * 0.25, -lift);
        c2 = p1 + QPointF(-dx * 0.25, -lift);
    } else if (std::abs(dx) < 2.0 || dx < 0) {
        // Straight up or down (a dependency at the same instant on another row), or backward:
        // the tip stops at the target row's edge facing the source, off its label.
        const double rowTop =
            b.top() + TraceSliceTrack::kPadding + toRow * TraceSliceTrack::kRowHeight;
        p1.setY(dy < 0 ? rowTop + TraceSliceTrack::kRowHeight - 1 : rowTop + 1);
        const double ddy = p1.y() - p0.y();
        if (std::abs(dx) < 2.0) {
            c1 = p0 + QPointF(0, ddy * 0.35);
            c2 = p1 - QPointF(0, ddy * 0.35);
        } else {
            // Leaves the source going back and comes down (or up) onto the target's top-left
            // corner from the right, so the head points backward.
            const double bend = std::max(12.0, std::abs(dx) * 0.4);
            c1 = p0 - QPointF(bend, 0);
            c2 = p1 + QPointF(16.0, ddy > 0 ? -6.0 : 6.0);
        }
    } else {
        // Forward: leaves the source's end, enters the target's start from the left.
        const double bend = std::max(12.0, dx * 0.4);
        c1 = p0 + QPointF(bend, 0);
        c2 = p1 - QPointF(bend, 0);
    }
    FlowArrow arrow;
    arrow.path = QPainterPath(p0);
    arrow.path.cubicTo(c1, c2, p1);
    // The head follows the curve's last tangent, its tip on the target; short arrows get a
    // smaller head.
    QPointF dir = p1 - c2;
    const double len = std::hypot(dir.x(), dir.y());
    dir = len > 1e-6 ? dir / len : QPointF(1, 0);
    const QPointF normal(-dir.y(), dir.x());
    const double size = std::clamp(std::hypot(p1.x() - p0.x(), p1.y() - p0.y()) * 0.6, 4.0, 7.0);
    arrow.tip = p1;
    arrow.head << p1 << p1 - dir * size + normal * size / 2 << p1 - dir * size - normal * size / 2;
    return arrow;
}

void TraceFlowOverlay::paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
                             const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    if (display_ == FlowDisplay::None) return;
    // Until read (from opening on, on a thread of their own) there is nothing to draw.
    const std::shared_ptr<const FlowIndex> index =
        waitForFlows_ ? source_->waitForFlows() : source_->flows();
    if (index->empty()) return;
    const int64_t longest = index->longest();
    constexpr int kMaxArrows = 1000;
    constexpr int kSmoothArrows = 50;
    const int64_t origin = source_->origin();
    double windowStart = mapping.window.start + double(origin);
    double windowEnd = mapping.window.end + double(origin);
    std::optional<SliceSpan> focus;
    if (display_ == FlowDisplay::Selected) {
        focus = selectedSpan();
        if (!focus) return;
        // Only flows with an end in the slice: those overlapping both it and the window.
        windowStart = std::max(windowStart, double(focus->start));
        windowEnd = std::min(windowEnd, double(focus->end));
        if (windowStart > windowEnd) {
            // The slice is out of view: its flows may still cross the window.
            windowStart = std::min(mapping.window.start + double(origin), double(focus->start));
            windowEnd = std::max(mapping.window.end + double(origin), double(focus->end));
        }
    }
    // The selected slice's own flows; without any, those nested in it while they are few.
    FlowTie shownTie = FlowTie::Own;
    if (focus) {
        int own = 0, nested = 0;
        for (const trace::FlowRow& f : index->between(focus->start - longest, focus->end)) {
            const FlowTie t = tie(f, *focus);
            own += t == FlowTie::Own;
            nested += t == FlowTie::Nested;
        }
        if (own == 0 && (nested == 0 || nested > kNestedFlowsShown)) return;
        shownTie = own > 0 ? FlowTie::Own : FlowTie::Nested;
    }
    const auto wanted = [&](const trace::FlowRow& f) {
        return !focus || tie(f, *focus) == shownTie;
    };
    // More flows than are drawn lying wholly in a wide window: none is drawn (as below), and
    // none is decoded.
    if (!focus && index->atLeastBetween(int64_t(std::ceil(windowStart)),
                                        int64_t(std::floor(windowEnd))) > size_t(kMaxArrows))
        return;
    const std::vector<trace::FlowRow> near =
        index->between(int64_t(std::floor(windowStart)) - longest, int64_t(std::ceil(windowEnd)));
    auto it = near.begin();
    // Count what the window holds first: past kSmoothArrows arrows they are drawn without
    // antialiasing (a smooth curve costs ~80 us), and past kMaxArrows none is (they would only
    // hatch the view; zoom in).
    int inWindow = 0;
    for (auto probe = it; probe != near.end() && inWindow <= kMaxArrows; ++probe) {
        if (double(std::min(probe->fromTs, probe->toTs)) > windowEnd) break;
        if (double(std::max(probe->fromTs, probe->toTs)) >= windowStart && wanted(*probe))
            ++inWindow;
    }
    if (inWindow > kMaxArrows) return;
    painter.save();
    painter.setClipRect(dataArea);
    painter.setRenderHint(QPainter::Antialiasing, inWindow <= kSmoothArrows);
    const QColor color(40, 70, 160, 190);
    painter.setPen(QPen(color, inWindow <= kSmoothArrows ? 1.3 : 1.0));
    int drawn = 0;
    for (; it != near.end() && drawn < kMaxArrows; ++it) {
        const trace::FlowRow& f = *it;
        if (double(std::min(f.fromTs, f.toTs)) > windowEnd) break;
        if (double(std::max(f.fromTs, f.toTs)) < windowStart || !wanted(f)) continue;
        const auto from = shown_->find(f.fromTrack), to = shown_->find(f.toTrack);
        if (from == shown_->end() || to == shown_->end()) continue;
        const QRect a = trackRect(from->second), b = trackRect(to->second);
        if (a.isEmpty() || b.isEmpty()) continue;
        const std::optional<FlowArrow> arrow = arrowFor(f, a, b, mapping, origin);
        if (!arrow) continue;
        painter.setBrush(Qt::NoBrush);
        painter.drawPath(arrow->path);
        QPainterPath head;
        head.addPolygon(arrow->head);
        head.closeSubpath();
        painter.fillPath(head, color);
        ++drawn;
    }
    painter.restore();
}

std::optional<TraceFlowOverlay::SliceSpan> TraceFlowOverlay::selectedSpan() const {
    if (!view_) return std::nullopt;
    const auto& selection = view_->selection();
    if (!selection) return std::nullopt;
    const auto* slices = dynamic_cast<const TraceSliceTrack*>(selection->track);
    if (!slices) return std::nullopt;
    const int64_t origin = source_->origin();
    return SliceSpan{slices->trackId(), origin + int64_t(std::floor(selection->item.start)),
                     origin + int64_t(std::ceil(selection->item.end)), selection->item.row};
}

// --- installation ------------------------------------------------------------------------------

namespace {

void appendInOrder(const trace::TraceStore& store, int64_t parent, std::vector<int64_t>& out) {
    for (const trace::TrackRow* row : store.children(parent)) {
        if (row->slices + row->instants + row->samples > 0) out.push_back(row->id);
        appendInOrder(store, row->id, out);
    }
}

}  // namespace

std::vector<int64_t> traceTracksInOrder(const trace::TraceStore& store) {
    std::vector<int64_t> out;
    appendInOrder(store, -1, out);
    return out;
}

TraceTimelineTracks makeTraceTracks(const TraceSourcePtr& source,
                                    const std::vector<int64_t>& trackIds,
                                    std::shared_ptr<const TraceHighlight> highlight) {
    TraceTimelineTracks out;
    const trace::TraceStore& store = source->store();
    const int64_t origin = source->origin();
    // The processes enclosing the previous track, outermost first: a header opens each level
    // that changes (a multi-host run has a host above each host's processes).
    std::vector<int64_t> openProcesses;
    for (int64_t id : trackIds) {
        const trace::TrackRow* row = store.track(id);
        if (!row) continue;
        std::vector<const trace::TrackRow*> chain;
        for (const trace::TrackRow* p = row->parent >= 0 ? store.track(row->parent) : nullptr; p;
             p = p->parent >= 0 ? store.track(p->parent) : nullptr)
            if (p->kind == trace::TrackKind::Process) chain.insert(chain.begin(), p);
        size_t same = 0;
        while (same < chain.size() && same < openProcesses.size() &&
               chain[same]->id == openProcesses[same])
            ++same;
        openProcesses.resize(same);
        for (size_t level = same; level < chain.size(); ++level) {
            const trace::TrackRow* process = chain[level];
            openProcesses.push_back(process->id);
            TimeRange span{std::numeric_limits<double>::max(), 0};
            for (const trace::TrackRow& t : store.tracks()) {
                if (t.slices + t.instants + t.samples == 0) continue;
                const trace::TrackRow* p = &t;
                while (p->parent >= 0 && p->id != process->id) p = store.track(p->parent);
                if (p->id != process->id) continue;
                span.start = std::min(span.start, double(t.start - origin));
                span.end = std::max(span.end, double(t.end - origin));
            }
            if (span.end < span.start) span = {0, 1};
            out.tracks.push_back(
                std::make_shared<TraceProcessHeaderTrack>(source, *process, span, int(level)));
        }
        std::shared_ptr<TimelineTrack> track;
        if (row->samples > 0 && row->slices + row->instants == 0)
            track = std::make_shared<TraceCounterTrack>(source, *row);
        else if (row->slices + row->instants > 0)
            track = std::make_shared<TraceSliceTrack>(source, *row, highlight);
        if (!track) continue;
        out.byTrackId[id] = track.get();
        out.tracks.push_back(std::move(track));
    }
    return out;
}

void setTraceTimeFormat(TimelineView& view) {
    TimeFormat format;
    format.unit.clear();  // each label carries its own unit ("12.5 µs", "3.00 ms")
    format.primary = [](double t) { return format::nanoseconds(t); };
    view.setTimeFormat(format);
}

TraceTimelineBinding::TraceTimelineBinding(TimelineView& view, TraceSourcePtr source,
                                           std::shared_ptr<const TraceHighlight> highlight)
    : view_(view),
      source_(std::move(source)),
      highlight_(std::move(highlight)),
      map_(std::make_shared<TraceFlowOverlay::TrackMap>()),
      flows_(std::make_shared<TraceFlowOverlay>(source_, map_, &view_)) {
    setTraceTimeFormat(view_);
    const trace::TraceStore& store = source_->store();
    view_.setExtent(TimeRange{0, double(std::max<int64_t>(store.end() - store.start(), 1))});
    view_.addOverlay(flows_);
    if (!source_->flowsRead()) {
        // The arrows appear once the flows are read (polled: the reader is no QObject).
        auto* poll = new QTimer(&view_);
        QObject::connect(poll, &QTimer::timeout, &view_, [poll, source = source_, view = &view_] {
            if (!source->flowsRead()) return;
            poll->deleteLater();
            poll->stop();
            view->update();
        });
        poll->start(100);
    }
}

void TraceTimelineBinding::setFlowDisplay(FlowDisplay display) {
    flows_->setDisplay(display);
    view_.update();
}

TraceTimelineBinding::~TraceTimelineBinding() {
    view_.removeOverlay(flows_.get());
}

void TraceTimelineBinding::show(const std::vector<int64_t>& trackIds) {
    const TimeRange window = view_.window();
    shownIds_ = trackIds;
    shown_ = makeTraceTracks(source_, trackIds, highlight_);
    *map_ = shown_.byTrackId;
    std::vector<std::shared_ptr<TimelineTrack>> all = leading_;
    std::unordered_map<const TimelineTrack*, int64_t> idOf;
    if (!companions_.empty())
        for (const auto& [id, track] : shown_.byTrackId) idOf.emplace(track, id);
    for (const auto& track : shown_.tracks) {
        all.push_back(track);
        const auto id = idOf.find(track.get());
        if (id == idOf.end()) continue;
        for (const auto& [under, companion] : companions_)
            if (under == id->second) all.push_back(companion);
    }
    view_.setTracks(std::move(all));
    view_.setWindow(window);
}

void TraceTimelineBinding::setLeadingTracks(std::vector<std::shared_ptr<TimelineTrack>> tracks) {
    leading_ = std::move(tracks);
    show(shownIds_);
}

void TraceTimelineBinding::setCompanionTracks(
    std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> tracks) {
    companions_ = std::move(tracks);
}

const TimelineTrack* TraceTimelineBinding::trackFor(int64_t trackId) const {
    const auto it = shown_.byTrackId.find(trackId);
    return it == shown_.byTrackId.end() ? nullptr : it->second;
}

}  // namespace stallscope
