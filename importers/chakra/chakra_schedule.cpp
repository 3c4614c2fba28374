#include "importers/chakra/chakra_schedule.h"

#include <algorithm>

namespace stallscope::chakra_schedule {

namespace {

// Dependents of each node as one flat list (offsets per node), in node order, and how many
// dependencies each node waits for.
struct Dependents {
    std::vector<int> pending;
    std::vector<Position> begin;  // node i's dependents: list[begin[i]] to list[begin[i + 1]]
    std::vector<Position> list;
};

Dependents dependentsOf(const std::vector<NodeRecord>& nodes,
                        const std::vector<Position>& depPositions) {
    Dependents out;
    out.pending.assign(nodes.size(), 0);
    out.begin.assign(nodes.size() + 1, 0);
    for (size_t i = 0; i < nodes.size(); ++i) {
        for (uint32_t k = 0; k < nodes[i].deps; ++k) {
            const size_t d = depPositions[nodes[i].firstDep + k];
            // A node listing itself (383 do in a public PyTorch ET) waits for nothing.
            if (d == kMissingNode || d == i) continue;
            ++out.pending[i];
            ++out.begin[d + 1];
        }
    }
    for (size_t i = 0; i < nodes.size(); ++i) out.begin[i + 1] += out.begin[i];
    out.list.resize(out.begin.back());
    std::vector<Position> fill(out.begin.begin(), out.begin.end() - 1);
    for (size_t i = 0; i < nodes.size(); ++i)
        for (uint32_t k = 0; k < nodes[i].deps; ++k) {
            const size_t d = depPositions[nodes[i].firstDep + k];
            if (d != kMissingNode && d != i) out.list[fill[d]++] = Position(i);
        }
    return out;
}

// ASAP, every rank at once: a node starts when the last of its dependencies ends (missing
// dependencies are ignored). A collective ends its duration after the last of its ranks arrived,
// a receive after its send arrived (trace::matchRendezvous): its slice holds its wait. A cycle
// (real traces have them: an op and its kernel depending on each other) would leave its nodes and
// all that follow them unplaced: when nothing is ready, a rank not waiting at a rendezvous starts
// its first pending node in file order after the dependencies placed so far (counted in its
// cycleBreaks); when every stuck rank waits, the first rendezvous some rank waits at goes with
// those that arrived (their ranks wait for each other in different orders), counted in
// `releasedEarly`.
class JointSchedule {
  public:
    JointSchedule(std::vector<RankSchedule>& ranks, const trace::Rendezvous& rendezvous)
        : ranks_(ranks), rendezvous_(rendezvous) {
        const size_t n = ranks_.size();
        dependents_.resize(n);
        groupOf_.resize(n);
        placed_.resize(n);
        atRendezvous_.resize(n);
        firstPending_.assign(n, 0);
        waiting_.assign(n, 0);
        for (size_t r = 0; r < n; ++r) {
            std::vector<NodeRecord>& nodes = *ranks_[r].nodes;
            for (NodeRecord& node : nodes) node.start = 0;
            dependents_[r] = dependentsOf(nodes, *ranks_[r].depPositions);
            groupOf_[r].assign(nodes.size(), kNoGroup);
            placed_[r].assign(nodes.size(), false);
            atRendezvous_[r].assign(nodes.size(), false);
            for (size_t i = 0; i < nodes.size(); ++i)
                if (dependents_[r].pending[i] == 0) ready_.push_back({uint32_t(r), i});
        }
        const size_t groups = rendezvous_.groups.size();
        for (uint32_t g = 0; g < groups; ++g)
            for (const trace::RendezvousMember& m : rendezvous_.groups[g])
                groupOf_[m.rank][(*ranks_[m.rank].commPositions)[m.node]] = g;
        arrived_.assign(groups, 0);
        lastArrival_.assign(groups, 0);
        waitingIn_.assign(groups, 0);
        released_.assign(groups, false);
    }

    // Places every node; returns the rendezvous released before all their ranks arrived.
    uint64_t run() {
        uint64_t releasedEarly = 0;
        for (;;) {
            if (ready_.empty() && !breakCycle()) {
                if (!releaseFirstWaiting()) break;
                ++releasedEarly;
                continue;
            }
            const auto [r, i] = ready_.back();
            ready_.pop_back();
            arrive(r, i);
        }
        return releasedEarly;
    }

  private:
    static constexpr uint32_t kNoGroup = UINT32_MAX;
    struct At {
        uint32_t rank;
        size_t node;
    };

    NodeRecord& node(uint32_t r, size_t i) { return (*ranks_[r].nodes)[i]; }

    void arrive(uint32_t r, size_t i) {
        const uint32_t g = groupOf_[r][i];
        if (g == kNoGroup || released_[g]) {
            finish(r, i, node(r, i).start + node(r, i).dur);
            return;
        }
        if (arrived_[g]++ == 0) waitingGroups_.push_back(g);
        lastArrival_[g] = std::max(lastArrival_[g], node(r, i).start);
        const trace::RendezvousMember& send = rendezvous_.groups[g].front();
        if (rendezvous_.pointToPoint(g) && send.rank == r &&
            (*ranks_[r].commPositions)[send.node] == i) {
            // A send goes at once; its receive, waiting or to come, ends after it arrived.
            finish(r, i, node(r, i).start + node(r, i).dur);
        } else {
            atRendezvous_[r][i] = true;
            ++waiting_[r];
            ++waitingIn_[g];
        }
        if (arrived_[g] == rendezvous_.groups[g].size()) release(g);
    }

    // The group's arrived members end their durations after the last of them arrived.
    void release(uint32_t g) {
        released_[g] = true;
        for (const trace::RendezvousMember& m : rendezvous_.groups[g]) {
            const size_t i = (*ranks_[m.rank].commPositions)[m.node];
            if (!atRendezvous_[m.rank][i]) continue;  // not arrived: goes alone when it does
            atRendezvous_[m.rank][i] = false;
            --waiting_[m.rank];
            --waitingIn_[g];
            finish(m.rank, i, lastArrival_[g] + node(m.rank, i).dur);
        }
    }

    void finish(uint32_t r, size_t i, int64_t end) {
        placed_[r][i] = true;
        node(r, i).dur = end - node(r, i).start;
        Dependents& d = dependents_[r];
        for (size_t k = d.begin[i]; k < d.begin[i + 1]; ++k) {
            const size_t j = d.list[k];
            if (placed_[r][j]) continue;  // on a cycle, placed already
            node(r, j).start = std::max(node(r, j).start, end);
            if (d.pending[j] > 0 && --d.pending[j] == 0) ready_.push_back({r, j});
        }
    }

    bool breakCycle() {
        for (uint32_t r = 0; r < ranks_.size(); ++r) {
            if (waiting_[r] > 0) continue;
            std::vector<int>& pending = dependents_[r].pending;
            size_t& first = firstPending_[r];
            while (first < pending.size() && pending[first] <= 0) ++first;
            if (first == pending.size()) continue;
            pending[first] = 0;
            ready_.push_back({r, first});
            ++ranks_[r].cycleBreaks;
            return true;
        }
        return false;
    }

    bool releaseFirstWaiting() {
        for (const uint32_t g : waitingGroups_)
            if (!released_[g] && waitingIn_[g] > 0) {
                release(g);
                return true;
            }
        return false;
    }

    std::vector<RankSchedule>& ranks_;
    const trace::Rendezvous& rendezvous_;
    std::vector<Dependents> dependents_;
    std::vector<std::vector<uint32_t>> groupOf_;
    std::vector<std::vector<bool>> placed_;
    std::vector<std::vector<bool>> atRendezvous_;  // arrived and waiting for the others
    std::vector<size_t> firstPending_;
    std::vector<uint32_t> waiting_;  // per rank, members arrived at a rendezvous not yet gone
    std::vector<size_t> arrived_;
    std::vector<uint32_t> waitingIn_;  // per group, members arrived and waiting
    std::vector<int64_t> lastArrival_;
    std::vector<bool> released_;
    std::vector<uint32_t> waitingGroups_;  // in the order their first member arrived
    std::vector<At> ready_;
};

}  // namespace

uint64_t scheduleRanks(std::vector<RankSchedule>& ranks, const trace::Rendezvous& rendezvous) {
    return JointSchedule(ranks, rendezvous).run();
}

}  // namespace stallscope::chakra_schedule
