#include "core/graph/whatif.h"

#include <QJsonArray>
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "core/trace/trace_store.h"

namespace stallscope::graph {

namespace {

int64_t nearestRankMedian(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[(v.size() + 1) / 2 - 1];
}

// Per step window, its busiest device lane's work in `timed`: the device nodes launched from
// the window's host while the step ran (any thread of it: autograd launches the backward).
std::vector<int64_t> deviceBusy(const Graph& g, const std::vector<Timed>& timed) {
    std::map<int, std::vector<std::pair<int64_t, size_t>>> windowsByHost;  // by measured start
    for (size_t w = 0; w < g.steps.size(); ++w)
        windowsByHost[g.steps[w].host].emplace_back(g.steps[w].start, w);
    for (auto& [host, windows] : windowsByHost) std::sort(windows.begin(), windows.end());
    std::map<std::pair<size_t, uint32_t>, int64_t> busy;  // (window, lane) -> ns
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        // A Chakra rank's nodes overlap (compute beside communication): no launch floor.
        if (!g.lanes[n.lane].device || g.lanes[n.lane].unordered || n.trigger == kNone) continue;
        const Node& launch = g.nodes[n.trigger];
        const auto host = windowsByHost.find(g.lanes[launch.lane].host);
        if (host == windowsByHost.end()) continue;
        const auto& windows = host->second;
        auto it = std::upper_bound(windows.begin(), windows.end(),
                                   std::pair<int64_t, size_t>{launch.start, SIZE_MAX});
        if (it == windows.begin()) continue;
        const size_t w = std::prev(it)->second;
        if (launch.start >= g.steps[w].end) continue;
        busy[{w, n.lane}] += timed[i].end - timed[i].start;
    }
    std::vector<int64_t> out(g.steps.size(), 0);
    for (const auto& [key, ns] : busy) out[key.first] = std::max(out[key.first], ns);
    return out;
}

}  // namespace

void setMedians(WhatifResult& r) {
    std::vector<int64_t> measured, simulated, predictedLengths;
    for (const WhatifStep& s : r.steps) {
        measured.push_back(s.measured);
        simulated.push_back(s.simulated);
        predictedLengths.push_back(s.predicted);
    }
    r.measuredMedian = nearestRankMedian(measured);
    r.simulatedMedian = nearestRankMedian(simulated);
    r.predictedMedian = nearestRankMedian(predictedLengths);
    r.modelErrorPct = r.measuredMedian > 0 ? 100.0 * double(r.simulatedMedian - r.measuredMedian) /
                                                 double(r.measuredMedian)
                                           : 0.0;
}

// A trace too large for one graph, re-simulated a batch of steps at a time (forEachStepWindow):
// each step's figures from the batch holding it whole, the medians over all. An edit that frees
// the host lets it run ahead within its batch only (the device floor bounds each step anyway).
std::optional<WhatifResult> whatifByWindows(const trace::TraceStore& store, const Edits& edits,
                                            const std::string& refusal,
                                            const PredictedWindow& onWindow,
                                            const std::function<void(size_t)>& onUnbuilt) {
    WhatifResult out;
    out.applied = edits.describe();
    // Each window's steps, in the walk's order (windows finish out of order).
    std::map<size_t, WhatifResult> parts;
    std::mutex keeping;
    const StepWindows walked = forEachStepWindow(
        store,
        [&](const WindowPart& window, const Graph& g, const trace::TraceStore& reader) {
            const Simulator sim(g);
            const std::vector<Timed> unchanged = sim.run();
            const std::vector<Timed> predicted =
                edits.empty() ? unchanged : sim.run(applyEdits(g, reader, edits));
            if (onWindow) onWindow(window, g, reader, predicted);
            WhatifResult part = compareSchedules(g, unchanged, predicted, edits);
            std::erase_if(part.steps, [&](const WhatifStep& s) { return !window.holds(s.name); });
            const std::lock_guard lock(keeping);
            parts.emplace(window.index, std::move(part));
        },
        onUnbuilt);
    for (auto& [index, part] : parts) {
        if (out.note.empty()) out.note = part.note;
        out.steps.insert(out.steps.end(), part.steps.begin(), part.steps.end());
    }
    if (!walked.walkable) return std::nullopt;
    setMedians(out);
    const std::string how = "re-simulated a batch of steps at a time " + walked.describe() +
                            ": an edit's effect stays within its batch; one graph is " + refusal;
    out.note = out.note.empty() ? how : how + "; " + out.note;
    return out;
}

WhatifResult compareSchedules(const Graph& g, const std::vector<Timed>& unchanged,
                              const std::vector<Timed>& predicted, const Edits& edits) {
    WhatifResult r;
    r.why = g.why;
    r.note = g.note;
    r.applied = edits.describe();
    // A run's step is its slowest host's (steps matched by name), in first-seen order.
    // A step of the repeated loop cannot be shorter than the device work it launches: an edit
    // freeing the host (no syncs, no input wait) would otherwise leave that work to spill past
    // the step. The floor never lifts a step above its unchanged length, so no edit is exact.
    const std::vector<int64_t> busy = deviceBusy(g, predicted);
    std::map<std::string, size_t> index;
    for (size_t w = 0; w < g.steps.size(); ++w) {
        const StepWindow& s = g.steps[w];
        const auto [it, fresh] = index.try_emplace(s.name, r.steps.size());
        if (fresh) r.steps.push_back({s.name, 0, 0, 0, 0});
        WhatifStep& step = r.steps[it->second];
        const int64_t simulated = stepLength(s, unchanged);
        step.measured = std::max(step.measured, s.end - s.start);
        step.simulated = std::max(step.simulated, simulated);
        step.deviceBusy = std::max(step.deviceBusy, busy[w]);
        step.predicted = std::max(step.predicted,
                                  std::max(stepLength(s, predicted), std::min(simulated, busy[w])));
    }
    setMedians(r);
    return r;
}

WhatifResult whatif(const trace::TraceStore& store, const Edits& edits, Graph* graphOut,
                    std::vector<Timed>* predictedOut) {
    // Walked by windows only for the figures: a preview needs the whole schedule at once. One
    // graph otherwise: within an analysis's budget, or a trace that cannot be walked by windows
    // within half the machine's.
    if (!graphOut && !predictedOut)
        if (std::string refusal = graphSizeRefusal(store, GraphUse::Analysis); !refusal.empty())
            if (std::optional<WhatifResult> walked = whatifByWindows(store, edits, refusal))
                return std::move(*walked);
    Graph g = buildGraph(store, GraphUse::WholeSchedule);
    if (!g.why.empty()) {
        WhatifResult none;
        none.why = g.why;
        none.applied = edits.describe();
        return none;
    }
    const Simulator sim(g);
    const std::vector<Timed> unchanged = sim.run();
    std::vector<Timed> predicted = edits.empty() ? unchanged : sim.run(applyEdits(g, store, edits));
    WhatifResult r = compareSchedules(g, unchanged, predicted, edits);
    if (predictedOut) *predictedOut = std::move(predicted);
    if (graphOut) *graphOut = std::move(g);
    return r;
}

QJsonObject whatifJson(const WhatifResult& r) {
    QJsonArray steps, applied;
    for (const WhatifStep& s : r.steps)
        steps.append(QJsonObject{{"name", QString::fromStdString(s.name)},
                                 {"measured_ns", qint64(s.measured)},
                                 {"simulated_ns", qint64(s.simulated)},
                                 {"predicted_ns", qint64(s.predicted)},
                                 {"device_busy_ns", qint64(s.deviceBusy)}});
    for (const std::string& a : r.applied) applied.append(QString::fromStdString(a));
    QJsonObject out{{"measured_step_ns", qint64(r.measuredMedian)},
                    {"simulated_step_ns", qint64(r.simulatedMedian)},
                    {"predicted_step_ns", qint64(r.predictedMedian)},
                    {"model_error_pct", r.modelErrorPct},
                    {"steps", steps},
                    {"applied", applied}};
    if (!r.why.empty()) out.insert("why", QString::fromStdString(r.why));
    if (!r.note.empty()) out.insert("note", QString::fromStdString(r.note));
    return out;
}

std::vector<PredictedLane> predictedLanes(const Graph& g, const std::vector<Timed>& t) {
    std::vector<PredictedLane> byLane(g.lanes.size());
    for (size_t l = 0; l < g.lanes.size(); ++l) byLane[l].track = g.lanes[l].track;
    for (uint32_t i = 0; i < g.nodes.size() && i < t.size(); ++i) {
        const Node& n = g.nodes[i];
        // A lane's start, a marker: nothing to draw.
        if (t[i].end <= t[i].start || g.isDependencyWait(i)) continue;
        byLane[n.lane].items.push_back({t[i].start, t[i].end, n.start, n.end, n.name, n.kind});
    }
    const auto byStart = [](const PredictedItem& a, const PredictedItem& b) {
        return a.start < b.start;
    };
    std::vector<PredictedLane> out;
    for (size_t l = 0; l < byLane.size(); ++l) {
        PredictedLane& lane = byLane[l];
        std::stable_sort(lane.items.begin(), lane.items.end(), byStart);
        if (!g.lanes[l].unordered) {
            out.push_back(std::move(lane));
            continue;
        }
        // A Chakra rank's nodes overlap (compute beside communication): rows in which they
        // do not, each the first with room (a lane row draws its items side by side).
        const size_t first = out.size();
        for (const PredictedItem& item : lane.items) {
            size_t row = first;
            while (row < out.size() && !out[row].items.empty() &&
                   out[row].items.back().end > item.start)
                ++row;
            if (row == out.size()) out.push_back({lane.track, {}, 0});
            out[row].items.push_back(item);
        }
    }
    for (PredictedLane& lane : out)
        for (const PredictedItem& item : lane.items)
            lane.longest = std::max(lane.longest, item.end - item.start);
    return out;
}

}  // namespace stallscope::graph
