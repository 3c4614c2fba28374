// XProf XSpace (`.xplane.pb`, optionally gzip/zstd): planes become processes (devices, host) with
// their stats in the profile metadata, lines become threads (events that overlap without nesting
// get extra lanes), events become slices nested per line with picosecond starts and durations;
// event and event-metadata stats become arguments (the event's own win), aggregated events
// (num_occurrences) count in the op statistics.
#include <zlib.h>
#include <zstd.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "errors.h"
#include "import_service.h"
#include "registry.h"
#include "trace_store.h"
#include "trace_writer.h"
#include "xplane.pb.h"

namespace stallscope {

namespace {

using trace::PreciseTime;
using trace::TraceWriter;
using trace::TrackKind;
using trace::TrackSpec;

// Walks the top-level fields of a serialized message without materialising it, so an XSpace's
// planes and lines are parsed one at a time (an XSpace is one message, not a stream).
class WireReader {
  public:
    struct Field {
        uint32_t number;
        uint32_t wireType;
        uint64_t varint;
        std::string_view bytes;
        size_t offset;  // of the field's tag, from the start of the whole buffer
    };
    WireReader(std::string_view data, size_t base, const std::string& path)
        : data_(data), base_(base), path_(path) {}

    bool next(Field& f) {
        if (pos_ >= data_.size()) return false;
        f.offset = base_ + pos_;
        const uint64_t tag = varint();
        f.number = uint32_t(tag >> 3);
        f.wireType = uint32_t(tag & 7);
        f.bytes = {};
        f.varint = 0;
        switch (f.wireType) {
            case 0:
                f.varint = varint();
                break;
            case 1:
                skip(8);
                break;
            case 2: {
                const uint64_t n = varint();
                if (n > data_.size() - pos_)
                    fail(f.offset, "a length-delimited field runs past the end (truncated file?)");
                f.bytes = data_.substr(pos_, size_t(n));
                pos_ += size_t(n);
                break;
            }
            case 5:
                skip(4);
                break;
            default:
                fail(f.offset, "invalid protobuf wire type " + std::to_string(f.wireType));
        }
        return true;
    }
    size_t base() const { return base_; }

  private:
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos_ >= data_.size()) fail(base_ + pos_, "truncated varint (truncated file?)");
            const uint8_t b = uint8_t(data_[pos_++]);
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        fail(base_ + pos_, "varint too long");
    }
    void skip(size_t n) {
        if (n > data_.size() - pos_) fail(base_ + pos_, "a fixed-size field runs past the end");
        pos_ += n;
    }
    [[noreturn]] void fail(size_t offset, const std::string& what) const {
        throw InputError(atOffset(path_, static_cast<long long>(offset), "XSpace: " + what));
    }
    std::string_view data_;
    size_t base_;
    size_t pos_ = 0;
    const std::string& path_;
};

void appendJsonString(std::string& out, std::string_view s) {
    out.push_back('"');
    for (const char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (uint8_t(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out.push_back(c);
                }
        }
    }
    out.push_back('"');
}

// A compressed_str_value: gzip per tsl's xplane.proto ("Gzip compressed string"); zlib streams
// and zstd frames are accepted too. Empty optional when the bytes do not decompress.
constexpr size_t kMaxDecompressedStat = size_t(64) << 20;

std::optional<std::string> decompressStat(std::string_view packed) {
    std::string out;
    if (packed.size() >= 4 && uint8_t(packed[0]) == 0x28 && uint8_t(packed[1]) == 0xb5 &&
        uint8_t(packed[2]) == 0x2f && uint8_t(packed[3]) == 0xfd) {
        ZSTD_DStream* z = ZSTD_createDStream();
        ZSTD_inBuffer in{packed.data(), packed.size(), 0};
        char buf[16384];
        size_t rc = 1;
        while (rc != 0 && out.size() <= kMaxDecompressedStat) {
            ZSTD_outBuffer o{buf, sizeof buf, 0};
            rc = ZSTD_decompressStream(z, &o, &in);
            if (ZSTD_isError(rc)) break;
            out.append(buf, o.pos);
            if (o.pos == 0 && in.pos == in.size) break;
        }
        ZSTD_freeDStream(z);
        if (rc != 0) return std::nullopt;
        return out;
    }
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return std::nullopt;  // +32: gzip or zlib header
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    z.avail_in = uInt(packed.size());
    char buf[16384];
    int rc = Z_OK;
    while (rc == Z_OK && out.size() <= kMaxDecompressedStat) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) return std::nullopt;
    return out;
}

int64_t floorDiv(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Stats of an event metadata, of an event or of a plane, as JSON members keyed by stat name.
using Members = std::vector<std::pair<std::string, std::string>>;  // name, JSON value

class PlaneReader {
  public:
    PlaneReader(TraceWriter& writer, const std::string& path) : writer_(writer), path_(path) {}

    uint64_t events = 0, lines = 0, timedEvents = 0, aggregatedEvents = 0;
    uint64_t compressedStats = 0, corruptCompressedStats = 0, laneTracks = 0;
    // Aggregated events (num_occurrences) summed per op name: bounded by the distinct names.
    struct Aggregate {
        uint64_t occurrences = 0, events = 0;
        int64_t durationPs = 0, selfPs = 0;
        bool haveSelf = false;
    };
    std::map<std::string, Aggregate> aggregates;

    // Reads one plane; returns its description for the profile metadata (name, id, stats).
    QJsonObject read(std::string_view planeBytes, size_t base, int64_t index) {
        eventMeta_.clear();
        statMeta_.clear();
        eventInfo_.clear();
        lineTracks_.clear();
        lineOrder_.clear();
        std::vector<std::pair<std::string_view, size_t>> lineBytes, statBytes;
        std::string name;
        int64_t planeId = 0;
        WireReader plane(planeBytes, base, path_);
        WireReader::Field f;
        while (plane.next(f)) {
            const size_t at = size_t(f.bytes.data() - planeBytes.data()) + base;
            if (f.number == 1 && f.wireType == 0) {
                planeId = int64_t(f.varint);
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
                throw InputError(atOffset(path_, static_cast<long long>(offset),
                                          "XSpace: malformed plane stat"));
            std::string value;
            appendStatValue(value, stat);
            stats.insert(QString::fromStdString(statName(stat.metadata_id())),
                         QJsonDocument::fromJson(QByteArray::fromStdString("[" + value + "]"))
                             .array()
                             .at(0));
        }
        TrackSpec spec;
        spec.kind = TrackKind::Process;
        spec.name = name.empty() ? "Plane " + std::to_string(index) : name;
        spec.pid = std::to_string(index);
        spec.sortIndex = index;
        process_ = writer_.addTrack(std::move(spec));
        planeName_ = name;
        for (const auto& [bytes, offset] : lineBytes) readLine(bytes, offset);
        QJsonObject out{{"index", qint64(index)},
                        {"id", qint64(planeId)},
                        {"name", QString::fromStdString(name)},
                        {"lines", qint64(lineBytes.size())}};
        if (!stats.isEmpty()) out.insert("stats", stats);
        return out;
    }

  private:
    // What every event of one metadata id shares.
    struct EventInfo {
        uint32_t name = 0;
        std::string shownName;
        std::string fullName;  // XEventMetadata.name (HLO text) when a display name is shown
        Members stats;         // the metadata's own stats
        uint64_t sharedArgs = 0;
        bool sharedArgsMade = false;
    };

    void readMapEntry(const WireReader::Field& entry, size_t base) {
        WireReader r(entry.bytes, base, path_);
        WireReader::Field f;
        int64_t key = 0;
        std::string_view value;
        while (r.next(f)) {
            if (f.number == 1 && f.wireType == 0) key = int64_t(f.varint);
            if (f.number == 2 && f.wireType == 2) value = f.bytes;
        }
        if (entry.number == 4) {
            xprof::XEventMetadata m;
            if (!m.ParseFromArray(value.data(), int(value.size())))
                throw InputError(atOffset(path_, static_cast<long long>(entry.offset),
                                          "XSpace: malformed event metadata"));
            eventMeta_[key] = std::move(m);
        } else {
            xprof::XStatMetadata m;
            if (!m.ParseFromArray(value.data(), int(value.size())))
                throw InputError(atOffset(path_, static_cast<long long>(entry.offset),
                                          "XSpace: malformed stat metadata"));
            statMeta_[key] = std::move(m);
        }
    }

    EventInfo& eventInfo(int64_t metadataId) {
        auto it = eventInfo_.find(metadataId);
        if (it != eventInfo_.end()) return it->second;
        EventInfo info;
        auto meta = eventMeta_.find(metadataId);
        if (meta == eventMeta_.end()) {
            info.shownName = "metadata " + std::to_string(metadataId);
        } else {
            const xprof::XEventMetadata& m = meta->second;
            const bool display = !m.display_name().empty();
            info.shownName = display ? m.display_name() : m.name();
            if (display && m.name() != m.display_name()) info.fullName = m.name();
            info.stats = members(m.stats());
        }
        info.name = writer_.intern(info.shownName);
        return eventInfo_.emplace(metadataId, std::move(info)).first->second;
    }

    std::string statName(int64_t id) const {
        auto it = statMeta_.find(id);
        return it == statMeta_.end() ? "stat " + std::to_string(id) : it->second.name();
    }

    // One stat value as JSON; ref_value resolves to the referenced stat metadata's name and
    // compressed_str_value is decompressed.
    void appendStatValue(std::string& out, const xprof::XStat& s) {
        switch (s.value_case()) {
            case xprof::XStat::kDoubleValue: {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%.17g", s.double_value());
                out += std::isfinite(s.double_value()) ? buf : "null";
                break;
            }
            case xprof::XStat::kUint64Value:
                out += std::to_string(s.uint64_value());
                break;
            case xprof::XStat::kInt64Value:
                out += std::to_string(s.int64_value());
                break;
            case xprof::XStat::kStrValue:
                appendJsonString(out, s.str_value());
                break;
            case xprof::XStat::kBytesValue:
                appendJsonString(out, "<" + std::to_string(s.bytes_value().size()) + " bytes>");
                break;
            case xprof::XStat::kRefValue:
                appendJsonString(out, statName(int64_t(s.ref_value())));
                break;
            case xprof::XStat::kCompressedStrValue: {
                ++compressedStats;
                const auto text = decompressStat(s.compressed_str_value());
                if (text) {
                    appendJsonString(out, *text);
                } else {
                    ++corruptCompressedStats;
                    appendJsonString(out, "<" + std::to_string(s.compressed_str_value().size()) +
                                              " bytes that do not decompress>");
                }
                break;
            }
            default:
                out += "null";
        }
    }

    Members members(const google::protobuf::RepeatedPtrField<xprof::XStat>& stats) {
        Members out;
        out.reserve(size_t(stats.size()));
        for (const xprof::XStat& s : stats) {
            std::string value;
            appendStatValue(value, s);
            out.emplace_back(statName(s.metadata_id()), std::move(value));
        }
        return out;
    }

    // An event's arguments: its own stats, then its metadata's stats it does not override
    // (the event's own win), then the full name when a display name is shown.
    uint64_t eventArgs(EventInfo& info,
                       const google::protobuf::RepeatedPtrField<xprof::XStat>& stats) {
        if (stats.empty() && info.sharedArgsMade) return info.sharedArgs;
        const Members own = members(stats);
        args_.assign("{");
        bool first = true;
        auto add = [&](const std::string& key, const std::string& value) {
            if (!first) args_.push_back(',');
            first = false;
            appendJsonString(args_, key);
            args_.push_back(':');
            args_ += value;
        };
        for (const auto& [key, value] : own) add(key, value);
        for (const auto& [key, value] : info.stats) {
            const bool overridden =
                std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.first == key; });
            if (!overridden) add(key, value);
        }
        if (!info.fullName.empty()) {
            std::string full;
            appendJsonString(full, info.fullName);
            add("long_name", full);
        }
        args_.push_back('}');
        const uint64_t id = first ? 0 : writer_.addArgs(args_);
        if (stats.empty()) {
            info.sharedArgs = id;  // every event of this metadata without stats shares it
            info.sharedArgsMade = true;
        }
        return id;
    }

    uint32_t laneTrack(int64_t lineId, const std::string& lineName, size_t lineOrder, size_t lane) {
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

    void readLine(std::string_view bytes, size_t offset) {
        xprof::XLine line;
        if (!line.ParseFromArray(bytes.data(), int(bytes.size())))
            throw InputError(
                atOffset(path_, static_cast<long long>(offset), "XSpace: malformed XLine"));
        ++lines;
        std::string lineName = line.display_name().empty() ? line.name() : line.display_name();
        if (lineName.empty()) lineName = "Line " + std::to_string(line.id());
        // Lines sharing an id are one timeline, placed where the first of them is.
        const auto order = lineOrder_.try_emplace(line.id(), lineOrder_.size()).first;
        laneTrack(line.id(), lineName, order->second, 0);

        // Timed events in start order (longer first), each with its exact start and end.
        struct Timed {
            PreciseTime start, end;
            int64_t durNs;
            int durPs;
            int index;
        };
        std::vector<Timed> timed;
        timed.reserve(size_t(line.events_size()));
        for (int i = 0; i < line.events_size(); ++i) {
            const xprof::XEvent& e = line.events(i);
            ++events;
            if (e.data_case() == xprof::XEvent::kNumOccurrences) {
                ++aggregatedEvents;
                const EventInfo& info = eventInfo(e.metadata_id());
                Aggregate& a = aggregates[info.shownName];
                a.occurrences += uint64_t(std::max<int64_t>(0, e.num_occurrences()));
                a.durationPs += std::max<int64_t>(0, e.duration_ps());
                ++a.events;
                for (const xprof::XStat& s : e.stats()) {
                    if (statName(s.metadata_id()) != "self_duration_ps") continue;
                    a.selfPs += s.value_case() == xprof::XStat::kUint64Value
                                    ? int64_t(s.uint64_value())
                                    : s.int64_value();
                    a.haveSelf = true;
                }
                continue;
            }
            ++timedEvents;
            const int64_t offsetPs = e.offset_ps();
            const int64_t durPs = std::max<int64_t>(0, e.duration_ps());
            Timed t;
            t.start = {line.timestamp_ns() + floorDiv(offsetPs, 1000),
                       int32_t(offsetPs - floorDiv(offsetPs, 1000) * 1000)};
            t.durNs = durPs / 1000;
            t.durPs = int(durPs % 1000);
            t.end = PreciseTime::sum(t.start.ns, t.start.ps, t.durNs, t.durPs);
            t.index = i;
            timed.push_back(t);
        }
        std::sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
            if (a.start != b.start) return a.start < b.start;
            if (a.end != b.end) return a.end > b.end;
            return a.index < b.index;
        });
        // Events of a line nest; ones that overlap without nesting (async copies) would be drawn
        // as false children, so they move to a lane of their own, as Perfetto does.
        std::vector<std::vector<PreciseTime>> laneStacks(1);
        for (const Timed& t : timed) {
            size_t lane = 0;
            for (;; ++lane) {
                if (lane == laneStacks.size()) laneStacks.emplace_back();
                std::vector<PreciseTime>& stack = laneStacks[lane];
                while (!stack.empty() && stack.back() <= t.start) stack.pop_back();
                if (stack.empty() || t.end <= stack.back()) {
                    stack.push_back(t.end);
                    break;
                }
            }
            const xprof::XEvent& e = line.events(t.index);
            EventInfo& info = eventInfo(e.metadata_id());
            writer_.addSlice(laneTrack(line.id(), lineName, order->second, lane), t.start.ns,
                             t.durNs, info.name, eventArgs(info, e.stats()), uint16_t(t.start.ps),
                             uint16_t(t.durPs));
        }
    }

    TraceWriter& writer_;
    const std::string& path_;
    uint32_t process_ = 0;
    std::string planeName_;
    std::unordered_map<int64_t, xprof::XEventMetadata> eventMeta_;
    std::unordered_map<int64_t, xprof::XStatMetadata> statMeta_;
    std::unordered_map<int64_t, EventInfo> eventInfo_;
    std::unordered_map<int64_t, std::vector<uint32_t>> lineTracks_;  // line id -> lane tracks
    std::unordered_map<int64_t, size_t> lineOrder_;
    std::string args_;
};

class XSpaceImporter : public Importer {
  public:
    std::string format() const override { return "xprof-xspace"; }
    std::string kind() const override { return "trace"; }
    std::string description() const override {
        return "XProf XSpace (.xplane.pb) from JAX/TensorFlow/XLA profilers";
    }
    int detect(const Sniff& sniff) const override {
        // No magic number: a protobuf whose first field is a plane (field 1, length-delimited)
        // named like one.
        const bool named = sniff.path.find(".xplane.pb") != std::string::npos;
        const bool plane = !sniff.head.empty() && uint8_t(sniff.head[0]) == 0x0a;
        if (named && plane) return 90;
        return named ? 30 : 0;
    }

    void run(ImportContext& ctx) const override {
        ctx.progress.report(0.0, "reading XSpace");
        // An XSpace is a single message; planes are parsed one at a time from this buffer.
        const std::string data = readAll(ctx.input);
        TraceWriter writer(ctx.workspace, ctx.profileId);
        PlaneReader planes(writer, ctx.input.path());
        WireReader space(data, 0, ctx.input.path());
        WireReader::Field f;
        QJsonArray planeInfo, hostnames, errors, warnings;
        int64_t index = 0;
        while (space.next(f)) {
            if (f.wireType != 2) continue;
            if (f.number == 1) {
                planeInfo.append(
                    planes.read(f.bytes, size_t(f.bytes.data() - data.data()), index++));
                ctx.progress.report(0.6 * double(f.bytes.data() - data.data() + f.bytes.size()) /
                                        double(data.size() + 1),
                                    "reading planes");
            } else if (f.number == 2) {
                errors.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 3) {
                warnings.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 4) {
                hostnames.append(QString::fromStdString(std::string(f.bytes)));
            }
        }
        if (index == 0) throw InputError(ctx.input.path() + ": XSpace without planes");
        // Aggregated events count in the op statistics: occurrences and summed durations.
        QJsonArray aggregated;
        for (const auto& [name, a] : planes.aggregates) {
            const int64_t totalNs = (a.durationPs + 500) / 1000;
            writer.addAggregate(writer.intern(name), a.occurrences, totalNs,
                                a.haveSelf ? (a.selfPs + 500) / 1000 : totalNs);
            QJsonObject o{{"name", QString::fromStdString(name)},
                          {"occurrences", qint64(a.occurrences)},
                          {"duration_ps", qint64(a.durationPs)},
                          {"events", qint64(a.events)}};
            if (a.haveSelf) o.insert("self_duration_ps", qint64(a.selfPs));
            aggregated.append(o);
        }
        const trace::TraceSummary summary = writer.finish(
            [&](double fr) { ctx.progress.report(0.6 + 0.4 * fr, "building timeline"); });
        QJsonObject meta;
        meta.insert("planes", qint64(index));
        meta.insert("plane_details", planeInfo);
        meta.insert("lines", qint64(planes.lines));
        meta.insert("events", qint64(planes.events));
        meta.insert("aggregated_events", qint64(planes.aggregatedEvents));
        if (!aggregated.isEmpty()) meta.insert("aggregated_ops", aggregated);
        meta.insert("compressed_stats", qint64(planes.compressedStats));
        meta.insert("time_precision",
                    "picoseconds: slices keep XProf's sub-ns start and duration; op statistics "
                    "are whole ns");
        if (!hostnames.isEmpty()) meta.insert("hostnames", hostnames);
        if (!errors.isEmpty()) meta.insert("xspace_errors", errors);
        if (!warnings.isEmpty()) meta.insert("xspace_warnings", warnings);
        QJsonArray notes;
        if (planes.laneTracks > 0)
            notes.append(QString("%1 extra lanes hold events that overlap others on their line "
                                 "without nesting")
                             .arg(qint64(planes.laneTracks)));
        if (planes.corruptCompressedStats > 0)
            notes.append(QString("%1 compressed stats do not decompress; kept as a byte count")
                             .arg(qint64(planes.corruptCompressedStats)));
        meta.insert("warnings", notes);
        meta.insert("trace", trace::summaryJson(summary));
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& xspaceImporter() {
    static const XSpaceImporter importer;
    return importer;
}

}  // namespace stallscope
