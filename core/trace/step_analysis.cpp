#include "core/trace/step_analysis.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "core/sqlite.h"
#include "core/trace/hosts.h"

namespace stallscope::trace {

const std::array<const char*, kStepCategoryCount> kCategoryNames = {
    "compute", "communication", "memcpy", "memset", "host_wait", "input", "idle"};
const std::array<const char*, kHostCategoryCount> kHostCategoryNames = {
    "input", "sync", "runtime", "operator", "python", "other", "idle"};

const char* stepSourceName(StepSource source) {
    switch (source) {
        case StepSource::StepOp:
            return "step_op";
        case StepSource::ProfilerStep:
            return "profiler_step";
        case StepSource::XlaSteps:
            return "xla_steps";
        case StepSource::XlaModules:
            return "xla_modules";
        case StepSource::IterationMarker:
            return "iteration_marker";
        case StepSource::WholeTrace:
            return "whole_trace";
    }
    return "whole_trace";
}

int64_t StepAnalysis::totalDeviceTime() const {
    int64_t sum = 0;
    for (const DeviceStepBreakdown& b : breakdown) sum += b.duration();
    return sum;
}

int64_t StepAnalysis::stepTime(int step) const {
    int64_t longest = -1;
    const size_t n = devices.size();
    for (size_t d = 0; d < n; ++d) {
        const size_t at = size_t(step) * n + d;  // step-major, then device
        if (at < breakdown.size() && breakdown[at].step == step)
            longest = std::max(longest, breakdown[at].duration());
    }
    return longest >= 0 ? longest : steps[size_t(step)].duration();
}

int64_t StepAnalysis::total(StepCategory c) const {
    int64_t sum = 0;
    for (const DeviceStepBreakdown& b : breakdown) sum += b.at(c);
    return sum;
}

double StepAnalysis::sharePct(StepCategory c) const {
    const int64_t all = totalDeviceTime();
    return all > 0 ? 100.0 * double(total(c)) / double(all) : 0.0;
}

namespace {

// ---- names --------------------------------------------------------------------------------

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

bool has(std::string_view text, std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
}

// What a device slice is, finest first; the order is the breakdown's priority (lower wins).
enum DeviceClass : uint8_t {
    kGemm,
    kAttention,
    kOtherCompute,
    kCommunication,
    kH2D,
    kD2H,
    kD2D,
    kPeer,
    kOtherCopy,
    kMemset,
    kDeviceClassCount,
    kNotActivity = 255,  // sync markers, annotations
};
// Segment classes past the activities: the causes of idle.
constexpr uint8_t kSegInput = kDeviceClassCount, kSegHostWait = kDeviceClassCount + 1,
                  kSegIdle = kDeviceClassCount + 2;

bool isCompute(uint8_t c) {
    return c <= kOtherCompute;
}
bool isCopy(uint8_t c) {
    return c >= kH2D && c <= kOtherCopy;
}

StepCategory categoryOf(uint8_t segClass) {
    if (isCompute(segClass)) return StepCategory::Compute;
    if (segClass == kCommunication) return StepCategory::Communication;
    if (isCopy(segClass)) return StepCategory::Memcpy;
    if (segClass == kMemset) return StepCategory::Memset;
    if (segClass == kSegInput) return StepCategory::Input;
    if (segClass == kSegHostWait) return StepCategory::HostWait;
    return StepCategory::Idle;
}

// "conv" as in convolution/conv2d/conv_fwd, not convert.
bool hasConvolution(std::string_view n) {
    for (size_t at = n.find("conv"); at != std::string_view::npos; at = n.find("conv", at + 1)) {
        const char next = at + 4 < n.size() ? n[at + 4] : '\0';
        if (next == 'o' || next == '_' || (next >= '0' && next <= '9')) return true;
    }
    return false;
}

uint8_t classifyDeviceName(std::string_view name) {
    const std::string n = lower(name);
    if (n == "stream sync" || n == "context sync" || n == "event sync" ||
        n == "stream wait event" || n == "device sync")
        return kNotActivity;
    // MTIA's device streams (Kineto, cat mtia_ccp_events) record their syncs and waits as
    // slices, beside the runtime's synchronize calls; its copies are DMA requests.
    if (n == "event_record" || n == "event_wait" || n == "synchronize") return kNotActivity;
    if (n == "dma_request") return kOtherCopy;
    // Memsets by their own names ("Memset (Device)", XProf's "MemsetD32"), not every kernel
    // with the word in it (a Triton "_combined_routing_memset" computes).
    if (n.starts_with("memset")) return kMemset;
    // ROCm's blit kernels fill and copy buffers for hipMemset/hipMemcpy.
    if (n.starts_with("__amd_rocclr_fill")) return kMemset;
    if (n.starts_with("__amd_rocclr_copy")) return kOtherCopy;
    // XProf on ROCm names its memcpy activities by direction.
    if (n.starts_with("copyhosttodevice")) return kH2D;
    if (n.starts_with("copydevicetohost")) return kD2H;
    if (n.starts_with("copydevicetodevice")) return kD2D;
    if (n.starts_with("copypeertopeer")) return kPeer;
    const bool chakraMemory = n.starts_with("mem_load_node") || n.starts_with("mem_store_node");
    if (n.starts_with("memcpy") || n.starts_with("copy-start") || n.starts_with("copy-done") ||
        n.starts_with("async-copy") || chakraMemory) {
        if (has(n, "htod") || has(n, "h2d")) return kH2D;
        if (has(n, "dtoh") || has(n, "d2h")) return kD2H;
        if (has(n, "ptop") || has(n, "p2p") || has(n, "peer")) return kPeer;
        if (has(n, "dtod") || has(n, "d2d")) return kD2D;
        // XLA's copy-start/-done name no direction: the memory spaces are in the HLO shapes
        // (S(5) host, S(0) HBM), which core/transfers reads; here they are "other".
        return kOtherCopy;
    }
    static constexpr std::string_view collectives[] = {"nccl",
                                                       "rccl",
                                                       "allreduce",
                                                       "all_reduce",
                                                       "all-reduce",
                                                       "allgather",
                                                       "all_gather",
                                                       "all-gather",
                                                       "reducescatter",
                                                       "reduce_scatter",
                                                       "reduce-scatter",
                                                       "alltoall",
                                                       "all_to_all",
                                                       "all-to-all",
                                                       "collective-permute",
                                                       "collectivepermute",
                                                       "multimem",
                                                       "cross_device_reduce"};
    for (std::string_view c : collectives)
        if (has(n, c)) return kCommunication;
    if (n.starts_with("comm_") || n.starts_with("send") || n.starts_with("recv"))
        return kCommunication;
    if (has(n, "flash") || has(n, "attention") || has(n, "attn") || has(n, "fmha") ||
        has(n, "sdpa"))
        return kAttention;
    if (has(n, "gemm") || has(n, "matmul") || has(n, "cublas") || has(n, "cutlass") ||
        has(n, "xmma") || has(n, "wgmma") || has(n, "hmma") || has(n, "nvjet") ||
        n.starts_with("cijk_") || has(n, "hipblaslt") || has(n, "rocblas") ||
        n.starts_with("dot") || has(n, "fprop") || has(n, "dgrad") || has(n, "wgrad") ||
        hasConvolution(n))
        return kGemm;
    return kOtherCompute;
}

// Host slice classes, HostCategory order, plus slices that take no part (step markers, the
// profiler's own span).
constexpr uint8_t kHostIgnored = 255;

uint8_t classifyHostName(std::string_view name) {
    if (name.starts_with("ProfilerStep#") || name.starts_with("PyTorch Profiler") ||
        name.starts_with("Iteration Start"))
        return kHostIgnored;
    const std::string n = lower(name);
    if (has(n, "dataloader") || has(n, "iteratorgetnext") || has(n, "iterator::") ||
        has(n, "infeed") || has(n, "tf_data") || has(n, "input_pipeline") ||
        has(n, "input pipeline"))
        return uint8_t(HostCategory::Input);
    // Runtime-level waits (Python wrappers such as torch.cuda.synchronize hold one of these).
    if (has(name, "Synchronize") || name == "cudaMemcpy" || name == "hipMemcpy" ||
        name == "aten::item" || name == "aten::_local_scalar_dense")
        return uint8_t(HostCategory::Sync);
    const bool driverCall =
        name.size() > 2 && name.starts_with("cu") && name[2] >= 'A' && name[2] <= 'Z';
    if (n.starts_with("cuda") || n.starts_with("hip") || n.starts_with("hsa_") || driverCall)
        return uint8_t(HostCategory::Runtime);
    if (has(n, "::") || name.starts_with("Optimizer.")) return uint8_t(HostCategory::Operator);
    if (has(n, ".py(") || name.starts_with("nn.Module:") || name.starts_with("<built-in") ||
        name.starts_with("torch/"))
        return uint8_t(HostCategory::Python);
    return uint8_t(HostCategory::Other);
}

// XProf names a GPU stream line by what runs on it ("Stream #9(MemcpyH2D)",
// "Stream #7(Kernel,MemcpyD2H)"): a stream of copies only gives its activities' class (their
// names, "CopyDeviceToDevice" or a TensorFlow op's, may not); kNotActivity otherwise.
uint8_t copyStreamClass(std::string_view trackName) {
    if (!trackName.ends_with(")")) return kNotActivity;
    const size_t open = trackName.rfind('(');
    if (open == std::string_view::npos) return kNotActivity;
    std::string_view kinds = trackName.substr(open + 1, trackName.size() - open - 2);
    uint8_t cls = kNotActivity;
    int parts = 0;
    while (!kinds.empty()) {
        const size_t comma = kinds.find(',');
        const std::string_view kind = kinds.substr(0, comma);
        kinds = comma == std::string_view::npos ? std::string_view() : kinds.substr(comma + 1);
        uint8_t one = kNotActivity;
        if (kind == "MemcpyH2D")
            one = kH2D;
        else if (kind == "MemcpyD2H")
            one = kD2H;
        else if (kind == "MemcpyD2D")
            one = kD2D;
        else if (kind == "MemcpyP2P")
            one = kPeer;
        else if (kind.starts_with("Memcpy"))
            one = kOtherCopy;
        else if (kind == "Memset")
            one = kMemset;
        else
            return kNotActivity;  // kernels too
        // Copies of several kinds (or copies and memsets) on one stream: other copies.
        cls = parts++ == 0 || cls == one ? one : uint8_t(kOtherCopy);
    }
    return cls;
}

bool isIterationMarker(std::string_view name) {
    return name.starts_with("Iteration#") || name.starts_with("iteration_") ||
           name.starts_with("ITERATION") || name.starts_with("IterationMarker");
}

// ---- args, read a chunk at a time ---------------------------------------------------------

// TraceStore::args reads and unpacks a chunk per call; slices of one track mostly have
// ascending args ids, so keeping the last chunk makes reading them all one unpack per chunk.
class ArgsReader {
  public:
    explicit ArgsReader(const TraceStore& store) : store_(store) {}

    std::string get(uint64_t id) {
        if (id == 0) return {};
        const int64_t seq = int64_t((id - 1) / kArgsPerChunk);
        if (seq != seq_) load(seq);
        const size_t index = size_t((id - 1) % kArgsPerChunk);
        if (index >= entries_.size()) return {};
        const std::string_view entry = entries_[index];
        // Overlays merge with their base: the store knows how.
        if (!entry.empty() && entry[0] == kArgsOverlay) return store_.args(id);
        return std::string(entry);
    }

  private:
    void load(int64_t seq) {
        seq_ = seq;
        entries_.clear();
        raw_.clear();
        sql::Statement st(store_.workspace().db(),
                          "SELECT data FROM trace_args WHERE profile_id = ? AND seq = ?");
        st.bind(1, store_.profileId()).bind(2, seq);
        if (!st.step()) return;
        raw_ = unpackChunk(st.blob(0));
        ByteReader in(raw_);
        while (!in.atEnd()) entries_.push_back(in.take(in.varint()));
    }

    const TraceStore& store_;
    int64_t seq_ = -1;
    std::string raw_;
    std::vector<std::string_view> entries_;
};

// ---- intervals ----------------------------------------------------------------------------

struct Interval {
    int64_t start, end;
};

void mergeIntervals(std::vector<Interval>& v) {
    std::sort(v.begin(), v.end(),
              [](const Interval& a, const Interval& b) { return a.start < b.start; });
    size_t out = 0;
    for (const Interval& i : v) {
        if (i.end <= i.start) continue;
        if (out > 0 && i.start <= v[out - 1].end)
            v[out - 1].end = std::max(v[out - 1].end, i.end);
        else
            v[out++] = i;
    }
    v.resize(out);
}

// First interval of a merged list ending after t.
size_t firstEndingAfter(const std::vector<Interval>& v, int64_t t) {
    return size_t(std::upper_bound(v.begin(), v.end(), t,
                                   [](int64_t x, const Interval& i) { return x < i.end; }) -
                  v.begin());
}

bool overlapsAny(const std::vector<Interval>& v, int64_t from, int64_t to) {
    const size_t i = firstEndingAfter(v, from);
    return i < v.size() && v[i].start < to;
}

// ---- reading slices ----------------------------------------------------------------------

// Level 0 of a track, a stored chunk at a time, in order (TraceStore::slices would gather and
// sort the whole track first: 10^7 slices are 500 MB that way).
template <class Fn>
void forEachChunk(const TraceStore& store, int64_t track, Fn&& fn, bool firstOnly = false) {
    sql::Statement st(store.workspace().db(),
                      "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND "
                      "level = 0 ORDER BY seq");
    st.bind(1, store.profileId()).bind(2, track);
    std::vector<SliceItem> chunk;
    while (st.step()) {
        chunk.clear();
        decodeSlices(st.blob(0), chunk);
        fn(chunk);
        if (firstOnly) return;
    }
}

std::vector<SliceItem> firstChunk(const TraceStore& store, int64_t track) {
    std::vector<SliceItem> out;
    forEachChunk(
        store, track, [&](const std::vector<SliceItem>& chunk) { out = chunk; }, true);
    return out;
}

// ---- gathering ----------------------------------------------------------------------------

struct Activity {
    int64_t start, end;
    int64_t launch;       // start of the runtime call that launched it; INT64_MIN: unknown
    int64_t launchTrack;  // its track, -1 unknown
    uint8_t cls;
};

struct TimedSlice {
    int64_t start, end;
    std::string name;
    int64_t track;
};

enum class TrackRole { Device, Host, XlaSteps, XlaModules, Ignored };

struct Gathered {
    std::vector<StepDevice> devices;
    std::vector<std::vector<Activity>> activities;               // per device, sorted by start
    std::array<std::vector<Interval>, kHostCategoryCount> host;  // merged, per host class
    std::vector<TimedSlice> syncCalls;                           // individual, for evidence
    std::vector<int64_t> hostTracks;
    std::vector<int64_t> launchingTracks;  // host tracks that launched device work
    // Step candidates by source.
    std::vector<TimedSlice> profilerSteps, iterationMarkers, stepOps, xlaSteps;
    std::vector<std::pair<int, TimedSlice>> xlaModules;  // (device, execution)
    std::unordered_set<int64_t> withinHost;  // StepOptions::withinTrack: the host's tracks
    bool chrome = false;
};

int64_t sliceEnd(const SliceItem& s) {
    return s.preciseEnd().ns;
}

// The short name of a device process: "GPU 0" from "python3 (GPU 0)".
std::string deviceName(const std::string& processName) {
    const size_t open = processName.rfind('(');
    if (open != std::string::npos && processName.ends_with(")")) {
        const std::string label = processName.substr(open + 1, processName.size() - open - 2);
        if (label.starts_with("GPU") || label.starts_with("TPU") || label.starts_with("NPU"))
            return label;
    }
    // A Kineto trace without process names: the GPU's pid is its index.
    if (processName.starts_with("Process ")) return "GPU " + processName.substr(8);
    return processName;
}

// A device activity without a launch flow, to be bound to its runtime call by correlation.
struct Unflowed {
    size_t device, index;  // in Gathered::activities
    int64_t correlation;
};

// The integer member `key` of a flat JSON object (Kineto args); -1 when absent.
int64_t argNumber(std::string_view json, std::string_view key) {
    const std::string quoted = "\"" + std::string(key) + "\":";
    const size_t at = json.find(quoted);
    if (at == std::string_view::npos) return -1;
    size_t p = at + quoted.size();
    while (p < json.size() && json[p] == ' ') ++p;
    int64_t value = -1;
    const auto [end, error] = std::from_chars(json.data() + p, json.data() + json.size(), value);
    return error == std::errc() ? value : -1;
}

Gathered gather(const TraceStore& store, const StepOptions& options) {
    Gathered g;
    const QString format = store.metadata().value("format").toString();
    const bool chakra = format == "chakra-et";
    const bool xprof = format == "xprof-xspace";
    g.chrome = !chakra && !xprof;
    ArgsReader args(store);

    std::vector<uint8_t> deviceClassOf(0), hostClassOf(0);
    std::vector<bool> classified;
    std::vector<bool> onHost;  // by name: seen on a host track (Kineto's GPU annotations)
    auto nameFlags = [&](uint32_t name) {
        if (name >= classified.size()) {
            classified.resize(name + 1, false);
            onHost.resize(name + 1, false);
            deviceClassOf.resize(name + 1, kNotActivity);
            hostClassOf.resize(name + 1, kHostIgnored);
        }
        if (!classified[name]) {
            classified[name] = true;
            deviceClassOf[name] = classifyDeviceName(store.text(name));
            hostClassOf[name] = classifyHostName(store.text(name));
        }
    };

    // A multi-host run: tracks of one host only (withinTrack), or device names with their host.
    const std::vector<RunHost> hosts = runHosts(store.metadata());
    auto topOf = [&](int64_t id) {
        const TrackRow* t = store.track(id);
        while (t && t->parent >= 0 && store.track(t->parent)) t = store.track(t->parent);
        return t ? t->id : int64_t(-1);
    };
    auto below = [&](const TrackRow& t) {
        if (options.withinTrack < 0) return true;
        for (const TrackRow* p = &t; p; p = p->parent >= 0 ? store.track(p->parent) : nullptr)
            if (p->id == options.withinTrack) return true;
        return false;
    };
    if (options.withinTrack >= 0)
        for (const TrackRow& t : store.tracks())
            if (below(t)) g.withinHost.insert(t.id);
    auto hostPrefix = [&](int64_t track) {
        if (hosts.empty() || options.withinTrack >= 0) return std::string();
        const int64_t top = topOf(track);
        for (const RunHost& h : hosts)
            if (h.track == top) return h.name + " ";
        return std::string();
    };

    std::unordered_map<int64_t, int> deviceOfProcess;
    struct DeviceTrack {
        int64_t track;
        int device;
        std::vector<SliceItem> slices;
        uint8_t copyClass = kNotActivity;  // copyStreamClass of the track's name
    };
    std::vector<DeviceTrack> deviceTracks;

    auto deviceFor = [&](const TrackRow& t) {
        const int64_t key = chakra ? t.id : t.parent;
        auto it = deviceOfProcess.find(key);
        if (it != deviceOfProcess.end()) return it->second;
        StepDevice d;
        const TrackRow* process = store.track(t.parent);
        d.processTrack = chakra ? -1 : t.parent;
        d.name = hostPrefix(t.id) + (chakra    ? t.name
                                     : process ? deviceName(process->name)
                                               : t.name);
        g.devices.push_back(std::move(d));
        deviceOfProcess.emplace(key, int(g.devices.size() - 1));
        return int(g.devices.size() - 1);
    };

    // Runtime calls by (host track, end), to date launches from their start. Sorted vectors,
    // not hash maps: a lookup per kernel in a map of 10^5-10^6 entries is mostly cache misses.
    struct Call {
        int64_t track, end, start;
        uint64_t args;  // read only when an activity has no launch flow (by correlation then)
        bool operator<(const Call& o) const {
            return track != o.track ? track < o.track : end < o.end;
        }
    };
    std::vector<Call> callStarts;

    // One host slice: step markers, its class's intervals (merged on the way while the
    // track's slices come by start: `before` is where this track's intervals begin).
    auto hostSlice = [&](int64_t track, const SliceItem& s,
                         const std::array<size_t, kHostCategoryCount>& before) {
        if (s.kind != ItemKind::Slice || s.unended) return;
        nameFlags(s.name);
        onHost[s.name] = true;
        const std::string& name = store.text(s.name);
        const int64_t end = sliceEnd(s);
        if (name.starts_with("ProfilerStep#"))
            g.profilerSteps.push_back({s.start, end, name, track});
        else if (isIterationMarker(name))
            g.iterationMarkers.push_back({s.start, end, name, track});
        const uint8_t cls = hostClassOf[s.name];
        if (cls == kHostIgnored) return;
        // Flows leave their source slice at its end; launches count from the call's start.
        if (cls == uint8_t(HostCategory::Runtime) || cls == uint8_t(HostCategory::Sync))
            callStarts.push_back({track, end, s.start, s.args});
        if (cls == uint8_t(HostCategory::Sync)) g.syncCalls.push_back({s.start, end, name, track});
        std::vector<Interval>& list = g.host[cls];
        if (list.size() > before[cls] && s.start <= list.back().end)
            list.back().end = std::max(list.back().end, end);
        else
            list.push_back({s.start, end});
    };

    // Processes holding device streams (Kineto's GPU/MTIA pids).
    std::unordered_set<int64_t> streamProcesses;
    if (g.chrome)
        for (const TrackRow& t : store.tracks()) {
            const std::string n = lower(t.name);
            if (n.starts_with("stream ") || n.starts_with("stream#"))
                streamProcesses.insert(t.parent);
        }
    for (const TrackRow& t : store.tracks()) {
        if (t.slices == 0 || t.kind == TrackKind::Counter || !below(t)) continue;
        const TrackRow* process = store.track(t.parent);
        const std::string processName = process ? process->name : std::string();
        TrackRole role = TrackRole::Host;
        if (chakra) {
            role = TrackRole::Device;
        } else if (xprof) {
            if (processName.starts_with("/device:")) {
                if (t.name.starts_with("XLA Ops") || t.name.starts_with("Async XLA Ops") ||
                    t.name.starts_with("Stream #"))
                    role = TrackRole::Device;
                else if (t.name == "Steps")
                    role = TrackRole::XlaSteps;
                else if (t.name == "XLA Modules")
                    role = TrackRole::XlaModules;
                else
                    role = TrackRole::Ignored;
            }
        } else {
            const std::string n = lower(t.name);
            bool device = n.starts_with("stream ") || n.starts_with("stream#");
            // Kineto traces without thread names: GPU activities carry stream and device.
            if (!device) {
                const std::vector<SliceItem> first = firstChunk(store, t.id);
                for (size_t i = 0, seen = 0; !device && i < first.size() && seen < 8; ++i) {
                    if (first[i].args == 0) continue;
                    ++seen;
                    const std::string a = args.get(first[i].args);
                    device =
                        has(a, "\"stream\":") && (has(a, "\"device\":") || has(a, "\"context\":"));
                }
            }
            // A thread of such a process carrying only copies (MTIA's "DMA_REQUEST" thread,
            // whose DMAs have no stream or correlation) is the device's too.
            if (!device && streamProcesses.count(t.parent)) {
                const std::vector<SliceItem> first = firstChunk(store, t.id);
                device =
                    !first.empty() &&
                    std::all_of(first.begin(), first.end(), [&](const SliceItem& s) {
                        nameFlags(s.name);
                        return isCopy(deviceClassOf[s.name]) || deviceClassOf[s.name] == kMemset;
                    });
            }
            if (device) role = TrackRole::Device;
        }

        auto stepOp = [&](const SliceItem& s) {
            if (!options.stepOp.empty() && s.kind == ItemKind::Slice &&
                store.text(s.name) == options.stepOp)
                g.stepOps.push_back({s.start, sliceEnd(s), options.stepOp, t.id});
        };
        if (role == TrackRole::Host) {
            // Streamed a chunk at a time: host threads hold most of a trace's slices.
            g.hostTracks.push_back(t.id);
            std::array<size_t, kHostCategoryCount> before{};
            for (size_t c = 0; c < kHostCategoryCount; ++c) before[c] = g.host[c].size();
            forEachChunk(store, t.id, [&](const std::vector<SliceItem>& chunk) {
                for (const SliceItem& s : chunk) {
                    stepOp(s);
                    hostSlice(t.id, s, before);
                }
            });
            continue;
        }
        std::vector<SliceItem> slices;
        forEachChunk(store, t.id, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk) stepOp(s);
            slices.insert(slices.end(), chunk.begin(), chunk.end());
        });
        const auto byStart = [](const SliceItem& a, const SliceItem& b) {
            return a.start != b.start ? a.start < b.start : a.depth < b.depth;
        };
        if (!std::is_sorted(slices.begin(), slices.end(), byStart))
            std::stable_sort(slices.begin(), slices.end(), byStart);

        if (role == TrackRole::Device) {
            deviceTracks.push_back({t.id, deviceFor(t), std::move(slices),
                                    xprof ? copyStreamClass(t.name) : uint8_t(kNotActivity)});
            g.devices[size_t(deviceTracks.back().device)].tracks.push_back(t.id);
            continue;
        }
        if (role == TrackRole::XlaSteps || role == TrackRole::XlaModules) {
            const int device = deviceFor(t);
            for (const SliceItem& s : slices) {
                if (s.kind != ItemKind::Slice || s.unended) continue;
                TimedSlice ts{s.start, sliceEnd(s), store.text(s.name), t.id};
                if (role == TrackRole::XlaSteps)
                    g.xlaSteps.push_back(std::move(ts));
                else if (s.depth == 0)
                    g.xlaModules.emplace_back(device, std::move(ts));
            }
            continue;
        }
    }
    for (auto& list : g.host) mergeIntervals(list);
    std::sort(g.syncCalls.begin(), g.syncCalls.end(), [](const TimedSlice& a, const TimedSlice& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
    });

    // Launch call -> device activity, by the flow's destination (track, time).
    struct Launch {
        int64_t toTrack, toTs, ts, track;
        bool operator<(const Launch& o) const {
            return toTrack != o.toTrack ? toTrack < o.toTrack : toTs < o.toTs;
        }
    };
    std::sort(callStarts.begin(), callStarts.end());
    std::unordered_map<int64_t, int> deviceOfTrack;
    for (const DeviceTrack& d : deviceTracks) deviceOfTrack.emplace(d.track, d.device);
    std::unordered_map<int64_t, bool> isHost;
    for (int64_t h : g.hostTracks) isHost.emplace(h, true);
    std::vector<Launch> launches;
    if (!chakra) {
        std::unordered_map<int64_t, bool> launching;
        // Flows from slices that are not runtime calls by name (MTIA's "runFunction - ..."):
        // by host track, their sources' ends -> the launches to date from those slices' starts.
        std::unordered_map<int64_t, std::unordered_map<int64_t, std::vector<size_t>>> unnamed;
        for (const FlowRow& f : store.flows()) {
            if (!deviceOfTrack.count(f.toTrack) || !isHost.count(f.fromTrack)) continue;
            const auto call = std::lower_bound(callStarts.begin(), callStarts.end(),
                                               Call{f.fromTrack, f.fromTs, 0, 0});
            const bool found =
                call != callStarts.end() && call->track == f.fromTrack && call->end == f.fromTs;
            if (!found) unnamed[f.fromTrack][f.fromTs].push_back(launches.size());
            launches.push_back({f.toTrack, f.toTs, found ? call->start : f.fromTs, f.fromTrack});
            launching[f.fromTrack] = true;
        }
        for (auto& entry : unnamed) {  // no structured binding: captured below (clang 14)
            const int64_t track = entry.first;
            auto& byEnd = entry.second;
            // The call is the innermost slice ending there: the latest start.
            std::unordered_map<int64_t, int64_t> startOf;
            forEachChunk(store, track, [&](const std::vector<SliceItem>& chunk) {
                for (const SliceItem& s : chunk) {
                    if (s.kind != ItemKind::Slice) continue;
                    const int64_t end = sliceEnd(s);
                    if (!byEnd.count(end)) continue;
                    const auto [it, fresh] = startOf.try_emplace(end, s.start);
                    if (!fresh) it->second = std::max(it->second, s.start);
                }
            });
            for (const auto& [end, start] : startOf)
                for (size_t l : byEnd[end]) launches[l].ts = start;
        }
        std::sort(launches.begin(), launches.end());
        for (const auto& entry : launching) g.launchingTracks.push_back(entry.first);
        std::sort(g.launchingTracks.begin(), g.launchingTracks.end());
    }

    g.activities.resize(g.devices.size());
    std::vector<Unflowed> unflowed;
    for (DeviceTrack& d : deviceTracks) {
        std::vector<SliceItem>& slices = d.slices;
        std::vector<Activity>& out = g.activities[size_t(d.device)];
        auto nextLaunch =
            std::lower_bound(launches.begin(), launches.end(), Launch{d.track, INT64_MIN, 0, 0});
        for (size_t i = 0; i < slices.size(); ++i) {
            const SliceItem& s = slices[i];
            if (s.kind != ItemKind::Slice || s.unended) continue;
            const int64_t end = sliceEnd(s);
            // Kept at zero length: traces in whole µs (Kineto before 2022) write kernels
            // shorter than 1 µs as dur 0; they take no time but are kernels with a launch.
            if (end < s.start) continue;
            uint8_t cls = kNotActivity;
            if (chakra) {
                // The node type (the first member of its args) decides; a compute node's name
                // only splits GEMM/attention/other.
                const std::string a = args.get(s.args);
                if (has(a, "\"COMP_NODE\"")) {
                    cls = classifyDeviceName(store.text(s.name));
                    if (!isCompute(cls)) cls = kOtherCompute;
                } else if (has(a, "\"COMM_")) {
                    cls = kCommunication;
                } else if (has(a, "\"MEM_LOAD_NODE\"") || has(a, "\"MEM_STORE_NODE\"")) {
                    cls = kOtherCopy;
                } else {
                    continue;
                }
            } else {
                nameFlags(s.name);
                cls = deviceClassOf[s.name];
                if (cls == kNotActivity) continue;
                if (d.copyClass != kNotActivity && isCompute(cls)) cls = d.copyClass;
                // Annotations (Kineto's gpu_user_annotation, XProf's enclosing ops) hold the
                // real activities: a slice with a deeper activity starting inside it is a
                // container. (Sync markers overlapping a copy nest in it without making it one,
                // and so do zero-length ops: XProf draws a TPU's zero-length copy-start at the
                // start of the copy-done or fusion running then, as its child.)
                bool container = false;
                for (size_t j = i + 1; j < slices.size() && slices[j].start < end; ++j) {
                    if (slices[j].depth <= s.depth) break;
                    if (sliceEnd(slices[j]) <= slices[j].start) continue;
                    nameFlags(slices[j].name);
                    if (deviceClassOf[slices[j].name] != kNotActivity) {
                        container = true;
                        break;
                    }
                }
                // Kernels may overlap on one stream (programmatic dependent launch), and so do
                // DMAs (MTIA's, without correlation): in Kineto traces a container is only a
                // GPU annotation, named like its host range and without a launch correlation.
                if (container && g.chrome &&
                    (!onHost[s.name] || has(args.get(s.args), "\"correlation\":")))
                    container = false;
                if (container) continue;
                // A GPU annotation that holds no kernel: named like its host range, with no
                // correlation to a launch (Triton kernels share their host op's name, but have
                // one).
                if (g.chrome && onHost[s.name] && !has(args.get(s.args), "\"correlation\":"))
                    continue;
            }
            Activity a{s.start, end, INT64_MIN, -1, cls};
            // Slices come by start: the launches of this track are walked alongside.
            while (nextLaunch < launches.end() &&
                   (nextLaunch->toTrack < d.track ||
                    (nextLaunch->toTrack == d.track && nextLaunch->toTs < s.start)))
                ++nextLaunch;
            if (nextLaunch < launches.end() && nextLaunch->toTrack == d.track &&
                nextLaunch->toTs == s.start) {
                a.launch = nextLaunch->ts;
                a.launchTrack = nextLaunch->track;
            } else if (g.chrome) {
                // No launch flow (traces without ac2g flows, or one lost): its correlation.
                const int64_t correlation = argNumber(args.get(s.args), "correlation");
                if (correlation >= 0)
                    unflowed.push_back({size_t(d.device), out.size(), correlation});
            }
            out.push_back(a);
        }
        slices = {};
    }
    if (!unflowed.empty()) {
        // Their runtime calls by correlation: the calls' args are read only now (in args
        // order, a chunk at a time), for traces that need it.
        std::unordered_map<int64_t, size_t> wanted;
        for (const Unflowed& u : unflowed) wanted.emplace(u.correlation, SIZE_MAX);
        std::vector<size_t> byArgs;
        for (size_t c = 0; c < callStarts.size(); ++c)
            if (callStarts[c].args != 0) byArgs.push_back(c);
        std::sort(byArgs.begin(), byArgs.end(),
                  [&](size_t x, size_t y) { return callStarts[x].args < callStarts[y].args; });
        size_t found = 0;
        for (size_t c : byArgs) {
            const auto it = wanted.find(argNumber(args.get(callStarts[c].args), "correlation"));
            if (it == wanted.end() || it->second != SIZE_MAX) continue;
            it->second = c;
            if (++found == wanted.size()) break;
        }
        std::vector<int64_t> launching(g.launchingTracks);
        for (const Unflowed& u : unflowed) {
            const size_t c = wanted[u.correlation];
            if (c == SIZE_MAX) continue;
            Activity& a = g.activities[u.device][u.index];
            a.launch = callStarts[c].start;
            a.launchTrack = callStarts[c].track;
            launching.push_back(a.launchTrack);
        }
        std::sort(launching.begin(), launching.end());
        launching.erase(std::unique(launching.begin(), launching.end()), launching.end());
        g.launchingTracks = std::move(launching);
    }
    for (auto& list : g.activities)
        std::sort(list.begin(), list.end(),
                  [](const Activity& a, const Activity& b) { return a.start < b.start; });
    return g;
}

// ---- steps --------------------------------------------------------------------------------

std::vector<Step> stepsFromSlices(std::vector<TimedSlice> marks, bool startToNextStart) {
    std::sort(marks.begin(), marks.end(),
              [](const TimedSlice& a, const TimedSlice& b) { return a.start < b.start; });
    std::vector<Step> steps;
    for (size_t i = 0; i < marks.size(); ++i) {
        Step s;
        s.index = int(i);
        s.name = marks[i].name;
        s.start = marks[i].start;
        s.end = startToNextStart && i + 1 < marks.size() ? marks[i + 1].start : marks[i].end;
        s.markerTrack = marks[i].track;
        if (s.end > s.start) steps.push_back(std::move(s));
    }
    for (size_t i = 0; i < steps.size(); ++i) steps[i].index = int(i);
    return steps;
}

// The track holding most of the slices (the others' copies are ignored).
std::vector<TimedSlice> onBusiestTrack(const std::vector<TimedSlice>& all) {
    std::unordered_map<int64_t, size_t> perTrack;
    for (const TimedSlice& s : all) ++perTrack[s.track];
    int64_t best = -1;
    size_t most = 0;
    for (const auto& [track, n] : perTrack)
        if (n > most || (n == most && track < best)) {
            best = track;
            most = n;
        }
    std::vector<TimedSlice> out;
    for (const TimedSlice& s : all)
        if (s.track == best) out.push_back(s);
    return out;
}

void detectSteps(StepAnalysis& result, Gathered& g, const TraceStore& store,
                 const StepOptions& options) {
    if (!options.stepOp.empty()) {
        if (g.stepOps.empty())
            throw InputError("no slice named '" + options.stepOp + "' in this trace");
        result.source = StepSource::StepOp;
        result.stepOp = options.stepOp;
        result.steps = stepsFromSlices(onBusiestTrack(g.stepOps), true);
        return;
    }
    if (!g.profilerSteps.empty()) {
        result.source = StepSource::ProfilerStep;
        result.steps = stepsFromSlices(onBusiestTrack(g.profilerSteps), false);
        return;
    }
    if (!g.xlaSteps.empty()) {
        result.source = StepSource::XlaSteps;
        result.steps = stepsFromSlices(onBusiestTrack(g.xlaSteps), false);
        return;
    }
    if (!g.xlaModules.empty()) {
        // The module taking the most time on the first device that runs modules.
        const int device = g.xlaModules.front().first;
        std::unordered_map<std::string, int64_t> totals;
        for (const auto& [d, m] : g.xlaModules)
            if (d == device) totals[m.name] += m.end - m.start;
        std::string best;
        int64_t most = -1;
        for (const auto& [name, total] : totals)
            if (total > most || (total == most && name < best)) {
                best = name;
                most = total;
            }
        std::vector<TimedSlice> runs;
        for (const auto& [d, m] : g.xlaModules)
            if (d == device && m.name == best) runs.push_back(m);
        result.source = StepSource::XlaModules;
        result.stepOp = best;
        result.steps = stepsFromSlices(std::move(runs), true);
        return;
    }
    if (!g.iterationMarkers.empty()) {
        result.source = StepSource::IterationMarker;
        result.steps = stepsFromSlices(onBusiestTrack(g.iterationMarkers), false);
        return;
    }
    result.source = StepSource::WholeTrace;
    // One host of a run: that host's span, not the run's.
    int64_t start = store.start(), end = store.end();
    if (options.withinTrack >= 0) {
        start = INT64_MAX;
        end = INT64_MIN;
        for (const TrackRow& t : store.tracks()) {
            if (t.slices + t.instants + t.samples == 0 || !g.withinHost.count(t.id)) continue;
            start = std::min(start, t.start);
            end = std::max(end, t.end);
        }
    }
    if (end > start) {
        Step whole;
        whole.name = "whole trace";
        whole.start = start;
        whole.end = end;
        result.steps.push_back(std::move(whole));
    }
}

// ---- device segments ----------------------------------------------------------------------

struct Segment {
    int64_t start, end;
    uint8_t cls;     // a DeviceClass, or kSegInput/kSegHostWait/kSegIdle
    uint8_t active;  // bit 0 compute, 1 communication, 2 memcpy: running whatever wins
    int64_t gapId;   // idle causes: the gap they belong to; -1 for activity
};
constexpr uint8_t kActiveCompute = 1, kActiveCommunication = 2, kActiveCopy = 4;

struct GapInfo {
    int64_t launchTrack = -1;  // of the activity ending the gap
};

// Paints a device's timeline over [from, to): the winning activity class at every moment,
// idle stretches split by cause.
std::vector<Segment> deviceSegments(const std::vector<Activity>& acts, const Gathered& g,
                                    int64_t from, int64_t to, std::vector<GapInfo>& gaps) {
    struct Event {
        int64_t t;
        int32_t delta;
        uint32_t act;
    };
    std::vector<Event> events;
    events.reserve(acts.size() * 2);
    for (uint32_t i = 0; i < acts.size(); ++i) {
        events.push_back({acts[i].start, +1, i});
        events.push_back({acts[i].end, -1, i});
    }
    std::sort(events.begin(), events.end(),
              [](const Event& a, const Event& b) { return a.t < b.t; });

    struct Raw {
        int64_t start, end;
        uint8_t cls, active;
        int64_t minLaunch;  // earliest launch of activities starting at `start`
        int64_t launchTrack;
    };
    std::vector<Raw> raw;
    std::array<int32_t, kDeviceClassCount> count{};
    int64_t t = from;
    size_t e = 0;
    auto paintUntil = [&](int64_t until, int64_t minLaunch, int64_t launchTrack) {
        if (until <= t) return;
        uint8_t cls = kSegIdle;
        for (uint8_t c = 0; c < kDeviceClassCount; ++c)
            if (count[c] > 0) {
                cls = c;
                break;
            }
        uint8_t active = 0;
        if (count[kGemm] + count[kAttention] + count[kOtherCompute] > 0) active |= kActiveCompute;
        if (count[kCommunication] > 0) active |= kActiveCommunication;
        for (uint8_t c = kH2D; c <= kOtherCopy; ++c)
            if (count[c] > 0) active |= kActiveCopy;
        if (!raw.empty() && raw.back().cls == cls && raw.back().active == active &&
            raw.back().end == t)
            raw.back().end = until;
        else
            raw.push_back({t, until, cls, active, minLaunch, launchTrack});
        t = until;
    };
    int64_t pendingLaunch = INT64_MAX, pendingTrack = -1;
    while (e < events.size()) {
        const int64_t now = std::clamp(events[e].t, from, to);
        paintUntil(now, pendingLaunch, pendingTrack);
        pendingLaunch = INT64_MAX;
        pendingTrack = -1;
        for (; e < events.size() && std::clamp(events[e].t, from, to) == now; ++e) {
            const Activity& a = acts[events[e].act];
            count[a.cls] += events[e].delta;
            if (events[e].delta > 0 && a.launch != INT64_MIN && a.launch < pendingLaunch) {
                pendingLaunch = a.launch;
                pendingTrack = a.launchTrack;
            }
        }
        t = std::max(t, now);
    }
    count.fill(0);
    paintUntil(to, INT64_MAX, -1);

    // Idle stretches split by what the host does (input > runtime call or late launch > idle).
    const std::vector<Interval>& input = g.host[size_t(HostCategory::Input)];
    std::vector<Interval> runtime = g.host[size_t(HostCategory::Runtime)];
    runtime.insert(runtime.end(), g.host[size_t(HostCategory::Sync)].begin(),
                   g.host[size_t(HostCategory::Sync)].end());
    mergeIntervals(runtime);
    std::vector<Segment> out;
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
        const Raw& r = raw[i];
        if (r.cls != kSegIdle) {
            out.push_back({r.start, r.end, r.cls, r.active, -1});
            continue;
        }
        // The next activity was launched after the device went idle: the host was late.
        const bool lateLaunch = i + 1 < raw.size() && raw[i + 1].minLaunch != INT64_MAX &&
                                raw[i + 1].minLaunch > r.start;
        const int64_t gapId = int64_t(gaps.size());
        gaps.push_back({i + 1 < raw.size() ? raw[i + 1].launchTrack : -1});
        // Cut points: edges of input and runtime intervals inside the gap.
        std::vector<int64_t> cuts{r.start, r.end};
        for (const std::vector<Interval>* list :
             std::array<const std::vector<Interval>*, 2>{&input, &runtime})
            for (size_t k = firstEndingAfter(*list, r.start);
                 k < list->size() && (*list)[k].start < r.end; ++k) {
                if ((*list)[k].start > r.start) cuts.push_back((*list)[k].start);
                if ((*list)[k].end < r.end) cuts.push_back((*list)[k].end);
            }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        size_t inputAt = firstEndingAfter(input, r.start);
        size_t runtimeAt = firstEndingAfter(runtime, r.start);
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
            const int64_t a = cuts[c], b = cuts[c + 1];
            while (inputAt < input.size() && input[inputAt].end <= a) ++inputAt;
            while (runtimeAt < runtime.size() && runtime[runtimeAt].end <= a) ++runtimeAt;
            const bool inInput = inputAt < input.size() && input[inputAt].start <= a;
            const bool inRuntime = runtimeAt < runtime.size() && runtime[runtimeAt].start <= a;
            const uint8_t cls = inInput                   ? kSegInput
                                : inRuntime || lateLaunch ? kSegHostWait
                                                          : kSegIdle;
            if (!out.empty() && out.back().gapId == gapId && out.back().cls == cls)
                out.back().end = b;
            else
                out.push_back({a, b, cls, 0, gapId});
        }
    }
    return out;
}

// ---- the analysis -------------------------------------------------------------------------

struct GapCandidate {
    IdleGap gap;
    int64_t launchTrack;
    bool operator<(const GapCandidate& o) const {  // the heap's top is the shortest
        return gap.duration() > o.gap.duration();
    }
};

// Nearest rank, as the op table does.
int64_t nearestRank(std::vector<int64_t>& sorted, double q) {
    if (sorted.empty()) return 0;
    const size_t rank = size_t(std::ceil(q * double(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::string percentText(double pct) {
    char buf[32];
    std::snprintf(buf, sizeof buf, pct < 9.95 ? "%.1f %%" : "%.0f %%", pct);
    return buf;
}

std::string usText(int64_t ns) {
    char buf[32];
    if (ns >= 1000000)
        std::snprintf(buf, sizeof buf, "%.1f ms", double(ns) / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.1f µs", double(ns) / 1e3);
    return buf;
}

// "the GPU waits", "the GPUs wait", "the TPUs idle" ... for the recommendations' sentences.
struct Subject {
    std::string noun;
    bool plural;
    std::string verb(const std::string& plain) const {
        return noun + " " + (plural ? plain : plain + "s");
    }
};

Subject deviceSubject(const std::vector<StepDevice>& devices) {
    std::string kind = "device";
    for (const StepDevice& d : devices) {
        if (has(d.name, "GPU")) kind = "GPU";
        if (has(d.name, "TPU")) kind = "TPU";
        if (d.name.starts_with("rank")) kind = "rank";
    }
    return {"the " + kind + (devices.size() == 1 ? "" : "s"), devices.size() != 1};
}

void recommend(StepAnalysis& r, const std::vector<IdleGap>& gaps,
               const std::vector<TimedSlice>& syncCalls, const std::array<int64_t, 4>& longest,
               int64_t longestCommTrack, int64_t longestCopyTrack, uint64_t computeKernels,
               uint64_t shortKernels, int64_t shortKernelTime, int64_t computeTime,
               int64_t syncWait) {
    const int64_t all = r.totalDeviceTime();
    if (all <= 0) return;
    const auto pct = [&](int64_t ns) { return 100.0 * double(ns) / double(all); };
    const Subject devices = deviceSubject(r.devices);
    const qint64 steps = qint64(r.steps.size());
    auto longestGap = [&](StepCategory cause) -> const IdleGap* {
        for (const IdleGap& gap : gaps)  // longest first
            if (gap.cause == cause) return &gap;
        return nullptr;
    };
    auto place = [&](StepRecommendation& rec, const IdleGap* gap) {
        if (!gap) return;
        rec.start = gap->start;
        rec.end = gap->end;
        const StepDevice& d = r.devices[size_t(gap->device)];
        rec.track = d.tracks.empty() ? -1 : d.tracks.front();
    };

    const int64_t input = r.total(StepCategory::Input);
    if (pct(input) >= 5.0) {
        StepRecommendation rec;
        rec.kind = "input_bound";
        rec.sharePct = pct(input);
        rec.text = percentText(rec.sharePct) + " of step time " + devices.verb("wait") +
                   " for the input pipeline (DataLoader): raise num_workers, pin memory, "
                   "prefetch (prefetch_factor, persistent_workers)";
        rec.evidence = QJsonObject{{"input_ns", qint64(input)},
                                   {"step_time_ns", qint64(all)},
                                   {"steps", steps},
                                   {"gaps", qint64(r.gapCounts[size_t(StepCategory::Input)])}};
        place(rec, longestGap(StepCategory::Input));
        r.recommendations.push_back(std::move(rec));
    }

    const int64_t hostWait = r.total(StepCategory::HostWait);
    if (pct(syncWait) >= 2.0) {
        StepRecommendation rec;
        rec.kind = "sync_stall";
        rec.sharePct = pct(syncWait);
        uint64_t calls = 0;
        int64_t blocked = 0;
        const TimedSlice* longestCall = nullptr;
        std::unordered_map<std::string, uint64_t> names;
        int64_t outerEnd = INT64_MIN;  // calls nested in a counted one are part of it
        for (const TimedSlice& s : syncCalls) {
            if (s.start < outerEnd) continue;
            const bool inStep = std::any_of(r.steps.begin(), r.steps.end(), [&](const Step& st) {
                return s.start < st.end && s.end > st.start;
            });
            if (!inStep) continue;
            outerEnd = s.end;
            ++calls;
            blocked += s.end - s.start;
            ++names[s.name];
            if (!longestCall || s.end - s.start > longestCall->end - longestCall->start)
                longestCall = &s;
        }
        QJsonObject byName;
        for (const auto& [name, n] : names) byName.insert(QString::fromStdString(name), qint64(n));
        rec.text = percentText(rec.sharePct) + " of step time " + devices.verb("idle") +
                   " around host synchronisations inside the step (" + std::to_string(calls) +
                   " calls such as cudaStreamSynchronize or .item()): drop them or move them "
                   "out of the step (non_blocking copies, keep values on the device)";
        rec.evidence = QJsonObject{{"device_idle_ns", qint64(syncWait)},
                                   {"sync_calls", qint64(calls)},
                                   {"host_blocked_ns", qint64(blocked)},
                                   {"calls", byName}};
        if (longestCall) {
            rec.start = longestCall->start;
            rec.end = longestCall->end;
            rec.track = longestCall->track;
        }
        r.recommendations.push_back(std::move(rec));
    }

    const int64_t launchWait = hostWait - syncWait;
    if (pct(launchWait) >= 10.0) {
        StepRecommendation rec;
        rec.kind = "launch_bound";
        rec.sharePct = pct(launchWait);
        const double kernelsPerStep =
            r.steps.empty() || r.devices.empty()
                ? 0.0
                : double(computeKernels) / double(r.steps.size() * r.devices.size());
        const bool shortKernelsDominate = r.medianKernel > 0 && r.medianKernel < 50000;
        rec.text = percentText(rec.sharePct) + " of step time " + devices.verb("wait") +
                   " for the host to launch work" +
                   (shortKernelsDominate
                        ? " (median kernel " + usText(r.medianKernel) + ", " +
                              std::to_string(int64_t(kernelsPerStep + 0.5)) + " kernels per step)"
                        : std::string()) +
                   ": capture the step in CUDA graphs, fuse kernels (torch.compile), move host "
                   "work out of the step";
        rec.evidence = QJsonObject{{"host_wait_ns", qint64(launchWait)},
                                   {"median_kernel_ns", qint64(r.medianKernel)},
                                   {"kernels_per_step", kernelsPerStep},
                                   {"launch_latency_p50_ns", qint64(r.launchLatency.p50)},
                                   {"launch_latency_p95_ns", qint64(r.launchLatency.p95)},
                                   {"gaps", qint64(r.gapCounts[size_t(StepCategory::HostWait)])}};
        place(rec, longestGap(StepCategory::HostWait));
        r.recommendations.push_back(std::move(rec));
    }

    int64_t commTotal = 0, commHidden = 0;
    for (const DeviceStepBreakdown& b : r.breakdown) {
        commTotal += b.communicationTotal;
        commHidden += b.communicationHidden;
    }
    const int64_t exposed = r.total(StepCategory::Communication);
    if (pct(exposed) >= 5.0) {
        StepRecommendation rec;
        rec.kind = "exposed_communication";
        rec.sharePct = pct(exposed);
        const double hiddenPct =
            commTotal > 0 ? 100.0 * double(commHidden) / double(commTotal) : 0.0;
        rec.text = percentText(rec.sharePct) + " of step time " + devices.verb("communicate") +
                   " with no compute beside it (" + percentText(hiddenPct) +
                   " of communication is hidden): overlap it with compute (DDP bucket_cap_mb, "
                   "FSDP prefetch, async collectives) or shrink it";
        rec.evidence = QJsonObject{{"communication_ns", qint64(commTotal)},
                                   {"hidden_ns", qint64(commHidden)},
                                   {"exposed_ns", qint64(exposed)},
                                   {"hidden_pct", hiddenPct}};
        rec.start = longest[0];
        rec.end = longest[1];
        rec.track = longestCommTrack;
        r.recommendations.push_back(std::move(rec));
    }

    const int64_t copies = r.total(StepCategory::Memcpy) + r.total(StepCategory::Memset);
    if (pct(copies) >= 10.0) {
        int64_t h2d = 0, d2h = 0, d2d = 0, peer = 0, other = 0;
        for (const DeviceStepBreakdown& b : r.breakdown) {
            h2d += b.h2d;
            d2h += b.d2h;
            d2d += b.d2d;
            peer += b.peer;
            other += b.otherCopy;
        }
        StepRecommendation rec;
        rec.kind = "memcpy_bound";
        rec.sharePct = pct(copies);
        std::string split;
        for (const auto& [label, ns] :
             {std::pair{"H2D", h2d}, std::pair{"D2H", d2h}, std::pair{"D2D", d2d},
              std::pair{"peer", peer}, std::pair{"other copies", other}})
            if (ns > 0)
                split += (split.empty() ? "" : ", ") + std::string(label) + " " + usText(ns);
        const bool xla = r.source == StepSource::XlaModules || r.source == StepSource::XlaSteps;
        rec.text = percentText(rec.sharePct) + " of step time " + devices.noun +
                   " only copy or set memory" + (split.empty() ? "" : " (" + split + ")") +
                   (xla ? ": keep the operands in device memory (no host offload in the step), "
                          "issue the copies earlier or overlap them with compute; the Transfers "
                          "analysis gives each copy's link, bandwidth and re-simulated saving"
                        : ": pin host memory and copy with non_blocking=True, keep tensors on "
                          "the device, avoid .cpu() and .item() in the step");
        rec.evidence = QJsonObject{{"memcpy_ns", qint64(r.total(StepCategory::Memcpy))},
                                   {"memset_ns", qint64(r.total(StepCategory::Memset))},
                                   {"h2d_ns", qint64(h2d)},
                                   {"d2h_ns", qint64(d2h)},
                                   {"d2d_ns", qint64(d2d)},
                                   {"peer_ns", qint64(peer)},
                                   {"other_copy_ns", qint64(other)}};
        rec.start = longest[2];
        rec.end = longest[3];
        rec.track = longestCopyTrack;
        r.recommendations.push_back(std::move(rec));
    }

    // Many short kernels: their launch and tail overheads add up; fusion recovers at most the
    // idle between them, which launch_bound already counts, so this one claims nothing extra.
    if (computeKernels >= 100 && shortKernels * 2 >= computeKernels && computeTime > 0) {
        StepRecommendation rec;
        rec.kind = "small_kernels";
        rec.sharePct = 0;
        rec.text = std::to_string(shortKernels) + " of " + std::to_string(computeKernels) +
                   " kernels run under 10 µs (" +
                   percentText(100.0 * double(shortKernelTime) / double(computeTime)) +
                   " of compute time): fuse them (torch.compile, fused optimizers) or batch "
                   "more work per kernel";
        rec.evidence = QJsonObject{{"kernels", qint64(computeKernels)},
                                   {"short_kernels", qint64(shortKernels)},
                                   {"short_kernel_ns", qint64(shortKernelTime)},
                                   {"median_kernel_ns", qint64(r.medianKernel)}};
        r.recommendations.push_back(std::move(rec));
    }

    const int64_t idle = r.total(StepCategory::Idle);
    if (pct(idle) >= 20.0) {
        StepRecommendation rec;
        rec.kind = "device_idle";
        rec.sharePct = pct(idle);
        rec.text = percentText(rec.sharePct) + " of step time " + devices.verb("idle") +
                   " with nothing launched late and no input or runtime call on the "
                   "host: they wait on other streams or devices, or the step has no work for "
                   "them";
        rec.evidence = QJsonObject{{"idle_ns", qint64(idle)},
                                   {"gaps", qint64(r.gapCounts[size_t(StepCategory::Idle)])}};
        place(rec, longestGap(StepCategory::Idle));
        r.recommendations.push_back(std::move(rec));
    }
    std::stable_sort(r.recommendations.begin(), r.recommendations.end(),
                     [](const StepRecommendation& a, const StepRecommendation& b) {
                         return a.sharePct > b.sharePct;
                     });
}

// The deepest host slice at `t`, preferring the track that launched the next work.
void describeGap(const TraceStore& store, const Gathered& g, IdleGap& gap, int64_t launchTrack) {
    const int64_t mid = gap.start + (gap.end - gap.start) / 2;
    std::vector<int64_t> tracks;
    if (launchTrack >= 0) tracks.push_back(launchTrack);
    for (int64_t t : g.launchingTracks)
        if (t != launchTrack) tracks.push_back(t);
    if (tracks.empty()) {
        // No flows: the host tracks with the most slices.
        std::vector<const TrackRow*> rows;
        for (int64_t t : g.hostTracks)
            if (const TrackRow* row = store.track(t)) rows.push_back(row);
        std::sort(rows.begin(), rows.end(),
                  [](const TrackRow* a, const TrackRow* b) { return a->slices > b->slices; });
        for (size_t i = 0; i < rows.size() && i < 4; ++i) tracks.push_back(rows[i]->id);
    }
    for (int64_t t : tracks) {
        const SliceItem* best = nullptr;
        const std::vector<SliceItem> at = store.slices(t, mid, mid, 0);
        for (const SliceItem& s : at)
            if (s.kind == ItemKind::Slice && s.start <= mid && sliceEnd(s) > mid &&
                classifyHostName(store.text(s.name)) != kHostIgnored &&
                (!best || s.depth > best->depth))
                best = &s;
        if (best) {
            gap.hostActivity = store.text(best->name);
            gap.hostTrack = t;
            return;
        }
    }
}

// Launch latency and the kernel median from every activity's figures (sorted here; negative
// latencies were counted already).
void setKernelFigures(StepAnalysis& r, std::vector<int64_t>& latencies,
                      std::vector<int64_t>& computeDurations) {
    std::sort(latencies.begin(), latencies.end());
    r.launchLatency.count = latencies.size();
    if (!latencies.empty()) {
        r.launchLatency.mean = std::accumulate(latencies.begin(), latencies.end(), int64_t(0)) /
                               int64_t(latencies.size());
        r.launchLatency.p50 = nearestRank(latencies, 0.5);
        r.launchLatency.p95 = nearestRank(latencies, 0.95);
        r.launchLatency.max = latencies.back();
    }
    std::sort(computeDurations.begin(), computeDurations.end());
    r.medianKernel = nearestRank(computeDurations, 0.5);
}

// The per-activity figures behind the percentiles, kept so that a run's hosts join exactly.
struct KernelFigures {
    std::vector<int64_t> latencies;         // launch -> start, sorted
    std::vector<int64_t> computeDurations;  // sorted
};

StepAnalysis analyzeOne(const TraceStore& store, const StepOptions& options,
                        KernelFigures& figures) {
    StepAnalysis r;
    Gathered g = gather(store, options);
    detectSteps(r, g, store, options);
    // A CPU-only trace, or one whose device lines hold no activity (a CUPTI range profile):
    // its idle causes still show, but nothing is recommended about a device it does not have.
    const bool anyDevice = !g.devices.empty();
    if (!anyDevice) {
        g.devices.push_back({"(no device activity)", -1, {}});
        g.activities.emplace_back();
    }
    r.devices = g.devices;
    if (r.steps.empty()) return r;

    const int64_t from = std::min(store.start(), r.steps.front().start);
    int64_t to = store.end();
    for (const Step& s : r.steps) to = std::max(to, s.end);

    std::priority_queue<GapCandidate> longestGaps;
    std::array<int64_t, 4> longest{0, 0, 0, 0};  // exposed communication, then exposed copy
    int64_t longestCommTrack = -1, longestCopyTrack = -1;
    int64_t syncWait = 0;
    uint64_t computeKernels = 0, shortKernels = 0;
    int64_t shortKernelTime = 0, computeTime = 0;
    std::vector<int64_t> computeDurations, latencies;

    r.breakdown.resize(r.steps.size() * r.devices.size());
    for (size_t d = 0; d < r.devices.size(); ++d) {
        const std::vector<Activity>& acts = g.activities[d];
        for (const Activity& a : acts) {
            if (a.launch != INT64_MIN) {
                if (a.start >= a.launch)
                    latencies.push_back(a.start - a.launch);
                else
                    ++r.launchLatency.negative;
            }
        }
        std::vector<GapInfo> gapInfo;
        const std::vector<Segment> segs = deviceSegments(acts, g, from, to, gapInfo);
        const int64_t firstTrack = r.devices[d].tracks.empty() ? -1 : r.devices[d].tracks[0];
        for (const Step& step : r.steps) {
            DeviceStepBreakdown& b = r.breakdown[size_t(step.index) * r.devices.size() + d];
            b.step = step.index;
            b.device = int(d);
            b.start = step.start;
            b.end = step.end;
            // Activities starting in the step.
            const auto first =
                std::lower_bound(acts.begin(), acts.end(), step.start,
                                 [](const Activity& a, int64_t t) { return a.start < t; });
            for (auto it = first; it != acts.end() && it->start < step.end; ++it) {
                ++b.kernels;
                if (isCompute(it->cls)) {
                    const int64_t dur = it->end - it->start;
                    ++computeKernels;
                    computeTime += dur;
                    computeDurations.push_back(dur);
                    if (dur < 10000) {
                        ++shortKernels;
                        shortKernelTime += dur;
                    }
                }
            }
            size_t i =
                size_t(std::upper_bound(segs.begin(), segs.end(), step.start,
                                        [](int64_t t, const Segment& s) { return t < s.end; }) -
                       segs.begin());
            IdleGap gap;
            int64_t gapId = -1;
            auto closeGap = [&] {
                if (gapId < 0) return;
                const std::array<std::pair<int64_t, StepCategory>, 3> parts{
                    std::pair{gap.input, StepCategory::Input},
                    std::pair{gap.hostWait, StepCategory::HostWait},
                    std::pair{gap.idle, StepCategory::Idle}};
                gap.cause = std::max_element(parts.begin(), parts.end(), [](auto& x, auto& y) {
                                return x.first < y.first;
                            })->second;
                ++r.gapCounts[size_t(gap.cause)];
                // A gap opening while the host is in a synchronisation is the drained queue
                // the sync leaves behind: its host wait is a sync stall (1 µs of clock skew).
                if (gap.hostWait > 0 && overlapsAny(g.host[size_t(HostCategory::Sync)],
                                                    gap.start - 1000, gap.start + 1))
                    syncWait += gap.hostWait;
                const int64_t launchTrack = gapInfo[size_t(gapId)].launchTrack;
                if (longestGaps.size() < StepAnalysis::kMaxGaps)
                    longestGaps.push({gap, launchTrack});
                else if (gap.duration() > longestGaps.top().gap.duration()) {
                    longestGaps.pop();
                    longestGaps.push({gap, launchTrack});
                }
                gapId = -1;
            };
            for (; i < segs.size() && segs[i].start < step.end; ++i) {
                const Segment& s = segs[i];
                const int64_t a = std::max(s.start, step.start), z = std::min(s.end, step.end);
                if (z <= a) continue;
                const int64_t ns = z - a;
                b.ns[size_t(categoryOf(s.cls))] += ns;
                switch (s.cls) {
                    case kGemm:
                        b.gemm += ns;
                        break;
                    case kAttention:
                        b.attention += ns;
                        break;
                    case kOtherCompute:
                        b.otherCompute += ns;
                        break;
                    case kH2D:
                        b.h2d += ns;
                        break;
                    case kD2H:
                        b.d2h += ns;
                        break;
                    case kD2D:
                        b.d2d += ns;
                        break;
                    case kPeer:
                        b.peer += ns;
                        break;
                    case kOtherCopy:
                        b.otherCopy += ns;
                        break;
                    default:
                        break;
                }
                if (s.active & kActiveCommunication) {
                    b.communicationTotal += ns;
                    if (s.active & kActiveCompute) b.communicationHidden += ns;
                }
                if (s.active & kActiveCopy) {
                    b.memcpyTotal += ns;
                    if (s.active & kActiveCompute) b.memcpyHidden += ns;
                }
                if (s.cls == kCommunication && ns > longest[1] - longest[0]) {
                    longest[0] = a;
                    longest[1] = z;
                    longestCommTrack = firstTrack;
                }
                if (isCopy(s.cls) && ns > longest[3] - longest[2]) {
                    longest[2] = a;
                    longest[3] = z;
                    longestCopyTrack = firstTrack;
                }
                if (s.gapId < 0) {
                    closeGap();
                    continue;
                }
                if (s.gapId != gapId) {
                    closeGap();
                    gap = IdleGap{};
                    gap.step = step.index;
                    gap.device = int(d);
                    gap.start = a;
                    gapId = s.gapId;
                }
                gap.end = z;
                if (s.cls == kSegInput)
                    gap.input += ns;
                else if (s.cls == kSegHostWait)
                    gap.hostWait += ns;
                else
                    gap.idle += ns;
            }
            closeGap();
        }
    }

    // Host side of each step.
    {
        struct Event {
            int64_t t;
            int32_t delta;
            uint8_t cls;
        };
        std::vector<Event> events;
        for (size_t c = 0; c < g.host.size(); ++c)
            for (const Interval& i : g.host[c]) {
                events.push_back({i.start, +1, uint8_t(c)});
                events.push_back({i.end, -1, uint8_t(c)});
            }
        std::sort(events.begin(), events.end(),
                  [](const Event& a, const Event& b) { return a.t < b.t; });
        std::vector<Segment> hostSegs;
        std::array<int32_t, kHostCategoryCount> count{};
        int64_t t = from;
        for (size_t e = 0; e < events.size();) {
            const int64_t now = events[e].t;
            if (now > t) {
                uint8_t cls = uint8_t(HostCategory::Idle);
                for (uint8_t c = 0; c < kHostCategoryCount; ++c)
                    if (count[c] > 0) {
                        cls = c;
                        break;
                    }
                hostSegs.push_back({t, now, cls, 0, -1});
                t = now;
            }
            for (; e < events.size() && events[e].t == now; ++e)
                count[events[e].cls] += events[e].delta;
        }
        if (to > t) hostSegs.push_back({t, to, uint8_t(HostCategory::Idle), 0, -1});
        for (const Step& step : r.steps) {
            HostStepBreakdown h;
            h.step = step.index;
            int64_t covered = 0;
            size_t i =
                size_t(std::upper_bound(hostSegs.begin(), hostSegs.end(), step.start,
                                        [](int64_t x, const Segment& s) { return x < s.end; }) -
                       hostSegs.begin());
            for (; i < hostSegs.size() && hostSegs[i].start < step.end; ++i) {
                const int64_t a = std::max(hostSegs[i].start, step.start);
                const int64_t z = std::min(hostSegs[i].end, step.end);
                if (z <= a) continue;
                h.ns[hostSegs[i].cls] += z - a;
                covered += z - a;
            }
            h.ns[size_t(HostCategory::Idle)] += step.duration() - covered;
            r.host.push_back(h);
        }
    }

    setKernelFigures(r, latencies, computeDurations);
    figures.latencies = std::move(latencies);
    figures.computeDurations = std::move(computeDurations);

    std::vector<GapCandidate> candidates;
    while (!longestGaps.empty()) {
        candidates.push_back(longestGaps.top());
        longestGaps.pop();
    }
    std::reverse(candidates.begin(), candidates.end());
    for (GapCandidate& c : candidates) {
        describeGap(store, g, c.gap, c.launchTrack);
        r.gaps.push_back(std::move(c.gap));
    }
    if (anyDevice)
        recommend(r, r.gaps, g.syncCalls, longest, longestCommTrack, longestCopyTrack,
                  computeKernels, shortKernels, shortKernelTime, computeTime, syncWait);
    return r;
}

// Steps of a run's hosts matched by name when every host names its steps uniquely (the same
// ProfilerStep#N on every rank), else by position. Returns per host the joined index of each
// of its steps, and the joined steps in order of first appearance.
std::vector<std::vector<int>> matchHostSteps(const std::vector<StepAnalysis>& hosts,
                                             std::vector<Step>& joined) {
    bool byName = true;
    for (const StepAnalysis& h : hosts) {
        std::unordered_set<std::string> names;
        for (const Step& s : h.steps) byName = byName && names.insert(s.name).second;
    }
    std::vector<std::vector<int>> index(hosts.size());
    std::unordered_map<std::string, int> joinedOfName;
    for (size_t h = 0; h < hosts.size(); ++h)
        for (size_t i = 0; i < hosts[h].steps.size(); ++i) {
            const Step& s = hosts[h].steps[i];
            int j = int(i);
            if (byName) {
                const auto [it, added] = joinedOfName.try_emplace(s.name, int(joined.size()));
                j = it->second;
            }
            if (j >= int(joined.size())) {
                Step first = s;
                first.index = j;
                joined.push_back(first);
            }
            Step& into = joined[size_t(j)];
            into.start = std::min(into.start, s.start);
            into.end = std::max(into.end, s.end);
            index[h].push_back(j);
        }
    return index;
}

// Joins the hosts' analyses (see analyzeSteps).
StepAnalysis joinHosts(std::vector<StepAnalysis> hosts, const std::vector<RunHost>& runHosts,
                       std::vector<KernelFigures>& figures) {
    StepAnalysis r;
    r.source = hosts.front().source;
    r.stepOp = hosts.front().stepOp;
    const std::vector<std::vector<int>> stepOf = matchHostSteps(hosts, r.steps);
    std::vector<int> firstDevice;
    for (size_t h = 0; h < hosts.size(); ++h) {
        firstDevice.push_back(int(r.devices.size()));
        for (StepDevice d : hosts[h].devices) {
            if (!d.name.starts_with(runHosts[h].name)) d.name = runHosts[h].name + " " + d.name;
            r.devices.push_back(std::move(d));
        }
    }
    const size_t devices = r.devices.size();
    r.breakdown.resize(r.steps.size() * devices);
    for (size_t j = 0; j < r.steps.size(); ++j)
        for (size_t d = 0; d < devices; ++d) {  // a host without the step: an empty span
            DeviceStepBreakdown& b = r.breakdown[j * devices + d];
            b.step = int(j);
            b.device = int(d);
            b.start = b.end = r.steps[j].start;
        }
    r.host.resize(r.steps.size());
    for (size_t j = 0; j < r.steps.size(); ++j) r.host[j].step = int(j);
    std::vector<int64_t> latencies, computeDurations;
    for (size_t h = 0; h < hosts.size(); ++h) {
        StepAnalysis& a = hosts[h];
        for (DeviceStepBreakdown b : a.breakdown) {
            b.step = stepOf[h][size_t(b.step)];
            b.device += firstDevice[h];
            r.breakdown[size_t(b.step) * devices + size_t(b.device)] = b;
        }
        for (const HostStepBreakdown& hs : a.host) {
            HostStepBreakdown& into = r.host[size_t(stepOf[h][size_t(hs.step)])];
            for (size_t c = 0; c < kHostCategoryCount; ++c) into.ns[c] += hs.ns[c];
        }
        for (IdleGap gap : a.gaps) {
            gap.step = stepOf[h][size_t(gap.step)];
            gap.device += firstDevice[h];
            r.gaps.push_back(std::move(gap));
        }
        for (size_t c = 0; c < kStepCategoryCount; ++c) r.gapCounts[c] += a.gapCounts[c];
        r.launchLatency.negative += a.launchLatency.negative;
        latencies.insert(latencies.end(), figures[h].latencies.begin(), figures[h].latencies.end());
        computeDurations.insert(computeDurations.end(), figures[h].computeDurations.begin(),
                                figures[h].computeDurations.end());
    }
    std::stable_sort(r.gaps.begin(), r.gaps.end(), [](const IdleGap& x, const IdleGap& y) {
        return x.duration() > y.duration();
    });
    if (r.gaps.size() > StepAnalysis::kMaxGaps) r.gaps.resize(StepAnalysis::kMaxGaps);
    setKernelFigures(r, latencies, computeDurations);

    // Per kind, the host where it weighs most speaks for the run; its share is what every
    // host's recommendation of that kind recovers, over the run's device time.
    const double runTime = double(std::max<int64_t>(r.totalDeviceTime(), 1));
    std::map<std::string, std::pair<double, std::vector<size_t>>> kinds;  // recovered ns, hosts
    std::map<std::string, std::pair<double, StepRecommendation>> strongest;
    for (size_t h = 0; h < hosts.size(); ++h) {
        const double hostTime = double(hosts[h].totalDeviceTime());
        for (const StepRecommendation& rec : hosts[h].recommendations) {
            const double recovered = rec.sharePct / 100.0 * hostTime;
            auto& [ns, which] = kinds[rec.kind];
            ns += recovered;
            which.push_back(h);
            auto it = strongest.find(rec.kind);
            if (it == strongest.end() || recovered > it->second.first) {
                StepRecommendation named = rec;
                named.text = runHosts[h].name + ": " + rec.text;
                strongest[rec.kind] = {recovered, std::move(named)};
            }
        }
    }
    for (auto& [kind, entry] : strongest) {
        StepRecommendation rec = std::move(entry.second);
        const auto& [recovered, which] = kinds[kind];
        rec.sharePct = 100.0 * recovered / runTime;
        QJsonArray names;
        for (size_t h : which) names.append(QString::fromStdString(runHosts[h].name));
        rec.evidence.insert("hosts", names);
        if (which.size() > 1)
            rec.text += " (" + std::to_string(which.size()) + " hosts; " +
                        percentText(rec.sharePct) + " of the run's device time in all)";
        r.recommendations.push_back(std::move(rec));
    }
    std::stable_sort(r.recommendations.begin(), r.recommendations.end(),
                     [](const StepRecommendation& x, const StepRecommendation& y) {
                         return x.sharePct > y.sharePct;
                     });
    return r;
}

}  // namespace

StepAnalysis analyzeSteps(const TraceStore& store, const StepOptions& options) {
    std::vector<RunHost> hosts;
    if (options.withinTrack < 0)
        for (RunHost& h : runHosts(store.metadata()))
            if (h.track >= 0) hosts.push_back(std::move(h));
    if (hosts.size() < 2) {
        KernelFigures figures;
        return analyzeOne(store, options, figures);
    }
    std::vector<StepAnalysis> analyses;
    std::vector<KernelFigures> figures(hosts.size());
    for (size_t h = 0; h < hosts.size(); ++h) {
        StepOptions within = options;
        within.withinTrack = hosts[h].track;
        analyses.push_back(analyzeOne(store, within, figures[h]));
    }
    return joinHosts(std::move(analyses), hosts, figures);
}

// ---- JSON ---------------------------------------------------------------------------------

namespace {

QJsonObject categoriesJson(const std::array<int64_t, kStepCategoryCount>& ns) {
    QJsonObject o;
    for (size_t c = 0; c < kStepCategoryCount; ++c) o.insert(kCategoryNames[c], qint64(ns[c]));
    return o;
}

QJsonArray namesJson(const auto& names) {
    QJsonArray a;
    for (const char* n : names) a.append(n);
    return a;
}

int64_t num(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(key);
    if (!v.isDouble()) throw Failure(std::string("stored step analysis: missing ") + key);
    return v.toInteger();
}

}  // namespace

QJsonObject toJson(const StepAnalysis& a) {
    QJsonObject o;
    o.insert("version", StepAnalysis::kVersion);
    o.insert("step_source", stepSourceName(a.source));
    if (!a.stepOp.empty()) o.insert("step_op", QString::fromStdString(a.stepOp));
    o.insert("categories", namesJson(kCategoryNames));
    o.insert("host_categories", namesJson(kHostCategoryNames));
    QJsonArray devices;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        QJsonArray tracks;
        for (int64_t t : a.devices[d].tracks) tracks.append(qint64(t));
        devices.append(QJsonObject{{"index", qint64(d)},
                                   {"name", QString::fromStdString(a.devices[d].name)},
                                   {"process_track", qint64(a.devices[d].processTrack)},
                                   {"tracks", tracks}});
    }
    o.insert("devices", devices);

    QJsonArray steps;
    for (const DeviceStepBreakdown& b : a.breakdown) {
        const Step& s = a.steps[size_t(b.step)];
        QJsonObject e{
            {"index", s.index},
            {"name", QString::fromStdString(s.name)},
            {"start", qint64(b.start)},
            {"end", qint64(b.end)},
            {"duration", qint64(b.duration())},
            {"marker_track", qint64(s.markerTrack)},
            {"device", QString::fromStdString(a.devices[size_t(b.device)].name)},
            {"device_index", b.device},
            {"breakdown", categoriesJson(b.ns)},
            {"compute_split", QJsonObject{{"gemm", qint64(b.gemm)},
                                          {"attention", qint64(b.attention)},
                                          {"other", qint64(b.otherCompute)}}},
            {"memcpy_split", QJsonObject{{"h2d", qint64(b.h2d)},
                                         {"d2h", qint64(b.d2h)},
                                         {"d2d", qint64(b.d2d)},
                                         {"peer", qint64(b.peer)},
                                         {"other", qint64(b.otherCopy)}}},
            {"communication",
             QJsonObject{{"total", qint64(b.communicationTotal)},
                         {"hidden", qint64(b.communicationHidden)},
                         {"exposed", qint64(b.communicationTotal - b.communicationHidden)}}},
            {"memcpy_overlap",
             QJsonObject{{"total", qint64(b.memcpyTotal)}, {"hidden", qint64(b.memcpyHidden)}}},
            {"kernels", qint64(b.kernels)}};
        if (b.start != s.start || b.end != s.end) {  // a host's own step within a run's step
            e.insert("step_start", qint64(s.start));
            e.insert("step_end", qint64(s.end));
        }
        steps.append(e);
    }
    o.insert("steps", steps);

    QJsonArray host;
    for (const HostStepBreakdown& h : a.host) {
        QJsonObject bd;
        for (size_t c = 0; c < kHostCategoryCount; ++c)
            bd.insert(kHostCategoryNames[c], qint64(h.ns[c]));
        host.append(QJsonObject{{"index", h.step}, {"breakdown", bd}});
    }
    o.insert("host", host);

    // Step time and its spread.
    std::vector<int64_t> durations;
    for (const Step& s : a.steps) durations.push_back(a.stepTime(s.index));
    std::sort(durations.begin(), durations.end());
    QJsonObject stepTime{{"count", qint64(durations.size())}};
    if (!durations.empty()) {
        const double mean =
            double(std::accumulate(durations.begin(), durations.end(), int64_t(0))) /
            double(durations.size());
        double var = 0;
        for (int64_t d : durations) var += (double(d) - mean) * (double(d) - mean);
        const double sd = std::sqrt(var / double(durations.size()));
        stepTime.insert("mean", qint64(std::llround(mean)));
        stepTime.insert("median", qint64(nearestRank(durations, 0.5)));
        stepTime.insert("min", qint64(durations.front()));
        stepTime.insert("max", qint64(durations.back()));
        stepTime.insert("stddev", qint64(std::llround(sd)));
        stepTime.insert("cv_pct", mean > 0 ? 100.0 * sd / mean : 0.0);
    }
    o.insert("step_time", stepTime);

    std::array<int64_t, kStepCategoryCount> totals{};
    int64_t commTotal = 0, commHidden = 0, copyTotal = 0, copyHidden = 0;
    for (const DeviceStepBreakdown& b : a.breakdown) {
        for (size_t c = 0; c < kStepCategoryCount; ++c) totals[c] += b.ns[c];
        commTotal += b.communicationTotal;
        commHidden += b.communicationHidden;
        copyTotal += b.memcpyTotal;
        copyHidden += b.memcpyHidden;
    }
    QJsonObject share;
    for (size_t c = 0; c < kStepCategoryCount; ++c)
        share.insert(kCategoryNames[c], a.sharePct(StepCategory(c)));
    o.insert("totals", QJsonObject{{"device_time", qint64(a.totalDeviceTime())},
                                   {"breakdown", categoriesJson(totals)},
                                   {"share_pct", share}});
    o.insert("overlap",
             QJsonObject{{"communication_total", qint64(commTotal)},
                         {"communication_hidden", qint64(commHidden)},
                         {"communication_exposed", qint64(commTotal - commHidden)},
                         {"communication_hidden_pct",
                          commTotal > 0 ? 100.0 * double(commHidden) / double(commTotal) : 0.0},
                         {"memcpy_total", qint64(copyTotal)},
                         {"memcpy_hidden", qint64(copyHidden)}});
    o.insert("launch_latency", QJsonObject{{"count", qint64(a.launchLatency.count)},
                                           {"negative", qint64(a.launchLatency.negative)},
                                           {"mean", qint64(a.launchLatency.mean)},
                                           {"p50", qint64(a.launchLatency.p50)},
                                           {"p95", qint64(a.launchLatency.p95)},
                                           {"max", qint64(a.launchLatency.max)}});
    o.insert("median_kernel", qint64(a.medianKernel));

    QJsonArray gaps;
    for (const IdleGap& gap : a.gaps)
        gaps.append(QJsonObject{{"step", gap.step},
                                {"device_index", gap.device},
                                {"start", qint64(gap.start)},
                                {"end", qint64(gap.end)},
                                {"duration", qint64(gap.duration())},
                                {"cause", kCategoryNames[size_t(gap.cause)]},
                                {"input", qint64(gap.input)},
                                {"host_wait", qint64(gap.hostWait)},
                                {"idle", qint64(gap.idle)},
                                {"host_activity", QString::fromStdString(gap.hostActivity)},
                                {"host_track", qint64(gap.hostTrack)}});
    o.insert("idle_gaps", gaps);
    QJsonObject gapCounts;
    for (size_t c = size_t(StepCategory::HostWait); c < kStepCategoryCount; ++c)
        gapCounts.insert(kCategoryNames[c], qint64(a.gapCounts[c]));
    o.insert("idle_gap_counts", gapCounts);

    QJsonArray recs;
    for (const StepRecommendation& rec : a.recommendations)
        recs.append(QJsonObject{{"kind", QString::fromStdString(rec.kind)},
                                {"text", QString::fromStdString(rec.text)},
                                {"share_pct", rec.sharePct},
                                {"evidence", rec.evidence},
                                {"start", qint64(rec.start)},
                                {"end", qint64(rec.end)},
                                {"track", qint64(rec.track)}});
    o.insert("recommendations", recs);
    return o;
}

StepAnalysis stepAnalysisFromJson(const QJsonObject& o) {
    if (num(o, "version") != StepAnalysis::kVersion)
        throw Failure("stored step analysis: another version");
    StepAnalysis a;
    const std::string source = o.value("step_source").toString().toStdString();
    for (StepSource s :
         {StepSource::StepOp, StepSource::ProfilerStep, StepSource::XlaSteps,
          StepSource::XlaModules, StepSource::IterationMarker, StepSource::WholeTrace})
        if (source == stepSourceName(s)) a.source = s;
    a.stepOp = o.value("step_op").toString().toStdString();
    for (const QJsonValue v : o.value("devices").toArray()) {
        const QJsonObject d = v.toObject();
        StepDevice dev;
        dev.name = d.value("name").toString().toStdString();
        dev.processTrack = num(d, "process_track");
        for (const QJsonValue t : d.value("tracks").toArray()) dev.tracks.push_back(t.toInteger());
        a.devices.push_back(std::move(dev));
    }
    for (const QJsonValue v : o.value("steps").toArray()) {
        const QJsonObject e = v.toObject();
        const int index = int(num(e, "index"));
        if (index == int(a.steps.size())) {
            Step s;
            s.index = index;
            s.name = e.value("name").toString().toStdString();
            s.start = e.contains("step_start") ? num(e, "step_start") : num(e, "start");
            s.end = e.contains("step_end") ? num(e, "step_end") : num(e, "end");
            s.markerTrack = num(e, "marker_track");
            a.steps.push_back(std::move(s));
        }
        DeviceStepBreakdown b;
        b.step = index;
        b.device = int(num(e, "device_index"));
        b.start = num(e, "start");
        b.end = num(e, "end");
        if (b.step >= int(a.steps.size()) || b.device >= int(a.devices.size()))
            throw Failure("stored step analysis: step or device out of range");
        const QJsonObject bd = e.value("breakdown").toObject();
        for (size_t c = 0; c < kStepCategoryCount; ++c) b.ns[c] = num(bd, kCategoryNames[c]);
        const QJsonObject cs = e.value("compute_split").toObject();
        b.gemm = num(cs, "gemm");
        b.attention = num(cs, "attention");
        b.otherCompute = num(cs, "other");
        const QJsonObject ms = e.value("memcpy_split").toObject();
        b.h2d = num(ms, "h2d");
        b.d2h = num(ms, "d2h");
        b.d2d = num(ms, "d2d");
        b.peer = num(ms, "peer");
        b.otherCopy = num(ms, "other");
        const QJsonObject comm = e.value("communication").toObject();
        b.communicationTotal = num(comm, "total");
        b.communicationHidden = num(comm, "hidden");
        const QJsonObject mo = e.value("memcpy_overlap").toObject();
        b.memcpyTotal = num(mo, "total");
        b.memcpyHidden = num(mo, "hidden");
        b.kernels = num(e, "kernels");
        a.breakdown.push_back(b);
    }
    for (const QJsonValue v : o.value("host").toArray()) {
        const QJsonObject e = v.toObject();
        HostStepBreakdown h;
        h.step = int(num(e, "index"));
        const QJsonObject bd = e.value("breakdown").toObject();
        for (size_t c = 0; c < kHostCategoryCount; ++c) h.ns[c] = num(bd, kHostCategoryNames[c]);
        a.host.push_back(h);
    }
    const QJsonObject ll = o.value("launch_latency").toObject();
    a.launchLatency.count = uint64_t(num(ll, "count"));
    a.launchLatency.negative = uint64_t(num(ll, "negative"));
    a.launchLatency.mean = num(ll, "mean");
    a.launchLatency.p50 = num(ll, "p50");
    a.launchLatency.p95 = num(ll, "p95");
    a.launchLatency.max = num(ll, "max");
    a.medianKernel = num(o, "median_kernel");
    for (const QJsonValue v : o.value("idle_gaps").toArray()) {
        const QJsonObject e = v.toObject();
        IdleGap gap;
        gap.step = int(num(e, "step"));
        gap.device = int(num(e, "device_index"));
        gap.start = num(e, "start");
        gap.end = num(e, "end");
        gap.input = num(e, "input");
        gap.hostWait = num(e, "host_wait");
        gap.idle = num(e, "idle");
        const std::string cause = e.value("cause").toString().toStdString();
        for (size_t c = 0; c < kStepCategoryCount; ++c)
            if (cause == kCategoryNames[c]) gap.cause = StepCategory(c);
        gap.hostActivity = e.value("host_activity").toString().toStdString();
        gap.hostTrack = num(e, "host_track");
        a.gaps.push_back(std::move(gap));
    }
    const QJsonObject counts = o.value("idle_gap_counts").toObject();
    for (size_t c = size_t(StepCategory::HostWait); c < kStepCategoryCount; ++c)
        a.gapCounts[c] = uint64_t(num(counts, kCategoryNames[c]));
    for (const QJsonValue v : o.value("recommendations").toArray()) {
        const QJsonObject e = v.toObject();
        StepRecommendation rec;
        rec.kind = e.value("kind").toString().toStdString();
        rec.text = e.value("text").toString().toStdString();
        rec.sharePct = e.value("share_pct").toDouble();
        rec.evidence = e.value("evidence").toObject();
        rec.start = num(e, "start");
        rec.end = num(e, "end");
        rec.track = num(e, "track");
        a.recommendations.push_back(std::move(rec));
    }
    return a;
}

// ---- storage ------------------------------------------------------------------------------

void storeSteps(Workspace& workspace, int64_t profileId, const StepAnalysis& analysis) {
    const QByteArray json = QJsonDocument(toJson(analysis)).toJson(QJsonDocument::Compact);
    std::string packed;
    packChunk(std::string_view(json.constData(), size_t(json.size())), packed);
    sql::Statement drop(workspace.db(), "DELETE FROM blobs WHERE profile_id = ? AND stream = ?");
    drop.bind(1, profileId).bind(2, std::string(kStepsStream));
    drop.exec();
    workspace.appendBlob(profileId, kStepsStream, 0, packed.data(), packed.size());
}

std::optional<StepAnalysis> loadStoredSteps(const Workspace& workspace, int64_t profileId) {
    const std::vector<std::string> blobs = workspace.readBlobs(profileId, kStepsStream);
    if (blobs.size() != 1) return std::nullopt;
    const std::string raw = unpackChunk(blobs[0]);
    const QJsonObject o =
        QJsonDocument::fromJson(QByteArray(raw.data(), qsizetype(raw.size()))).object();
    if (o.value("version").toInteger() != StepAnalysis::kVersion) return std::nullopt;
    return stepAnalysisFromJson(o);
}

StepAnalysis loadOrAnalyzeSteps(Workspace& workspace, int64_t profileId,
                                const StepOptions& options) {
    if (options.stepOp.empty())
        if (auto stored = loadStoredSteps(workspace, profileId)) return std::move(*stored);
    const TraceStore store(workspace, profileId);
    StepAnalysis analysis = analyzeSteps(store, options);
    if (options.stepOp.empty() && !workspace.readOnly()) {
        sql::Transaction tx(workspace.db());
        storeSteps(workspace, profileId, analysis);
        tx.commit();
    }
    return analysis;
}

// ---- compare, suggest, table --------------------------------------------------------------

QJsonObject compareSteps(const StepAnalysis& a, const StepAnalysis& b) {
    auto meanPerStep = [](const StepAnalysis& s, StepCategory c) {
        const size_t n = s.breakdown.size();
        return n ? double(s.total(c)) / double(n) : 0.0;
    };
    QJsonArray categories;
    for (size_t c = 0; c < kStepCategoryCount; ++c) {
        const auto cat = StepCategory(c);
        const double sa = a.sharePct(cat), sb = b.sharePct(cat);
        categories.append(QJsonObject{{"category", kCategoryNames[c]},
                                      {"a_share_pct", sa},
                                      {"b_share_pct", sb},
                                      {"delta_share_pct", sb - sa},
                                      {"a_mean_ns", meanPerStep(a, cat)},
                                      {"b_mean_ns", meanPerStep(b, cat)}});
    }
    auto kinds = [](const StepAnalysis& s) {
        std::vector<std::string> k;
        for (const StepRecommendation& r : s.recommendations) k.push_back(r.kind);
        return k;
    };
    const auto ka = kinds(a), kb = kinds(b);
    QJsonArray gone, added, kept;
    for (const std::string& k : ka)
        (std::find(kb.begin(), kb.end(), k) == kb.end() ? gone : kept)
            .append(QString::fromStdString(k));
    for (const std::string& k : kb)
        if (std::find(ka.begin(), ka.end(), k) == ka.end()) added.append(QString::fromStdString(k));
    auto meanStep = [](const StepAnalysis& s) {
        if (s.steps.empty()) return 0.0;
        int64_t sum = 0;
        for (const Step& st : s.steps) sum += s.stepTime(st.index);
        return double(sum) / double(s.steps.size());
    };
    return QJsonObject{{"a_steps", qint64(a.steps.size())}, {"b_steps", qint64(b.steps.size())},
                       {"a_mean_step_ns", meanStep(a)},     {"b_mean_step_ns", meanStep(b)},
                       {"categories", categories},          {"recommendations_gone", gone},
                       {"recommendations_new", added},      {"recommendations_kept", kept}};
}

QJsonObject stepSuggestionsJson(const StepAnalysis& analysis) {
    QJsonArray out;
    const int64_t all = analysis.totalDeviceTime();
    for (const StepRecommendation& rec : analysis.recommendations)
        out.append(
            QJsonObject{{"kind", QString::fromStdString(rec.kind)},
                        {"text", QString::fromStdString(rec.text)},
                        {"share_pct", rec.sharePct},
                        {"saving_ns", qint64(std::llround(rec.sharePct / 100.0 * double(all)))},
                        {"evidence", rec.evidence},
                        {"start", qint64(rec.start)},
                        {"end", qint64(rec.end)},
                        {"track", qint64(rec.track)}});
    return QJsonObject{{"suggestions", out}};
}

std::string stepsTable(const StepAnalysis& a) {
    std::ostringstream out;
    out << "steps: " << a.steps.size() << " (" << stepSourceName(a.source);
    if (!a.stepOp.empty()) out << ": " << a.stepOp;
    out << "), devices: " << a.devices.size() << "\n";
    char line[512];
    // The device column fits the longest name (a run's devices carry their host), up to 48.
    int width = 18;
    for (const StepDevice& d : a.devices) width = std::max(width, int(d.name.size()));
    width = std::min(width, 48);
    std::snprintf(line, sizeof line, "%5s  %-*s %12s", "step", width, "device", "duration");
    out << line;
    for (const char* c : kCategoryNames) {
        std::snprintf(line, sizeof line, " %13s", c);
        out << line;
    }
    out << "\n";
    for (const DeviceStepBreakdown& b : a.breakdown) {
        const Step& s = a.steps[size_t(b.step)];
        std::snprintf(line, sizeof line, "%5d  %-*.*s %12s", s.index, width, width,
                      a.devices[size_t(b.device)].name.c_str(), usText(b.duration()).c_str());
        out << line;
        for (size_t c = 0; c < kStepCategoryCount; ++c) {
            const double pct =
                b.duration() > 0 ? 100.0 * double(b.ns[c]) / double(b.duration()) : 0.0;
            std::snprintf(line, sizeof line, " %12.1f%%", pct);
            out << line;
        }
        out << "\n";
    }
    out << "total";
    for (size_t c = 0; c < kStepCategoryCount; ++c)
        out << "  " << kCategoryNames[c] << " " << percentText(a.sharePct(StepCategory(c)));
    out << "\n";
    if (a.launchLatency.count > 0)
        out << "launch latency (launch -> start): p50 " << usText(a.launchLatency.p50) << ", p95 "
            << usText(a.launchLatency.p95) << " over " << a.launchLatency.count << " kernels\n";
    for (const StepRecommendation& rec : a.recommendations) out << "- " << rec.text << "\n";
    return out.str();
}

}  // namespace stallscope::trace
