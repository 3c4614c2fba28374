// Step breakdown commands of trace profiles: `steps PROFILE [--json] [--step-op NAME]`.
// (`suggest` of a trace, transfer edits and step recommendations together: transfer_commands.cpp.)
#include <QJsonArray>
#include <QJsonDocument>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/trace/hosts.h"
#include "core/trace/step_analysis.h"
#include "core/workspace.h"

namespace stallscope {

namespace {

struct StepArgs {
    std::vector<std::string> positional;
    std::string stepOp;
    bool json = false;
    std::string limit;
};

StepArgs parse(const std::vector<std::string>& args, bool allowStepOp) {
    StepArgs a;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& s = args[i];
        if (s == "--json") {
            a.json = true;
        } else if ((s == "--step-op" && allowStepOp) || s == "--limit") {
            if (i + 1 >= args.size()) throw InputError(s + " needs a value");
            (s == "--limit" ? a.limit : a.stepOp) = args[++i];
        } else if (allowStepOp && s.starts_with("--step-op=")) {
            a.stepOp = s.substr(10);
        } else if (s.starts_with("--")) {
            throw InputError("unknown option " + s + " for '" + args[0] + "'");
        } else {
            a.positional.push_back(s);
        }
    }
    if (a.positional.size() != 1) throw InputError(args[0] + ": give exactly one PROFILE");
    return a;
}

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

int cmdSteps(const std::vector<std::string>& args, const std::string& store) {
    const StepArgs a = parse(args, true);
    auto ws = Workspace::openExisting(store);
    const ProfileInfo p = ws->resolveProfile(a.positional[0]);
    if (p.kind != kinds::kTrace)
        throw InputError("profile '" + p.name + "' is a " + p.kind +
                         " profile; steps needs a trace profile");
    const QJsonObject meta =
        QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object();
    if (trace::isMergedProfile(meta))
        throw InputError("profile '" + p.name +
                         "' is merged from shards and holds no slices; run steps on a host's "
                         "shard (hosts[].shard in info --json), or hosts on this profile");
    trace::StepOptions options;
    options.stepOp = a.stepOp;
    const trace::StepAnalysis analysis = trace::loadOrAnalyzeSteps(*ws, p.id, options);
    if (a.json) {
        QJsonObject o = trace::toJson(analysis);
        o.insert("id", qint64(p.id));
        o.insert("name", QString::fromStdString(p.name));
        printJson(o);
    } else {
        std::cout << trace::stepsTable(analysis);
    }
    return 0;
}

}  // namespace

bool runStepCommand(const std::vector<std::string>& args, const std::string& store, int& status) {
    if (args.empty()) return false;
    if (args[0] == "steps") {
        status = cmdSteps(args, store);
        return true;
    }
    return false;
}

}  // namespace stallscope
