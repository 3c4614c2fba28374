#include "views/trace/query_tracks.h"

#include <QPainter>
#include <algorithm>

#include "views/common/format.h"
#include "views/common/timeline_view.h"

namespace stallscope {

std::shared_ptr<const QueryTrackData> QueryTrackData::make(QString title,
                                                           std::vector<QueryTrackItem> items) {
    auto data = std::make_shared<QueryTrackData>();
    data->title = std::move(title);
    std::stable_sort(items.begin(), items.end(),
                     [](const QueryTrackItem& a, const QueryTrackItem& b) { return a.ts < b.ts; });
    data->items = std::move(items);
    std::vector<int64_t> rowEnds;  // per row: where its last box ends
    for (const QueryTrackItem& item : data->items) {
        int row = 0;
        while (row < int(rowEnds.size()) && rowEnds[size_t(row)] > item.ts) ++row;
        row = std::min(row, kMaxRows - 1);
        if (row >= int(rowEnds.size())) rowEnds.resize(size_t(row) + 1, INT64_MIN);
        rowEnds[size_t(row)] =
            std::max(rowEnds[size_t(row)], item.ts + std::max<int64_t>(item.dur, 1));
        data->rows.push_back(row);
    }
    data->rowCount = std::max(1, int(rowEnds.size()));
    return data;
}

QColor QueryResultTrack::colorOf(const QString& label) {
    const size_t hash = qHash(label);
    return QColor::fromHsv(int(hash % 360), 110, 215);
}

std::shared_ptr<const TrackFrame> QueryResultTrack::prepare(TimeRange window, double upp) const {
    auto frame = std::make_shared<TrackFrame>();  // paint walks the visible items directly
    frame->window = window;
    frame->unitsPerPixel = upp;
    return frame;
}

void QueryResultTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                             const TrackFrame*, const std::optional<TimelineItem>& selected) const {
    painter.save();
    painter.setClipRect(rect);
    const double from = mapping.window.start + double(origin_);
    const double to = mapping.window.end + double(origin_);
    const QFontMetrics metrics(painter.font());
    // Items start in order; one longer than the window may start before it: scan from the
    // start of the items whose end could reach the window (a bounded look-back).
    auto it = std::lower_bound(data_->items.begin(), data_->items.end(), int64_t(from),
                               [](const QueryTrackItem& i, int64_t t) { return i.ts < t; });
    it -= std::min<ptrdiff_t>(it - data_->items.begin(), 4096);
    for (; it != data_->items.end() && double(it->ts) <= to; ++it) {
        if (double(it->ts + it->dur) < from) continue;
        const size_t index = size_t(it - data_->items.begin());
        const double x0 = mapping.x(double(it->ts - origin_));
        const double x1 = std::max(mapping.x(double(it->ts + it->dur - origin_)), x0 + 1);
        const QRectF box(x0, rect.top() + 2 + data_->rows[index] * kRowHeight, x1 - x0,
                         kRowHeight - 2);
        painter.fillRect(box, colorOf(it->label));
        if (box.width() > 24) {
            painter.setPen(QColor(30, 30, 30));
            painter.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                             metrics.elidedText(it->label, Qt::ElideRight, int(box.width() - 5)));
        }
        if (selected && selected->id == int64_t(index)) {
            painter.setPen(QPen(QColor(20, 20, 20), 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(box);
        }
    }
    painter.restore();
}

std::optional<TimelineItem> QueryResultTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                      const TimeMapping& mapping,
                                                      const TrackFrame*) const {
    const int row = (pos.y() - rect.top() - 2) / kRowHeight;
    const double t = mapping.time(pos.x()) + double(origin_);
    const double slack = 2 * mapping.unitsPerPixel();
    const auto from = std::lower_bound(data_->items.begin(), data_->items.end(), int64_t(t - slack),
                                       [](const QueryTrackItem& i, int64_t x) { return i.ts < x; });
    const size_t first = size_t(from - data_->items.begin());
    for (size_t i = first - std::min<size_t>(first, 4096); i < data_->items.size(); ++i) {
        const QueryTrackItem& item = data_->items[i];
        if (double(item.ts) > t + slack) break;
        if (data_->rows[i] != row || double(item.ts + item.dur) < t - slack) continue;
        TimelineItem hit;
        hit.id = int64_t(i);
        hit.start = double(item.ts - origin_);
        hit.end = double(item.ts + item.dur - origin_);
        hit.row = row;
        return hit;
    }
    return std::nullopt;
}

QString QueryResultTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0 || size_t(item.id) >= data_->items.size()) return {};
    const QueryTrackItem& i = data_->items[size_t(item.id)];
    return QStringLiteral("<b>%1</b><br>%2")
        .arg(i.label.toHtmlEscaped(), format::nanoseconds(double(i.dur)));
}

DetailFields QueryResultTrack::details(const TimelineItem& item) const {
    DetailFields fields;
    if (item.id < 0 || size_t(item.id) >= data_->items.size()) return fields;
    const QueryTrackItem& i = data_->items[size_t(item.id)];
    fields.append({QObject::tr("Query track"), data_->title});
    fields.append({QObject::tr("Label"), i.label});
    fields.append({QObject::tr("ts"), QString::number(i.ts)});
    fields.append({QObject::tr("Duration"), format::nanoseconds(double(i.dur))});
    return fields;
}

TimeRange QueryResultTrack::extent() const {
    if (data_->items.empty()) return {};
    int64_t end = INT64_MIN;
    for (const QueryTrackItem& i : data_->items) end = std::max(end, i.ts + i.dur);
    return {double(data_->items.front().ts - origin_), double(end - origin_)};
}

std::vector<std::shared_ptr<TimelineTrack>> QueryTracksPanel::leadingTracks() const {
    std::vector<std::shared_ptr<TimelineTrack>> out;
    if (!host_.source()) return out;
    for (const auto& data : pinned_)
        out.push_back(std::make_shared<QueryResultTrack>(data, host_.source()->origin()));
    return out;
}

void QueryTracksPanel::pin(std::shared_ptr<const QueryTrackData> data) {
    pinned_.push_back(std::move(data));
    host_.panelChanged();
}

void QueryTracksPanel::unpinAll() {
    pinned_.clear();
    host_.panelChanged();
}

}  // namespace stallscope
