#include "core/compare/transfer_compare.h"

#include <QJsonArray>
#include <algorithm>
#include <map>

namespace stallscope::compare {

using transfers::Analysis;
using transfers::ModuleRun;
using transfers::Transfer;

namespace {

std::map<std::string, std::vector<uint32_t>> runsByProgram(const Analysis& a) {
    std::map<std::string, std::vector<uint32_t>> out;
    for (uint32_t i = 0; i < a.modules.size(); ++i)
        out[transfers::programOf(a.modules[i].name)].push_back(i);
    return out;
}

// (name, k) -> the run's k-th transfer of that name.
std::map<std::pair<std::string, uint32_t>, uint32_t> occurrences(const Analysis& a,
                                                                 const ModuleRun& run) {
    std::map<std::pair<std::string, uint32_t>, uint32_t> out;
    std::map<std::string, uint32_t> seen;
    for (uint32_t i : run.transfers) out[{a.transfers[i].name, seen[a.transfers[i].name]++}] = i;
    return out;
}

// Runs of a program beyond the other profile's count have no counterpart, nor their transfers.
void countLeftOver(const std::map<std::string, std::vector<uint32_t>>& mine,
                   const std::map<std::string, std::vector<uint32_t>>& theirs, const Analysis& a,
                   uint64_t& runs, uint64_t& transfers) {
    for (const auto& [program, list] : mine) {
        const auto found = theirs.find(program);
        const size_t matched =
            std::min(list.size(), found == theirs.end() ? size_t(0) : found->second.size());
        runs += list.size() - matched;
        for (size_t r = matched; r < list.size(); ++r)
            transfers += a.modules[list[r]].transfers.size();
    }
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

TransferComparison compareTransfers(const Analysis& before, const Analysis& after) {
    TransferComparison out;
    const auto runsA = runsByProgram(before), runsB = runsByProgram(after);
    for (const auto& [program, listA] : runsA) {
        const auto found = runsB.find(program);
        const size_t countB = found == runsB.end() ? 0 : found->second.size();
        for (size_t r = 0; r < std::min(listA.size(), countB); ++r) {
            out.runs.push_back({program, uint32_t(r), listA[r], found->second[r]});
            const auto inA = occurrences(before, before.modules[listA[r]]);
            const auto inB = occurrences(after, after.modules[found->second[r]]);
            for (const auto& [key, ia] : inA) {
                const auto match = inB.find(key);
                if (match == inB.end()) {
                    ++out.unmatchedTransfersA;
                    continue;
                }
                out.transfers.push_back({program, uint32_t(r), key.first, key.second, ia,
                                         match->second, listA[r], found->second[r]});
            }
            for (const auto& entry : inB) out.unmatchedTransfersB += inA.count(entry.first) ? 0 : 1;
        }
    }
    countLeftOver(runsA, runsB, before, out.unmatchedRunsA, out.unmatchedTransfersA);
    countLeftOver(runsB, runsA, after, out.unmatchedRunsB, out.unmatchedTransfersB);
    return out;
}

QJsonObject transferComparisonJson(const TransferComparison& c, const Analysis& before,
                                   const Analysis& after) {
    QJsonArray modules, dmas;
    for (const RunPair& p : c.runs) {
        const ModuleRun& ra = before.modules[p.a];
        const ModuleRun& rb = after.modules[p.b];
        modules.append(QJsonObject{{"name", qs(p.program)},
                                   {"run", qint64(p.run)},
                                   {"a_module", qint64(p.a)},
                                   {"b_module", qint64(p.b)},
                                   {"a_ns", qint64(ra.measuredNs())},
                                   {"b_ns", qint64(rb.measuredNs())},
                                   {"delta_ns", qint64(rb.measuredNs() - ra.measuredNs())},
                                   {"a_stall_ns", qint64(ra.stallNs)},
                                   {"b_stall_ns", qint64(rb.stallNs)},
                                   {"delta_stall_ns", qint64(rb.stallNs - ra.stallNs)}});
    }
    for (const TransferPair& p : c.transfers) {
        const Transfer& ta = before.transfers[p.a];
        const Transfer& tb = after.transfers[p.b];
        const int64_t startA = before.modules[p.aRun].start, startB = after.modules[p.bRun].start;
        dmas.append(QJsonObject{{"module", qs(p.program)},
                                {"run", qint64(p.run)},
                                {"name", qs(p.name)},
                                {"occurrence", qint64(p.occurrence)},
                                {"a_index", qint64(p.a)},
                                {"b_index", qint64(p.b)},
                                {"a_bytes", qint64(ta.bytes)},
                                {"b_bytes", qint64(tb.bytes)},
                                {"a_stall", qint64(ta.stall())},
                                {"b_stall", qint64(tb.stall())},
                                {"delta_stall", qint64(tb.stall() - ta.stall())},
                                {"a_base_stall", qint64(ta.baseStall)},
                                {"b_base_stall", qint64(tb.baseStall)},
                                {"a_transfer_stall", qint64(ta.transferStall)},
                                {"b_transfer_stall", qint64(tb.transferStall)},
                                {"a_issue_offset", qint64(ta.issue - startA)},
                                {"b_issue_offset", qint64(tb.issue - startB)},
                                {"a_complete_offset", qint64(ta.complete - startA)},
                                {"b_complete_offset", qint64(tb.complete - startB)}});
    }
    return QJsonObject{{"a", QJsonObject{{"total", qint64(before.totalNs)},
                                         {"stall", qint64(before.stallNs)},
                                         {"transfers", qint64(before.transfers.size())}}},
                       {"b", QJsonObject{{"total", qint64(after.totalNs)},
                                         {"stall", qint64(after.stallNs)},
                                         {"transfers", qint64(after.transfers.size())}}},
                       {"delta", QJsonObject{{"total", qint64(after.totalNs - before.totalNs)},
                                             {"stall", qint64(after.stallNs - before.stallNs)}}},
                       {"unmatched", QJsonObject{{"a_runs", qint64(c.unmatchedRunsA)},
                                                 {"b_runs", qint64(c.unmatchedRunsB)},
                                                 {"a_transfers", qint64(c.unmatchedTransfersA)},
                                                 {"b_transfers", qint64(c.unmatchedTransfersB)}}},
                       {"time_unit", "ns"},
                       {"modules", modules},
                       {"dmas", dmas}};
}

}  // namespace stallscope::compare
