#pragma once

// Numbers read from files as doubles (JSON, CSV) converted to integers only when they fit:
// converting an out-of-range double is undefined behaviour, and a file can hold anything.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace stallscope {

// `value` as T when it is a whole number within T's range, nothing otherwise (a fraction, an
// infinity or NaN, or a number T cannot hold). Callers that accept fractions round first.
template <class T>
std::optional<T> integralIfInRange(double value) {
    static_assert(std::numeric_limits<T>::is_integer);
    if (!std::isfinite(value) || value != std::trunc(value)) return std::nullopt;
    // The bounds as doubles: -2^63 and 2^63 for int64_t are exact; the upper bound is exclusive.
    constexpr double low = double(std::numeric_limits<T>::min());
    constexpr double high = double(std::numeric_limits<T>::max()) + 1.0;
    if (value < low || value >= high) return std::nullopt;
    return static_cast<T>(value);
}

}  // namespace stallscope
