#pragma once

// Two step analyses side by side (before a, after b): per category the share of step time and
// the mean per step and device, and which recommendation kinds go, stay or appear.

#include <QJsonObject>
#include <array>
#include <string>
#include <vector>

#include "core/trace/step_analysis.h"

namespace stallscope::compare {

struct StepCategoryDelta {
    trace::StepCategory category = trace::StepCategory::Idle;
    double aSharePct = 0, bSharePct = 0;
    double aMeanNs = 0, bMeanNs = 0;  // per step and device
    double deltaSharePct() const { return bSharePct - aSharePct; }
};

struct StepComparison {
    size_t aSteps = 0, bSteps = 0;
    double aMeanStepNs = 0, bMeanStepNs = 0;
    std::array<StepCategoryDelta, trace::kStepCategoryCount> categories{};
    std::vector<std::string> recommendationsGone, recommendationsNew, recommendationsKept;
};

StepComparison compareSteps(const trace::StepAnalysis& a, const trace::StepAnalysis& b);
// The `compare --json` "steps" member.
QJsonObject stepComparisonJson(const StepComparison& c);

}  // namespace stallscope::compare
