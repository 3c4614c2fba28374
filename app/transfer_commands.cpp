// `dma PROFILE --json` and `suggest PROFILE --json` on trace profiles (CONTRACT §7): transfers
// derived from async copies, collectives and CUDA memcpys under the replay DMA model, times in
// ns. `dma-compare A B --json`: before/after per transfer and per module run. Replay profiles
// go on to replay_commands.cpp untouched.
#include <QJsonArray>
#include <QJsonDocument>
#include <iostream>

#include "app/commands.h"
#include "core/analysis/cache.h"
#include "core/compare/transfer_compare.h"
#include "core/errors.h"
#include "core/graph/critical_path.h"
#include "core/kinds.h"
#include "core/trace/step_registration.h"
#include "core/transfers/transfers_registration.h"
#include "core/workspace.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

transfers::Analysis analysisOf(Workspace& workspace, const std::string& name) {
    const ProfileInfo profile = workspace.resolveProfile(name);
    if (profile.kind != kinds::kTrace)
        throw InputError("profile '" + profile.name + "' is a " + profile.kind +
                         " profile, not a trace");
    return transfers::ofProfile(workspace, profile.id);
}

// The step recommendations, each with its re-simulated saving on the step graph beside the
// bound it states ("simulated_saving_ns", "simulated_edit"), the largest saving first; those no
// edit expresses after them in their own order.
QJsonArray stepSuggestions(Workspace& workspace, int64_t profileId) {
    const auto path = analysis::get(workspace, profileId, graph::criticalPathAnalysis());
    std::vector<std::pair<int64_t, QJsonObject>> ranked;
    for (const QJsonValue& v :
         trace::stepSuggestionsJson(trace::loadOrAnalyzeSteps(workspace, profileId))
             .value("suggestions")
             .toArray()) {
        QJsonObject step = v.toObject();
        int64_t saving = INT64_MIN;
        for (const graph::StepSaving& s : path->savings)
            if (QString::fromStdString(s.kind) == step.value("kind").toString()) {
                saving = s.saving();
                step.insert("simulated_saving_ns", qint64(saving));
                step.insert("simulated_step_ns", qint64(s.predicted));
                step.insert("simulated_edit", QString::fromStdString(s.edit));
            }
        ranked.emplace_back(saving, step);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    QJsonArray out;
    for (const auto& [saving, step] : ranked) out.append(step);
    return out;
}

// `suggest` on a trace: the transfer edits first (their savings are re-simulated predictions),
// then the step recommendations by their re-simulated saving.
QJsonObject traceSuggestions(Workspace& workspace, int64_t profileId,
                             const transfers::Analysis& analysis, const std::string& limit) {
    QJsonObject report = transfers::suggestJson(analysis);
    QJsonArray all = report.value("suggestions").toArray();
    for (const QJsonValue& step : stepSuggestions(workspace, profileId)) all.append(step);
    report.insert("suggestions", all);
    if (!limit.empty()) {
        qsizetype keep = 0;
        try {
            keep = qsizetype(std::stoull(limit));
        } catch (const std::exception&) {
            throw InputError("--limit must be a whole number, not '" + limit + "'");
        }
        QJsonArray all = report.value("suggestions").toArray();
        report.insert("total_suggestions", all.size());
        while (all.size() > keep) all.removeLast();
        report.insert("suggestions", all);
    }
    return report;
}

}  // namespace

int runDmaCompare(const cli::Options& o) {
    o.expect(2, "give two trace profiles, A (before) and B (after)");
    auto workspace = Workspace::openExisting(o.store);
    const auto before = analysisOf(*workspace, o.positional[0]);
    const auto after = analysisOf(*workspace, o.positional[1]);
    printJson(
        compare::transferComparisonJson(compare::compareTransfers(before, after), before, after));
    return 0;
}

int runTraceDma(const cli::Options&, Workspace& workspace, const ProfileInfo& profile) {
    transfers::writeDmaJson(transfers::ofProfile(workspace, profile.id), std::cout);
    return 0;
}

int runTraceSuggest(const cli::Options& o, Workspace& workspace, const ProfileInfo& profile) {
    const auto analysis = transfers::ofProfile(workspace, profile.id);
    printJson(traceSuggestions(workspace, profile.id, analysis, o.value("--limit")));
    return 0;
}

}  // namespace stallscope
