// Where the steps of a trace are (step_analysis.h lists the sources in order).

#include <algorithm>
#include <unordered_map>

#include "core/errors.h"
#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

namespace {

std::vector<Step> stepsFromSlices(std::vector<TimedSlice> marks, bool startToNextStart) {
    std::sort(marks.begin(), marks.end(),
              [](const TimedSlice& a, const TimedSlice& b) { return a.start < b.start; });
    std::vector<Step> steps;
    for (size_t i = 0; i < marks.size(); ++i) {
        Step s;
        s.index = int(i);
        s.name = marks[i].name;
        s.start = marks[i].start;
        s.end = startToNextStart && i + 1 < marks.size() ? marks[i + 1].start : marks[i].end;
        s.markerTrack = marks[i].track;
        if (s.end > s.start) steps.push_back(std::move(s));
    }
    for (size_t i = 0; i < steps.size(); ++i) steps[i].index = int(i);
    return steps;
}

// The track holding most of the slices (the others' copies are ignored).
std::vector<TimedSlice> onBusiestTrack(const std::vector<TimedSlice>& all) {
    std::unordered_map<int64_t, size_t> perTrack;
    for (const TimedSlice& s : all) ++perTrack[s.track];
    int64_t best = -1;
    size_t most = 0;
    for (const auto& [track, n] : perTrack)
        if (n > most || (n == most && track < best)) {
            best = track;
            most = n;
        }
    std::vector<TimedSlice> out;
    for (const TimedSlice& s : all)
        if (s.track == best) out.push_back(s);
    return out;
}

}  // namespace

void detectSteps(StepAnalysis& result, Gathered& g, const TraceStore& store,
                 const StepOptions& options) {
    if (!options.stepOp.empty()) {
        if (g.stepOps.empty())
            throw InputError("no slice named '" + options.stepOp + "' in this trace");
        result.source = StepSource::StepOp;
        result.stepOp = options.stepOp;
        result.steps = stepsFromSlices(onBusiestTrack(g.stepOps), true);
        return;
    }
    if (!g.profilerSteps.empty()) {
        result.source = StepSource::ProfilerStep;
        result.steps = stepsFromSlices(onBusiestTrack(g.profilerSteps), false);
        return;
    }
    if (!g.xlaSteps.empty()) {
        result.source = StepSource::XlaSteps;
        result.steps = stepsFromSlices(onBusiestTrack(g.xlaSteps), false);
        return;
    }
    if (!g.xlaModules.empty()) {
        // The module taking the most time on the first device that runs modules.
        const int device = g.xlaModules.front().first;
        std::unordered_map<std::string, int64_t> totals;
        for (const auto& [d, m] : g.xlaModules)
            if (d == device) totals[m.name] += m.end - m.start;
        std::string best;
        int64_t most = -1;
        for (const auto& [name, total] : totals)
            if (total > most || (total == most && name < best)) {
                best = name;
                most = total;
            }
        std::vector<TimedSlice> runs;
        for (const auto& [d, m] : g.xlaModules)
            if (d == device && m.name == best) runs.push_back(m);
        result.source = StepSource::XlaModules;
        result.stepOp = best;
        result.steps = stepsFromSlices(std::move(runs), true);
        return;
    }
    if (!g.iterationMarkers.empty()) {
        result.source = StepSource::IterationMarker;
        result.steps = stepsFromSlices(onBusiestTrack(g.iterationMarkers), false);
        return;
    }
    result.source = StepSource::WholeTrace;
    // One host of a run: that host's span, not the run's.
    int64_t start = store.start(), end = store.end();
    if (options.withinTrack >= 0) {
        start = INT64_MAX;
        end = INT64_MIN;
        for (const TrackRow& t : store.tracks()) {
            if (t.slices + t.instants + t.samples == 0 || !g.withinHost.count(t.id)) continue;
            start = std::min(start, t.start);
            end = std::max(end, t.end);
        }
    }
    if (end > start) {
        Step whole;
        whole.name = "whole trace";
        whole.start = start;
        whole.end = end;
        result.steps.push_back(std::move(whole));
    }
}

}  // namespace stallscope::trace::steps
