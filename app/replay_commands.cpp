#include <QJsonArray>
#include <QJsonDocument>
#include <fstream>
#include <iostream>

#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/open_workspaces.h"
#include "core/replay/codec.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/report.h"
#include "core/replay/suggest.h"
#include "core/replay/whatif.h"
#include "core/workspace.h"
#include "importers/replay/replay_reader.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

// What the replay commands take from their command line.
struct ReplayArgs {
    std::vector<std::string> positional;
    std::vector<std::string> hoists;
    std::string out;
    bool json = false;
    bool applySuggestions = false;
    std::string instructions, seed, limit;
};

ReplayArgs fromOptions(const cli::Options& o) {
    ReplayArgs a;
    a.positional = o.positional;
    a.hoists = o.all("--hoist");
    a.out = o.value("--out");
    a.json = o.has("--json");
    a.applySuggestions = o.has("--apply-suggestions");
    a.instructions = o.value("--instructions");
    a.seed = o.value("--seed");
    a.limit = o.value("--limit");
    return a;
}

uint64_t parseCount(const std::string& text, const char* what) {
    try {
        size_t used = 0;
        const unsigned long long v = std::stoull(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return v;
    } catch (const std::exception&) {
        throw InputError(std::string(what) + " must be a whole number, not '" + text + "'");
    }
}

struct LoadedReplay {
    std::unique_ptr<Workspace> workspace;
    ProfileInfo profile;
    replay::InstructionStream trace;
};

LoadedReplay loadReplay(const std::string& store, const std::string& name) {
    LoadedReplay r;
    r.workspace = Workspace::openExisting(store);
    r.profile = r.workspace->resolveProfile(name);
    if (r.profile.kind != kinds::kReplay)
        throw InputError("profile '" + r.profile.name + "' is a " + r.profile.kind +
                         " profile, not a replay trace");
    r.trace = replay::loadInstructionStream(*r.workspace, r.profile.id);
    return r;
}

void writeTraceFile(const replay::InstructionStream& trace, const std::string& path,
                    const std::vector<uint32_t>* origIndex) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw InputError(path + ": cannot write");
    if (path.ends_with(".ssrp"))
        replay::writeBinary(trace, out, origIndex);
    else
        replay::writeJsonl(trace, out, origIndex);
    out.close();
    if (!out) throw Failure(path + ": write failed");
}

std::string onlyProfile(const ReplayArgs& a, const char* command) {
    if (a.positional.size() != 1)
        throw InputError(std::string(command) + ": give exactly one PROFILE");
    return a.positional[0];
}

int cmdDma(const ReplayArgs& a, const std::string& store) {
    const auto r = loadReplay(store, onlyProfile(a, "dma"));
    replay::AnalysisOptions options;
    options.withSuggestions = false;
    const auto analysis = replay::analyze(r.trace, options);
    printJson(replay::dmaReport(r.trace, analysis));
    return 0;
}

int cmdSuggest(const ReplayArgs& a, const std::string& store) {
    const auto r = loadReplay(store, onlyProfile(a, "suggest"));
    const auto analysis = replay::analyze(r.trace);
    QJsonObject report = replay::suggestReport(r.trace, analysis);
    if (!a.limit.empty()) {
        // Suggestions come best first; --limit keeps the top N (10^7-instruction traces have
        // hundreds of thousands).
        const auto keep = static_cast<qsizetype>(parseCount(a.limit, "--limit"));
        QJsonArray all = report.value("suggestions").toArray();
        report.insert("total_suggestions", all.size());
        while (all.size() > keep) all.removeLast();
        report.insert("suggestions", all);
    }
    printJson(report);
    return 0;
}

int cmdDcache(const ReplayArgs& a, const std::string& store) {
    const auto r = loadReplay(store, onlyProfile(a, "dcache"));
    replay::AnalysisOptions options;
    options.withSuggestions = false;
    const auto analysis = replay::analyze(r.trace, options);
    printJson(replay::dcacheReport(analysis.dcache));
    return 0;
}

int cmdWhatif(const ReplayArgs& a, const std::string& store) {
    const std::string name = onlyProfile(a, "whatif");
    if (a.hoists.empty() == !a.applySuggestions)
        throw InputError("whatif: give --hoist DMA@INSTR (repeatable) or --apply-suggestions");
    const auto r = loadReplay(store, name);
    replay::WhatifResult result;
    if (a.applySuggestions) {
        result = replay::applyAllSuggestions(r.trace);
    } else {
        std::vector<replay::HoistEdit> edits;
        for (const std::string& h : a.hoists) {
            const auto at = h.find('@');
            if (at == std::string::npos)
                throw InputError(
                    "--hoist takes DMA@INSTR (a DMA id and an instruction index), not '" + h + "'");
            replay::HoistEdit edit;
            edit.dmaId = static_cast<int64_t>(parseCount(h.substr(0, at), "the DMA id of --hoist"));
            edit.beforeInstr =
                static_cast<uint32_t>(parseCount(h.substr(at + 1), "the instruction of --hoist"));
            edits.push_back(edit);
        }
        result = replay::applyHoists(r.trace, edits);
    }
    // Every edited trace is proven to read what the original read before anyone sees it.
    const std::string broken =
        replay::verifyDependencies(r.trace, result.edited.trace, result.edited.origIndex);
    if (!broken.empty())
        throw Failure("whatif: the edited trace would break a dependency (" + broken +
                      "); nothing was written");
    if (!a.out.empty()) writeTraceFile(result.edited.trace, a.out, &result.edited.origIndex);
    QJsonObject report = replay::whatifReport(result);
    report.insert("dependencies_verified", true);
    printJson(report);
    return 0;
}

int cmdGenerate(const ReplayArgs& a) {
    if (a.positional.size() != 1) throw InputError("generate: give exactly one SCENARIO");
    if (a.out.empty()) throw InputError("generate: --out FILE is required");
    replay::GenerateOptions options;
    if (!a.instructions.empty())
        options.instructions = parseCount(a.instructions, "--instructions");
    if (!a.seed.empty()) options.seed = parseCount(a.seed, "--seed");
    const replay::InstructionStream trace = replay::generateWorkload(a.positional[0], options);
    writeTraceFile(trace, a.out, nullptr);
    std::cerr << "wrote " << trace.instrs.size() << " instructions, " << trace.dmas.size()
              << " DMAs to " << a.out << '\n';
    return 0;
}

int cmdConvert(const ReplayArgs& a) {
    if (a.positional.size() != 2) throw InputError("convert: give IN and OUT");
    const replay::InstructionStream trace = readReplayFile(a.positional[0]);
    writeTraceFile(trace, a.positional[1], nullptr);
    return 0;
}

}  // namespace

int runReplayDma(const cli::Options& o) {
    return cmdDma(fromOptions(o), o.store);
}
int runReplaySuggest(const cli::Options& o) {
    return cmdSuggest(fromOptions(o), o.store);
}
int runReplayWhatif(const cli::Options& o) {
    return cmdWhatif(fromOptions(o), o.store);
}
int runDcache(const cli::Options& o) {
    return cmdDcache(fromOptions(o), o.store);
}
int runGenerate(const cli::Options& o) {
    return cmdGenerate(fromOptions(o));
}
int runConvert(const cli::Options& o) {
    const ReplayArgs a = fromOptions(o);
    if (a.positional.size() == 2) refuseOpenWorkspaceFile(a.positional[1], "write");
    return cmdConvert(a);
}

}  // namespace stallscope
