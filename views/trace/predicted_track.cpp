#include "views/trace/predicted_track.h"

#include <QPainter>
#include <algorithm>
#include <cmath>

#include "views/common/format.h"
#include "views/trace/critical_path_tracks.h"

namespace stallscope {

PredictedLaneTrack::PredictedLaneTrack(TraceSourcePtr source, PredictedLanesPtr lanes, size_t lane,
                                       QString edit)
    : source_(std::move(source)),
      lanes_(std::move(lanes)),
      lane_(lane),
      edit_(std::move(edit)),
      origin_(source_->origin()) {
    // The lane's span, once (the view asks for extents when it fits the window).
    const std::vector<graph::PredictedItem>& items = (*lanes_)[lane_].items;
    if (items.empty()) return;
    int64_t end = items.front().end;
    for (const graph::PredictedItem& i : items) end = std::max(end, i.end);
    extent_ = {double(items.front().start - origin_), double(end - origin_)};
}

QString PredictedLaneTrack::title() const {
    return QObject::tr("↳ what if (predicted)");
}

QString PredictedLaneTrack::itemName(const graph::PredictedItem& item) const {
    return item.name == graph::kNone ? pathview::kindLabel(graph::kindName(item.kind))
                                     : QString::fromStdString(source_->text(item.name));
}

std::shared_ptr<const TrackFrame> PredictedLaneTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<Frame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    const std::vector<graph::PredictedItem>& items = lane().items;
    // Items of a lane follow each other (a stream runs one at a time, a thread's tiles do not
    // overlap): those starting a longest item before the window may still reach into it.
    const int64_t from = int64_t(std::floor(window.start)) + origin_ - lane().longest;
    const int64_t to = int64_t(std::ceil(window.end)) + origin_;
    auto it =
        std::partition_point(items.begin(), items.end(),
                             [from](const graph::PredictedItem& i) { return i.start < from; });
    const double fold = kFoldPixels * upp;
    for (; it != items.end() && it->start <= to; ++it) {
        const double start = double(it->start - origin_), end = double(it->end - origin_);
        if (end < window.start) continue;
        const uint32_t index = uint32_t(it - items.begin());
        // Narrow items next to a narrow box join it (counted), so a frame holds O(pixels).
        if (!frame->boxes.empty()) {
            Frame::Box& last = frame->boxes.back();
            if (end - start < fold && last.end - last.start < fold && start - last.end < upp) {
                last.end = std::max(last.end, end);
                ++last.count;
                continue;
            }
        }
        frame->boxes.push_back({start, end, index, 1});
    }
    return frame;
}

void PredictedLaneTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                               const TrackFrame* frame,
                               const std::optional<TimelineItem>& selected) const {
    const auto* f = dynamic_cast<const Frame*>(frame);
    if (!f) return;
    painter.save();
    painter.setClipRect(rect);
    // A faint band tells the predicted lane from the measured tracks around it.
    painter.fillRect(rect, QColor(246, 244, 252));
    const QRectF bar = QRectF(rect).adjusted(0, 3, 0, -3);
    const std::vector<graph::PredictedItem>& items = lane().items;
    const QFontMetrics metrics(painter.font());
    for (const Frame::Box& box : f->boxes) {
        const double x0 = mapping.x(box.start);
        const double x1 = std::max(mapping.x(box.end), x0 + 1);
        const graph::PredictedItem& item = items[box.item];
        QColor color = pathview::kindColor(graph::kindName(item.kind));
        if (box.count > 1) color = color.darker(115);
        const QRectF r(x0, bar.top(), x1 - x0, bar.height());
        // A pixel of the band at its end keeps back-to-back items of one kind apart.
        painter.fillRect(r.width() >= 4 ? r.adjusted(0, 0, -1, 0) : r, color);
        if (box.count == 1 && r.width() > 40) {
            painter.setPen(QColor(20, 20, 20));  // as the measured slices' names
            painter.drawText(
                r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                metrics.elidedText(itemName(item), Qt::ElideRight, int(r.width()) - 5));
        }
    }
    if (selected) pathview::outlineSelected(painter, mapping, *selected, bar);
    painter.restore();
}

std::optional<TimelineItem> PredictedLaneTrack::hitTest(const QPoint& pos, const QRect&,
                                                        const TimeMapping& mapping,
                                                        const TrackFrame* frame) const {
    const auto* f = dynamic_cast<const Frame*>(frame);
    if (!f) return std::nullopt;
    const double t = mapping.time(pos.x()), slack = 2 * mapping.unitsPerPixel();
    for (const Frame::Box& box : f->boxes) {
        if (box.start > t + slack) break;
        if (box.end < t - slack) continue;
        TimelineItem item;
        item.id = box.count == 1 ? int64_t(box.item) : -1;
        item.start = box.start;
        item.end = box.end;
        item.count = box.count;
        return item;
    }
    return std::nullopt;
}

QString PredictedLaneTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0) return QObject::tr("%1 items re-simulated (zoom in)").arg(item.count);
    const graph::PredictedItem& i = lane().items[size_t(item.id)];
    const int64_t moved = i.start - i.measuredStart;
    return QObject::tr(
               "<b>%1</b> · %2, predicted<br>%3 (measured %4)<br>starts %5 %6 than "
               "measured<br><i>what if %7</i>")
        .arg(itemName(i).toHtmlEscaped(), pathview::kindLabel(graph::kindName(i.kind)),
             format::nanoseconds(double(i.end - i.start)),
             format::nanoseconds(double(i.measuredEnd - i.measuredStart)),
             format::nanoseconds(double(std::abs(moved))),
             moved <= 0 ? QObject::tr("earlier") : QObject::tr("later"), edit_.toHtmlEscaped());
}

DetailFields PredictedLaneTrack::details(const TimelineItem& item) const {
    if (item.id < 0) return {{QObject::tr("Items"), QString::number(item.count)}};
    const graph::PredictedItem& i = lane().items[size_t(item.id)];
    return {
        {QObject::tr("Name"), itemName(i)},
        {QObject::tr("Kind"), pathview::kindLabel(graph::kindName(i.kind))},
        {QObject::tr("What if"), edit_},
        {QObject::tr("Predicted"), format::nanoseconds(double(i.end - i.start))},
        {QObject::tr("Measured"), format::nanoseconds(double(i.measuredEnd - i.measuredStart))},
        {QObject::tr("Start moved by"), format::nanoseconds(double(i.start - i.measuredStart))}};
}

QList<LegendEntry> PredictedLaneTrack::legend() const {
    return {{QObject::tr("Predicted (what if)"), QColor(246, 244, 252)}};
}

TimeRange PredictedLaneTrack::extent() const {
    return extent_;
}

}  // namespace stallscope
