// Device streams: their activities (kernels, copies, memsets, collectives; not the annotations
// holding them), each bound to the runtime call that launched it (by flow, else correlation),
// and the latencies that reproduce the measured starts.

#include <algorithm>
#include <map>
#include <tuple>

#include "core/graph/build_internal.h"
#include "core/release_memory.h"
#include "core/trace/steps/internal.h"

namespace stallscope::graph::build {

namespace {

NodeKind kindOfClass(uint8_t cls) {
    if (trace::steps::isCompute(cls)) return NodeKind::Kernel;
    if (cls == trace::steps::kCommunication) return NodeKind::Collective;
    return NodeKind::Copy;  // copies and memsets
}

}  // namespace

// A device slice's class, decided once per name.
uint8_t KinetoBuilder::deviceClassOf(uint32_t name) {
    if (name >= deviceClasses_.size()) deviceClasses_.resize(store_.textCount(), -1);
    if (name >= deviceClasses_.size()) return trace::steps::kNotActivity;
    int16_t& cls = deviceClasses_[name];
    if (cls < 0) cls = trace::steps::classifyDeviceName(store_.text(name));
    return uint8_t(cls);
}

void KinetoBuilder::readDeviceLane(const trace::TrackRow& track, std::vector<Activity>& out) {
    // Reserved exactly and filtered in place: a second list, each grown by doubling, was a
    // third of the critical path's peak.
    std::vector<Activity>& all = out;
    all.reserve(all.size() + mostSlicesOf(track));
    readTrack(track.id, [&](const std::vector<trace::SliceItem>& chunk) {
        for (const trace::SliceItem& s : chunk) {
            if (s.kind != trace::ItemKind::Slice || s.unended) continue;
            const uint8_t cls = deviceClassOf(s.name);
            if (cls == trace::steps::kNotActivity) {
                if (store_.text(s.name) == "Stream Wait Event") streamWaits_[track.id].push_back(s);
                continue;
            }
            all.push_back({s, kindOfClass(cls), -1});
        }
    });
    const auto byStart = [](const Activity& a, const Activity& b) {
        return a.slice.start != b.slice.start ? a.slice.start < b.slice.start
                                              : a.slice.depth < b.slice.depth;
    };
    // A track's chunks come in time order; sorted again when they are not.
    if (!std::is_sorted(all.begin(), all.end(), byStart))
        std::stable_sort(all.begin(), all.end(), byStart);
    // A slice with a deeper activity starting inside it holds them (an annotation): not one.
    // (Kept ones move down in place; the look ahead reads a slot not written yet.)
    size_t kept = 0;
    for (size_t i = 0; i < all.size(); ++i) {
        const int64_t end = all[i].slice.preciseEnd().ns;
        const bool container = i + 1 < all.size() && all[i + 1].slice.start < end &&
                               all[i + 1].slice.depth > all[i].slice.depth;
        if (!container) all[kept++] = all[i];
    }
    all.resize(kept);
}

// Kineto says "correlation", XProf's GPU planes "correlation_id".
int64_t KinetoBuilder::correlationOf(uint64_t args) const {
    if (args == 0) return -1;
    if (const auto id = args_.integer(args, "correlation")) return *id;
    return args_.integer(args, "correlation_id").value_or(-1);
}

// Launch -> activity: the flow from the call's end to the activity's start, else the
// correlation id both carry (scoped by host in a run).
void KinetoBuilder::bindLaunches(std::vector<std::vector<Activity>>& lanes) {
    // (to track, to ts, call) of every flow leaving a call, sorted for the lanes' lookups.
    // Streamed a chunk at a time: the store's cache of every flow (56 bytes each, 3.3 M at 10^7
    // slices) would stay with the store through the simulation.
    std::vector<std::tuple<int64_t, int64_t, uint32_t>> flowTo;
    if (!window_)
        store_.forEachFlow([&](const trace::FlowRow& f) {
            const auto from = callsByEnd_.find(f.fromTrack);
            if (from == callsByEnd_.end()) return;
            const auto& ends = from->second;
            const auto call = std::lower_bound(ends.begin(), ends.end(),
                                               std::pair<int64_t, uint32_t>(f.fromTs, 0));
            if (call != ends.end() && call->first == f.fromTs)
                flowTo.emplace_back(f.toTrack, f.toTs, call->second);
        });
    std::sort(flowTo.begin(), flowTo.end());
    std::unordered_map<int64_t, std::vector<Activity*>> byCorrelation;
    for (size_t l = 0; l < lanes.size(); ++l) {
        const int64_t track = deviceTracks_[l]->id;
        for (Activity& a : lanes[l]) {
            const auto hit = std::lower_bound(flowTo.begin(), flowTo.end(),
                                              std::make_tuple(track, a.slice.start, uint32_t(0)));
            if (hit != flowTo.end() && std::get<0>(*hit) == track &&
                std::get<1>(*hit) == a.slice.start) {
                a.call = std::get<2>(*hit);
                continue;
            }
            const int64_t id = correlationOf(a.slice.args);
            if (id >= 0)
                byCorrelation[transfers::detail::TrackHosts::scoped(hostOf(track), id)].push_back(
                    &a);
        }
    }
    if (byCorrelation.empty()) return;
    // Only the calls' args are read now, for traces without flows.
    for (const trace::TrackRow* track : hostTracks_) {
        const auto calls = callsByEnd_.find(track->id);
        if (calls == callsByEnd_.end()) continue;
        for (const auto& [end, index] : calls->second) {
            const int64_t id = correlationOf(calls_[index].args);
            if (id < 0) continue;
            const auto hit =
                byCorrelation.find(transfers::detail::TrackHosts::scoped(hostOf(track->id), id));
            if (hit == byCorrelation.end()) continue;
            for (Activity* a : hit->second) a->call = index;
        }
    }
}

void KinetoBuilder::addDeviceLanes(std::vector<std::vector<Activity>>& lanes) {
    for (size_t l = 0; l < lanes.size(); ++l) {
        std::vector<Activity>& acts = lanes[l];
        // An activity no call launched that overlaps one that was is an annotation (a GPU range
        // named like its host op): left out. Unbound ones alone on the stream stay, placed by
        // the stream's order.
        // Bound activities' ends before each position, and the next bound start after it.
        std::vector<int64_t> boundEndBefore(acts.size() + 1, INT64_MIN);
        std::vector<int64_t> nextBoundStart(acts.size() + 1, INT64_MAX);
        for (size_t i = 0; i < acts.size(); ++i)
            boundEndBefore[i + 1] = std::max(
                boundEndBefore[i], acts[i].call >= 0 ? acts[i].slice.preciseEnd().ns : INT64_MIN);
        for (size_t i = acts.size(); i-- > 0;)
            nextBoundStart[i] = acts[i].call >= 0 ? acts[i].slice.start : nextBoundStart[i + 1];
        // Kept ones move down in place (a copy of the lane was a fifth of the peak).
        size_t keptCount = 0;
        for (size_t i = 0; i < acts.size(); ++i) {
            if (acts[i].call < 0) {
                const int64_t s = acts[i].slice.start, e = acts[i].slice.preciseEnd().ns;
                if (boundEndBefore[i] > s || nextBoundStart[i + 1] < e) continue;
                ++g_.unboundActivities;
            }
            acts[keptCount++] = acts[i];
        }
        acts.resize(keptCount);
        releaseMemory(boundEndBefore);
        releaseMemory(nextBoundStart);
        const std::vector<Activity>& kept = acts;
        if (kept.empty()) continue;
        const uint32_t lane = uint32_t(g_.lanes.size());
        g_.lanes.push_back(
            {deviceTracks_[l]->id, hostOf(deviceTracks_[l]->id), true, deviceTracks_[l]->name});
        const auto waits = streamWaits_.find(deviceTracks_[l]->id);
        size_t nextWait = 0;
        for (const Activity& a : kept) {
            // A stream's event waits go before the work they held back.
            for (; waits != streamWaits_.end() && nextWait < waits->second.size() &&
                   waits->second[nextWait].start <= a.slice.start;
                 ++nextWait)
                addStreamWaitNode(waits->second[nextWait], lane, a.slice.start);
            Node node;
            node.start = a.slice.start;
            node.end = a.slice.preciseEnd().ns;
            node.own = node.end - node.start;
            node.lane = lane;
            node.name = a.slice.name;
            node.kind = a.kind;
            if (a.call >= 0) {
                node.trigger = calls_[size_t(a.call)].firstNode;
                Node& call = g_.nodes[node.trigger];
                if (call.kind == NodeKind::Runtime) call.kind = NodeKind::Launch;
            }
            g_.nodes.push_back(node);
        }
        releaseMemory(acts);
    }
}

// Each activity starts when its launch allows (launch start + latency) or when the stream is
// free (previous end + gap), whichever is later; which one bound it is told by the stream's
// typical latency and gap, and that constraint takes the measured value, the other the typical
// one (never more than measured): unchanged, every start is reproduced.
void KinetoBuilder::setLatencies(uint32_t lane) {
    const uint32_t begin = g_.laneBegin[lane], end = g_.laneBegin[lane + 1];
    std::vector<int64_t> latencies, gaps;
    for (uint32_t i = begin; i < end; ++i) {
        const Node& n = g_.nodes[i];
        const int64_t prevEnd = i > begin ? g_.nodes[i - 1].end : INT64_MIN;
        if (n.trigger == kNone || isAnchored(i)) continue;
        const int64_t launched = g_.nodes[n.trigger].start;
        if (prevEnd <= launched)
            latencies.push_back(n.start - launched);
        else
            gaps.push_back(std::max<int64_t>(0, n.start - prevEnd));
    }
    const int64_t typicalLatency = medianOf(std::move(latencies), 5000);
    const int64_t typicalGap = medianOf(std::move(gaps), 1000);
    for (uint32_t i = begin; i < end; ++i) {
        Node& n = g_.nodes[i];
        const bool first = i == begin;
        const int64_t queued = first ? 0 : n.start - g_.nodes[i - 1].end;
        if (n.trigger == kNone) {
            n.gap = queued;
            continue;
        }
        if (isAnchored(i)) {
            // After its anchor as measured; its stream's order no more than a typical gap.
            n.delay = n.start - g_.nodes[n.trigger].start;
            n.gap = std::min(typicalGap, queued);
            continue;
        }
        const int64_t latency = n.start - g_.nodes[n.trigger].start;
        const bool launchBound =
            first || g_.nodes[n.trigger].start + typicalLatency >= g_.nodes[i - 1].end + typicalGap;
        n.delay = launchBound ? latency : std::min(typicalLatency, latency);
        n.gap = launchBound ? std::min(typicalGap, queued) : queued;
    }
}

// An activity nothing launched (no flow, no correlation: NCCL kernels in some traces, MTIA's
// DMAs) would otherwise keep its stream's measured gap to whatever ran before it, however long
// ago: it is anchored instead to the latest launched activity of its device on another stream
// that started before it, and follows that one's start as measured.
void KinetoBuilder::anchorUnbound() {
    std::map<int64_t, std::vector<uint32_t>> lanesOfDevice;  // device process track -> lanes
    for (uint32_t l = 0; l < g_.lanes.size(); ++l)
        if (g_.lanes[l].device)
            if (const trace::TrackRow* t = store_.track(g_.lanes[l].track))
                lanesOfDevice[t->parent].push_back(l);
    for (const auto& [device, lanes] : lanesOfDevice) {
        if (lanes.size() < 2) continue;
        for (const uint32_t lane : lanes)
            for (uint32_t i = g_.laneBegin[lane]; i < g_.laneBegin[lane + 1]; ++i) {
                Node& n = g_.nodes[i];
                if (n.trigger != kNone || n.kind == NodeKind::Wait) continue;
                uint32_t anchor = kNone;
                for (const uint32_t other : lanes) {
                    if (other == lane) continue;
                    const auto first = g_.nodes.begin() + g_.laneBegin[other];
                    auto it =
                        std::lower_bound(first, g_.nodes.begin() + g_.laneBegin[other + 1], n.start,
                                         [](const Node& x, int64_t t) { return x.start < t; });
                    for (int back = 0; it != first && back < 8; ++back) {
                        --it;
                        if (it->trigger == kNone || g_.lanes[g_.nodes[it->trigger].lane].device)
                            continue;
                        if (anchor == kNone || it->start > g_.nodes[anchor].start)
                            anchor = uint32_t(it - g_.nodes.begin());
                        break;
                    }
                }
                if (anchor == kNone) continue;
                n.trigger = anchor;
                if (i >= anchored_.size()) anchored_.resize(g_.nodes.size(), false);
                anchored_[i] = true;
            }
    }
}

}  // namespace stallscope::graph::build
