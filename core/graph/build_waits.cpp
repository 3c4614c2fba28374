// What host syncs wait for, collectives across ranks, and the steps.

#include <algorithm>
#include <map>
#include <set>

#include "core/graph/build_internal.h"
#include "core/trace/steps/internal.h"

namespace stallscope::graph::build {

namespace {

// A sync returns a few µs after the device work it waited for (public traces: 1-17 µs); one
// returning later waited for nothing we know of (it ends on its own).
constexpr int64_t kSyncReturnNs = 20000;
// Device work ending this little after a sync returned was still waited for (clock rounding).
constexpr int64_t kClockSlackNs = 1000;

// The last activity of a device lane launched before `t` that ended by `t` (plus slack), or
// kNone when the lane was still busy then (the sync did not wait for that stream).
uint32_t lastDoneBefore(const Graph& g, uint32_t lane, int64_t t) {
    const uint32_t begin = g.laneBegin[lane], end = g.laneBegin[lane + 1];
    auto it = std::lower_bound(g.nodes.begin() + begin, g.nodes.begin() + end, t,
                               [](const Node& n, int64_t x) { return n.start < x; });
    for (int back = 0; it != g.nodes.begin() + begin && back < 8; ++back) {
        --it;
        const bool launchedBefore = it->trigger == kNone || g.nodes[it->trigger].start < t;
        if (!launchedBefore) continue;
        return it->end <= t + kClockSlackNs ? uint32_t(it - g.nodes.begin()) : kNone;
    }
    return kNone;
}

}  // namespace

void KinetoBuilder::addSyncWaits() {
    struct Pending {
        uint32_t node;
        int64_t depsDone;
        bool blocked;
    };
    std::vector<Pending> syncs;
    std::vector<int64_t> unblockedLengths, returns;
    for (const Call& call : calls_) {
        if (!call.sync || call.lastNode == kNone) continue;
        Node& node = g_.nodes[call.lastNode];
        node.waitsBegin = uint32_t(g_.waits.size());
        int64_t depsDone = INT64_MIN;
        for (uint32_t lane = 0; lane < g_.lanes.size(); ++lane) {
            if (!g_.lanes[lane].device || g_.lanes[lane].host != g_.lanes[node.lane].host) continue;
            const uint32_t w = lastDoneBefore(g_, lane, call.end);
            if (w == kNone) continue;
            g_.waits.push_back(w);
            depsDone = std::max(depsDone, g_.nodes[w].end);
        }
        node.waitsCount = uint32_t(g_.waits.size()) - node.waitsBegin;
        const bool blocked =
            node.waitsCount > 0 && depsDone > node.start && call.end - depsDone <= kSyncReturnNs;
        syncs.push_back({call.lastNode, depsDone, blocked});
        if (blocked)
            returns.push_back(call.end - depsDone);
        else
            unblockedLengths.push_back(node.end - node.start);
    }
    const int64_t typicalOwn = medianOf(std::move(unblockedLengths), 1000);
    const int64_t typicalReturn = medianOf(std::move(returns), 3000);
    // A blocked sync ends when its work is done plus its return; its own length is what a sync
    // takes when nothing is pending. Unchanged, both reproduce its measured end.
    for (const Pending& p : syncs) {
        Node& node = g_.nodes[p.node];
        const int64_t length = node.end - node.start;
        if (p.blocked) {
            node.own = std::min(length, typicalOwn);
            node.returnNs = node.end - p.depsDone;
        } else {
            node.own = length;
            if (node.waitsCount > 0) node.returnNs = std::min(typicalReturn, node.end - p.depsDone);
        }
    }
}

// A launch held far longer than launches take, returning just after work pending on its stream
// ended, waited for a full launch queue (CUDA holds about a thousand pending launches; a
// device-bound loop without syncs fills it): it then waits for that activity as a sync does
// (own: a typical launch; return: as measured), so faster device work frees the host. Unchanged,
// its end is reproduced. Only launches longer than kBlockedLaunchFactor typical ones and at
// least kSyncReturnNs longer, made while kMinQueued or more activities of the stream were
// launched and not done, count: a launch held by anything else (a module loading, a pageable
// copy) keeps its time.
void KinetoBuilder::addQueueWaits() {
    constexpr int64_t kBlockedLaunchFactor = 3;
    constexpr int kMinQueued = 8;
    // Whether kMinQueued activities of `lane` were launched before `t` and had not ended by then.
    const auto queuedAt = [this](uint32_t lane, int64_t t) {
        const auto begin = g_.nodes.begin() + g_.laneBegin[lane];
        const auto end = g_.nodes.begin() + g_.laneBegin[lane + 1];
        auto it =
            std::upper_bound(begin, end, t, [](int64_t x, const Node& n) { return x < n.end; });
        int queued = 0;
        for (int looked = 0; it != end && looked < 4 * kMinQueued && queued < kMinQueued;
             ++it, ++looked)
            if (it->trigger != kNone && g_.nodes[it->trigger].start < t) ++queued;
        return queued >= kMinQueued;
    };
    struct Launch {
        uint32_t call;   // its host node
        uint32_t after;  // the activity it returned after, kNone when not blocked
    };
    std::vector<Launch> launches;
    std::vector<int64_t> freeLengths;
    for (uint32_t i = 0; i < g_.nodes.size(); ++i) {
        const Node& activity = g_.nodes[i];
        if (!g_.lanes[activity.lane].device || activity.trigger == kNone || isAnchored(i)) continue;
        const uint32_t c = activity.trigger;
        const Node& call = g_.nodes[c];
        if (call.kind != NodeKind::Launch || call.waitsCount > 0) continue;
        // The last activity of the launched stream that ended by the call's return.
        const uint32_t begin = g_.laneBegin[activity.lane], end = g_.laneBegin[activity.lane + 1];
        auto it = std::upper_bound(g_.nodes.begin() + begin, g_.nodes.begin() + end,
                                   call.end + kClockSlackNs,
                                   [](int64_t t, const Node& n) { return t < n.end; });
        uint32_t after = kNone;
        if (it != g_.nodes.begin() + begin) {
            const Node& last = *(it - 1);
            if (last.end > call.start && call.end - last.end <= kSyncReturnNs &&
                queuedAt(activity.lane, call.start))
                after = uint32_t(it - 1 - g_.nodes.begin());
        }
        launches.push_back({c, after});
        if (after == kNone) freeLengths.push_back(call.end - call.start);
    }
    const int64_t typical = medianOf(std::move(freeLengths), 5000);
    for (const Launch& l : launches) {
        Node& call = g_.nodes[l.call];
        const int64_t length = call.end - call.start;
        if (l.after == kNone || call.waitsCount > 0 || length < kBlockedLaunchFactor * typical ||
            length < typical + kSyncReturnNs)
            continue;
        call.waitsBegin = uint32_t(g_.waits.size());
        call.waitsCount = 1;
        g_.waits.push_back(l.after);
        call.own = typical;
        call.returnNs = call.end - g_.nodes[l.after].end;
    }
}

// Host threads handing work to each other: a thread idle (no op or call over it) for at least
// kHandoffMinGapNs that resumes within kHandoffWindowNs after another thread of its host went
// idle, while that one stays idle at least kHandoffMinGapNs longer, was woken by it (PyTorch's
// main thread entering backward() wakes the autograd thread, whose end wakes the main thread).
// Unchanged, the wake-up latency reproduces the resume.
void KinetoBuilder::linkHandoffs() {
    constexpr int64_t kHandoffMinGapNs = 50000;
    constexpr int64_t kHandoffWindowNs = 300000;
    struct Gap {
        int64_t start, end;
        uint32_t before;  // the lane's node that ended when the gap started (kNone: the lane's
                          // start, which wakes no one)
        uint32_t last;    // the gap's last node (ends when the thread resumes)
        uint32_t lane;
    };
    std::vector<Gap> gaps;
    int64_t earliest = INT64_MAX;
    for (uint32_t lane = 0; lane < g_.lanes.size(); ++lane) {
        if (g_.lanes[lane].device) continue;
        const uint32_t begin = g_.laneBegin[lane], end = g_.laneBegin[lane + 1];
        earliest = std::min(earliest, g_.nodes[begin].start);
        const auto idle = [this](uint32_t k) { return isIdle(k); };
        for (uint32_t i = begin; i < end; ++i) {
            if (!idle(i)) continue;
            uint32_t last = i;
            while (last + 1 < end && idle(last + 1)) ++last;
            const bool leading = i == begin;
            if (leading && last == begin)
                gaps.push_back({INT64_MIN, g_.nodes[i].end, kNone, i, lane});
            else if (!leading && last + 1 < end &&
                     g_.nodes[last].end - g_.nodes[i].start >= kHandoffMinGapNs)
                gaps.push_back({g_.nodes[i].start, g_.nodes[last].end, i - 1, last, lane});
            i = last;
        }
    }
    std::sort(gaps.begin(), gaps.end(),
              [](const Gap& a, const Gap& b) { return a.start < b.start; });
    for (const Gap& woken : gaps) {
        // The latest gap of another thread of the host starting before this one ends.
        auto it = std::lower_bound(gaps.begin(), gaps.end(), woken.end,
                                   [](const Gap& g, int64_t t) { return g.start < t; });
        const Gap* waker = nullptr;
        while (it != gaps.begin()) {
            --it;
            if (it->before == kNone || woken.end - it->start > kHandoffWindowNs) break;
            if (it->lane != woken.lane && it->end - woken.end >= kHandoffMinGapNs &&
                g_.lanes[it->lane].host == g_.lanes[woken.lane].host) {
                waker = &*it;
                break;
            }
        }
        if (!waker) continue;
        Node& node = g_.nodes[woken.last];
        if (node.waitsCount > 0) continue;
        node.kind = NodeKind::Woken;
        node.waitsBegin = uint32_t(g_.waits.size());
        node.waitsCount = 1;
        g_.waits.push_back(waker->before);
        node.returnNs = woken.end - g_.nodes[waker->before].end;
        node.own = 0;
        // A thread's first work: it may come as early as the trace's start.
        if (woken.before == kNone) node.start = earliest;
    }
}

bool formGroup(Graph& g, std::vector<uint32_t> members, bool eagerFirst) {
    int64_t lastArrival = INT64_MIN;
    for (uint32_t m : members) lastArrival = std::max(lastArrival, g.nodes[m].start);
    for (size_t k = eagerFirst ? 1 : 0; k < members.size(); ++k)
        if (g.nodes[members[k]].end < lastArrival) return false;
    const uint32_t group = uint32_t(g.groups.size());
    for (size_t k = eagerFirst ? 1 : 0; k < members.size(); ++k) {
        Node& node = g.nodes[members[k]];
        node.group = group;
        node.own = node.end - lastArrival;
    }
    g.groups.push_back(std::move(members));
    return true;
}

// The k-th collective of every rank, when they all have one of the same name, is one
// collective: each rank's ends when the last rank arrived plus the transfer (as that rank
// measured it). A run whose clocks put an end before the last arrival is left unmatched.
void matchCollectiveGroups(Graph& g, std::vector<std::vector<uint32_t>> byHost) {
    size_t most = 0;
    for (auto& list : byHost) {
        std::stable_sort(list.begin(), list.end(), [&g](uint32_t a, uint32_t b) {
            return g.nodes[a].start < g.nodes[b].start;
        });
        most = std::max(most, list.size());
    }
    for (size_t k = 0; k < most; ++k) {
        std::vector<uint32_t> members;
        for (const auto& list : byHost)
            if (k < list.size()) members.push_back(list[k]);
        const bool same = members.size() == byHost.size() &&
                          std::all_of(members.begin(), members.end(), [&](uint32_t m) {
                              return g.nodes[m].name == g.nodes[members.front()].name;
                          });
        if (!same || !formGroup(g, members, false)) g.unmatchedCollectives += members.size();
    }
}

void KinetoBuilder::matchCollectives() {
    if (g_.hosts < 2) return;
    std::vector<std::vector<uint32_t>> byHost(size_t(g_.hosts));
    for (uint32_t i = 0; i < g_.nodes.size(); ++i)
        if (g_.nodes[i].kind == NodeKind::Collective)
            byHost[size_t(g_.lanes[g_.nodes[i].lane].host)].push_back(i);
    matchCollectiveGroups(g_, std::move(byHost));
}

void KinetoBuilder::findSteps() {
    // Per host, the lane holding most step markers; without markers, the busiest host lane.
    std::map<std::pair<int, uint32_t>, size_t> perLane;
    for (const Marker& m : markers_) ++perLane[{g_.lanes[m.lane].host, m.lane}];
    std::map<int, uint32_t> laneOfHost;
    for (const auto& [key, count] : perLane) {
        const auto it = laneOfHost.find(key.first);
        if (it == laneOfHost.end() || perLane[{key.first, it->second}] < count)
            laneOfHost[key.first] = key.second;
    }
    std::vector<Marker> steps;
    for (const Marker& m : markers_)
        if (laneOfHost[g_.lanes[m.lane].host] == m.lane) steps.push_back(m);
    const bool deviceOnly =
        std::none_of(g_.lanes.begin(), g_.lanes.end(), [](const Lane& l) { return !l.device; });
    if (steps.empty() && deviceOnly) steps = deviceStepMarkers();
    if (steps.empty()) {
        uint32_t busiest = kNone, most = 0;
        for (uint32_t l = 0; l < g_.lanes.size(); ++l) {
            const uint32_t count = g_.laneBegin[l + 1] - g_.laneBegin[l];
            if (g_.lanes[l].device == deviceOnly && count > most) {
                busiest = l;
                most = count;
            }
        }
        if (busiest == kNone) return;
        steps.push_back({g_.nodes[g_.laneBegin[busiest]].start,
                         g_.nodes[g_.laneBegin[busiest + 1] - 1].end, kNone, busiest});
    }
    std::stable_sort(steps.begin(), steps.end(), [this](const Marker& a, const Marker& b) {
        const int ha = g_.lanes[a.lane].host, hb = g_.lanes[b.lane].host;
        return ha != hb ? ha < hb : a.start < b.start;
    });
    for (const Marker& m : steps) {
        const auto begin = g_.nodes.begin() + g_.laneBegin[m.lane];
        const auto end = g_.nodes.begin() + g_.laneBegin[m.lane + 1];
        const auto first = std::lower_bound(begin, end, m.start,
                                            [](const Node& n, int64_t t) { return n.start < t; });
        auto last =
            std::upper_bound(first, end, m.end, [](int64_t t, const Node& n) { return t < n.end; });
        if (first == end || last == first) continue;
        --last;
        StepWindow w;
        w.name = m.name == kNone ? "whole trace" : store_.text(m.name);
        // XProf's Steps line names a step by its number alone.
        if (!w.name.empty() && std::all_of(w.name.begin(), w.name.end(), ::isdigit))
            w.name = "step " + w.name;
        w.host = g_.lanes[m.lane].host;
        w.lane = m.lane;
        w.first = uint32_t(first - g_.nodes.begin());
        w.last = uint32_t(last - g_.nodes.begin());
        w.start = m.start;
        w.end = m.end;
        w.lead = first->start - m.start;
        w.tail = m.end - last->end;
        g_.steps.push_back(std::move(w));
    }
}

// Steps of a graph without host lanes: a device plane's "Steps" line (XProf), per host the
// first plane that has one, laid on that plane's busiest stream.
std::vector<KinetoBuilder::Marker> KinetoBuilder::deviceStepMarkers() const {
    std::vector<Marker> out;
    std::set<int> hostsDone;
    for (const trace::TrackRow& line : store_.tracks()) {
        if (line.name != "Steps" || line.slices == 0) continue;
        uint32_t busiest = kNone, most = 0;
        for (uint32_t l = 0; l < g_.lanes.size(); ++l) {
            const trace::TrackRow* track = store_.track(g_.lanes[l].track);
            const uint32_t count = g_.laneBegin[l + 1] - g_.laneBegin[l];
            if (track && track->parent == line.parent && count > most) {
                busiest = l;
                most = count;
            }
        }
        if (busiest == kNone || !hostsDone.insert(g_.lanes[busiest].host).second) continue;
        readTrack(line.id, [&](const std::vector<trace::SliceItem>& chunk) {
            for (const trace::SliceItem& s : chunk)
                if (s.kind == trace::ItemKind::Slice && s.depth == 0 && !s.unended)
                    out.push_back({s.start, s.preciseEnd().ns, s.name, busiest});
        });
    }
    return out;
}

}  // namespace stallscope::graph::build
