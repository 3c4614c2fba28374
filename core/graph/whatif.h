#pragma once

// What-if on a real trace: the step graph simulated unchanged (against the measured steps: the
// model's error) and with edits (the prediction), step by step; in a run, a step is its slowest
// host's. Medians are nearest-rank over the steps.

#include <QJsonObject>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/edits.h"

namespace stallscope::graph {

struct WhatifStep {
    std::string name;
    int64_t measured = 0, simulated = 0, predicted = 0;
    // Its busiest device stream's predicted work, launched in the step: the predicted step's
    // floor (a loop's step waits for its device work, if not in this step then in a later one).
    int64_t deviceBusy = 0;
};

struct WhatifResult {
    std::vector<WhatifStep> steps;
    int64_t measuredMedian = 0, simulatedMedian = 0, predictedMedian = 0;
    double modelErrorPct = 0;
    std::vector<std::string> applied;
    std::string why;   // when there is no graph
    std::string note;  // what the graph leaves out (Graph::note)
};

// Steps of `graph` measured, simulated unchanged (`unchanged`) and predicted (`predicted`).
WhatifResult compareSchedules(const Graph& graph, const std::vector<Timed>& unchanged,
                              const std::vector<Timed>& predicted, const Edits& edits);

// Fills the medians and the model error from `result.steps`.
void setMedians(WhatifResult& result);

// The whole what-if of a trace; `graph`/`predicted` receive the graph and its predicted
// schedule (for the predicted trace) when given.
WhatifResult whatif(const trace::TraceStore& store, const Edits& edits, Graph* graph = nullptr,
                    std::vector<Timed>* predicted = nullptr);

// `whatif --json` of a trace profile: {"measured_step_ns","simulated_step_ns",
// "predicted_step_ns","model_error_pct","steps":[{"name","measured_ns","simulated_ns",
// "predicted_ns","device_busy_ns"}],"applied":[...]}.
QJsonObject whatifJson(const WhatifResult& result);

// Each window's graph and predicted schedule, as a trace too large for one graph is walked
// (called on two threads at once).
using PredictedWindow =
    std::function<void(const WindowPart& window, const Graph& graph, const trace::TraceStore& store,
                       const std::vector<Timed>& predicted)>;
// The what-if of a trace too large for one graph (`refusal` says why), a batch of steps at a
// time (forEachStepWindow): each step's figures from the batch holding it whole, the medians
// over all. An edit that frees the host lets it run ahead within its batch only. `onUnbuilt`
// hears of each batch without a graph. Nothing when the trace cannot be walked so.
std::optional<WhatifResult> whatifByWindows(const trace::TraceStore& store, const Edits& edits,
                                            const std::string& refusal,
                                            const PredictedWindow& onWindow = {},
                                            const std::function<void(size_t)>& onUnbuilt = {});

// predicted_trace.cpp:
// The predicted schedule as Chrome trace JSON: a process per host, a thread per lane, every
// node an X event (µs) named as in the trace.
void writePredictedTrace(const Graph& graph, const trace::TraceStore& store,
                         const std::vector<Timed>& timed, std::ostream& out);
// The what-if with its predicted trace written to `out` (nothing when Graph::why): from one
// graph when whatif() builds one, else from the same batches of steps, each batch's
// schedule after the one before (shifted by what the steps before it gained or lost), a thread
// per track; what lies outside every batch (before the first step's tenth, after the last's,
// in a pause between batches longer than the batch before it) is left out.
WhatifResult whatifWithTrace(const trace::TraceStore& store, const Edits& edits, std::ostream& out);

// One node of a predicted schedule as the timeline draws it under its track.
struct PredictedItem {
    int64_t start = 0, end = 0;                  // predicted, store ns
    int64_t measuredStart = 0, measuredEnd = 0;  // as the trace has it
    uint32_t name = kNone;                       // the trace's string id
    NodeKind kind = NodeKind::Host;
};
// A lane of the graph (a host thread or a device stream) re-simulated: its nodes that take
// time, by predicted start. A Chakra rank's nodes overlap: its lane comes as several, rows in
// which they do not (consecutive, on the same track).
struct PredictedLane {
    int64_t track = -1;  // the store's track
    std::vector<PredictedItem> items;
    int64_t longest = 0;  // the longest item (window lookups)
};
std::vector<PredictedLane> predictedLanes(const Graph& graph, const std::vector<Timed>& predicted);

}  // namespace stallscope::graph
