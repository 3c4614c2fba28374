#pragma once

// The step breakdown as a registered analysis (core/analysis): derived on the first request,
// stored as zstd-packed JSON (the `steps --json` document).

#include "core/analysis/analysis.h"
#include "core/trace/step_analysis.h"

namespace stallscope::trace {

class StepsAnalysis : public analysis::Typed<StepAnalysis> {
  public:
    std::string_view name() const override { return "steps"; }
    int version() const override { return StepAnalysis::kVersion; }
    std::string_view reads() const override;
    bool appliesTo(const TraceStore& store) const override;
    analysis::RunAt runAt(const TraceStore&) const override {
        return analysis::RunAt::FirstRequest;
    }
    StepAnalysis compute(const TraceStore& store) const override;
    std::string encodeResult(const StepAnalysis& result) const override;
    StepAnalysis decodeResult(std::string_view payload) const override;
};
const StepsAnalysis& stepsAnalysis();

// The stored analysis (derived and stored on the first request); with options.stepOp the
// steps that op delimits, computed and not stored.
StepAnalysis loadOrAnalyzeSteps(Workspace& workspace, int64_t profileId,
                                const StepOptions& options = {});

}  // namespace stallscope::trace
