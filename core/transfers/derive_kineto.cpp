// Transfers of a PyTorch/Kineto trace: cudaMemcpyAsync/hipMemcpyAsync runtime calls bound to
// their GPU memcpy activity by correlation id, NCCL/RCCL collective kernels bound to their
// launches the same way, and the host-side waits for them (the first stream, device or event
// synchronize on the issuing thread after the issue). A module run is a host thread's span
// from its first issue to its last wait.
#include <algorithm>
#include <unordered_map>

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
bool isSync(std::string_view name) {
    for (const char* sync :
         {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
          "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"})
        if (name == sync) return true;
    return false;
}
bool isLaunch(std::string_view name) {
    return name == "cudaLaunchKernel" || name == "hipLaunchKernel" ||
           name == "hipExtLaunchKernel" || name == "cudaLaunchKernelExC";
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
    return "nccl " + std::string(name.substr(0, name.find('_')));
}

int64_t number(const TraceStore& store, uint64_t args, std::string_view key) {
    const auto member = store.argsMember(args, key);
    if (!member) return -1;
    const auto value = jsonMember(*member, key);
    try {
        return value ? std::stoll(*value) : -1;
    } catch (const std::exception&) {
        return -1;
    }
}

struct Call {
    SliceItem slice;
    int64_t track = 0;
};
struct Activity {
    SliceItem slice;
    int64_t track = 0;
    std::string link;  // "HtoD", "nccl AllGather"
    int64_t device = -1, bytes = 0;
};

}  // namespace

Analysis deriveKineto(const TraceStore& store) {
    Analysis a;
    LinkTable links(a.links);
    std::unordered_map<int64_t, Call> issues;              // by correlation id
    std::unordered_map<int64_t, std::vector<Call>> syncs;  // by host track, in time order
    std::vector<std::pair<int64_t, Activity>> activities;  // correlation, activity
    std::vector<Call> launches;
    // What each name is, decided once per string rather than once per slice: a trace's slices
    // are millions, its distinct names thousands.
    enum class What : uint8_t { Other, Memcpy, Launch, Sync, Activity };
    std::vector<What> what(store.textCount(), What::Other);
    std::vector<std::string> activityLink(store.textCount());
    for (uint32_t id = 0; id < store.textCount(); ++id) {
        const std::string& name = store.text(id);
        if (isMemcpyCall(name)) {
            what[id] = What::Memcpy;
        } else if (isLaunch(name)) {
            what[id] = What::Launch;
        } else if (isSync(name)) {
            what[id] = What::Sync;
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
        store.forEachChunk(track.id, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& s : chunk) {
                if (s.kind != trace::ItemKind::Slice || s.name >= what.size()) continue;
                switch (what[s.name]) {
                    case What::Other:
                        break;
                    case What::Memcpy: {
                        const int64_t correlation = number(store, s.args, "correlation");
                        if (correlation >= 0) issues[correlation] = Call{s, track.id};
                        break;
                    }
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
                        act.device = number(store, s.args, "device");
                        act.bytes = std::max<int64_t>(0, number(store, s.args, "bytes"));
                        activities.emplace_back(number(store, s.args, "correlation"),
                                                std::move(act));
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
            const int64_t correlation = number(store, launch.slice.args, "correlation");
            if (correlation >= 0) issues[correlation] = launch;
        }
    }
    for (auto& entry : syncs)
        std::sort(entry.second.begin(), entry.second.end(),
                  [](const Call& x, const Call& y) { return x.slice.start < y.slice.start; });
    // Transfers by host thread, in issue order.
    std::map<int64_t, std::vector<std::pair<Call, Activity>>> byThread;
    uint64_t withoutCall = 0;
    for (auto& [correlation, act] : activities) {
        const auto call = issues.find(correlation);
        if (call == issues.end()) {
            ++withoutCall;
            continue;
        }
        byThread[call->second.track].emplace_back(call->second, std::move(act));
    }
    uint64_t notWaited = 0;
    std::vector<RunProgram> programs;
    for (auto& [thread, list] : byThread) {
        std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
            return x.first.slice.start < y.first.slice.start;
        });
        const std::vector<Call>& threadSyncs = syncs[thread];
        ModuleRun run;
        run.name = store.track(thread) ? store.track(thread)->name : "host thread";
        run.device = "host";
        run.track = thread;
        run.start = list.front().first.slice.start;
        run.end = run.start;
        const uint32_t module = uint32_t(a.modules.size());
        // Each transfer waits at the first sync that starts after its issue.
        std::map<size_t, std::vector<uint32_t>> waitsAt;  // sync index -> transfers
        for (const auto& [call, act] : list) {
            Transfer t;
            t.id = uint32_t(a.transfers.size());
            t.name = store.text(call.slice.name);
            t.opcode = t.name;
            t.module = module;
            t.bytes = uint64_t(act.bytes);
            const std::string device =
                act.device >= 0 ? "GPU " + std::to_string(act.device) : "GPU";
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
            const auto sync = std::lower_bound(
                threadSyncs.begin(), threadSyncs.end(), t.issue,
                [](const Call& c, int64_t issue) { return c.slice.start < issue; });
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
        for (uint32_t id : run.transfers) {
            Step s;
            s.role = Role::Issue;
            s.start = s.end = a.transfers[id].issue;
            s.transfers = {id};
            s.name = a.transfers[id].name;
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
            // A sync also waits for kernels: what its transfers do not explain stays.
            if (s.end - std::max(s.start, transfersDone) >= kBlockedWaitNs) s.otherWorkEnd = s.end;
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
    if (withoutCall) a.unmatched["activity_without_runtime_call"] = withoutCall;
    if (notWaited) a.unmatched["not_waited_on_host"] = notWaited;
    if (a.transfers.empty() && a.unmatched.empty()) return a;
    a.source = "kineto";
    model(a, programs);
    return a;
}

}  // namespace stallscope::transfers::detail
