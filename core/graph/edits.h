#pragma once

// What-if edits of a step graph, applied to the lengths a simulation uses:
//   kernel speedup GLOB=F   kernels whose name matches GLOB (* and ?) run F times faster
//   comm speedup F          collectives' transfers run F times faster
//   no input wait           the input pipeline (DataLoader) takes no time
//   launch overhead N       CUDA graphs: each launch costs the host N ns, the host work
//                           between launches of a step goes (the graph replays it), and a
//                           launched activity follows the one before it on its stream by at
//                           most N ns
//   remove sync GLOB        those syncs wait for nothing and take no time
//   overlap copy GLOB       those copies no longer hold their stream (moved to a copy engine
//                           beside compute, or prefetched): they take no time on it
//   rank like median        in a run, a rank whose device compute or host work is above the
//                           median rank's runs it at the median (collectives unchanged)

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/simulate.h"

namespace stallscope::trace {
class TraceStore;
}

namespace stallscope::graph {

struct Edits {
    std::vector<std::pair<std::string, double>> kernelSpeedups;  // (glob, factor)
    double commSpeedup = 1;
    bool noInputWait = false;
    std::optional<int64_t> launchOverheadNs;
    std::vector<std::string> removeSyncs;    // globs
    std::vector<std::string> overlapCopies;  // globs
    bool rankLikeMedian = false;

    bool empty() const;
    // "kernels matching *gemm* 2x faster; no input wait" for reports.
    std::vector<std::string> describe() const;
};

// Parses "GLOB=F" (F > 0); throws InputError naming the option otherwise.
std::pair<std::string, double> parseSpeedup(const std::string& text, const char* option);

// Whether `name` matches `glob` (* any run, ? one character), case-sensitive.
bool globMatch(std::string_view glob, std::string_view name);

// The lengths of `graph` with the edits applied.
Lengths applyEdits(const Graph& graph, const trace::TraceStore& store, const Edits& edits);

}  // namespace stallscope::graph
