#include "core/graph/step_savings.h"

#include "core/graph/whatif.h"
#include "core/trace/step_analysis.h"

namespace stallscope::graph {

bool editForRecommendation(const std::string& kind, Edits& edits) {
    if (kind == "input_bound") {
        edits.noInputWait = true;
    } else if (kind == "sync_stall") {
        edits.removeSyncs = {"*"};
    } else if (kind == "launch_bound" || kind == "small_kernels") {
        edits.launchOverheadNs = 1000;
    } else if (kind == "exposed_communication") {
        edits.commSpeedup = 2;
    } else {
        return false;
    }
    return true;
}

std::vector<std::pair<std::string, Edits>> recommendationEdits(const trace::StepAnalysis& steps) {
    std::vector<std::pair<std::string, Edits>> out;
    for (const trace::StepRecommendation& rec : steps.recommendations) {
        Edits edits;
        if (editForRecommendation(rec.kind, edits)) out.emplace_back(rec.kind, std::move(edits));
    }
    return out;
}

StepSaving savingOf(const std::string& kind, const Edits& edits, WhatifResult stepsResimulated) {
    setMedians(stepsResimulated);
    const std::vector<std::string> described = edits.describe();
    return {kind, described.empty() ? std::string() : described.front(),
            stepsResimulated.measuredMedian, stepsResimulated.predictedMedian};
}

std::vector<StepSaving> simulateRecommendations(const Graph& g, const Simulator& sim,
                                                const trace::TraceStore& store,
                                                const std::vector<Timed>& unchanged,
                                                const trace::StepAnalysis& steps) {
    std::vector<StepSaving> out;
    if (!g.why.empty()) return out;
    for (const auto& [kind, edits] : recommendationEdits(steps))
        out.push_back(
            savingOf(kind, edits,
                     compareSchedules(g, unchanged, sim.run(applyEdits(g, store, edits)), edits)));
    return out;
}

}  // namespace stallscope::graph
