// `dma PROFILE --json` and `suggest PROFILE --json` on trace profiles (CONTRACT §7): transfers
// derived from async copies, collectives and CUDA memcpys under the replay DMA model, times in
// ns. `dma-compare A B --json`: before/after per transfer and per module run. Replay profiles
// go on to replay_commands.cpp untouched.
#include <QJsonArray>
#include <QJsonDocument>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/trace/step_analysis.h"
#include "core/transfers/transfers.h"
#include "core/workspace.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

struct TransferArgs {
    std::vector<std::string> positional;
    bool json = false;
    std::string limit;
};

TransferArgs parseArgs(const std::vector<std::string>& args) {
    TransferArgs a;
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--json") {
            a.json = true;
        } else if (args[i] == "--limit") {
            if (i + 1 >= args.size()) throw InputError("--limit needs a value");
            a.limit = args[++i];
        } else if (args[i].starts_with("--")) {
            throw InputError("unknown option " + args[i] + " for '" + args[0] + "'");
        } else {
            a.positional.push_back(args[i]);
        }
    }
    return a;
}

transfers::Analysis analysisOf(Workspace& workspace, const std::string& name) {
    const ProfileInfo profile = workspace.resolveProfile(name);
    if (profile.kind != kinds::kTrace)
        throw InputError("profile '" + profile.name + "' is a " + profile.kind +
                         " profile, not a trace");
    return transfers::ofProfile(workspace, profile.id);
}

// `suggest` on a trace: the transfer edits first (their savings are re-simulated predictions),
// then the step recommendations (each the most of the step time it could recover: a bound, so
// they are not ranked against predictions).
QJsonObject traceSuggestions(Workspace& workspace, int64_t profileId,
                             const transfers::Analysis& analysis, const std::string& limit) {
    QJsonObject report = transfers::suggestJson(analysis);
    QJsonArray all = report.value("suggestions").toArray();
    for (const QJsonValue& step :
         trace::stepSuggestionsJson(trace::loadOrAnalyzeSteps(workspace, profileId))
             .value("suggestions")
             .toArray())
        all.append(step);
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

bool runTransferCommand(const std::vector<std::string>& args, const std::string& store,
                        int& status) {
    const std::string& command = args.at(0);
    if (command != "dma" && command != "suggest" && command != "dma-compare") return false;
    const TransferArgs a = parseArgs(args);
    if (command == "dma-compare") {
        if (a.positional.size() != 2)
            throw InputError("dma-compare: give two trace profiles, A (before) and B (after)");
        auto workspace = Workspace::openExisting(store);
        const auto before = analysisOf(*workspace, a.positional[0]);
        const auto after = analysisOf(*workspace, a.positional[1]);
        printJson(transfers::compareJson(before, after));
        status = 0;
        return true;
    }
    // dma/suggest: only trace profiles here; anything else is the replay commands' to answer.
    if (a.positional.size() != 1) return false;
    auto workspace = Workspace::openExisting(store);
    const ProfileInfo profile = workspace->resolveProfile(a.positional[0]);
    if (profile.kind != kinds::kTrace) return false;
    const auto analysis = transfers::ofProfile(*workspace, profile.id);
    if (command == "dma")
        transfers::writeDmaJson(analysis, std::cout);
    else
        printJson(traceSuggestions(*workspace, profile.id, analysis, a.limit));
    status = 0;
    return true;
}

}  // namespace stallscope
