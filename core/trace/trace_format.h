#pragma once

// Storage format of trace profiles (kind "trace"): tracks, strings, args, flows and op statistics
// are rows (schema v4); slices, instants and counter samples are varint-packed chunks in
// trace_chunks, one sequence per (track, level). Level 0 holds every item; level k >= 1 holds
// the same track drawn at a resolution of lodWidth(k) ns: slices at least that long as
// themselves, runs of narrower ones at one depth folded into counted items per bucket.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_codec.h"

namespace stallscope::trace {

// Times are integer nanoseconds. Slices may carry a sub-nanosecond remainder (XProf measures in
// picoseconds): SliceItem::startPs/durPs, stored only for slices that have one, so formats with
// whole-ns times pay nothing for it.
constexpr const char* kTimeUnit = "ns";
constexpr int kMaxLevel = 31;
constexpr size_t kChunkItems = 2048;
constexpr size_t kArgsPerChunk = 1024;
constexpr uint32_t kNoArgs = 0;
// First byte of an args entry that overlays another one (see TraceWriter::addArgsOver).
constexpr char kArgsOverlay = '\x01';
// First byte of an overlay whose own members are typed values under a layout's keys (see
// ArgsStore::addPacked); the layouts are in the blobs stream kArgsLayoutsStream.
constexpr char kArgsPacked = '\x02';
constexpr const char* kArgsLayoutsStream = "trace_args_layouts";

// Width of one bucket at LOD level k (level 0: exact).
constexpr int64_t lodWidth(int level) {
    return level <= 0 ? 0 : int64_t(1) << (2 * level);
}

// a + b where it fits; past the range, near its end (a time offset moving a track's times).
inline int64_t shiftedTime(int64_t a, int64_t b) {
    int64_t out = 0;
    if (!__builtin_add_overflow(a, b, &out)) return out;
    return b > 0 ? INT64_MAX - 2 : INT64_MIN;
}

enum class ItemKind : uint8_t { Slice = 0, Instant = 1, Folded = 2 };

// A time with picosecond resolution: whole ns plus 0..999 ps, ordered. Kept as a pair so epoch
// timestamps (about 1.7e18 ns) do not overflow.
struct PreciseTime {
    int64_t ns = 0;
    int32_t ps = 0;
    auto operator<=>(const PreciseTime&) const = default;
    bool operator==(const PreciseTime&) const = default;
    // start + duration, both split into ns and a 0..999 ps remainder.
    static PreciseTime sum(int64_t ns, int ps, int64_t durNs, int durPs) {
        const int p = ps + durPs;
        return {ns + durNs + p / 1000, p % 1000};
    }
};

// One drawable item of a slice track.
struct SliceItem {
    int64_t start = 0;
    int64_t dur = 0;  // 0 for instants; whole ns (the sub-ns rest is durPs)
    uint32_t name = 0;
    uint32_t depth = 0;
    ItemKind kind = ItemKind::Slice;
    // A slice whose end the trace never recorded (a B without its E): its duration runs to the
    // end of the trace and is unknown, so statistics leave it out. (Beside `kind`: no padding.)
    bool unended = false;
    uint16_t startPs = 0;  // sub-ns part of the start, 0..999 ps (slices only)
    uint16_t durPs = 0;    // sub-ns part of the duration, 0..999 ps (slices only)
    uint64_t count = 1;    // slices folded into this item (1 unless Folded)
    uint64_t args = 0;     // 1-based args id, 0 when none (Slice and Instant)
    // End in whole ns, rounded up so that range queries include the fraction.
    int64_t end() const {
        const int p = startPs + durPs;
        return start + dur + (p == 0 ? 0 : p <= 1000 ? 1 : 2);
    }
    PreciseTime preciseStart() const { return {start, startPs}; }
    PreciseTime preciseEnd() const { return PreciseTime::sum(start, startPs, dur, durPs); }
    // Exact duration in ns (fractional when picoseconds were recorded).
    double durNs() const { return double(dur) + durPs * 1e-3; }
    bool hasPs() const { return startPs != 0 || durPs != 0; }
};

// One counter sample (level 0) or the summary of a bucket (level >= 1).
struct CounterItem {
    int64_t ts = 0;
    double value = 0;  // the last value in the bucket
    double min = 0, max = 0;
    uint64_t count = 1;
};

// The packed chunks are written with the kind-neutral byte codec.
using ::stallscope::ByteReader;
using ::stallscope::ByteWriter;

// Strings, flows and op statistics of a profile are stored packed in the workspace's `blobs`
// table (one zstd frame per kPackedRows entries) instead of one SQLite row each: at about a
// microsecond per row, rows bound imports with a unique name or a flow per node. Profiles
// written before keep their trace_strings/trace_flows/trace_ops rows; readers take either.
constexpr size_t kPackedRows = 65536;
constexpr const char* kStringsStream = "trace_strings";
constexpr const char* kFlowsStream = "trace_flows";
constexpr const char* kOpsStream = "trace_ops";

struct PackedFlow {
    uint32_t name = 0;
    int64_t fromTrack = 0, fromTs = 0;
    int32_t fromDepth = -1;
    int64_t toTrack = 0, toTs = 0;
    int32_t toDepth = -1;
};
struct PackedOp {
    uint32_t name = 0;
    uint64_t count = 0;
    int64_t total = 0, self = 0, min = 0, max = 0, p50 = 0, p95 = 0;
};
// Slices per op that never ended (left out of the op's statistics), in a stream of their own
// (name, count) so that profiles written before read as having none.
constexpr const char* kOpsUnendedStream = "trace_ops_unended";
void encodeOpUnended(uint32_t name, uint64_t unended, ByteWriter& out);
void decodeOpsUnended(std::string_view data, std::vector<std::pair<uint32_t, uint64_t>>& out);

void encodeString(std::string_view text, ByteWriter& out);
void decodeStrings(std::string_view data, std::vector<std::string>& out);
// Times are deltas from the previous flow's (flows are written in creation order, mostly
// ascending), so a chunk must be decoded from its start.
void encodeFlow(const PackedFlow& flow, const PackedFlow& previous, ByteWriter& out);
void decodeFlows(std::string_view data, std::vector<PackedFlow>& out);
void encodeOp(const PackedOp& op, ByteWriter& out);
void decodeOps(std::string_view data, std::vector<PackedOp>& out);
// zstd level 1 frame of `raw` (with its size, so unpack needs no guess), and back: unpacking
// reads one frame or several in a row (large payloads are packed a piece at a time).
void packChunk(std::string_view raw, std::string& packed);
std::string unpackChunk(std::string_view packed);

void encodeSlices(const std::vector<SliceItem>& items, ByteWriter& out);
void decodeSlices(std::string_view data, std::vector<SliceItem>& out);
void encodeCounters(const std::vector<CounterItem>& items, ByteWriter& out);
void decodeCounters(std::string_view data, std::vector<CounterItem>& out);

}  // namespace stallscope::trace
