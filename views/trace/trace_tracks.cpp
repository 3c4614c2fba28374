#include "views/trace/trace_tracks.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPainter>
#include <QPainterPath>
#include <QStaticText>
#include <QTimeZone>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/sqlite.h"
#include "views/common/format.h"
#include "views/common/timeline_view.h"

namespace stallscope {

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

// --- process headers ---------------------------------------------------------------------------

TraceProcessHeaderTrack::TraceProcessHeaderTrack(TraceSourcePtr source, const trace::TrackRow& row,
                                                 TimeRange extent, int level)
    : source_(std::move(source)),
      trackId_(row.id),
      title_(trackTitle(row)),
      extent_(extent),
      level_(level) {
    const QString device = source_->deviceType(row);
    if (!device.isEmpty()) title_ += QStringLiteral("  ·  ") + device;
}

std::shared_ptr<const TrackFrame> TraceProcessHeaderTrack::prepare(TimeRange window,
                                                                   double upp) const {
    auto frame = std::make_shared<TrackFrame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    return frame;
}

void TraceProcessHeaderTrack::paint(QPainter& painter, const QRect& rect,
                                    const TimeMapping& mapping, const TrackFrame*,
                                    const std::optional<TimelineItem>& selected) const {
    // The view draws the band and the title; a thin bar marks the process's time span.
    const double x0 = std::max(mapping.x(extent_.start), double(rect.left()));
    const double x1 = std::min(mapping.x(extent_.end), double(rect.right() + 1));
    if (x1 > x0)
        painter.fillRect(QRectF(x0, rect.bottom() - 2, x1 - x0, 2),
                         selected ? QColor(30, 30, 30) : QColor(120, 120, 140));
}

std::optional<TimelineItem> TraceProcessHeaderTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                             const TimeMapping&,
                                                             const TrackFrame*) const {
    if (!rect.contains(pos)) return std::nullopt;
    TimelineItem item;
    item.id = trackId_;
    item.start = extent_.start;
    item.end = extent_.end;
    return item;
}

QString TraceProcessHeaderTrack::toolTip(const TimelineItem&) const {
    return title_;
}

DetailFields TraceProcessHeaderTrack::details(const TimelineItem&) const {
    const trace::TrackRow* row = source_->store().track(trackId_);
    return row ? source_->processDetails(*row) : DetailFields{{"Process", title_}};
}

// --- slices ------------------------------------------------------------------------------------

namespace {
// Tracks inside a process are indented under its header.
int indentOf(const trace::TrackRow& row) {
    return row.parent >= 0 ? 12 : 0;
}
// Exact (ps) start and end of a slice in ns relative to the origin already subtracted.
double exactStart(const trace::SliceItem& s) {
    return double(s.start) + s.startPs * 1e-3;
}
double exactEnd(const trace::SliceItem& s) {
    return exactStart(s) + s.durNs();
}
// Marks slices whose end the trace never recorded.
const QColor kUnendedColor(200, 30, 30);

// An absolute time in ns as the trace gave it; times after 2001 read as epoch times also show
// as a UTC date (Kineto's and Perfetto's clocks).
QString absoluteTime(int64_t ns) {
    QString text = QString::number(ns) + QStringLiteral(" ns");
    if (ns >= 1'000'000'000'000'000'000LL) {
        const QDateTime when = QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, QTimeZone::utc());
        text += QStringLiteral(" (%1.%2 UTC)")
                    .arg(when.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
                    .arg(ns % 1'000'000'000, 9, 10, QLatin1Char('0'));
    }
    return text;
}
}  // namespace

TraceSliceTrack::TraceSliceTrack(TraceSourcePtr source, const trace::TrackRow& row,
                                 std::shared_ptr<const TraceHighlight> highlight)
    : source_(std::move(source)),
      trackId_(row.id),
      depthRows_(int(row.maxDepth) + 1),
      title_(trackTitle(row)),
      extent_(relativeExtent(row, source_->origin())),
      indent_(indentOf(row)),
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
    item.start = exactStart(s);
    item.end = s.kind == trace::ItemKind::Folded ? double(s.end()) : exactEnd(s);
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
    // Counted labels are sized from the digit width (no text shaping per folded block), and a
    // box already covered at its depth by an earlier opaque one is not painted again: paint time
    // stays flat at any zoom.
    const double digit = metrics.horizontalAdvance(QLatin1Char('0'));
    const double times = metrics.horizontalAdvance(QChar(0x00d7));
    std::vector<double> covered(size_t(depthRows_) + 1, -1e300);
    // Narrow boxes (no outline, no label) are snapped to whole pixels and filled after the rest
    // (integer solid fills are the raster engine's fastest path).
    std::unordered_map<QRgb, std::vector<QRect>> narrow;
    std::vector<const trace::SliceItem*> instants, unended;
    auto fillBox = [&](const QRectF& box, const QColor& color) {
        if (box.width() < 8)  // a pixel of gap instead of an outline keeps neighbours apart
            narrow[color.rgba()].push_back(
                box.toAlignedRect().adjusted(0, 0, box.width() >= 4 ? -1 : 0, 0));
        else
            painter.fillRect(box, color);
    };
    for (const trace::SliceItem& s : frame->items) {
        const int y = rect.top() + kPadding + int(s.depth) * kRowHeight;
        const double x0 = mapping.x(exactStart(s));
        if (s.kind == trace::ItemKind::Instant) {
            if (x0 < left - 5 || x0 > right + 5) continue;
            instants.push_back(&s);  // drawn over the boxes, below
            continue;
        }
        // Zero-length and sub-pixel slices stay visible.
        const double x1 =
            std::max(mapping.x(s.kind == trace::ItemKind::Folded ? double(s.end()) : exactEnd(s)),
                     x0 + kMinSliceWidth);
        const double cx0 = std::max(x0, left - 1), cx1 = std::min(x1, right + 1);
        if (cx1 < cx0) continue;
        const size_t row = std::min<size_t>(s.depth, covered.size() - 1);
        if (cx1 <= covered[row] && cx1 - cx0 < 2 * kMinSliceWidth) continue;
        covered[row] = std::max(covered[row], std::floor(cx1));
        const QRectF box(cx0, y + 1, cx1 - cx0, kRowHeight - 2);
        if (s.kind == trace::ItemKind::Folded) {
            // Many slices too narrow to draw: one grey counted block, hatched when wide enough
            // to show it.
            fillBox(box, QColor(150, 150, 160));
            if (box.width() >= 8)
                painter.fillRect(box, QBrush(QColor(110, 110, 120), Qt::BDiagPattern));
            const int digits =
                int(std::floor(std::log10(double(std::max<uint64_t>(s.count, 1))))) + 1;
            if (box.width() > times + digits * digit + 6) {
                painter.setPen(QColor(30, 30, 30));
                painter.drawText(box, Qt::AlignCenter, QStringLiteral("×%1").arg(s.count));
            }
            continue;
        }
        const std::string& name = source_->text(s.name);
        QColor fill = traceNameColor(name);
        if (highlight_ && highlight_->dims(name)) fill = QColor::fromHsl(fill.hslHue(), 20, 225);
        fillBox(box, fill);
        if (box.width() >= 8) {  // outlines separate neighbours; narrower boxes are ticks
            painter.setPen(fill.darker(130));
            painter.drawRect(box.adjusted(0, 0, -1, -1));
        }
        if (s.unended) unended.push_back(&s);
        if (box.width() > 24) {
            // Labels are laid out once per (name, width in 8 px steps) and reused.
            const int bucket = std::min(int(box.width() - 6) / 8, 0xffff);
            const uint64_t key = (uint64_t(s.name) << 16) | uint64_t(bucket);
            auto label = labels_.find(key);
            if (label == labels_.end()) {
                if (labels_.size() > 8192) labels_.clear();
                QStaticText text(
                    metrics.elidedText(QString::fromStdString(name), Qt::ElideRight, bucket * 8));
                text.setTextFormat(Qt::PlainText);
                text.prepare(QTransform(), painter.font());
                label = labels_.emplace(key, std::move(text)).first;
            }
            painter.setPen(textOn(fill));
            painter.drawStaticText(
                QPointF(box.left() + 3,
                        box.top() + (box.height() - label->second.size().height()) / 2),
                label->second);
        }
    }
    for (const auto& [rgba, boxes] : narrow) {
        const QColor color = QColor::fromRgba(rgba);
        for (const QRect& box : boxes) painter.fillRect(box, color);
    }
    // Slices that never ended run to the end of the trace: a dashed red outline and an open
    // arrow at their (unknown) end say so.
    for (const trace::SliceItem* s : unended) {
        const int y = rect.top() + kPadding + int(s->depth) * kRowHeight;
        const double x0 = std::max(mapping.x(exactStart(*s)), left - 1);
        const double x1 =
            std::min(std::max(mapping.x(exactEnd(*s)), x0 + kMinSliceWidth), right + 1);
        painter.setPen(QPen(kUnendedColor, 1.5, Qt::DashLine));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(x0, y + 1, x1 - x0, kRowHeight - 3));
        if (x1 - 10 > x0) {
            QPainterPath arrow;
            const double mid = y + kRowHeight / 2.0;
            arrow.moveTo(x1 - 9, mid - 5);
            arrow.lineTo(x1 - 2, mid);
            arrow.lineTo(x1 - 9, mid + 5);
            arrow.closeSubpath();
            painter.fillPath(arrow, kUnendedColor);
        }
        const QString note = QStringLiteral("did not end");
        const double noteWidth = metrics.horizontalAdvance(note) + 6;
        if (x1 - x0 > 3 * noteWidth) {
            const QRectF noteBox(x1 - 12 - noteWidth, y + 2, noteWidth, kRowHeight - 4);
            painter.fillRect(noteBox, QColor(255, 255, 255, 220));
            painter.setPen(kUnendedColor);
            painter.drawText(noteBox, Qt::AlignCenter, note);
        }
    }
    for (const trace::SliceItem* s : instants) {
        const double x0 = mapping.x(exactStart(*s));
        const int y = rect.top() + kPadding + int(s->depth) * kRowHeight;
        QPainterPath marker;
        marker.moveTo(x0, y + 2);
        marker.lineTo(x0 + 4, y + kRowHeight / 2.0);
        marker.lineTo(x0, y + kRowHeight - 2);
        marker.lineTo(x0 - 4, y + kRowHeight / 2.0);
        marker.closeSubpath();
        painter.fillPath(marker, traceNameColor(source_->text(s->name)).darker(140));
    }
    if (selected) {
        const double x0 = mapping.x(selected->start);
        const double x1 = std::max(mapping.x(selected->end), x0 + kMinSliceWidth);
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
        const double x0 = mapping.x(exactStart(s));
        // Instants and narrow slices get a little slack so they stay clickable.
        const double x1 =
            std::max(mapping.x(s.kind == trace::ItemKind::Folded ? double(s.end()) : exactEnd(s)),
                     x0 + (s.kind == trace::ItemKind::Folded ? 1.0 : kMinSliceWidth));
        const double slack = s.kind == trace::ItemKind::Instant ? 4.0 : 0.5;
        if (x >= x0 - slack && x <= x1 + slack) best = &s;  // the last (topmost) drawn wins
    }
    if (!best) return std::nullopt;
    // A shared copy of the frame lets toolTip()/details() describe what was hit.
    lastHitFrame_ = std::make_shared<Frame>(*frame);
    return itemOf(*best);
}

void TraceSliceTrack::noteSelected(const trace::SliceItem& slice) const {
    auto frame = std::make_shared<Frame>();
    frame->items.push_back(slice);
    lastHitFrame_ = std::move(frame);
}

uint64_t TraceSliceTrack::argsOf(const TimelineItem& item) const {
    if (!lastHitFrame_) return 0;
    for (const trace::SliceItem& s : lastHitFrame_->items)
        if (itemOf(s) == item) return s.args;
    return 0;
}

const trace::SliceItem* TraceSliceTrack::hitSlice(const TimelineItem& item) const {
    if (!lastHitFrame_) return nullptr;
    for (const trace::SliceItem& s : lastHitFrame_->items)
        if (itemOf(s) == item) return &s;
    return nullptr;
}

QString TraceSliceTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0)
        return QStringLiteral("%1 slices folded (%2)")
            .arg(item.count)
            .arg(format::nanoseconds(item.end - item.start));
    const QString name = QString::fromStdString(source_->text(uint32_t(item.id)));
    const trace::SliceItem* slice = hitSlice(item);
    if (slice && slice->unended)
        return QStringLiteral(
                   "%1\nDid not end: began at %2, still open at the end of the trace "
                   "(%3 later); not counted in op statistics")
            .arg(name, format::nanoseconds(item.start), format::nanoseconds(item.end - item.start));
    return QStringLiteral("%1\n%2 at %3")
        .arg(name, format::nanoseconds(item.end - item.start), format::nanoseconds(item.start));
}

DetailFields TraceSliceTrack::details(const TimelineItem& item) const {
    DetailFields fields;
    if (item.id < 0) {
        fields.append({"Folded slices", QString::number(item.count)});
    } else {
        fields.append({"Name", QString::fromStdString(source_->text(uint32_t(item.id)))});
    }
    fields.append({"Track", title_});
    fields.append({"Start", format::nanoseconds(item.start)});
    const trace::SliceItem* slice = item.id >= 0 ? hitSlice(item) : nullptr;
    if (slice && slice->unended) {
        fields.append({"Duration", QStringLiteral("did not end (at least %1, to the end of the "
                                                  "trace)")
                                       .arg(format::nanoseconds(item.end - item.start))});
    } else {
        fields.append({"Duration", format::nanoseconds(item.end - item.start)});
    }
    fields.append({"Depth", QString::number(item.row)});
    // Views show times from the profile's start; the trace's own clock is kept here.
    fields.append(
        {"Absolute start", absoluteTime(source_->origin() + int64_t(std::floor(item.start)))});
    return fields;
}

// --- counters ----------------------------------------------------------------------------------

TraceCounterTrack::TraceCounterTrack(TraceSourcePtr source, const trace::TrackRow& row)
    : source_(std::move(source)),
      trackId_(row.id),
      title_(trackTitle(row)),
      extent_(relativeExtent(row, source_->origin())),
      indent_(indentOf(row)),
      color_(traceNameColor(row.name).darker(115)),
      unit_(format::counterUnit(QString::fromStdString(row.name))) {}

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
    // A step function: each sample holds until the next one, drawn as one rectangle per sample
    // (a path of thousands of steps cost tens of ms to fill). The frame covers about three view
    // widths: samples outside the view are skipped.
    const double zeroY = yOf(std::clamp(0.0, frame->low, frame->high));
    const double left = rect.left(), endX = rect.right() + 1;
    QColor fill = color_;
    fill.setAlpha(170);
    const QColor range = color_.lighter(130);
    std::vector<QRect> areas, ranges;  // whole pixels: the raster engine's fastest fills
    for (size_t i = 0; i < frame->items.size(); ++i) {
        const trace::CounterItem& c = frame->items[i];
        const double next = i + 1 < frame->items.size() ? mapping.x(double(frame->items[i + 1].ts))
                                                        : mapping.x(extent_.end);
        const double x0 = std::max(mapping.x(double(c.ts)), left - 1);
        if (x0 > endX) break;
        const double x1 = std::min(next, endX + 1);
        if (x1 < left) continue;
        const double y = yOf(c.value);
        const double w = std::max(1.0, x1 - x0);
        if (c.count > 1 && c.max > c.min)  // a bucket of samples: its range as a lighter bar
            ranges.push_back(QRectF(x0, yOf(c.max), w, yOf(c.min) - yOf(c.max)).toAlignedRect());
        areas.push_back(QRectF(x0, std::min(y, zeroY), w, std::abs(zeroY - y)).toAlignedRect());
    }
    for (const QRect& r : ranges) painter.fillRect(r, range);
    for (const QRect& r : areas) painter.fillRect(r, fill);
    // Value axis: the top and the bottom of the chart, with the unit the series name implies.
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    const QFontMetrics metrics(small);
    const QString highText = format::counterValue(frame->high, unit_);
    const QString lowText = format::counterValue(frame->low, unit_);
    const int w =
        std::max(metrics.horizontalAdvance(highText), metrics.horizontalAdvance(lowText)) + 8;
    const QRect labels(rect.right() - w - 2, rect.top() + 1, w, rect.height() - 2);
    const QColor back(255, 255, 255, 200);
    painter.fillRect(QRect(labels.left(), labels.top(), w, metrics.height()), back);
    painter.fillRect(QRect(labels.left(), labels.bottom() - metrics.height(), w, metrics.height()),
                     back);
    painter.setPen(color_.darker(170));
    painter.drawText(labels, Qt::AlignTop | Qt::AlignRight, highText);
    painter.drawText(labels, Qt::AlignBottom | Qt::AlignRight, lowText);
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
    QString value = QString::number(it->second.value, 'g', 6);
    if (!unit_.isEmpty() || std::abs(it->second.value) >= 1e4)
        value += " (" + format::counterValue(it->second.value, unit_) + ")";
    return QStringLiteral("%1 = %2 at %3").arg(title_, value, format::nanoseconds(item.start));
}

DetailFields TraceCounterTrack::details(const TimelineItem& item) const {
    DetailFields fields{{"Counter", title_}, {"Time", format::nanoseconds(item.start)}};
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

}  // namespace stallscope
