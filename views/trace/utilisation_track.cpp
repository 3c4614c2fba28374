#include "views/trace/utilisation_track.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <queue>

#include "views/common/format.h"

namespace stallscope {

namespace {
const QColor kBusyColor(46, 140, 80);
}

DeviceUtilisationTrack::DeviceUtilisationTrack(TraceSourcePtr source, trace::StepDevice device)
    : source_(std::move(source)), device_(std::move(device)) {}

DeviceUtilisationTrack::~DeviceUtilisationTrack() {
    closing_.store(true);
    if (reader_.joinable()) reader_.join();
}

QString DeviceUtilisationTrack::title() const {
    return QObject::tr("Utilisation · %1").arg(QString::fromStdString(device_.name));
}

namespace {

// One stream's busy intervals, merged as its activities come (by start, as its chunks do);
// the rare activity starting before the interval being merged is set aside and merged at the
// end with the other streams' runs. Holding every activity of the device first (and a second
// copy to merge streams) was most of the first frame's memory at 10^8 slices.
template <class Busy>
struct BusyRun {
    std::vector<Busy> merged;
    std::vector<Busy> apart;  // out of start order
    void add(const Busy& b) {
        if (!merged.empty() && b.start < merged.back().start) {
            apart.push_back(b);
        } else if (!merged.empty() && b.start <= merged.back().end) {
            merged.back().end = std::max(merged.back().end, b.end);
        } else {
            merged.push_back(b);
        }
    }
};

}  // namespace

const std::vector<DeviceUtilisationTrack::Busy>& DeviceUtilisationTrack::intervals() const {
    std::call_once(loaded_, [this] {
        struct Closing {};  // the track went away before its intervals were read
        const double origin = double(source_->origin());
        const auto byStart = [](const Busy& a, const Busy& b) { return a.start < b.start; };
        std::vector<BusyRun<Busy>> runs;
        try {
            source_->query([&](const trace::TraceStore& store) {
                for (const int64_t id : device_.tracks) {
                    BusyRun<Busy>& run = runs.emplace_back();
                    store.forEachChunk(id, [&](const std::vector<trace::SliceItem>& chunk) {
                        if (closing_.load()) throw Closing{};
                        for (const trace::SliceItem& s : chunk) {
                            // Top-level activities only: nested ones lie inside them.
                            if (s.kind != trace::ItemKind::Slice || s.depth != 0) continue;
                            const double start = double(s.start) - origin + s.startPs * 1e-3;
                            run.add({start, start + s.durNs()});
                        }
                    });
                    run.merged.shrink_to_fit();
                }
            });
        } catch (const Closing&) {
            return;
        }
        // The set-aside ones are one more run each, sorted; then all runs merged by start, as
        // one sorted list of every activity would be: touching and overlapping ones joined.
        std::vector<std::vector<Busy>*> sorted;
        for (BusyRun<Busy>& run : runs) {
            if (!run.merged.empty()) sorted.push_back(&run.merged);
            if (!run.apart.empty()) {
                std::sort(run.apart.begin(), run.apart.end(), byStart);
                sorted.push_back(&run.apart);
            }
        }
        if (sorted.size() == 1 && sorted.front() == &runs.front().merged && runs.size() == 1) {
            busy_.swap(runs.front().merged);  // one stream in order: already merged
        } else {
            // A heap of the runs by their next start; a run is read on while it stays first.
            using Next = std::pair<double, size_t>;
            std::priority_queue<Next, std::vector<Next>, std::greater<Next>> heads;
            std::vector<size_t> next(sorted.size(), 0);
            for (size_t r = 0; r < sorted.size(); ++r) heads.push({sorted[r]->front().start, r});
            while (!heads.empty()) {
                const size_t r = heads.top().second;
                heads.pop();
                const std::vector<Busy>& run = *sorted[r];
                for (;;) {
                    const Busy& b = run[next[r]++];
                    if (!busy_.empty() && b.start <= busy_.back().end)
                        busy_.back().end = std::max(busy_.back().end, b.end);
                    else
                        busy_.push_back(b);
                    if (next[r] == run.size()) break;
                    if (!heads.empty() && heads.top() < Next{run[next[r]].start, r}) {
                        heads.push({run[next[r]].start, r});
                        break;
                    }
                }
            }
        }
        busy_.shrink_to_fit();
        ready_.store(true);
    });
    return busy_;
}

double DeviceUtilisationTrack::busyBetween(double from, double to) const {
    const std::vector<Busy>& busy = intervals();
    auto it = std::lower_bound(busy.begin(), busy.end(), from,
                               [](const Busy& b, double t) { return b.end <= t; });
    double sum = 0;
    for (; it != busy.end() && it->start < to; ++it)
        sum += std::min(it->end, to) - std::max(it->start, from);
    return sum;
}

std::shared_ptr<const TrackFrame> DeviceUtilisationTrack::prepare(TimeRange window,
                                                                  double upp) const {
    auto frame = std::make_shared<Frame>();
    frame->window = window;
    frame->unitsPerPixel = upp;
    frame->binWidth = std::max(upp * kBinPixels, 1e-3);
    frame->binStart = std::floor(window.start / frame->binWidth) * frame->binWidth;
    if (background_ && !ready_.load() && !failed_.load()) {
        std::call_once(started_, [this] {
            reader_ = std::thread([this] {
                try {
                    intervals();
                } catch (const std::exception&) {
                    failed_.store(true);  // drawn idle rather than asked for forever
                }
            });
        });
        frame->partial = true;
        return frame;
    }
    const size_t bins = size_t(std::ceil((window.end - frame->binStart) / frame->binWidth)) + 1;
    frame->busy.assign(std::min<size_t>(bins, 1 << 20), 0.0f);
    const std::vector<Busy>& busy = intervals();
    auto it = std::lower_bound(busy.begin(), busy.end(), frame->binStart,
                               [](const Busy& b, double t) { return b.end <= t; });
    const double binEnd = frame->binStart + double(frame->busy.size()) * frame->binWidth;
    // Each interval adds its overlap to the bins it spans: O(intervals + bins) per frame.
    for (; it != busy.end() && it->start < binEnd; ++it) {
        const double a = std::max(it->start, frame->binStart), b = std::min(it->end, binEnd);
        size_t bin = size_t((a - frame->binStart) / frame->binWidth);
        for (double t = a; t < b && bin < frame->busy.size(); ++bin) {
            const double edge = frame->binStart + double(bin + 1) * frame->binWidth;
            const double part = std::min(b, edge) - t;
            frame->busy[bin] += float(part / frame->binWidth);
            t = edge;
        }
    }
    for (float& v : frame->busy) v = std::min(v, 1.0f);
    return frame;
}

void DeviceUtilisationTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                                   const TrackFrame* baseFrame,
                                   const std::optional<TimelineItem>& selected) const {
    const auto* frame = dynamic_cast<const Frame*>(baseFrame);
    if (!frame) return;
    painter.save();
    painter.setClipRect(rect);
    const double top = rect.top() + 2, height = rect.height() - 4, bottom = top + height;
    painter.fillRect(QRectF(rect.left(), top, rect.width(), height), QColor(236, 242, 238));
    if (frame->partial) {
        painter.setPen(QColor(110, 120, 112));
        painter.drawText(QRectF(rect.left() + 6, top, rect.width() - 12, height),
                         Qt::AlignVCenter | Qt::AlignLeft,
                         QObject::tr("reading the device's activity…"));
        painter.restore();
        return;
    }
    QPainterPath profile;
    profile.moveTo(mapping.x(frame->binStart), bottom);
    for (size_t i = 0; i < frame->busy.size(); ++i) {
        const double x0 = mapping.x(frame->binStart + double(i) * frame->binWidth);
        const double x1 = mapping.x(frame->binStart + double(i + 1) * frame->binWidth);
        if (x1 < rect.left() - 2 || x0 > rect.right() + 2) continue;
        const double y = bottom - double(frame->busy[i]) * height;
        profile.lineTo(x0, y);
        profile.lineTo(x1, y);
    }
    profile.lineTo(mapping.x(frame->binStart + double(frame->busy.size()) * frame->binWidth),
                   bottom);
    profile.closeSubpath();
    painter.fillPath(profile, kBusyColor);
    if (selected) {
        painter.setPen(QPen(QColor(20, 20, 20), 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(QPointF(mapping.x(selected->start), top),
                                QPointF(mapping.x(selected->end), bottom)));
    }
    painter.restore();
}

std::optional<TimelineItem> DeviceUtilisationTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                            const TimeMapping& mapping,
                                                            const TrackFrame*) const {
    if (!rect.contains(pos)) return std::nullopt;
    // The item under the pointer: the pixel's span, widened to the bin the frame drew.
    const double width = mapping.unitsPerPixel() * kBinPixels;
    const double t = mapping.time(pos.x());
    TimelineItem item;
    item.id = 0;
    item.start = std::floor(t / width) * width;
    item.end = item.start + width;
    return item;
}

QString DeviceUtilisationTrack::toolTip(const TimelineItem& item) const {
    const double span = item.end - item.start;
    if (!ready()) return title();  // no SQL on the GUI thread: the first frame reads them
    return QObject::tr("%1 busy %2 of %3 here")
        .arg(QString::fromStdString(device_.name),
             format::percentOf(busyBetween(item.start, item.end), span), format::nanoseconds(span));
}

DetailFields DeviceUtilisationTrack::details(const TimelineItem& item) const {
    if (!ready()) return {{QObject::tr("Device"), QString::fromStdString(device_.name)}};
    const TimeRange all = extent();
    const double busy = busyBetween(all.start, all.end);
    return {{QObject::tr("Device"), QString::fromStdString(device_.name)},
            {QObject::tr("Tracks"), QString::number(device_.tracks.size())},
            {QObject::tr("Busy here"),
             QObject::tr("%1 of %2")
                 .arg(format::percentOf(busyBetween(item.start, item.end), item.end - item.start),
                      format::nanoseconds(item.end - item.start))},
            {QObject::tr("Busy over the trace"),
             QObject::tr("%1 (%2 of %3)")
                 .arg(format::nanoseconds(busy), format::percentOf(busy, all.length()),
                      format::nanoseconds(all.length()))}};
}

TimeRange DeviceUtilisationTrack::extent() const {
    const trace::TraceStore& store = source_->store();
    return {0.0, double(store.end() - store.start())};
}

}  // namespace stallscope
