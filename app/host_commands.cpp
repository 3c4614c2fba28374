// Commands over the hosts of a multi-host run (issue 15): `hosts PROFILE [--json]` and
// `merge OUT.sqlite SHARD...` (`import --shard` is part of `import`, cli.cpp).
#include <QJsonDocument>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "app/terminal.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/trace/hosts.h"
#include "core/workspace.h"
#include "importers/run_import.h"

namespace stallscope {

namespace {

int cmdHosts(const std::vector<std::string>& args, const std::string& store) {
    bool json = false;
    std::vector<std::string> positional;
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--json")
            json = true;
        else if (args[i].starts_with("--"))
            throw InputError("unknown option " + args[i] + " for 'hosts'");
        else
            positional.push_back(args[i]);
    }
    if (positional.size() != 1) throw InputError("hosts: give exactly one PROFILE");
    auto ws = Workspace::openExisting(store);
    const ProfileInfo p = ws->resolveProfile(positional[0]);
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

int cmdMerge(const std::vector<std::string>& args) {
    std::string name;
    std::vector<std::string> positional;
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--name") {
            if (i + 1 >= args.size()) throw InputError("--name needs a value");
            name = args[++i];
        } else if (args[i].starts_with("--")) {
            throw InputError("unknown option " + args[i] + " for 'merge'");
        } else {
            positional.push_back(args[i]);
        }
    }
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

}  // namespace

bool runHostCommand(const std::vector<std::string>& args, const std::string& store, int& status) {
    if (args.empty()) return false;
    if (args[0] == "hosts") {
        status = cmdHosts(args, store);
        return true;
    }
    if (args[0] == "merge") {
        status = cmdMerge(args);
        return true;
    }
    return false;
}

}  // namespace stallscope
