#include "importers/import_service.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "core/analysis/cache.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/sqlite.h"
#include "core/trace/trace_store.h"
#include "importers/run_import.h"

namespace stallscope {

namespace {
constexpr size_t kSniffBytes = 4096;

// "trace.jsonl.zst" -> "trace"
std::string baseName(const std::string& path) {
    std::string name = std::filesystem::path(path).filename().string();
    for (const char* ext : {".zst", ".gz", ".zstd"}) {
        if (name.size() > std::strlen(ext) && name.ends_with(ext))
            name.resize(name.size() - std::strlen(ext));
    }
    const auto dot = name.rfind('.');
    if (dot != std::string::npos && dot > 0) name.resize(dot);
    return name.empty() ? "profile" : name;
}
// The registered analyses that run at import (core/analysis), their notes merged into the
// profile's metadata by name ("transfers": {...}). They read the metadata just written.
void deriveAnalyses(Workspace& workspace, int64_t profileId, QJsonObject& meta) {
    const trace::TraceStore store(workspace, profileId);
    const QJsonObject notes = analysis::deriveAtImport(workspace, profileId, store);
    for (auto it = notes.begin(); it != notes.end(); ++it) meta.insert(it.key(), it.value());
}

// Inputs from this size on write the workspace directly (DirectWrites): below it the WAL's second
// copy costs little, and switching the journal mode and back would change the file's header even
// when the import fails.
constexpr uintmax_t kDirectWritesFrom = uintmax_t(32) << 20;

// The bytes of the files and directories (their files, recursively) to import.
uintmax_t inputBytes(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    uintmax_t total = 0;
    std::error_code ec;
    for (const std::string& path : paths) {
        if (fs::is_regular_file(path, ec)) {
            total += fs::file_size(path, ec);
        } else if (fs::is_directory(path, ec)) {
            for (auto it = fs::recursive_directory_iterator(path, ec);
                 !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
                if (it->is_regular_file(ec)) total += it->file_size(ec);
        }
        if (ec) ec.clear();
    }
    return total;
}

// Large imports of the command line write the workspace directly, while nothing else uses it.
std::unique_ptr<DirectWrites> directWritesFor(Workspace& workspace, const ImportRequest& request) {
    if (!request.directWrites || inputBytes(request.files) < kDirectWritesFrom) return nullptr;
    return std::make_unique<DirectWrites>(workspace);
}

}  // namespace

void Importer::readHost(HostImportContext& ctx) const {
    throw InputError(ctx.input.path() + ": " + format() +
                     " files cannot be read as one host of a multi-host run");
}

const Importer* findImporter(std::string_view format) {
    for (const Importer* imp : importers())
        if (imp->format() == format) return imp;
    return nullptr;
}

const Importer* detectImporter(const Sniff& sniff) {
    const Importer* best = nullptr;
    int bestScore = 0;
    for (const Importer* imp : importers()) {
        const int score = imp->detect(sniff);
        if (score > bestScore) {
            best = imp;
            bestScore = score;
        }
    }
    if (!best) {
        std::string known;
        for (const Importer* imp : importers())
            known += (known.empty() ? "" : ", ") + imp->format();
        throw InputError(sniff.path + ": unknown format (not one of: " + known +
                         "); name it with --format");
    }
    return best;
}

namespace {

// "results/" names "results".
std::string directoryName(const std::string& path) {
    const std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
    return normal.filename().empty() ? normal.parent_path().filename().string()
                                     : normal.filename().string();
}

}  // namespace

std::vector<ImportedProfile> importFiles(Workspace& workspace, const ImportRequest& request,
                                         Progress& progress) {
    if (request.files.empty()) throw InputError("import: no files given");
    if (workspace.readOnly())
        throw InputError(workspace.path() + ": workspace is read-only; cannot import");
    const Importer* forced = nullptr;
    if (!request.format.empty()) {
        forced = findImporter(request.format);
        if (!forced) throw InputError("unknown --format '" + request.format + "'");
    }
    std::vector<ImportedProfile> out;
    const std::unique_ptr<DirectWrites> direct = directWritesFor(workspace, request);
    sql::Transaction tx(workspace.db());
    // Runs of several hosts: each directory, and with asOne all the files together.
    struct Run {
        std::vector<RunMember> members;
        std::string source;
        std::vector<std::string> skipped;
    };
    std::vector<Run> runs;
    std::vector<std::string> files;
    // A directory that is one result (a Sniper output directory: sim.stats.sqlite3 beside its
    // sim.cfg and sim.out) is its one profile file, named after the directory.
    std::map<std::string, std::string> directoryNames;
    for (const std::string& path : request.files) {
        if (!std::filesystem::is_directory(path)) {
            files.push_back(path);
            continue;
        }
        std::vector<std::string> skipped;
        std::vector<RunMember> members = runMembers(path, request.format, &skipped);
        // Chakra ranks already make one profile from the rank-0 file (its companions).
        if (!members.front().importer->readsHosts() &&
            !members.front().importer->companions(members.front().path).empty()) {
            for (const RunMember& m : members) files.push_back(m.path);
            continue;
        }
        if (members.size() == 1 && !members.front().importer->readsHosts()) {
            files.push_back(members.front().path);
            directoryNames[members.front().path] = directoryName(path);
            continue;
        }
        if (!members.front().importer->readsHosts())
            throw InputError(path + ": is a directory of " + members.front().importer->format() +
                             " files; " + members.front().importer->format() +
                             " files cannot be the hosts of a run (XProf run directories and "
                             "folders of per-rank Kineto traces can); import the files "
                             "themselves");
        runs.push_back({std::move(members), path, std::move(skipped)});
    }
    if (request.asOne && !files.empty()) {
        runs.push_back({runMembers(files, request.format), files.front(), {}});
        files.clear();
    }
    const double perFile = 1.0 / static_cast<double>(files.size() + runs.size());
    for (size_t r = 0; r < runs.size(); ++r) {
        Progress runProgress([&](double fraction, const std::string& stage) {
            progress.report((static_cast<double>(r) + fraction) * perFile, stage);
        });
        RunOptions options;
        options.name = request.name;
        if (!request.name.empty() && runs.size() > 1)
            options.name += " " + std::filesystem::path(runs[r].source).filename().string();
        options.source = runs[r].source;
        options.skipped = runs[r].skipped;
        const ImportedProfile run = importRun(workspace, runs[r].members, options, runProgress);
        progress.report((static_cast<double>(r) + 0.99) * perFile, "analysing");
        // The same derivation as a one-host trace, noted in the run's metadata.
        sql::Statement read(workspace.db(), "SELECT metadata FROM profiles WHERE id = ?");
        read.bind(1, run.id);
        QJsonObject meta;
        if (read.step())
            meta = QJsonDocument::fromJson(QByteArray::fromStdString(std::string(read.text(0))))
                       .object();
        deriveAnalyses(workspace, run.id, meta);
        sql::Statement update(workspace.db(), "UPDATE profiles SET metadata = ? WHERE id = ?");
        update.bind(1, QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString())
            .bind(2, run.id);
        update.exec();
        out.push_back(run);
    }
    // Files another file of the request brings along (its companions) are not imported twice.
    // Companions follow from names alone, so no file is opened twice (inputs may be FIFOs).
    std::vector<std::string> covered;
    for (const std::string& path : files)
        for (const Importer* importer : forced ? std::vector<const Importer*>{forced} : importers())
            for (const std::string& c : importer->companions(path))
                if (c != path) covered.push_back(std::filesystem::absolute(c).lexically_normal());
    for (size_t f = 0; f < files.size(); ++f) {
        const std::string& path = files[f];
        if (!covered.empty() &&
            std::find(covered.begin(), covered.end(),
                      std::filesystem::absolute(path).lexically_normal()) != covered.end())
            continue;
        InputFile input(path);
        // The head is copied: reading further ahead may move the input's peek buffer.
        const std::string head(input.peek(kSniffBytes));
        Sniff sniff{path, head, input.compression(), [&input](size_t n) { return input.peek(n); }};
        const Importer* importer = forced ? forced : detectImporter(sniff);

        ProfileInfo info;
        const auto directory = directoryNames.find(path);
        const std::string own =
            directory != directoryNames.end() ? directory->second : baseName(path);
        std::string base = request.name.empty() ? own : request.name;
        if (!request.name.empty() && files.size() + runs.size() > 1) base += " " + own;
        info.name = workspace.uniqueName(base);
        info.kind = importer->kind();
        info.sourcePath = std::filesystem::absolute(path).string();
        info.sourceSize = static_cast<int64_t>(input.fileSize());
        const int64_t id = workspace.insertProfile(info);

        Progress fileProgress([&](double fraction, const std::string& stage) {
            progress.report((static_cast<double>(runs.size() + f) + fraction) * perFile, stage);
        });
        // The per-file progress forwards to the outer one, whose report() throws on cancel.
        ImportContext ctx{workspace, input, fileProgress, id};
        importer->run(ctx);
        progress.checkCancelled();

        // Read whatever the importer left so the hash covers the whole file.
        char sink[1 << 16];
        while (input.read(sink, sizeof sink) > 0) {
        }
        QJsonObject meta =
            QJsonDocument::fromJson(QByteArray::fromStdString(ctx.metadataJson)).object();
        meta.insert("format", QString::fromStdString(importer->format()));
        meta.insert("compression", compressionName(input.compression()));
        auto writeMetadata = [&] {
            sql::Statement update(workspace.db(),
                                  "UPDATE profiles SET source_hash = ?, metadata = ? WHERE id = ?");
            update.bind(1, input.contentHash())
                .bind(2, QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString())
                .bind(3, id);
            update.exec();
        };
        writeMetadata();
        // Analyses read the metadata just written (format, plane stats), then note themselves.
        if (info.kind == kinds::kTrace) {
            progress.report((static_cast<double>(runs.size() + f) + 0.99) * perFile, "analysing");
            deriveAnalyses(workspace, id, meta);
            writeMetadata();
        }
        out.push_back({id, info.kind, info.name});
        progress.report(static_cast<double>(runs.size() + f + 1) * perFile,
                        "imported " + info.name);
    }
    tx.commit();
    return out;
}

}  // namespace stallscope
