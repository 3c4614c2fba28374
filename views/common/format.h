#pragma once

// Every number, time and tick a view shows is formatted here, so one quantity reads the same in
// every view, table, tooltip and export.

#include <QString>
#include <cstdint>

namespace stallscope::format {

// ---- axis ticks ---------------------------------------------------------------------------------
// The smallest 1, 2 or 5 × 10^k at least `raw` (1 when raw is not positive): chart axes with about
// `span / raw` ticks.
double stepAtLeast(double raw);
// About `targetTicks` ticks over `span`.
inline double tickStep(double span, int targetTicks) {
    return stepAtLeast(span / (targetTicks > 0 ? targetTicks : 1));
}
// The 1, 2 or 5 × 10^k nearest `rough`, at least 1: time axes in whole cycles or nanoseconds.
double nearestWholeStep(double rough);

// ---- numbers ------------------------------------------------------------------------------------
// "12,345" (always English grouping: tables and exports read the same on every machine).
QString count(double value);
// "12,345" in the user's locale (the system's grouping), rounded to a whole number.
QString localCount(double value);
// "−14,688", "+12", "0": a real minus sign, as in every display text.
QString signedCount(double value, int decimals = 0);
// "+12.5%", "−3.0%".
QString signedPercent(double value);
// "12.3%" of `whole` (0 when whole is 0).
QString percentOf(double part, double whole);
// "12.3k", "4.56M", "789" (three significant digits).
QString shortNumber(double value);
// shortNumber with a sign: "+1.2k", "−34", "0".
QString shortSigned(double value);

// `text` with zero-width spaces where a word-wrapped label may break it: after _ / \\ . - : ,
// and inside runs of over 24 characters without one. A QLabel's minimum width is its longest
// word, so one long file name ("resnet50_ddp_rank0_…_profile.json") widened its dock to 800 px.
QString wrappable(const QString& text);

// ---- units --------------------------------------------------------------------------------------
// "1.234 s", "12.35 ms", "4.50 µs", "17 ns", "250 ps" (picosecond-resolution times keep their
// fraction).
QString nanoseconds(double ns);
// "56344", "12.35k", "4.567M" cycles (four significant digits from 10,000).
QString cycles(double cycles);
// A counter's value with its unit: bytes as KiB/MiB/…, others with k/M/G/T.
QString counterValue(double value, const QString& unit);
// The unit a counter series' name implies: "B" (bytes, memory), "%" or none.
QString counterUnit(const QString& seriesName);
// "1.5 MiB" (IEC units, the user's locale).
QString dataSize(int64_t bytes);
// "512 bytes", or "1.5 MiB (1,572,864 bytes)".
QString dataSizeWithBytes(int64_t bytes);

}  // namespace stallscope::format
