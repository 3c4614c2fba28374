// One profile's (or one host's) steps broken down: each device's timeline cut into the steps,
// every nanosecond in one category, the idle gaps with their causes, the host's side, launch
// latency and kernel figures; then the recommendations.

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <queue>

#include "core/release_memory.h"
#include "core/trace/dialect.h"
#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

namespace {

struct GapCandidate {
    IdleGap gap;
    int64_t launchTrack;
    bool operator<(const GapCandidate& o) const {  // the heap's top is the shortest
        return gap.duration() > o.gap.duration();
    }
};

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

// The breakdown of one step on one device, an idle gap at a time.
class StepCutter {
  public:
    StepCutter(StepAnalysis& r, const Gathered& g, Findings& found,
               std::priority_queue<GapCandidate>& longestGaps, const std::vector<GapInfo>& gapInfo,
               int64_t firstTrack)
        : r_(r),
          g_(g),
          found_(found),
          longestGaps_(longestGaps),
          gapInfo_(gapInfo),
          firstTrack_(firstTrack) {}

    // `segs`: the device's segments in time order, at least all that overlap the step.
    void cut(const std::deque<Segment>& segs, const Step& step, size_t device,
             DeviceStepBreakdown& b) {
        size_t i = size_t(std::upper_bound(segs.begin(), segs.end(), step.start,
                                           [](int64_t t, const Segment& s) { return t < s.end; }) -
                          segs.begin());
        gapId_ = -1;
        for (; i < segs.size() && segs[i].start < step.end; ++i) {
            const Segment& s = segs[i];
            const int64_t a = std::max(s.start, step.start), z = std::min(s.end, step.end);
            if (z <= a) continue;
            add(b, s, a, z);
            if (s.gapId < 0) {
                closeGap();
                continue;
            }
            if (s.gapId != gapId_) {
                closeGap();
                gap_ = IdleGap{};
                gap_.step = step.index;
                gap_.device = int(device);
                gap_.start = a;
                gapId_ = s.gapId;
            }
            gap_.end = z;
            const int64_t ns = z - a;
            if (s.cls == kSegInput)
                gap_.input += ns;
            else if (s.cls == kSegHostWait)
                gap_.hostWait += ns;
            else
                gap_.idle += ns;
        }
        closeGap();
    }

  private:
    // Segment [a, z) of the step into its category, its class's split and the overlap totals.
    void add(DeviceStepBreakdown& b, const Segment& s, int64_t a, int64_t z) {
        const int64_t ns = z - a;
        b.ns[size_t(categoryOf(s.cls))] += ns;
        int64_t* split[kDeviceClassCount] = {&b.gemm,      &b.attention, &b.otherCompute, nullptr,
                                             &b.h2d,       &b.d2h,       &b.d2d,          &b.peer,
                                             &b.otherCopy, nullptr};
        if (s.cls < kDeviceClassCount && split[s.cls]) *split[s.cls] += ns;
        if (s.active & kActiveCommunication) {
            b.communicationTotal += ns;
            if (s.active & kActiveCompute) b.communicationHidden += ns;
        }
        if (s.active & kActiveCopy) {
            b.memcpyTotal += ns;
            if (s.active & kActiveCompute) b.memcpyHidden += ns;
        }
        std::array<int64_t, 4>& longest = found_.longest;
        if (s.cls == kCommunication && ns > longest[1] - longest[0]) {
            longest[0] = a;
            longest[1] = z;
            found_.longestCommTrack = firstTrack_;
        }
        if (isCopy(s.cls) && ns > longest[3] - longest[2]) {
            longest[2] = a;
            longest[3] = z;
            found_.longestCopyTrack = firstTrack_;
        }
    }

    void closeGap() {
        if (gapId_ < 0) return;
        const std::array<std::pair<int64_t, StepCategory>, 3> parts{
            std::pair{gap_.input, StepCategory::Input},
            std::pair{gap_.hostWait, StepCategory::HostWait},
            std::pair{gap_.idle, StepCategory::Idle}};
        gap_.cause = std::max_element(parts.begin(), parts.end(), [](auto& x, auto& y) {
                         return x.first < y.first;
                     })->second;
        ++r_.gapCounts[size_t(gap_.cause)];
        // A gap opening while the host is in a synchronisation is the drained queue the sync
        // leaves behind: its host wait is a sync stall (1 µs of clock skew).
        if (gap_.hostWait > 0 &&
            g_.host[size_t(HostCategory::Sync)].overlapsAny(gap_.start - 1000, gap_.start + 1))
            found_.syncWait += gap_.hostWait;
        const int64_t launchTrack = gapInfo_[size_t(gapId_)].launchTrack;
        if (longestGaps_.size() < StepAnalysis::kMaxGaps) {
            longestGaps_.push({gap_, launchTrack});
        } else if (gap_.duration() > longestGaps_.top().gap.duration()) {
            longestGaps_.pop();
            longestGaps_.push({gap_, launchTrack});
        }
        gapId_ = -1;
    }

    StepAnalysis& r_;
    const Gathered& g_;
    Findings& found_;
    std::priority_queue<GapCandidate>& longestGaps_;
    const std::vector<GapInfo>& gapInfo_;
    const int64_t firstTrack_;
    IdleGap gap_;
    int64_t gapId_ = -1;
};

// Activities starting in the step: counted, and compute kernels measured.
void countActivities(const PackedActivities& acts, const Step& step, DeviceStepBreakdown& b,
                     Findings& found, Figures& computeDurations) {
    for (auto it = acts.firstStartingFrom(step.start); it.valid() && it->start < step.end;
         it.next()) {
        ++b.activities;
        if (!isCompute(it->cls)) continue;
        ++b.kernels;
        const int64_t dur = it->end - it->start;
        ++found.computeKernels;
        found.computeTime += dur;
        computeDurations.push_back(dur);
        if (dur < 10000) {
            ++found.shortKernels;
            found.shortKernelTime += dur;
        }
    }
}

// The host's side of each step: its categories over the step (the rest idle). One sweep over
// the per-class merged intervals (a k-way merge of their edges) adds each stretch to the steps it
// overlaps; nothing the size of the trace is built (the whole trace's segments were 100 MB at
// 10^6 slices).
void hostSide(StepAnalysis& r, const Gathered& g, int64_t from) {
    const std::vector<Step>& steps = r.steps;
    const size_t firstHost = r.host.size();
    std::vector<int64_t> covered(steps.size(), 0);
    for (const Step& step : steps) {
        HostStepBreakdown h;
        h.step = step.index;
        r.host.push_back(h);
    }
    size_t firstStep = 0;  // steps before it ended before the sweep's time
    auto add = [&](int64_t a, int64_t z, uint8_t cls) {
        while (firstStep < steps.size() && steps[firstStep].end <= a) ++firstStep;
        for (size_t k = firstStep; k < steps.size() && steps[k].start < z; ++k) {
            const int64_t overlap = std::min(z, steps[k].end) - std::max(a, steps[k].start);
            if (overlap <= 0) continue;
            r.host[firstHost + k].ns[cls] += overlap;
            covered[k] += overlap;
        }
    };
    constexpr size_t kClasses = kHostCategoryCount;
    std::vector<PackedIntervals::Cursor> next;  // per class: the interval whose edge comes next
    for (const PackedIntervals& list : g.host) next.push_back(list.begin());
    std::array<bool, kClasses> inside{};  // per class: inside that interval (its end is next)
    auto edge = [&](size_t c) {
        if (!next[c].valid()) return std::numeric_limits<int64_t>::max();
        return inside[c] ? next[c]->end : next[c]->start;
    };
    // Each class's next edge, kept: recomputed only for the classes that moved (this sweep runs
    // for every host interval of the trace).
    std::array<int64_t, kClasses> edges{};
    for (size_t c = 0; c < kClasses; ++c) edges[c] = edge(c);
    int64_t t = from;
    for (;;) {
        const int64_t now = *std::min_element(edges.begin(), edges.end());
        if (now == std::numeric_limits<int64_t>::max()) break;
        if (now > t) {
            // The first class inside wins (HostCategory order); none: idle, counted below.
            for (size_t c = 0; c < kClasses; ++c)
                if (inside[c]) {
                    if (c != size_t(HostCategory::Idle)) add(t, now, uint8_t(c));
                    break;
                }
            t = now;
        }
        for (size_t c = 0; c < kClasses; ++c)
            while (edges[c] == now) {
                if (inside[c]) next[c].next();
                inside[c] = !inside[c];
                edges[c] = edge(c);
            }
    }
    for (size_t k = 0; k < steps.size(); ++k)
        r.host[firstHost + k].ns[size_t(HostCategory::Idle)] += steps[k].duration() - covered[k];
}

}  // namespace

// Launch latency and the kernel median from every activity's figures (selected here; negative
// latencies were counted already).
void setKernelFigures(StepAnalysis& r, Figures& latencies, Figures& computeDurations) {
    r.launchLatency.count = latencies.size();
    if (!latencies.empty()) {
        r.launchLatency.mean = latencies.sum() / int64_t(latencies.size());
        r.launchLatency.p50 = latencies.nearestRank(0.5);
        r.launchLatency.p95 = latencies.nearestRank(0.95);
        r.launchLatency.max = latencies.nth(latencies.size() - 1);
    }
    r.medianKernel = computeDurations.nearestRank(0.5);
}

namespace {

// The host lists only hostSide reads; the devices' idle causes read input, runtime and sync.
void releaseHostOnlyLists(Gathered& g) {
    for (const HostCategory c : {HostCategory::Operator, HostCategory::Python, HostCategory::Other})
        releaseMemory(g.host[size_t(c)]);
}

}  // namespace

StepAnalysis analyzeOne(const TraceStore& store, const StepOptions& options,
                        KernelFigures& figures) {
    StepAnalysis r;
    // Without a step op (which may lie on a device track) the steps are known once the host is
    // read: the host's side is broken down then, and the lists only it reads let go before the
    // device tracks are read (the operators' intervals were a fifth of the peak at 10^8 slices).
    bool hostSideDone = false;
    Gathered g = gather(store, options, [&](Gathered& hosts) {
        if (!options.stepOp.empty()) return;
        r = StepAnalysis{};
        detectSteps(r, hosts, store, options);
        if (!r.steps.empty()) hostSide(r, hosts, std::min(store.start(), r.steps.front().start));
        releaseHostOnlyLists(hosts);
        hostSideDone = true;
    });
    if (!hostSideDone) detectSteps(r, g, store, options);
    // A CPU-only trace, or one whose device lines hold no activity (a CUPTI range profile):
    // its idle causes still show, but nothing is recommended about a device it does not have.
    const bool anyDevice = !g.devices.empty();
    r.deviceActivity = anyDevice;
    if (!evidenceOf(store).has(Evidence::Durations))
        r.note =
            "no durations: the trace states what ran (sizes, op counts) but not how long; "
            "there is no time to break down";
    else if (const QJsonObject untimed = store.metadata().value("untimed").toObject();
             untimed.value("collectives").toInteger() > 0)
        r.note = "no durations for " + std::to_string(untimed.value("collectives").toInteger()) +
                 " collectives (" + std::to_string(untimed.value("collective_bytes").toInteger()) +
                 " bytes): they take no time here, so communication is not in the breakdown";
    else if (!anyDevice)
        r.note =
            "no device activity: a host-only trace; the breakdown shows the host's idle "
            "causes, and nothing is said of a device";
    if (!anyDevice) {
        g.devices.push_back({"(no device activity)", -1, {}});
        g.activities.emplace_back();
    }
    r.devices = g.devices;
    if (r.steps.empty()) return r;

    const int64_t from = std::min(store.start(), r.steps.front().start);
    int64_t to = store.end();
    for (const Step& s : r.steps) to = std::max(to, s.end);

    if (!hostSideDone) {
        hostSide(r, g, from);
        releaseHostOnlyLists(g);
    }

    std::priority_queue<GapCandidate> longestGaps;
    Findings found;
    Figures computeDurations, latencies;
    r.breakdown.resize(r.steps.size() * r.devices.size());
    for (size_t d = 0; d < r.devices.size(); ++d) {
        const PackedActivities& acts = g.activities[d];
        for (auto at = acts.begin(); at.valid(); at.next()) {
            const Activity& a = *at;
            if (a.launch == INT64_MIN) continue;
            if (a.start >= a.launch)
                latencies.push_back(a.start - a.launch);
            else
                ++r.launchLatency.negative;
        }
        std::vector<GapInfo> gapInfo;
        const int64_t firstTrack = r.devices[d].tracks.empty() ? -1 : r.devices[d].tracks[0];
        StepCutter cutter(r, g, found, longestGaps, gapInfo, firstTrack);
        // The segments as they are painted, kept while a step still to cut may need them:
        // steps come by start, so a step is cut once a segment starts at its end or later,
        // and segments ending by the next step's start are let go (the whole trace's segments
        // were 300 MB at 10^7 slices).
        std::deque<Segment> window;
        size_t next = 0;
        const bool byStart =
            std::is_sorted(r.steps.begin(), r.steps.end(),
                           [](const Step& a, const Step& b) { return a.start < b.start; });
        const auto cutUntil = [&](int64_t painted) {
            for (; next < r.steps.size() && r.steps[next].end <= painted; ++next) {
                const Step& step = r.steps[next];
                DeviceStepBreakdown& b = r.breakdown[size_t(step.index) * r.devices.size() + d];
                b.step = step.index;
                b.device = int(d);
                b.start = step.start;
                b.end = step.end;
                countActivities(acts, step, b, found, computeDurations);
                cutter.cut(window, step, d, b);
                // (Steps out of order keep every segment: a later one may start earlier.)
                const int64_t keepFrom = !byStart                    ? INT64_MIN
                                         : next + 1 < r.steps.size() ? r.steps[next + 1].start
                                                                     : INT64_MAX;
                while (!window.empty() && window.front().end <= keepFrom) window.pop_front();
            }
        };
        deviceSegments(acts, g, from, to, gapInfo, [&](const Segment& s) {
            window.push_back(s);
            cutUntil(s.start);
        });
        cutUntil(INT64_MAX);
        g.activities[d].clear();  // read no more
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
    if (anyDevice) recommend(r, g.syncCalls, found);
    return r;
}

}  // namespace stallscope::trace::steps
