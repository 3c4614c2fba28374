#pragma once

// JSON fixtures of the trace importer tests, kept out of the moc-scanned test source (moc
// misreads raw string literals holding quotes and backslashes).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fixtures {
extern const char* const kEventTypesJson;
extern const char* const kEdgeCasesJson;
extern const char* const kBlobArgsJson;
extern const char* const kBrokenJson;
extern const char* const kCutJson;
extern const char* const kConcurrentAsyncJson;
extern const char* const kBrokenArgsJson;
extern const char* const kTrailingGarbageJson;
// Kineto-style: epoch microseconds, flow ends written before their starts, a reused id, a
// zero-length "Stream Wait Event" at a flow's end, lone flow events, sub-ns times, a slice that
// never ends (see TestTraceImporters::chromeKinetoEpochFlowsUnended).
extern const char* const kKinetoEpochJson;
// Kineto 2021: bare inf/nan in args, and a raw tab and 0x01 inside an args string.
extern const char* const kNonStandardArgsJson;

// Protobuf wire format, field by field (for XSpace and Chakra fixtures).
namespace wire {
void varint(std::string& out, uint64_t v);
std::string intField(int number, uint64_t v);
std::string bytesField(int number, std::string_view bytes);
std::string doubleField(int number, double v);
}  // namespace wire

// gzip (RFC 1952) of `data`, as XProf writes compressed_str_value.
std::string gzip(std::string_view data);
// A small XSpace written field by field (the wire format of tsl's xplane.proto):
//   plane 0 "/device:TPU:0" with stats device_type_string "TPU test", peak_teraflops 918.5;
//     line 1 "XLA Ops" at 1000 ns:
//       fusion.1 (metadata 10, name "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %p), kind=kLoop",
//         stats hlo_category "convolution", flops 100) at 1.5 ns for 2.25 ns, own stats flops 42
//         and kind = ref_value 7 ("kLoop"),
//       fusion.1 again at 5 ns for 0.4 ns without stats,
//       copy (metadata 11) at 20 ns for 3 ns with tf_op as a gzip compressed_str_value
//         "jit(f)/copy";
//     line 2 "Async XLA Ops": a 0-10 ns and a 5-15 ns (overlapping, not nested) copy-start;
//     line 3 "Aggregated": copy x5 (7 us) and copy x3 (2 us) as num_occurrences events.
//   plane 1 "/host:metadata" with no lines.
std::string handWrittenXSpace();

// One XPlane built event by event: each distinct (display, text) gets an event metadata (the
// HLO text as its name, the display name when it differs), a peak_hbm_bw_gigabytes_per_second
// stat of 1000; lines in name order. bytes() is the XSpace holding just this plane.
class XPlaneWriter {
  public:
    explicit XPlaneWriter(const std::string& name);
    // A plane stat with an unsigned value (e.g. the Task Environment's profile_start_time).
    void planeStat(const std::string& name, uint64_t value);
    // An event of `line` at [startNs, startNs + durPs / 1000].
    // The event's own stats, each a number (int64_value) or a text (str_value), as XProf's GPU
    // tracer writes correlation_id and memcpy_details.
    using EventStats = std::vector<std::pair<std::string, std::variant<int64_t, std::string>>>;
    void event(const std::string& line, const std::string& display, const std::string& text,
               int64_t startNs, int64_t durPs, const EventStats& stats = {});
    std::string bytes() const;

  private:
    std::string plane_;
    int planeStats_ = 0;
    std::map<std::string, uint64_t> eventStatIds_;
    std::map<std::string, int64_t> meta_;
    std::map<std::string, std::string> lines_;
};
}  // namespace fixtures
