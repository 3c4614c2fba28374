// `critical-path PROFILE [--json]` and `whatif PROFILE [edits] [--out F.json] [--json]` on
// trace profiles (core/graph: the step graph, its simulation and critical path).

#include <QJsonDocument>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/commands.h"
#include "core/analysis/cache.h"
#include "core/errors.h"
#include "core/graph/critical_path.h"
#include "core/graph/whatif.h"
#include "core/kinds.h"
#include "core/trace/hosts.h"
#include "core/trace/trace_store.h"

namespace stallscope {

namespace {

void printJson(const QJsonObject& object) {
    std::cout << QJsonDocument(object).toJson(QJsonDocument::Indented).toStdString();
}

ProfileInfo traceProfile(const Workspace& workspace, const std::string& name,
                         const std::string& command) {
    const ProfileInfo p = workspace.resolveProfile(name);
    if (p.kind != kinds::kTrace)
        throw InputError("profile '" + p.name + "' is a " + p.kind + " profile; " + command +
                         " needs a trace profile");
    const QJsonObject meta =
        QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object();
    if (trace::isMergedProfile(meta))
        throw InputError("profile '" + p.name +
                         "' is merged from shards and holds no slices; run " + command +
                         " on a host's shard (hosts[].shard in info --json)");
    return p;
}

std::string ms(int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", double(ns) / 1e6);
    return buf;
}

int64_t parseNs(const std::string& text, const char* option) {
    try {
        size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used == text.size() && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw InputError(std::string(option) + " takes a whole number of ns, not '" + text + "'");
}

double parseFactor(const std::string& text, const char* option) {
    try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size() && v > 0) return v;
    } catch (const std::exception&) {
    }
    throw InputError(std::string(option) + " takes a factor above 0, not '" + text + "'");
}

graph::Edits editsOf(const cli::Options& o) {
    graph::Edits e;
    for (const std::string& s : o.all("--kernel-speedup"))
        e.kernelSpeedups.push_back(graph::parseSpeedup(s, "--kernel-speedup"));
    if (o.has("--hoist") || o.has("--apply-suggestions"))
        throw InputError(
            "whatif: --hoist and --apply-suggestions edit replay profiles; a trace "
            "takes --kernel-speedup, --comm-speedup, --no-input-wait, "
            "--launch-overhead, --remove-sync, --overlap-copy, --rank-like-median");
    if (const std::string f = o.value("--comm-speedup"); !f.empty())
        e.commSpeedup = parseFactor(f, "--comm-speedup");
    e.noInputWait = o.has("--no-input-wait");
    if (const std::string n = o.value("--launch-overhead"); !n.empty())
        e.launchOverheadNs = parseNs(n, "--launch-overhead");
    e.removeSyncs = o.all("--remove-sync");
    e.overlapCopies = o.all("--overlap-copy");
    e.rankLikeMedian = o.has("--rank-like-median");
    return e;
}

// The what-if with its predicted trace in `out`, written beside it and renamed over it once
// whole: a refused or failed what-if leaves whatever was there as it was. A device or pipe
// (/dev/null, /dev/stdout) is written directly.
graph::WhatifResult whatifWritingTrace(const trace::TraceStore& store, const graph::Edits& edits,
                                       const std::string& out) {
    namespace fs = std::filesystem;
    std::error_code error;
    const bool direct = fs::exists(out, error) && !fs::is_regular_file(out, error);
    const std::string written = direct ? out : out + ".stallscope-part";
    struct RemoveUnlessKept {
        std::string path;
        bool keep = false;
        ~RemoveUnlessKept() {
            if (!keep && !path.empty()) std::remove(path.c_str());
        }
    } part{direct ? std::string() : written};
    std::ofstream file(written, std::ios::binary);
    if (!file) throw InputError(out + ": cannot write");
    graph::WhatifResult r = graph::whatifWithTrace(store, edits, file);
    file.close();
    if (!r.why.empty()) return r;  // nothing to write
    if (!file) throw Failure(out + ": write failed");
    if (!direct) {
        fs::rename(written, out, error);
        if (error) throw Failure(out + ": cannot write: " + error.message());
        part.keep = true;
    }
    return r;
}

}  // namespace

int runCriticalPath(const cli::Options& o) {
    auto ws = Workspace::openExisting(o.store);
    const ProfileInfo p = traceProfile(*ws, o.only(), "critical-path");
    const auto path = analysis::get(*ws, p.id, graph::criticalPathAnalysis());
    if (o.has("--json")) {
        std::cout << graph::criticalPathJsonText(*path, p.id, p.name) << '\n';
        return 0;
    }
    if (!path->why.empty()) {
        std::cout << "no critical path: " << path->why << '\n';
        return 0;
    }
    for (const graph::StepPath& s : path->steps) {
        std::cout << s.name << "  " << ms(s.duration);
        for (size_t k = 0; k < graph::kPathKinds.size(); ++k) {
            int64_t sum = 0;
            for (const graph::PathSegment& seg : s.segments)
                if (seg.kind == graph::kPathKinds[k]) sum += seg.dur;
            if (sum > 0) std::cout << "  " << graph::kPathKinds[k] << " " << ms(sum);
        }
        std::cout << '\n';
    }
    // The recommendations re-simulated, and what the path leaves out (a walk by batches).
    for (const graph::StepSaving& s : path->savings)
        std::cout << "recommendation " << s.kind << " (" << s.edit << "): median step "
                  << ms(s.measured) << " -> " << ms(s.predicted) << " re-simulated, saves "
                  << ms(s.saving()) << '\n';
    if (!path->note.empty()) std::cout << "note: " << path->note << '\n';
    return 0;
}

int runTraceWhatif(const cli::Options& o, Workspace& workspace, const ProfileInfo& profile) {
    traceProfile(workspace, std::to_string(profile.id), "whatif");
    const graph::Edits edits = editsOf(o);
    const trace::TraceStore store(workspace, profile.id);
    // Only --out needs the predicted schedule: without it a trace too large for one graph is
    // re-simulated a batch of steps at a time for the figures alone.
    const std::string out = o.value("--out");
    graph::WhatifResult r;
    if (out.empty()) {
        r = graph::whatif(store, edits);
    } else {
        r = whatifWritingTrace(store, edits, out);
    }
    if (o.has("--json")) {
        printJson(graph::whatifJson(r));
        return 0;
    }
    if (!r.why.empty()) {
        std::cout << "no what-if: " << r.why << '\n';
        return 0;
    }
    std::cout << "step (median of " << r.steps.size() << "): measured " << ms(r.measuredMedian)
              << ", simulated " << ms(r.simulatedMedian) << " (model error "
              << QString::number(r.modelErrorPct, 'f', 2).toStdString() << " %), predicted "
              << ms(r.predictedMedian) << '\n';
    for (const std::string& a : r.applied) std::cout << "  " << a << '\n';
    return 0;
}

}  // namespace stallscope
