#pragma once

// Replays a step graph (step_graph.h): every node's start and end from its lane, its trigger,
// what it waits for and its collective, in one pass over an order fixed at the start (the
// graph's shape does not change with edits, only its lengths). Unchanged, it reproduces the
// measured times; each node records which constraint decided its start and its end, which is
// what the critical path follows.

#include <cstdint>
#include <vector>

#include "core/graph/step_graph.h"

namespace stallscope::graph {

// What decided a time.
enum class Bound : uint8_t {
    Fixed,    // nothing before it: its measured time
    Lane,     // the previous node of its lane (plus gap)
    Trigger,  // its trigger's start (plus delay); its end when Node::afterTrigger
    Own,      // its start plus its own length
    Waited,   // a node it waits for (plus the return latency): `by`
    Partner,  // the last member of its collective to arrive: `by`
};

struct Timed {
    int64_t start = 0, end = 0;
    Bound startBy = Bound::Fixed, endBy = Bound::Own;
    uint32_t by = kNone;  // Waited/Partner: the node
};

// The lengths a simulation uses (edits.h changes them): per node own, gap, delay, returnNs.
struct Lengths {
    std::vector<int64_t> own, gap, delay, returnNs;
    static Lengths of(const Graph& g);
};

class Simulator {
  public:
    explicit Simulator(const Graph& graph);
    // Throws Failure when the graph has a cycle (a trace whose times contradict each other).
    std::vector<Timed> run(const Lengths& lengths) const;
    // Unchanged: the nodes' own lengths, read in place (a copy is 32 bytes a node, 450 MB at
    // 10^7 slices).
    std::vector<Timed> run() const;

  private:
    template <class LengthsOf>
    std::vector<Timed> runWith(const LengthsOf& l) const;
    bool followsLane(uint32_t node) const {
        return !g_.firstInLane(node) && !g_.lanes[g_.nodes[node].lane].unordered;
    }
    const Graph& g_;
    // Start and end events (2 per node: node * 2 + 0 start, + 1 end) in dependency order.
    std::vector<uint32_t> order_;
};

// A step's length in a schedule: its window's first start to last end, with the measured lead
// and tail around them.
int64_t stepLength(const StepWindow& step, const std::vector<Timed>& timed);

}  // namespace stallscope::graph
