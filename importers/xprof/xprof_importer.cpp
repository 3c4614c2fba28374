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
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/json_escape.h"
#include "core/lanes.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "importers/common/proto_wire.h"
#include "importers/import_service.h"
#include "importers/registry.h"
#include "xplane.pb.h"

namespace stallscope {

namespace {

using trace::PreciseTime;
using trace::TraceSink;
using trace::TraceWriter;
using trace::TrackKind;
using trace::TrackSpec;

using proto_wire::Field;
// XSpace's rules: tags and lengths are plain 10-byte varints, groups are refused.
using XSpaceWire = proto_wire::Reader<proto_wire::Rules::Plain>;

[[noreturn]] void failAt(const std::string& path, const proto_wire::Malformed& error) {
    throw InputError(atOffset(path, static_cast<long long>(error.offset),
                              "XSpace: " + proto_wire::describe(error)));
}

// Walks the fields of a serialized message without materialising it, so an XSpace's planes and
// lines are parsed one at a time (an XSpace is one message, not a stream); errors name the file
// and the offset.
class WireReader {
  public:
    WireReader(std::string_view data, size_t base, const std::string& path)
        : reader_(data, base), path_(path) {}
    bool next(Field& f) {
        try {
            return reader_.next(f);
        } catch (const proto_wire::Malformed& error) {
            failAt(path_, error);
        }
    }

  private:
    XSpaceWire reader_;
    const std::string& path_;
};

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

// Reads an XSpace's top-level fields from the (decompressed) stream, holding one field's bytes
// at a time: a plane is parsed from its own buffer, never the whole file (an XSpace is one
// message, but its planes are independent).
class SpaceReader {
  public:
    explicit SpaceReader(InputFile& in) : in_(in), buf_(size_t(1) << 16) {}

    // The next top-level field; for length-delimited ones `bytes` stays valid until the next
    // call. False at a clean end of input.
    bool next(Field& f) {
        // A field's tag and varint (or length) take at most 20 bytes: all in the buffer unless
        // the input ends first, so the reader sees a truncated one only at the real end.
        available(2 * proto_wire::kMaxVarintBytes);
        if (pos_ == end_) return false;
        XSpaceWire header(std::string_view(buf_.data() + pos_, end_ - pos_), offset_);
        try {
            header.header(f);
        } catch (const proto_wire::Malformed& error) {
            if (textMangled()) fail(error.offset, proto_wire::describe(error) + kTextMangled);
            failAt(in_.path(), error);
        }
        pos_ += header.consumed();
        offset_ += header.consumed();
        switch (f.wireType) {
            case proto_wire::kFixed64:
            case proto_wire::kFixed32: {
                const size_t size = f.wireType == proto_wire::kFixed64 ? 8 : 4;
                if (!take(size, f.bytes)) fail(f.offset, "a fixed-size field runs past the end");
                std::memcpy(&f.value, f.bytes.data(), size);
                break;
            }
            case proto_wire::kLength:
                if (!take(f.value, f.bytes))
                    fail(f.offset, textMangled() ? std::string("a length-delimited field runs "
                                                               "past the end") +
                                                       kTextMangled
                                                 : "a length-delimited field runs past the end "
                                                   "(truncated file?)");
                break;
            default:
                break;
        }
        return true;
    }
    // Offset in the decompressed stream of the bytes last returned.
    size_t bytesOffset() const { return bytesOffset_; }

  private:
    // At least n bytes buffered after pos_, unless the input ends first.
    bool available(size_t n) {
        if (end_ - pos_ >= n) return true;
        std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
        end_ -= pos_;
        pos_ = 0;
        while (end_ < n) {
            const size_t got = in_.read(buf_.data() + end_, buf_.size() - end_);
            if (got == 0) return false;
            end_ += got;
        }
        return true;
    }
    // n bytes: from the header buffer when they fit, else into the field buffer (grown as
    // needed, never zero-filled) straight from the input.
    bool take(uint64_t n, std::string_view& out) {
        bytesOffset_ = offset_;
        if (n <= buf_.size() / 2) {
            if (!available(size_t(n))) return false;
            out = std::string_view(buf_.data() + pos_, size_t(n));
            pos_ += size_t(n);
            offset_ += size_t(n);
            return true;
        }
        // A length past the end of an uncompressed file is refused before allocating; for
        // compressed input the buffer grows as bytes arrive, so a corrupt length fails at the
        // end of the input, not in the allocator.
        if (in_.compression() == Compression::None &&
            n > in_.fileSize() - std::min(in_.fileSize(), uint64_t(offset_)))
            return false;
        size_t have = std::min<size_t>(size_t(n), end_ - pos_);
        reserveField(std::min<uint64_t>(n, std::max<uint64_t>(have, uint64_t(64) << 20)), 0);
        std::memcpy(field_.get(), buf_.data() + pos_, have);
        pos_ += have;
        while (have < n) {
            if (have == fieldCapacity_)
                reserveField(std::min<uint64_t>(n, uint64_t(fieldCapacity_) * 2), have);
            const size_t room = std::min<size_t>(fieldCapacity_, size_t(n)) - have;
            const size_t got = in_.read(field_.get() + have, room);
            if (got == 0) return false;
            have += got;
        }
        offset_ += size_t(n);
        out = std::string_view(field_.get(), size_t(n));
        return true;
    }
    // Field buffer of at least `capacity` bytes keeping its first `keep`.
    void reserveField(uint64_t capacity, size_t keep) {
        if (capacity <= fieldCapacity_) return;
        std::unique_ptr<char[]> grown(new char[size_t(capacity)]);
        if (keep > 0) std::memcpy(grown.get(), field_.get(), keep);
        field_ = std::move(grown);
        fieldCapacity_ = size_t(capacity);
    }
    [[noreturn]] void fail(size_t offset, const std::string& what) const {
        throw InputError(atOffset(in_.path(), static_cast<long long>(offset), "XSpace: " + what));
    }
    // A protobuf saved through a text pipeline (a public repository holds such a copy of an
    // XProf sample): every byte from 0x80 up became U+FFFD, "EF BF BD". Told from a truncated
    // file by those triples making up much of the bytes at hand.
    static constexpr const char* kTextMangled =
        ": the file was saved as text (bytes from 0x80 up replaced by U+FFFD, EF BF BD), which "
        "cannot be undone; import the original binary file";
    bool textMangled() const {
        const std::string_view held(buf_.data(), end_);
        size_t triples = 0;
        for (size_t at = held.find("\xEF\xBF\xBD"); at != std::string_view::npos;
             at = held.find("\xEF\xBF\xBD", at + 3))
            ++triples;
        return triples >= 8 && triples * 3 * 10 >= held.size();
    }
    InputFile& in_;
    std::vector<char> buf_;
    size_t pos_ = 0, end_ = 0;
    size_t offset_ = 0, bytesOffset_ = 0;
    std::unique_ptr<char[]> field_;
    size_t fieldCapacity_ = 0;
};

int64_t floorDiv(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

class PlaneReader {
  public:
    // parentTrack: the track above the planes (a host of a multi-host run), -1 for none.
    PlaneReader(TraceSink& writer, const std::string& path, int64_t parentTrack = -1)
        : writer_(writer), path_(path), parentTrack_(parentTrack) {}

    // The Task Environment plane's profile_start_time (ns since the epoch): XProf stores times
    // relative to the session's start, this is where that start was.
    std::optional<int64_t> profileStartTime;
    uint64_t events = 0, lines = 0, timedEvents = 0, aggregatedEvents = 0;
    uint64_t compressedStats = 0, corruptCompressedStats = 0, laneTracks = 0;
    // Each plane's process track, and whether its name is made from its index (unnamed).
    std::vector<std::pair<uint32_t, bool>> planeTracks;
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
        eventInfoIndex_.clear();
        statKeys_.clear();
        statKeyIndex_.clear();
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
                throw InputError(atOffset(path_, static_cast<long long>(offset),
                                          "XSpace: malformed plane stat"));
            std::string value;
            appendStatValue(value, stat);
            if (statName(stat.metadata_id()) == "profile_start_time") {
                if (stat.value_case() == xprof::XStat::kUint64Value)
                    profileStartTime = int64_t(stat.uint64_value());
                else if (stat.value_case() == xprof::XStat::kInt64Value)
                    profileStartTime = stat.int64_value();
            }
            stats.insert(QString::fromStdString(statName(stat.metadata_id())),
                         QJsonDocument::fromJson(QByteArray::fromStdString("[" + value + "]"))
                             .array()
                             .at(0));
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
        // The metadata's stats, then the full name (HLO text) when a display name is shown, as
        // JSON members ",\"key\":value"; made once per metadata id.
        std::string tailText;
        uint64_t sharedArgs = 0;
        bool sharedArgsMade = false;
    };

    void readMapEntry(const Field& entry, size_t base) {
        WireReader r(entry.bytes, base, path_);
        Field f;
        int64_t key = 0;
        std::string_view value;
        while (r.next(f)) {
            if (f.number == 1 && f.wireType == 0) key = int64_t(f.value);
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
        // Metadata ids are small and dense in practice: a direct index first.
        if (metadataId >= 0 && metadataId < int64_t(eventInfoIndex_.size()) &&
            eventInfoIndex_[size_t(metadataId)])
            return *eventInfoIndex_[size_t(metadataId)];
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
            for (const xprof::XStat& stat : m.stats()) {
                info.tailText += ",";
                info.tailText += statKey(stat.metadata_id());
                appendStatValue(info.tailText, stat);
            }
            if (display && m.name() != m.display_name()) {
                info.tailText += ",\"long_name\":";
                json::appendString(info.tailText, m.name());
            }
        }
        info.name = writer_.intern(info.shownName);
        EventInfo& made = eventInfo_.emplace(metadataId, std::move(info)).first->second;
        if (metadataId >= 0 && metadataId < (int64_t(1) << 20)) {
            if (size_t(metadataId) >= eventInfoIndex_.size())
                eventInfoIndex_.resize(size_t(metadataId) + 1, nullptr);
            eventInfoIndex_[size_t(metadataId)] = &made;  // map nodes do not move
        }
        return made;
    }

    std::string statName(int64_t id) const {
        auto it = statMeta_.find(id);
        return it == statMeta_.end() ? "stat " + std::to_string(id) : it->second.name();
    }

    // "\"name\":" of a stat, escaped once per plane.
    const std::string& statKey(int64_t id) {
        // Stat metadata ids are small in practice: a direct index first.
        const bool indexed = id >= 0 && id < 4096;
        if (indexed && size_t(id) < statKeyIndex_.size() && statKeyIndex_[size_t(id)])
            return *statKeyIndex_[size_t(id)];
        auto it = statKeys_.find(id);
        if (it == statKeys_.end()) {
            std::string key;
            json::appendString(key, statName(id));
            key.push_back(':');
            it = statKeys_.emplace(id, std::move(key)).first;
        }
        if (indexed) {
            if (size_t(id) >= statKeyIndex_.size()) statKeyIndex_.resize(size_t(id) + 1, nullptr);
            statKeyIndex_[size_t(id)] = &it->second;  // map nodes do not move
        }
        return it->second;
    }

    // A stat as read from the wire (events are parsed by hand: building protobuf objects for
    // millions of events and stats cost more than the rest of the import).
    struct StatView {
        int64_t metadataId = 0;
        uint32_t field = 0;   // the value's field: 2 double, 3 uint64, 4 int64, 5 string, 6 bytes,
                              // 7 ref, 8 compressed string; 0 none
        uint64_t number = 0;  // varint values, or the double's bits
        std::string_view bytes;
    };
    static StatView viewOf(const xprof::XStat& s) {
        StatView v;
        v.metadataId = s.metadata_id();
        switch (s.value_case()) {
            case xprof::XStat::kDoubleValue: {
                const double d = s.double_value();
                std::memcpy(&v.number, &d, 8);
                v.field = 2;
                break;
            }
            case xprof::XStat::kUint64Value:
                v.field = 3;
                v.number = s.uint64_value();
                break;
            case xprof::XStat::kInt64Value:
                v.field = 4;
                v.number = uint64_t(s.int64_value());
                break;
            case xprof::XStat::kStrValue:
                v.field = 5;
                v.bytes = s.str_value();
                break;
            case xprof::XStat::kBytesValue:
                v.field = 6;
                v.bytes = s.bytes_value();
                break;
            case xprof::XStat::kRefValue:
                v.field = 7;
                v.number = s.ref_value();
                break;
            case xprof::XStat::kCompressedStrValue:
                v.field = 8;
                v.bytes = s.compressed_str_value();
                break;
            default:
                break;
        }
        return v;
    }
    StatView parseStat(std::string_view bytes, size_t base) const {
        StatView v;
        WireReader r(bytes, base, path_);
        Field f;
        while (r.next(f)) {
            if (f.number == 1 && f.wireType == 0) {
                v.metadataId = int64_t(f.value);
            } else if (f.number == 2 && f.wireType == 1) {
                v.field = 2;
                v.number = f.value;
            } else if ((f.number == 3 || f.number == 4 || f.number == 7) && f.wireType == 0) {
                v.field = f.number;
                v.number = f.value;
            } else if ((f.number == 5 || f.number == 6 || f.number == 8) && f.wireType == 2) {
                v.field = f.number;
                v.bytes = f.bytes;
            }
        }
        return v;
    }

    void appendStatValue(std::string& out, const xprof::XStat& s) {
        appendStatValue(out, viewOf(s));
    }
    // One stat value as JSON; ref_value resolves to the referenced stat metadata's name and
    // compressed_str_value is decompressed.
    void appendStatValue(std::string& out, const StatView& s) {
        char buf[32];
        switch (s.field) {
            case 2: {
                double d;
                std::memcpy(&d, &s.number, 8);
                std::snprintf(buf, sizeof buf, "%.17g", d);
                out += std::isfinite(d) ? buf : "null";
                break;
            }
            case 3:
            case 4: {
                const auto r = s.field == 3
                                   ? std::to_chars(buf, buf + sizeof buf, s.number)
                                   : std::to_chars(buf, buf + sizeof buf, int64_t(s.number));
                out.append(buf, r.ptr);
                break;
            }
            case 5:
                json::appendString(out, s.bytes);
                break;
            case 6:
                json::appendString(out, "<" + std::to_string(s.bytes.size()) + " bytes>");
                break;
            case 7:
                json::appendString(out, statName(int64_t(s.number)));
                break;
            case 8: {
                ++compressedStats;
                const auto text = decompressStat(s.bytes);
                if (text) {
                    json::appendString(out, *text);
                } else {
                    ++corruptCompressedStats;
                    json::appendString(out, "<" + std::to_string(s.bytes.size()) +
                                                " bytes that do not decompress>");
                }
                break;
            }
            default:
                out += "null";
        }
    }

    // A varint within [p, end); false when it does not end there (the general walk then says
    // what is wrong).
    static bool smallVarint(const char*& p, const char* end, uint64_t& v) {
        return proto_wire::readVarint(p, end, v) == proto_wire::VarintRead::Ok;
    }
    // The stats of an event in their usual shape (each a metadata id then one value, nothing
    // else after the first stat) appended to args_ without the general walk: most events are
    // this. False, with args_ to be rebuilt, for anything else: the general walk takes it
    // (and reports what is malformed).
    bool fastStats(std::string_view stats) {
        const char* p = stats.data();
        const char* const end = p + stats.size();
        while (p < end) {
            if (*p++ != 0x22) return false;  // field 4, length-delimited
            uint64_t n;
            if (!smallVarint(p, end, n) || n > uint64_t(end - p)) return false;
            const char* q = p;
            const char* const statEnd = p + n;
            p = statEnd;
            StatView stat;
            if (q == statEnd || *q++ != 0x08) return false;  // metadata_id
            uint64_t id;
            if (!smallVarint(q, statEnd, id) || q == statEnd) return false;
            const uint8_t tag = uint8_t(*q++);
            if (tag == 0x11) {  // double
                if (statEnd - q != 8) return false;
                std::memcpy(&stat.number, q, 8);
                stat.field = 2;
            } else if (tag == 0x18 || tag == 0x20 || tag == 0x38) {  // uint64, int64, ref
                if (!smallVarint(q, statEnd, stat.number) || q != statEnd) return false;
                stat.field = tag >> 3;
            } else if (tag == 0x2a) {  // str_value
                uint64_t len;
                if (!smallVarint(q, statEnd, len) || len != uint64_t(statEnd - q)) return false;
                stat.bytes = std::string_view(q, size_t(len));
                stat.field = 5;
            } else {
                return false;
            }
            stat.metadataId = int64_t(id);
            if (args_.size() > 1) args_.push_back(',');
            args_ += statKey(stat.metadataId);
            appendStatValue(args_, stat);
        }
        return true;
    }

    // An event's arguments: its own stats, then its metadata's stats it does not override
    // (the event's own win), then the full name when a display name is shown. The metadata's
    // part is stored once per metadata id; an event with stats stores only its own over it.
    // `stats`: the event from its first stat (field 4) on, found while reading its times, so
    // the fields before it are not walked twice; empty when it has none.
    uint64_t eventArgs(EventInfo& info, std::string_view stats, size_t base) {
        if (!info.sharedArgsMade) {
            info.sharedArgsMade = true;
            info.sharedArgs =
                info.tailText.empty() ? 0 : writer_.addArgs("{" + info.tailText.substr(1) + "}");
        }
        args_.assign("{");
        if (fastStats(stats)) {
            if (args_.size() == 1) return info.sharedArgs;
            args_.push_back('}');
            return writer_.addArgsOver(info.sharedArgs, args_);
        }
        args_.assign("{");
        WireReader r(stats, base, path_);
        Field f;
        while (r.next(f)) {
            if (f.number != 4 || f.wireType != 2) continue;
            const StatView stat = parseStat(f.bytes, f.offset);
            if (args_.size() > 1) args_.push_back(',');
            args_ += statKey(stat.metadataId);
            appendStatValue(args_, stat);
        }
        if (args_.size() == 1) return info.sharedArgs;
        args_.push_back('}');
        return writer_.addArgsOver(info.sharedArgs, args_);
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

    // A timed event of a line, in start order (longer first) once sorted, with its exact start
    // and end. Each event is walked once: its times, and where its stats are.
    // 48 bytes: the end is computed when needed (a line may hold millions of events).
    struct Timed {
        PreciseTime start;
        int64_t durNs;
        int64_t metadataId;
        int durPs;
        uint32_t index;
        uint32_t statsFrom;  // offset of the first stat in the event, kNoStats without
        PreciseTime end() const { return PreciseTime::sum(start.ns, start.ps, durNs, durPs); }
    };

    static constexpr uint32_t kNoStats = UINT32_MAX;
    // What the timeline needs of an event.
    struct EventFields {
        int64_t metadataId = 0, offsetPs = 0, durationPs = 0, occurrences = 0;
        bool aggregated = false;
        uint32_t statsFrom = kNoStats;  // offset of the first stat in the event
        void set(uint32_t number, uint64_t v) {
            if (number == 1) {
                metadataId = int64_t(v);
            } else if (number == 2) {
                offsetPs = int64_t(v);
                aggregated = false;  // one of offset_ps and num_occurrences: the last wins
            } else if (number == 3) {
                durationPs = int64_t(v);
            } else if (number == 5) {
                occurrences = int64_t(v);
                aggregated = true;
            }
        }
    };
    // An event whose fields all have one-byte tags and are varints or length-delimited (what
    // XProf writes) read without the general walk; false for anything else, which the general
    // walk takes (and reports when malformed).
    static bool fastEvent(std::string_view event, EventFields& ev) {
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

    void readLine(std::string_view bytes, size_t offset) {
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
                    eventBytes.emplace_back(f.bytes,
                                            size_t(f.bytes.data() - bytes.data()) + offset);
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
        for (const Timed& t : timed) {
            const size_t lane = laneOf.place(t.start, t.end());
            if (lane == laneTracks.size())
                laneTracks.push_back(laneTrack(lineId, lineName, order->second, lane));
            EventInfo& info = eventInfo(t.metadataId);
            const auto& [event, at] = eventBytes[t.index];
            const uint64_t args =
                t.statsFrom == kNoStats
                    ? eventArgs(info, {}, at)
                    : eventArgs(info, event.substr(t.statsFrom), at + t.statsFrom);
            writer_.addSlice(laneTracks[lane], t.start.ns, t.durNs, info.name, args,
                             uint16_t(t.start.ps), uint16_t(t.durPs));
        }
    }

    TraceSink& writer_;
    const std::string& path_;
    int64_t parentTrack_ = -1;
    uint32_t process_ = 0;
    std::string planeName_;
    std::unordered_map<int64_t, xprof::XEventMetadata> eventMeta_;
    std::unordered_map<int64_t, xprof::XStatMetadata> statMeta_;
    std::unordered_map<int64_t, EventInfo> eventInfo_;
    std::vector<EventInfo*> eventInfoIndex_;
    std::unordered_map<int64_t, std::string> statKeys_;
    std::vector<const std::string*> statKeyIndex_;
    std::unordered_map<int64_t, std::vector<uint32_t>> lineTracks_;  // line id -> lane tracks
    std::unordered_map<int64_t, size_t> lineOrder_;
    std::string args_;
    std::vector<std::pair<std::string_view, size_t>> eventBytes_;  // of the line being read
    std::vector<Timed> timed_;                                     // of the line being read
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
        if (named) return 30;
        // Under another name ("host.xspace.pb", "profile.pb"): a first plane named like
        // XProf's, near the start.
        const std::string_view head = std::string_view(sniff.head).substr(0, 64);
        if (plane && (head.find("/device:") != std::string_view::npos ||
                      head.find("/host:") != std::string_view::npos))
            return 60;
        return 0;
    }

    void run(ImportContext& ctx) const override {
        // Room for a large plane's events: its tracks are then written without a spill file.
        TraceWriter writer(ctx.workspace, ctx.profileId, importBuffers().xprofTraceRecords);
        SpaceResult space = readSpace(writer, ctx.input, ctx.progress, {});
        const trace::TraceSummary summary = writer.finish(
            [&](double fr) { ctx.progress.report(0.6 + 0.4 * fr, "building timeline"); });
        space.meta.insert("trace", trace::summaryJson(summary));
        ctx.metadataJson = QJsonDocument(space.meta).toJson(QJsonDocument::Compact).toStdString();
    }

    bool readsHosts() const override { return true; }
    void readHost(HostImportContext& ctx) const override {
        SpaceOptions options;
        options.parentTrack = ctx.hostTrack;
        options.firstPlaneIndex = ctx.firstPid;
        // The host's clock offset is known only once its file is read: its tracks are written
        // after that, so they are not handed to the writer's worker plane by plane.
        options.writePlanesEarly = false;
        SpaceResult space = readSpace(ctx.sink, ctx.input, ctx.progress, options);
        ctx.pidsUsed = space.planes;
        if (!space.hostnames.empty()) ctx.hostName = space.hostnames.front();
        if (space.profileStartTime) {
            ctx.clockBaseNs = space.profileStartTime;
            ctx.clockSource = "xprof profile_start_time";
        }
        ctx.metadata = std::move(space.meta);
        // Plane indices are the host's process ids: its process tracks and plane details move
        // to where the run places the host.
        ctx.renumberPids = [planes = std::move(space.planeTracks), read = ctx.firstPid](
                               trace::TraceSink& sink, QJsonObject& metadata, int64_t firstPid) {
            const int64_t shift = firstPid - read;
            for (const auto& [track, unnamed] : planes) {
                TrackSpec& spec = sink.track(track);
                spec.sortIndex += shift;
                spec.pid = std::to_string(spec.sortIndex);
                if (unnamed) spec.name = "Plane " + spec.pid;
            }
            QJsonArray details = metadata.value("plane_details").toArray();
            for (QJsonValueRef plane : details) {
                QJsonObject o = plane.toObject();
                o.insert("index", o.value("index").toInteger() + shift);
                plane = o;
            }
            metadata.insert("plane_details", details);
        };
    }

  private:
    struct SpaceOptions {
        int64_t parentTrack = -1;
        int64_t firstPlaneIndex = 0;
        bool writePlanesEarly = true;
    };
    struct SpaceResult {
        QJsonObject meta;  // without "trace" (the writer's summary)
        int64_t planes = 0;
        std::vector<std::string> hostnames;
        std::optional<int64_t> profileStartTime;
        std::vector<std::pair<uint32_t, bool>> planeTracks;  // process track, named by index
    };

    // Reads an XSpace's planes into `writer` (progress up to 0.6).
    static SpaceResult readSpace(TraceSink& writer, InputFile& input, Progress& progress,
                                 const SpaceOptions& options) {
        progress.report(0.0, "reading XSpace");
        PlaneReader planes(writer, input.path(), options.parentTrack);
        SpaceReader space(input);
        Field f;
        QJsonArray planeInfo, hostnames, errors, warnings;
        SpaceResult result;
        int64_t index = options.firstPlaneIndex;
        while (space.next(f)) {
            if (f.wireType != 2) continue;
            if (f.number == 1) {
                planeInfo.append(planes.read(f.bytes, space.bytesOffset(), index++));
                // A plane's lines are complete: written now, their records need not be spilled.
                if (options.writePlanesEarly)
                    writer.finishTracksBefore(uint32_t(writer.trackCount()));
                progress.report(0.6 * input.fraction(), "reading planes");
            } else if (f.number == 2) {
                errors.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 3) {
                warnings.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 4) {
                hostnames.append(QString::fromStdString(std::string(f.bytes)));
                result.hostnames.emplace_back(f.bytes);
            }
        }
        result.planes = index - options.firstPlaneIndex;
        if (result.planes == 0) throw InputError(input.path() + ": XSpace without planes");
        result.profileStartTime = planes.profileStartTime;
        result.planeTracks = std::move(planes.planeTracks);
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
        QJsonObject& meta = result.meta;
        meta.insert("planes", qint64(result.planes));
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
        return result;
    }
};

}  // namespace

const Importer& xspaceImporter() {
    static const XSpaceImporter importer;
    return importer;
}

}  // namespace stallscope
