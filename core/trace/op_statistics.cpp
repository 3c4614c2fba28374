#include "core/trace/op_statistics.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <thread>

namespace stallscope::trace {

namespace {

constexpr int64_t kLinearBuckets = 1024;
// The widest key range counted in an array (512 KiB of counters, kept per thread); wider ones,
// only from negative durations, are sorted.
constexpr uint64_t kDenseKeys = uint64_t(1) << 16;

// The key as the histograms were first defined: log2 in floating point.
int64_t log2Key(int64_t d) {
    return int64_t(std::floor(std::log2(double(d)) * 64.0));
}

// For each octave [2^e, 2^(e+1)) past the linear buckets, the first duration whose log2Key is
// 64e + j for j = 1..64 (rounding in log2 takes an octave's last durations to 64(e+1)); 2^(e+1)
// when no duration of the octave reaches it. Found by bisection with log2Key itself, so a key
// read from the table is the one log2 gives (log2 never decreases).
struct KeyTable {
    std::array<std::array<uint64_t, 64>, 63> first{};
    KeyTable() {
        for (int e = 10; e < 63; ++e) {
            const int64_t low = int64_t(1) << e;
            const int64_t high = e == 62 ? INT64_MAX : (int64_t(1) << (e + 1)) - 1;
            for (int j = 1; j <= 64; ++j) {
                const int64_t target = int64_t(64) * e + j;
                if (log2Key(high) < target) {
                    first[size_t(e)][size_t(j - 1)] = uint64_t(high) + 1;
                    continue;
                }
                int64_t a = low, b = high;
                while (a < b) {
                    const int64_t middle = a + (b - a) / 2;
                    if (log2Key(middle) >= target)
                        b = middle;
                    else
                        a = middle + 1;
                }
                first[size_t(e)][size_t(j - 1)] = uint64_t(a);
            }
        }
    }
};

// Adds (key, count) runs, both sorted by key, into `into`.
void addCounts(std::vector<std::pair<int64_t, uint64_t>>& into,
               const std::vector<std::pair<int64_t, uint64_t>>& counts) {
    if (counts.empty()) return;
    std::vector<std::pair<int64_t, uint64_t>> merged;
    merged.reserve(into.size() + counts.size());
    auto a = into.begin();
    auto b = counts.begin();
    while (a != into.end() || b != counts.end()) {
        if (b == counts.end() || (a != into.end() && a->first < b->first)) {
            merged.push_back(*a++);
        } else if (a == into.end() || b->first < a->first) {
            merged.push_back(*b++);
        } else {
            merged.emplace_back(a->first, a->second + b->second);
            ++a;
            ++b;
        }
    }
    into.swap(merged);
}

}  // namespace

int64_t OpStatistics::histogramKey(int64_t d) {
    if (d < kLinearBuckets) return d;
    static const KeyTable table;
    const int octave = 63 - std::countl_zero(uint64_t(d));
    // How many of the octave's 64 bucket starts are at or below d, without branches (the
    // bisection's branches were unpredictable: 40 ns a key with std::upper_bound).
    const uint64_t* first = table.first[size_t(octave)].data();
    const auto value = uint64_t(d);
    size_t j = 0;
    for (size_t step = 32; step > 0; step /= 2) j += first[j + step - 1] <= value ? step : 0;
    j += first[j] <= value ? 1 : 0;  // the steps decide the first 63; the last here
    return kLinearBuckets + int64_t(64) * octave + int64_t(j);
}

int64_t OpStatistics::histogramValue(int64_t key) {
    if (key < kLinearBuckets) return key;
    return int64_t(std::llround(std::exp2((double(key - kLinearBuckets) + 0.5) / 64.0)));
}

uint64_t OpStatistics::flush(Stats& s) {
    const uint64_t flushed = s.durations.size();
    if (flushed == 0) return 0;
    const auto [lowest, highest] = std::minmax_element(s.durations.begin(), s.durations.end());
    const int64_t low = histogramKey(*lowest);
    const int64_t high = histogramKey(*highest);
    std::vector<std::pair<int64_t, uint64_t>> counts;
    const uint64_t span = uint64_t(high) - uint64_t(low);
    if (span <= 4 * flushed + 64 && span < kDenseKeys) {
        // Keys are monotonic in the duration: a counter per key between the two ends (every
        // non-negative duration's key is below 1024 + 64 * 64).
        thread_local std::vector<uint64_t> perKey;
        perKey.assign(size_t(span + 1), 0);
        for (const int64_t d : s.durations)
            ++perKey[size_t(uint64_t(histogramKey(d)) - uint64_t(low))];
        for (size_t i = 0; i < perKey.size(); ++i)
            if (perKey[i] > 0) counts.emplace_back(low + int64_t(i), perKey[i]);
    } else {
        std::vector<int64_t> keys(s.durations.size());
        std::transform(s.durations.begin(), s.durations.end(), keys.begin(), histogramKey);
        std::sort(keys.begin(), keys.end());
        for (const int64_t key : keys) {
            if (counts.empty() || counts.back().first != key) counts.emplace_back(key, 0);
            ++counts.back().second;
        }
    }
    addCounts(s.histogram, counts);
    // A name's buffer keeps little between batches: a burst of one name must not stay held.
    if (s.durations.capacity() > 4096)
        std::vector<int64_t>().swap(s.durations);
    else
        s.durations.clear();
    return flushed;
}

void OpStatistics::flushAll() {
    for (Stats& s : stats_) flush(s);
    pendingDurations_ = 0;
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
        addCounts(s.histogram, o.histogram);
    }
    exactDurations_ += other.exactDurations_;
    pendingDurations_ += other.pendingDurations_;
    unended_ += other.unended_;
    other.stats_.clear();
    other.exactDurations_ = other.pendingDurations_ = other.unended_ = 0;
    if (exact_ && exactDurations_ > exactBudget_) switchToHistograms();
    if (!exact_ && pendingDurations_ >= kPendingBudget) flushAll();
}

void OpStatistics::switchToHistograms() {
    exact_ = false;
    flushAll();
}

std::vector<PackedOp> OpStatistics::finishedOps() {
    std::vector<uint32_t> names;
    uint64_t durations = 0;
    for (uint32_t name = 0; name < stats_.size(); ++name) {
        if (stats_[name].count == 0) continue;
        names.push_back(name);
        durations += stats_[name].durations.size();
    }
    std::vector<PackedOp> ops(names.size());
    auto finish = [&](size_t from, size_t to) {
        for (size_t i = from; i < to; ++i) ops[i] = finished(names[i]);
    };
    // Histograms share the pending count: counted on this thread alone.
    constexpr uint64_t kParallelDurations = uint64_t(1) << 20;
    if (!exact_ || durations < kParallelDurations) {
        finish(0, names.size());
        return ops;
    }
    // The names split where half the durations are on each side.
    size_t half = 0;
    for (uint64_t seen = 0; half < names.size() && seen < durations / 2; ++half)
        seen += stats_[names[half]].durations.size();
    std::thread other(finish, size_t(0), half);
    finish(half, names.size());
    other.join();
    return ops;
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
        pendingDurations_ -= flush(s);
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
