// Chrome trace times: JSON microseconds as exact nanoseconds and picoseconds.
#include <cmath>
#include <cstdlib>
#include <string>

#include "importers/chrome/chrome_json.h"

namespace stallscope::chrome {

// Microseconds as decimal text -> whole nanoseconds (floor) plus a 0..999 ps remainder, exactly
// for up to six decimals (the seventh rounds). Accepts every time int64 nanoseconds hold (about
// +-292 years), so epoch timestamps (Kineto: ~1.7e15 us) fit.
bool decimalToTime(std::string_view text, int64_t& outNs, uint16_t& outPs) {
    constexpr int64_t kMaxWholeUs = (INT64_MAX - 1000) / 1000;
    const char* p = text.data();
    const char* e = p + text.size();
    bool negative = false;
    if (p < e && *p == '-') {
        negative = true;
        ++p;
    }
    int64_t whole = 0;
    const char* digits = p;
    while (p < e && *p >= '0' && *p <= '9') {
        if (whole > kMaxWholeUs / 10) return false;
        whole = whole * 10 + (*p++ - '0');
    }
    if (p == digits) return false;
    int64_t fracPs = 0;  // the fraction of a microsecond in picoseconds
    int fracDigits = 0;
    if (p < e && *p == '.') {
        ++p;
        while (p < e && *p >= '0' && *p <= '9') {
            if (fracDigits < 6)
                fracPs = fracPs * 10 + (*p - '0');
            else if (fracDigits == 6 && *p >= '5')
                ++fracPs;  // rounds 0.9999995 us up to a whole microsecond: carried below
            ++fracDigits;
            ++p;
        }
        for (int i = fracDigits; i < 6; ++i) fracPs *= 10;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        const std::string copy(text);
        char* end = nullptr;
        const double v = std::strtod(copy.c_str(), &end);
        if (end != copy.c_str() + copy.size() || !std::isfinite(v) ||
            std::fabs(v) >= double(kMaxWholeUs))
            return false;
        const long double ns = static_cast<long double>(v) * 1000.0L;
        const long double floorNs = std::floor(ns);
        int64_t wholeNs = int64_t(floorNs);
        int64_t ps = std::llround(double((ns - floorNs) * 1000.0L));
        if (ps >= 1000) {
            ++wholeNs;
            ps -= 1000;
        }
        outNs = wholeNs;
        outPs = uint16_t(ps);
        return true;
    }
    if (p != e) return false;
    if (fracPs >= 1'000'000) {
        fracPs -= 1'000'000;
        ++whole;
    }
    if (whole > kMaxWholeUs) return false;
    const int64_t ns = whole * 1000 + fracPs / 1000;
    const int64_t ps = fracPs % 1000;
    if (!negative) {
        outNs = ns;
        outPs = uint16_t(ps);
    } else {
        // Floor: -1.5005 us is -1501 ns + 500 ps.
        outNs = -ns - (ps > 0 ? 1 : 0);
        outPs = uint16_t(ps > 0 ? 1000 - ps : 0);
    }
    return true;
}

}  // namespace stallscope::chrome
