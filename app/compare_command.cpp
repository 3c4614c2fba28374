// `compare A B --json`: before/after deltas of two profiles of the same kind (CONTRACT §5).
#include <QJsonDocument>
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/commands.h"
#include "core/compare/kind_compare.h"
#include "core/compare/replay_compare.h"
#include "core/compare/trace_compare.h"
#include "core/errors.h"
#include "core/replay/codec.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"

namespace stallscope {

bool runCompareCommand(const std::vector<std::string>& args, const std::string& store,
                       int& status) {
    if (args.at(0) != "compare") return false;
    std::vector<std::string> names;
    bool json = false;
    // Trace profiles: the op whose durations the CDFs show (default: the largest total in A;
    // "*": every op, each normalized to its own median in A).
    std::string cdfOp;
    std::string alignOp;  // replay profiles: align both runs at this HLO op's first start
    for (size_t i = 1; i < args.size(); ++i) {
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw InputError(args[i] + " needs a value");
            return args[++i];
        };
        if (args[i] == "--json")
            json = true;
        else if (args[i] == "--op")
            cdfOp = value();
        else if (args[i] == "--align-op")
            alignOp = value();
        else if (args[i].starts_with("--"))
            throw InputError("unknown option " + args[i] + " for 'compare'");
        else
            names.push_back(args[i]);
    }
    if (names.size() != 2) throw InputError("compare: give two profiles, A (before) and B (after)");
    auto workspace = Workspace::openExisting(store);
    const ProfileInfo a = workspace->resolveProfile(names[0]);
    const ProfileInfo b = workspace->resolveProfile(names[1]);
    if (a.kind != b.kind)
        throw InputError("compare: '" + a.name + "' is a " + a.kind + " profile and '" + b.name +
                         "' a " + b.kind + " profile; compare profiles of the same kind");
    if (!alignOp.empty() && a.kind != "replay")
        throw InputError("compare: --align-op applies to replay profiles, not " + a.kind);
    if (!cdfOp.empty() && a.kind != "trace")
        throw InputError("compare: --op applies to trace profiles, not " + a.kind);
    QJsonObject result;
    if (a.kind == "replay") {
        const replay::InstructionStream ta = replay::loadInstructionStream(*workspace, a.id);
        const replay::InstructionStream tb = replay::loadInstructionStream(*workspace, b.id);
        replay::AnalysisOptions options;
        options.withSuggestions = false;
        const auto analysisA = replay::analyze(ta, options);
        const auto analysisB = replay::analyze(tb, options);
        std::optional<replay::Alignment> alignment;
        if (!alignOp.empty())
            alignment = replay::alignAtOp(ta, analysisA.sim, tb, analysisB.sim, alignOp);
        result = replay::comparisonJson(replay::compareReplays(ta, analysisA, tb, analysisB), ta,
                                        tb, alignment);
    } else if (a.kind == "trace") {
        const trace::TraceStore sa(*workspace, a.id);
        const trace::TraceStore sb(*workspace, b.id);
        auto durationsA = trace::collectDurations(sa);
        if (!cdfOp.empty() && cdfOp != trace::kAllOps && !durationsA.byOp.count(cdfOp))
            throw InputError("compare: --op: no op '" + cdfOp + "' in '" + a.name + "'");
        result = trace::comparisonJson(
            trace::compareTraces(std::move(durationsA), trace::collectDurations(sb), cdfOp));
    } else if (a.kind == "cpi") {
        result = compareCpi(cpi::loadCpiData(*workspace, a.id), cpi::loadCpiData(*workspace, b.id));
    } else if (a.kind == "noise") {
        result = compareAbsorption(noise::analyzeProfile(*workspace, a.id),
                                   noise::analyzeProfile(*workspace, b.id));
    } else {
        throw InputError("compare: " + a.kind + " profiles have no before/after comparison");
    }
    QJsonObject ids = result.value("a").toObject();
    ids.insert("id", static_cast<qint64>(a.id));
    ids.insert("name", QString::fromStdString(a.name));
    result.insert("a", ids);
    ids = result.value("b").toObject();
    ids.insert("id", static_cast<qint64>(b.id));
    ids.insert("name", QString::fromStdString(b.name));
    result.insert("b", ids);
    if (json)
        std::cout << QJsonDocument(result).toJson(QJsonDocument::Indented).toStdString();
    else
        std::cout << result.value("summary").toString().toStdString() << '\n';
    status = 0;
    return true;
}

}  // namespace stallscope
