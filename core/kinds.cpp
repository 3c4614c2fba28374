#include "core/kinds.h"

#include <QJsonDocument>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "core/analysis/cache.h"
#include "core/compare/kind_compare.h"
#include "core/compare/replay_compare.h"
#include "core/compare/step_compare.h"
#include "core/compare/trace_compare.h"
#include "core/cpi/cpi.h"
#include "core/errors.h"
#include "core/estimates/estimates.h"
#include "core/kind_info.h"
#include "core/noise/absorption.h"
#include "core/replay/codec.h"
#include "core/replay/report.h"
#include "core/replay/suggest.h"
#include "core/trace/hosts.h"
#include "core/trace/step_registration.h"
#include "core/trace/trace_store.h"

namespace stallscope {
namespace {

std::string percent(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", value);
    return text;
}

// ---- replay ---------------------------------------------------------------------------------

QJsonObject replayInfo(const Workspace& workspace, const ProfileInfo& profile) {
    const replay::InstructionStream trace = replay::loadInstructionStream(workspace, profile.id);
    return replay::replayInfo(trace, replay::simulate(trace), profile.id);
}

std::string replaySummary(const Workspace& workspace, const ProfileInfo& profile) {
    const replay::InstructionStream trace = replay::loadInstructionStream(workspace, profile.id);
    const replay::Analysis analysis = replay::analyze(trace);
    const auto& sim = analysis.sim;
    const double stallShare =
        sim.totalCycles ? 100.0 * double(sim.stallCycles) / double(sim.totalCycles) : 0;
    std::ostringstream out;
    out << ": " << trace.instrs.size() << " instructions, " << trace.dmas.size() << " DMAs, "
        << sim.totalCycles << " cycles, " << sim.stallCycles << " stalled (" << percent(stallShare)
        << ": " << sim.baseStallCycles << " base latency, " << sim.transferStallCycles
        << " transfer)";
    if (!analysis.suggestions.empty())
        out << "\n      " << analysis.suggestions.size()
            << " suggestion(s); best: " << analysis.suggestions.front().text;
    return out.str();
}

QJsonObject compareReplays(const Workspace& workspace, const ProfileInfo& a, const ProfileInfo& b,
                           const CompareOptions& options) {
    const replay::InstructionStream ta = replay::loadInstructionStream(workspace, a.id);
    const replay::InstructionStream tb = replay::loadInstructionStream(workspace, b.id);
    replay::AnalysisOptions analysisOptions;
    analysisOptions.withSuggestions = false;
    const auto analysisA = replay::analyze(ta, analysisOptions);
    const auto analysisB = replay::analyze(tb, analysisOptions);
    std::optional<replay::Alignment> alignment;
    if (!options.alignOp.empty())
        alignment = replay::alignAtOp(ta, analysisA.sim, tb, analysisB.sim, options.alignOp);
    return replay::comparisonJson(replay::compareReplays(ta, analysisA, tb, analysisB), ta, tb,
                                  alignment);
}

// ---- noise ----------------------------------------------------------------------------------

std::string noiseSummary(const Workspace& workspace, const ProfileInfo& profile) {
    const noise::AbsorptionReport report = noise::analyzeProfile(workspace, profile.id);
    std::ostringstream out;
    out << ": " << report.runs << " runs, " << report.curves.size() << " curves";
    for (const noise::Classification& c : report.classifications)
        out << "\n      " << c.region << " on " << c.machine << ": " << noise::className(c.cls)
            << (c.uncertain ? " (uncertain)" : "") << " (" << c.evidence.text << ")";
    return out.str();
}

// ---- cpi, estimates -------------------------------------------------------------------------

std::string cpiSummary(const Workspace& workspace, const ProfileInfo& profile) {
    const cpi::CpiData data = cpi::loadCpiData(workspace, profile.id);
    std::ostringstream out;
    out << ": " << data.kernels.size() << " kernels, " << data.sources.size() << " source(s)";
    for (const cpi::ModelMape& m : cpi::computeMape(data).overall)
        out << "; MAPE " << m.model << " " << percent(m.mapePct);
    return out.str();
}

std::string estimatesSummary(const Workspace& workspace, const ProfileInfo& profile) {
    const estimates::EstimateData data = estimates::loadEstimates(workspace, profile.id);
    std::ostringstream out;
    out << ": " << data.rows.size() << " rows, " << data.estimators.size() << " estimator(s), "
        << data.hardware.size() << " hardware target(s)";
    for (const estimates::EstimatorMape& m : estimates::analyzeEstimates(data).byEstimator)
        out << "; MAPE " << m.estimator << " " << percent(m.mapePct);
    return out.str();
}

// ---- trace ----------------------------------------------------------------------------------

std::string traceSummary(const Workspace& workspace, const ProfileInfo& profile) {
    const QJsonObject info = trace::TraceStore(workspace, profile.id).infoJson(1);
    char span[32];
    std::snprintf(span, sizeof span, "%.2f ms",
                  (info.value("end").toDouble() - info.value("start").toDouble()) / 1e6);
    std::ostringstream out;
    out << ": " << info.value("slices").toInteger() << " slices on "
        << info.value("tracks").toInteger() << " tracks, " << info.value("flows").toInteger()
        << " flows over " << span;
    const QJsonObject metadata =
        QJsonDocument::fromJson(QByteArray::fromStdString(profile.metadataJson)).object();
    if (const auto hosts = trace::runHosts(metadata); !hosts.empty())
        out << "; " << hosts.size() << " hosts";
    // The import's note on its transfers (the stored analysis can be millions of records).
    const QJsonObject transfers = metadata.value("transfers").toObject();
    if (const qint64 count = transfers.value("transfers").toInteger(); count > 0) {
        out << "; " << count << " transfers";
        const qint64 runs = transfers.value("runs_ns").toInteger();
        if (runs > 0)
            out << ", "
                << percent(100.0 * double(transfers.value("stall_ns").toInteger()) / double(runs))
                << " of their runs stalled at the waits";
    }
    return out.str();
}

QJsonObject compareTraces(const Workspace& workspace, const ProfileInfo& a, const ProfileInfo& b,
                          const CompareOptions& options) {
    const trace::TraceStore sa(workspace, a.id);
    const trace::TraceStore sb(workspace, b.id);
    auto durationsA = trace::collectDurations(sa);
    if (!options.cdfOp.empty() && options.cdfOp != trace::kAllOps &&
        !durationsA.byOp.count(options.cdfOp))
        throw InputError("compare: --op: no op '" + options.cdfOp + "' in '" + a.name + "'");
    QJsonObject result = trace::comparisonJson(
        trace::compareTraces(std::move(durationsA), trace::collectDurations(sb), options.cdfOp));
    // Where the step time goes, side by side (stored analyses when there are, else computed).
    const auto& steps = trace::stepsAnalysis();
    result.insert("steps", compare::stepComparisonJson(
                               compare::compareSteps(*analysis::read(workspace, a.id, steps),
                                                     *analysis::read(workspace, b.id, steps))));
    return result;
}

// The kinds that take a compare option, for the message that refuses it ("replay").
std::string kindsTaking(std::string_view option) {
    std::string names;
    for (const ProfileKind& kind : profileKinds())
        if (std::find(kind.compareOptions.begin(), kind.compareOptions.end(), option) !=
            kind.compareOptions.end())
            names += (names.empty() ? "" : ", ") + std::string(kind.name);
    return names;
}

}  // namespace

const std::vector<ProfileKind>& profileKinds() {
    static const std::vector<ProfileKind> all{
        {kinds::kReplay, replayInfo, replaySummary, compareReplays, {"--align-op"}},
        {kinds::kNoise,
         [](const Workspace& w, const ProfileInfo& p) { return noiseInfoJson(w, p.id); },
         noiseSummary,
         [](const Workspace& w, const ProfileInfo& a, const ProfileInfo& b, const CompareOptions&) {
             return compareAbsorption(noise::analyzeProfile(w, a.id),
                                      noise::analyzeProfile(w, b.id));
         },
         {}},
        {kinds::kCpi,
         [](const Workspace& w, const ProfileInfo& p) { return cpiInfoJson(w, p.id); },
         cpiSummary,
         [](const Workspace& w, const ProfileInfo& a, const ProfileInfo& b, const CompareOptions&) {
             return compareCpi(cpi::loadCpiData(w, a.id), cpi::loadCpiData(w, b.id));
         },
         {}},
        {kinds::kEstimates,
         [](const Workspace& w, const ProfileInfo& p) { return estimatesInfoJson(w, p.id); },
         estimatesSummary,
         {},
         {}},
        {kinds::kTrace,
         [](const Workspace& w, const ProfileInfo& p) {
             return trace::TraceStore(w, p.id).infoJson();
         },
         traceSummary,
         compareTraces,
         {"--op"}},
    };
    return all;
}

const ProfileKind* findProfileKind(std::string_view name) {
    for (const ProfileKind& kind : profileKinds())
        if (kind.name == name) return &kind;
    return nullptr;
}

QJsonObject compareProfiles(const Workspace& workspace, const ProfileInfo& a, const ProfileInfo& b,
                            const CompareOptions& options) {
    if (a.kind != b.kind)
        throw InputError("compare: '" + a.name + "' is a " + a.kind + " profile and '" + b.name +
                         "' a " + b.kind + " profile; compare profiles of the same kind");
    const ProfileKind* kind = findProfileKind(a.kind);
    const auto takes = [kind](std::string_view option) {
        return kind && std::find(kind->compareOptions.begin(), kind->compareOptions.end(),
                                 option) != kind->compareOptions.end();
    };
    for (const auto& [option, value] :
         {std::pair<std::string_view, const std::string&>{"--align-op", options.alignOp},
          std::pair<std::string_view, const std::string&>{"--op", options.cdfOp}})
        if (!value.empty() && !takes(option))
            throw InputError("compare: " + std::string(option) + " applies to " +
                             kindsTaking(option) + " profiles, not " + a.kind);
    if (!kind || !kind->compares())
        throw InputError("compare: " + a.kind + " profiles have no before/after comparison");
    QJsonObject result = kind->compare(workspace, a, b, options);
    for (const auto& [key, profile] : {std::pair<const char*, const ProfileInfo&>{"a", a},
                                       std::pair<const char*, const ProfileInfo&>{"b", b}}) {
        QJsonObject side = result.value(key).toObject();
        side.insert("id", static_cast<qint64>(profile.id));
        side.insert("name", QString::fromStdString(profile.name));
        result.insert(key, side);
    }
    return result;
}

std::string workspaceSummary(const Workspace& workspace) {
    std::ostringstream out;
    const auto profiles = workspace.profiles();
    out << profiles.size() << " profile(s)\n";
    for (const auto& p : profiles) {
        out << "  [" << p.id << "] " << p.name << " (" << p.kind << ")";
        if (const ProfileKind* kind = findProfileKind(p.kind)) out << kind->summary(workspace, p);
        out << '\n';
    }
    return out.str();
}

}  // namespace stallscope
