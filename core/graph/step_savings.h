#pragma once

// The step recommendations (core/trace/steps) re-simulated: each kind that an edit expresses
// becomes that edit on the step graph, and its saving is the median step measured minus the
// median step predicted (a run: each step its slowest host's). Beside the bound a
// recommendation states ("could recover at most 34 %"), this is what the graph predicts.
//   input_bound            no input wait
//   sync_stall             the host's syncs removed
//   launch_bound, small_kernels   CUDA graphs at 1 µs per launch
//   exposed_communication  collectives 2x faster (as if half of them were hidden)
// memcpy_bound and device_idle have no edit here (the transfer suggestions re-simulate copies).

#include <string>
#include <utility>
#include <vector>

#include "core/graph/edits.h"
#include "core/graph/whatif.h"

namespace stallscope::trace {
struct StepAnalysis;
}

namespace stallscope::graph {

struct StepSaving {
    std::string kind;                     // the recommendation's
    std::string edit;                     // what was simulated ("no input wait")
    int64_t measured = 0, predicted = 0;  // median step, ns
    int64_t saving() const { return measured - predicted; }
};

// The edit standing for a recommendation kind; false when none does.
bool editForRecommendation(const std::string& kind, Edits& edits);

// The recommendations of `steps` that an edit expresses, as (kind, edits), in their order.
std::vector<std::pair<std::string, Edits>> recommendationEdits(const trace::StepAnalysis& steps);
// A recommendation's saving from the steps re-simulated with its edits (medians over them).
StepSaving savingOf(const std::string& kind, const Edits& edits, WhatifResult stepsResimulated);

// Each recommendation of `steps` that an edit expresses, re-simulated on `graph` by `sim` (its
// simulator, which gave `unchanged`), in the recommendations' order. The caller's simulator is
// reused: a second one's event order and its construction were a fifth of the critical path's
// peak.
std::vector<StepSaving> simulateRecommendations(const Graph& graph, const Simulator& sim,
                                                const trace::TraceStore& store,
                                                const std::vector<Timed>& unchanged,
                                                const trace::StepAnalysis& steps);

}  // namespace stallscope::graph
