#include "tests/importers/trace_fixtures.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace fixtures {

const char* const kEventTypesJson = R"({"displayTimeUnit":"ns","traceName":"t","traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"proc"}},
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}},
{"ph":"M","name":"thread_sort_index","pid":1,"tid":2,"args":{"sort_index":-5}},
{"ph":"X","name":"send","pid":1,"tid":2,"ts":1.5,"dur":2.25,"bind_id":"7","flow_out":true},
{"ph":"X","name":"recv","pid":1,"tid":3,"ts":10,"dur":1,"bind_id":"7","flow_in":true},
{"ph":"C","name":"mem","id":"a","pid":1,"ts":1,"args":{"used":5,"free":"7"}},
{"ph":"C","name":"mem","id":"a","pid":1,"ts":2,"args":{"used":6,"free":3}},
{"ph":"i","name":"t","pid":1,"tid":2,"ts":3},{"ph":"I","name":"p","s":"p","pid":1,"ts":3},
{"ph":"S","name":"job","cat":"c","id":9,"pid":1,"ts":4},{"ph":"T","name":"job","cat":"c","id":9,"pid":1,"ts":5},
{"ph":"F","name":"job","cat":"c","id":9,"pid":1,"ts":8}
]})";

const char* const kEdgeCasesJson = R"([
{"ph":"E","pid":1,"tid":1,"ts":0.5},
{"ph":"B","name":"b","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":3},
{"ph":"X","name":"A","pid":1,"tid":2,"ts":0,"dur":10},
{"ph":"X","name":"B","pid":1,"tid":2,"ts":5,"dur":10},
{"ph":"Z","name":"mystery","pid":1,"tid":1,"ts":2},
{"ph":"X","name":"名前 ünïcode","pid":1,"tid":3,"ts":20,"dur":1},
{"ph":"X","name":"big","pid":1,"tid":4,"ts":30,"dur":1,"args":{"blob":")";

const char* const kKinetoEpochJson = R"({"schemaVersion":1,"traceEvents":[
{"ph":"f","id":7,"pid":0,"tid":7,"ts":1700000000000110,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","pid":0,"tid":7,"ts":1700000000000110,"dur":50,"name":"kernelA","cat":"kernel"},
{"ph":"X","pid":1,"tid":1,"ts":1700000000000100,"dur":5,"name":"cudaLaunchKernel"},
{"ph":"s","id":7,"pid":1,"tid":1,"ts":1700000000000100,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":7,"pid":0,"tid":7,"ts":1700000000000205,"cat":"ac2g","name":"ac2g"},
{"ph":"s","id":7,"pid":1,"tid":1,"ts":1700000000000200,"cat":"ac2g","name":"ac2g"},
{"ph":"X","pid":1,"tid":1,"ts":1700000000000200,"dur":5,"name":"cudaLaunchKernel"},
{"ph":"X","pid":0,"tid":7,"ts":1700000000000230,"dur":20,"name":"kernelB","cat":"kernel"},
{"ph":"f","id":9,"pid":0,"tid":7,"ts":1700000000000300,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","pid":1,"tid":1,"ts":1700000000000300,"dur":0,"name":"cudaStreamWaitEvent"},
{"ph":"s","id":9,"pid":1,"tid":1,"ts":1700000000000300,"cat":"ac2g","name":"ac2g"},
{"ph":"X","pid":0,"tid":7,"ts":1700000000000300,"dur":0,"name":"Stream Wait Event"},
{"ph":"f","id":11,"pid":0,"tid":7,"ts":1700000000000400,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"s","id":12,"pid":1,"tid":1,"ts":1700000000000400,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":9,"pid":0,"tid":7,"ts":1700000000000500,"cat":"other","name":"x","bp":"e"},
{"ph":"X","pid":0,"tid":7,"ts":1700000000000450,"dur":5,"name":"kernelC"},
{"ph":"f","id":13,"pid":0,"tid":7,"ts":1700000000000450,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","pid":1,"tid":1,"ts":1700000000000470,"dur":5,"name":"cudaLaunchKernel"},
{"ph":"s","id":13,"pid":1,"tid":1,"ts":1700000000000470,"cat":"ac2g","name":"ac2g"},
{"ph":"X","pid":2,"tid":2,"ts":1700000000000600.0005,"dur":1.2345,"name":"precise"},
{"ph":"B","pid":2,"tid":1,"ts":1700000000000650,"name":"done"},
{"ph":"E","pid":2,"tid":1,"ts":1700000000000660.25},
{"ph":"B","pid":2,"tid":1,"ts":1700000000000700,"name":"never"},
{"ph":"X","pid":2,"tid":2,"ts":1700000000000800,"dur":100,"name":"last"}
]})";

const char* const kNonStandardArgsJson =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, "
    "\"tid\": \"stream 7\", \"ts\": 1614800519473220, \"dur\": 0, \"args\": {\"bytes\": 200, "
    "\"memory bandwidth (GB/s)\": inf, \"lo\": -inf, \"q\": nan, \"r\": [NaN, Infinity]}},\n"
    "{\"ph\": \"X\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": 1614800519473221, "
    "\"dur\": 2, \"args\": {\"note\": \"a\tb\x01c\"}},\n"
    "{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", "
    "\"ts\": 1614800519473300}\n"
    "]}";

const char* const kBlobArgsJson = R"({"blob":""})";

const char* const kBrokenJson = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},
{"ph":"X" "name":"b","pid":1,"tid":1,"ts":4,"dur":1}])";

const char* const kCutJson =
    R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X","na)";

const char* const kConcurrentAsyncJson = R"({"traceEvents":[
{"ph":"b","cat":"net","name":"req","id":1,"pid":1,"ts":0},
{"ph":"b","cat":"net","name":"req","id":2,"pid":1,"ts":10},
{"ph":"b","cat":"net","name":"req","id":3,"pid":1,"ts":20},
{"ph":"e","cat":"net","name":"req","id":1,"pid":1,"ts":30},
{"ph":"e","cat":"net","name":"req","id":2,"pid":1,"ts":40},
{"ph":"e","cat":"net","name":"req","id":3,"pid":1,"ts":50},
{"ph":"b","cat":"net","name":"req","id":4,"pid":1,"ts":60},
{"ph":"b","cat":"net","name":"parse","id":4,"pid":1,"ts":62},
{"ph":"e","cat":"net","name":"parse","id":4,"pid":1,"ts":64},
{"ph":"e","cat":"net","name":"req","id":4,"pid":1,"ts":70}
]})";

const char* const kBrokenArgsJson = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":4,"dur":1,"args":{"x":1,,"y":2}}])";

const char* const kTrailingGarbageJson = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]
  garbage, {"ph":"X"}
)";

std::string gzip(std::string_view data) {
    z_stream z{};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    std::string out(deflateBound(&z, uLong(data.size())) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = uInt(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

namespace wire {

void varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(v | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}
std::string intField(int number, uint64_t v) {
    std::string out;
    varint(out, uint64_t(number) << 3);
    varint(out, v);
    return out;
}
std::string bytesField(int number, std::string_view bytes) {
    std::string out;
    varint(out, (uint64_t(number) << 3) | 2);
    varint(out, bytes.size());
    out.append(bytes);
    return out;
}
std::string doubleField(int number, double v) {
    std::string out;
    varint(out, (uint64_t(number) << 3) | 1);
    char b[8];
    static_assert(sizeof v == 8);
    std::memcpy(b, &v, 8);
    out.append(b, 8);
    return out;
}

}  // namespace wire

namespace {

using wire::bytesField;
using wire::doubleField;
using wire::intField;

// XStatMetadata / XEventMetadata map entries (key 1, value 2).
std::string statMeta(int64_t id, const std::string& name) {
    return bytesField(5, intField(1, uint64_t(id)) +
                             bytesField(2, intField(1, uint64_t(id)) + bytesField(2, name)));
}
std::string eventMeta(int64_t id, const std::string& name, const std::string& display,
                      const std::string& stats) {
    std::string value = intField(1, uint64_t(id)) + bytesField(2, name);
    if (!display.empty()) value += bytesField(4, display);
    value += stats;
    return bytesField(4, intField(1, uint64_t(id)) + bytesField(2, value));
}
// An XStat: metadata id, then one value field.
std::string stat(int field, int64_t metadata, const std::string& value) {
    return bytesField(field, intField(1, uint64_t(metadata)) + value);
}
std::string event(int64_t metadata, int64_t offsetPs, int64_t durationPs,
                  const std::string& stats = {}) {
    return bytesField(4, intField(1, uint64_t(metadata)) + intField(2, uint64_t(offsetPs)) +
                             intField(3, uint64_t(durationPs)) + stats);
}
std::string aggregated(int64_t metadata, int64_t occurrences, int64_t durationPs) {
    return bytesField(4, intField(1, uint64_t(metadata)) + intField(5, uint64_t(occurrences)) +
                             intField(3, uint64_t(durationPs)));
}

}  // namespace

std::string handWrittenXSpace() {
    enum : int64_t {
        kHloCategory = 1,
        kFlops = 2,
        kDeviceType = 3,
        kKind = 4,
        kTfOp = 5,
        kPeak = 6,
        kLoop = 7
    };
    std::string plane = intField(1, 5) + bytesField(2, "/device:TPU:0");
    plane += statMeta(kHloCategory, "hlo_category") + statMeta(kFlops, "flops") +
             statMeta(kDeviceType, "device_type_string") + statMeta(kKind, "kind") +
             statMeta(kTfOp, "tf_op") + statMeta(kPeak, "peak_teraflops_per_second") +
             statMeta(kLoop, "kLoop");
    // XStat value fields: 2 double, 3 uint64, 4 int64, 5 string, 7 ref, 8 compressed string.
    plane += eventMeta(
        10, "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %p), kind=kLoop", "fusion.1",
        stat(5, kHloCategory, bytesField(5, "convolution")) + stat(5, kFlops, intField(4, 100)));
    plane += eventMeta(11, "copy", "", "");
    plane += eventMeta(12, "copy-start", "", "");
    plane += stat(6, kDeviceType, bytesField(5, "TPU test"));
    plane += stat(6, kPeak, doubleField(2, 918.5));
    std::string ops = intField(1, 1) + bytesField(2, "XLA Ops") + intField(3, 1000);
    ops += event(10, 1500, 2250,
                 stat(4, kFlops, intField(4, 42)) + stat(4, kKind, intField(7, kLoop)));
    ops += event(10, 5000, 400);
    ops += event(11, 20000, 3000, stat(4, kTfOp, bytesField(8, gzip("jit(f)/copy"))));
    plane += bytesField(3, ops);
    std::string async = intField(1, 2) + bytesField(2, "Async XLA Ops") + intField(3, 1000);
    async += event(12, 0, 10000) + event(12, 5000, 10000);
    plane += bytesField(3, async);
    std::string agg = intField(1, 3) + bytesField(2, "Aggregated") + intField(3, 1000);
    agg += aggregated(11, 5, 7000000) + aggregated(11, 3, 2000000);
    plane += bytesField(3, agg);
    const std::string metadataPlane = intField(1, 6) + bytesField(2, "/host:metadata");
    return bytesField(1, plane) + bytesField(1, metadataPlane) + bytesField(4, "host-a");
}

XPlaneWriter::XPlaneWriter(const std::string& name) {
    using namespace wire;
    plane_ = intField(1, 1) + bytesField(2, name);
    plane_ += bytesField(
        5, intField(1, 1) +
               bytesField(2, intField(1, 1) + bytesField(2, "peak_hbm_bw_gigabytes_per_second")));
    plane_ += bytesField(6, intField(1, 1) + doubleField(2, 1000.0));
}

void XPlaneWriter::planeStat(const std::string& name, uint64_t value) {
    using namespace wire;
    const uint64_t id = 2 + uint64_t(planeStats_++);  // 1 is the peak bandwidth's
    plane_ += bytesField(5, intField(1, id) + bytesField(2, intField(1, id) + bytesField(2, name)));
    plane_ += bytesField(6, intField(1, id) + intField(3, value));
}

void XPlaneWriter::event(const std::string& line, const std::string& display,
                         const std::string& text, int64_t startNs, int64_t durPs,
                         const EventStats& stats) {
    using namespace wire;
    const std::string key = display + "\n" + text;
    auto it = meta_.find(key);
    if (it == meta_.end()) {
        const int64_t id = int64_t(meta_.size()) + 10;
        std::string value = intField(1, uint64_t(id)) + bytesField(2, text);
        if (display != text) value += bytesField(4, display);
        plane_ += bytesField(4, intField(1, uint64_t(id)) + bytesField(2, value));
        it = meta_.emplace(key, id).first;
    }
    std::string statBytes;
    for (const auto& [name, value] : stats) {
        auto id = eventStatIds_.find(name);
        if (id == eventStatIds_.end()) {
            id = eventStatIds_.emplace(name, 100 + eventStatIds_.size()).first;
            plane_ +=
                bytesField(5, intField(1, id->second) +
                                  bytesField(2, intField(1, id->second) + bytesField(2, name)));
        }
        std::string stat = intField(1, id->second);
        if (const auto* number = std::get_if<int64_t>(&value))
            stat += intField(4, uint64_t(*number));
        else
            stat += bytesField(5, std::get<std::string>(value));
        statBytes += bytesField(4, stat);
    }
    lines_[line] +=
        bytesField(4, intField(1, uint64_t(it->second)) + intField(2, uint64_t(startNs * 1000)) +
                          intField(3, uint64_t(durPs)) + statBytes);
}

std::string XPlaneWriter::bytes() const {
    using namespace wire;
    std::string out = plane_;
    int64_t id = 1;
    for (const auto& [name, events] : lines_)
        out += bytesField(
            3, intField(1, uint64_t(id++)) + bytesField(2, name) + intField(3, 0) + events);
    return bytesField(1, out);
}

}  // namespace fixtures
