#include "core/compare/replay_compare.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "core/compare/percent.h"
#include "core/errors.h"

namespace stallscope::replay {

namespace {

ReplaySide side(const InstructionStream& t, const Analysis& an) {
    ReplaySide s;
    s.totalCycles = an.sim.totalCycles;
    s.stallCycles = an.sim.stallCycles;
    s.baseStallCycles = an.sim.baseStallCycles;
    s.transferStallCycles = an.sim.transferStallCycles;
    for (const DmaTiming& d : an.sim.dmas) s.slackCycles += d.slack;
    s.medianUnusedPct = an.dcache.medianUnusedPct;
    s.medianLargestFreePct = an.dcache.medianLargestFreePct;
    s.instructions = t.instrs.size();
    s.dmas = t.dmas.size();
    return s;
}

std::map<std::string, uint64_t> cyclesPerOp(const InstructionStream& t, const Simulation& sim) {
    std::map<std::string, uint64_t> out;
    for (size_t i = 0; i < t.instrs.size(); ++i) {
        const Instr& in = t.instrs[i];
        const std::string& name = in.hlo != kNone ? t.hlos[in.hlo].name : t.opName(in);
        out[name] += in.cost + sim.stall[i];
    }
    return out;
}

void fill(DmaDelta& d, const InstructionStream& ta, const Analysis& a, const InstructionStream& tb,
          const Analysis& b) {
    if (d.a != kNone) {
        const DmaTiming& t = a.sim.dmas[d.a];
        d.stallA = static_cast<int64_t>(t.baseStall + t.transferStall);
        d.slackA = static_cast<int64_t>(t.slack);
        d.issueInstrA = ta.dmas[d.a].issueInstr;
        d.issueCycleA = static_cast<int64_t>(t.issueCycle);
    }
    if (d.b != kNone) {
        const DmaTiming& t = b.sim.dmas[d.b];
        d.stallB = static_cast<int64_t>(t.baseStall + t.transferStall);
        d.slackB = static_cast<int64_t>(t.slack);
        d.issueInstrB = tb.dmas[d.b].issueInstr;
        d.issueCycleB = static_cast<int64_t>(t.issueCycle);
    }
}

double pct(double from, double to) {
    return percentChange(from, to);
}

// Instruction signatures shared by both traces: (op, unit, HLO op) names interned into one
// table, so equal strings get equal ids whatever each trace's string pool looks like.
class Signatures {
  public:
    uint32_t of(const InstructionStream& t, const Instr& in) {
        std::string key = t.opName(in);
        key += '\x1f';
        key += t.strings[in.unit];
        key += '\x1f';
        if (in.hlo != kNone) key += t.hlos[in.hlo].name;
        return ids_.emplace(std::move(key), uint32_t(ids_.size())).first->second;
    }
    uint32_t size() const { return uint32_t(ids_.size()); }

  private:
    std::unordered_map<std::string, uint32_t> ids_;
};

// Prefix maximum over positions (Fenwick tree) of (score, pair index).
class PrefixMax {
  public:
    explicit PrefixMax(size_t n) : tree_(n + 1, {-1, -1}) {}
    void raise(size_t pos, std::pair<int64_t, int64_t> value) {
        for (size_t i = pos + 1; i < tree_.size(); i += i & (~i + 1))
            tree_[i] = std::max(tree_[i], value);
    }
    // Maximum over positions [0, pos).
    std::pair<int64_t, int64_t> below(size_t pos) const {
        std::pair<int64_t, int64_t> best{0, -1};
        for (size_t i = pos; i > 0; i -= i & (~i + 1)) best = std::max(best, tree_[i]);
        return best;
    }

  private:
    std::vector<std::pair<int64_t, int64_t>> tree_;
};

// Marks which of B's instructions kept their place relative to the others (see the header) and
// fills each matched DMA's issueMoved / issueShift.
void findMovedIssues(const InstructionStream& ta, const InstructionStream& tb,
                     std::vector<DmaDelta>& dmas) {
    // DMA instructions pair with their matched DMA's; unmatched DMAs pair with nothing.
    std::vector<uint32_t> pairOfA(ta.dmas.size(), kNone), pairOfB(tb.dmas.size(), kNone);
    for (size_t p = 0; p < dmas.size(); ++p)
        if (dmas[p].a != kNone && dmas[p].b != kNone) {
            pairOfA[dmas[p].a] = uint32_t(p);
            pairOfB[dmas[p].b] = uint32_t(p);
        }
    Signatures signatures;
    constexpr uint64_t kUnpaired = ~uint64_t(0);
    auto keyOf = [&](const InstructionStream& t, const Instr& in,
                     const std::vector<uint32_t>& pairOf) {
        if (in.kind == InstrKind::Plain || in.dma == kNone)
            return uint64_t(signatures.of(t, in)) << 1;
        const uint32_t p = pairOf[in.dma];
        if (p == kNone) return kUnpaired;
        // ISSUE and WAIT of pair p: distinct from every plain signature (low bit set).
        return (uint64_t(p) << 2 | (in.kind == InstrKind::DmaWait ? 2u : 0u)) | 1u;
    };
    std::unordered_map<uint64_t, std::vector<uint32_t>> positionsInB;
    for (size_t j = tb.instrs.size(); j-- > 0;) {
        const uint64_t key = keyOf(tb, tb.instrs[j], pairOfB);
        if (key != kUnpaired) positionsInB[key].push_back(uint32_t(j));
    }
    // k-th occurrence in A with k-th in B; then the heaviest increasing run of B positions.
    // Weights: every instruction counts W, an ISSUE W - 1, with W above the number of ISSUEs,
    // so the count of stable instructions decides and ties drop ISSUEs first.
    const int64_t weight = int64_t(ta.dmas.size() + tb.dmas.size()) + 2;
    std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (A index, B index), in A order
    pairs.reserve(ta.instrs.size());
    for (size_t i = 0; i < ta.instrs.size(); ++i) {
        const uint64_t key = keyOf(ta, ta.instrs[i], pairOfA);
        if (key == kUnpaired) continue;
        auto it = positionsInB.find(key);
        if (it == positionsInB.end() || it->second.empty()) continue;
        pairs.emplace_back(uint32_t(i), it->second.back());
        it->second.pop_back();
    }
    PrefixMax best(tb.instrs.size());
    std::vector<int64_t> parent(pairs.size(), -1);
    std::pair<int64_t, int64_t> top{0, -1};
    for (size_t k = 0; k < pairs.size(); ++k) {
        const auto [i, j] = pairs[k];
        const auto before = best.below(j);
        const int64_t score =
            before.first + (ta.instrs[i].kind == InstrKind::DmaIssue ? weight - 1 : weight);
        parent[k] = before.second;
        best.raise(j, {score, int64_t(k)});
        top = std::max(top, std::pair<int64_t, int64_t>{score, int64_t(k)});
    }
    // Stable instructions: B index -> A index.
    std::vector<uint32_t> stableA(tb.instrs.size(), kNone);
    for (int64_t k = top.second; k >= 0; k = parent[size_t(k)])
        stableA[pairs[size_t(k)].second] = pairs[size_t(k)].first;
    // The A index of the first stable instruction at or after each B index.
    std::vector<uint32_t> nextStable(tb.instrs.size() + 1, uint32_t(ta.instrs.size()));
    for (size_t j = tb.instrs.size(); j-- > 0;)
        nextStable[j] = stableA[j] != kNone ? stableA[j] : nextStable[j + 1];
    for (DmaDelta& d : dmas) {
        if (d.a == kNone || d.b == kNone) continue;
        const uint32_t issueB = tb.dmas[d.b].issueInstr;
        if (issueB == kNone || stableA[issueB] != kNone) continue;
        d.issueMoved = true;
        // It sits just before the next stable instruction: in A's numbering that place is
        // `next` when it moved up, `next - 1` when it moved down (its old slot closes).
        const auto from = int64_t(ta.dmas[d.a].issueInstr);
        const auto next = int64_t(nextStable[size_t(issueB) + 1]);
        d.issueShift = next <= from ? next - from : next - 1 - from;
    }
}

}  // namespace

const char* dmaMatchName(DmaMatch m) {
    switch (m) {
        case DmaMatch::ById:
            return "id";
        case DmaMatch::ByLinkBytesOrder:
            return "link-bytes-order";
        case DmaMatch::OnlyInA:
            return "only-in-a";
        case DmaMatch::OnlyInB:
            return "only-in-b";
    }
    return "?";
}

bool DmaDelta::changed() const {
    return match == DmaMatch::OnlyInA || match == DmaMatch::OnlyInB || stallA != stallB ||
           slackA != slackB || issueMoved;
}

double OpDelta::deltaPct() const {
    return pct(static_cast<double>(a), static_cast<double>(b));
}

ReplayComparison compareReplays(const InstructionStream& ta, const Analysis& a,
                                const InstructionStream& tb, const Analysis& b) {
    ReplayComparison c;
    c.a = side(ta, a);
    c.b = side(tb, b);

    // DMA matching: ids first when the two traces mostly share them (an edited trace keeps its
    // ids), then (link, bytes) pairs in issue order for the rest.
    std::unordered_map<int64_t, size_t> idsInB;
    for (size_t i = 0; i < tb.dmas.size(); ++i) idsInB.emplace(tb.dmas[i].id, i);
    size_t shared = 0;
    for (const Dma& d : ta.dmas) shared += idsInB.count(d.id);
    const bool byId = shared * 2 >= std::max<size_t>(1, std::min(ta.dmas.size(), tb.dmas.size()));
    std::vector<bool> usedB(tb.dmas.size(), false);
    std::vector<size_t> unmatchedA;
    for (size_t i = 0; i < ta.dmas.size(); ++i) {
        auto it = byId ? idsInB.find(ta.dmas[i].id) : idsInB.end();
        if (it != idsInB.end() && ta.dmas[i].link == tb.dmas[it->second].link &&
            ta.dmas[i].bytes() == tb.dmas[it->second].bytes()) {
            c.dmas.push_back({DmaMatch::ById, i, it->second});
            usedB[it->second] = true;
        } else {
            unmatchedA.push_back(i);
        }
    }
    // Remaining DMAs of B by (link, bytes), in issue order (InstructionStream::dmas is in issue
    // order).
    std::map<std::pair<uint32_t, uint64_t>, std::vector<size_t>> poolB;
    for (size_t i = tb.dmas.size(); i-- > 0;)
        if (!usedB[i]) poolB[{tb.dmas[i].link, tb.dmas[i].bytes()}].push_back(i);
    for (size_t i : unmatchedA) {
        auto& pool = poolB[{ta.dmas[i].link, ta.dmas[i].bytes()}];
        if (!pool.empty()) {
            c.dmas.push_back({DmaMatch::ByLinkBytesOrder, i, pool.back()});
            usedB[pool.back()] = true;
            pool.pop_back();
        } else {
            c.dmas.push_back({DmaMatch::OnlyInA, i, kNone});
        }
    }
    for (size_t i = 0; i < tb.dmas.size(); ++i)
        if (!usedB[i]) c.dmas.push_back({DmaMatch::OnlyInB, kNone, i});
    for (DmaDelta& d : c.dmas) fill(d, ta, a, tb, b);
    findMovedIssues(ta, tb, c.dmas);
    for (const DmaDelta& d : c.dmas) c.changedDmas += d.changed();
    std::sort(c.dmas.begin(), c.dmas.end(), [](const DmaDelta& x, const DmaDelta& y) {
        const int64_t kx = x.issueInstrA >= 0 ? x.issueInstrA : x.issueInstrB;
        const int64_t ky = y.issueInstrA >= 0 ? y.issueInstrA : y.issueInstrB;
        return kx < ky;
    });

    const auto opsA = cyclesPerOp(ta, a.sim);
    const auto opsB = cyclesPerOp(tb, b.sim);
    std::map<std::string, OpDelta> ops;
    for (const auto& [name, cycles] : opsA) ops[name] = {name, cycles, 0};
    for (const auto& [name, cycles] : opsB) {
        auto& op = ops[name];
        op.name = name;
        op.b = cycles;
    }
    for (auto& [name, op] : ops) c.ops.push_back(op);
    std::stable_sort(c.ops.begin(), c.ops.end(), [](const OpDelta& x, const OpDelta& y) {
        return std::llabs(static_cast<long long>(x.b) - static_cast<long long>(x.a)) >
               std::llabs(static_cast<long long>(y.b) - static_cast<long long>(y.a));
    });

    c.summary =
        "B vs A: " + signedPercentText(pct(double(c.a.totalCycles), double(c.b.totalCycles))) +
        " cycles, " + signedPercentText(pct(double(c.a.stallCycles), double(c.b.stallCycles))) +
        " stall cycles, " + std::to_string(c.changedDmas) + " DMAs changed";
    return c;
}

std::optional<uint64_t> hloOpStartCycle(const InstructionStream& t, const Simulation& sim,
                                        std::string_view name) {
    // Runs of consecutive instructions of the op; the longest (in cycles) is its main block.
    std::optional<uint64_t> bestStart;
    uint64_t bestLength = 0;
    const size_t n = std::min(t.instrs.size(), sim.cycle.size());
    for (size_t i = 0; i < n;) {
        const uint32_t h = t.instrs[i].hlo;
        if (h == kNone || t.hlos[h].name != name) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j + 1 < n && t.instrs[j + 1].hlo == h) ++j;
        const uint64_t end = sim.cycle[j] + t.instrs[j].cost + sim.stall[j];
        const uint64_t length = end - sim.cycle[i];
        if (!bestStart || length > bestLength) {
            bestStart = sim.cycle[i];
            bestLength = length;
        }
        i = j + 1;
    }
    return bestStart;
}

std::vector<std::string> commonHloOps(const InstructionStream& a, const InstructionStream& b) {
    std::vector<bool> usedB(b.hlos.size(), false);
    for (const Instr& in : b.instrs)
        if (in.hlo != kNone) usedB[in.hlo] = true;
    std::unordered_map<std::string, bool> inB;
    for (size_t h = 0; h < b.hlos.size(); ++h)
        if (usedB[h]) inB[b.hlos[h].name] = true;
    std::vector<std::string> out;
    std::vector<bool> seen(a.hlos.size(), false);
    for (const Instr& in : a.instrs) {
        if (in.hlo == kNone || seen[in.hlo]) continue;
        seen[in.hlo] = true;
        const std::string& name = a.hlos[in.hlo].name;
        if (inB.count(name) && std::find(out.begin(), out.end(), name) == out.end())
            out.push_back(name);
    }
    return out;
}

Alignment alignAtOp(const InstructionStream& a, const Simulation& simA, const InstructionStream& b,
                    const Simulation& simB, const std::string& op) {
    const auto startA = hloOpStartCycle(a, simA, op);
    const auto startB = hloOpStartCycle(b, simB, op);
    if (!startA || !startB)
        throw InputError("--align-op: no HLO op '" + op + "' in " +
                         (!startA && !startB ? "either profile"
                          : !startA          ? "A"
                                             : "B"));
    return {op, *startA, *startB};
}

QJsonObject comparisonJson(const ReplayComparison& c, const InstructionStream& ta,
                           const InstructionStream& tb, const std::optional<Alignment>& alignment) {
    auto sideJson = [](const ReplaySide& s) {
        const double stall = std::max(1.0, double(s.stallCycles));
        return QJsonObject{
            {"total_cycles", static_cast<qint64>(s.totalCycles)},
            {"stall_pct_of_total",
             s.totalCycles ? 100.0 * double(s.stallCycles) / double(s.totalCycles) : 0.0},
            {"base_stall_pct_of_stall",
             s.stallCycles ? 100.0 * double(s.baseStallCycles) / stall : 0.0},
            {"transfer_stall_pct_of_stall",
             s.stallCycles ? 100.0 * double(s.transferStallCycles) / stall : 0.0},
            {"stall_cycles", static_cast<qint64>(s.stallCycles)},
            {"base_stall_cycles", static_cast<qint64>(s.baseStallCycles)},
            {"transfer_stall_cycles", static_cast<qint64>(s.transferStallCycles)},
            {"slack_cycles", static_cast<qint64>(s.slackCycles)},
            {"median_unused_pct", s.medianUnusedPct},
            {"median_largest_free_pct", s.medianLargestFreePct},
            {"instructions", static_cast<qint64>(s.instructions)},
            {"dmas", static_cast<qint64>(s.dmas)}};
    };
    const auto delta = [](uint64_t a, uint64_t b) {
        return static_cast<qint64>(b) - static_cast<qint64>(a);
    };
    QJsonObject d{{"total", delta(c.a.totalCycles, c.b.totalCycles)},
                  {"stall", delta(c.a.stallCycles, c.b.stallCycles)},
                  {"base_stall", delta(c.a.baseStallCycles, c.b.baseStallCycles)},
                  {"transfer_stall", delta(c.a.transferStallCycles, c.b.transferStallCycles)},
                  {"slack", delta(c.a.slackCycles, c.b.slackCycles)},
                  {"total_pct", pct(double(c.a.totalCycles), double(c.b.totalCycles))},
                  {"stall_pct", pct(double(c.a.stallCycles), double(c.b.stallCycles))},
                  {"base_stall_pct", pct(double(c.a.baseStallCycles), double(c.b.baseStallCycles))},
                  {"transfer_stall_pct",
                   pct(double(c.a.transferStallCycles), double(c.b.transferStallCycles))},
                  {"slack_pct", pct(double(c.a.slackCycles), double(c.b.slackCycles))},
                  {"changed_dmas", static_cast<qint64>(c.changedDmas)}};
    QJsonArray ops;
    for (const OpDelta& op : c.ops)
        ops.append(QJsonObject{{"name", QString::fromStdString(op.name)},
                               {"a", static_cast<qint64>(op.a)},
                               {"b", static_cast<qint64>(op.b)},
                               {"delta", static_cast<qint64>(op.b) - static_cast<qint64>(op.a)},
                               {"delta_pct", op.deltaPct()}});
    QJsonArray dmas;
    for (const DmaDelta& m : c.dmas) {
        QJsonObject o{{"match", dmaMatchName(m.match)},
                      {"stall_a", static_cast<qint64>(m.stallA)},
                      {"stall_b", static_cast<qint64>(m.stallB)},
                      {"slack_a", static_cast<qint64>(m.slackA)},
                      {"slack_b", static_cast<qint64>(m.slackB)},
                      {"issue_instr_a", static_cast<qint64>(m.issueInstrA)},
                      {"issue_instr_b", static_cast<qint64>(m.issueInstrB)},
                      {"issue_cycle_a", static_cast<qint64>(m.issueCycleA)},
                      {"issue_cycle_b", static_cast<qint64>(m.issueCycleB)},
                      {"issue_moved", m.issueMoved},
                      {"issue_shift", static_cast<qint64>(m.issueShift)},
                      {"changed", m.changed()}};
        o.insert("id_a",
                 m.a != kNone ? QJsonValue(static_cast<qint64>(ta.dmas[m.a].id)) : QJsonValue());
        o.insert("id_b",
                 m.b != kNone ? QJsonValue(static_cast<qint64>(tb.dmas[m.b].id)) : QJsonValue());
        dmas.append(o);
    }
    QJsonObject out{{"kind", "replay"},
                    {"a", sideJson(c.a)},
                    {"b", sideJson(c.b)},
                    {"delta", d},
                    {"ops", ops},
                    {"dmas", dmas},
                    {"summary", QString::fromStdString(c.summary)}};
    if (alignment)
        out.insert("alignment", QJsonObject{{"op", alignment->op.empty()
                                                       ? QJsonValue()
                                                       : QString::fromStdString(alignment->op)},
                                            {"a_cycle", static_cast<qint64>(alignment->a)},
                                            {"b_cycle", static_cast<qint64>(alignment->b)},
                                            {"offset", static_cast<qint64>(alignment->offset())}});
    return out;
}

}  // namespace stallscope::replay
