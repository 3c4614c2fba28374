// The commands on the workspace itself: import, list, info, formats, demo.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "app/demo_workspace.h"
#include "app/terminal.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/progress.h"
#include "core/trace/hosts_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

}  // namespace

int runImport(const cli::Options& a) {
    const std::string& store = a.store;
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
        request.directWrites = true;
        const auto imported = importFiles(*ws, request, progress);
        // The hosts' summaries are what merge reads: computed now, stored in the shard.
        if (!shard.empty())
            for (const auto& p : imported) trace::loadOrAnalyzeHosts(*ws, p.id);
        clearTerminalProgressBar();
        for (const auto& p : imported)
            std::cout << p.id << '\t' << p.kind << '\t' << p.name << '\n';
    } catch (...) {
        clearTerminalProgressBar();
        if (!storeExisted && std::filesystem::exists(target)) Workspace::removeIfUnused(target);
        throw;
    }
    return 0;
}

namespace {

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

}  // namespace

int runList(const cli::Options& a) {
    const std::string& store = a.store;
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

int runInfo(const cli::Options& a) {
    if (a.positional.size() != 1) throw InputError("info: give exactly one PROFILE");
    auto ws = Workspace::openExisting(a.store);
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

int runFormats(const cli::Options& a) {
    if (!a.positional.empty()) throw InputError("formats takes no arguments");
    for (const Importer* imp : importers())
        std::cout << imp->format() << '\t' << imp->kind() << '\t' << imp->description() << '\n';
    return 0;
}

int runDemo(const cli::Options& o) {
    if (!o.positional.empty()) throw InputError("demo takes no arguments");
    ensureDemoWorkspace(o.store);
    std::cout << workspaceSummary(*Workspace::openExisting(o.store));
    return 0;
}

}  // namespace stallscope
