// Transfers from runtime copy calls: each call bound to its activity, waited at the first sync
// (on the host or the device) that holds it, in runs per host thread; then modelled.

#include <algorithm>
#include <map>

#include "core/trace/hosts.h"
#include "core/transfers/runtime_copies.h"

namespace stallscope::transfers::detail {

using trace::SliceItem;
using trace::TraceStore;
using trace::TrackRow;

namespace {

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

}  // namespace

namespace {

using CallAndCopy = std::pair<Call, Activity>;

// The first sync on a thread starting at or after `t` (syncs sorted by start).
std::vector<Call>::const_iterator syncFrom(const std::vector<Call>& syncs, int64_t t) {
    return std::lower_bound(syncs.begin(), syncs.end(), t,
                            [](const Call& c, int64_t issue) { return c.slice.start < issue; });
}

// Makes the analysis of transfersOf, a host thread and a stream wait at a time.
class RuntimeCopies {
  public:
    RuntimeCopies(const TraceStore& store, const TrackHosts& hosts, Evidence& ev)
        : store_(store), hosts_(hosts), ev_(ev), links_(a_.links) {}

    Analysis run(const char* source) {
        for (auto& entry : ev_.syncs)
            std::sort(entry.second.begin(), entry.second.end(),
                      [](const Call& x, const Call& y) { return x.slice.start < y.slice.start; });
        groupByThread();
        // Device-side waits: a stream wait holds back the copies on the stream it waits on
        // that were issued before the event's record and that no earlier wait on it held.
        placeStreamWaits(store_, ev_.isStreamWork, ev_.records, ev_.streamWaits);
        deviceWaited_.resize(ev_.streamWaits.size());
        for (auto& [thread, list] : byThread_) threadRuns(thread, list);
        for (size_t w = 0; w < ev_.streamWaits.size(); ++w) streamWaitRun(w);
        if (withoutCall_) a_.unmatched["activity_without_runtime_call"] = withoutCall_;
        if (synchronous_) a_.unmatched["synchronous_copies"] = synchronous_;
        if (ev_.unsizedCollectives)
            a_.unmatched["collective_kernels_without_size"] = ev_.unsizedCollectives;
        if (ev_.unsizedCopies) a_.unmatched["copies_without_size"] = ev_.unsizedCopies;
        if (notWaited_) a_.unmatched["not_waited_on_host"] = notWaited_;
        if (a_.transfers.empty() && a_.unmatched.empty()) return std::move(a_);
        a_.source = source;
        model(a_, programs_);
        return std::move(a_);
    }

  private:
    // Transfers by host thread, in issue order.
    void groupByThread() {
        for (auto& [correlation, act] : ev_.activities) {
            const auto call = ev_.issues.find(correlation);
            if (call == ev_.issues.end()) {
                if (correlation >= 0 && ev_.synchronousCopies.count(correlation))
                    ++synchronous_;
                else
                    ++withoutCall_;
                continue;
            }
            byThread_[call->second.track].emplace_back(call->second, std::move(act));
        }
        for (auto& entry : byThread_)
            std::sort(entry.second.begin(), entry.second.end(), [](const auto& x, const auto& y) {
                return x.first.slice.start < y.first.slice.start;
            });
    }

    // Per transfer of a thread: the stream wait that holds it, or -1.
    std::vector<int32_t> heldByStreamWaits(const std::vector<CallAndCopy>& list) const {
        std::vector<size_t> order;
        for (size_t w = 0; w < ev_.streamWaits.size(); ++w)
            if (ev_.streamWaits[w].resolved) order.push_back(w);
        std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
            return ev_.streamWaits[x].recordIssue < ev_.streamWaits[y].recordIssue;
        });
        std::vector<int32_t> held(list.size(), -1);
        for (size_t i = 0; i < list.size(); ++i) {
            const Activity& act = list[i].second;
            for (size_t w : order) {
                const StreamWait& sw = ev_.streamWaits[w];
                if (sw.host != act.host || sw.device != act.device ||
                    sw.waitOnStream != act.stream || act.stream < 0 ||
                    sw.recordIssue <= list[i].first.slice.start)
                    continue;
                held[i] = int32_t(w);
                break;
            }
        }
        return held;
    }

    // A copy held by a stream wait that comes before its host sync (if any) is the device's to
    // wait for: moved to that wait; the rest stay the host's.
    void moveDeviceWaited(std::vector<CallAndCopy>& list, const std::vector<Call>& threadSyncs) {
        const std::vector<int32_t> held = heldByStreamWaits(list);
        std::vector<CallAndCopy> onHost;
        for (size_t i = 0; i < list.size(); ++i) {
            if (held[i] >= 0) {
                const auto sync = syncFrom(threadSyncs, list[i].first.slice.start);
                if (sync == threadSyncs.end() ||
                    ev_.streamWaits[size_t(held[i])].reached <= sync->slice.start) {
                    deviceWaited_[size_t(held[i])].push_back(std::move(list[i]));
                    continue;
                }
            }
            onHost.push_back(std::move(list[i]));
        }
        list = std::move(onHost);
    }

    void threadRuns(int64_t thread, std::vector<CallAndCopy>& list) {
        const std::vector<Call>& threadSyncs = ev_.syncs[thread];
        moveDeviceWaited(list, threadSyncs);
        if (list.empty()) return;
        ModuleRun run;
        run.name = store_.track(thread) ? store_.track(thread)->name : "host thread";
        run.device = hosts_.prefix(hosts_.of(thread)) + "host";
        run.track = thread;
        run.start = list.front().first.slice.start;
        run.end = run.start;
        std::map<size_t, std::vector<uint32_t>> waitsAt;  // sync index -> transfers
        std::vector<std::string_view> issueNames;
        hostTransfers(list, threadSyncs, run, waitsAt, issueNames);
        RunProgram program = hostProgram(run, threadSyncs, waitsAt, issueNames);
        cutIntoStretches(run, program);
    }

    // Each transfer waits at the first sync that starts after its issue and does not return
    // before the copy ends: one that does synchronised another stream (the runtime call names
    // none; public HTA traces have 359 such pairs in one rank).
    void hostTransfers(const std::vector<CallAndCopy>& list, const std::vector<Call>& threadSyncs,
                       ModuleRun& run, std::map<size_t, std::vector<uint32_t>>& waitsAt,
                       std::vector<std::string_view>& issueNames) {
        const uint32_t module = uint32_t(a_.modules.size());
        for (const auto& [call, act] : list) {
            Transfer t = measuredTransfer(store_, hosts_, links_, call, act);
            t.id = uint32_t(a_.transfers.size());
            t.module = module;
            // Step names view the store's strings: the transfers' own move as the vector grows.
            issueNames.push_back(store_.text(call.slice.name));
            auto sync = syncFrom(threadSyncs, t.issue);
            while (sync != threadSyncs.end() && sync->slice.end() + kBlockedWaitNs < t.complete)
                ++sync;
            if (sync == threadSyncs.end()) {
                t.waited = false;
                ++notWaited_;
            } else {
                t.waitName = store_.text(sync->slice.name);
                t.wait = sync->slice.start;
                t.waitEnd = sync->slice.end();
                t.waitTrack = sync->track;
                t.blocked = t.waitEnd - t.wait >= kBlockedWaitNs && t.complete > t.wait;
                waitsAt[size_t(sync - threadSyncs.begin())].push_back(t.id);
            }
            run.end = std::max(run.end, t.waited ? t.waitEnd : t.complete);
            run.transfers.push_back(t.id);
            a_.transfers.push_back(std::move(t));
        }
    }

    // The run as steps: issues and the syncs between the first issue and the run's end.
    RunProgram hostProgram(const ModuleRun& run, const std::vector<Call>& threadSyncs,
                           const std::map<size_t, std::vector<uint32_t>>& waitsAt,
                           const std::vector<std::string_view>& issueNames) {
        RunProgram program;
        program.module = uint32_t(a_.modules.size());
        std::vector<std::pair<int64_t, Step>> steps;
        for (size_t i = 0; i < run.transfers.size(); ++i) {
            const uint32_t id = run.transfers[i];
            Step s;
            s.role = Role::Issue;
            s.start = s.end = a_.transfers[id].issue;
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
            s.name = store_.text(c.slice.name);
            const auto waited = waitsAt.find(i);
            if (waited != waitsAt.end()) s.transfers = waited->second;
            int64_t transfersDone = INT64_MIN;
            for (uint32_t id : s.transfers)
                transfersDone = std::max(transfersDone, a_.transfers[id].complete);
            settleWait(s, transfersDone);
            steps.emplace_back(s.start, std::move(s));
        }
        std::stable_sort(steps.begin(), steps.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& entry : steps) {
            Step& s = entry.second;
            const int32_t index = int32_t(program.steps.size());
            for (uint32_t id : s.transfers) {
                Transfer& t = a_.transfers[id];
                (s.role == Role::Issue ? t.issueStep : t.waitStep) = index;
            }
            program.steps.push_back(std::move(s));
        }
        return program;
    }

    // One run per stretch of the thread up to a sync that waits for copies: the copies issued in
    // a stretch are waited at its end (the first sync after an issue), so the stretches are
    // independent, and short enough to re-simulate per suggestion.
    void cutIntoStretches(const ModuleRun& run, RunProgram& program) {
        std::vector<Step> pending;
        int64_t segmentStart = run.start;
        uint32_t segmentsMade = 0;
        for (Step& step : program.steps) {
            const bool cut = step.role == Role::Wait && !step.transfers.empty();
            const int64_t end = step.end;
            pending.push_back(std::move(step));
            if (cut) closeStretch(run, pending, segmentStart, segmentsMade, end);
        }
        if (!pending.empty()) closeStretch(run, pending, segmentStart, segmentsMade, run.end);
    }

    void closeStretch(const ModuleRun& run, std::vector<Step>& pending, int64_t& segmentStart,
                      uint32_t& segmentsMade, int64_t end) {
        ModuleRun segment;
        segment.name = run.name;
        segment.device = run.device;
        segment.track = run.track;
        segment.start = segmentStart;
        segment.end = std::max(end, segmentStart);
        RunProgram part;
        part.module = uint32_t(a_.modules.size());
        for (Step& step : pending) {
            const int32_t index = int32_t(part.steps.size());
            for (uint32_t id : step.transfers) {
                Transfer& t = a_.transfers[id];
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
        // How early: the previous sync on the thread (the trace does not say which kernel wrote
        // the source buffer): this stretch's start, or a sync inside it.
        for (uint32_t id : segment.transfers) {
            Transfer& t = a_.transfers[id];
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
        a_.modules.push_back(std::move(segment));
        programs_.push_back(std::move(part));
    }

    // How early a copy a stream wait held could go: after the previous host sync on the
    // issuing thread (the trace does not say which kernel wrote the source); the issue stays
    // when there is none.
    void previousSyncBacktail(Transfer& t, const Call& call, const std::vector<CallAndCopy>& held,
                              size_t i) {
        t.backtailKind = Backtail::Unknown;
        t.backtail = t.issue;
        const std::vector<Call>& threadSyncs = ev_.syncs[call.track];
        auto sync = syncFrom(threadSyncs, t.issue);
        while (sync != threadSyncs.begin()) {
            --sync;
            if (sync->slice.end() > t.issue) continue;
            t.backtailKind = Backtail::PreviousSync;
            t.backtailOp = store_.text(sync->slice.name);
            t.backtail = sync->slice.end();
            // Steps issued before that sync ended stay ahead of it.
            t.backtailStep = -1;
            for (size_t k = 0; k < i; ++k)
                if (held[k].first.slice.start < t.backtail) t.backtailStep = int32_t(k);
            break;
        }
    }

    // A run per stream wait that held copies: their issues, then the wait, from when the stream
    // reached it to when its next work started.
    void streamWaitRun(size_t w) {
        auto& held = deviceWaited_[w];
        if (held.empty()) return;
        const StreamWait& sw = ev_.streamWaits[w];
        std::sort(held.begin(), held.end(), [](const auto& x, const auto& y) {
            return x.first.slice.start < y.first.slice.start;
        });
        ModuleRun run;
        const trace::TrackRow* waiting = store_.track(sw.track);
        run.name = (waiting ? waiting->name : std::string("stream")) + " waits for stream " +
                   std::to_string(sw.waitOnStream);
        run.device =
            hosts_.prefix(sw.host) + (sw.device >= 0 ? "GPU " + std::to_string(sw.device) : "GPU");
        run.track = sw.track;
        run.start = held.front().first.slice.start;
        run.end = std::max(run.start, sw.resumed);
        RunProgram program;
        program.module = uint32_t(a_.modules.size());
        Step wait;
        wait.role = Role::Wait;
        wait.start = std::max(sw.reached, run.start);
        wait.end = std::max(sw.resumed, wait.start);
        wait.name = store_.text(sw.slice.name);
        int64_t transfersDone = INT64_MIN;
        for (size_t i = 0; i < held.size(); ++i) {
            const auto& [call, act] = held[i];
            Transfer t = measuredTransfer(store_, hosts_, links_, call, act);
            t.id = uint32_t(a_.transfers.size());
            t.module = program.module;
            t.waitName = std::string(wait.name);
            t.wait = wait.start;
            t.waitEnd = wait.end;
            t.waitTrack = sw.track;
            t.blocked = t.waitEnd - t.wait >= kBlockedWaitNs && t.complete > t.wait;
            t.issueStep = int32_t(i);
            t.waitStep = int32_t(held.size());
            transfersDone = std::max(transfersDone, t.complete);
            previousSyncBacktail(t, call, held, i);
            Step issue;
            issue.role = Role::Issue;
            issue.start = issue.end = t.issue;
            issue.transfers = {t.id};
            issue.name = store_.text(call.slice.name);
            program.steps.push_back(std::move(issue));
            wait.transfers.push_back(t.id);
            run.transfers.push_back(t.id);
            a_.transfers.push_back(std::move(t));
        }
        settleWait(wait, transfersDone);
        program.steps.push_back(std::move(wait));
        a_.modules.push_back(std::move(run));
        programs_.push_back(std::move(program));
    }

    const TraceStore& store_;
    const TrackHosts& hosts_;
    Evidence& ev_;
    Analysis a_;
    LinkTable links_;
    std::map<int64_t, std::vector<CallAndCopy>> byThread_;
    std::vector<std::vector<CallAndCopy>> deviceWaited_;  // per stream wait
    std::vector<RunProgram> programs_;
    uint64_t withoutCall_ = 0, synchronous_ = 0, notWaited_ = 0;
};

}  // namespace

// Transfers from the evidence: each call bound to its activity, waited at the first sync (on
// the host or the device) that holds it, in runs per host thread; then modelled.
Analysis transfersOf(const TraceStore& store, const TrackHosts& hosts, Evidence& ev,
                     const char* source) {
    return RuntimeCopies(store, hosts, ev).run(source);
}

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
