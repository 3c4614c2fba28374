#include "core/trace/rendezvous.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace stallscope::trace {

Rendezvous matchRendezvous(const std::vector<std::vector<CommNode>>& byRank,
                           const std::vector<int64_t>& rankNumbers) {
    Rendezvous out;
    std::map<int64_t, uint32_t> positionOf;
    for (uint32_t r = 0; r < rankNumbers.size(); ++r) positionOf.emplace(rankNumbers[r], r);
    const auto rankAt = [&](int64_t number) -> int64_t {
        const auto it = positionOf.find(number);
        return it == positionOf.end() ? -1 : int64_t(it->second);
    };
    // Collectives: per process group, per rank, in file order.
    std::map<std::string, std::map<uint32_t, std::vector<uint32_t>>> collectives;
    // Point to point: per (sender, receiver, tag), the sends and the receives in file order.
    using Channel = std::tuple<uint32_t, uint32_t, int64_t>;
    std::map<Channel, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> channels;
    for (uint32_t r = 0; r < byRank.size(); ++r) {
        for (uint32_t k = 0; k < byRank[r].size(); ++k) {
            const CommNode& node = byRank[r][k];
            if (node.kind == CommNode::Kind::Collective) {
                collectives[node.group][r].push_back(k);
                continue;
            }
            const int64_t peer = node.peer < 0 ? -1 : rankAt(node.peer);
            if (peer < 0 || peer == int64_t(r)) {
                ++out.unmatched;
                continue;
            }
            if (node.kind == CommNode::Kind::Send)
                channels[{r, uint32_t(peer), node.tag}].first.push_back(k);
            else
                channels[{uint32_t(peer), r, node.tag}].second.push_back(k);
        }
    }
    for (const auto& [group, ranks] : collectives) {
        size_t most = 0, total = 0;
        for (const auto& [rank, nodes] : ranks) {
            most = std::max(most, nodes.size());
            total += nodes.size();
        }
        if (ranks.size() < 2) {
            out.unmatched += total;
            continue;
        }
        for (size_t k = 0; k < most; ++k) {
            std::vector<RendezvousMember> members;
            for (const auto& [rank, nodes] : ranks)
                if (k < nodes.size()) members.push_back({rank, nodes[k]});
            const std::string& type = byRank[members.front().rank][members.front().node].commType;
            const bool same = members.size() == ranks.size() &&
                              std::all_of(members.begin(), members.end(), [&](const auto& m) {
                                  return byRank[m.rank][m.node].commType == type;
                              });
            if (!same) {
                out.unmatched += members.size();
                continue;
            }
            out.groups.push_back(std::move(members));
            ++out.collectives;
        }
    }
    for (const auto& [channel, ends] : channels) {
        const auto& [sends, receives] = ends;
        const size_t pairs = std::min(sends.size(), receives.size());
        for (size_t k = 0; k < pairs; ++k)
            out.groups.push_back(
                {{std::get<0>(channel), sends[k]}, {std::get<1>(channel), receives[k]}});
        out.sendReceives += pairs;
        out.unmatched += sends.size() + receives.size() - 2 * pairs;
    }
    return out;
}

}  // namespace stallscope::trace
