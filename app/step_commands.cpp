// Step breakdown commands of trace profiles: `steps PROFILE [--json] [--step-op NAME]`.
// (`suggest` of a trace, transfer edits and step recommendations together: transfer_commands.cpp.)
#include <QJsonArray>
#include <QJsonDocument>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/trace/hosts.h"
#include "core/trace/step_registration.h"
#include "core/workspace.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

}  // namespace

int runSteps(const cli::Options& o) {
    auto ws = Workspace::openExisting(o.store);
    const ProfileInfo p = ws->resolveProfile(o.only());
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
    options.stepOp = o.value("--step-op");
    const trace::StepAnalysis analysis = trace::loadOrAnalyzeSteps(*ws, p.id, options);
    if (o.has("--json")) {
        QJsonObject o = trace::toJson(analysis);
        o.insert("id", qint64(p.id));
        o.insert("name", QString::fromStdString(p.name));
        printJson(o);
    } else {
        std::cout << trace::stepsTable(analysis);
    }
    return 0;
}

}  // namespace stallscope
