#pragma once

// The whole step of a real trace as a dependency graph (issue 30), after Daydream (USENIX ATC
// 2020): host threads in program order (ops, runtime calls, the input pipeline), launch ->
// kernel or copy by flow or correlation, stream order, host syncs waiting for the device work
// launched before them, collectives matched across the ranks of a run (the last to arrive
// decides), XLA device ops in their order with their async copies. Every latency is measured
// from the trace, so simulating the graph unchanged reproduces every measured time; an edit
// (edits.h) changes durations and the simulation (simulate.h) says what follows.
//
// Nodes are intervals of a lane (a host thread or a device stream). A node starts at the latest
// of: the end of its lane's previous node plus `gap`, and its trigger's start plus `delay` (a
// kernel after its launch call). It ends at the latest of: its start plus `own`, the end of
// each node it waits for plus `returnNs` (a sync), and the last start of its collective's
// members plus `own` (a collective ends when the last rank arrived and the transfer ran).
// A host thread's idle time that ends just after another thread of its host went idle is a
// handoff (the autograd thread woken by backward(), the main thread by its end): a Woken node
// waiting for the other thread's last work.

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace stallscope::trace {
class TraceStore;
struct StepAnalysis;
}  // namespace stallscope::trace

namespace stallscope::graph {

constexpr uint32_t kNone = UINT32_MAX;

enum class NodeKind : uint8_t {
    Host,        // host work between runtime calls (ops, Python)
    Input,       // the input pipeline (DataLoader) on a host thread
    Launch,      // a runtime call that put work on the device
    Runtime,     // another runtime call (allocation, event record, ...)
    Sync,        // a host synchronisation (stream/device/event sync, blocking copy, .item())
    Kernel,      // device compute
    Copy,        // device memory copy or memset
    Collective,  // device communication
    Wait,        // an XLA async op's done: waits for its transfer
    Woken,       // a host thread idle until another thread handed it work (autograd's)
};
const char* kindName(NodeKind kind);

struct Node {
    int64_t start = 0, end = 0;  // measured, ns
    int64_t own = 0;             // its own length (the part edits scale)
    int64_t gap = 0;             // after the previous node of its lane
    int64_t delay = 0;           // after its trigger's start
    int64_t returnNs = 0;        // after the last node it waits for ends
    uint32_t lane = 0;
    uint32_t name = kNone;                    // the trace's string id
    uint32_t trigger = kNone;                 // the node whose start lets it start (its launch)
    uint32_t waitsBegin = 0, waitsCount = 0;  // into Graph::waits
    uint32_t group = kNone;                   // its collective group (Graph::groups)
    NodeKind kind = NodeKind::Host;
    // Starts `delay` after its trigger ends rather than starts: a Chakra node after the wait
    // for its dependencies.
    bool afterTrigger = false;
};

struct Lane {
    int64_t track = -1;  // the store's track
    int host = 0;        // its host in a multi-host run (0 otherwise)
    bool device = false;
    std::string name;
    // Its nodes do not follow one another, only their triggers: a Chakra rank, whose nodes
    // run as soon as their dependencies allow.
    bool unordered = false;
};

// A step: the nodes of one lane it covers (a host thread's, cut at the step's bounds).
struct StepWindow {
    std::string name;
    int host = 0;
    uint32_t lane = 0;
    uint32_t first = 0, last = 0;  // node indices (inclusive), in the lane's order
    int64_t start = 0, end = 0;    // measured
    int64_t lead = 0, tail = 0;    // measured time before `first` / after `last` in the step
};

struct Graph {
    std::vector<Lane> lanes;
    std::vector<Node> nodes;          // each lane's nodes contiguous, in lane order
    std::vector<uint32_t> laneBegin;  // per lane: its first node (plus one past the end)
    std::vector<uint32_t> waits;
    std::vector<std::vector<uint32_t>> groups;  // collective members, one per rank
    std::vector<StepWindow> steps;
    // Why the graph could not be built ("no correlation ids: ..."); empty when it was.
    std::string why;
    // What the graph leaves out though it could be built (device streams without their host).
    std::string note;
    // What the build could not bind (activities without a launch, syncs that waited for
    // nothing known, collectives without a partner on every rank), for the report.
    uint64_t unboundActivities = 0, unmatchedCollectives = 0;
    int hosts = 1;
    uint32_t laneOf(uint32_t node) const { return nodes[node].lane; }
    bool firstInLane(uint32_t node) const { return laneBegin[nodes[node].lane] == node; }
    // A Chakra node's wait for its dependencies (or a rank's start or end): the graph's, not
    // the trace's; it spans from the rank's start, so it is neither drawn nor written.
    bool isDependencyWait(uint32_t node) const {
        return nodes[node].kind == NodeKind::Wait && lanes[nodes[node].lane].unordered;
    }
};

// What a graph is built for: an analysis, which walks a trace too large for one graph by
// windows of steps (the critical path, what-if's figures: up to 1 GB, or half the machine when
// that is less), or a whole schedule held at once (a preview's lanes, and the analyses of a
// trace that cannot be walked by windows: half the machine). STALLSCOPE_GRAPH_MEMORY_MB sets
// both.
enum class GraphUse { Analysis, WholeSchedule };
// The graph of a trace (Kineto-style Chrome threads or XLA op lines; a multi-host run's hosts
// each with their lanes). Graph::why says when it cannot be built.
Graph buildGraph(const trace::TraceStore& store, GraphUse use = GraphUse::Analysis);
// Why the trace's graph is not built for its size (it holds the whole trace: one that would not
// fit says so rather than exhaust the machine, as a window opening a 10^8-slice trace would
// deriving it); empty when it fits.
std::string graphSizeRefusal(const trace::TraceStore& store, GraphUse use = GraphUse::Analysis);
// A span of a trace's time, ns.
struct TimeWindow {
    int64_t from = 0, to = 0;
};
// The graph of the slices of a Chrome-style trace (Kineto) overlapping `window`: its steps
// inside it are as in the whole graph, those cut by its edges are not. Unlike buildGraph, no
// size refusal: a window is what a trace too large for one graph is walked by.
Graph buildGraphInWindow(const trace::TraceStore& store, TimeWindow window);
// How many slices one window's graph may hold: the graph's memory budget (1 GB or half the
// machine, STALLSCOPE_GRAPH_MEMORY_MB) shared by the `threads` windows built at once, over its
// cost a slice, at most 2 M (about 430 MB).
uint64_t windowSlices(size_t threads);
// How a trace was walked by windows.
struct StepWindows {
    bool walkable = false;  // Chrome-style threads and step markers
    size_t windows = 0, unbuilt = 0;
    uint64_t windowSlices = 0;  // at most, each (threads at once share the budget)
    std::string unbuiltWhy;     // why the first window without a graph had none
    // "(N windows of up to M slices[, K without a graph: why])"
    std::string describe() const;
};
// How many windows are built at once: two on a machine with two cores or more.
size_t windowThreads();
// A trace too large for one graph, a batch of steps at a time (Chrome-style traces with step
// markers, from their step analysis): each batch's graph holds the slices overlapping its steps
// and a tenth of a step around them, about windowSlices(threads) of them (work launched across the
// edge starts as measured). `visit` gets each graph built, the store it was read through and
// the window's place in the walk (WindowPart). Batches are built windowThreads() at a time,
// each thread reading through its own connection to the workspace file (one without a file, or
// inside a transaction, is walked on one thread): `visit` may run on two threads at once.
// Nothing is visited when the trace cannot be walked so.
struct WindowPart {
    size_t index = 0;                              // 0, 1, ... in time order
    const std::set<std::string>* names = nullptr;  // the steps it holds whole
    // The stretch of the trace it answers for: from its first step's start to the next
    // window's (the first from the trace's start, the last to its end).
    TimeWindow answersFor;
    bool holds(const std::string& step) const { return names->count(step) > 0; }
};
using WindowVisit =
    std::function<void(const WindowPart& part, const Graph& graph, const trace::TraceStore& store)>;
// `unbuilt` (when given) hears of each window without a graph, from the thread that tried;
// `steps`, the step analysis when the caller has read it already (read here otherwise).
StepWindows forEachStepWindow(const trace::TraceStore& store, const WindowVisit& visit,
                              const std::function<void(size_t index)>& unbuilt = {},
                              std::shared_ptr<const trace::StepAnalysis> steps = nullptr);
// The graph of a Chakra execution trace with durations: each rank's nodes after their
// dependencies (as their args list them), collectives matched across ranks.
Graph buildChakraGraph(const trace::TraceStore& store);
// The graph of an XProf profile: each device's XLA ops in order, their async copies and
// collectives (from the transfers analysis) as nodes that the matching done waits for.
Graph buildXlaGraph(const trace::TraceStore& store);

}  // namespace stallscope::graph
