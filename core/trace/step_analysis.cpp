#include "core/trace/step_analysis.h"

#include "core/trace/hosts.h"
#include "core/trace/steps/internal.h"

// The parts of the analysis are in core/trace/steps/ (steps/internal.h lists them).

namespace stallscope::trace {

const std::array<const char*, kStepCategoryCount> kCategoryNames = {
    "compute", "communication", "memcpy", "memset", "host_wait", "input", "idle"};
const std::array<const char*, kHostCategoryCount> kHostCategoryNames = {
    "input", "sync", "runtime", "operator", "python", "other", "idle"};

const char* stepSourceName(StepSource source) {
    switch (source) {
        case StepSource::StepOp:
            return "step_op";
        case StepSource::ProfilerStep:
            return "profiler_step";
        case StepSource::XlaSteps:
            return "xla_steps";
        case StepSource::XlaModules:
            return "xla_modules";
        case StepSource::IterationMarker:
            return "iteration_marker";
        case StepSource::WholeTrace:
            return "whole_trace";
    }
    return "whole_trace";
}

int64_t StepAnalysis::totalDeviceTime() const {
    int64_t sum = 0;
    for (const DeviceStepBreakdown& b : breakdown) sum += b.duration();
    return sum;
}

int64_t StepAnalysis::stepTime(int step) const {
    int64_t longest = -1;
    const size_t n = devices.size();
    for (size_t d = 0; d < n; ++d) {
        const size_t at = size_t(step) * n + d;  // step-major, then device
        if (at < breakdown.size() && breakdown[at].step == step)
            longest = std::max(longest, breakdown[at].duration());
    }
    return longest >= 0 ? longest : steps[size_t(step)].duration();
}

int64_t StepAnalysis::total(StepCategory c) const {
    int64_t sum = 0;
    for (const DeviceStepBreakdown& b : breakdown) sum += b.at(c);
    return sum;
}

double StepAnalysis::sharePct(StepCategory c) const {
    const int64_t all = totalDeviceTime();
    return all > 0 ? 100.0 * double(total(c)) / double(all) : 0.0;
}

StepAnalysis analyzeSteps(const TraceStore& store, const StepOptions& options) {
    std::vector<RunHost> hosts;
    if (options.withinTrack < 0)
        for (RunHost& h : runHosts(store.metadata()))
            if (h.track >= 0) hosts.push_back(std::move(h));
    if (hosts.size() < 2) {
        steps::KernelFigures figures;
        return steps::analyzeOne(store, options, figures);
    }
    std::vector<StepAnalysis> analyses;
    std::vector<steps::KernelFigures> figures(hosts.size());
    for (size_t h = 0; h < hosts.size(); ++h) {
        StepOptions within = options;
        within.withinTrack = hosts[h].track;
        analyses.push_back(steps::analyzeOne(store, within, figures[h]));
    }
    return steps::joinHosts(std::move(analyses), hosts, figures);
}

}  // namespace stallscope::trace
