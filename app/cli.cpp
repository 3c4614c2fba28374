#include "app/cli.h"

#include <unistd.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "app/commands.h"
#include "app/demo_workspace.h"
#include "app/replay_commands.h"
#include "app/terminal.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/progress.h"
#include "core/trace/hosts.h"
#include "core/workspace.h"
#include "importers/import_service.h"

namespace stallscope {

namespace {

constexpr const char* kUsage = R"(usage: stallscope [--store PATH] <command> [options]

Without a command, opens the GUI. Commands:
  import [--name N] [--format F] FILE...   import files (format detected from content); a
                                           DIR is one multi-host run (XProf run directory,
                                           per-rank Kineto traces)
  import --as-one FILE...                  the files are the hosts of one run: one profile
  import --shard OUT.sqlite FILE...        import the files as one run into a new shard
                                           workspace OUT (no --store needed), with the
                                           hosts' summaries
  merge OUT.sqlite SHARD... [--name N]     one run profile from shard workspaces' host
                                           summaries, without copying their slices
  hosts PROFILE [--json]                   per-host step time, the slowest host per step and
                                           its excess over the median, the op whose per-host
                                           time varies most
  list [--json]                            profiles in the workspace
  info PROFILE [--json]                    kind, counts, time range, top ops
  formats                                  the formats import understands
  dma PROFILE --json                       per-DMA lifetime, stall breakdown, backtails
                                           (traces: async copies, collectives, memcpys; ns)
  dma-compare A B --json                   before/after of two traces per transfer and run
  suggest PROFILE --json [--limit N]        optimization suggestions with predicted savings
                                           (trace profiles: the step recommendations)
  steps PROFILE [--json] [--step-op NAME]  step time and its breakdown per device (compute,
                                           communication, memcpy, memset, host_wait, input,
                                           idle), overlap, idle gaps, recommendations
  whatif PROFILE (--hoist DMA@INSTR)... | --apply-suggestions [--out F.jsonl] --json
  dcache PROFILE --json                    data-cache occupancy and fragmentation
  generate SCENARIO [--instructions N] [--seed S] --out FILE
                                           write a reference workload (allgather,
                                           allgather-pinned, matmul-starved,
                                           fragmentation, scale)
  render VIEW PROFILE [--against B] --out F.png [--size WxH] [--range FROM:TO]
                                           draw a view headless to PNG (compare: also
                                           --op NAME, --align-op NAME as for compare)
  absorption PROFILE [--json]              noise absorption per region/mode, classification
  cpi PROFILE [--classes] [--json]         CPI stacks per kernel and source, MAPE against hw
  estimates PROFILE [--json]               predicted vs measured, MAPE, speedup errors
  noise-probe --out F.csv [--quick] [--threads N]
                                           measure absorption on this machine (x86-64)
  compare A B [--json] [--op NAME] [--align-op NAME]
                                           before/after deltas of two profiles of one kind;
                                           traces: --op picks the CDF's op (default: largest
                                           total in A; "*": all ops), p50/p95 are nearest-rank
                                           (never interpolated); replays: --align-op shifts
                                           B so that HLO op starts with A's (its longest block)
  convert IN OUT                           replay trace JSONL <-> binary (.ssrp)
  demo                                     build the demo workspace, then open the GUI
                                           (or print a summary without a display)

PROFILE is a profile id or its unique name. --store selects the SQLite workspace
(default: $XDG_DATA_HOME/stallscope/workspace.sqlite).
)";

// Parsed command line of one subcommand.
struct Args {
    std::vector<std::string> positional;
    std::multimap<std::string, std::string> values;
    std::set<std::string> flags;

    bool has(const std::string& flag) const { return flags.count(flag) > 0; }
    std::string value(const std::string& option, const std::string& fallback = {}) const {
        auto it = values.find(option);
        return it == values.end() ? fallback : it->second;
    }
    std::vector<std::string> all(const std::string& option) const {
        std::vector<std::string> out;
        for (auto [it, end] = values.equal_range(option); it != end; ++it)
            out.push_back(it->second);
        return out;
    }
};

Args parseArgs(const std::vector<std::string>& args, size_t from,
               const std::set<std::string>& valueOptions,
               const std::set<std::string>& flagOptions) {
    Args out;
    for (size_t i = from; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() > 2 && a.starts_with("--")) {
            std::string name = a;
            std::string value;
            const auto eq = a.find('=');
            const bool inlineValue = eq != std::string::npos;
            if (inlineValue) {
                name = a.substr(0, eq);
                value = a.substr(eq + 1);
            }
            if (valueOptions.count(name)) {
                if (!inlineValue) {
                    if (i + 1 >= args.size()) throw InputError("option " + name + " needs a value");
                    value = args[++i];
                }
                out.values.emplace(name, value);
            } else if (flagOptions.count(name) && !inlineValue) {
                out.flags.insert(name);
            } else {
                throw InputError("unknown option " + a + " for '" + args[0] + "'");
            }
        } else {
            out.positional.push_back(a);
        }
    }
    return out;
}

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

int cmdImport(const std::vector<std::string>& args, const std::string& store) {
    const Args a = parseArgs(args, 1, {"--name", "--format", "--shard"}, {"--as-one"});
    if (a.positional.empty()) throw InputError("import: give at least one FILE");
    // A shard is a workspace of its own, made once from its inputs (merge reads it).
    const std::string shard = a.value("--shard");
    const std::string target = shard.empty() ? store : shard;
    if (!shard.empty() && std::filesystem::exists(shard))
        throw InputError(shard +
                         ": the shard workspace exists already; a shard is built once "
                         "from its files (remove it to build it again)");
    // A failed first import must not leave a new, empty workspace behind either.
    const bool storeExisted = std::filesystem::exists(target);
    try {
        auto ws = Workspace::open(target);
        Progress progress(terminalProgressBar());
        const CancelOnInterrupt interrupt(progress);
        ImportRequest request{a.positional, a.value("--name"), a.value("--format")};
        request.asOne = a.has("--as-one") || !shard.empty();
        const auto imported = importFiles(*ws, request, progress);
        // The hosts' summaries are what merge reads: computed now, stored in the shard.
        if (!shard.empty())
            for (const auto& p : imported) trace::loadOrAnalyzeHosts(*ws, p.id);
        clearTerminalProgressBar();
        for (const auto& p : imported)
            std::cout << p.id << '\t' << p.kind << '\t' << p.name << '\n';
    } catch (...) {
        clearTerminalProgressBar();
        if (!storeExisted) {
            std::error_code ignored;
            for (const char* suffix : {"", "-wal", "-shm", "-journal"})
                std::filesystem::remove(target + suffix, ignored);
        }
        throw;
    }
    return 0;
}

QJsonObject profileJson(const ProfileInfo& p) {
    QJsonObject o;
    o.insert("id", static_cast<qint64>(p.id));
    o.insert("name", QString::fromStdString(p.name));
    o.insert("kind", QString::fromStdString(p.kind));
    o.insert("source", QString::fromStdString(p.sourcePath));
    o.insert("source_size", static_cast<qint64>(p.sourceSize));
    o.insert("source_hash", QString::fromStdString(p.sourceHash));
    o.insert("imported_at", QString::fromStdString(p.importedAt));
    if (p.parentId) o.insert("parent_id", static_cast<qint64>(*p.parentId));
    o.insert("metadata",
             QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object());
    return o;
}

int cmdList(const std::vector<std::string>& args, const std::string& store) {
    const Args a = parseArgs(args, 1, {}, {"--json"});
    if (!a.positional.empty()) throw InputError("list takes no arguments");
    // Listing a workspace that does not exist yet shows it empty; it does not create the file.
    std::vector<ProfileInfo> profiles;
    if (std::filesystem::exists(store)) profiles = Workspace::openExisting(store)->profiles();
    if (a.has("--json")) {
        QJsonArray list;
        for (const auto& p : profiles) list.append(profileJson(p));
        printJson(QJsonObject{{"profiles", list}});
    } else {
        for (const auto& p : profiles)
            std::cout << p.id << '\t' << p.kind << '\t' << p.name << '\t' << p.sourcePath << '\n';
    }
    return 0;
}

int cmdInfo(const std::vector<std::string>& args, const std::string& store) {
    const Args a = parseArgs(args, 1, {}, {"--json"});
    if (a.positional.size() != 1) throw InputError("info: give exactly one PROFILE");
    auto ws = Workspace::openExisting(store);
    const ProfileInfo p = ws->resolveProfile(a.positional[0]);
    QJsonObject info = profileJson(p);
    if (const ProfileKind* kind = findProfileKind(p.kind)) {
        const QJsonObject kindInfo = kind->info(*ws, p);
        for (auto it = kindInfo.begin(); it != kindInfo.end(); ++it)
            info.insert(it.key(), it.value());
    }
    if (a.has("--json")) {
        printJson(info);
    } else {
        for (auto it = info.begin(); it != info.end(); ++it) {
            const QJsonValue v = it.value();
            std::string text = v.isString()   ? v.toString().toStdString()
                               : v.isDouble() ? QString::number(v.toDouble(), 'g', 15).toStdString()
                               : v.isBool()
                                   ? (v.toBool() ? "true" : "false")
                                   : QJsonDocument(v.isArray() ? QJsonDocument(v.toArray())
                                                               : QJsonDocument(v.toObject()))
                                         .toJson(QJsonDocument::Compact)
                                         .toStdString();
            std::cout << it.key().toStdString() << ": " << text << '\n';
        }
    }
    return 0;
}

int cmdFormats(const std::vector<std::string>& args) {
    parseArgs(args, 1, {}, {});
    for (const Importer* imp : importers())
        std::cout << imp->format() << '\t' << imp->kind() << '\t' << imp->description() << '\n';
    return 0;
}

}  // namespace

std::string takeStoreOption(std::vector<std::string>& args) {
    std::string store;
    for (size_t i = 1; i < args.size();) {
        if (args[i] == "--store") {
            if (i + 1 >= args.size()) throw InputError("--store needs a PATH");
            store = args[i + 1];
            args.erase(args.begin() + static_cast<long>(i),
                       args.begin() + static_cast<long>(i) + 2);
        } else if (args[i].starts_with("--store=")) {
            store = args[i].substr(8);
            args.erase(args.begin() + static_cast<long>(i));
        } else {
            ++i;
        }
    }
    return store.empty() ? Workspace::defaultPath() : store;
}

bool isCliCommand(const std::vector<std::string>& args) {
    static const std::set<std::string> commands{
        "import",    "list",        "info",    "formats",    "dma",         "suggest", "whatif",
        "dcache",    "generate",    "convert", "demo",       "help",        "--help",  "-h",
        "--version", "render",      "compare", "absorption", "noise-probe", "cpi",     "estimates",
        "steps",     "dma-compare", "hosts",   "merge"};
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--store") {
            ++i;
            continue;
        }
        if (args[i].starts_with("--store=")) continue;
        return commands.count(args[i]) > 0;
    }
    return false;
}

int runCli(const std::vector<std::string>& argsIn) {
    try {
        std::vector<std::string> args = argsIn;
        const std::string store = takeStoreOption(args);
        if (args.size() < 2) throw InputError("no command given\n" + std::string(kUsage));
        std::vector<std::string> sub(args.begin() + 1, args.end());
        const std::string& command = sub[0];
        if (command == "help" || command == "--help" || command == "-h") {
            std::cout << kUsage;
            return 0;
        }
        if (command == "--version") {
            std::cout << "stallscope " << STALLSCOPE_VERSION << '\n';
            return 0;
        }
        if (command == "import") return cmdImport(sub, store);
        if (command == "list") return cmdList(sub, store);
        if (command == "info") return cmdInfo(sub, store);
        if (command == "formats") return cmdFormats(sub);
        if (command == "demo") {
            ensureDemoWorkspace(store);
            std::cout << workspaceSummary(*Workspace::openExisting(store));
            return 0;
        }
        if (int status = 0; runStepCommand(sub, store, status)) return status;
        if (int status = 0; runHostCommand(sub, store, status)) return status;
        if (int status = 0; runTransferCommand(sub, store, status)) return status;
        if (int status = 0; runReplayCommand(sub, store, status)) return status;
        if (int status = 0; runRenderCommand(sub, store, status)) return status;
        if (int status = 0; runCpiCommand(sub, store, status)) return status;
        if (int status = 0; runNoiseCommand(sub, store, status)) return status;
        if (int status = 0; runCompareCommand(sub, store, status)) return status;
        throw InputError("unknown command '" + command + "'\n" + std::string(kUsage));
    } catch (const InputError& e) {
        std::cerr << "stallscope: error: " << e.what() << '\n';
        return 2;
    } catch (const Cancelled&) {
        std::cerr << "stallscope: error: cancelled; the workspace is unchanged\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "stallscope: error: " << e.what() << '\n';
        return 1;
    }
}

}  // namespace stallscope
