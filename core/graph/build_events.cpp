// Cross-stream event waits: cudaEventRecord on one stream, cudaStreamWaitEvent on another.
// Kineto records the wait as a "Stream Wait Event" activity on the waiting stream naming the
// stream waited on and the record's correlation id. The wait becomes a zero-length node of the
// waiting stream, before the work it held back, that ends when the last work launched on the
// other stream before the record ends: a faster kernel there lets the waiting stream go on
// sooner, a slower one holds it longer.

#include <algorithm>
#include <unordered_set>

#include "core/graph/build_internal.h"

namespace stallscope::graph::build {

void KinetoBuilder::addStreamWaitNode(const trace::SliceItem& wait, uint32_t lane,
                                      int64_t nextStart) {
    const bool follows = !g_.nodes.empty() && g_.nodes.back().lane == lane;
    const int64_t prevEnd = follows ? g_.nodes.back().end : wait.start;
    Node node;
    node.start = std::min(std::max(wait.start, prevEnd), nextStart);
    node.end = node.start;  // until bound (bindStreamWaits)
    node.lane = lane;
    node.name = wait.name;
    node.kind = NodeKind::Wait;
    pendingWaits_.push_back({uint32_t(g_.nodes.size()), wait.args});
    g_.nodes.push_back(node);
}

void KinetoBuilder::bindStreamWaits() {
    if (pendingWaits_.empty()) return;
    // The event records' start times by (host, correlation).
    std::unordered_set<int64_t> wanted;
    for (const PendingWait& p : pendingWaits_)
        if (const auto id = args_.integer(p.args, "wait_on_cuda_event_record_corr_id"))
            wanted.insert(
                transfers::detail::TrackHosts::scoped(g_.lanes[g_.nodes[p.node].lane].host, *id));
    std::unordered_map<int64_t, int64_t> recorded;
    for (const Call& call : calls_) {
        if (call.firstNode == kNone) continue;
        const int64_t id = correlationOf(call.args);
        if (id < 0) continue;
        const int64_t key =
            transfers::detail::TrackHosts::scoped(g_.lanes[g_.nodes[call.firstNode].lane].host, id);
        if (wanted.count(key)) recorded[key] = call.start;
    }
    for (const PendingWait& p : pendingWaits_) {
        Node& node = g_.nodes[p.node];
        const Lane& lane = g_.lanes[node.lane];
        const auto id = args_.integer(p.args, "wait_on_cuda_event_record_corr_id");
        const auto stream = args_.integer(p.args, "wait_on_stream");
        if (!id || !stream) continue;
        const auto record = recorded.find(transfers::detail::TrackHosts::scoped(lane.host, *id));
        if (record == recorded.end()) continue;
        // The stream waited on: the lane of the same device whose thread is that stream.
        const trace::TrackRow* mine = store_.track(lane.track);
        uint32_t other = kNone;
        for (uint32_t l = 0; l < g_.lanes.size(); ++l) {
            if (!g_.lanes[l].device || l == node.lane || g_.lanes[l].host != lane.host) continue;
            const trace::TrackRow* t = store_.track(g_.lanes[l].track);
            if (t && mine && t->parent == mine->parent && t->tid == std::to_string(*stream))
                other = l;
        }
        if (other == kNone) continue;
        // The last work launched on it before the record (stream order is launch order).
        const uint32_t next = p.node + 1 < g_.laneBegin[node.lane + 1] ? p.node + 1 : kNone;
        const int64_t bound = next == kNone ? INT64_MAX : g_.nodes[next].start;
        const auto first = g_.nodes.begin() + g_.laneBegin[other];
        auto it = std::upper_bound(first, g_.nodes.begin() + g_.laneBegin[other + 1], bound,
                                   [](int64_t t, const Node& n) { return t < n.start; });
        uint32_t waited = kNone;
        for (int back = 0; it != first && back < 64; ++back) {
            --it;
            if (it->trigger != kNone && g_.nodes[it->trigger].start < record->second) {
                waited = uint32_t(it - g_.nodes.begin());
                break;
            }
        }
        if (waited == kNone) continue;
        // Measured: it ended when the awaited work did (not before its own place, not after
        // the work it held back); unchanged, the simulation gives the same end.
        const int64_t awaited = g_.nodes[waited].end;
        node.end = std::max(node.start, std::min(awaited, bound));
        node.returnNs = awaited >= node.start ? node.end - awaited : 0;
        node.waitsBegin = uint32_t(g_.waits.size());
        g_.waits.push_back(waited);
        node.waitsCount = 1;
    }
}

}  // namespace stallscope::graph::build
