#include "replay_compare.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace stallscope::replay {

namespace {

ReplaySide side(const Trace& t, const Analysis& an) {
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

std::map<std::string, uint64_t> cyclesPerOp(const Trace& t, const Simulation& sim) {
    std::map<std::string, uint64_t> out;
    for (size_t i = 0; i < t.instrs.size(); ++i) {
        const Instr& in = t.instrs[i];
        const std::string& name = in.hlo != kNone ? t.hlos[in.hlo].name : t.opName(in);
        out[name] += in.cost + sim.stall[i];
    }
    return out;
}

void fill(DmaDelta& d, const Trace& ta, const Analysis& a, const Trace& tb, const Analysis& b) {
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
    return from == 0 ? 0 : 100.0 * (to - from) / from;
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
           slackA != slackB || issueInstrA != issueInstrB;
}

double OpDelta::deltaPct() const {
    return pct(static_cast<double>(a), static_cast<double>(b));
}

ReplayComparison compareReplays(const Trace& ta, const Analysis& a, const Trace& tb,
                                const Analysis& b) {
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
    // Remaining DMAs of B by (link, bytes), in issue order (Trace::dmas is in issue order).
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
    for (DmaDelta& d : c.dmas) {
        fill(d, ta, a, tb, b);
        c.changedDmas += d.changed();
    }
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

    char line[200];
    std::snprintf(line, sizeof line,
                  "B vs A: %+.1f%% cycles, %+.1f%% stall cycles, %zu DMAs changed",
                  pct(double(c.a.totalCycles), double(c.b.totalCycles)),
                  pct(double(c.a.stallCycles), double(c.b.stallCycles)), c.changedDmas);
    c.summary = line;
    return c;
}

QJsonObject comparisonJson(const ReplayComparison& c, const Trace& ta, const Trace& tb) {
    auto sideJson = [](const ReplaySide& s) {
        return QJsonObject{{"total_cycles", static_cast<qint64>(s.totalCycles)},
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
                  {"total_pct", pct(double(c.a.totalCycles), double(c.b.totalCycles))},
                  {"stall_pct", pct(double(c.a.stallCycles), double(c.b.stallCycles))},
                  {"changed_dmas", static_cast<qint64>(c.changedDmas)}};
    QJsonArray ops;
    for (const OpDelta& op : c.ops)
        ops.append(QJsonObject{{"name", QString::fromStdString(op.name)},
                               {"a", static_cast<qint64>(op.a)},
                               {"b", static_cast<qint64>(op.b)},
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
                      {"changed", m.changed()}};
        o.insert("id_a",
                 m.a != kNone ? QJsonValue(static_cast<qint64>(ta.dmas[m.a].id)) : QJsonValue());
        o.insert("id_b",
                 m.b != kNone ? QJsonValue(static_cast<qint64>(tb.dmas[m.b].id)) : QJsonValue());
        dmas.append(o);
    }
    return QJsonObject{{"kind", "replay"},
                       {"a", sideJson(c.a)},
                       {"b", sideJson(c.b)},
                       {"delta", d},
                       {"ops", ops},
                       {"dmas", dmas},
                       {"summary", QString::fromStdString(c.summary)}};
}

}  // namespace stallscope::replay
