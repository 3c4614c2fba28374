#pragma once

#include <QJsonObject>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/cpi/cpi.h"
#include "core/noise/absorption.h"

namespace stallscope {

// ---- CPI stacks -------------------------------------------------------------------------------
// Before/after of CPI-stack profiles: per (kernel, source), per-category cycle deltas. Sources
// are never mixed: measured ("hw") and each model's stacks have their own totals, since adding a
// model's predicted cycles to measured ones means nothing. `stall` counts every category
// outside the GSI Base class.

struct CpiStackDelta {
    std::string kernel, source, group;
    std::map<std::string, double> a, b;  // category -> cycles (0 where a side lacks it)
    double totalA = 0, totalB = 0, stallA = 0, stallB = 0;
    double delta(const std::string& category) const;
};

struct CpiSourceTotals {
    std::string source;
    size_t kernels = 0;  // matched kernels of this source
    double totalA = 0, totalB = 0, stallA = 0, stallB = 0;
};

struct CpiComparison {
    std::vector<CpiStackDelta> stacks;     // matched (kernel, source), in A's order
    std::vector<CpiSourceTotals> sources;  // per source over its matched kernels, "hw" first
    std::vector<std::string> categories;   // every category of either side, stacking order
    std::vector<std::pair<std::string, std::string>> onlyInA, onlyInB;  // (kernel, source)
    std::string primarySource;  // the headline source: "hw" when both have it, else the first
    std::string summary;        // "B vs A (hw): −12.0% cycles, −30.0% stall cycles over 2 ..."
    const CpiSourceTotals* primary() const;
};

CpiComparison compareCpiStacks(const cpi::CpiData& a, const cpi::CpiData& b);
QJsonObject cpiComparisonJson(const CpiComparison& c);
inline QJsonObject compareCpi(const cpi::CpiData& a, const cpi::CpiData& b) {
    return cpiComparisonJson(compareCpiStacks(a, b));
}

// ---- noise injection --------------------------------------------------------------------------
// Before/after of noise-injection profiles: curves matched by (machine, region, mode, params)
// with their plateau t0, absorption (Abs_raw = k1, Abs_rel = k1 / loop body) and k2;
// classifications side by side.

struct NoiseCurveDelta {
    noise::Curve a, b;
    QString label() const;  // "machine region mode [params]"
};

struct NoiseComparison {
    std::vector<NoiseCurveDelta> curves;         // matched, in A's order
    std::vector<noise::Curve> onlyInA, onlyInB;  // unmatched curves
    std::vector<noise::Classification> classesA, classesB;
    double plateauA = 0, plateauB = 0;  // summed t0 over matched curves
    size_t changedK1 = 0;
    std::string summary;
};

NoiseComparison compareNoise(const noise::AbsorptionReport& a, const noise::AbsorptionReport& b);
QJsonObject noiseComparisonJson(const NoiseComparison& c);
inline QJsonObject compareAbsorption(const noise::AbsorptionReport& a,
                                     const noise::AbsorptionReport& b) {
    return noiseComparisonJson(compareNoise(a, b));
}

}  // namespace stallscope
