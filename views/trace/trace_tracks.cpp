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

TraceSource::TraceSource(std::string workspacePath, int64_t profileId)
    : workspacePath_(std::move(workspacePath)), profileId_(profileId) {
    primaryConnection_ = open();
    primary_ = primaryConnection_->store.get();
    flows_ = primary_->flows();
    metadata_ = primary_->metadata();
}

namespace {

QString jsonText(const QJsonValue& v) {
    if (v.isString()) return v.toString();
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 12);
    if (v.isBool()) return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    return QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact))
        .mid(1)
        .chopped(1);
}

// XProf keeps one entry per plane, in plane order; the plane's index is the process's pid.
QJsonObject planeOf(const QJsonObject& metadata, const trace::TrackRow& process) {
    for (const auto& p : metadata.value("plane_details").toArray()) {
        const QJsonObject plane = p.toObject();
        if (QString::number(plane.value("index").toInteger()).toStdString() == process.pid)
            return plane;
    }
    return {};
}

}  // namespace

QString TraceSource::deviceType(const trace::TrackRow& process) const {
    return planeOf(metadata_, process)
        .value("stats")
        .toObject()
        .value("device_type_string")
        .toString();
}

DetailFields TraceSource::processDetails(const trace::TrackRow& process) const {
    DetailFields fields;
    fields.append({"Process", QString::fromStdString(process.name)});
    if (!process.pid.empty()) fields.append({"pid", QString::fromStdString(process.pid)});
    int tracks = 0;
    for (const trace::TrackRow& t : primary_->tracks())
        if (t.parent == process.id) ++tracks;
    fields.append({"Tracks", QString::number(tracks)});
    const QJsonObject plane = planeOf(metadata_, process);
    const QJsonObject stats = plane.value("stats").toObject();
    for (auto it = stats.begin(); it != stats.end(); ++it) fields.append({it.key(), jsonText(*it)});
    if (!plane.isEmpty() && plane.contains("id"))
        fields.append({"Plane id", QString::number(plane.value("id").toInteger())});
    return fields;
}

TraceSource::~TraceSource() = default;

std::unique_ptr<TraceSource::Connection> TraceSource::open() const {
    auto c = std::make_unique<Connection>();
    c->workspace = Workspace::open(workspacePath_, Workspace::Mode::ReadOnly);
    // Frames read chunk blobs all over the profile: map the file rather than pread() pages
    // through a 2 MB cache.
    sql::exec(c->workspace->db(), "PRAGMA mmap_size = 1073741824");
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

std::vector<double> trackBusyDensity(const trace::TraceStore& store, size_t bins) {
    std::vector<double> density(bins, 0.0);
    const int64_t origin = store.start();
    const double span = std::max(1.0, double(store.end() - origin));
    const double binWidth = span / double(bins);
    for (const trace::TrackRow& track : store.tracks()) {
        if (track.slices == 0) continue;
        // Items folded at a quarter bin are plenty for a strip a few pixels per bin wide.
        for (const trace::SliceItem& item :
             store.slices(track.id, store.start(), store.end(), binWidth / 4)) {
            if (item.depth != 0 || item.kind == trace::ItemKind::Instant) continue;
            const double s = double(item.start - origin), e = double(item.end() - origin);
            for (auto bin = size_t(std::max(0.0, s / binWidth));
                 bin < bins && double(bin) * binWidth < e; ++bin) {
                const double lo = std::max(s, double(bin) * binWidth);
                const double hi = std::min(e, double(bin + 1) * binWidth);
                if (hi > lo) density[bin] += (hi - lo) / binWidth;
            }
        }
    }
    return density;
}

std::function<void(QPainter&, const QRect&, TimeRange)> densityOverview(std::vector<double> density,
                                                                        TimeRange extent) {
    return [density = std::move(density), extent](QPainter& painter, const QRect& r,
                                                  TimeRange all) {
        if (density.empty() || all.length() <= 0 || extent.length() <= 0) return;
        const double peak = *std::max_element(density.begin(), density.end());
        if (!(peak > 0)) return;
        // One column per pixel (the busiest bin under it), so the profile has no seams.
        const double binsPerNs = double(density.size()) / extent.length();
        const QColor colour(90, 120, 180, 170);
        for (int x = r.left(); x <= r.right(); ++x) {
            const double t0 = all.start + double(x - r.left()) / r.width() * all.length();
            const double t1 = t0 + all.length() / r.width();
            const auto b0 =
                static_cast<std::ptrdiff_t>(std::floor((t0 - extent.start) * binsPerNs));
            const auto b1 = static_cast<std::ptrdiff_t>(std::ceil((t1 - extent.start) * binsPerNs));
            double value = 0;
            for (auto b = std::max<std::ptrdiff_t>(0, b0);
                 b < std::min<std::ptrdiff_t>(b1, std::ptrdiff_t(density.size())); ++b)
                value = std::max(value, density[size_t(b)]);
            const double h = value / peak * (r.height() - 2);
            if (h > 0) painter.fillRect(QRectF(x, r.bottom() - h, 1, h), colour);
        }
    };
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
    const std::string& highlighted = highlight_ ? highlight_->name : std::string();
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
        if (!highlighted.empty() && name != highlighted)
            fill = QColor::fromHsl(fill.hslHue(), 20, 225);
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

TraceFlowOverlay::TraceFlowOverlay(TraceSourcePtr source, std::shared_ptr<const TrackMap> shown,
                                   const TimelineView* view)
    : source_(std::move(source)),
      shown_(std::move(shown)),
      view_(view),
      byStart_(source_->flows()) {
    std::sort(byStart_.begin(), byStart_.end(),
              [](const trace::FlowRow& a, const trace::FlowRow& b) {
                  return std::min(a.fromTs, a.toTs) < std::min(b.fromTs, b.toTs);
              });
    for (const trace::FlowRow& f : byStart_)
        longest_ = std::max(longest_, std::abs(f.toTs - f.fromTs));
}

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
    if (byStart_.empty() || display_ == FlowDisplay::None) return;
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
    const auto wanted = [&focus](const trace::FlowRow& f) { return !focus || touches(f, *focus); };
    auto it = std::lower_bound(
        byStart_.begin(), byStart_.end(), windowStart - double(longest_),
        [](const trace::FlowRow& f, double t) { return double(std::min(f.fromTs, f.toTs)) < t; });
    // Count what the window holds first: past kSmoothArrows arrows they are drawn without
    // antialiasing (a smooth curve costs ~80 us), and past kMaxArrows none is (they would only
    // hatch the view; zoom in).
    int inWindow = 0;
    for (auto probe = it; probe != byStart_.end() && inWindow <= kMaxArrows; ++probe) {
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
    for (; it != byStart_.end() && drawn < kMaxArrows; ++it) {
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
    all.insert(all.end(), shown_.tracks.begin(), shown_.tracks.end());
    view_.setTracks(std::move(all));
    view_.setWindow(window);
}

void TraceTimelineBinding::setLeadingTracks(std::vector<std::shared_ptr<TimelineTrack>> tracks) {
    leading_ = std::move(tracks);
    show(shownIds_);
}

const TimelineTrack* TraceTimelineBinding::trackFor(int64_t trackId) const {
    const auto it = shown_.byTrackId.find(trackId);
    return it == shown_.byTrackId.end() ? nullptr : it->second;
}

}  // namespace stallscope
