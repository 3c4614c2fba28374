#include "core/replay/report.h"

#include <QJsonArray>
#include <QString>

#include <algorithm>
#include <unordered_map>

namespace stallscope::replay {

namespace {

QJsonValue cycleOrNull(uint64_t c) {
    return c == kNoCycle ? QJsonValue() : QJsonValue(static_cast<qint64>(c));
}

QJsonValue instrOrNull(uint32_t i) {
    return i == kNone ? QJsonValue() : QJsonValue(static_cast<qint64>(i));
}

QJsonArray idArray(const std::vector<int64_t>& ids) {
    QJsonArray out;
    for (int64_t id : ids) out.append(static_cast<qint64>(id));
    return out;
}

QJsonArray doubles(const std::vector<double>& values) {
    QJsonArray out;
    for (double v : values) out.append(v);
    return out;
}

}  // namespace

QJsonObject dmaReport(const InstructionStream& trace, const Analysis& analysis) {
    const Simulation& sim = analysis.sim;
    QJsonObject root;
    root["total_cycles"] = static_cast<qint64>(sim.totalCycles);
    root["stall_cycles"] = static_cast<qint64>(sim.stallCycles);
    root["base_stall_cycles"] = static_cast<qint64>(sim.baseStallCycles);
    root["transfer_stall_cycles"] = static_cast<qint64>(sim.transferStallCycles);
    QJsonArray dmas;
    for (size_t d = 0; d < trace.dmas.size(); ++d) {
        const Dma& dma = trace.dmas[d];
        const DmaTiming& t = sim.dmas[d];
        QJsonObject o;
        o["id"] = static_cast<qint64>(dma.id);
        o["link"] = QString::fromStdString(trace.machine.linkName(dma.link));
        o["bytes"] = static_cast<qint64>(dma.bytes());
        o["issue_instr"] = static_cast<qint64>(dma.issueInstr);
        o["wait_instr"] = instrOrNull(dma.waitInstr);
        o["issue_cycle"] = static_cast<qint64>(t.issueCycle);
        o["ready_cycle"] = static_cast<qint64>(t.readyCycle);
        o["start_cycle"] = static_cast<qint64>(t.startCycle);
        o["complete_cycle"] = static_cast<qint64>(t.completeCycle);
        o["wait_cycle"] = cycleOrNull(t.waitCycle);
        o["base_stall"] = static_cast<qint64>(t.baseStall);
        o["transfer_stall"] = static_cast<qint64>(t.transferStall);
        o["slack"] = static_cast<qint64>(t.slack);
        if (d < analysis.deps.dmas.size()) {
            const DmaDependencies& dep = analysis.deps.dmas[d];
            o["backtail_instr"] = static_cast<qint64>(dep.backtailInstr);
            o["backtail_cycle"] = static_cast<qint64>(dep.backtailCycle);
            o["backtail_constraint"] = QString::fromUtf8(constraintName(dep.binding).data());
            o["backtail_constraint_instr"] = instrOrNull(dep.bindingInstr);
            o["conservative_backtail_instr"] = static_cast<qint64>(dep.conservativeInstr);
            o["conservative_producer_instr"] = instrOrNull(dep.conservativeProducer);
            QJsonArray chain;
            for (uint32_t c : analysis.deps.chain(d)) chain.append(static_cast<qint64>(c));
            o["chain"] = chain;
            QJsonArray dataDmas;
            for (uint32_t x : analysis.deps.dataDmas(d))
                dataDmas.append(static_cast<qint64>(trace.dmas[x].id));
            o["data_from_dmas"] = dataDmas;
        }
        dmas.append(o);
    }
    root["dmas"] = dmas;
    // Issued but never waited: the run ends before they are known to complete, and their data
    // is never read through a WAIT (a trace cut short, or a missing WAIT).
    QJsonArray neverWaited;
    for (const Dma& dma : trace.dmas)
        if (dma.waitInstr == kNone) neverWaited.append(static_cast<qint64>(dma.id));
    root["never_waited_dmas"] = neverWaited;
    const Divergence& dv = sim.divergence;
    if (dv.measured) {
        QJsonObject d;
        d["compared"] = static_cast<qint64>(dv.compared);
        d["differing"] = static_cast<qint64>(dv.differing);
        d["max_abs_diff"] = static_cast<qint64>(dv.maxAbsDiff);
        d["first_differing_instr"] = instrOrNull(dv.firstDiffering);
        root["divergence"] = d;
    }
    return root;
}

QJsonObject suggestReport(const InstructionStream& trace, const Analysis& analysis) {
    (void)trace;
    QJsonArray list;
    for (const Suggestion& s : analysis.suggestions) {
        QJsonObject o;
        o["kind"] = QString::fromStdString(s.kind);
        o["dmas"] = idArray(s.dmas);
        o["to_instr"] = instrOrNull(s.toInstr);
        o["saving_cycles"] = static_cast<qint64>(s.savingCycles);
        o["partial"] = s.partial;
        QJsonObject evidence;
        for (const auto& [key, value] : s.evidence)
            evidence[QString::fromStdString(key)] = static_cast<qint64>(value);
        o["evidence"] = evidence;
        o["text"] = QString::fromStdString(s.text);
        list.append(o);
    }
    QJsonObject root;
    root["suggestions"] = list;
    root["total_cycles"] = static_cast<qint64>(analysis.sim.totalCycles);
    return root;
}

QJsonObject whatifReport(const WhatifResult& result) {
    QJsonObject before, after;
    before["total_cycles"] = static_cast<qint64>(result.beforeTotal);
    before["stall_cycles"] = static_cast<qint64>(result.beforeStall);
    after["total_cycles"] = static_cast<qint64>(result.afterTotal);
    after["stall_cycles"] = static_cast<qint64>(result.afterStall);
    QJsonArray applied;
    for (const AppliedEdit& a : result.applied) {
        QJsonObject o;
        o["kind"] = QString::fromStdString(a.kind);
        o["dmas"] = idArray(a.dmas);
        o["to_instr"] = instrOrNull(a.toInstr);
        o["predicted_saving_cycles"] = static_cast<qint64>(a.predictedSaving);
        o["relocated"] = a.relocated;
        applied.append(o);
    }
    QJsonArray skipped;
    for (const std::string& s : result.skipped) skipped.append(QString::fromStdString(s));
    QJsonObject root;
    root["before"] = before;
    root["after"] = after;
    root["saving_cycles"] =
        static_cast<qint64>(result.beforeTotal) - static_cast<qint64>(result.afterTotal);
    root["applied"] = applied;
    root["skipped"] = skipped;
    return root;
}

QJsonObject dcacheReport(const DcacheAnalysis& dcache) {
    QJsonObject root;
    root["present"] = dcache.present;
    root["pages"] = static_cast<qint64>(dcache.pages);
    root["page_bytes"] = static_cast<qint64>(dcache.pageBytes);
    root["bucket_pages"] = static_cast<qint64>(dcache.bucketPages);
    root["buckets"] = static_cast<qint64>(dcache.buckets);
    root["bins"] = static_cast<qint64>(dcache.bins);
    root["bin_cycles"] = static_cast<qint64>(dcache.binCycles);
    root["total_cycles"] = static_cast<qint64>(dcache.totalCycles);
    root["median_unused_pct"] = dcache.medianUnusedPct;
    root["median_largest_free_pct"] = dcache.medianLargestFreePct;
    root["wasted_pages"] = static_cast<qint64>(dcache.wastedPages);
    root["page_writes"] = static_cast<qint64>(dcache.pageWrites);
    root["unused_pct"] = doubles(dcache.unusedPct);
    root["largest_free_pct"] = doubles(dcache.largestFreePct);
    QJsonArray heatmap;
    for (uint32_t bin = 0; bin < dcache.bins && dcache.present; ++bin) {
        QJsonArray row;
        for (uint32_t b = 0; b < dcache.buckets; ++b)
            row.append(dcache.bucketUsed[size_t(bin) * dcache.buckets + b]);
        heatmap.append(row);
    }
    root["heatmap"] = heatmap;
    return root;
}

QJsonObject utilizationReport(const InstructionStream& trace, const UnitUtilization& utilization) {
    QJsonObject root;
    root["bins"] = static_cast<qint64>(utilization.bins);
    root["bin_cycles"] = static_cast<qint64>(utilization.binCycles);
    QJsonArray units;
    for (size_t u = 0; u < utilization.units.size(); ++u) {
        QJsonObject o;
        o["name"] = QString::fromStdString(trace.strings[utilization.units[u]]);
        o["overall"] = utilization.overall[u];
        QJsonArray busy;
        for (uint32_t b = 0; b < utilization.bins; ++b) busy.append(utilization.at(u, b));
        o["busy"] = busy;
        units.append(o);
    }
    root["units"] = units;
    return root;
}

QJsonObject replayInfo(const InstructionStream& trace, const Simulation& sim, int64_t profileId,
                       int topOps) {
    std::vector<uint8_t> unitSeen(trace.strings.size(), 0);
    size_t units = 0;
    for (const Instr& in : trace.instrs)
        if (!unitSeen[in.unit]) {
            unitSeen[in.unit] = 1;
            ++units;
        }
    std::vector<uint8_t> linkSeen(trace.machine.links.size(), 0);
    size_t links = 0;
    for (const Dma& d : trace.dmas)
        if (!linkSeen[d.link]) {
            linkSeen[d.link] = 1;
            ++links;
        }
    const bool hloBand = std::any_of(trace.instrs.begin(), trace.instrs.end(),
                                     [](const Instr& in) { return in.hlo != kNone; });

    // Cycles per op: the HLO op's name when the instruction belongs to one, else its opcode.
    struct OpTotal {
        uint64_t count = 0, total = 0;
    };
    std::vector<OpTotal> byHlo(trace.hlos.size()), byOpcode(trace.strings.size());
    for (size_t i = 0; i < trace.instrs.size(); ++i) {
        const Instr& in = trace.instrs[i];
        OpTotal& t = in.hlo != kNone ? byHlo[in.hlo] : byOpcode[in.op];
        ++t.count;
        t.total += in.cost + sim.stall[i];
    }
    std::unordered_map<std::string, OpTotal> merged;
    for (size_t h = 0; h < byHlo.size(); ++h) {
        if (!byHlo[h].count) continue;
        OpTotal& t = merged[trace.hlos[h].name];
        t.count += byHlo[h].count;
        t.total += byHlo[h].total;
    }
    for (size_t s = 0; s < byOpcode.size(); ++s) {
        if (!byOpcode[s].count) continue;
        OpTotal& t = merged[trace.strings[s]];
        t.count += byOpcode[s].count;
        t.total += byOpcode[s].total;
    }
    std::vector<std::pair<std::string, OpTotal>> ops(merged.begin(), merged.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
        return a.second.total != b.second.total ? a.second.total > b.second.total
                                                : a.first < b.first;
    });
    QJsonArray top;
    for (size_t k = 0; k < ops.size() && static_cast<int>(k) < topOps; ++k) {
        QJsonObject o;
        o["name"] = QString::fromStdString(ops[k].first);
        o["count"] = static_cast<qint64>(ops[k].second.count);
        o["total"] = static_cast<qint64>(ops[k].second.total);
        top.append(o);
    }
    QJsonObject root;
    root["id"] = static_cast<qint64>(profileId);
    root["kind"] = "replay";
    root["tracks"] = static_cast<qint64>(units + links + (hloBand ? 1 : 0));
    root["slices"] = static_cast<qint64>(trace.instrs.size() + trace.dmas.size());
    root["counters"] = static_cast<qint64>(units + (trace.machine.dcache ? 2 : 0));
    root["flows"] = 0;
    root["start"] = 0;
    root["end"] = static_cast<qint64>(sim.totalCycles);
    root["time_unit"] = "cycles";
    root["instructions"] = static_cast<qint64>(trace.instrs.size());
    root["dma_count"] = static_cast<qint64>(trace.dmas.size());
    root["stall_cycles"] = static_cast<qint64>(sim.stallCycles);
    root["top_ops"] = top;
    return root;
}

QJsonObject dependencyReport(const InstructionStream& trace, const Analysis& analysis, size_t dma) {
    QJsonArray edges;
    for (const DependencyEdge& e : dmaDependencyEdges(trace, analysis.sim, dma)) {
        QJsonObject o;
        o["from"] = static_cast<qint64>(e.from);
        o["to"] = static_cast<qint64>(e.to);
        o["kind"] = QString::fromUtf8(constraintName(e.kind).data());
        o["relaxed"] = e.relaxed;
        edges.append(o);
    }
    QJsonObject root;
    root["dma"] = static_cast<qint64>(trace.dmas.at(dma).id);
    root["edges"] = edges;
    return root;
}

}  // namespace stallscope::replay
