#pragma once
// Which communication nodes of a multi-rank Chakra trace meet. The k-th collective of each rank
// in a process group (its pg_name; none: every rank with unnamed collectives) is one collective,
// and the k-th send from rank s to rank d with a tag meets the k-th receive at d from s with that
// tag (ASTRA-sim issues them in that order). A collective ends its duration after the last of its
// ranks arrived; a send goes at once (eager), and its receive ends its duration after both had
// arrived. The import's schedule and the step graph both match by this one rule, so the timeline
// and the what-if agree on who waits for whom.

#include <cstdint>
#include <string>
#include <vector>

namespace stallscope::trace {

struct CommNode {
    enum class Kind : uint8_t { Collective, Send, Receive };
    Kind kind = Kind::Collective;
    int64_t peer = -1;     // a send's comm_dst, a receive's comm_src; -1: not stated
    int64_t tag = 0;       // comm_tag
    std::string commType;  // a collective's comm_type as text ("ALL_REDUCE"); "" when not stated
    std::string group;     // pg_name; "" for none
};

// A member of a rendezvous: a rank (its position in the list given) and its communication node
// (the position in that rank's list).
struct RendezvousMember {
    uint32_t rank = 0;
    uint32_t node = 0;
};

struct Rendezvous {
    // Each of two or more members from different ranks: the collectives first, then each send
    // and its receive (members 0 and 1).
    std::vector<std::vector<RendezvousMember>> groups;
    bool pointToPoint(size_t group) const { return group >= collectives; }
    uint64_t collectives = 0, sendReceives = 0;  // groups of each kind
    // Communication nodes in no group: no peer stated, no partner, or the k-th collectives of a
    // process group differ in type or a rank has fewer.
    uint64_t unmatched = 0;
};

// byRank[r]: rank r's communication nodes in file order; rankNumbers[r]: the number its peers
// name it by.
Rendezvous matchRendezvous(const std::vector<std::vector<CommNode>>& byRank,
                           const std::vector<int64_t>& rankNumbers);

}  // namespace stallscope::trace
