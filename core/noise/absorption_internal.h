#pragma once

// What the absorption files share (internal to core/noise): the statistics of repeats and how an
// absorption reads against "near zero".

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/noise/absorption.h"

namespace stallscope::noise::detail {

// Quantile with linear interpolation of a sorted, non-empty vector.
inline double quantile(const std::vector<double>& sorted, double q) {
    const double pos = q * double(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

inline double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return quantile(values, 0.5);
}

// How an absorption reads against "near zero". One that never degraded within the tested range
// is at least that large, never zero. Otherwise it is zero at or below the limit, or when its
// knee was placed and its interval runs from 0 to no more than nearZeroSpan: a fit whose best
// knee is 3 but could as well be 0 shows no absorption. An interval from 0 to further, or an
// unplaced knee's interval from 0, could be zero or not: the estimate decides, and the reading
// is ambiguous.
enum class Reading { Zero, NotZero, Ambiguous };

Reading reading(double value, bool lowerBound, const std::optional<AbsorptionInterval>& in,
                bool uncertain, double limit, const ClassifyOptions& o);

}  // namespace stallscope::noise::detail
