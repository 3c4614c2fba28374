#include "core/trace/op_statistics.h"

#include <algorithm>
#include <cmath>

namespace stallscope::trace {

namespace {
constexpr int64_t kLinearBuckets = 1024;
}  // namespace

int64_t OpStatistics::histogramKey(int64_t d) {
    if (d < kLinearBuckets) return d;
    return kLinearBuckets + int64_t(std::floor(std::log2(double(d)) * 64.0));
}

int64_t OpStatistics::histogramValue(int64_t key) {
    if (key < kLinearBuckets) return key;
    return int64_t(std::llround(std::exp2((double(key - kLinearBuckets) + 0.5) / 64.0)));
}

void OpStatistics::addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                                int64_t selfNs) {
    Stats& s = of(name);
    s.count += occurrences;
    s.total += totalNs;
    s.self += selfNs;
}

void OpStatistics::merge(OpStatistics& other) {
    if (exact_ && !other.exact_) switchToHistograms();
    if (!exact_ && other.exact_) other.switchToHistograms();
    if (other.stats_.size() > stats_.size()) stats_.resize(other.stats_.size());
    for (size_t name = 0; name < other.stats_.size(); ++name) {
        Stats& s = stats_[name];
        Stats& o = other.stats_[name];
        s.count += o.count;
        s.total += o.total;
        s.self += o.self;
        s.totalPs += o.totalPs;
        s.timed += o.timed;
        s.unended += o.unended;
        s.min = std::min(s.min, o.min);
        s.max = std::max(s.max, o.max);
        s.durations.insert(s.durations.end(), o.durations.begin(), o.durations.end());
        for (const auto& [key, n] : o.histogram) s.histogram[key] += n;
    }
    exactDurations_ += other.exactDurations_;
    unended_ += other.unended_;
    other.stats_.clear();
    other.exactDurations_ = other.unended_ = 0;
    if (exact_ && exactDurations_ > exactBudget_) switchToHistograms();
}

void OpStatistics::switchToHistograms() {
    exact_ = false;
    for (Stats& s : stats_) {
        for (int64_t d : s.durations) ++s.histogram[histogramKey(d)];
        std::vector<int64_t>().swap(s.durations);
    }
}

PackedOp OpStatistics::finished(uint32_t name) {
    Stats& s = stats_[name];
    // Nearest-rank percentiles of the slices on the timeline.
    auto rank = [&](double p) { return uint64_t(std::ceil(p * double(s.timed))) - 1; };
    int64_t p50 = 0, p95 = 0;
    if (s.timed == 0) {
        s.min = s.max = 0;
    } else if (exact_) {
        std::vector<int64_t>& d = s.durations;
        std::nth_element(d.begin(), d.begin() + long(rank(0.5)), d.end());
        p50 = d[rank(0.5)];
        std::nth_element(d.begin(), d.begin() + long(rank(0.95)), d.end());
        p95 = d[rank(0.95)];
    } else {
        uint64_t seen = 0;
        bool have50 = false;
        for (const auto& [key, n] : s.histogram) {
            seen += n;
            if (!have50 && seen > rank(0.5)) {
                p50 = histogramValue(key);
                have50 = true;
            }
            if (seen > rank(0.95)) {
                p95 = histogramValue(key);
                break;
            }
        }
    }
    const int64_t total = s.total + int64_t((s.totalPs + 500) / 1000);
    return {name, s.count, total, s.self, s.min, s.max, p50, p95};
}

}  // namespace stallscope::trace
