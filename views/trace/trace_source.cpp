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

// The trace source the views share: the opened profile, its colours and busy density.

namespace stallscope {

TraceSource::TraceSource(std::string workspacePath, int64_t profileId)
    : workspacePath_(std::move(workspacePath)), profileId_(profileId) {
    primaryConnection_ = open();
    primary_ = primaryConnection_->store.get();
    metadata_ = primary_->metadata();
    flows_ = std::make_shared<const FlowIndex>();
    flowReader_ = std::thread([this] { readFlows(); });
}

void TraceSource::readFlows() {
    std::shared_ptr<const FlowIndex> index;
    try {
        Lease lease(*this);
        index = std::make_shared<const FlowIndex>(*lease.store, closing_);
    } catch (const std::exception&) {
        // Unreadable flows leave the timeline without arrows; the slices still show.
        index = std::make_shared<const FlowIndex>();
    }
    if (closing_.load()) return;
    {
        std::lock_guard lock(flowsMutex_);
        flows_ = std::move(index);
    }
    flowsRead_.store(true);
    flowsDone_.notify_all();
}

std::shared_ptr<const FlowIndex> TraceSource::flows() const {
    std::lock_guard lock(flowsMutex_);
    return flows_;
}

std::shared_ptr<const FlowIndex> TraceSource::waitForFlows() const {
    std::unique_lock lock(flowsMutex_);
    flowsDone_.wait(lock, [this] { return flowsRead_.load(); });
    return flows_;
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

TraceSource::~TraceSource() {
    closing_.store(true);
    if (flowReader_.joinable()) flowReader_.join();
}

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

}  // namespace stallscope
