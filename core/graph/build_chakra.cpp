// Chakra execution traces as step graphs. A Chakra node runs when the last of its dependencies
// has ended (the import placed nodes without start times so; traces with start times keep
// their measured slack as a delay). Each node becomes two graph nodes on its rank's lane, whose
// nodes do not follow one another: a zero-length wait for its dependencies, then the node
// itself `delay` after that wait ends. A source at the rank's first start and a sink waiting for
// the nodes nothing depends on bound the rank's step (the whole trace). Dependencies are read
// from the nodes' args (data_deps, ctrl_deps): the stored flows bind by time and depth, which
// cannot tell apart zero-length nodes starting together. Across ranks, collectives and sends with
// their receives meet as trace::matchRendezvous pairs them (the import's schedule did too): a
// collective runs its own length after the last rank arrived, a receive after its send did.

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_map>

#include "core/graph/build_internal.h"
#include "core/trace/rendezvous.h"
#include "core/trace/steps/internal.h"

namespace stallscope::graph {

namespace {

struct ChakraNode {
    int64_t start = 0, end = 0;
    uint32_t name = 0;
    uint64_t args = 0;  // 1-based in file order: the tie-break of equal times
    uint64_t id = 0;
    NodeKind kind = NodeKind::Host;
    std::optional<trace::CommNode> comm;  // a collective, send or receive: meets other ranks
    size_t firstDep = 0, deps = 0;        // into the rank's dependency ids
};

// What a communication node's args say about whom it meets (as the importer read them).
std::optional<trace::CommNode> commOf(const trace::TraceArgs& args, uint64_t id,
                                      std::string_view type) {
    trace::CommNode comm;
    if (type == "COMM_SEND_NODE")
        comm.kind = trace::CommNode::Kind::Send;
    else if (type == "COMM_RECV_NODE")
        comm.kind = trace::CommNode::Kind::Receive;
    else if (type != "COMM_COLL_NODE")
        return std::nullopt;
    const bool send = comm.kind == trace::CommNode::Kind::Send;
    comm.peer = args.integer(id, send ? "comm_dst" : "comm_src").value_or(-1);
    comm.tag = args.integer(id, "comm_tag").value_or(0);
    if (comm.kind == trace::CommNode::Kind::Collective)
        comm.commType = args.text(id, "comm_type").value_or("");
    comm.group = args.text(id, "pg_name").value_or("");
    return comm;
}

NodeKind kindOfType(std::string_view type) {
    if (type == "COMP_NODE") return NodeKind::Kernel;
    if (type.starts_with("COMM_")) return NodeKind::Collective;
    if (type.starts_with("MEM_")) return NodeKind::Copy;
    return NodeKind::Host;
}

// The ids of a JSON array of integers as the importer writes it ("[1,2,3]").
void appendIds(std::string_view array, std::vector<uint64_t>& out) {
    const char* at = array.data();
    const char* end = at + array.size();
    while (at < end) {
        if (*at < '0' || *at > '9') {
            ++at;
            continue;
        }
        uint64_t id = 0;
        at = std::from_chars(at, end, id).ptr;
        out.push_back(id);
    }
}

class ChakraBuilder {
  public:
    explicit ChakraBuilder(const trace::TraceStore& store) : store_(store), args_(store) {}

    Graph build() {
        std::vector<const trace::TrackRow*> ranks;
        for (const trace::TrackRow& t : store_.tracks())
            if (t.kind == trace::TrackKind::Thread && t.slices > 0) ranks.push_back(&t);
        std::vector<std::vector<trace::CommNode>> comms(ranks.size());
        std::vector<std::vector<uint32_t>> commWork(ranks.size());  // their work nodes
        std::vector<int64_t> rankNumbers;
        for (size_t r = 0; r < ranks.size(); ++r) {
            addRank(*ranks[r], int(r), comms[r], commWork[r]);
            int64_t number = int64_t(r);
            const std::string& tid = ranks[r]->tid;
            std::from_chars(tid.data(), tid.data() + tid.size(), number);
            rankNumbers.push_back(number);
        }
        if (!anyDependencyArgs_ && store_.metadata().value("dependencies").toInteger() > 0) {
            Graph none;
            none.why =
                "this Chakra trace was imported before its nodes kept their dependencies: "
                "import it again";
            return none;
        }
        g_.hosts = std::max(1, int(ranks.size()));
        g_.laneBegin.assign(g_.lanes.size() + 1, uint32_t(g_.nodes.size()));
        for (uint32_t i = uint32_t(g_.nodes.size()); i-- > 0;) g_.laneBegin[g_.nodes[i].lane] = i;
        if (ranks.size() > 1) meet(trace::matchRendezvous(comms, rankNumbers), commWork);
        for (const auto& work : commWork)
            for (uint32_t w : work) untimedComms_ += g_.nodes[w].own == 0 ? 1 : 0;
        describe();
        if (g_.steps.empty()) g_.why = "no step to simulate: no rank holds a node";
        return std::move(g_);
    }

  private:
    std::vector<ChakraNode> readRank(const trace::TrackRow& track) {
        std::vector<ChakraNode> nodes;
        trace::steps::forEachChunk(store_, track.id, [&](const std::vector<trace::SliceItem>& c) {
            for (const trace::SliceItem& s : c) {
                if (s.kind != trace::ItemKind::Slice) continue;
                ChakraNode n;
                n.start = s.start;
                n.end = s.end();
                n.name = s.name;
                n.args = s.args;
                n.id = uint64_t(args_.integer(s.args, "id").value_or(-1));
                const std::string type = args_.text(s.args, "type").value_or("");
                n.kind = kindOfType(type);
                n.comm = commOf(args_, s.args, type);
                n.firstDep = depIds_.size();
                for (const char* key : {"data_deps", "ctrl_deps"})
                    if (const auto ids = args_.text(s.args, key)) {
                        appendIds(*ids, depIds_);
                        anyDependencyArgs_ = true;
                    }
                n.deps = depIds_.size() - n.firstDep;
                nodes.push_back(n);
            }
        });
        std::sort(nodes.begin(), nodes.end(), [](const ChakraNode& a, const ChakraNode& b) {
            return a.start != b.start ? a.start < b.start
                   : a.end != b.end   ? a.end < b.end
                                      : a.args < b.args;
        });
        return nodes;
    }

    // The rank's nodes on a lane of their own; its communication nodes (in file order) and their
    // work nodes into `comms` and `commWork`.
    void addRank(const trace::TrackRow& track, int rank, std::vector<trace::CommNode>& comms,
                 std::vector<uint32_t>& commWork) {
        depIds_.clear();
        const std::vector<ChakraNode> nodes = readRank(track);
        if (nodes.empty()) return;
        std::unordered_map<uint64_t, size_t> positionOf;  // node id -> its first node
        for (size_t k = 0; k < nodes.size(); ++k) positionOf.try_emplace(nodes[k].id, k);
        const uint32_t lane = uint32_t(g_.lanes.size());
        g_.lanes.push_back({track.id, rank, true, track.name, true});
        const int64_t origin = nodes.front().start;
        const uint32_t source =
            add({.start = origin, .end = origin, .lane = lane, .kind = NodeKind::Wait});
        const uint32_t firstWork = uint32_t(g_.nodes.size()) + 1;  // node k's work: + 2k
        std::vector<bool> depended(nodes.size(), false);
        std::vector<std::pair<uint64_t, uint32_t>> commsByFileOrder;  // (args, node k)
        for (size_t k = 0; k < nodes.size(); ++k) {
            const ChakraNode& n = nodes[k];
            Node wait{.start = origin, .end = origin, .lane = lane, .kind = NodeKind::Wait};
            wait.waitsBegin = uint32_t(g_.waits.size());
            for (size_t d = n.firstDep; d < n.firstDep + n.deps; ++d) {
                const auto it = positionOf.find(depIds_[d]);
                if (it == positionOf.end()) continue;
                const size_t from = it->second;
                if (from == k) continue;  // a node listing itself waits for nothing
                // Only what ended before the node started (in the order of the times): a
                // dependency the times contradict (a cycle the import broke, an op's own
                // child) would make the graph one the measured times cannot satisfy.
                if (from >= k || nodes[from].end > n.start) {
                    ++contradicted_;
                    continue;
                }
                g_.waits.push_back(firstWork + 2 * uint32_t(from));
                wait.end = std::max(wait.end, nodes[from].end);
                depended[from] = true;
            }
            wait.waitsCount = uint32_t(g_.waits.size()) - wait.waitsBegin;
            const uint32_t waitNode = add(wait);
            add({.start = n.start,
                 .end = n.end,
                 .own = n.end - n.start,
                 .delay = n.start - wait.end,
                 .lane = lane,
                 .name = n.name,
                 .trigger = waitNode,
                 .kind = n.kind,
                 .afterTrigger = true});
            if (n.comm) commsByFileOrder.push_back({n.args, uint32_t(k)});
        }
        Node sink{.start = origin, .end = origin, .lane = lane, .kind = NodeKind::Wait};
        sink.waitsBegin = uint32_t(g_.waits.size());
        for (size_t k = 0; k < nodes.size(); ++k)
            if (!depended[k]) {
                g_.waits.push_back(firstWork + 2 * uint32_t(k));
                sink.end = std::max(sink.end, nodes[k].end);
            }
        sink.waitsCount = uint32_t(g_.waits.size()) - sink.waitsBegin;
        const uint32_t last = add(sink);
        std::sort(commsByFileOrder.begin(), commsByFileOrder.end());
        for (const auto& [args, k] : commsByFileOrder) {
            comms.push_back(*nodes[k].comm);
            commWork.push_back(firstWork + 2 * k);
        }
        g_.steps.push_back({.name = "whole trace",
                            .host = rank,
                            .lane = lane,
                            .first = source,
                            .last = last,
                            .start = origin,
                            .end = sink.end});
    }

    // Forms the groups matchRendezvous found; one whose member ended before the others arrived
    // (the trace's times say it did not wait for them) is left unmatched.
    void meet(const trace::Rendezvous& matched,
              const std::vector<std::vector<uint32_t>>& commWork) {
        g_.unmatchedCollectives += matched.unmatched;
        for (size_t k = 0; k < matched.groups.size(); ++k) {
            std::vector<uint32_t> members;
            for (const trace::RendezvousMember& m : matched.groups[k])
                members.push_back(commWork[m.rank][m.node]);
            if (!build::formGroup(g_, members, matched.pointToPoint(k)))
                g_.unmatchedCollectives += members.size();
        }
    }

    uint32_t add(const Node& node) {
        g_.nodes.push_back(node);
        return uint32_t(g_.nodes.size() - 1);
    }

    void describe() {
        std::string note;
        if (untimedComms_ > 0)
            note = std::to_string(untimedComms_) +
                   " communication nodes have no duration in the trace: they take no time, so "
                   "no prediction includes communication";
        if (g_.unmatchedCollectives > 0)
            note += (note.empty() ? "" : "; ") + std::to_string(g_.unmatchedCollectives) +
                    " collectives, sends or receives meet no other rank: they wait for no one";
        if (contradicted_ > 0)
            note += (note.empty() ? "" : "; ") + std::to_string(contradicted_) +
                    " dependencies left out: their node had not ended when the dependent "
                    "started (cycles the import broke)";
        g_.note = note;
    }

    const trace::TraceStore& store_;
    trace::TraceArgs args_;
    Graph g_;
    std::vector<uint64_t> depIds_;  // the current rank's, flat
    bool anyDependencyArgs_ = false;
    uint64_t untimedComms_ = 0, contradicted_ = 0;
};

}  // namespace

Graph buildChakraGraph(const trace::TraceStore& store) {
    return ChakraBuilder(store).build();
}

}  // namespace stallscope::graph
