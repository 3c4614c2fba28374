#include "core/graph/edits.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/errors.h"
#include "core/trace/trace_store.h"

namespace stallscope::graph {

bool Edits::empty() const {
    return kernelSpeedups.empty() && commSpeedup == 1 && !noInputWait && !launchOverheadNs &&
           removeSyncs.empty() && overlapCopies.empty() && !rankLikeMedian;
}

std::vector<std::string> Edits::describe() const {
    std::vector<std::string> out;
    auto number = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
    };
    for (const auto& [glob, f] : kernelSpeedups)
        out.push_back("kernels matching " + glob + " " + number(f) + "x faster");
    if (commSpeedup != 1) out.push_back("collectives " + number(commSpeedup) + "x faster");
    if (noInputWait) out.push_back("no input wait");
    if (launchOverheadNs)
        out.push_back("launch overhead " + std::to_string(*launchOverheadNs) + " ns (CUDA graphs)");
    for (const std::string& glob : removeSyncs)
        out.push_back("syncs matching " + glob + " removed");
    for (const std::string& glob : overlapCopies)
        out.push_back("copies matching " + glob + " overlapped");
    if (rankLikeMedian) out.push_back("slow ranks run like the median rank");
    return out;
}

std::pair<std::string, double> parseSpeedup(const std::string& text, const char* option) {
    const auto eq = text.rfind('=');
    double factor = 0;
    if (eq != std::string::npos && eq > 0) {
        try {
            size_t used = 0;
            factor = std::stod(text.substr(eq + 1), &used);
            if (used != text.size() - eq - 1) factor = 0;
        } catch (const std::exception&) {
            factor = 0;
        }
    }
    if (!(factor > 0) || !std::isfinite(factor))
        throw InputError(std::string(option) +
                         " takes GLOB=FACTOR with a factor above 0 (e.g. "
                         "'*gemm*=2'), not '" +
                         text + "'");
    return {text.substr(0, eq), factor};
}

bool globMatch(std::string_view glob, std::string_view name) {
    // Iterative wildcard matching with backtracking to the last '*'.
    size_t g = 0, n = 0, star = std::string_view::npos, mark = 0;
    while (n < name.size()) {
        if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
            ++g;
            ++n;
        } else if (g < glob.size() && glob[g] == '*') {
            star = g++;
            mark = n;
        } else if (star != std::string_view::npos) {
            g = star + 1;
            n = ++mark;
        } else {
            return false;
        }
    }
    while (g < glob.size() && glob[g] == '*') ++g;
    return g == glob.size();
}

namespace {

// Names matching any of the globs, decided once per distinct name.
class NameMatcher {
  public:
    NameMatcher(const trace::TraceStore& store, std::vector<std::string> globs)
        : store_(store), globs_(std::move(globs)) {}
    // The index of the first matching glob, -1 for none.
    int match(uint32_t name) {
        if (name == kNone) return -1;
        const auto [it, fresh] = cache_.try_emplace(name, -1);
        if (fresh)
            for (size_t k = 0; k < globs_.size(); ++k)
                if (globMatch(globs_[k], store_.text(name))) {
                    it->second = int(k);
                    break;
                }
        return it->second;
    }

  private:
    const trace::TraceStore& store_;
    std::vector<std::string> globs_;
    std::map<uint32_t, int> cache_;
};

int64_t scaled(int64_t ns, double factor) {
    return int64_t(std::llround(double(ns) / factor));
}

// CUDA graphs: per launch N ns of host time, the host work between the launches of a step's
// stretch of launches gone, and on the device no more than N ns between a launched activity
// and the one before it on its stream (a graph's kernels dispatch back to back).
void applyLaunchOverhead(const Graph& g, int64_t perLaunch, Lengths& l) {
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        if (n.trigger != kNone && g.lanes[n.lane].device && !g.firstInLane(i) &&
            g.nodes[n.trigger].kind == NodeKind::Launch)
            l.gap[i] = std::min(l.gap[i], perLaunch);
    }
    for (uint32_t lane = 0; lane < g.lanes.size(); ++lane) {
        if (g.lanes[lane].device) continue;
        uint32_t lastLaunch = kNone;
        for (uint32_t i = g.laneBegin[lane]; i < g.laneBegin[lane + 1]; ++i) {
            const NodeKind kind = g.nodes[i].kind;
            if (kind != NodeKind::Launch) {
                // A stretch of launches ends where the thread waited or was asleep.
                if (kind == NodeKind::Sync || kind == NodeKind::Input || kind == NodeKind::Woken)
                    lastLaunch = kNone;
                continue;
            }
            l.own[i] = perLaunch;
            if (lastLaunch != kNone)
                for (uint32_t k = lastLaunch + 1; k < i; ++k)
                    if (g.nodes[k].kind == NodeKind::Host || g.nodes[k].kind == NodeKind::Runtime)
                        l.own[k] = 0;
            lastLaunch = i;
        }
    }
}

// Each rank whose device compute (kernels, copies) or host work (ops, runtime calls) is above
// the median rank's runs it at the median: ranks of a run wait for each other in their
// collectives, so their step times agree and only their own work tells the slow one.
void applyRankLikeMedian(const Graph& g, Lengths& l) {
    if (g.hosts < 2) return;
    const auto isDeviceWork = [](NodeKind k) {
        return k == NodeKind::Kernel || k == NodeKind::Copy;
    };
    const auto isHostWork = [](NodeKind k) {
        return k == NodeKind::Host || k == NodeKind::Launch || k == NodeKind::Runtime;
    };
    std::vector<double> deviceWork(size_t(g.hosts), 0), hostWork(size_t(g.hosts), 0);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const size_t h = size_t(g.lanes[g.nodes[i].lane].host);
        if (isDeviceWork(g.nodes[i].kind)) deviceWork[h] += double(l.own[i]);
        if (isHostWork(g.nodes[i].kind)) hostWork[h] += double(l.own[i]);
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[(v.size() + 1) / 2 - 1];
    };
    const double deviceTarget = median(deviceWork), hostTarget = median(hostWork);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const size_t h = size_t(g.lanes[g.nodes[i].lane].host);
        if (isDeviceWork(g.nodes[i].kind) && deviceWork[h] > deviceTarget && deviceTarget > 0)
            l.own[i] = scaled(l.own[i], deviceWork[h] / deviceTarget);
        if (isHostWork(g.nodes[i].kind) && hostWork[h] > hostTarget && hostTarget > 0)
            l.own[i] = scaled(l.own[i], hostWork[h] / hostTarget);
    }
}

}  // namespace

Lengths applyEdits(const Graph& g, const trace::TraceStore& store, const Edits& edits) {
    Lengths l = Lengths::of(g);
    std::vector<std::string> kernelGlobs;
    for (const auto& [glob, f] : edits.kernelSpeedups) kernelGlobs.push_back(glob);
    NameMatcher kernels(store, kernelGlobs), syncs(store, edits.removeSyncs),
        copies(store, edits.overlapCopies);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        if (n.kind == NodeKind::Kernel && !kernelGlobs.empty())
            if (const int k = kernels.match(n.name); k >= 0)
                l.own[i] = scaled(l.own[i], edits.kernelSpeedups[size_t(k)].second);
        if (n.kind == NodeKind::Collective && edits.commSpeedup != 1)
            l.own[i] = scaled(l.own[i], edits.commSpeedup);
        if (n.kind == NodeKind::Input && edits.noInputWait) l.own[i] = 0;
        if (n.kind == NodeKind::Copy && !edits.overlapCopies.empty() && copies.match(n.name) >= 0)
            l.own[i] = 0;
        if (n.kind == NodeKind::Sync && !edits.removeSyncs.empty() && syncs.match(n.name) >= 0) {
            l.own[i] = 0;
            l.returnNs[i] = INT64_MIN / 4;  // waits for nothing
        }
    }
    if (edits.launchOverheadNs) applyLaunchOverhead(g, *edits.launchOverheadNs, l);
    if (edits.rankLikeMedian) applyRankLikeMedian(g, l);
    return l;
}

}  // namespace stallscope::graph
