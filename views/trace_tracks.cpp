#include "trace_tracks.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "timeline_view.h"

namespace stallscope {

TraceSource::TraceSource(std::string workspacePath, int64_t profileId)
    : workspacePath_(std::move(workspacePath)), profileId_(profileId) {
    primaryConnection_ = open();
    primary_ = primaryConnection_->store.get();
    flows_ = primary_->flows();
}

TraceSource::~TraceSource() = default;

std::unique_ptr<TraceSource::Connection> TraceSource::open() const {
    auto c = std::make_unique<Connection>();
    c->workspace = Workspace::open(workspacePath_, Workspace::Mode::ReadOnly);
    c->store = std::make_unique<trace::TraceStore>(*c->workspace, profileId_);
    return c;
}

TraceSource::Lease::Lease(const TraceSource& s) : source(s) {
    {
        std::lock_guard lock(s.poolMutex_);
        if (!s.pool_.empty()) {
            connection = std::move(s.pool_.back());
            s.pool_.pop_back();
        }
    }
    if (!connection) connection = s.open();
    store = connection->store.get();
}

TraceSource::Lease::~Lease() {
    std::lock_guard lock(source.poolMutex_);
    source.pool_.push_back(std::move(connection));
}

QColor traceNameColor(const std::string& name) {
    uint32_t hash = 2166136261u;
    for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
    // Hue from the hash; saturation and lightness vary a little so neighbours differ.
    const int hue = int(hash % 360);
    const int saturation = 110 + int((hash >> 9) % 60);
    const int lightness = 150 + int((hash >> 17) % 40);
    return QColor::fromHsl(hue, saturation, lightness);
}

QString formatNanoseconds(double ns) {
    const double a = std::abs(ns);
    if (a >= 1e9) return QString::number(ns / 1e9, 'f', 3) + " s";
    if (a >= 1e6) return QString::number(ns / 1e6, 'f', a >= 1e8 ? 1 : 2) + " ms";
    if (a >= 1e3) return QString::number(ns / 1e3, 'f', a >= 1e5 ? 1 : 2) + " µs";
    return QString::number(ns, 'f', 0) + " ns";
}

namespace {

QString trackTitle(const trace::TrackRow& row) {
    if (!row.name.empty()) return QString::fromStdString(row.name);
    return QString::fromStdString(row.tid.empty() ? row.pid : row.tid);
}

TimeRange relativeExtent(const trace::TrackRow& row, int64_t origin) {
    return {double(row.start - origin), double(std::max(row.end, row.start + 1) - origin)};
}

// Light text on dark fills, dark text on light ones.
QColor textOn(const QColor& fill) {
    return fill.lightness() > 140 ? QColor(20, 20, 20) : QColor(250, 250, 250);
}

}  // namespace

// Folds runs of slices narrower than `minSpan` at one depth (and starting within `minSpan` of
// the run's start, as foldRow does) into counted items, so a frame holds O(pixels) items even where
// the store had no coarser level (small tracks keep only level 0). Keeps the start order.
static void foldNarrow(std::vector<trace::SliceItem>& items, double minSpan) {
    std::vector<trace::SliceItem> out;
    out.reserve(items.size());
    std::vector<long> openRun;  // per depth: index in `out` of the run being folded, -1 none
    for (const trace::SliceItem& s : items) {
        if (s.depth >= openRun.size()) openRun.resize(s.depth + 1, -1);
        long& run = openRun[s.depth];
        const bool narrow = s.kind != trace::ItemKind::Instant && double(s.dur) < minSpan;
        if (!narrow) {
            run = -1;
            out.push_back(s);
            continue;
        }
        if (run >= 0 && double(s.start) < double(out[size_t(run)].start) + minSpan) {
            trace::SliceItem& folded = out[size_t(run)];
            folded.dur = std::max(folded.end(), s.end()) - folded.start;
            folded.count += s.count;
            folded.kind = trace::ItemKind::Folded;
            folded.args = 0;
            continue;
        }
        run = long(out.size());
        out.push_back(s);
    }
    // A lone narrow slice stays a slice; runs of several became Folded above.
    items = std::move(out);
}

// --- slices ------------------------------------------------------------------------------------

TraceSliceTrack::TraceSliceTrack(TraceSourcePtr source, const trace::TrackRow& row,
                                 std::shared_ptr<const TraceHighlight> highlight)
    : source_(std::move(source)),
      trackId_(row.id),
      depthRows_(int(row.maxDepth) + 1),
      title_(trackTitle(row)),
      extent_(relativeExtent(row, source_->origin())),
      highlight_(std::move(highlight)) {}

int TraceSliceTrack::height() const {
    return 2 * kPadding + depthRows_ * kRowHeight;
}

std::shared_ptr<const TrackFrame> TraceSliceTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<Frame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    const int64_t origin = source_->origin();
    frame->items = source_->query([&](const trace::TraceStore& store) {
        return store.slices(trackId_, origin + int64_t(std::floor(window.start)),
                            origin + int64_t(std::ceil(window.end)), upp);
    });
    for (trace::SliceItem& item : frame->items) item.start -= origin;
    foldNarrow(frame->items, upp * kFoldPixels);
    return frame;
}

TimelineItem TraceSliceTrack::itemOf(const trace::SliceItem& s) {
    TimelineItem item;
    item.id = s.kind == trace::ItemKind::Folded ? -1 : int64_t(s.name);
    item.start = double(s.start);
    item.end = double(s.end());
    item.count = int64_t(s.count);
    item.row = int(s.depth);
    return item;
}

void TraceSliceTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                            const TrackFrame* baseFrame,
                            const std::optional<TimelineItem>& selected) const {
    const auto* frame = dynamic_cast<const Frame*>(baseFrame);
    if (!frame) return;
    painter.save();
    painter.setClipRect(rect);
    const QFontMetrics metrics(painter.font());
    const double left = rect.left(), right = rect.right() + 1;
    const std::string& highlighted = highlight_ ? highlight_->name : std::string();
    for (const trace::SliceItem& s : frame->items) {
        const int y = rect.top() + kPadding + int(s.depth) * kRowHeight;
        const double x0 = mapping.x(double(s.start));
        if (s.kind == trace::ItemKind::Instant) {
            if (x0 < left - 5 || x0 > right + 5) continue;
            const QColor color = traceNameColor(source_->text(s.name)).darker(140);
            QPainterPath marker;
            marker.moveTo(x0, y + 2);
            marker.lineTo(x0 + 4, y + kRowHeight / 2.0);
            marker.lineTo(x0, y + kRowHeight - 2);
            marker.lineTo(x0 - 4, y + kRowHeight / 2.0);
            marker.closeSubpath();
            painter.fillPath(marker, color);
            continue;
        }
        double x1 = std::max(mapping.x(double(s.end())), x0 + 1.0);
        const double cx0 = std::max(x0, left - 1), cx1 = std::min(x1, right + 1);
        if (cx1 < cx0) continue;
        const QRectF box(cx0, y + 1, cx1 - cx0, kRowHeight - 2);
        if (s.kind == trace::ItemKind::Folded) {
            // Many slices too narrow to draw: one grey counted block.
            painter.fillRect(box, QColor(150, 150, 160));
            painter.fillRect(box, QBrush(QColor(110, 110, 120), Qt::BDiagPattern));
            const QString label = QStringLiteral("×%1").arg(s.count);
            if (box.width() > metrics.horizontalAdvance(label) + 6) {
                painter.setPen(QColor(30, 30, 30));
                painter.drawText(box, Qt::AlignCenter, label);
            }
            continue;
        }
        const std::string& name = source_->text(s.name);
        QColor fill = traceNameColor(name);
        if (!highlighted.empty() && name != highlighted)
            fill = QColor::fromHsl(fill.hslHue(), 20, 225);
        painter.fillRect(box, fill);
        if (box.width() >= 4) {
            painter.setPen(fill.darker(130));
            painter.drawRect(box.adjusted(0, 0, -1, -1));
        }
        if (box.width() > 24) {
            const QString label = metrics.elidedText(QString::fromStdString(name), Qt::ElideRight,
                                                     int(box.width()) - 6);
            painter.setPen(textOn(fill));
            painter.drawText(box.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
        }
    }
    if (selected) {
        const double x0 = mapping.x(selected->start);
        const double x1 = std::max(mapping.x(selected->end), x0 + 1.0);
        const int y = rect.top() + kPadding + selected->row * kRowHeight;
        painter.setPen(QPen(QColor(0, 0, 0), 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(x0, y, x1 - x0, kRowHeight));
    }
    painter.restore();
}

std::optional<TimelineItem> TraceSliceTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                     const TimeMapping& mapping,
                                                     const TrackFrame* baseFrame) const {
    const auto* frame = dynamic_cast<const Frame*>(baseFrame);
    if (!frame || !rect.contains(pos)) return std::nullopt;
    const int rowY = pos.y() - rect.top() - kPadding;
    if (rowY < 0) return std::nullopt;
    const auto depth = uint32_t(rowY / kRowHeight);
    const double x = pos.x();
    const trace::SliceItem* best = nullptr;
    for (const trace::SliceItem& s : frame->items) {
        if (s.depth != depth) continue;
        const double x0 = mapping.x(double(s.start));
        // Instants and one-pixel slices get a little slack so they stay clickable.
        const double x1 = std::max(mapping.x(double(s.end())), x0 + 1.0);
        const double slack = s.kind == trace::ItemKind::Instant ? 4.0 : 0.5;
        if (x >= x0 - slack && x <= x1 + slack) best = &s;  // the last (topmost) drawn wins
    }
    if (!best) return std::nullopt;
    // A shared copy of the frame lets toolTip()/details() describe what was hit.
    lastHitFrame_ = std::make_shared<Frame>(*frame);
    return itemOf(*best);
}

uint64_t TraceSliceTrack::argsOf(const TimelineItem& item) const {
    if (!lastHitFrame_) return 0;
    for (const trace::SliceItem& s : lastHitFrame_->items)
        if (itemOf(s) == item) return s.args;
    return 0;
}

QString TraceSliceTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0)
        return QStringLiteral("%1 slices folded (%2)")
            .arg(item.count)
            .arg(formatNanoseconds(item.end - item.start));
    return QStringLiteral("%1\n%2 at %3")
        .arg(QString::fromStdString(source_->text(uint32_t(item.id))),
             formatNanoseconds(item.end - item.start), formatNanoseconds(item.start));
}

DetailFields TraceSliceTrack::details(const TimelineItem& item) const {
    DetailFields fields;
    if (item.id < 0) {
        fields.append({"Folded slices", QString::number(item.count)});
    } else {
        fields.append({"Name", QString::fromStdString(source_->text(uint32_t(item.id)))});
    }
    fields.append({"Track", title_});
    fields.append({"Start", formatNanoseconds(item.start)});
    fields.append({"Duration", formatNanoseconds(item.end - item.start)});
    fields.append({"Depth", QString::number(item.row)});
    return fields;
}

// --- counters ----------------------------------------------------------------------------------

TraceCounterTrack::TraceCounterTrack(TraceSourcePtr source, const trace::TrackRow& row)
    : source_(std::move(source)),
      trackId_(row.id),
      title_(trackTitle(row)),
      extent_(relativeExtent(row, source_->origin())),
      color_(traceNameColor(row.name).darker(115)) {}

std::shared_ptr<const TrackFrame> TraceCounterTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<Frame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    const int64_t origin = source_->origin();
    frame->items = source_->query([&](const trace::TraceStore& store) {
        return store.counters(trackId_, origin + int64_t(std::floor(window.start)),
                              origin + int64_t(std::ceil(window.end)), upp);
    });
    double low = 0, high = 0;
    for (trace::CounterItem& item : frame->items) {
        item.ts -= origin;
        low = std::min({low, item.min, item.value});
        high = std::max({high, item.max, item.value});
    }
    frame->low = low;
    frame->high = high > low ? high : low + 1;
    return frame;
}

void TraceCounterTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                              const TrackFrame* baseFrame,
                              const std::optional<TimelineItem>& selected) const {
    const auto* frame = dynamic_cast<const Frame*>(baseFrame);
    if (!frame || frame->items.empty()) return;
    painter.save();
    painter.setClipRect(rect);
    const double top = rect.top() + 4, bottom = rect.bottom() - 2;
    auto yOf = [&](double v) {
        return bottom - (v - frame->low) / (frame->high - frame->low) * (bottom - top);
    };
    // A step function: each sample holds until the next one.
    QPainterPath area;
    const double zeroY = yOf(std::clamp(0.0, frame->low, frame->high));
    const double endX = rect.right() + 1;
    area.moveTo(std::max(mapping.x(double(frame->items.front().ts)), double(rect.left())), zeroY);
    for (size_t i = 0; i < frame->items.size(); ++i) {
        const trace::CounterItem& c = frame->items[i];
        const double x0 = std::max(mapping.x(double(c.ts)), double(rect.left()) - 1);
        const double x1 = i + 1 < frame->items.size()
                              ? std::min(mapping.x(double(frame->items[i + 1].ts)), endX + 1)
                              : std::min(mapping.x(extent_.end), endX + 1);
        const double y = yOf(c.value);
        area.lineTo(x0, y);
        area.lineTo(std::max(x1, x0), y);
        if (c.count > 1 && c.max > c.min) {
            // A bucket of samples: its range as a thin bar.
            painter.fillRect(
                QRectF(x0, yOf(c.max), std::max(1.0, x1 - x0), yOf(c.min) - yOf(c.max)),
                color_.lighter(130));
        }
    }
    area.lineTo(area.currentPosition().x(), zeroY);
    area.closeSubpath();
    QColor fill = color_;
    fill.setAlpha(170);
    painter.fillPath(area, fill);
    painter.setPen(color_.darker(140));
    painter.drawText(rect.adjusted(4, 2, -4, 0), Qt::AlignTop | Qt::AlignRight,
                     QString::number(frame->high, 'g', 4));
    if (selected) {
        painter.setPen(QPen(QColor(0, 0, 0), 2));
        const double x = mapping.x(selected->start);
        painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()));
    }
    painter.restore();
}

std::optional<TimelineItem> TraceCounterTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                       const TimeMapping& mapping,
                                                       const TrackFrame* baseFrame) const {
    const auto* frame = dynamic_cast<const Frame*>(baseFrame);
    if (!frame || !rect.contains(pos) || frame->items.empty()) return std::nullopt;
    const double t = mapping.time(pos.x());
    auto it =
        std::upper_bound(frame->items.begin(), frame->items.end(), t,
                         [](double v, const trace::CounterItem& c) { return v < double(c.ts); });
    if (it == frame->items.begin()) return std::nullopt;
    const trace::CounterItem& c = *(it - 1);
    TimelineItem item;
    item.id = c.ts;
    item.start = double(c.ts);
    item.end = it != frame->items.end() ? double(it->ts) : extent_.end;
    item.count = int64_t(c.count);
    lastHit_.clear();
    lastHit_[item.start] = c;
    return item;
}

QString TraceCounterTrack::toolTip(const TimelineItem& item) const {
    const auto it = lastHit_.find(item.start);
    if (it == lastHit_.end()) return title_;
    return QStringLiteral("%1 = %2 at %3")
        .arg(title_, QString::number(it->second.value, 'g', 6), formatNanoseconds(item.start));
}

DetailFields TraceCounterTrack::details(const TimelineItem& item) const {
    DetailFields fields{{"Counter", title_}, {"Time", formatNanoseconds(item.start)}};
    const auto it = lastHit_.find(item.start);
    if (it != lastHit_.end()) {
        fields.append({"Value", QString::number(it->second.value, 'g', 8)});
        if (it->second.count > 1) {
            fields.append({"Samples", QString::number(it->second.count)});
            fields.append({"Min", QString::number(it->second.min, 'g', 8)});
            fields.append({"Max", QString::number(it->second.max, 'g', 8)});
        }
    }
    return fields;
}

// --- flows -------------------------------------------------------------------------------------

TraceFlowOverlay::TraceFlowOverlay(TraceSourcePtr source, std::shared_ptr<const TrackMap> shown)
    : source_(std::move(source)), shown_(std::move(shown)), byStart_(source_->flows()) {
    std::sort(byStart_.begin(), byStart_.end(),
              [](const trace::FlowRow& a, const trace::FlowRow& b) {
                  return std::min(a.fromTs, a.toTs) < std::min(b.fromTs, b.toTs);
              });
    for (const trace::FlowRow& f : byStart_)
        longest_ = std::max(longest_, std::abs(f.toTs - f.fromTs));
}

void TraceFlowOverlay::paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
                             const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    if (byStart_.empty()) return;
    constexpr int kMaxArrows = 4000;  // beyond this arrows are noise; zoom in to see them
    const int64_t origin = source_->origin();
    const double windowStart = mapping.window.start + double(origin);
    const double windowEnd = mapping.window.end + double(origin);
    auto it = std::lower_bound(
        byStart_.begin(), byStart_.end(), windowStart - double(longest_),
        [](const trace::FlowRow& f, double t) { return double(std::min(f.fromTs, f.toTs)) < t; });
    painter.save();
    painter.setClipRect(dataArea);
    painter.setRenderHint(QPainter::Antialiasing, true);
    const QColor color(40, 70, 160, 200);
    painter.setPen(QPen(color, 1.3));
    int drawn = 0;
    for (; it != byStart_.end() && drawn < kMaxArrows; ++it) {
        const trace::FlowRow& f = *it;
        if (double(std::min(f.fromTs, f.toTs)) > windowEnd) break;
        if (double(std::max(f.fromTs, f.toTs)) < windowStart) continue;
        const auto from = shown_->find(f.fromTrack), to = shown_->find(f.toTrack);
        if (from == shown_->end() || to == shown_->end()) continue;
        const QRect a = trackRect(from->second), b = trackRect(to->second);
        if (a.isEmpty() || b.isEmpty()) continue;
        const QPointF p0(mapping.x(double(f.fromTs - origin)),
                         a.top() + TraceSliceTrack::rowCenter(std::max(0, f.fromDepth)));
        const QPointF p1(mapping.x(double(f.toTs - origin)),
                         b.top() + TraceSliceTrack::rowCenter(std::max(0, f.toDepth)));
        QPainterPath path(p0);
        const double bend = std::max(12.0, std::abs(p1.x() - p0.x()) * 0.4);
        path.cubicTo(p0 + QPointF(bend, 0), p1 - QPointF(bend, 0), p1);
        painter.setBrush(Qt::NoBrush);
        painter.drawPath(path);
        // Arrow head pointing right, into the target.
        QPainterPath head(p1);
        head.lineTo(p1 + QPointF(-7, -4));
        head.lineTo(p1 + QPointF(-7, 4));
        head.closeSubpath();
        painter.fillPath(head, color);
        ++drawn;
    }
    painter.restore();
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
    for (int64_t id : trackIds) {
        const trace::TrackRow* row = source->store().track(id);
        if (!row) continue;
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
    format.unit = QStringLiteral("ns");
    format.primary = [](double t) { return formatNanoseconds(t); };
    view.setTimeFormat(format);
}

TraceTimelineBinding::TraceTimelineBinding(TimelineView& view, TraceSourcePtr source,
                                           std::shared_ptr<const TraceHighlight> highlight)
    : view_(view),
      source_(std::move(source)),
      highlight_(std::move(highlight)),
      map_(std::make_shared<TraceFlowOverlay::TrackMap>()) {
    setTraceTimeFormat(view_);
    const trace::TraceStore& store = source_->store();
    view_.setExtent(TimeRange{0, double(std::max<int64_t>(store.end() - store.start(), 1))});
    view_.addOverlay(std::make_shared<TraceFlowOverlay>(source_, map_));
}

void TraceTimelineBinding::show(const std::vector<int64_t>& trackIds) {
    const TimeRange window = view_.window();
    view_.clearTracks();
    shown_ = makeTraceTracks(source_, trackIds, highlight_);
    *map_ = shown_.byTrackId;
    for (const auto& track : shown_.tracks) view_.addTrack(track);
    view_.setWindow(window);
}

const TimelineTrack* TraceTimelineBinding::trackFor(int64_t trackId) const {
    const auto it = shown_.byTrackId.find(trackId);
    return it == shown_.byTrackId.end() ? nullptr : it->second;
}

}  // namespace stallscope
