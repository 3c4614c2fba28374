// The step graph of an XProf profile: each device's XLA ops in their order (measured gaps
// between them), and each async transfer (copy, collective) the transfers analysis found as a
// node on a link lane of its device: started by the op that issued it, awaited by the op that
// waited for it (its done). Steps are the runs of the busiest module (or the Steps line).

#include <algorithm>
#include <map>

#include "core/analysis/cache.h"
#include "core/graph/build_internal.h"
#include "core/trace/steps/internal.h"
#include "core/trace/trace_store.h"
#include "core/transfers/transfers_registration.h"

namespace stallscope::graph {

namespace {

bool isCollectiveOpcode(const std::string& opcode) {
    for (const char* c : {"all-gather", "all-reduce", "reduce-scatter", "collective-permute",
                          "all-to-all", "send", "recv"})
        if (opcode.starts_with(c)) return true;
    return false;
}

class XlaBuilder {
  public:
    explicit XlaBuilder(const trace::TraceStore& store) : store_(store) {}

    Graph build() {
        std::vector<const trace::TrackRow*> opLines, moduleLines;
        for (const trace::TrackRow& t : store_.tracks()) {
            const trace::TrackRow* plane = store_.track(t.parent);
            if (!plane || !plane->name.starts_with("/device:") || t.slices == 0) continue;
            if (t.name == "XLA Ops") opLines.push_back(&t);
            if (t.name == "XLA Modules" || t.name == "Steps") moduleLines.push_back(&t);
        }
        // A GPU profile: its host threads' runtime calls and its streams, bound by correlation.
        if (opLines.empty()) return build::KinetoBuilder(store_).build();
        for (const trace::TrackRow* line : opLines) addOpLane(*line);
        addTransfers();
        g_.laneBegin.assign(g_.lanes.size() + 1, uint32_t(g_.nodes.size()));
        for (uint32_t i = uint32_t(g_.nodes.size()); i-- > 0;) g_.laneBegin[g_.nodes[i].lane] = i;
        findSteps(moduleLines);
        if (g_.steps.empty()) g_.why = "no module runs or steps on the device planes";
        return std::move(g_);
    }

  private:
    // Depth-0 ops in order; each after the previous by its measured gap.
    void addOpLane(const trace::TrackRow& line) {
        const uint32_t lane = uint32_t(g_.lanes.size());
        g_.lanes.push_back({line.id, 0, true, store_.track(line.parent)->name});
        int64_t prevEnd = INT64_MIN;
        trace::steps::forEachChunk(
            store_, line.id, [&](const std::vector<trace::SliceItem>& chunk) {
                for (const trace::SliceItem& s : chunk) {
                    if (s.kind != trace::ItemKind::Slice || s.depth != 0 || s.unended) continue;
                    Node n;
                    n.start = s.start;
                    n.end = s.preciseEnd().ns;
                    n.own = n.end - n.start;
                    n.gap = prevEnd == INT64_MIN ? 0 : n.start - prevEnd;
                    n.lane = lane;
                    n.name = s.name;
                    n.kind = NodeKind::Kernel;
                    prevEnd = std::max(prevEnd, n.end);
                    g_.nodes.push_back(n);
                }
            });
        laneOfTrack_[line.id] = lane;
    }

    // The depth-0 op of a lane running at `t` (or starting there), kNone when none.
    uint32_t opAt(uint32_t lane, int64_t t) const {
        const auto [first, last] = laneRange_.at(lane);
        auto it = std::upper_bound(g_.nodes.begin() + first, g_.nodes.begin() + last, t,
                                   [](int64_t x, const Node& n) { return x < n.start; });
        if (it == g_.nodes.begin() + first) return kNone;
        --it;
        return it->end >= t ? uint32_t(it - g_.nodes.begin()) : kNone;
    }

    void addTransfers();
    void findSteps(const std::vector<const trace::TrackRow*>& moduleLines);

    const trace::TraceStore& store_;
    Graph g_;
    std::map<int64_t, uint32_t> laneOfTrack_;
    std::map<uint32_t, std::pair<uint32_t, uint32_t>> laneRange_;
};

// Each transfer: a node on its device's link lane, triggered by the op holding its issue and
// awaited by the op holding its wait (which ends when the data is there plus its return).
void XlaBuilder::addTransfers() {
    for (uint32_t l = 0, at = 0; l < g_.lanes.size(); ++l) {
        const uint32_t begin = at;
        while (at < g_.nodes.size() && g_.nodes[at].lane == l) ++at;
        laneRange_[l] = {begin, at};
    }
    const auto stored =
        analysis::read(store_.workspace(), store_.profileId(), transfers::transfersAnalysis());
    std::map<uint32_t, uint32_t> linkLane;  // op lane -> its link lane
    std::vector<Node> links;
    std::vector<std::pair<uint32_t, uint32_t>> waiting;  // (waiting op, transfer node)
    for (const transfers::Transfer& t : stored->transfers) {
        const auto issueLane = laneOfTrack_.find(t.issueTrack);
        const auto waitLane = laneOfTrack_.find(t.waitTrack);
        if (issueLane == laneOfTrack_.end() || waitLane == laneOfTrack_.end() || !t.waited)
            continue;
        const uint32_t issuer = opAt(issueLane->second, t.issue);
        const uint32_t waiter = opAt(waitLane->second, t.wait);
        if (issuer == kNone || waiter == kNone || waiter <= issuer) continue;
        Node n;
        n.start = t.issue;
        n.end = t.complete;
        n.own = std::max<int64_t>(0, t.complete - t.issue);
        n.trigger = issuer;
        n.delay = t.issue - g_.nodes[issuer].start;
        n.name = kNone;
        n.kind = isCollectiveOpcode(t.opcode) ? NodeKind::Collective : NodeKind::Copy;
        n.lane = issueLane->second;  // placed on its link lane below
        links.push_back(n);
        waiting.emplace_back(waiter, uint32_t(links.size() - 1));
    }
    // Link lanes after the op lanes; each transfer independent (no queue between them).
    const uint32_t firstLink = uint32_t(g_.nodes.size());
    std::map<uint32_t, std::vector<uint32_t>> byLane;
    for (uint32_t i = 0; i < links.size(); ++i) byLane[links[i].lane].push_back(i);
    std::vector<uint32_t> placed(links.size());
    for (auto& [opLane, list] : byLane) {
        const uint32_t lane = uint32_t(g_.lanes.size());
        g_.lanes.push_back({-1, 0, true, g_.lanes[opLane].name + " transfers"});
        std::stable_sort(list.begin(), list.end(),
                         [&](uint32_t a, uint32_t b) { return links[a].start < links[b].start; });
        for (uint32_t k = 0; k < list.size(); ++k) {
            Node n = links[list[k]];
            n.lane = lane;
            // Overlapping transfers on one lane: the lane's order imposes nothing (gap back to
            // this one's start, however early the previous one ends).
            n.gap = k == 0 ? 0 : INT64_MIN / 4;
            placed[list[k]] = uint32_t(g_.nodes.size());
            g_.nodes.push_back(n);
        }
    }
    (void)firstLink;
    // The waiting ops: after their transfers, as measured.
    std::map<uint32_t, std::vector<uint32_t>> waitsOf;
    for (const auto& [waiter, link] : waiting) waitsOf[waiter].push_back(placed[link]);
    for (auto& [waiter, list] : waitsOf) {
        Node& op = g_.nodes[waiter];
        op.kind = NodeKind::Wait;
        op.waitsBegin = uint32_t(g_.waits.size());
        int64_t done = INT64_MIN;
        for (uint32_t w : list) {
            g_.waits.push_back(w);
            done = std::max(done, g_.nodes[w].end);
        }
        op.waitsCount = uint32_t(list.size());
        // It ended when the data arrived (plus its return) when it blocked; else on its own.
        op.returnNs = std::max<int64_t>(0, op.end - done) <= 1000 ? op.end - done : 0;
        if (done >= op.end - 1000 && done > op.start) op.own = 0;
    }
}

void XlaBuilder::findSteps(const std::vector<const trace::TrackRow*>& moduleLines) {
    // The module taking most time on the first plane with module runs (as the step analysis).
    for (const trace::TrackRow* line : moduleLines) {
        const auto opLine = std::find_if(laneOfTrack_.begin(), laneOfTrack_.end(), [&](auto& e) {
            return store_.track(e.first)->parent == line->parent;
        });
        if (opLine == laneOfTrack_.end()) continue;
        std::map<uint32_t, int64_t> total;
        std::vector<trace::SliceItem> runs;
        trace::steps::forEachChunk(
            store_, line->id, [&](const std::vector<trace::SliceItem>& chunk) {
                for (const trace::SliceItem& s : chunk)
                    if (s.kind == trace::ItemKind::Slice && s.depth == 0 && !s.unended) {
                        runs.push_back(s);
                        total[s.name] += s.dur;
                    }
            });
        if (runs.empty()) continue;
        const uint32_t module = std::max_element(total.begin(), total.end(), [](auto& a, auto& b) {
                                    return a.second < b.second;
                                })->first;
        const uint32_t lane = opLine->second;
        const auto [first, last] = laneRange_.at(lane);
        int index = 0;
        for (const trace::SliceItem& run : runs) {
            if (run.name != module) continue;
            const int64_t end = run.preciseEnd().ns;
            const auto a =
                std::lower_bound(g_.nodes.begin() + first, g_.nodes.begin() + last, run.start,
                                 [](const Node& n, int64_t t) { return n.start < t; });
            auto b = std::upper_bound(a, g_.nodes.begin() + last, end,
                                      [](int64_t t, const Node& n) { return t < n.end; });
            if (b == a) continue;
            --b;
            StepWindow w;
            w.name = store_.text(module) + " #" + std::to_string(index++);
            w.lane = lane;
            w.first = uint32_t(a - g_.nodes.begin());
            w.last = uint32_t(b - g_.nodes.begin());
            w.start = run.start;
            w.end = end;
            w.lead = a->start - run.start;
            w.tail = end - b->end;
            g_.steps.push_back(std::move(w));
        }
        return;
    }
}

}  // namespace

Graph buildXlaGraph(const trace::TraceStore& store) {
    return XlaBuilder(store).build();
}

}  // namespace stallscope::graph
