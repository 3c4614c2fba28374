#pragma once

// Before/after comparison of two trace profiles (issue 8, CONTRACT §5 `compare`): per-op
// statistics in each (count, total, mean, p50, p95), their deltas, the wall-clock and idle time of
// each profile, and the distribution of normalized op durations as two CDFs (each slice's
// duration divided by the median duration of its op in "before", as in SnR Fig. 6).

#include <QJsonObject>
#include <QString>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stallscope::trace {

class TraceStore;

// Every slice duration of a profile grouped by op name, plus its time totals.
struct TraceDurations {
    static constexpr size_t kDensityBins = 512;
    std::map<std::string, std::vector<int64_t>> byOp;  // each vector sorted ascending
    int64_t span = 0;                                  // end - start
    int64_t busy = 0;  // union of the top-level slices of all tracks
    uint64_t slices = 0;
    // Busy time (the same union) per bin of span / kDensityBins from the start: the minimap.
    std::vector<double> busyDensity;
    int64_t idle() const { return span - busy; }
};

// Reads every stored slice (level 0) of the profile. O(slices) time and 8 bytes per slice.
TraceDurations collectDurations(const TraceStore& store);

// Nearest-rank percentile of an ascending vector (the rule trace_ops uses): the smallest value
// with at least `fraction` of the values at or below it, sorted[ceil(fraction * n) - 1]; never
// interpolated. 0 when empty.
inline constexpr const char* kPercentileRule =
    "nearest-rank: the smallest duration with at least p% of the op's slices at or below it";
int64_t nearestRank(const std::vector<int64_t>& sorted, double fraction);

struct OpSummary {
    uint64_t count = 0;
    int64_t total = 0, p50 = 0, p95 = 0;
    double mean = 0;
};
OpSummary summarize(const std::vector<int64_t>& sorted);

struct OpDelta {
    std::string name;
    OpSummary a, b;  // count 0 where the op does not occur
    int64_t deltaTotal() const { return b.total - a.total; }
    // Change of the total time in percent of A's; +100 for an op new in B, -100 for one gone.
    double deltaPct() const;
    bool changed() const;  // count differs or total moved by at least 1%
};

struct CdfPoint {
    double value = 0;     // normalized duration
    double fraction = 0;  // share of slices at or below `value`
};

// The CDF "op" meaning every op at once, each slice normalized by its own op's median in A.
inline constexpr const char* kAllOps = "*";

struct TraceComparison {
    TraceDurations a, b;       // durations kept (8 bytes a slice) so the CDF op can change
    std::vector<OpDelta> ops;  // by |delta total| descending, then name
    std::vector<CdfPoint> cdfA, cdfB;
    std::string cdfOp;  // the op the CDFs cover, or kAllOps
    int opsChanged = 0;
    int64_t opTimeA = 0, opTimeB = 0;  // sum of all slice durations
    QString summary;                   // "B vs A: −x% total time, ..."
};

// The op SnR Fig. 6 would plot: the one with the largest total time in A (ties: by name);
// empty when A has no slices.
std::string defaultCdfOp(const TraceDurations& a);

// `cdfOp` picks the op whose durations the CDFs show, normalized to its median in A (empty: the
// default above; kAllOps: every slice whose op occurs in A, each normalized by its own op's
// median in A). `cdfPoints` bounds the points per curve.
TraceComparison compareTraces(TraceDurations a, TraceDurations b, const std::string& cdfOp = {},
                              size_t cdfPoints = 256);
// Recomputes the comparison's CDFs for another op (same rules as compareTraces).
void setCdfOp(TraceComparison& comparison, const std::string& cdfOp, size_t cdfPoints = 256);

// Fraction of `curve`'s slices at or below `value` (step function of the CDF).
double cdfAt(const std::vector<CdfPoint>& curve, double value);

QJsonObject comparisonJson(const TraceComparison& comparison);

// Signed percentage with a real minus sign, e.g. "−14.8%" / "+3.0%".
QString signedPercent(double pct);
double percentChange(double before, double after);

}  // namespace stallscope::trace
