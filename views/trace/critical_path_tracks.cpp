#include "views/trace/critical_path_tracks.h"

#include <QPainter>
#include <algorithm>
#include <cmath>
#include <map>

#include "views/common/format.h"
#include "views/trace/trace_tracks.h"

namespace stallscope {

namespace pathview {

QColor kindColor(const std::string& kind) {
    if (kind == "host") return QColor(120, 130, 150);
    if (kind == "launch") return QColor(235, 150, 40);
    if (kind == "kernel") return QColor(60, 150, 70);
    if (kind == "copy") return QColor(60, 120, 200);
    if (kind == "collective") return QColor(150, 95, 200);
    if (kind == "input") return QColor(215, 70, 65);
    if (kind == "sync") return QColor(200, 180, 40);
    return QColor(205, 205, 205);  // idle
}

QString kindLabel(const std::string& kind) {
    if (kind == "host") return QObject::tr("Host work");
    if (kind == "launch") return QObject::tr("Launch");
    if (kind == "kernel") return QObject::tr("Kernel");
    if (kind == "copy") return QObject::tr("Copy");
    if (kind == "collective") return QObject::tr("Collective wait");
    if (kind == "input") return QObject::tr("Input");
    if (kind == "sync") return QObject::tr("Sync");
    return QObject::tr("Idle");
}

std::vector<FlatSegment> flatten(const graph::CriticalPath& path) {
    std::vector<FlatSegment> out;
    for (size_t s = 0; s < path.steps.size(); ++s)
        for (const graph::PathSegment& seg : path.steps[s].segments) out.push_back({&seg, int(s)});
    std::stable_sort(out.begin(), out.end(), [](const FlatSegment& a, const FlatSegment& b) {
        return a.segment->start < b.segment->start;
    });
    return out;
}

void outlineSelected(QPainter& painter, const TimeMapping& mapping, const TimelineItem& selected,
                     const QRectF& bar) {
    painter.setPen(QPen(QColor(20, 20, 20), 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(QPointF(mapping.x(selected.start), bar.top()),
                            QPointF(mapping.x(selected.end), bar.bottom())));
}

}  // namespace pathview

namespace {

// The first segment ending at or after `t` (store ns): segments of a path do not overlap.
std::vector<pathview::FlatSegment>::const_iterator firstEndingAfter(
    const std::vector<pathview::FlatSegment>& segments, int64_t t) {
    return std::partition_point(
        segments.begin(), segments.end(),
        [t](const pathview::FlatSegment& f) { return f.segment->start + f.segment->dur < t; });
}

// Calls `draw(segment, x0, x1)` for each visible segment, skipping those under a pixel that
// land on the column the previous one drew.
template <class Draw>
void forVisible(const std::vector<pathview::FlatSegment>& segments, int64_t origin,
                const TimeMapping& mapping, Draw&& draw) {
    const auto from = firstEndingAfter(segments, int64_t(mapping.window.start) + origin);
    double lastColumn = -1e9;
    for (auto it = from; it != segments.end(); ++it) {
        const graph::PathSegment& s = *it->segment;
        const double x0 = mapping.x(double(s.start - origin));
        if (x0 > mapping.left + mapping.width) break;
        const double x1 = mapping.x(double(s.start + s.dur - origin));
        if (x1 - x0 < 1 && std::floor(x0) == lastColumn) continue;
        lastColumn = std::floor(x0);
        draw(*it, x0, std::max(x1, x0 + 1));
    }
}

}  // namespace

CriticalPathStripTrack::CriticalPathStripTrack(CriticalPathPtr path, int64_t origin)
    : path_(std::move(path)), origin_(origin), segments_(pathview::flatten(*path_)) {}

std::shared_ptr<const TrackFrame> CriticalPathStripTrack::prepare(TimeRange window,
                                                                  double upp) const {
    // Paint walks the visible segments straight from the path (a pixel holds at most one).
    auto frame = std::make_shared<TrackFrame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    return frame;
}

void CriticalPathStripTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                                   const TrackFrame*,
                                   const std::optional<TimelineItem>& selected) const {
    painter.save();
    painter.setClipRect(rect);
    painter.setPen(Qt::NoPen);
    const QRectF bar = QRectF(rect).adjusted(0, 2, 0, -2);
    forVisible(segments_, origin_, mapping,
               [&](const pathview::FlatSegment& f, double x0, double x1) {
                   painter.fillRect(QRectF(x0, bar.top(), x1 - x0, bar.height()),
                                    pathview::kindColor(f.segment->kind));
               });
    if (selected) pathview::outlineSelected(painter, mapping, *selected, bar);
    painter.restore();
}

std::optional<TimelineItem> CriticalPathStripTrack::hitTest(const QPoint& pos, const QRect&,
                                                            const TimeMapping& mapping,
                                                            const TrackFrame*) const {
    // The segment under the cursor, or the nearest within 2 px (most are narrower than that).
    const double t = mapping.time(pos.x());
    const double slack = 2 * mapping.unitsPerPixel();
    auto it = firstEndingAfter(segments_, int64_t(t - slack) + origin_);
    if (it == segments_.end()) return std::nullopt;
    const graph::PathSegment& s = *it->segment;
    if (double(s.start - origin_) > t + slack) return std::nullopt;
    TimelineItem item;
    item.id = it - segments_.begin();
    item.start = double(s.start - origin_);
    item.end = double(s.start + s.dur - origin_);
    return item;
}

QString CriticalPathStripTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0 || size_t(item.id) >= segments_.size()) return {};
    const pathview::FlatSegment& f = segments_[size_t(item.id)];
    const graph::StepPath& step = path_->steps[size_t(f.step)];
    return QObject::tr("<b>%1</b> · %2<br>%3 (%4 of %5)")
        .arg(pathview::kindLabel(f.segment->kind),
             QString::fromStdString(f.segment->name).toHtmlEscaped(),
             format::nanoseconds(double(f.segment->dur)),
             format::percentOf(double(f.segment->dur), double(std::max<int64_t>(step.duration, 1))),
             QString::fromStdString(step.name).toHtmlEscaped());
}

DetailFields CriticalPathStripTrack::details(const TimelineItem& item) const {
    DetailFields fields;
    if (item.id < 0 || size_t(item.id) >= segments_.size()) return fields;
    const pathview::FlatSegment& f = segments_[size_t(item.id)];
    fields.append({QObject::tr("Critical path of"),
                   QString::fromStdString(path_->steps[size_t(f.step)].name)});
    fields.append({QObject::tr("Kind"), pathview::kindLabel(f.segment->kind)});
    fields.append({QObject::tr("What"), QString::fromStdString(f.segment->name)});
    fields.append({QObject::tr("Duration"), format::nanoseconds(double(f.segment->dur))});
    return fields;
}

QList<LegendEntry> CriticalPathStripTrack::legend() const {
    QList<LegendEntry> entries;
    for (const char* kind : graph::kPathKinds)
        entries.append({pathview::kindLabel(kind), pathview::kindColor(kind)});
    return entries;
}

TimeRange CriticalPathStripTrack::extent() const {
    if (segments_.empty()) return {};
    const graph::PathSegment& last = *segments_.back().segment;
    return {double(segments_.front().segment->start - origin_),
            double(last.start + last.dur - origin_)};
}

CriticalPathOverlay::CriticalPathOverlay(CriticalPathPtr path, int64_t origin,
                                         std::function<const TraceTimelineBinding*()> binding)
    : path_(std::move(path)),
      origin_(origin),
      binding_(std::move(binding)),
      segments_(pathview::flatten(*path_)) {}

void CriticalPathOverlay::paint(QPainter& painter, const QRect& dataArea,
                                const TimeMapping& mapping,
                                const std::function<QRect(const TimelineTrack*)>& trackRect) const {
    const TraceTimelineBinding* binding = binding_();
    if (!binding) return;
    painter.save();
    painter.setClipRect(dataArea);
    std::map<int64_t, QRect> rows;  // trackRect walks every track: once per track
    forVisible(segments_, origin_, mapping,
               [&](const pathview::FlatSegment& f, double x0, double x1) {
                   if (f.segment->track < 0) return;
                   auto [at, fresh] = rows.try_emplace(f.segment->track);
                   if (fresh) at->second = trackRect(binding->trackFor(f.segment->track));
                   const QRect row = at->second;
                   if (row.isEmpty()) return;
                   QColor fill = pathview::kindColor(f.segment->kind);
                   fill.setAlpha(70);
                   const QRectF box(x0, row.top() + 1, x1 - x0, row.height() - 2);
                   painter.fillRect(box, fill);
                   painter.setPen(QPen(pathview::kindColor(f.segment->kind).darker(130), 1.5));
                   painter.setBrush(Qt::NoBrush);
                   painter.drawRect(box);
               });
    painter.restore();
}

}  // namespace stallscope
