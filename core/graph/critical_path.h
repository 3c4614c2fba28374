#pragma once

// The critical path of each step: walking back from the step's end along whatever decided each
// time (simulate.h's bounds), the chain of host work, launches, kernels, copies, collective
// waits, input and syncs that ends the step. Its segments tile the step: they sum to its
// duration. In a run, a collective that waited for another rank continues on that rank, and
// its segment names the rank waited for. A registered analysis ("critical_path").

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/analysis.h"
#include "core/graph/simulate.h"
#include "core/graph/step_savings.h"

namespace stallscope::trace {
class TraceStore;
}

namespace stallscope::graph {

// Segment kinds, the keys of by_kind.
constexpr std::array<const char*, 8> kPathKinds = {"host",       "launch", "kernel", "copy",
                                                   "collective", "input",  "sync",   "idle"};

struct PathSegment {
    std::string kind;  // one of kPathKinds
    std::string name;  // the op, kernel or call; what a wait or gap was for
    int64_t start = 0, dur = 0;
    int64_t track = -1;  // the store's track (-1 for a transfer lane)
    int host = 0;
};

struct StepPath {
    std::string name;
    int host = 0;
    int64_t duration = 0;               // the measured step, = the sum of its segments
    std::vector<PathSegment> segments;  // in time order
};

struct CriticalPath {
    // 3: Chakra ranks meet across the graph; launches blocked by a full queue wait for it.
    // 4: stored in binary (critical_path_codec.cpp) instead of JSON.
    static constexpr int kVersion = 4;
    std::vector<StepPath> steps;
    std::array<int64_t, kPathKinds.size()> byKind{};
    std::string why;   // when there is no graph ("no correlation ids: ...")
    std::string note;  // what the graph leaves out (Graph::note)
    // The step recommendations re-simulated (step_savings.h).
    std::vector<StepSaving> savings;
};

// The path of every step (in a run, of the host slowest in each step) in a schedule `timed`
// of `graph`.
CriticalPath criticalPath(const Graph& graph, const trace::TraceStore& store,
                          const std::vector<Timed>& timed);
// Built, simulated unchanged and walked.
CriticalPath criticalPathOf(const trace::TraceStore& store);

// `critical-path --json` as compact JSON text, written directly (fast and small for 10^5-10^6
// segments): {"steps":[{"name","duration_ns","segments":[{"kind","name","start_ns","dur_ns",
// "track"}]}],"by_kind":{...},"savings":[{"kind","edit","measured_ns","predicted_ns",
// "saving_ns"}]} (and "why" when there is no graph); with a profile id, also "id" and "name".
std::string criticalPathJsonText(const CriticalPath& path, int64_t profileId = -1,
                                 std::string_view profileName = {});
// The stored form (critical_path_codec.cpp); decoding throws Failure when malformed.
std::string encodeCriticalPath(const CriticalPath& path);
CriticalPath decodeCriticalPath(std::string_view payload);

class CriticalPathAnalysis : public analysis::Typed<CriticalPath> {
  public:
    std::string_view name() const override { return "critical_path"; }
    int version() const override { return CriticalPath::kVersion; }
    std::string_view reads() const override;
    bool appliesTo(const trace::TraceStore& store) const override;
    analysis::RunAt runAt(const trace::TraceStore&) const override {
        return analysis::RunAt::FirstRequest;
    }
    CriticalPath compute(const trace::TraceStore& store) const override {
        return criticalPathOf(store);
    }
    std::string encodeResult(const CriticalPath& result) const override;
    CriticalPath decodeResult(std::string_view payload) const override;
};
const CriticalPathAnalysis& criticalPathAnalysis();

}  // namespace stallscope::graph
