#include "app/replay_commands.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "app/cli.h"
#include "app/commands.h"
#include "core/cpi/cpi.h"
#include "core/cpi/estimates.h"
#include "core/errors.h"
#include "core/noise/absorption.h"
#include "core/replay/codec.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/report.h"
#include "core/replay/suggest.h"
#include "core/replay/whatif.h"
#include "core/trace/trace_store.h"
#include "importers/import_service.h"
#include "importers/replay/replay_reader.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

// Splits `--opt value` pairs and flags out of args[1..].
struct ReplayArgs {
    std::vector<std::string> positional;
    std::vector<std::string> hoists;
    std::string out;
    bool json = false;
    bool applySuggestions = false;
    std::string instructions, seed, limit;
};

ReplayArgs parse(const std::vector<std::string>& args) {
    ReplayArgs a;
    auto valueOf = [&](size_t& i) -> std::string {
        if (i + 1 >= args.size()) throw InputError(args[i] + " needs a value");
        return args[++i];
    };
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& s = args[i];
        if (s == "--json")
            a.json = true;
        else if (s == "--apply-suggestions")
            a.applySuggestions = true;
        else if (s == "--hoist")
            a.hoists.push_back(valueOf(i));
        else if (s == "--out")
            a.out = valueOf(i);
        else if (s == "--instructions")
            a.instructions = valueOf(i);
        else if (s == "--seed")
            a.seed = valueOf(i);
        else if (s == "--limit")
            a.limit = valueOf(i);
        else if (s.starts_with("--"))
            throw InputError("unknown option " + s + " for '" + args[0] + "'");
        else
            a.positional.push_back(s);
    }
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
    if (r.profile.kind != "replay")
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

bool runReplayCommand(const std::vector<std::string>& args, const std::string& store, int& status) {
    const std::string& command = args.at(0);
    static const std::set<std::string> known{"dma",    "suggest",  "whatif",
                                             "dcache", "generate", "convert"};
    if (!known.count(command)) return false;
    const ReplayArgs a = parse(args);
    if (command == "dma")
        status = cmdDma(a, store);
    else if (command == "suggest")
        status = cmdSuggest(a, store);
    else if (command == "whatif")
        status = cmdWhatif(a, store);
    else if (command == "dcache")
        status = cmdDcache(a, store);
    else if (command == "generate")
        status = cmdGenerate(a);
    else
        status = cmdConvert(a);
    return true;
}

QJsonObject replayInfoJson(const Workspace& workspace, const ProfileInfo& profile) {
    const replay::InstructionStream trace = replay::loadInstructionStream(workspace, profile.id);
    const replay::Simulation sim = replay::simulate(trace);
    return replay::replayInfo(trace, sim, profile.id);
}

void ensureDemoWorkspace(const std::string& storePath) {
    auto workspace = Workspace::open(storePath);
    if (!workspace->profiles().empty()) return;
    QTemporaryDir dir;
    if (!dir.isValid()) throw Failure("cannot create a temporary directory");
    std::vector<std::string> files;
    for (const char* scenario :
         {"allgather", "allgather-pinned", "matmul-starved", "fragmentation"}) {
        const std::string path = (dir.path() + "/" + scenario + ".jsonl").toStdString();
        writeTraceFile(replay::generateWorkload(scenario), path, nullptr);
        files.push_back(path);
    }
    Progress progress;
    // Measured and hand-made examples of the other kinds, so every view has something to show.
    for (const char* name :
         {"noise-probe-demo.csv", "cpi-demo.csv", "estimates-demo.csv", "train-step-trace.json"})
        files.push_back(writeDemoResource(name, dir.path().toStdString()));
    importFiles(*workspace, ImportRequest{files, "", ""}, progress);
}

namespace {

std::string percent(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", value);
    return text;
}

// One line (after the kind) for the profiles that are not replays: what their view shows first.
std::string kindSummary(const Workspace& workspace, const ProfileInfo& p) {
    std::ostringstream out;
    if (p.kind == "noise") {
        const noise::AbsorptionReport report = noise::analyzeProfile(workspace, p.id);
        out << ": " << report.runs << " runs, " << report.curves.size() << " curves";
        for (const noise::Classification& c : report.classifications)
            out << "\n      " << c.region << " on " << c.machine << ": " << noise::className(c.cls)
                << (c.uncertain ? " (uncertain)" : "") << " (" << c.evidence.text << ")";
    } else if (p.kind == "cpi") {
        const cpi::CpiData data = cpi::loadCpiData(workspace, p.id);
        out << ": " << data.kernels.size() << " kernels, " << data.sources.size() << " source(s)";
        for (const cpi::ModelMape& m : cpi::computeMape(data).overall)
            out << "; MAPE " << m.model << " " << percent(m.mapePct);
    } else if (p.kind == "estimates") {
        const estimates::EstimateData data = estimates::loadEstimates(workspace, p.id);
        out << ": " << data.rows.size() << " rows, " << data.estimators.size() << " estimator(s), "
            << data.hardware.size() << " hardware target(s)";
        for (const estimates::EstimatorMape& m : estimates::analyzeEstimates(data).byEstimator)
            out << "; MAPE " << m.estimator << " " << percent(m.mapePct);
    } else if (p.kind == "trace") {
        const QJsonObject info = trace::TraceStore(workspace, p.id).infoJson(1);
        char span[32];
        std::snprintf(span, sizeof span, "%.2f ms",
                      (info.value("end").toDouble() - info.value("start").toDouble()) / 1e6);
        out << ": " << info.value("slices").toInteger() << " slices on "
            << info.value("tracks").toInteger() << " tracks, " << info.value("flows").toInteger()
            << " flows over " << span;
    }
    return out.str();
}

}  // namespace

std::string workspaceSummary(const std::string& storePath) {
    auto workspace = Workspace::openExisting(storePath);
    std::ostringstream out;
    const auto profiles = workspace->profiles();
    out << profiles.size() << " profile(s)\n";
    for (const auto& p : profiles) {
        out << "  [" << p.id << "] " << p.name << " (" << p.kind << ")";
        if (p.kind == "replay") {
            const replay::InstructionStream trace = replay::loadInstructionStream(*workspace, p.id);
            const replay::Analysis analysis = replay::analyze(trace);
            const auto& sim = analysis.sim;
            const double stallShare =
                sim.totalCycles ? 100.0 * double(sim.stallCycles) / double(sim.totalCycles) : 0;
            out << ": " << trace.instrs.size() << " instructions, " << trace.dmas.size()
                << " DMAs, " << sim.totalCycles << " cycles, " << sim.stallCycles << " stalled ("
                << std::fixed;
            out.precision(1);
            out << stallShare << "%: " << sim.baseStallCycles << " base latency, "
                << sim.transferStallCycles << " transfer)";
            if (!analysis.suggestions.empty()) {
                const auto& best = analysis.suggestions.front();
                out << "\n      " << analysis.suggestions.size()
                    << " suggestion(s); best: " << best.text;
            }
        } else {
            out << kindSummary(*workspace, p);
        }
        out << '\n';
    }
    return out.str();
}

}  // namespace stallscope
