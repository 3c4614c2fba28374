#pragma once
// Internals of the XSpace importer shared by its files: the wire readers (xspace_wire.cpp), the
// plane reader that maps planes, lines and events to tracks and slices (xspace_planes.cpp) and
// turns metadata and stats into arguments (xspace_stats.cpp). Not for use outside importers/xprof.

#include <QJsonObject>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/input_stream.h"
#include "core/trace/trace_format.h"
#include "core/trace/trace_sink.h"
#include "importers/common/proto_wire.h"
#include "xplane.pb.h"

namespace stallscope::xspace {

using proto_wire::Field;
// XSpace's rules: tags and lengths are plain 10-byte varints, groups are refused.
using XSpaceWire = proto_wire::Reader<proto_wire::Rules::Plain>;

[[noreturn]] void failAt(const std::string& path, const proto_wire::Malformed& error);

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
std::optional<std::string> decompressStat(std::string_view packed);

// Reads an XSpace's top-level fields from the (decompressed) stream, holding one field's bytes
// at a time: a plane is parsed from its own buffer, never the whole file (an XSpace is one
// message, but its planes are independent).
class SpaceReader {
  public:
    explicit SpaceReader(InputFile& in) : in_(in), buf_(size_t(1) << 16) {}

    // The next top-level field; for length-delimited ones `bytes` stays valid until the next
    // call. False at a clean end of input.
    bool next(Field& f);
    // Offset in the decompressed stream of the bytes last returned.
    size_t bytesOffset() const { return bytesOffset_; }

  private:
    // At least n bytes buffered after pos_, unless the input ends first.
    bool available(size_t n);
    // n bytes: from the header buffer when they fit, else into the field buffer (grown as
    // needed, never zero-filled) straight from the input.
    bool take(uint64_t n, std::string_view& out);
    // Field buffer of at least `capacity` bytes keeping its first `keep`.
    void reserveField(uint64_t capacity, size_t keep);
    [[noreturn]] void fail(size_t offset, const std::string& what) const;
    // A protobuf saved through a text pipeline (a public repository holds such a copy of an
    // XProf sample): every byte from 0x80 up became U+FFFD, "EF BF BD". Told from a truncated
    // file by those triples making up much of the bytes at hand.
    static constexpr const char* kTextMangled =
        ": the file was saved as text (bytes from 0x80 up replaced by U+FFFD, EF BF BD), which "
        "cannot be undone; import the original binary file";
    bool textMangled() const;
    InputFile& in_;
    std::vector<char> buf_;
    size_t pos_ = 0, end_ = 0;
    size_t offset_ = 0, bytesOffset_ = 0;
    std::unique_ptr<char[]> field_;
    size_t fieldCapacity_ = 0;
};

// Reads planes one at a time into a trace sink: a plane becomes a process, its lines threads
// (with extra lanes for events that overlap without nesting), its events slices.
class PlaneReader {
  public:
    // parentTrack: the track above the planes (a host of a multi-host run), -1 for none.
    PlaneReader(trace::TraceSink& writer, const std::string& path, int64_t parentTrack = -1)
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
    QJsonObject read(std::string_view planeBytes, size_t base, int64_t index);

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

    // Metadata and stats (xspace_stats.cpp).
    void readMapEntry(const Field& entry, size_t base);
    EventInfo& eventInfo(int64_t metadataId);
    std::string statName(int64_t id) const;
    // "\"name\":" of a stat, escaped once per plane.
    const std::string& statKey(int64_t id);

    // A stat as read from the wire (events are parsed by hand: building protobuf objects for
    // millions of events and stats cost more than the rest of the import).
    struct StatView {
        int64_t metadataId = 0;
        uint32_t field = 0;   // the value's field: 2 double, 3 uint64, 4 int64, 5 string, 6 bytes,
                              // 7 ref, 8 compressed string; 0 none
        uint64_t number = 0;  // varint values, or the double's bits
        std::string_view bytes;
    };
    static StatView viewOf(const xprof::XStat& s);
    StatView parseStat(std::string_view bytes, size_t base) const;

    void appendStatValue(std::string& out, const xprof::XStat& s);
    // One stat value as JSON; ref_value resolves to the referenced stat metadata's name and
    // compressed_str_value is decompressed.
    void appendStatValue(std::string& out, const StatView& s);

    // A varint within [p, end); false when it does not end there (the general walk then says
    // what is wrong).
    static bool smallVarint(const char*& p, const char* end, uint64_t& v) {
        return proto_wire::readVarint(p, end, v) == proto_wire::VarintRead::Ok;
    }
    // The stats of an event in their usual shape (each a metadata id then one value, nothing
    // else after the first stat) appended to args_ without the general walk: most events are
    // this. False, with args_ to be rebuilt, for anything else: the general walk takes it
    // (and reports what is malformed).
    bool fastStats(std::string_view stats);
    static trace::ArgValue argValue(const StatView& s);
    // The name a ref_value stands for, kept for the plane (values point into it).
    const std::string& refName(int64_t id);
    // The writer's layout for the stat metadata ids in layoutKey_, made once per plane.
    uint32_t argsLayout();

    // An event's arguments: its own stats, then its metadata's stats it does not override
    // (the event's own win), then the full name when a display name is shown. The metadata's
    // part is stored once per metadata id; an event with stats stores only its own over it.
    // `stats`: the event from its first stat (field 4) on, found while reading its times, so
    // the fields before it are not walked twice; empty when it has none.
    uint64_t eventArgs(EventInfo& info, std::string_view stats, size_t base);

    // Lines and events (xspace_planes.cpp).
    uint32_t laneTrack(int64_t lineId, const std::string& lineName, size_t lineOrder, size_t lane);

    // A timed event of a line, in start order (longer first) once sorted, with its exact start
    // and end. Each event is walked once: its times, and where its stats are.
    // 48 bytes: the end is computed when needed (a line may hold millions of events).
    struct Timed {
        trace::PreciseTime start;
        int64_t durNs;
        int64_t metadataId;
        int durPs;
        uint32_t index;
        uint32_t statsFrom;  // offset of the first stat in the event, kNoStats without
        trace::PreciseTime end() const {
            return trace::PreciseTime::sum(start.ns, start.ps, durNs, durPs);
        }
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
    static bool fastEvent(std::string_view event, EventFields& ev);
    // Reads a line into its lane tracks; returns its id.
    int64_t readLine(std::string_view bytes, size_t offset);
    // A line's id without reading its events (the last id field, as readLine takes it).
    int64_t lineIdOf(std::string_view bytes, size_t offset) const;

    trace::TraceSink& writer_;
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
    // The event's stats as fastStats found them: their values, and their metadata ids (8 bytes
    // each) naming the layout of their keys.
    std::vector<trace::ArgValue> packedValues_;
    std::string layoutKey_, lastLayoutKey_;
    uint32_t lastLayout_ = 0;
    std::unordered_map<std::string, uint32_t> argsLayouts_;
    std::unordered_map<int64_t, std::string> refNames_;
    std::vector<std::pair<std::string_view, size_t>> eventBytes_;  // of the line being read
    std::vector<Timed> timed_;                                     // of the line being read
};

}  // namespace stallscope::xspace
