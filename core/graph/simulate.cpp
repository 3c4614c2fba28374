#include "core/graph/simulate.h"

#include <algorithm>

#include "core/errors.h"

namespace stallscope::graph {

Lengths Lengths::of(const Graph& g) {
    Lengths l;
    const size_t n = g.nodes.size();
    l.own.resize(n);
    l.gap.resize(n);
    l.delay.resize(n);
    l.returnNs.resize(n);
    for (size_t i = 0; i < n; ++i) {
        l.own[i] = g.nodes[i].own;
        l.gap[i] = g.nodes[i].gap;
        l.delay[i] = g.nodes[i].delay;
        l.returnNs[i] = g.nodes[i].returnNs;
    }
    return l;
}

namespace {

uint32_t startEvent(uint32_t node) {
    return node * 2;
}
uint32_t endEvent(uint32_t node) {
    return node * 2 + 1;
}

}  // namespace

// Kahn's order over the 2N events: a start after its lane's previous end and its trigger's
// start; an end after its start, what it waits for and its collective's starts. The edges are
// listed twice (counted, then placed) into flat arrays: 10^6 nodes would otherwise be 2 x 10^6
// small vectors.
Simulator::Simulator(const Graph& graph) : g_(graph) {
    const uint32_t n = uint32_t(g_.nodes.size());
    const size_t events = size_t(n) * 2;
    auto forEachEdge = [this, n](auto&& edge) {
        for (uint32_t i = 0; i < n; ++i) {
            const Node& node = g_.nodes[i];
            if (followsLane(i)) edge(endEvent(i - 1), startEvent(i));
            if (node.trigger != kNone)
                edge(node.afterTrigger ? endEvent(node.trigger) : startEvent(node.trigger),
                     startEvent(i));
            edge(startEvent(i), endEvent(i));
            for (uint32_t k = 0; k < node.waitsCount; ++k)
                edge(endEvent(g_.waits[node.waitsBegin + k]), endEvent(i));
            if (node.group != kNone)
                for (uint32_t member : g_.groups[node.group])
                    if (member != i) edge(startEvent(member), endEvent(i));
        }
    };
    std::vector<uint32_t> indegree(events, 0), firstOut(events + 1, 0);
    forEachEdge([&](uint32_t from, uint32_t to) {
        ++firstOut[from + 1];
        ++indegree[to];
    });
    for (size_t e = 0; e < events; ++e) firstOut[e + 1] += firstOut[e];
    std::vector<uint32_t> out(firstOut.back());
    {
        std::vector<uint32_t> fill(firstOut.begin(), firstOut.end() - 1);
        forEachEdge([&](uint32_t from, uint32_t to) { out[fill[from]++] = to; });
    }
    order_.reserve(events);
    for (uint32_t e = 0; e < events; ++e)
        if (indegree[e] == 0) order_.push_back(e);
    for (size_t at = 0; at < order_.size(); ++at) {
        const uint32_t e = order_[at];
        for (uint32_t k = firstOut[e]; k < firstOut[e + 1]; ++k)
            if (--indegree[out[k]] == 0) order_.push_back(out[k]);
    }
    if (order_.size() != events)
        throw Failure(
            "step graph: its dependencies form a cycle (the trace's times contradict "
            "each other); no simulation");
}

namespace {

// A node's lengths from a Lengths (edited) or from the graph's nodes (unchanged).
struct EditedLengths {
    const Lengths& l;
    int64_t own(uint32_t i) const { return l.own[i]; }
    int64_t gap(uint32_t i) const { return l.gap[i]; }
    int64_t delay(uint32_t i) const { return l.delay[i]; }
    int64_t returnNs(uint32_t i) const { return l.returnNs[i]; }
};
struct MeasuredLengths {
    const Graph& g;
    int64_t own(uint32_t i) const { return g.nodes[i].own; }
    int64_t gap(uint32_t i) const { return g.nodes[i].gap; }
    int64_t delay(uint32_t i) const { return g.nodes[i].delay; }
    int64_t returnNs(uint32_t i) const { return g.nodes[i].returnNs; }
};

}  // namespace

std::vector<Timed> Simulator::run(const Lengths& lengths) const {
    return runWith(EditedLengths{lengths});
}

std::vector<Timed> Simulator::run() const {
    return runWith(MeasuredLengths{g_});
}

template <class LengthsOf>
std::vector<Timed> Simulator::runWith(const LengthsOf& l) const {
    std::vector<Timed> t(g_.nodes.size());
    for (const uint32_t event : order_) {
        const uint32_t i = event / 2;
        const Node& node = g_.nodes[i];
        Timed& me = t[i];
        if (event % 2 == 0) {
            // Start: a device node prefers its launch when both constraints meet (the chain the
            // critical path follows); a host node its own thread.
            me.start = node.start;
            me.startBy = Bound::Fixed;
            bool any = false;
            if (followsLane(i)) {
                me.start = t[i - 1].end + l.gap(i);
                me.startBy = Bound::Lane;
                any = true;
            }
            if (node.trigger != kNone) {
                const Timed& trigger = t[node.trigger];
                const int64_t launched =
                    (node.afterTrigger ? trigger.end : trigger.start) + l.delay(i);
                const bool device = g_.lanes[node.lane].device;
                if (!any || launched > me.start || (launched == me.start && device)) {
                    me.start = launched;
                    me.startBy = Bound::Trigger;
                }
            }
            continue;
        }
        me.end = me.start + l.own(i);
        me.endBy = Bound::Own;
        me.by = kNone;
        for (uint32_t k = 0; k < node.waitsCount; ++k) {
            const uint32_t w = g_.waits[node.waitsBegin + k];
            if (t[w].end + l.returnNs(i) > me.end) {
                me.end = t[w].end + l.returnNs(i);
                me.endBy = Bound::Waited;
                me.by = w;
            }
        }
        if (node.group != kNone)
            for (uint32_t member : g_.groups[node.group]) {
                if (member == i || t[member].start + l.own(i) <= me.end) continue;
                me.end = t[member].start + l.own(i);
                me.endBy = Bound::Partner;
                me.by = member;
            }
    }
    return t;
}

int64_t stepLength(const StepWindow& step, const std::vector<Timed>& timed) {
    return step.lead + (timed[step.last].end - timed[step.first].start) + step.tail;
}

}  // namespace stallscope::graph
