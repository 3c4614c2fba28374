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
#include <cctype>
#include <cstdlib>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/trace/hosts.h"
#include "core/trace/trace_args.h"
#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"

namespace stallscope::transfers::detail {

namespace {

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

int64_t number(const TraceStore& store, uint64_t args, std::string_view key) {
    return trace::TraceArgs(store).integer(args, key).value_or(-1);
}

struct Call {
    SliceItem slice;
    int64_t track = 0;
};
struct Activity {
    SliceItem slice;
    int64_t track = 0;
    int host = -1;     // TrackHosts::of(track)
    std::string link;  // "HtoD", "nccl AllGather"
    int64_t device = -1, bytes = 0, stream = -1;
    std::string elementType;  // when the activity says (NCCL kernels' dtype)
};
// A GPU stream waiting for an event recorded on another stream.
struct StreamWait {
    SliceItem slice;
    int64_t track = 0;
    int host = -1;
    int64_t device = -1, waitOnStream = -1, recordCorrelation = -1;
    int64_t reached = 0;      // when the waiting stream got to the wait
    int64_t resumed = 0;      // when the first work after it started
    int64_t recordIssue = 0;  // the host's cudaEventRecord: copies issued before it count
    bool resolved = false;    // record and consuming work found
};

// A sync returns a few µs after the GPU work it waited for (public traces: 1-17 µs after the
// last copy it waited for); a later return means it waited for other work too (kernels), and
// that end stays however early its copies complete. A wait that holds no copy but blocked
// waited for other work.
constexpr int64_t kSyncReturnNs = 20000;
void settleWait(Step& wait, int64_t transfersDone) {
    const int64_t after = wait.end - std::max(wait.start, transfersDone);
    if (wait.transfers.empty() ? after >= kBlockedWaitNs : after > kSyncReturnNs)
        wait.otherWorkEnd = wait.end;
    else if (!wait.transfers.empty())
        wait.returnNs = std::max<int64_t>(0, after);
}

// The copy activity measured: issue, transfer, link (no wait yet).
Transfer measuredTransfer(const TraceStore& store, const TrackHosts& hosts, LinkTable& links,
                          const Call& call, const Activity& act) {
    Transfer t;
    t.name = store.text(call.slice.name);
    t.opcode = t.name;
    t.bytes = uint64_t(act.bytes);
    t.elementType = act.elementType;
    const std::string device =
        hosts.prefix(act.host) + (act.device >= 0 ? "GPU " + std::to_string(act.device) : "GPU");
    t.link = links.get(device, act.link, act.link, device);
    t.issue = call.slice.start;
    t.issueTrack = call.track;
    // The GPU measured the transfer itself.
    t.transferStart = act.slice.start;
    t.complete = act.slice.end();
    t.completeMeasured = true;
    t.inFlightTrack = act.track;
    t.inFlightStart = act.slice.start;
    t.inFlightEnd = act.slice.end();
    return t;
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

// What a derivation from runtime calls reads from a trace. Correlation ids are scoped by host
// (TrackHosts::scoped).
struct Evidence {
    std::unordered_map<int64_t, Call> issues;              // by correlation id
    std::unordered_map<int64_t, std::vector<Call>> syncs;  // by host track
    std::vector<std::pair<int64_t, Activity>> activities;  // correlation, activity
    std::unordered_map<int64_t, int64_t> records;          // cudaEventRecord start by correlation
    std::vector<StreamWait> streamWaits;
    std::unordered_set<int64_t> synchronousCopies;  // correlation ids of synchronous memcpys
    uint64_t unsizedCollectives = 0;
    uint64_t unsizedCopies = 0;  // copies whose trace states no size (ROCm XProf: "size:0")
    // A stream's work, as opposed to the sync activities around it (placing stream waits).
    std::function<bool(uint32_t)> isStreamWork = [](uint32_t) { return true; };
};

Evidence kinetoEvidence(const TraceStore& store, const TrackHosts& hosts) {
    Evidence ev;
    auto& issues = ev.issues;
    auto& syncs = ev.syncs;
    auto& activities = ev.activities;
    auto& records = ev.records;
    auto& streamWaits = ev.streamWaits;
    auto& synchronousCopies = ev.synchronousCopies;
    uint64_t& unsizedCollectives = ev.unsizedCollectives;
    std::vector<Call> launches;
    // What each name is, decided once per string rather than once per slice: a trace's slices
    // are millions, its distinct names thousands.
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
    std::vector<What> what(store.textCount(), What::Other);
    std::vector<std::string> activityLink(store.textCount());
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
    // Kernel launches are most of a trace's runtime calls: kept only when a collective kernel
    // may need its launch, their correlation ids read only when one ran.
    const bool collectiveNames =
        std::any_of(activityLink.begin(), activityLink.end(),
                    [](const std::string& link) { return link.starts_with("nccl"); });
    if (!collectiveNames)
        for (What& w : what)
            if (w == What::Launch) w = What::Other;
    for (const TrackRow& track : store.tracks()) {
        if (track.slices == 0) continue;
        const int host = hosts.of(track.id);
        auto correlationOf = [&store, host](const SliceItem& s) {
            return TrackHosts::scoped(host, number(store, s.args, "correlation"));
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
                        StreamWait w;
                        w.slice = s;
                        w.track = track.id;
                        w.host = host;
                        w.device = number(store, s.args, "device");
                        w.waitOnStream = number(store, s.args, "wait_on_stream");
                        w.recordCorrelation = TrackHosts::scoped(
                            host, number(store, s.args, "wait_on_cuda_event_record_corr_id"));
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
                        if (number(store, s.args, "stream") >= 0) ++unsizedCollectives;
                        break;
                    case What::Launch:
                        launches.push_back(Call{s, track.id});  // args only if a collective ran
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
                        act.device = number(store, s.args, "device");
                        act.stream = number(store, s.args, "stream");
                        act.bytes = std::max<int64_t>(0, number(store, s.args, "bytes"));
                        if (act.link.starts_with("nccl")) {
                            // NCCL's generic kernel runs every collective: newer PyTorch names
                            // which ("allreduce", "broadcast"), each on a link of its own.
                            if (act.link == "nccl Generic")
                                if (const auto named = store.argsMember(s.args, "Collective name"))
                                    if (const auto kind = trace::memberValue(*named);
                                        kind && !kind->empty())
                                        act.link = "nccl " + *kind;
                            // What the collective leaves on this rank (as XLA's collectives
                            // count their result): PyTorch records elements and their dtype.
                            const int64_t elements = number(store, s.args, "Out msg nelems");
                            const auto dtype = store.argsMember(s.args, "dtype");
                            const auto type =
                                elementTypeOf(dtype ? trace::memberValue(*dtype).value_or("") : "");
                            act.elementType = type.first;
                            if (act.bytes == 0 && elements > 0) act.bytes = elements * type.second;
                            // No size stated (older PyTorch): no transfer to model, counted.
                            if (act.bytes == 0) {
                                ++unsizedCollectives;
                                break;
                            }
                        }
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
        for (const Call& launch : launches) {
            const int64_t correlation = TrackHosts::scoped(
                hosts.of(launch.track), number(store, launch.slice.args, "correlation"));
            if (correlation >= 0) issues[correlation] = launch;
        }
    }
    ev.isStreamWork = [what = std::move(what)](uint32_t name) {
        return name < what.size() && what[name] != What::StreamWaitEvent &&
               what[name] != What::DeviceSync;
    };
    return ev;
}

// Transfers from the evidence: each call bound to its activity, waited at the first sync (on
// the host or the device) that holds it, in runs per host thread; then modelled.
Analysis transfersOf(const TraceStore& store, const TrackHosts& hosts, Evidence& ev,
                     const char* source) {
    Analysis a;
    LinkTable links(a.links);
    for (auto& entry : ev.syncs)
        std::sort(entry.second.begin(), entry.second.end(),
                  [](const Call& x, const Call& y) { return x.slice.start < y.slice.start; });
    // Transfers by host thread, in issue order.
    std::map<int64_t, std::vector<std::pair<Call, Activity>>> byThread;
    uint64_t withoutCall = 0, synchronous = 0;
    for (auto& [correlation, act] : ev.activities) {
        const auto call = ev.issues.find(correlation);
        if (call == ev.issues.end()) {
            if (correlation >= 0 && ev.synchronousCopies.count(correlation))
                ++synchronous;
            else
                ++withoutCall;
            continue;
        }
        byThread[call->second.track].emplace_back(call->second, std::move(act));
    }
    for (auto& entry : byThread)
        std::sort(entry.second.begin(), entry.second.end(), [](const auto& x, const auto& y) {
            return x.first.slice.start < y.first.slice.start;
        });
    // Device-side waits: a stream wait holds back the copies on the stream it waits on that
    // were issued before the event's record and that no earlier wait on it held.
    placeStreamWaits(store, ev.isStreamWork, ev.records, ev.streamWaits);
    std::map<int64_t, std::vector<int32_t>> heldBy;  // thread -> per transfer: its stream wait
    {
        std::vector<size_t> order;
        for (size_t w = 0; w < ev.streamWaits.size(); ++w)
            if (ev.streamWaits[w].resolved) order.push_back(w);
        std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
            return ev.streamWaits[x].recordIssue < ev.streamWaits[y].recordIssue;
        });
        for (auto& [thread, list] : byThread) {
            std::vector<int32_t>& held = heldBy[thread];
            held.assign(list.size(), -1);
            for (size_t i = 0; i < list.size(); ++i) {
                const Activity& act = list[i].second;
                for (size_t w : order) {
                    const StreamWait& sw = ev.streamWaits[w];
                    if (sw.host != act.host || sw.device != act.device ||
                        sw.waitOnStream != act.stream || act.stream < 0 ||
                        sw.recordIssue <= list[i].first.slice.start)
                        continue;
                    held[i] = int32_t(w);
                    break;
                }
            }
        }
    }
    std::vector<std::vector<std::pair<Call, Activity>>> deviceWaited(ev.streamWaits.size());
    uint64_t notWaited = 0;
    std::vector<RunProgram> programs;
    for (auto& [thread, list] : byThread) {
        const std::vector<Call>& threadSyncs = ev.syncs[thread];
        // A copy held by a stream wait that comes before its host sync (if any) is the
        // device's to wait for.
        {
            const std::vector<int32_t>& held = heldBy[thread];
            std::vector<std::pair<Call, Activity>> onHost;
            for (size_t i = 0; i < list.size(); ++i) {
                if (held[i] >= 0) {
                    const auto sync = std::lower_bound(
                        threadSyncs.begin(), threadSyncs.end(), list[i].first.slice.start,
                        [](const Call& c, int64_t issue) { return c.slice.start < issue; });
                    if (sync == threadSyncs.end() ||
                        ev.streamWaits[size_t(held[i])].reached <= sync->slice.start) {
                        deviceWaited[size_t(held[i])].push_back(std::move(list[i]));
                        continue;
                    }
                }
                onHost.push_back(std::move(list[i]));
            }
            list = std::move(onHost);
        }
        if (list.empty()) continue;
        ModuleRun run;
        run.name = store.track(thread) ? store.track(thread)->name : "host thread";
        run.device = hosts.prefix(hosts.of(thread)) + "host";
        run.track = thread;
        run.start = list.front().first.slice.start;
        run.end = run.start;
        const uint32_t module = uint32_t(a.modules.size());
        // Each transfer waits at the first sync that starts after its issue and does not return
        // before the copy ends: one that does synchronised another stream (the runtime call
        // names none; public HTA traces have 359 such pairs in one rank).
        std::map<size_t, std::vector<uint32_t>> waitsAt;  // sync index -> transfers
        // Step names view the store's strings: the transfers' own move as the vector grows.
        std::vector<std::string_view> issueNames;
        for (const auto& [call, act] : list) {
            Transfer t = measuredTransfer(store, hosts, links, call, act);
            t.id = uint32_t(a.transfers.size());
            t.module = module;
            issueNames.push_back(store.text(call.slice.name));
            auto sync = std::lower_bound(
                threadSyncs.begin(), threadSyncs.end(), t.issue,
                [](const Call& c, int64_t issue) { return c.slice.start < issue; });
            while (sync != threadSyncs.end() && sync->slice.end() + kBlockedWaitNs < t.complete)
                ++sync;
            if (sync == threadSyncs.end()) {
                t.waited = false;
                ++notWaited;
            } else {
                t.waitName = store.text(sync->slice.name);
                t.wait = sync->slice.start;
                t.waitEnd = sync->slice.end();
                t.waitTrack = sync->track;
                t.blocked = t.waitEnd - t.wait >= kBlockedWaitNs && t.complete > t.wait;
                waitsAt[size_t(sync - threadSyncs.begin())].push_back(t.id);
            }
            run.end = std::max(run.end, t.waited ? t.waitEnd : t.complete);
            run.transfers.push_back(t.id);
            a.transfers.push_back(std::move(t));
        }
        // The run as steps: issues and the syncs between the first issue and the run's end.
        RunProgram program;
        program.module = module;
        std::vector<std::pair<int64_t, Step>> steps;
        for (size_t i = 0; i < run.transfers.size(); ++i) {
            const uint32_t id = run.transfers[i];
            Step s;
            s.role = Role::Issue;
            s.start = s.end = a.transfers[id].issue;
            s.transfers = {id};
            s.name = issueNames[i];
            steps.emplace_back(s.start, std::move(s));
        }
        for (size_t i = 0; i < threadSyncs.size(); ++i) {
            const Call& c = threadSyncs[i];
            if (c.slice.start < run.start || c.slice.start >= run.end) continue;
            Step s;
            s.role = Role::Wait;
            s.start = c.slice.start;
            s.end = c.slice.end();
            s.name = store.text(c.slice.name);
            const auto waited = waitsAt.find(i);
            if (waited != waitsAt.end()) s.transfers = waited->second;
            int64_t transfersDone = INT64_MIN;
            for (uint32_t id : s.transfers)
                transfersDone = std::max(transfersDone, a.transfers[id].complete);
            settleWait(s, transfersDone);
            steps.emplace_back(s.start, std::move(s));
        }
        std::stable_sort(steps.begin(), steps.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& entry : steps) {
            Step& s = entry.second;
            const int32_t index = int32_t(program.steps.size());
            for (uint32_t id : s.transfers) {
                Transfer& t = a.transfers[id];
                if (s.role == Role::Issue) {
                    t.issueStep = index;
                } else {
                    t.waitStep = index;
                }
            }
            program.steps.push_back(std::move(s));
        }
        // One run per stretch of the thread up to a sync that waits for copies: the copies
        // issued in a stretch are waited at its end (the first sync after an issue), so the
        // stretches are independent, and short enough to re-simulate per suggestion.
        std::vector<Step> pending;
        int64_t segmentStart = run.start;
        uint32_t segmentsMade = 0;
        auto close = [&](int64_t end) {
            ModuleRun segment;
            segment.name = run.name;
            segment.device = run.device;
            segment.track = run.track;
            segment.start = segmentStart;
            segment.end = std::max(end, segmentStart);
            RunProgram part;
            part.module = uint32_t(a.modules.size());
            for (Step& step : pending) {
                const int32_t index = int32_t(part.steps.size());
                for (uint32_t id : step.transfers) {
                    Transfer& t = a.transfers[id];
                    if (step.role == Role::Issue) {
                        t.issueStep = index;
                        t.module = part.module;
                        segment.transfers.push_back(id);
                    } else {
                        t.waitStep = index;
                    }
                }
                part.steps.push_back(std::move(step));
            }
            pending.clear();
            // How early: the previous sync on the thread (the trace does not say which kernel
            // wrote the source buffer): this stretch's start, or a sync inside it.
            for (uint32_t id : segment.transfers) {
                Transfer& t = a.transfers[id];
                t.backtailKind = segmentsMade == 0 ? Backtail::ModuleStart : Backtail::PreviousSync;
                t.backtail = segment.start;
                t.backtailStep = -1;
                for (int32_t k = t.issueStep - 1; k >= 0; --k) {
                    if (part.steps[size_t(k)].role != Role::Wait) continue;
                    t.backtailKind = Backtail::PreviousSync;
                    t.backtailStep = k;
                    t.backtailOp = std::string(part.steps[size_t(k)].name);
                    break;
                }
            }
            ++segmentsMade;
            segmentStart = segment.end;
            if (segment.transfers.empty()) return;
            a.modules.push_back(std::move(segment));
            programs.push_back(std::move(part));
        };
        for (Step& step : program.steps) {
            const bool cut = step.role == Role::Wait && !step.transfers.empty();
            const int64_t end = step.end;
            pending.push_back(std::move(step));
            if (cut) close(end);
        }
        if (!pending.empty()) close(run.end);
    }
    // A run per stream wait that held copies: their issues, then the wait, from when the
    // stream reached it to when its next work started.
    for (size_t w = 0; w < ev.streamWaits.size(); ++w) {
        auto& held = deviceWaited[w];
        if (held.empty()) continue;
        const StreamWait& sw = ev.streamWaits[w];
        std::sort(held.begin(), held.end(), [](const auto& x, const auto& y) {
            return x.first.slice.start < y.first.slice.start;
        });
        ModuleRun run;
        const trace::TrackRow* waiting = store.track(sw.track);
        run.name = (waiting ? waiting->name : std::string("stream")) + " waits for stream " +
                   std::to_string(sw.waitOnStream);
        run.device =
            hosts.prefix(sw.host) + (sw.device >= 0 ? "GPU " + std::to_string(sw.device) : "GPU");
        run.track = sw.track;
        run.start = held.front().first.slice.start;
        run.end = std::max(run.start, sw.resumed);
        RunProgram program;
        program.module = uint32_t(a.modules.size());
        Step wait;
        wait.role = Role::Wait;
        wait.start = std::max(sw.reached, run.start);
        wait.end = std::max(sw.resumed, wait.start);
        wait.name = store.text(sw.slice.name);
        int64_t transfersDone = INT64_MIN;
        for (size_t i = 0; i < held.size(); ++i) {
            const auto& [call, act] = held[i];
            Transfer t = measuredTransfer(store, hosts, links, call, act);
            t.id = uint32_t(a.transfers.size());
            t.module = program.module;
            t.waitName = std::string(wait.name);
            t.wait = wait.start;
            t.waitEnd = wait.end;
            t.waitTrack = sw.track;
            t.blocked = t.waitEnd - t.wait >= kBlockedWaitNs && t.complete > t.wait;
            t.issueStep = int32_t(i);
            t.waitStep = int32_t(held.size());
            transfersDone = std::max(transfersDone, t.complete);
            // How early: after the previous host sync on the issuing thread (the trace does
            // not say which kernel wrote the source); the issue stays when there is none.
            t.backtailKind = Backtail::Unknown;
            t.backtail = t.issue;
            const std::vector<Call>& threadSyncs = ev.syncs[call.track];
            auto sync = std::lower_bound(
                threadSyncs.begin(), threadSyncs.end(), t.issue,
                [](const Call& c, int64_t issue) { return c.slice.start < issue; });
            while (sync != threadSyncs.begin()) {
                --sync;
                if (sync->slice.end() > t.issue) continue;
                t.backtailKind = Backtail::PreviousSync;
                t.backtailOp = store.text(sync->slice.name);
                t.backtail = sync->slice.end();
                // Steps issued before that sync ended stay ahead of it.
                t.backtailStep = -1;
                for (size_t k = 0; k < i; ++k)
                    if (held[k].first.slice.start < t.backtail) t.backtailStep = int32_t(k);
                break;
            }
            Step issue;
            issue.role = Role::Issue;
            issue.start = issue.end = t.issue;
            issue.transfers = {t.id};
            issue.name = store.text(call.slice.name);
            program.steps.push_back(std::move(issue));
            wait.transfers.push_back(t.id);
            run.transfers.push_back(t.id);
            a.transfers.push_back(std::move(t));
        }
        settleWait(wait, transfersDone);
        program.steps.push_back(std::move(wait));
        a.modules.push_back(std::move(run));
        programs.push_back(std::move(program));
    }
    if (withoutCall) a.unmatched["activity_without_runtime_call"] = withoutCall;
    if (synchronous) a.unmatched["synchronous_copies"] = synchronous;
    if (ev.unsizedCollectives)
        a.unmatched["collective_kernels_without_size"] = ev.unsizedCollectives;
    if (ev.unsizedCopies) a.unmatched["copies_without_size"] = ev.unsizedCopies;
    if (notWaited) a.unmatched["not_waited_on_host"] = notWaited;
    if (a.transfers.empty() && a.unmatched.empty()) return a;
    a.source = source;
    model(a, programs);
    return a;
}

// ---- XProf GPU profiles: the CUPTI/ROCm runtime calls XProf records ----

// XProf names a CUDA copy by its direction on both ends, the host's API call and the device's
// activity ("MemcpyH2D", memcpy_details "size:112 dest:4 async:1"); ROCm's copy activities
// say it in words ("CopyDeviceToDevice"). Empty when `name` is neither.
std::string xprofCopyDirection(std::string_view name) {
    static const std::pair<std::string_view, const char*> kDirections[] = {
        {"MemcpyH2D", "HtoD"},          {"MemcpyD2H", "DtoH"},        {"MemcpyD2D", "DtoD"},
        {"MemcpyP2P", "PtoP"},          {"CopyHostToDevice", "HtoD"}, {"CopyDeviceToHost", "DtoH"},
        {"CopyDeviceToDevice", "DtoD"}, {"CopyPeerToPeer", "PtoP"}};
    for (const auto& [known, direction] : kDirections)
        if (name == known) return direction;
    return {};
}
// Runtime and driver API copies ("hipMemcpyHtoDAsync", "cuMemcpyDtoHAsync_v2").
bool isApiCopy(std::string_view name) {
    return (name.starts_with("cu") || name.starts_with("hip")) &&
           name.find("Memcpy") != std::string_view::npos;
}
std::string apiCopyDirection(std::string_view name) {
    for (const char* direction : {"HtoD", "DtoH", "DtoD"})
        if (name.find(direction) != std::string_view::npos) return direction;
    return name.find("Peer") != std::string_view::npos ? "PtoP" : "";
}
bool isXprofSync(std::string_view name) {
    if (const auto v = name.find("_v"); v != std::string_view::npos) name = name.substr(0, v);
    return isSync(name) || name == "cuStreamSynchronize" || name == "cuCtxSynchronize" ||
           name == "cuEventSynchronize";
}
// A field of XProf's memcpy_details ("kind:Unknown size:0 dest:512 async:1"); -1 when absent.
int64_t detailField(std::string_view details, std::string_view field) {
    for (size_t at = details.find(field); at != std::string_view::npos;
         at = details.find(field, at + 1)) {
        if ((at > 0 && details[at - 1] != ' ') || at + field.size() >= details.size() ||
            details[at + field.size()] != ':')
            continue;
        int64_t value = 0;
        bool digits = false;
        for (size_t i = at + field.size() + 1;
             i < details.size() && std::isdigit(uint8_t(details[i])); ++i, digits = true)
            value = value * 10 + (details[i] - '0');
        return digits ? value : -1;
    }
    return -1;
}
std::string memcpyDetails(const TraceStore& store, uint64_t args) {
    const auto member = store.argsMember(args, "memcpy_details");
    return member ? trace::memberValue(*member).value_or("") : "";
}

// GPU planes ("/device:GPU:4") without XLA Ops lines (those are the XLA derivation's) and the
// host plane's threads: copies bound by correlation_id, host syncs as waits.
}  // namespace

std::vector<const TrackRow*> xprofRuntimePlanes(const TraceStore& store) {
    const TrackHosts hosts(store);
    std::vector<const TrackRow*> gpus, hostPlanes;
    std::set<int> hostsWithGpus;
    for (const TrackRow* plane : trace::processTracks(store)) {
        if (plane->name.starts_with("/host:")) {
            hostPlanes.push_back(plane);
            continue;
        }
        if (!plane->name.starts_with("/device:GPU:")) continue;
        const std::vector<const TrackRow*> lines = store.children(plane->id);
        if (std::any_of(lines.begin(), lines.end(), [](const TrackRow* line) {
                return line->name == "XLA Ops" || line->name.starts_with("XLA Ops (");
            }))
            continue;
        gpus.push_back(plane);
        hostsWithGpus.insert(hosts.of(plane->id));
    }
    // A host's threads are read only when it has such a GPU (TPU hosts: not at all).
    for (const TrackRow* plane : hostPlanes)
        if (hostsWithGpus.count(hosts.of(plane->id))) gpus.push_back(plane);
    return gpus;
}

namespace {

// What an XProf event name is to the runtime-copy derivation, decided once per string rather
// than once per slice (a GPU profile's host threads hold millions of slices).
struct XprofNames {
    enum Kind : uint8_t { Other, Copy, Blit, Collective, Sync, ApiCopy };
    std::vector<Kind> kind;
    std::vector<std::string> direction;  // of a Copy or an ApiCopy ("HtoD"), "" when unsaid
    explicit XprofNames(const TraceStore& store)
        : kind(store.textCount(), Other), direction(store.textCount()) {
        for (uint32_t id = 0; id < store.textCount(); ++id) {
            const std::string& name = store.text(id);
            if (std::string named = xprofCopyDirection(name); !named.empty()) {
                kind[id] = Copy;
                direction[id] = std::move(named);
            } else if (name.starts_with("__amd_rocclr_copyBuffer")) {
                kind[id] = Blit;
            } else if (isXprofSync(name)) {
                kind[id] = Sync;
            } else if (isApiCopy(name)) {
                kind[id] = ApiCopy;
                direction[id] = apiCopyDirection(name);
            } else if (!collectiveKind(name).empty() || isUnsizedCollective(name)) {
                kind[id] = Collective;
            }
        }
    }
};

Evidence xprofRuntimeEvidence(const TraceStore& store, const TrackHosts& hosts) {
    Evidence ev;
    const XprofNames names(store);
    struct CallCopy {
        std::string direction;
        int64_t bytes = 0;
    };
    std::unordered_map<int64_t, CallCopy> callCopies;  // async calls' direction and size
    for (const TrackRow* plane : xprofRuntimePlanes(store)) {
        const bool gpu = plane->name.starts_with("/device:GPU:");
        const std::vector<const TrackRow*> lines = store.children(plane->id);
        const int64_t device =
            gpu ? std::atoll(plane->name.c_str() + std::string_view("/device:GPU:").size()) : -1;
        for (const TrackRow* line : lines) {
            if (line->slices == 0) continue;
            const int host = hosts.of(line->id);
            int64_t stream = -1;
            std::string streamDirection;
            if (gpu) {
                if (!line->name.starts_with("Stream #")) continue;
                stream = std::atoll(line->name.c_str() + 8);
                const auto open = line->name.find('(');
                if (open != std::string::npos) {
                    const std::string kind =
                        line->name.substr(open + 1, line->name.find(')', open) - open - 1);
                    streamDirection = xprofCopyDirection(kind);
                    if (kind.starts_with("Memcpy") && streamDirection.empty())
                        streamDirection = "?";  // MemcpyOther: a copy, direction from its call
                }
            }
            store.forEachChunk(line->id, [&](const std::vector<SliceItem>& chunk) {
                for (const SliceItem& s : chunk) {
                    if (s.kind != trace::ItemKind::Slice || s.name >= names.kind.size()) continue;
                    const XprofNames::Kind kind = names.kind[s.name];
                    const auto correlation = [&] {
                        return TrackHosts::scoped(host, number(store, s.args, "correlation_id"));
                    };
                    if (gpu) {
                        const bool copy = kind == XprofNames::Copy || kind == XprofNames::Blit ||
                                          !streamDirection.empty();
                        if (!copy) {
                            if (kind == XprofNames::Collective) ++ev.unsizedCollectives;
                            continue;
                        }
                        std::string direction =
                            kind == XprofNames::Copy ? names.direction[s.name] : std::string();
                        if (direction.empty() && streamDirection != "?")
                            direction = streamDirection;
                        Activity act;
                        act.slice = s;
                        act.track = line->id;
                        act.host = host;
                        act.device = device;
                        act.stream = stream;
                        act.link = direction;
                        act.bytes =
                            std::max<int64_t>(0, detailField(memcpyDetails(store, s.args), "size"));
                        ev.activities.emplace_back(correlation(), std::move(act));
                        continue;
                    }
                    if (kind == XprofNames::Sync) {
                        ev.syncs[line->id].push_back(Call{s, line->id});
                        continue;
                    }
                    if (kind != XprofNames::Copy && kind != XprofNames::ApiCopy) continue;
                    const std::string details = memcpyDetails(store, s.args);
                    // XProf's CUDA calls state it; API names end in "Async".
                    const int64_t asyncField = detailField(details, "async");
                    const bool async = asyncField >= 0
                                           ? asyncField == 1
                                           : store.text(s.name).find("Async") != std::string::npos;
                    const int64_t id = correlation();
                    if (id < 0) continue;
                    if (!async) {
                        ev.synchronousCopies.insert(id);
                        continue;
                    }
                    ev.issues[id] = Call{s, line->id};
                    callCopies[id] = {names.direction[s.name],
                                      std::max<int64_t>(0, detailField(details, "size"))};
                }
            });
        }
    }
    // A ROCm blit kernel or a MemcpyOther copy takes its direction from its call, and a size
    // the device does not state from the call's; a copy no one states a size of is counted.
    std::erase_if(ev.activities, [&](auto& entry) {
        auto& [id, act] = entry;
        const auto call = callCopies.find(id);
        if (call != callCopies.end()) {
            if (act.link.empty()) act.link = call->second.direction;
            if (act.bytes == 0) act.bytes = call->second.bytes;
        }
        if (act.link.empty()) act.link = "copy";
        if (act.bytes > 0 || call == callCopies.end()) return false;
        ++ev.unsizedCopies;
        return true;
    });
    return ev;
}

}  // namespace

Analysis deriveKineto(const TraceStore& store) {
    const TrackHosts hosts(store);
    Evidence ev = kinetoEvidence(store, hosts);
    return transfersOf(store, hosts, ev, "kineto");
}

Analysis deriveXprofRuntime(const TraceStore& store) {
    const TrackHosts hosts(store);
    Evidence ev = xprofRuntimeEvidence(store, hosts);
    return transfersOf(store, hosts, ev, kXprofRuntimeSource);
}

}  // namespace stallscope::transfers::detail
