// Transfers of a PyTorch/Kineto trace: cudaMemcpyAsync/hipMemcpyAsync runtime calls bound to
// their GPU memcpy activity by correlation id, NCCL/RCCL collective kernels bound to their
// launches the same way, and the waits for them: on the host, the first stream, device or
// event synchronize on the issuing thread after the issue; on the device, a stream that waits
// for an event recorded on the copy's stream after the copy (cudaStreamWaitEvent, which
// Kineto records as a "Stream Wait Event" activity naming the stream and the record's
// correlation), up to the first work on the waiting stream after it. Whichever wait comes
// first is the transfer's. A module run is a host thread's stretch up to a sync that waits
// for copies; a device wait is a run of its own, from the first copy's issue to the work it
// held back.
#include <algorithm>
#include <map>

#include "core/trace/hosts.h"
#include "core/trace/trace_args.h"
#include "core/transfers/runtime_copies.h"

namespace stallscope::transfers::detail {

using trace::SliceItem;
using trace::TraceStore;
using trace::TrackRow;

// Asynchronous copies only: a synchronous cudaMemcpy is its own wait.
bool isMemcpyCall(std::string_view name) {
    return name == "cudaMemcpyAsync" || name == "hipMemcpyAsync" || name == "cudaMemcpy2DAsync" ||
           name == "hipMemcpy2DAsync";
}
// Synchronous copies: their activity is no transfer anyone could overlap (counted apart).
bool isSynchronousMemcpyCall(std::string_view name) {
    return name == "cudaMemcpy" || name == "hipMemcpy" || name == "cudaMemcpy2D" ||
           name == "hipMemcpy2D" || name == "hipMemcpyWithStream" || name == "hipMemcpyDtoH" ||
           name == "hipMemcpyHtoD" || name == "hipMemcpyDtoD" || name == "cudaMemcpyPeer" ||
           name == "hipMemcpyPeer";
}
bool isSync(std::string_view name) {
    for (const char* sync :
         {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
          "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"})
        if (name == sync) return true;
    return false;
}
bool isEventRecord(std::string_view name) {
    return name == "cudaEventRecord" || name == "cudaEventRecordWithFlags" ||
           name == "hipEventRecord" || name == "hipEventRecordWithFlags";
}
// Kineto's device-side sync activities (cuda_sync): not work a waiting stream resumes with.
bool isDeviceSync(std::string_view name) {
    return name == "Stream Wait Event" || name == "Stream Sync" || name == "Context Sync" ||
           name == "Event Sync";
}
bool isLaunch(std::string_view name) {
    // NCCL launches its kernels through the driver API (cuLaunchKernelEx on recent versions).
    return name == "cudaLaunchKernel" || name == "hipLaunchKernel" ||
           name == "hipExtLaunchKernel" || name == "cudaLaunchKernelExC" ||
           name == "cuLaunchKernel" || name == "cuLaunchKernelEx";
}
// "Memcpy HtoD (Pageable -> Device)" -> "HtoD"; empty when not a memcpy activity.
std::string memcpyKind(std::string_view name) {
    if (!name.starts_with("Memcpy ")) return {};
    name.remove_prefix(7);
    return std::string(name.substr(0, name.find(' ')));
}
// "ncclDevKernel_AllGather_RING_LL(...)" -> "nccl AllGather"; empty when not a collective.
std::string collectiveKind(std::string_view name) {
    const bool nccl = name.starts_with("ncclKernel_") || name.starts_with("ncclDevKernel_");
    const bool rccl = name.starts_with("rcclKernel") || name.starts_with("ncclKernel");
    if (!nccl && !rccl) return {};
    name.remove_prefix(name.find('_') + 1);
    // "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)": the kind ends at '(' too.
    return "nccl " + std::string(name.substr(0, name.find_first_of("_(")));
}

// Collective kernels outside NCCL/RCCL (symmetric-memory all-reduce "multimem_all_reduce_kernel",
// vLLM's "cross_device_reduce_1stage"): their traces state no size, so they make no transfer
// and are counted.
bool isUnsizedCollective(std::string_view name) {
    for (const char* kind :
         {"multimem", "cross_device_reduce", "all_reduce", "allreduce", "all_gather", "allgather",
          "reduce_scatter", "reducescatter", "all_to_all", "alltoall"})
        if (name.find(kind) != std::string_view::npos) return collectiveKind(name).empty();
    return false;
}

// PyTorch's dtype names (the NCCL kernel's "dtype" arg) as XLA element types and their
// sizes; empty and 0 when unknown.
std::pair<std::string, int> elementTypeOf(std::string_view dtype) {
    static const std::pair<std::string_view, std::pair<const char*, int>> kTypes[] = {
        {"Float", {"f32", 4}},
        {"Double", {"f64", 8}},
        {"Half", {"f16", 2}},
        {"BFloat16", {"bf16", 2}},
        {"Int", {"s32", 4}},
        {"Long", {"s64", 8}},
        {"Short", {"s16", 2}},
        {"Char", {"s8", 1}},
        {"Byte", {"u8", 1}},
        {"Bool", {"pred", 1}},
        {"Float8_e4m3fn", {"f8e4m3fn", 1}},
        {"Float8_e5m2", {"f8e5m2", 1}},
    };
    for (const auto& [name, type] : kTypes)
        if (dtype == name) return {type.first, type.second};
    return {std::string(), 0};
}

int64_t argNumber(const TraceStore& store, uint64_t args, std::string_view key) {
    return trace::TraceArgs(store).integer(args, key).value_or(-1);
}

// Where each stream wait sits on its stream: reached when the stream had finished the work
// before it (or at the wait, when it was idle), resumed when the next work on it started; and
// when the host recorded the event it waits for. `isWork` tells a stream's work (kernels,
// copies) from the sync activities around it.
void placeStreamWaits(const TraceStore& store, const std::function<bool(uint32_t)>& isWork,
                      const std::unordered_map<int64_t, int64_t>& records,
                      std::vector<StreamWait>& waits) {
    std::map<int64_t, std::vector<StreamWait*>> byTrack;
    for (StreamWait& w : waits) {
        const auto record = records.find(w.recordCorrelation);
        if (record == records.end()) continue;
        w.recordIssue = record->second;
        byTrack[w.track].push_back(&w);
    }
    for (const auto& [track, trackWaits] : byTrack) {
        std::vector<std::pair<int64_t, int64_t>> work;  // (start, end) on the waiting stream
        store.forEachChunk(track, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk)
                if (s.kind == trace::ItemKind::Slice && isWork(s.name))
                    work.emplace_back(s.start, s.end());
        });
        std::sort(work.begin(), work.end());
        for (StreamWait* w : trackWaits) {
            const auto next = std::lower_bound(work.begin(), work.end(),
                                               std::make_pair(w->slice.start, INT64_MIN));
            if (next == work.end()) continue;  // nothing ran after it: nothing was held
            // The work just before (a few items back: annotations around kernels that end
            // after the next work started do not count).
            w->reached = w->slice.start;
            int back = 0;
            for (auto it = next; it != work.begin() && back < 64; ++back) {
                --it;
                if (it->second <= next->first) w->reached = std::max(w->reached, it->second);
            }
            w->resumed = std::max(next->first, w->reached);
            w->resolved = true;
        }
    }
}

// What each name is, decided once per string rather than once per slice: a trace's slices are
// millions, its distinct names thousands.
enum class What : uint8_t {
    Other,
    Memcpy,
    SynchronousMemcpy,
    UnsizedCollective,
    Launch,
    Sync,
    Activity,
    Record,
    StreamWaitEvent,
    DeviceSync
};

struct NameKinds {
    std::vector<What> what;
    std::vector<std::string> activityLink;  // What::Activity: its link ("HtoD", "nccl ...")
};

NameKinds classifyNames(const TraceStore& store) {
    NameKinds out;
    std::vector<What>& what = out.what;
    std::vector<std::string>& activityLink = out.activityLink;
    what.assign(store.textCount(), What::Other);
    activityLink.assign(store.textCount(), std::string());
    for (uint32_t id = 0; id < store.textCount(); ++id) {
        const std::string& name = store.text(id);
        if (isMemcpyCall(name)) {
            what[id] = What::Memcpy;
        } else if (isSynchronousMemcpyCall(name)) {
            what[id] = What::SynchronousMemcpy;
        } else if (isUnsizedCollective(name)) {
            what[id] = What::UnsizedCollective;
        } else if (isLaunch(name)) {
            what[id] = What::Launch;
        } else if (isSync(name)) {
            what[id] = What::Sync;
        } else if (isEventRecord(name)) {
            what[id] = What::Record;
        } else if (isDeviceSync(name)) {
            what[id] = name == "Stream Wait Event" ? What::StreamWaitEvent : What::DeviceSync;
        } else {
            std::string link = memcpyKind(name);
            if (link.empty()) link = collectiveKind(name);
            if (link.empty()) continue;
            what[id] = What::Activity;
            activityLink[id] = std::move(link);
        }
    }
    return out;
}

// A copy or collective activity; false when a collective states no size (counted).
bool readActivity(const TraceStore& store, const SliceItem& s, Activity& act,
                  uint64_t& unsizedCollectives) {
    act.device = argNumber(store, s.args, "device");
    act.stream = argNumber(store, s.args, "stream");
    act.bytes = std::max<int64_t>(0, argNumber(store, s.args, "bytes"));
    if (!act.link.starts_with("nccl")) return true;
    // NCCL's generic kernel runs every collective: newer PyTorch names which ("allreduce",
    // "broadcast"), each on a link of its own.
    if (act.link == "nccl Generic")
        if (const auto named = store.argsMember(s.args, "Collective name"))
            if (const auto kind = trace::memberValue(*named); kind && !kind->empty())
                act.link = "nccl " + *kind;
    // What the collective leaves on this rank (as XLA's collectives count their result):
    // PyTorch records elements and their dtype.
    const int64_t elements = argNumber(store, s.args, "Out msg nelems");
    const auto dtype = store.argsMember(s.args, "dtype");
    const auto type = elementTypeOf(dtype ? trace::memberValue(*dtype).value_or("") : "");
    act.elementType = type.first;
    if (act.bytes == 0 && elements > 0) act.bytes = elements * type.second;
    // No size stated (older PyTorch): no transfer to model, counted.
    if (act.bytes == 0) {
        ++unsizedCollectives;
        return false;
    }
    return true;
}

StreamWait readStreamWait(const TraceStore& store, const SliceItem& s, int64_t track, int host) {
    StreamWait w;
    w.slice = s;
    w.track = track;
    w.host = host;
    w.device = argNumber(store, s.args, "device");
    w.waitOnStream = argNumber(store, s.args, "wait_on_stream");
    w.recordCorrelation =
        TrackHosts::scoped(host, argNumber(store, s.args, "wait_on_cuda_event_record_corr_id"));
    return w;
}

Evidence kinetoEvidence(const TraceStore& store, const TrackHosts& hosts) {
    Evidence ev;
    auto& issues = ev.issues;
    auto& syncs = ev.syncs;
    auto& activities = ev.activities;
    auto& records = ev.records;
    auto& streamWaits = ev.streamWaits;
    auto& synchronousCopies = ev.synchronousCopies;
    uint64_t& unsizedCollectives = ev.unsizedCollectives;
    std::vector<int64_t> launchTracks;  // tracks holding kernel launches
    NameKinds names = classifyNames(store);
    std::vector<What>& what = names.what;
    const std::vector<std::string>& activityLink = names.activityLink;
    // Kernel launches are most of a trace's runtime calls: kept only when a collective kernel
    // may need its launch, their correlation ids read only when one ran.
    const bool collectiveNames =
        std::any_of(activityLink.begin(), activityLink.end(),
                    [](const std::string& link) { return link.starts_with("nccl"); });
    if (!collectiveNames)
        for (What& w : what)
            if (w == What::Launch) w = What::Other;
    // A trace without a name of a copy, sync, event, launch or device activity (a CPU-only or
    // a game's trace) has nothing to find: no pass over its every slice (a tenth of importing
    // a 1 GB such trace, on one thread after the rest).
    const bool anyWanted = std::any_of(
        what.begin(), what.end(), [](What w) { return w != What::Other && w != What::DeviceSync; });
    for (const TrackRow& track : store.tracks()) {
        if (track.slices == 0 || !anyWanted) continue;
        const int host = hosts.of(track.id);
        auto correlationOf = [&store, host](const SliceItem& s) {
            return TrackHosts::scoped(host, argNumber(store, s.args, "correlation"));
        };
        store.forEachChunk(track.id, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk) {
                if (s.kind != trace::ItemKind::Slice || s.name >= what.size()) continue;
                switch (what[s.name]) {
                    case What::Other:
                    case What::DeviceSync:
                        break;
                    case What::Record:
                        records[correlationOf(s)] = s.start;
                        break;
                    case What::StreamWaitEvent: {
                        const StreamWait w = readStreamWait(store, s, track.id, host);
                        if (w.waitOnStream >= 0 && w.recordCorrelation >= 0)
                            streamWaits.push_back(w);
                        break;
                    }
                    case What::Memcpy: {
                        const int64_t correlation = correlationOf(s);
                        if (correlation >= 0) issues[correlation] = Call{s, track.id};
                        break;
                    }
                    case What::SynchronousMemcpy:
                        synchronousCopies.insert(correlationOf(s));
                        break;
                    case What::UnsizedCollective:
                        // Device kernels only (a stream); host ops share such names.
                        if (argNumber(store, s.args, "stream") >= 0) ++unsizedCollectives;
                        break;
                    case What::Launch:  // read again only if a collective ran
                        if (launchTracks.empty() || launchTracks.back() != track.id)
                            launchTracks.push_back(track.id);
                        break;
                    case What::Sync:
                        syncs[track.id].push_back(Call{s, track.id});
                        break;
                    case What::Activity: {
                        Activity act;
                        act.link = activityLink[s.name];
                        act.slice = s;
                        act.track = track.id;
                        act.host = host;
                        if (!readActivity(store, s, act, unsizedCollectives)) break;
                        activities.emplace_back(correlationOf(s), std::move(act));
                        break;
                    }
                }
            }
        });
    }
    const bool collectives = std::any_of(activities.begin(), activities.end(), [](const auto& e) {
        return e.second.link.starts_with("nccl");
    });
    if (collectives) {
        // The launches of the activities, read in a second pass over the launching tracks:
        // holding every launch (3.3 million at 10^7 slices) took 350 MB.
        std::unordered_set<int64_t> wanted;
        for (const auto& entry : activities) wanted.insert(entry.first);
        for (const int64_t trackId : launchTracks) {
            const int host = hosts.of(trackId);
            store.forEachChunk(trackId, [&](const std::vector<SliceItem>& chunk) {
                for (const SliceItem& s : chunk) {
                    if (s.kind != trace::ItemKind::Slice || s.name >= what.size() ||
                        what[s.name] != What::Launch)
                        continue;
                    const int64_t correlation =
                        TrackHosts::scoped(host, argNumber(store, s.args, "correlation"));
                    if (correlation >= 0 && wanted.count(correlation))
                        issues[correlation] = Call{s, trackId};
                }
            });
        }
    }
    ev.isStreamWork = [what = std::move(what)](uint32_t name) {
        return name < what.size() && what[name] != What::StreamWaitEvent &&
               what[name] != What::DeviceSync;
    };
    return ev;
}

}  // namespace stallscope::transfers::detail
