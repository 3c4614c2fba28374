#pragma once

// Percent changes and signed numbers as every comparison (replay, trace, CPI, noise) prints them.

#include <cmath>
#include <cstdio>
#include <string>

namespace stallscope {

// Change from `before` to `after` in percent of `before`. Something new (before 0, after not)
// is +100%, something gone is −100%, and 0 → 0 is 0%: the same rule for every kind.
inline double percentChange(double before, double after) {
    if (before == 0) return after == 0 ? 0.0 : (after > 0 ? 100.0 : -100.0);
    return 100.0 * (after - before) / std::abs(before);
}

// "−14.8%", "+3.0%", "0.0%": display text uses a real minus sign (U+2212), never a hyphen.
inline std::string signedPercentText(double pct, int decimals = 1) {
    char digits[64];
    std::snprintf(digits, sizeof digits, "%.*f", decimals, std::abs(pct));
    const std::string number = digits;
    if (number.find_first_not_of("0.") == std::string::npos) return number + "%";
    return (pct < 0 ? std::string("\u2212") : std::string("+")) + number + "%";
}

// "−401", "+12", "0" (same minus sign).
inline std::string signedNumberText(double value, int decimals = 0) {
    char digits[64];
    std::snprintf(digits, sizeof digits, "%.*f", decimals, std::abs(value));
    const std::string number = digits;
    if (number.find_first_not_of("0.") == std::string::npos) return number;
    return (value < 0 ? std::string("\u2212") : std::string("+")) + number;
}

}  // namespace stallscope
