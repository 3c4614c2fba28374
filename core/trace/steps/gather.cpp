// Reading a trace for the step analysis: which tracks are devices and which host threads, the
// devices' activities with the runtime calls that launched them, the host's intervals by
// category, and the step candidates. Tracks are told apart by the trace's evidence
// (core/trace/dialect.h), never by its format's name.

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>

#include "core/beside_thread.h"
#include "core/nearly_sorted.h"
#include "core/release_memory.h"
#include "core/trace/dialect.h"
#include "core/trace/hosts.h"
#include "core/trace/steps/internal.h"
#include "core/trace/trace_args.h"

namespace stallscope::trace::steps {

std::vector<SliceItem> firstChunk(const TraceStore& store, int64_t track) {
    std::vector<SliceItem> out;
    forEachChunk(
        store, track, [&](const std::vector<SliceItem>& chunk) { out = chunk; }, true);
    return out;
}

namespace {

enum class TrackRole { Device, Host, XlaSteps, XlaModules, Ignored };

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
    size_t deviceTrack, index;  // in Gatherer::deviceTracks_, in its activities
    int64_t correlation;
};

// A launch found for an activity after its track was read (by correlation).
struct LaunchPatch {
    size_t index;  // in its track's activities
    int64_t launch;
    int32_t track;
};

// Launch call -> device activity, by the flow's destination time on the device track.
struct Launch {
    int64_t toTs, ts, track;
    bool operator<(const Launch& o) const {
        return toTs != o.toTs ? toTs < o.toTs : ts != o.ts ? ts < o.ts : track < o.track;
    }
};

// A device track's launches by destination time, packed as the flows come (varints in blocks
// of 64, in pieces of 4 MB freed once passed: about 7 bytes a launch where 24 were held, and
// every launch of the trace is held while the flows are bound, the step analysis's peak). Read
// in order through one decoded block. Launches that do not come in order, or whose call is only
// found later (setTs), are sorted once in plain form.
class LaunchList {
  public:
    size_t size() const { return size_; }
    Launch operator[](size_t i) const {
        if (packed_.empty() && !plain_.empty()) return plain_[i];
        if (i / kBlock != decodedBlock_) decodeBlock(i / kBlock);
        return decoded_[i % kBlock];
    }
    void push_back(const Launch& l) {
        if (!plain_.empty()) {
            plain_.push_back(l);
            ++size_;
            return;
        }
        if (size_ > 0 && l < last_) inOrder_ = false;
        if (size_ % kBlock == 0) {
            if (packed_.empty() || packed_.back().size() + kBlock * kMaxRecordBytes > kPieceBytes) {
                packed_.emplace_back();
                if (packed_.size() > 1) packed_.back().reserve(kPieceBytes);
                pieceFirstBlock_.push_back(blocks_.size());
            }
            blocks_.push_back({uint32_t(packed_.size() - 1), uint32_t(packed_.back().size())});
            last_ = Launch{0, 0, 0};
        }
        ByteSpool& out = packed_.back();
        char* at = putZigzag(out.tail(kMaxRecordBytes), difference(l.toTs, last_.toTs));
        at = putZigzag(at, difference(l.toTs, l.ts));
        out.advance(putZigzag(at, difference(l.track, last_.track)));
        last_ = l;
        ++size_;
    }
    // The launch's call start, found after it was added.
    void setTs(size_t i, int64_t ts) {
        if (packed_.empty() && !plain_.empty())
            plain_[i].ts = ts;
        else
            patches_.emplace_back(i, ts);
    }
    // Sorted by destination time (flows usually come so; else sorted whole, once).
    void sort() {
        if (inOrder_ && patches_.empty()) return;
        std::vector<Launch> all;
        all.reserve(size_);
        for (size_t i = 0; i < size_; ++i) all.push_back((*this)[i]);
        for (const auto& [i, ts] : patches_) all[i].ts = ts;
        std::sort(all.begin(), all.end());
        clear();
        size_ = all.size();
        plain_ = std::move(all);
    }
    // The pieces wholly before launch i are freed (not to be read again).
    void releaseBefore(size_t i) {
        const size_t block = i / kBlock;
        while (released_ + 1 < packed_.size() && pieceFirstBlock_[released_ + 1] <= block)
            ByteSpool().swap(packed_[released_++]);
    }
    void clear() {
        std::vector<ByteSpool>().swap(packed_);
        std::vector<Block>().swap(blocks_);
        std::vector<size_t>().swap(pieceFirstBlock_);
        std::vector<std::pair<size_t, int64_t>>().swap(patches_);
        std::vector<Launch>().swap(plain_);
        size_ = released_ = 0;
        decodedBlock_ = SIZE_MAX;
        inOrder_ = true;
    }

  private:
    static constexpr size_t kBlock = 64;
    static constexpr size_t kPieceBytes = size_t(4) << 20;
    static constexpr size_t kMaxRecordBytes = 30;
    struct Block {
        uint32_t piece, offset;
    };
    void decodeBlock(size_t block) const {
        const char* at = packed_[blocks_[block].piece].data() + blocks_[block].offset;
        Launch previous{0, 0, 0};
        const size_t count = std::min(kBlock, size_ - block * kBlock);
        for (size_t k = 0; k < count; ++k) {
            Launch& l = decoded_[k];
            l.toTs = plus(previous.toTs, readZigzag(at));
            l.ts = difference(l.toTs, readZigzag(at));
            l.track = plus(previous.track, readZigzag(at));
            previous = l;
        }
        decodedBlock_ = block;
    }
    std::vector<ByteSpool> packed_;
    std::vector<Block> blocks_;
    std::vector<size_t> pieceFirstBlock_;
    std::vector<std::pair<size_t, int64_t>> patches_;  // (index, call start) for setTs
    std::vector<Launch> plain_;                        // sorted, when not packed
    Launch last_{0, 0, 0};
    size_t size_ = 0, released_ = 0;
    bool inOrder_ = true;
    mutable std::array<Launch, kBlock> decoded_{};
    mutable size_t decodedBlock_ = SIZE_MAX;
};

struct DeviceTrack {
    int64_t track;
    int device;
    std::vector<SliceItem> slices;
    uint8_t copyClass = kNotActivity;  // copyStreamClass of the track's name
    // Let go as its activities are read (unless the whole track may be read again:
    // Gatherer::keepLaunches_).
    LaunchList launches;
    // The track's activities by start, merged into its device's list once all are read.
    PackedActivities activities;
    std::vector<LaunchPatch> patches;  // by correlation, sorted by index before the merge
};

// A device track whose level 0 does not come by start: gathered again, keeping every launch.
struct NotInTimeOrder {};

class Gatherer {
  public:
    Gatherer(const TraceStore& store, const StepOptions& options, const HostsRead& hostsRead,
             bool keepLaunches)
        : store_(store),
          options_(options),
          hostsRead_(hostsRead),
          args_(store),
          hosts_(runHosts(store.metadata())),
          keepLaunches_(keepLaunches) {
        const EvidenceSet evidence = evidenceOf(store);
        nodeGraph_ = evidence.has(Evidence::NodeGraph);
        xlaLines_ = !nodeGraph_ && evidence.has(Evidence::XlaOpLines);
        g_.chrome = !nodeGraph_ && !xlaLines_;
    }

    Gathered run();

  private:
    void classifyName(uint32_t name);
    bool below(const TrackRow& t) const;
    std::string hostPrefix(int64_t track) const;
    int deviceFor(const TrackRow& t);
    TrackRole roleOf(const TrackRow& t, const std::unordered_set<int64_t>& streamProcesses);
    bool looksLikeStream(const TrackRow& t, const std::unordered_set<int64_t>& streamProcesses);
    void readHostTrack(const TrackRow& t);
    void readOtherTrack(const TrackRow& t, TrackRole role);
    // A track's level 0 by start (step candidates noted on the way, unless !stepOps).
    std::vector<SliceItem> readSlices(const TrackRow& t, bool stepOps = true);
    void hostSlice(int64_t track, const SliceItem& s);
    void stepOp(const SliceItem& s, int64_t track);
    void bindLaunchFlows();
    uint8_t activityClass(const DeviceTrack& d, size_t i, int64_t end);
    // Device slice i of d.slices as an activity, when it is one (bound to its launch).
    // `nextLaunch`: the first of d.launches not passed yet.
    void addActivity(DeviceTrack& d, size_t i, size_t& nextLaunch, std::vector<Unflowed>& unflowed);
    void readActivities(DeviceTrack& d, std::vector<Unflowed>& unflowed);
    // The device track's activities a chunk at a time, holding only the slices whose
    // classification still looks ahead.
    void streamActivities(DeviceTrack& d, const TrackRow& t, std::vector<Unflowed>& unflowed);
    void bindByCorrelation(const std::vector<Unflowed>& unflowed);
    // Each device's tracks' activities into its one list by start (Gathered::activities).
    void mergeActivities();

    const TraceStore& store_;
    const StepOptions& options_;
    const HostsRead& hostsRead_;
    TraceArgs args_;
    const std::vector<RunHost> hosts_;
    const bool keepLaunches_;
    bool nodeGraph_ = false, xlaLines_ = false;
    Gathered g_;
    // Per interned name: classified yet, seen on a host track (Kineto's GPU annotations), and
    // its device and host classes.
    std::vector<bool> classified_, onHost_;
    std::vector<uint8_t> deviceClassOf_, hostClassOf_;
    std::unordered_map<int64_t, int> deviceOfProcess_;
    std::vector<DeviceTrack> deviceTracks_;
    std::vector<RuntimeCall> calls_;  // the host track being read
    std::vector<std::pair<int64_t, PackedCalls>> callsOfTrack_;
    // The host's intervals per class as read, packed into g_.host once merged.
    std::array<IntervalRuns, kHostCategoryCount> host_;
    // hostsRead_ running beside the device tracks' reading; joined before g_ goes (declared
    // after it: destroyed first, also when the gathering throws).
    BesideThread hostsReading_;
};

void Gatherer::classifyName(uint32_t name) {
    if (name >= classified_.size()) {
        classified_.resize(name + 1, false);
        onHost_.resize(name + 1, false);
        deviceClassOf_.resize(name + 1, kNotActivity);
        hostClassOf_.resize(name + 1, kHostIgnored);
    }
    if (!classified_[name]) {
        classified_[name] = true;
        deviceClassOf_[name] = classifyDeviceName(store_.text(name));
        hostClassOf_[name] = classifyHostName(store_.text(name));
    }
}

// A multi-host run: tracks of one host only (withinTrack), or device names with their host.
bool Gatherer::below(const TrackRow& t) const {
    if (options_.withinTrack < 0) return true;
    for (const TrackRow* p = &t; p; p = p->parent >= 0 ? store_.track(p->parent) : nullptr)
        if (p->id == options_.withinTrack) return true;
    return false;
}

std::string Gatherer::hostPrefix(int64_t track) const {
    if (hosts_.empty() || options_.withinTrack >= 0) return std::string();
    const TrackRow* t = store_.track(track);
    while (t && t->parent >= 0 && store_.track(t->parent)) t = store_.track(t->parent);
    const int64_t top = t ? t->id : int64_t(-1);
    for (const RunHost& h : hosts_)
        if (h.track == top) return h.name + " ";
    return std::string();
}

int Gatherer::deviceFor(const TrackRow& t) {
    const int64_t key = nodeGraph_ ? t.id : t.parent;
    auto it = deviceOfProcess_.find(key);
    if (it != deviceOfProcess_.end()) return it->second;
    StepDevice d;
    const TrackRow* process = store_.track(t.parent);
    d.processTrack = nodeGraph_ ? -1 : t.parent;
    d.name = hostPrefix(t.id) + (nodeGraph_ ? t.name
                                 : process  ? deviceName(process->name)
                                            : t.name);
    g_.devices.push_back(std::move(d));
    deviceOfProcess_.emplace(key, int(g_.devices.size() - 1));
    return int(g_.devices.size() - 1);
}

// Chrome-style threads: a stream by name, by its first activities' args (Kineto traces without
// thread names), or a thread of a stream process carrying only copies (MTIA's "DMA_REQUEST",
// whose DMAs have no stream or correlation).
bool Gatherer::looksLikeStream(const TrackRow& t,
                               const std::unordered_set<int64_t>& streamProcesses) {
    const std::string n = lower(t.name);
    if (n.starts_with("stream ") || n.starts_with("stream#")) return true;
    const std::vector<SliceItem> first = firstChunk(store_, t.id);
    for (size_t i = 0, seen = 0; i < first.size() && seen < 8; ++i) {
        if (first[i].args == 0) continue;
        ++seen;
        if (args_.has(first[i].args, "stream") &&
            (args_.has(first[i].args, "device") || args_.has(first[i].args, "context")))
            return true;
    }
    if (!streamProcesses.count(t.parent)) return false;
    return !first.empty() && std::all_of(first.begin(), first.end(), [&](const SliceItem& s) {
        classifyName(s.name);
        return isCopy(deviceClassOf_[s.name]) || deviceClassOf_[s.name] == kMemset;
    });
}

TrackRole Gatherer::roleOf(const TrackRow& t, const std::unordered_set<int64_t>& streamProcesses) {
    if (nodeGraph_) return TrackRole::Device;
    if (!xlaLines_)
        return looksLikeStream(t, streamProcesses) ? TrackRole::Device : TrackRole::Host;
    const TrackRow* process = store_.track(t.parent);
    if (!process || !process->name.starts_with("/device:")) return TrackRole::Host;
    if (t.name.starts_with("XLA Ops") || t.name.starts_with("Async XLA Ops") ||
        t.name.starts_with("Stream #"))
        return TrackRole::Device;
    if (t.name == "Steps") return TrackRole::XlaSteps;
    if (t.name == "XLA Modules") return TrackRole::XlaModules;
    return TrackRole::Ignored;
}

void Gatherer::stepOp(const SliceItem& s, int64_t track) {
    if (!options_.stepOp.empty() && s.kind == ItemKind::Slice &&
        store_.text(s.name) == options_.stepOp)
        g_.stepOps.push_back({s.start, sliceEnd(s), options_.stepOp, track});
}

// One host slice: step markers, its class's intervals (merged on the way while the track's
// slices come by start: a track is one run of IntervalRuns).
void Gatherer::hostSlice(int64_t track, const SliceItem& s) {
    if (s.kind != ItemKind::Slice || s.unended) return;
    classifyName(s.name);
    onHost_[s.name] = true;
    const std::string& name = store_.text(s.name);
    const int64_t end = sliceEnd(s);
    if (name.starts_with("ProfilerStep#"))
        g_.profilerSteps.push_back({s.start, end, name, track});
    else if (isIterationMarker(name))
        g_.iterationMarkers.push_back({s.start, end, name, track});
    const uint8_t cls = hostClassOf_[s.name];
    if (cls == kHostIgnored) return;
    // Flows leave their source slice at its end; launches count from the call's start.
    if (cls == uint8_t(HostCategory::Runtime) || cls == uint8_t(HostCategory::Sync))
        calls_.push_back({end, s.start});
    if (cls == uint8_t(HostCategory::Sync)) g_.syncCalls.push_back({s.start, end, name, track});
    host_[cls].add(s.start, end);
}

// Host threads hold most of a trace's slices: streamed a chunk at a time.
void Gatherer::readHostTrack(const TrackRow& t) {
    g_.hostTracks.push_back(t.id);
    calls_.clear();
    calls_.reserve(size_t(t.slices));  // at most one a slice: no copies while growing
    forEachChunk(store_, t.id, [&](const std::vector<SliceItem>& chunk) {
        for (const SliceItem& s : chunk) {
            stepOp(s, t.id);
            hostSlice(t.id, s);
        }
    });
    for (IntervalRuns& runs : host_) runs.endRun();
    if (calls_.empty()) return;
    // Calls come by start; nested ones (a sync inside a runtime call) end out of that order.
    sortNearlySorted(calls_, std::less<>());
    callsOfTrack_.emplace_back(t.id, PackedCalls(calls_));
    releaseMemory(calls_);
}

namespace {

bool byStart(const SliceItem& a, const SliceItem& b) {
    return a.start != b.start ? a.start < b.start : a.depth < b.depth;
}

}  // namespace

std::vector<SliceItem> Gatherer::readSlices(const TrackRow& t, bool stepOps) {
    std::vector<SliceItem> slices;
    slices.reserve(t.slices + t.instants);  // exact: growth by doubling held up to twice that
    forEachChunk(store_, t.id, [&](const std::vector<SliceItem>& chunk) {
        if (stepOps)
            for (const SliceItem& s : chunk) stepOp(s, t.id);
        slices.insert(slices.end(), chunk.begin(), chunk.end());
    });
    if (!std::is_sorted(slices.begin(), slices.end(), byStart))
        std::stable_sort(slices.begin(), slices.end(), byStart);
    return slices;
}

void Gatherer::readOtherTrack(const TrackRow& t, TrackRole role) {
    const std::vector<SliceItem> slices = readSlices(t);
    if (role != TrackRole::XlaSteps && role != TrackRole::XlaModules) return;
    const int device = deviceFor(t);
    for (const SliceItem& s : slices) {
        if (s.kind != ItemKind::Slice || s.unended) continue;
        TimedSlice ts{s.start, sliceEnd(s), store_.text(s.name), t.id};
        if (role == TrackRole::XlaSteps)
            g_.xlaSteps.push_back(std::move(ts));
        else if (s.depth == 0)
            g_.xlaModules.emplace_back(device, std::move(ts));
    }
}

// Flows from host calls to device tracks. A flow from a slice that is not a runtime call by
// name (MTIA's "runFunction - ..."): the launch dates from the innermost slice ending there.
void Gatherer::bindLaunchFlows() {
    std::unordered_map<int64_t, size_t> deviceTrackOf;
    for (size_t k = 0; k < deviceTracks_.size(); ++k)
        deviceTrackOf.emplace(deviceTracks_[k].track, k);
    std::unordered_map<int64_t, PackedCalls*> callsOf;
    for (auto& [track, calls] : callsOfTrack_) callsOf.emplace(track, &calls);
    const std::unordered_set<int64_t> isHost(g_.hostTracks.begin(), g_.hostTracks.end());
    std::unordered_map<int64_t, bool> launching;
    // Launches from no call (by host track and time): where in which device track's list.
    std::unordered_map<int64_t, std::unordered_map<int64_t, std::vector<std::pair<size_t, size_t>>>>
        unnamed;
    // Flows come in id order, about time order: the last host track's lookups are kept, and
    // each track's calls keep where the last lookup ended (a hash lookup and a binary search
    // over millions of calls for every flow were most of this pass).
    struct FromTrack {
        int64_t track = INT64_MIN;
        bool host = false;
        PackedCalls* calls = nullptr;
    } from;
    store_.forEachFlow([&](const FlowRow& f) {
        const auto device = deviceTrackOf.find(f.toTrack);
        if (device == deviceTrackOf.end()) return;
        if (f.fromTrack != from.track) {
            const auto span = callsOf.find(f.fromTrack);
            from = {f.fromTrack, isHost.count(f.fromTrack) > 0,
                    span != callsOf.end() ? span->second : nullptr};
            if (from.host) launching[f.fromTrack] = true;
        }
        if (!from.host) return;
        std::optional<int64_t> callStart;
        if (from.calls) callStart = from.calls->startOfCallEndingAt(f.fromTs);
        LaunchList& launches = deviceTracks_[device->second].launches;
        if (!callStart)
            unnamed[f.fromTrack][f.fromTs].emplace_back(device->second, launches.size());
        launches.push_back({f.toTs, callStart.value_or(f.fromTs), f.fromTrack});
    });
    for (auto& entry : unnamed) {  // no structured binding: captured below (clang 14)
        const int64_t track = entry.first;
        auto& byEnd = entry.second;
        std::unordered_map<int64_t, int64_t> startOf;
        forEachChunk(store_, track, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk) {
                if (s.kind != ItemKind::Slice) continue;
                const int64_t end = sliceEnd(s);
                if (!byEnd.count(end)) continue;
                const auto [it, fresh] = startOf.try_emplace(end, s.start);
                if (!fresh) it->second = std::max(it->second, s.start);
            }
        });
        for (const auto& [end, start] : startOf)
            for (const auto& [device, at] : byEnd[end])
                deviceTracks_[device].launches.setTs(at, start);
    }
    for (DeviceTrack& d : deviceTracks_) d.launches.sort();
    releaseMemory(callsOfTrack_);
    for (const auto& entry : launching) g_.launchingTracks.push_back(entry.first);
    std::sort(g_.launchingTracks.begin(), g_.launchingTracks.end());
}

// The class of device slice i, or kNotActivity when it is no activity (a marker, a container
// of activities, a GPU annotation).
uint8_t Gatherer::activityClass(const DeviceTrack& d, size_t i, int64_t end) {
    const std::vector<SliceItem>& slices = d.slices;
    const SliceItem& s = slices[i];
    if (nodeGraph_) {
        // The node type decides; a compute node's name only splits GEMM/attention/other.
        const std::string type = args_.text(s.args, "type").value_or("");
        if (type == "COMP_NODE") {
            const uint8_t cls = classifyDeviceName(store_.text(s.name));
            return isCompute(cls) ? cls : uint8_t(kOtherCompute);
        }
        if (type.starts_with("COMM_")) return kCommunication;
        if (type == "MEM_LOAD_NODE" || type == "MEM_STORE_NODE") return kOtherCopy;
        return kNotActivity;
    }
    classifyName(s.name);
    uint8_t cls = deviceClassOf_[s.name];
    if (cls == kNotActivity) return cls;
    if (d.copyClass != kNotActivity && isCompute(cls)) cls = d.copyClass;
    // Annotations (Kineto's gpu_user_annotation, XProf's enclosing ops) hold the real
    // activities: a slice with a deeper activity starting inside it is a container. (Sync
    // markers overlapping a copy nest in it without making it one, and so do zero-length ops:
    // XProf draws a TPU's zero-length copy-start at the start of the copy-done or fusion
    // running then, as its child.)
    bool container = false;
    for (size_t j = i + 1; j < slices.size() && slices[j].start < end; ++j) {
        if (slices[j].depth <= s.depth) break;
        if (sliceEnd(slices[j]) <= slices[j].start) continue;
        classifyName(slices[j].name);
        if (deviceClassOf_[slices[j].name] != kNotActivity) {
            container = true;
            break;
        }
    }
    // Kernels may overlap on one stream (programmatic dependent launch), and so do DMAs
    // (MTIA's, without correlation): in Kineto traces a container is only a GPU annotation,
    // named like its host range and without a launch correlation.
    // (The args are read only for names also seen on a host thread: a few.)
    const auto correlated = [&] { return args_.has(s.args, "correlation"); };
    if (container && g_.chrome && (!onHost_[s.name] || correlated())) container = false;
    if (container) return kNotActivity;
    // A GPU annotation that holds no kernel: named like its host range, with no correlation
    // to a launch (Triton kernels share their host op's name, but have one).
    if (g_.chrome && onHost_[s.name] && !correlated()) return kNotActivity;
    return cls;
}

void Gatherer::addActivity(DeviceTrack& d, size_t i, size_t& nextLaunch,
                           std::vector<Unflowed>& unflowed) {
    const SliceItem& s = d.slices[i];
    if (s.kind != ItemKind::Slice || s.unended) return;
    const int64_t end = sliceEnd(s);
    // Kept at zero length: traces in whole µs (Kineto before 2022) write kernels shorter
    // than 1 µs as dur 0; they take no time but are kernels with a launch.
    if (end < s.start) return;
    const uint8_t cls = activityClass(d, i, end);
    if (cls == kNotActivity) return;
    PackedActivities& out = d.activities;
    Activity a{s.start, end, INT64_MIN, -1, cls};
    // Slices come by start: the launches of this track are walked alongside, and let go once
    // passed (as many as the activities: 24 bytes each held beside them was a third more).
    LaunchList& launches = d.launches;
    while (nextLaunch < launches.size() && launches[nextLaunch].toTs < s.start) ++nextLaunch;
    if (!keepLaunches_) launches.releaseBefore(nextLaunch);
    if (nextLaunch < launches.size() && launches[nextLaunch].toTs == s.start) {
        a.launch = launches[nextLaunch].ts;
        a.launchTrack = int32_t(launches[nextLaunch].track);
    } else if (g_.chrome) {
        // No launch flow (traces without ac2g flows, or one lost): its correlation.
        if (const auto correlation = args_.integer(s.args, "correlation");
            correlation && *correlation >= 0)
            unflowed.push_back({size_t(&d - deviceTracks_.data()), out.size(), *correlation});
    }
    out.push_back(a);
}

void Gatherer::readActivities(DeviceTrack& d, std::vector<Unflowed>& unflowed) {
    size_t nextLaunch = 0;
    for (size_t i = 0; i < d.slices.size(); ++i) addActivity(d, i, nextLaunch, unflowed);
    releaseMemory(d.slices);
    d.launches.clear();
    d.activities.shrinkToFit();
}

void Gatherer::streamActivities(DeviceTrack& d, const TrackRow& t,
                                std::vector<Unflowed>& unflowed) {
    std::vector<SliceItem>& window = d.slices;  // read, from `head` not classified yet
    const size_t unflowedBefore = unflowed.size();
    size_t nextLaunch = 0;
    size_t head = 0, scan = 0;  // scan: how far the head's look ahead is known to stay inside
    bool inOrder = true;
    // Slices starting together, held until a later start: stored longest first, they are
    // ordered by depth here as the whole track's sort by (start, depth) would.
    std::vector<SliceItem> together;
    const auto release = [&] {
        std::stable_sort(together.begin(), together.end(),
                         [](const SliceItem& a, const SliceItem& b) { return a.depth < b.depth; });
        window.insert(window.end(), together.begin(), together.end());
        together.clear();
    };
    // Classifies from the head while each slice's look ahead (activityClass: the deeper slices
    // starting before it ends) ends inside the window, or at the track's end (`last`).
    auto classifyReady = [&](bool last) {
        for (; head < window.size(); ++head, scan = 0) {
            const SliceItem& s = window[head];
            if (!last && s.kind == ItemKind::Slice && !s.unended) {
                const int64_t end = sliceEnd(s);
                scan = std::max(scan, head + 1);
                while (scan < window.size() && window[scan].start < end &&
                       window[scan].depth > s.depth)
                    ++scan;
                if (scan == window.size()) return;
            }
            addActivity(d, head, nextLaunch, unflowed);
        }
    };
    forEachChunk(store_, t.id, [&](const std::vector<SliceItem>& chunk) {
        for (const SliceItem& s : chunk) stepOp(s, t.id);
        if (!inOrder) return;
        for (const SliceItem& s : chunk) {
            if (!together.empty() && s.start < together.front().start) {
                inOrder = false;
                return;
            }
            if (!together.empty() && s.start > together.front().start) release();
            together.push_back(s);
        }
        classifyReady(false);
        if (head >= 4096 && 2 * head >= window.size()) {
            window.erase(window.begin(), window.begin() + std::ptrdiff_t(head));
            scan = scan > head ? scan - head : 0;
            head = 0;
        }
    });
    if (inOrder) {
        release();
        classifyReady(true);
        releaseMemory(window);
        d.launches.clear();
        d.activities.shrinkToFit();
        return;
    }
    // Not stored by start (no writer does that): read whole and sorted, as the classification
    // expects, with the launches passed so far, which only a gathering keeping them all has.
    if (!keepLaunches_) throw NotInTimeOrder{};
    d.activities.clear();
    unflowed.resize(unflowedBefore);
    window = readSlices(t, false);
    readActivities(d, unflowed);
}

// Activities without a flow, bound to their runtime calls by correlation. Rare (traces without
// launch flows), so the host tracks are read again for their calls rather than every call held
// through the whole gathering; the calls' args are read in args order, a chunk at a time.
void Gatherer::bindByCorrelation(const std::vector<Unflowed>& unflowed) {
    struct Candidate {
        uint64_t args;
        int64_t start, track;
    };
    std::vector<Candidate> calls;
    for (int64_t track : g_.hostTracks)
        forEachChunk(store_, track, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk) {
                if (s.kind != ItemKind::Slice || s.unended || s.args == 0) continue;
                const uint8_t cls = hostClassOf_[s.name];
                if (cls == uint8_t(HostCategory::Runtime) || cls == uint8_t(HostCategory::Sync))
                    calls.push_back({s.args, s.start, track});
            }
        });
    std::sort(calls.begin(), calls.end(),
              [](const Candidate& x, const Candidate& y) { return x.args < y.args; });
    std::unordered_map<int64_t, const Candidate*> wanted;
    for (const Unflowed& u : unflowed) wanted.emplace(u.correlation, nullptr);
    size_t found = 0;
    for (const Candidate& c : calls) {
        const auto it = wanted.find(args_.integer(c.args, "correlation").value_or(-1));
        if (it == wanted.end() || it->second) continue;
        it->second = &c;
        if (++found == wanted.size()) break;
    }
    std::vector<int64_t> launching(g_.launchingTracks);
    for (const Unflowed& u : unflowed) {
        const Candidate* c = wanted[u.correlation];
        if (!c) continue;
        deviceTracks_[u.deviceTrack].patches.push_back({u.index, c->start, int32_t(c->track)});
        launching.push_back(c->track);
    }
    std::sort(launching.begin(), launching.end());
    launching.erase(std::unique(launching.begin(), launching.end()), launching.end());
    g_.launchingTracks = std::move(launching);
}

Gathered Gatherer::run() {
    if (options_.withinTrack >= 0)
        for (const TrackRow& t : store_.tracks())
            if (below(t)) g_.withinHost.insert(t.id);
    // Processes holding device streams (Kineto's GPU/MTIA pids).
    std::unordered_set<int64_t> streamProcesses;
    if (g_.chrome)
        for (const TrackRow& t : store_.tracks()) {
            const std::string n = lower(t.name);
            if (n.starts_with("stream ") || n.starts_with("stream#"))
                streamProcesses.insert(t.parent);
        }
    // Host tracks first: their runtime calls date the launches. Device tracks are read after
    // the launch flows are bound, one at a time, straight into activities: holding every device
    // slice until then was the analysis's largest allocation at 10^7 slices.
    std::vector<std::pair<const TrackRow*, TrackRole>> others;
    for (const TrackRow& t : store_.tracks()) {
        if (t.slices == 0 || t.kind == TrackKind::Counter || !below(t)) continue;
        const TrackRole role = roleOf(t, streamProcesses);
        if (role == TrackRole::Host)
            readHostTrack(t);
        else
            others.emplace_back(&t, role);
    }
    // Devices are numbered in track order, as the tracks come.
    for (const auto& [t, role] : others) {
        if (role == TrackRole::Device) {
            deviceTracks_.push_back({t->id,
                                     deviceFor(*t),
                                     {},
                                     xlaLines_ ? copyStreamClass(t->name) : uint8_t(kNotActivity)});
            g_.devices[size_t(deviceTracks_.back().device)].tracks.push_back(t->id);
        } else if (role == TrackRole::XlaSteps || role == TrackRole::XlaModules) {
            deviceFor(*t);
        }
    }
    // Merged and packed, one class at a time, before the device tracks are read (the
    // analysis's peak).
    for (size_t c = 0; c < kHostCategoryCount; ++c) {
        g_.host[c] = host_[c].merged();
    }
    std::sort(g_.syncCalls.begin(), g_.syncCalls.end(),
              [](const TimedSlice& a, const TimedSlice& b) {
                  return a.start != b.start ? a.start < b.start : a.end > b.end;
              });
    for (const auto& [t, role] : others)
        if (role != TrackRole::Device) readOtherTrack(*t, role);
    // The host's side is worked out beside the device tracks' reading.
    if (hostsRead_) hostsReading_.start([this] { hostsRead_(g_); });
    if (!nodeGraph_) bindLaunchFlows();
    g_.activities.resize(g_.devices.size());
    std::vector<Unflowed> unflowed;
    size_t device = 0;
    for (const auto& [t, role] : others) {
        if (role != TrackRole::Device) continue;
        DeviceTrack& d = deviceTracks_[device++];
        streamActivities(d, *t, unflowed);
    }
    if (!unflowed.empty()) bindByCorrelation(unflowed);
    mergeActivities();
    hostsReading_.join();
    return std::move(g_);
}

void Gatherer::mergeActivities() {
    std::vector<std::vector<DeviceTrack*>> tracksOf(g_.activities.size());
    for (DeviceTrack& d : deviceTracks_) tracksOf[size_t(d.device)].push_back(&d);
    for (size_t device = 0; device < tracksOf.size(); ++device) {
        std::vector<DeviceTrack*>& tracks = tracksOf[device];
        PackedActivities& out = g_.activities[device];
        // A device of one stream, all bound by flows, has its list already.
        if (tracks.size() == 1 && tracks[0]->patches.empty()) {
            out.swap(tracks[0]->activities);
            out.shrinkToFit();
            continue;
        }
        // By start, ties in track order (a stable merge), with the launches found later.
        struct Source {
            PackedActivities::Cursor at;
            const std::vector<LaunchPatch>* patches;
            size_t nextPatch;
        };
        std::vector<Source> sources;
        for (DeviceTrack* d : tracks) {
            std::sort(d->patches.begin(), d->patches.end(),
                      [](const LaunchPatch& a, const LaunchPatch& b) { return a.index < b.index; });
            if (!d->activities.empty()) sources.push_back({d->activities.begin(), &d->patches, 0});
        }
        using Next = std::pair<int64_t, size_t>;  // (start, source): ties in track order
        std::priority_queue<Next, std::vector<Next>, std::greater<Next>> heads;
        for (size_t i = 0; i < sources.size(); ++i) heads.push({sources[i].at->start, i});
        while (!heads.empty()) {
            const size_t i = heads.top().second;
            heads.pop();
            Source& source = sources[i];
            Activity a = *source.at;
            const std::vector<LaunchPatch>& patches = *source.patches;
            while (source.nextPatch < patches.size() &&
                   patches[source.nextPatch].index < source.at.index())
                ++source.nextPatch;
            if (source.nextPatch < patches.size() &&
                patches[source.nextPatch].index == source.at.index()) {
                a.launch = patches[source.nextPatch].launch;
                a.launchTrack = patches[source.nextPatch].track;
            }
            out.push_back(a);
            source.at.next();
            if (source.at.valid()) heads.push({source.at->start, i});
        }
        out.shrinkToFit();
        for (DeviceTrack* d : tracks) {
            d->activities.clear();
            releaseMemory(d->patches);
        }
    }
}

}  // namespace

Gathered gather(const TraceStore& store, const StepOptions& options, const HostsRead& hostsRead) {
    try {
        return Gatherer(store, options, hostsRead, false).run();
    } catch (const NotInTimeOrder&) {
        return Gatherer(store, options, hostsRead, true).run();
    }
}

}  // namespace stallscope::trace::steps
