#include "core/trace/step_registration.h"

#include <QJsonDocument>

#include "core/analysis/cache.h"
#include "core/errors.h"
#include "core/trace/trace_format.h"
#include "core/trace/trace_store.h"

namespace stallscope::trace {

std::string_view StepsAnalysis::reads() const {
    return "level-0 slices of every track (device activity, host threads, step markers), "
           "launch flows or correlation ids";
}

bool StepsAnalysis::appliesTo(const TraceStore&) const {
    return true;  // every trace has at least one step: the whole trace
}

StepAnalysis StepsAnalysis::compute(const TraceStore& store) const {
    return analyzeSteps(store);
}

std::string StepsAnalysis::encodeResult(const StepAnalysis& result) const {
    const QByteArray json = QJsonDocument(toJson(result)).toJson(QJsonDocument::Compact);
    std::string packed;
    packChunk(std::string_view(json.constData(), size_t(json.size())), packed);
    return packed;
}

StepAnalysis StepsAnalysis::decodeResult(std::string_view payload) const {
    const std::string raw = unpackChunk(payload);
    QJsonParseError error{};
    const QJsonDocument doc =
        QJsonDocument::fromJson(QByteArray(raw.data(), qsizetype(raw.size())), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        throw Failure("stored step analysis: not JSON");
    return stepAnalysisFromJson(doc.object());
}

const StepsAnalysis& stepsAnalysis() {
    static const StepsAnalysis instance;
    return instance;
}

StepAnalysis loadOrAnalyzeSteps(Workspace& workspace, int64_t profileId,
                                const StepOptions& options) {
    if (!options.stepOp.empty()) return analyzeSteps(TraceStore(workspace, profileId), options);
    return *analysis::get(workspace, profileId, stepsAnalysis());
}

}  // namespace stallscope::trace
