#pragma once

// Noise-injection absorption (DOMAIN §2, after Delval et al., "Noise Injection for Performance
// Bottleneck Analysis"): robust three-phase fitting of runtime-vs-noise curves, the paper's
// bottleneck classes, and loading the runs of a "noise" profile from the workspace.

#include <QJsonObject>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stallscope {
class Workspace;
}

namespace stallscope::noise {

// One timed run (one CSV row, one noise_runs row).
struct NoiseRun {
    std::string machine;
    std::string region;
    std::string mode;
    double k = 0;
    double time = 0;
    std::string timeUnit = "ns";  // "ns" or "cycles"
    std::optional<int64_t> rep;
    std::optional<double> bodyInstr, payloadInstr, overheadInstr;
    std::optional<int64_t> cores;
    std::optional<double> perf;
    std::map<std::string, std::string> params;  // param.<name> values as written
    std::map<std::string, std::string> extra;   // unknown columns, kept as metadata
};

// The median of the repeats at one noise quantity.
struct CurvePoint {
    double k = 0;
    double median = 0;
    double q1 = 0, q3 = 0;  // quartiles of the repeats (the spread band)
    double mad = 0;         // median absolute deviation of the repeats
    int runs = 0;
    bool outlier = false;  // a median the segmented fit left out (too far from the model)
};

struct FitOptions {
    // Smallest rise over the plateau that counts as degradation, relative to t0. Guards against
    // declaring degradation on curves whose repeats happen to agree very closely.
    double minRelativeRise = 0.02;
    // The noise threshold of one median (CurveFit::threshold): this many standard errors of a
    // median from the run-to-run spread, and never below minRelativeRise.
    double sigmas = 3.0;
    // Saturation needs at least this many points on the tail line.
    int minSaturationPoints = 3;
    // A median further than this many standard errors from the model is left out of the fit
    // (it still costs outlierCutoff^2, so dropping points is never free).
    double outlierCutoff = 3.0;
    // Penalty per fitted parameter, in chi^2 units times ln(n) for n medians (BIC). Each segment
    // beyond the plateau adds two (a slope and a breakpoint), so a rise must improve the fit by
    // 2 ln(n) chi^2 over the flat line, a transient by another 2 ln(n).
    double penaltyPerParameter = 1.0;
    // The transient's two parameters cost this fraction of the full penalty.
    double transientPenalty = 1.0;
    // A transient rises at least this fraction of the saturation slope (a slower one cannot be
    // told from a plateau drifting within the noise) and at most this fraction (as fast is
    // saturation already).
    double minTransientRatio = 0.2;
    double maxTransientRatio = 0.8;
    // The interval of a breakpoint: every breakpoint whose best fit is within this much chi^2
    // of the best fit (3.84: 95% for one parameter).
    double intervalChi2 = 3.84;
    // A knee whose interval spans more steps of k than this is reported as not placed.
    int maxKneeSteps = 3;
};

// The fitted three-phase model: flat at t0 up to the knee, a transient, then linear from the
// start of saturation. The breakpoints are fitted as parameters of a segmented regression on the
// medians (docs/design.md, "Absorption"); k1 and k2 are the measured noise quantities they
// correspond to.
struct CurveFit {
    std::vector<CurvePoint> points;  // sorted by k
    double t0 = 0;                   // plateau runtime
    double relativeNoise = 0;        // run-to-run spread of one plateau run, relative to its median
    double threshold = 0;  // a median beyond t0 * (1 + threshold) is beyond the run-to-run noise
    double lineTolerance = 0;  // a saturated median this close (relative) to the line is on it
    double k1 = 0;             // absorption Abs_raw: last measured k at or before the knee
    bool degraded = false;     // false: no tested k degraded (k1 is a lower bound)
    std::optional<double> k2;  // last measured k at or before saturation; empty: none reached
    double slope = 0;          // saturation slope (time per pattern); 0 without saturation
    double intercept = 0;      // saturation line value at k = 0

    // The interval of k1 in measured k: every knee whose fit is within the noise of the best.
    // k1High empty: the curve may as well not degrade within the tested range.
    double k1Low = 0;
    std::optional<double> k1High;
    std::optional<double> k2Low, k2High;  // the same for k2 (empty without saturation)

    int segments = 1;  // 1 flat, 2 plateau + saturation, 3 plateau + transient + saturation
    double knee = 0;   // the fitted first breakpoint (k1 <= knee < next measured k)
    double kneeLow = 0, kneeHigh = 0;              // its interval
    std::optional<double> saturationStart;         // the fitted second breakpoint
    double saturationLow = 0, saturationHigh = 0;  // its interval
    double transientSlope = 0;                     // fitted, time per pattern
    double tailSlope = 0;   // fitted slope after the second breakpoint, also without saturation
    double dispersion = 1;  // scatter of the medians in standard errors (>= 1 with repeats)
    int outliers = 0;       // medians left out of the fit
    // The knee could not be placed within maxKneeSteps steps (too noisy, too coarse, or
    // degradation itself not established); `note` says which.
    bool uncertain = false;
    std::string note;

    // The fitted model's runtime at k.
    double model(double k) const;
};

// Fits one curve from (k, time) samples, in any order and with any spacing of k.
// Throws InputError when there are no samples.
CurveFit fitCurve(const std::vector<std::pair<double, double>>& samples,
                  const FitOptions& options = {});

// A curve is one (machine, region, mode, params) group.
struct Curve {
    std::string machine, region, mode;
    std::map<std::string, std::string> params;
    std::optional<double> bodyInstr;  // loop body size, when the rows give it
    std::optional<double> payloadInstr, overheadInstr;
    std::optional<int64_t> cores;
    std::optional<double> perf;  // median perf at the smallest k
    std::string perfUnit;        // from an extra "perf_unit" column, when present
    std::string timeUnit = "ns";
    CurveFit fit;
    std::optional<double> absRel() const {
        if (!bodyInstr || *bodyInstr <= 0) return std::nullopt;
        return fit.k1 / *bodyInstr;
    }
};

enum class BottleneckClass {
    ComputeBound,
    DataBound,
    FullOverlap,
    LimitedOverlap,
    BandwidthBound,
    LatencyBound
};
const char* className(BottleneckClass c);

// An absorption's interval in measured k (abs_raw_low..abs_raw_high; no high end: the curve may
// not degrade within the tested range).
struct AbsorptionInterval {
    double low = 0;
    std::optional<double> high;
};

// Which absorptions a class was read from.
struct Evidence {
    std::optional<double> fp, l1, memory, integer;  // k1 per mode
    bool fpLowerBound = false, l1LowerBound = false, memoryLowerBound = false;
    // Intervals of the fitted knees, and whether each knee was placed (CurveFit::uncertain).
    // Without an interval a reading is its value alone.
    std::optional<AbsorptionInterval> fpInterval, l1Interval, memoryInterval, integerInterval;
    bool fpUncertain = false, l1Uncertain = false, memoryUncertain = false;
    std::string text;  // e.g. "FP 0 (0-1), L1 13 (12-14), memory 40"
};

struct ClassifyOptions {
    // An absorption at or below this is "near zero"; so is one whose placed knee has 0 within its
    // interval (the paper's "no measurable absorption") when that interval ends at or below
    // nearZeroSpan: between 0 and 64 is no reading of zero.
    double low = 2;
    double nearZeroSpan = 10;
    double tipping = 20;   // FP/L1 absorption from here on means data-access stalls (paper §3.2)
    double memoryLow = 1;  // memory_ld64 absorption at or below this: bandwidth saturated
};

struct Classification {
    std::string machine, region;
    std::map<std::string, std::string> params;
    BottleneckClass cls = BottleneckClass::LimitedOverlap;
    Evidence evidence;
    std::string reason;  // why this class, in the paper's terms
    // A knee the class was read from could not be placed: the class rests on a point estimate.
    bool uncertain = false;
};

// Classifies from the absorptions per mode; nullopt when neither fp_add64 nor l1_ld64 was
// measured (the paper's table needs both).
std::optional<BottleneckClass> classify(const Evidence& evidence, std::string* reason = nullptr,
                                        const ClassifyOptions& options = {});

struct AbsorptionReport {
    std::vector<Curve> curves;  // sorted by machine, region, params (paramsLess), mode
    std::vector<Classification> classifications;
    int64_t runs = 0;
};

// Groups runs into curves, fits them and classifies each (machine, region, params).
AbsorptionReport analyzeRuns(const std::vector<NoiseRun>& runs, const FitOptions& fit = {},
                             const ClassifyOptions& classify = {});

// Every run of a noise profile.
std::vector<NoiseRun> loadRuns(const Workspace& workspace, int64_t profileId);
AbsorptionReport analyzeProfile(const Workspace& workspace, int64_t profileId);

// CONTRACT §5 `absorption --json`.
QJsonObject absorptionJson(const AbsorptionReport& report);

// What to change, from the classification (the suggestions dock lists these).
struct NoiseSuggestion {
    std::string kind;  // the class name, e.g. "compute-bound"
    std::string text;  // e.g. "compute-bound: vectorize or cut FP work; memory absorbs 40 loads"
    std::string machine, region;
};
std::vector<NoiseSuggestion> noiseSuggestions(const AbsorptionReport& report);

// Parameter values in order: numbers by value (c=2 before c=16) and before any text, text
// alphabetically. Parameter sets compare name by name with these values.
bool paramValueLess(const std::string& a, const std::string& b);
bool paramsLess(const std::map<std::string, std::string>& a,
                const std::map<std::string, std::string>& b);

// "q=0.25, c=64" (empty for no params).
std::string paramsLabel(const std::map<std::string, std::string>& params);

}  // namespace stallscope::noise
