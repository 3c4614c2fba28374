// Commands over the hosts of a multi-host run (issue 15): `hosts PROFILE [--json]` and
// `merge OUT.sqlite SHARD...` (`import --shard` is part of `import`, cli.cpp).
#include <QJsonDocument>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "app/terminal.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/trace/hosts_registration.h"
#include "core/workspace.h"
#include "importers/run_import.h"

namespace stallscope {

namespace {}  // namespace

int runHosts(const cli::Options& o) {
    const bool json = o.has("--json");
    auto ws = Workspace::openExisting(o.store);
    const ProfileInfo p = ws->resolveProfile(o.only());
    if (p.kind != kinds::kTrace)
        throw InputError("profile '" + p.name + "' is a " + p.kind +
                         " profile; hosts needs a trace profile");
    const trace::HostsAnalysis analysis = trace::loadOrAnalyzeHosts(*ws, p.id);
    if (json) {
        QJsonObject o = trace::toJson(analysis);
        o.insert("id", qint64(p.id));
        o.insert("name", QString::fromStdString(p.name));
        std::cout << QJsonDocument(o).toJson(QJsonDocument::Indented).toStdString();
    } else {
        std::cout << trace::hostsTable(analysis);
    }
    return 0;
}

int runMerge(const cli::Options& o) {
    const std::string name = o.value("--name");
    const std::vector<std::string>& positional = o.positional;
    if (positional.size() < 2) throw InputError("merge: give OUT.sqlite and at least one SHARD");
    const std::string out = positional[0];
    const std::vector<std::string> shards(positional.begin() + 1, positional.end());
    const bool existed = std::filesystem::exists(out);
    try {
        auto ws = Workspace::open(out);
        Progress progress(terminalProgressBar());
        const ImportedProfile p = mergeShards(*ws, shards, name, progress);
        clearTerminalProgressBar();
        std::cout << p.id << '\t' << p.kind << '\t' << p.name << '\n';
    } catch (...) {
        clearTerminalProgressBar();
        if (!existed) {
            std::error_code ignored;
            for (const char* suffix : {"", "-wal", "-shm", "-journal"})
                std::filesystem::remove(out + suffix, ignored);
        }
        throw;
    }
    return 0;
}

}  // namespace stallscope
