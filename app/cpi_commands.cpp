// `cpi PROFILE [--classes] [--json]` and `estimates PROFILE [--json]` (CONTRACT §5).
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include "app/commands.h"
#include "core/cpi/cpi.h"
#include "core/errors.h"
#include "core/estimates/estimates.h"
#include "core/kinds.h"
#include "core/workspace.h"

namespace stallscope {

namespace {

struct CpiOptions {
    std::string profile;
    bool json = false;
    bool classes = false;
};

CpiOptions fromOptions(const cli::Options& o) {
    return {o.only(), o.has("--json"), o.has("--classes")};
}

std::unique_ptr<Workspace> openStore(const std::string& store) {
    return Workspace::openExisting(store);
}

ProfileInfo requireKind(const Workspace& workspace, const std::string& name,
                        const std::string& kind) {
    ProfileInfo p = workspace.resolveProfile(name);
    if (p.kind != kind)
        throw InputError("profile '" + p.name + "' is a " + p.kind + " profile, not " + kind);
    return p;
}

std::string notice(const ProfileInfo& p) {
    const QJsonObject meta =
        QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object();
    return meta.value("notice").toString().toStdString();
}

// Kernels that have metrics but no stack (e.g. an Nsight Compute export without warp-state
// metrics): a few headline metrics each, so the text output is not empty.
void printMetricsText(const cpi::CpiData& data, const std::vector<cpi::KernelMetrics>& metrics) {
    std::set<std::pair<std::string, std::string>> withStack;
    for (const cpi::KernelStack& s : data.stacks) withStack.insert({s.kernel, s.source});
    bool header = false;
    for (const cpi::KernelMetrics& k : metrics) {
        if (withStack.count({k.kernel, k.source})) continue;
        if (!header) {
            std::cout << "kernel\tsource\tmetrics\theadline (cpi --json lists every metric)\n";
            header = true;
        }
        std::string headline;
        int shown = 0;
        for (const cpi::KernelMetric& m : k.metrics) {
            if (!m.value || shown >= 4) continue;
            const bool key = m.name.find("Elapsed Cycles") != std::string::npos ||
                             m.name.find("Duration") != std::string::npos ||
                             m.name.find("cycles_elapsed") != std::string::npos ||
                             m.name.find("time_duration") != std::string::npos ||
                             m.name.find("Throughput") != std::string::npos || m.name == "cycles" ||
                             m.name == "instructions";
            if (!key) continue;
            char value[64];
            std::snprintf(value, sizeof value, "%.6g", *m.value);
            headline += (shown++ ? "; " : "") + m.name + " = " + value +
                        (m.unit.empty() ? "" : " " + m.unit);
        }
        std::printf("%s\t%s\t%zu\t%s\n", k.kernel.c_str(), k.source.c_str(), k.metrics.size(),
                    headline.c_str());
    }
}

void printCpiText(const cpi::CpiData& data, const cpi::MapeReport& mape,
                  const std::vector<cpi::CpiSuggestion>& suggestions, const std::string& note,
                  const std::vector<cpi::KernelMetrics>& metrics) {
    if (!note.empty()) std::cout << "notice: " << note << "\n";
    printMetricsText(data, metrics);
    if (data.stacks.empty()) return;
    std::cout << "kernel\tsource\tgroup\ttotal_cycles\ttop categories\n";
    for (const cpi::KernelStack& s : data.stacks) {
        std::vector<std::pair<double, std::string>> top;
        for (const auto& [category, cycles] : s.cycles) top.push_back({cycles, category});
        std::sort(top.begin(), top.end(), std::greater<>());
        std::string topText;
        const double total = s.total();
        for (size_t i = 0; i < top.size() && i < 3; ++i) {
            char share[32];
            std::snprintf(share, sizeof share, " %.1f%%",
                          total > 0 ? top[i].first / total * 100 : 0);
            topText += (i ? ", " : "") + top[i].second + share;
        }
        std::printf("%s\t%s\t%s\t%.0f\t%s\n", s.kernel.c_str(), s.source.c_str(), s.group.c_str(),
                    total, topText.c_str());
    }
    for (const cpi::ModelMape& m : mape.overall)
        std::printf("MAPE %s: %.2f%% over %d kernels\n", m.model.c_str(), m.mapePct, m.kernels);
    for (const cpi::ModelMape& m : mape.byGroup)
        std::printf("MAPE %s [%s]: %.2f%% over %d kernels\n", m.model.c_str(), m.group.c_str(),
                    m.mapePct, m.kernels);
    for (const cpi::CpiSuggestion& s : suggestions) std::cout << "suggestion: " << s.text << "\n";
}

void printEstimatesText(const estimates::EstimateData& data,
                        const estimates::EstimateReport& report) {
    std::printf("%zu rows, %zu estimators, %zu hardware targets\n", data.rows.size(),
                data.estimators.size(), data.hardware.size());
    if (report.byEstimator.empty()) std::printf("MAPE: no measurements (no row has measured_us)\n");
    for (const auto& m : report.byEstimatorHardware)
        std::printf("MAPE %s on %s: %.2f%% (%d rows)\n", m.estimator.c_str(), m.hardware.c_str(),
                    m.mapePct, m.rows);
    for (const auto& s : report.speedupMeans)
        std::printf("speedup %s %s -> %s: predicted %.3f, measured %.3f, error %+.1f%%\n",
                    s.estimator.c_str(), s.from.c_str(), s.to.c_str(), s.predictedSpeedup,
                    s.measuredSpeedup, s.errorPct);
    for (const auto& s : report.speedupMeanAbs)
        std::printf("speedup mean absolute error %s: %.1f%% (signed mean %+.1f%%, %d speedups)\n",
                    s.estimator.c_str(), s.meanAbsErrorPct, s.meanErrorPct, s.speedups);
    for (const auto& c : report.costs) {
        if (c.rows > 0)
            std::printf("cost %s: %.3f s wall, MAPE %.2f%%\n", c.estimator.c_str(), c.wallS,
                        c.mapePct);
        else
            std::printf("cost %s: %.3f s wall, MAPE: no measurements\n", c.estimator.c_str(),
                        c.wallS);
    }
}

}  // namespace

int runCpi(const cli::Options& options) {
    {
        const CpiOptions o = fromOptions(options);
        auto workspace = openStore(options.store);
        const ProfileInfo p = requireKind(*workspace, o.profile, std::string(kinds::kCpi));
        cpi::CpiData data = cpi::loadCpiData(*workspace, p.id);
        const std::vector<cpi::KernelMetrics> metrics = cpi::loadKernelMetrics(*workspace, p.id);
        // Suggestions name raw categories (more specific); the stacks follow --classes.
        const auto suggestions = cpi::cpiSuggestions(data);
        if (o.classes) data = cpi::toGsiClasses(data);
        const cpi::MapeReport mape = cpi::computeMape(data);
        if (o.json) {
            QJsonObject out = cpi::cpiJson(data, mape, suggestions, metrics);
            out.insert("profile", QString::fromStdString(p.name));
            if (const std::string note = notice(p); !note.empty())
                out.insert("notice", QString::fromStdString(note));
            std::cout << QJsonDocument(out).toJson(QJsonDocument::Indented).toStdString();
        } else {
            printCpiText(data, mape, suggestions, notice(p), metrics);
        }
    }
    return 0;
}

int runEstimates(const cli::Options& options) {
    {
        const CpiOptions o = fromOptions(options);
        auto workspace = openStore(options.store);
        const ProfileInfo p = requireKind(*workspace, o.profile, std::string(kinds::kEstimates));
        const estimates::EstimateData data = estimates::loadEstimates(*workspace, p.id);
        const estimates::EstimateReport report = estimates::analyzeEstimates(data);
        if (o.json) {
            QJsonObject out = estimates::estimatesJson(data, report);
            out.insert("profile", QString::fromStdString(p.name));
            std::cout << QJsonDocument(out).toJson(QJsonDocument::Indented).toStdString();
        } else {
            printEstimatesText(data, report);
        }
    }
    return 0;
}

}  // namespace stallscope
