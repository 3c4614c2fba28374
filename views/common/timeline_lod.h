#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "views/common/timeline_track.h"

namespace stallscope {

// Level-of-detail helpers shared by timeline tracks. They answer "what to draw in this window at
// this resolution" in O(pixels * log n), independent of how many items the data has.

// A row of intervals sorted by start that do not overlap (so ends are sorted too), e.g. the DMAs
// packed into one lane row or the op runs of a band. Calls
// emit(firstIndex, count, start, end) for what is visible in `window`: an interval at least
// `minSpan` wide alone (count 1), narrower ones folded with the intervals starting within
// `minSpan` of them into one counted item. Every interval overlapping the window is in exactly
// one emitted item, so counts add up to the number of intervals overlapping the window.
template <class Emit>
void foldRow(const std::vector<double>& starts, const std::vector<double>& ends, TimeRange window,
             double minSpan, Emit&& visit) {
    const size_t n = starts.size();
    size_t i = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), window.start) -
                                   ends.begin());
    // Zero-length intervals exactly at the window start still count as visible.
    while (i > 0 && ends[i - 1] == window.start && starts[i - 1] == window.start) --i;
    while (i < n && starts[i] <= window.end) {
        if (ends[i] - starts[i] >= minSpan) {
            visit(i, size_t{1}, starts[i], ends[i]);
            ++i;
            continue;
        }
        const double limit = starts[i] + minSpan;
        size_t j = static_cast<size_t>(
            std::lower_bound(starts.begin() + static_cast<std::ptrdiff_t>(i + 1), starts.end(),
                             limit) -
            starts.begin());
        // Stop the group at the window end so counts match the visible intervals.
        if (j > i + 1 && starts[j - 1] > window.end)
            j = static_cast<size_t>(
                std::upper_bound(starts.begin() + static_cast<std::ptrdiff_t>(i),
                                 starts.begin() + static_cast<std::ptrdiff_t>(j), window.end) -
                starts.begin());
        visit(i, j - i, starts[i], std::max(ends[j - 1], limit));
        i = j;
    }
}

// Number of sorted values in [from, to).
inline size_t countInRange(const std::vector<double>& sorted, double from, double to) {
    return static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), to) -
                               std::lower_bound(sorted.begin(), sorted.end(), from));
}

// Cumulative busy time of a unit at a fixed bin width: busyBefore(t) in O(1), so the busy fraction
// of any pixel column costs two lookups. Finer than the bin width it interpolates linearly;
// views switch to exact per-item accumulation there.
class BusyPrefix {
  public:
    BusyPrefix() = default;
    BusyPrefix(double binWidth, size_t bins) : binWidth_(binWidth), cumulative_(bins + 1, 0) {}
    // Adds busy time [start, end) (callers merge overlaps first).
    void addBusy(double start, double end);
    // Turns the per-bin sums into the cumulative table; call once after the last addBusy().
    void finish();
    double busyBefore(double t) const;
    double busyBetween(double from, double to) const { return busyBefore(to) - busyBefore(from); }
    double binWidth() const { return binWidth_; }
    size_t bins() const { return cumulative_.empty() ? 0 : cumulative_.size() - 1; }
    size_t memoryBytes() const { return cumulative_.capacity() * sizeof(double); }

  private:
    double binWidth_ = 1;
    std::vector<double> cumulative_;  // before finish(): per-bin sums in [1..bins]
};

}  // namespace stallscope
