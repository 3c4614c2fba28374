#include "core/kind_info.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cpi/cpi.h"
#include "core/estimates/estimates.h"
#include "core/noise/absorption.h"

namespace stallscope {

namespace {

struct OpTotal {
    int64_t count = 0;
    double total = 0;
};

// Totals summed from scaled components (a stack's shares of a kernel's cycles) carry the sum's
// rounding (133031.99999999997 for 133,032 cycles): reported to a millionth of their unit.
double reported(double total) {
    return std::round(total * 1e6) / 1e6;
}

QJsonArray topOpsJson(const std::map<std::string, OpTotal>& ops, int limit) {
    std::vector<std::pair<std::string, OpTotal>> sorted(ops.begin(), ops.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    QJsonArray out;
    for (size_t i = 0; i < sorted.size() && static_cast<int>(i) < limit; ++i) {
        out.append(QJsonObject{{"name", QString::fromStdString(sorted[i].first)},
                               {"count", static_cast<qint64>(sorted[i].second.count)},
                               {"total", reported(sorted[i].second.total)}});
    }
    return out;
}

QJsonObject infoKeys(int64_t tracks, int64_t slices, int64_t counters, double end,
                     const char* timeUnit, const QJsonArray& topOps) {
    return QJsonObject{{"tracks", static_cast<qint64>(tracks)},
                       {"slices", static_cast<qint64>(slices)},
                       {"counters", static_cast<qint64>(counters)},
                       {"flows", 0},
                       {"start", 0.0},
                       {"end", reported(end)},
                       {"time_unit", timeUnit},
                       {"top_ops", topOps}};
}

}  // namespace

QJsonObject cpiInfoJson(const Workspace& workspace, int64_t profileId, int topOps) {
    const cpi::CpiData data = cpi::loadCpiData(workspace, profileId);
    // Rank kernels by the reference source: hardware when present (sources put "hw" first).
    const std::string reference = data.sources.empty() ? std::string() : data.sources.front();
    std::map<std::string, OpTotal> kernels;
    double end = 0;
    for (const cpi::KernelStack& stack : data.stacks) {
        ++kernels[stack.kernel].count;
        if (stack.source != reference) continue;
        kernels[stack.kernel].total += stack.total();
        end += stack.total();
    }
    QJsonObject info = infoKeys(
        static_cast<int64_t>(data.sources.size()), static_cast<int64_t>(data.stacks.size()),
        static_cast<int64_t>(data.categories.size()), end, "cycles", topOpsJson(kernels, topOps));
    // Kernels with a stack or with metrics only (an Nsight Compute export without warp states).
    std::set<std::string> named(data.kernels.begin(), data.kernels.end());
    for (const cpi::KernelMetrics& k : cpi::loadKernelMetrics(workspace, profileId))
        named.insert(k.kernel);
    info.insert("kernels", static_cast<qint64>(named.size()));
    info.insert("kernels_with_stacks", static_cast<qint64>(data.kernels.size()));
    info.insert("reference_source", QString::fromStdString(reference));
    return info;
}

QJsonObject estimatesInfoJson(const Workspace& workspace, int64_t profileId, int topOps) {
    const estimates::EstimateData data = estimates::loadEstimates(workspace, profileId);
    std::map<std::string, OpTotal> regions;
    double end = 0;
    for (const estimates::EstimateRow& row : data.rows) {
        const double us = row.measuredUs.value_or(row.predictedUs);
        OpTotal& region = regions[row.region];
        ++region.count;
        region.total += us;
        end += us;
    }
    QJsonObject info = infoKeys(
        static_cast<int64_t>(data.hardware.size()), static_cast<int64_t>(data.rows.size()),
        static_cast<int64_t>(data.estimators.size()), end, "us", topOpsJson(regions, topOps));
    info.insert("workloads", static_cast<qint64>(data.workloads.size()));
    return info;
}

QJsonObject noiseInfoJson(const Workspace& workspace, int64_t profileId, int topOps) {
    const std::vector<noise::NoiseRun> runs = noise::loadRuns(workspace, profileId);
    std::map<std::string, OpTotal> regions;
    std::set<std::tuple<std::string, std::string, std::string, std::map<std::string, std::string>>>
        curves;
    std::set<std::string> modes, units;
    double end = 0;
    for (const noise::NoiseRun& run : runs) {
        OpTotal& region = regions[run.region];
        ++region.count;
        region.total += run.time;
        end += run.time;
        curves.insert({run.machine, run.region, run.mode, run.params});
        modes.insert(run.mode);
        units.insert(run.timeUnit);
    }
    // A file times its runs in one unit; say "mixed" rather than add ns to cycles silently.
    const char* unit = units.size() > 1 ? "mixed" : units.count("cycles") ? "cycles" : "ns";
    return infoKeys(static_cast<int64_t>(curves.size()), static_cast<int64_t>(runs.size()),
                    static_cast<int64_t>(modes.size()), end, unit, topOpsJson(regions, topOps));
}

}  // namespace stallscope
