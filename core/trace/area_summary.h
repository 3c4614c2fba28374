#pragma once

// What an area of a trace holds (Perfetto's area selection, Nsight's range summary): the slices
// of some tracks over a time range, aggregated by name. A slice counts when it overlaps the range;
// its whole duration goes to Total, the part inside the range to In range, and that part minus
// its direct children's parts inside the range to Self, so Self sums to the busy time of the
// area exactly. Instants are left out; slices that never ended count with their drawn extent.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/trace_store.h"

namespace stallscope::trace {

struct AreaOp {
    std::string name;
    uint64_t count = 0;
    double total = 0;    // ns, whole slices
    double inRange = 0;  // ns, clipped to the range
    double self = 0;     // ns, clipped, minus direct children clipped
    double mean() const { return count ? total / double(count) : 0.0; }
};

struct AreaSummary {
    std::vector<AreaOp> ops;  // by self time, descending (then name)
    uint64_t slices = 0;
    size_t tracks = 0;  // tracks with at least one slice in the range
    double busy = 0;    // ns: sum of self, the time some slice covers, per track
};

// Reads level 0 of each track over [from, to] (store ns), in windows of about `windowSlices`
// slices (by the track's average density), so memory stays bounded for a whole process.
// `cancelled`, when given, is checked between windows.
AreaSummary summarizeArea(const TraceStore& store, const std::vector<int64_t>& tracks, int64_t from,
                          int64_t to, const std::atomic<bool>* cancelled = nullptr,
                          uint64_t windowSlices = 200000);

}  // namespace stallscope::trace
