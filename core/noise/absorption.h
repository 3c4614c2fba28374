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
};

struct FitOptions {
    // Smallest rise over the plateau that counts as degradation, relative to t0. Guards against
    // declaring degradation on curves whose repeats happen to agree very closely.
    double minRelativeRise = 0.02;
    // Degradation must exceed this many standard errors of a median (from the run-to-run spread).
    double sigmas = 3.0;
    // Saturation needs at least this many points on the tail line.
    int minSaturationPoints = 3;
};

// The fitted three-phase model: flat at t0 up to k1, a transient, then linear from k2 with
// `slope` time units per noise pattern.
struct CurveFit {
    std::vector<CurvePoint> points;  // sorted by k
    double t0 = 0;                   // plateau runtime
    double relativeNoise = 0;        // run-to-run spread of one plateau run, relative to its median
    double threshold = 0;            // a median above t0 * (1 + threshold) is degraded
    double lineTolerance = 0;        // a degraded median this close (relative) to the line is on it
    double k1 = 0;                   // absorption Abs_raw: last k before degradation
    bool degraded = false;           // false: no tested k degraded (k1 is a lower bound)
    std::optional<double> k2;        // start of saturation; empty: no saturation reached
    double slope = 0;                // saturation slope (time per pattern); 0 without saturation
    double intercept = 0;            // saturation line value at k = 0

    // The fitted model's runtime at k (plateau, straight transient, saturation line).
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

// Which absorptions a class was read from.
struct Evidence {
    std::optional<double> fp, l1, memory, integer;  // k1 per mode
    bool fpLowerBound = false, l1LowerBound = false, memoryLowerBound = false;
    std::string text;  // e.g. "FP absorbs 0, L1 absorbs 13 loads"
};

struct ClassifyOptions {
    double low = 2;        // absorption at or below this is "near zero"
    double tipping = 20;   // FP/L1 absorption from here on means data-access stalls (paper §3.2)
    double memoryLow = 1;  // memory_ld64 absorption at or below this: bandwidth saturated
};

struct Classification {
    std::string machine, region;
    std::map<std::string, std::string> params;
    BottleneckClass cls = BottleneckClass::LimitedOverlap;
    Evidence evidence;
    std::string reason;  // why this class, in the paper's terms
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
