// XSpace planes, lines and events into the trace: a plane is a process with its stats, a line a
// thread (events that overlap without nesting get extra lanes), an event a slice with picosecond
// start and duration; aggregated events (num_occurrences) are summed for the op statistics.
#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>

#include "core/errors.h"
#include "core/lanes.h"
#include "importers/xprof/xspace_internal.h"

namespace stallscope::xspace {

namespace {

using trace::PreciseTime;
using trace::TrackKind;
using trace::TrackSpec;

int64_t floorDiv(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

QJsonObject PlaneReader::read(std::string_view planeBytes, size_t base, int64_t index) {
    eventMeta_.clear();
    statMeta_.clear();
    eventInfo_.clear();
    eventInfoIndex_.clear();
    statKeys_.clear();
    statKeyIndex_.clear();
    // Layouts name keys by this plane's stat metadata.
    argsLayouts_.clear();
    lastLayoutKey_.clear();
    refNames_.clear();
    lineTracks_.clear();
    lineOrder_.clear();
    std::vector<std::pair<std::string_view, size_t>> lineBytes, statBytes;
    std::string name;
    int64_t planeId = 0;
    WireReader plane(planeBytes, base, path_);
    Field f;
    while (plane.next(f)) {
        const size_t at = size_t(f.bytes.data() - planeBytes.data()) + base;
        if (f.number == 1 && f.wireType == 0) {
            planeId = int64_t(f.value);
        } else if (f.number == 2 && f.wireType == 2) {
            name = std::string(f.bytes);
        } else if (f.number == 3 && f.wireType == 2) {
            lineBytes.emplace_back(f.bytes, at);
        } else if ((f.number == 4 || f.number == 5) && f.wireType == 2) {
            readMapEntry(f, at);
        } else if (f.number == 6 && f.wireType == 2) {
            statBytes.emplace_back(f.bytes, at);
        }
    }
    // Plane stats (device type, peak FLOPS, bandwidths...) describe the process.
    QJsonObject stats;
    for (const auto& [bytes, offset] : statBytes) {
        xprof::XStat stat;
        if (!stat.ParseFromArray(bytes.data(), int(bytes.size())))
            throw InputError(
                atOffset(path_, static_cast<long long>(offset), "XSpace: malformed plane stat"));
        std::string value;
        appendStatValue(value, stat);
        if (statName(stat.metadata_id()) == "profile_start_time") {
            if (stat.value_case() == xprof::XStat::kUint64Value)
                profileStartTime = int64_t(stat.uint64_value());
            else if (stat.value_case() == xprof::XStat::kInt64Value)
                profileStartTime = stat.int64_value();
        }
        stats.insert(
            QString::fromStdString(statName(stat.metadata_id())),
            QJsonDocument::fromJson(QByteArray::fromStdString("[" + value + "]")).array().at(0));
    }
    TrackSpec spec;
    spec.kind = TrackKind::Process;
    spec.parent = parentTrack_;
    spec.name = name.empty() ? "Plane " + std::to_string(index) : name;
    spec.pid = std::to_string(index);
    spec.sortIndex = index;
    process_ = writer_.addTrack(std::move(spec));
    planeTracks.emplace_back(process_, name.empty());
    planeName_ = name;
    // A line's lanes are complete after the last line with its id (lines sharing an id are one
    // timeline): the writer may write them then, while the next lines are read.
    std::unordered_map<int64_t, size_t> lastLineOf;
    for (size_t i = 0; i < lineBytes.size(); ++i)
        lastLineOf[lineIdOf(lineBytes[i].first, lineBytes[i].second)] = i;
    for (size_t i = 0; i < lineBytes.size(); ++i) {
        const int64_t lineId = readLine(lineBytes[i].first, lineBytes[i].second);
        if (lastLineOf[lineId] == i) writer_.finishTracks(lineTracks_[lineId]);
    }
    QJsonObject out{{"index", qint64(index)},
                    {"id", qint64(planeId)},
                    {"name", QString::fromStdString(name)},
                    {"lines", qint64(lineBytes.size())}};
    if (!stats.isEmpty()) out.insert("stats", stats);
    return out;
}

uint32_t PlaneReader::laneTrack(int64_t lineId, const std::string& lineName, size_t lineOrder,
                                size_t lane) {
    std::vector<uint32_t>& lanes = lineTracks_[lineId];
    while (lanes.size() <= lane) {
        TrackSpec spec;
        spec.kind = TrackKind::Thread;
        spec.parent = process_;
        spec.name =
            lanes.empty() ? lineName : lineName + " (" + std::to_string(lanes.size() + 1) + ")";
        spec.tid = std::to_string(lineId);
        spec.sortIndex = int64_t(lineOrder) * 1024 + int64_t(lanes.size());
        lanes.push_back(writer_.addTrack(std::move(spec)));
        if (lanes.size() > 1) ++laneTracks;
    }
    return lanes[lane];
}

bool PlaneReader::fastEvent(std::string_view event, EventFields& ev) {
    const char* p = event.data();
    const char* const end = p + event.size();
    while (p < end) {
        const char* const field = p;
        const uint8_t tag = uint8_t(*p);
        if (tag & 0x80) return false;
        ++p;
        uint64_t v;
        if (!smallVarint(p, end, v)) return false;
        if ((tag & 7) == 0) {
            ev.set(tag >> 3, v);
        } else if ((tag & 7) == 2) {
            if (v > uint64_t(end - p)) return false;
            if (tag == 0x22 && ev.statsFrom == kNoStats)
                ev.statsFrom = uint32_t(field - event.data());
            p += v;
        } else {
            return false;
        }
    }
    return true;
}

int64_t PlaneReader::lineIdOf(std::string_view bytes, size_t offset) const {
    int64_t lineId = 0;
    WireReader r(bytes, offset, path_);
    Field f;
    while (r.next(f))
        if (f.number == 1 && f.wireType == 0) lineId = int64_t(f.value);
    return lineId;
}

int64_t PlaneReader::readLine(std::string_view bytes, size_t offset) {
    int64_t lineId = 0, timestampNs = 0;
    std::string_view name, displayName;
    // Events: their bytes and offsets, parsed below. Kept across lines: a line may hold
    // millions of events, and fresh pages for each cost page faults.
    std::vector<std::pair<std::string_view, size_t>>& eventBytes = eventBytes_;
    eventBytes.clear();
    {
        WireReader r(bytes, offset, path_);
        Field f;
        while (r.next(f)) {
            if (f.number == 1 && f.wireType == 0)
                lineId = int64_t(f.value);
            else if (f.number == 2 && f.wireType == 2)
                name = f.bytes;
            else if (f.number == 3 && f.wireType == 0)
                timestampNs = int64_t(f.value);
            else if (f.number == 4 && f.wireType == 2)
                eventBytes.emplace_back(f.bytes, size_t(f.bytes.data() - bytes.data()) + offset);
            else if (f.number == 11 && f.wireType == 2)
                displayName = f.bytes;
        }
    }
    ++lines;
    std::string lineName(displayName.empty() ? name : displayName);
    if (lineName.empty()) lineName = "Line " + std::to_string(lineId);
    // Lines sharing an id are one timeline, placed where the first of them is.
    const auto order = lineOrder_.try_emplace(lineId, lineOrder_.size()).first;
    laneTrack(lineId, lineName, order->second, 0);

    std::vector<Timed>& timed = timed_;
    timed.clear();
    timed.reserve(eventBytes.size());
    bool sorted = true;
    for (uint32_t i = 0; i < eventBytes.size(); ++i) {
        const auto& [event, at] = eventBytes[i];
        ++events;
        EventFields ev;
        if (!fastEvent(event, ev)) {
            ev = EventFields{};
            WireReader r(event, at, path_);
            Field f;
            while (r.next(f)) {
                if (f.wireType == 0)
                    ev.set(f.number, f.value);
                else if (f.number == 4 && f.wireType == 2 && ev.statsFrom == kNoStats)
                    ev.statsFrom = uint32_t(f.offset - at);
            }
        }
        const auto [metadataId, offsetPs, durationPs, occurrences, aggregated, statsFrom] = ev;
        Field f;
        if (aggregated) {
            ++aggregatedEvents;
            const EventInfo& info = eventInfo(metadataId);
            Aggregate& a = aggregates[info.shownName];
            a.occurrences += uint64_t(std::max<int64_t>(0, occurrences));
            a.durationPs += std::max<int64_t>(0, durationPs);
            ++a.events;
            if (statsFrom == kNoStats) continue;
            WireReader stats(event.substr(statsFrom), at + statsFrom, path_);
            while (stats.next(f)) {
                if (f.number != 4 || f.wireType != 2) continue;
                const StatView stat = parseStat(f.bytes, f.offset);
                if (statName(stat.metadataId) != "self_duration_ps") continue;
                a.selfPs += int64_t(stat.number);
                a.haveSelf = true;
            }
            continue;
        }
        ++timedEvents;
        const int64_t durPs = std::max<int64_t>(0, durationPs);
        Timed t;
        t.start = {timestampNs + floorDiv(offsetPs, 1000),
                   int32_t(offsetPs - floorDiv(offsetPs, 1000) * 1000)};
        t.durNs = durPs / 1000;
        t.durPs = int(durPs % 1000);
        t.metadataId = metadataId;
        t.index = i;
        t.statsFrom = statsFrom;
        if (!timed.empty() && (t.start < timed.back().start ||
                               (t.start == timed.back().start && t.end() > timed.back().end())))
            sorted = false;
        timed.push_back(t);
    }
    if (!sorted)
        std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
            if (a.start != b.start) return a.start < b.start;
            if (a.end() != b.end()) return a.end() > b.end();
            return a.index < b.index;
        });
    // Events of a line nest; ones that overlap without nesting (async copies) would be drawn
    // as false children, so they move to a lane of their own, as Perfetto does.
    lanes::LaneAssigner<PreciseTime> laneOf(lanes::Touching::SameLane, lanes::Nesting::Allowed);
    std::vector<uint32_t> laneTracks{laneTrack(lineId, lineName, order->second, 0)};
    writer_.reserveSlices(laneTracks[0], timed.size());  // most of a line's events nest
    for (const Timed& t : timed) {
        const size_t lane = laneOf.place(t.start, t.end());
        if (lane == laneTracks.size())
            laneTracks.push_back(laneTrack(lineId, lineName, order->second, lane));
        EventInfo& info = eventInfo(t.metadataId);
        const auto& [event, at] = eventBytes[t.index];
        const uint64_t args = t.statsFrom == kNoStats
                                  ? eventArgs(info, {}, at)
                                  : eventArgs(info, event.substr(t.statsFrom), at + t.statsFrom);
        writer_.addSlice(laneTracks[lane], t.start.ns, t.durNs, info.name, args,
                         uint16_t(t.start.ps), uint16_t(t.durPs));
    }
    return lineId;
}

}  // namespace stallscope::xspace
