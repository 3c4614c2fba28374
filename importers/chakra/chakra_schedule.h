#pragma once
// The as-soon-as-possible schedule of Chakra ranks whose nodes carry no start times.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/trace/rendezvous.h"

namespace stallscope::chakra_schedule {

// A node as the schedule and the writer need it (its id is only needed to resolve dependencies).
struct NodeRecord {
    uint32_t name;
    uint32_t dataDeps;  // how many of its dependencies are data dependencies (the first ones)
    uint64_t args;
    int64_t start;      // ns
    int64_t dur;        // ns
    uint32_t firstDep;  // into the rank's flat list of dependency ids: data then control
    uint32_t deps;
};

// A node's place in its rank, and a dependency naming no node of its rank. A rank holds fewer
// than 2^32 - 1 nodes and dependencies (the importer refuses more).
using Position = uint32_t;
constexpr Position kMissingNode = UINT32_MAX;

// One rank to place: its nodes (their starts and durations are set), the position of each
// dependency id in `nodes` (kMissingNode when missing), and of each communication node that
// matchRendezvous was given.
struct RankSchedule {
    std::vector<NodeRecord>* nodes = nullptr;
    const std::vector<Position>* depPositions = nullptr;
    const std::vector<Position>* commPositions = nullptr;
    uint64_t cycleBreaks = 0;  // set: nodes of a dependency cycle started early
};

// Places every node of every rank: a node starts when the last of its dependencies ends; a
// collective ends its duration after the last of its ranks arrived, a receive after its send
// arrived, so their durations grow by their waits. Returns the rendezvous that went before
// all their ranks arrived (the ranks reach them in orders that wait for each other).
uint64_t scheduleRanks(std::vector<RankSchedule>& ranks, const trace::Rendezvous& rendezvous);

}  // namespace stallscope::chakra_schedule
