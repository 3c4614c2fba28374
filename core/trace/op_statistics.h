#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/trace/trace_format.h"

namespace stallscope::trace {

// Per-op (per name id) statistics of a trace: count, total and self time, min, max and the
// nearest-rank p50/p95 of the slices on the timeline. Durations are whole ns: a slice's exact
// duration rounded to the nearest ns, its total summed exactly in ps and rounded at the end.
//
// Percentiles stay exact until `exactBudget` durations are held; past it every name switches to
// a log histogram with 64 buckets per octave (about 1 % error), linear below 1024 ns. Durations
// reach a histogram in batches (a per-name buffer, counted into buckets when the buffers hold
// kPendingBudget): a map update per slice was most of the statistics' cost at 10^7 slices.
class OpStatistics {
  public:
    static constexpr uint64_t kExactBudget = uint64_t(8) << 20;
    explicit OpStatistics(uint64_t exactBudget = kExactBudget) : exactBudget_(exactBudget) {}

    // Names below `names` get their place at once when any is first seen: a worker adding
    // statistics must not grow the table while the importer interns more names.
    void reserveNames(size_t names) { namesKnown_ = names; }
    uint64_t exactBudget() const { return exactBudget_; }
    // Adds another's statistics (of other tracks), as if its slices had been added here: the
    // figures do not depend on the order slices come in. Empties `other`.
    void merge(OpStatistics& other);

    // A slice that ended: `durNs` whole ns plus `durPs` (0..999).
    void addSlice(uint32_t name, int64_t durNs, uint16_t durPs) {
        Stats& s = of(name);
        const int64_t dur = roundedNs(durNs, durPs);
        ++s.count;
        ++s.timed;
        s.total += durNs;
        s.totalPs += durPs;
        s.min = std::min(s.min, dur);
        s.max = std::max(s.max, dur);
        s.durations.push_back(dur);
        if (exact_) {
            if (++exactDurations_ > exactBudget_) switchToHistograms();
        } else if (++pendingDurations_ >= kPendingBudget) {
            flushAll();
        }
    }
    // A slice that never ended: its duration is unknown, so it is counted apart, out of the
    // count, totals and percentiles.
    void addUnended(uint32_t name) {
        ++of(name).unended;
        ++unended_;
    }
    // Time a slice spent outside its children.
    void addSelf(uint32_t name, int64_t selfNs) { of(name).self += selfNs; }
    // Occurrences known only in aggregate (XProf num_occurrences): they add to the count, total
    // and self time but have no place on the timeline and no percentiles.
    void addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs, int64_t selfNs);

    // Whether p50/p95 are exact (no histogram was needed).
    bool percentilesExact() const { return exact_; }
    uint64_t unended() const { return unended_; }

    // Each op with a count, by name id, with its percentiles. Reorders the kept durations.
    template <class Visit>
    void forEachOp(Visit&& visit) {
        for (const PackedOp& op : finishedOps()) visit(op);
    }
    // (name id, slices that never ended) of each op that has any.
    template <class Visit>
    void forEachUnended(Visit&& visit) const {
        for (uint32_t name = 0; name < stats_.size(); ++name)
            if (stats_[name].unended > 0) visit(name, stats_[name].unended);
    }

    // The whole-ns duration statistics use: the exact one rounded to the nearest ns.
    static int64_t roundedNs(int64_t durNs, uint16_t durPs) {
        return durNs + (durPs >= 500 ? 1 : 0);
    }
    // floor(log2(d) * 64) above the linear buckets, bit for bit as std::log2 computes it (from a
    // table of each bucket's first duration, found with std::log2 itself).
    static int64_t histogramKey(int64_t durNs);
    // A duration representing the histogram bucket `key` (its geometric middle).
    static int64_t histogramValue(int64_t key);

  private:
    struct Stats {
        uint64_t count = 0;
        int64_t total = 0, self = 0;
        uint64_t totalPs = 0;  // sum of the sub-ns remainders, added to total (rounded) at the end
        uint64_t timed = 0;    // slices on the timeline (count minus aggregated occurrences)
        uint64_t unended = 0;  // slices that never ended: not in count, total or percentiles
        int64_t min = INT64_MAX, max = INT64_MIN;
        // While the budget lasts every duration (exact); after it, those not yet in `histogram`.
        std::vector<int64_t> durations;
        std::vector<std::pair<int64_t, uint64_t>> histogram;  // (key, count), by key
    };
    static constexpr uint64_t kPendingBudget = uint64_t(1) << 20;
    // Statistics by name id (ids are dense: the string table's).
    Stats& of(uint32_t name) {
        if (name >= stats_.size()) stats_.resize(std::max<size_t>(name + 1, namesKnown_));
        return stats_[name];
    }
    void switchToHistograms();
    // Counts a name's buffered durations into its histogram; returns how many.
    static uint64_t flush(Stats& s);
    void flushAll();
    PackedOp finished(uint32_t name);
    // Every op with a count, by name id; exact percentiles of many durations are selected on
    // two threads (each name's own: at 6 M durations they were the import's last tenth).
    std::vector<PackedOp> finishedOps();

    uint64_t exactBudget_;
    std::vector<Stats> stats_;
    size_t namesKnown_ = 0;
    uint64_t exactDurations_ = 0;
    uint64_t pendingDurations_ = 0;  // buffered after the switch
    bool exact_ = true;
    uint64_t unended_ = 0;
};

}  // namespace stallscope::trace
