// CPI analysis (GSI classes, MAPE, suggestions) and cross-fidelity estimate analysis on
// hand-computed examples.
#include <QJsonArray>
#include <QtTest>
#include <cmath>

#include "core/cpi/cpi.h"
#include "core/estimates/estimates.h"

using namespace stallscope;

namespace {

cpi::KernelStack stack(const std::string& kernel, const std::string& source,
                       const std::string& group, std::map<std::string, double> cycles) {
    return {kernel, source, group, std::move(cycles)};
}

// Three kernels, hardware and two models. Totals: gemm hw 100, AMALI 110 (+10%), GCoM 150 (+50%);
// ele1 hw 200, AMALI 180 (-10%), GCoM 100 (-50%); ele2 hw 50, AMALI 60 (+20%), GCoM 50 (0%).
cpi::CpiData example() {
    return cpi::buildCpiData({
        stack("gemm", "AMALI", "gemm", {{"selected", 40}, {"math_pipe_throttle", 70}}),
        stack("gemm", "hw", "gemm", {{"selected", 40}, {"math_pipe_throttle", 40}, {"wait", 20}}),
        stack("gemm", "GCoM", "gemm", {{"selected", 40}, {"math_pipe_throttle", 110}}),
        stack("ele1", "hw", "ele",
              {{"selected", 20}, {"long_scoreboard", 150}, {"no_instruction", 30}}),
        stack("ele1", "AMALI", "ele", {{"selected", 20}, {"long_scoreboard", 160}}),
        stack("ele1", "GCoM", "ele", {{"selected", 20}, {"long_scoreboard", 80}}),
        stack("ele2", "hw", "ele", {{"selected", 10}, {"barrier", 40}}),
        stack("ele2", "AMALI", "ele", {{"selected", 10}, {"barrier", 50}}),
        stack("ele2", "GCoM", "ele", {{"selected", 50}}),
    });
}

}  // namespace

class TestCpi : public QObject {
    Q_OBJECT
  private slots:
    void gsiClasses() {
        QCOMPARE(cpi::gsiClassOf("selected"), std::string("Base"));
        QCOMPARE(cpi::gsiClassOf("wait"), std::string("ComData"));
        QCOMPARE(cpi::gsiClassOf("long_scoreboard"), std::string("MemData"));
        QCOMPARE(cpi::gsiClassOf("short_scoreboard"), std::string("MemData"));
        QCOMPARE(cpi::gsiClassOf("math_pipe_throttle"), std::string("ComStruct"));
        QCOMPARE(cpi::gsiClassOf("lg_throttle"), std::string("MemStruct"));
        QCOMPARE(cpi::gsiClassOf("barrier"), std::string("Sync"));
        QCOMPARE(cpi::gsiClassOf("no_instruction"), std::string("Ctrl"));
        QCOMPARE(cpi::gsiClassOf("W32"), std::string("Base"));
        QCOMPARE(cpi::gsiClassOf("W0_Idle"), std::string("Idle"));
        QCOMPARE(cpi::gsiClassOf("shd_mem:gl_mem.coal_stall"), std::string("MemStruct"));
        QCOMPARE(cpi::gsiClassOf("mem-dram"), std::string("MemData"));
        QCOMPARE(cpi::gsiClassOf("sync-futex"), std::string("Sync"));
        QCOMPARE(cpi::gsiClassOf("MemData"), std::string("MemData"));
    }

    void orderingAndFolding() {
        const cpi::CpiData data = example();
        QCOMPARE(data.sources, (std::vector<std::string>{"hw", "AMALI", "GCoM"}));
        QCOMPARE(data.kernels, (std::vector<std::string>{"gemm", "ele1", "ele2"}));
        QCOMPARE(data.stacks.front().source, std::string("hw"));  // hw first within a kernel
        QCOMPARE(data.categories.front(), std::string("selected"));
        const cpi::CpiData classes = cpi::toGsiClasses(data);
        QVERIFY(classes.classes);
        QCOMPARE(classes.categories, (std::vector<std::string>{"Base", "Ctrl", "Sync", "MemData",
                                                               "ComData", "ComStruct"}));
        // ele1 hw: 20 Base + 150 MemData + 30 Ctrl, total unchanged.
        const cpi::KernelStack& ele1 = classes.stacks[3];
        QCOMPARE(ele1.kernel, std::string("ele1"));
        QCOMPARE(ele1.cycles.at("MemData"), 150.0);
        QCOMPARE(ele1.cycles.at("Ctrl"), 30.0);
        QCOMPARE(ele1.total(), 200.0);
    }

    void mapeHandComputed() {
        const cpi::MapeReport mape = cpi::computeMape(example());
        QCOMPARE(mape.overall.size(), size_t(2));
        QCOMPARE(mape.overall[0].model, std::string("AMALI"));
        QCOMPARE(mape.overall[0].kernels, 3);
        QVERIFY(qAbs(mape.overall[0].mapePct - 40.0 / 3) < 1e-9);  // (10 + 10 + 20) / 3
        QCOMPARE(mape.overall[1].model, std::string("GCoM"));
        QVERIFY(qAbs(mape.overall[1].mapePct - 100.0 / 3) < 1e-9);  // (50 + 50 + 0) / 3
        std::map<std::pair<std::string, std::string>, double> byGroup;
        for (const auto& m : mape.byGroup) byGroup[{m.model, m.group}] = m.mapePct;
        QCOMPARE(byGroup.size(), size_t(4));
        QVERIFY(qAbs(byGroup[{"AMALI", "gemm"}] - 10) < 1e-9);
        QVERIFY(qAbs(byGroup[{"AMALI", "ele"}] - 15) < 1e-9);
        QVERIFY(qAbs(byGroup[{"GCoM", "gemm"}] - 50) < 1e-9);
        QVERIFY(qAbs(byGroup[{"GCoM", "ele"}] - 25) < 1e-9);
        QCOMPARE(mape.kernels.size(), size_t(6));
        QCOMPARE(mape.kernels[0].kernel, std::string("gemm"));
        QVERIFY(qAbs(mape.kernels[0].errorPct - 10) < 1e-9);
        // The GCoM ele1 error is signed: it underestimates.
        for (const auto& e : mape.kernels)
            if (e.kernel == "ele1" && e.model == "GCoM") QVERIFY(qAbs(e.errorPct + 50) < 1e-9);
    }

    void mapeWithoutHardware() {
        const cpi::CpiData data = cpi::buildCpiData({stack("k", "AMALI", "", {{"wait", 1}})});
        QVERIFY(cpi::computeMape(data).overall.empty());
    }

    void suggestionsNameDominantStalls() {
        const auto suggestions = cpi::cpiSuggestions(example(), 2);
        // Costliest hw kernels: ele1 (200), then gemm (100). ele1: long_scoreboard 75%,
        // no_instruction 15%; gemm: math_pipe_throttle 40%, wait 20%.
        QCOMPARE(suggestions.size(), size_t(4));
        QCOMPARE(suggestions[0].kernel, std::string("ele1"));
        QCOMPARE(suggestions[0].category, std::string("long_scoreboard"));
        QCOMPARE(suggestions[0].sharePct, 75.0);
        QVERIFY(QString::fromStdString(suggestions[0].text).contains("memory latency"));
        QVERIFY(QString::fromStdString(suggestions[0].text).contains("prefetch"));
        QCOMPARE(suggestions[2].kernel, std::string("gemm"));
        QCOMPARE(suggestions[2].category, std::string("math_pipe_throttle"));
        QCOMPARE(suggestions[0].kind, std::string("cpi-stall"));
    }

    void cpiJsonKeys() {
        const cpi::CpiData data = example();
        const QJsonObject json = cpi::cpiJson(data, cpi::computeMape(data), {});
        const QJsonArray kernels = json.value("kernels").toArray();
        QCOMPARE(kernels.size(), 9);
        const QJsonObject first = kernels[0].toObject();
        QCOMPARE(first.value("kernel").toString(), QString("gemm"));
        QCOMPARE(first.value("source").toString(), QString("hw"));
        QCOMPARE(first.value("total_cycles").toDouble(), 100.0);
        QCOMPARE(first.value("stack").toObject().value("wait").toDouble(), 20.0);
        const QJsonObject mape = json.value("mape").toArray()[0].toObject();
        QCOMPARE(mape.value("model").toString(), QString("AMALI"));
        QCOMPARE(mape.value("kernels").toInt(), 3);
        QVERIFY(qAbs(mape.value("mape_pct").toDouble() - 40.0 / 3) < 1e-9);
    }

    // Nsight Compute scales units per kernel: a column shows one unit, converted by prefix.
    void metricTableConvertsUnitPrefixes() {
        QCOMPARE(cpi::splitUnit("Mbyte")->first, std::string("byte"));
        QCOMPARE(cpi::splitUnit("Mbyte")->second, 1e6);
        QCOMPARE(cpi::splitUnit("usecond")->second, 1e-6);
        QVERIFY(!cpi::splitUnit("%"));
        QVERIFY(!cpi::splitUnit("warp"));
        using cpi::KernelMetric;
        const std::vector<cpi::KernelMetrics> metrics{
            {"k0", "hw", {KernelMetric{"dram", "Mbyte", 2.0, ""}, {"grid", "", {}, "(80, 1, 1)"}}},
            {"k1", "hw", {KernelMetric{"dram", "Kbyte", 500.0, ""}}},
            {"k2", "hw", {KernelMetric{"dram", "Mbyte", 1.5, ""}, {"occupancy", "%", 61.0, ""}}},
            {"k3", "hw", {KernelMetric{"dram", "warp", 3.0, ""}}},
        };
        const cpi::MetricTable table = cpi::buildMetricTable(metrics);
        QCOMPARE(table.rows.size(), size_t(4));
        QCOMPARE(table.names, (std::vector<std::string>{"dram", "grid", "occupancy"}));
        QCOMPARE(table.units[0], std::string("Mbyte"));  // the most common unit of the column
        QCOMPARE(table.value(0, 0), 2.0);
        QCOMPARE(table.value(1, 0), 0.5);  // 500 Kbyte
        QVERIFY(std::isnan(table.value(3, 0)));
        QCOMPARE(table.cellText(3, 0), std::string("3 warp"));  // not convertible: own unit
        QCOMPARE(table.cellText(0, 1), std::string("(80, 1, 1)"));
        QCOMPARE(table.cellText(1, 2), std::string());  // k1 lacks the metric
        QCOMPARE(table.value(2, 2), 61.0);
        // cpi --json lists every kernel's metrics, also without stacks.
        const QJsonObject json = cpi::cpiJson({}, {}, {}, metrics);
        const QJsonArray listed = json.value("kernel_metrics").toArray();
        QCOMPARE(listed.size(), 4);
        const QJsonObject first = listed[0].toObject();
        QCOMPARE(first.value("kernel").toString(), QString("k0"));
        QCOMPARE(first.value("metrics").toArray()[0].toObject().value("value").toDouble(), 2.0);
        QCOMPARE(first.value("metrics").toArray()[1].toObject().value("text").toString(),
                 QString("(80, 1, 1)"));
    }

    // StableHLO-style estimates: one workload, two regions, two GPUs, two estimators.
    void estimatesHandComputed() {
        using estimates::EstimateRow;
        std::vector<EstimateRow> rows{
            {"llama", "attn", "A100", "analytical", 80, 100, 1.5},
            {"llama", "mlp", "A100", "analytical", 240, 300, 1.5},
            {"llama", "attn", "H100", "analytical", 50, 50, 1.5},
            {"llama", "mlp", "H100", "analytical", 150, 150, 1.5},
            {"llama", "attn", "A100", "profiling", 120, {}, 60},  // measured given once above
            {"llama", "mlp", "A100", "profiling", 330, {}, 60},
            {"llama", "attn", "H100", "profiling", 55, {}, 60},
            {"llama", "mlp", "H100", "profiling", 165, {}, 60},
        };
        const auto data = estimates::buildEstimateData(rows);
        const auto report = estimates::analyzeEstimates(data);
        std::map<std::pair<std::string, std::string>, double> mape;
        for (const auto& m : report.byEstimatorHardware)
            mape[{m.estimator, m.hardware}] = m.mapePct;
        QVERIFY(qAbs(mape[{"analytical", "A100"}] - 20) < 1e-9);
        QVERIFY(qAbs(mape[{"analytical", "H100"}] - 0) < 1e-9);
        QVERIFY(qAbs(mape[{"profiling", "A100"}] - 15) < 1e-9);  // (20% + 10%) / 2
        QVERIFY(qAbs(mape[{"profiling", "H100"}] - 10) < 1e-9);
        QCOMPARE(report.byEstimator.size(), size_t(2));
        QVERIFY(qAbs(report.byEstimator[0].mapePct - 10) < 1e-9);
        QVERIFY(qAbs(report.byEstimator[1].mapePct - 12.5) < 1e-9);
        // Speedup A100 -> H100: measured 400 / 200 = 2; analytical 320 / 200 = 1.6 (-20%);
        // profiling 450 / 220 = 2.04545 (+2.27%).
        QCOMPARE(report.speedupMeans.size(), size_t(2));
        const auto& analytical = report.speedupMeans[0];
        QCOMPARE(analytical.from, std::string("A100"));
        QCOMPARE(analytical.to, std::string("H100"));
        QVERIFY(qAbs(analytical.measuredSpeedup - 2) < 1e-12);
        QVERIFY(qAbs(analytical.predictedSpeedup - 1.6) < 1e-12);
        QVERIFY(qAbs(analytical.errorPct + 20) < 1e-9);
        QVERIFY(qAbs(report.speedupMeans[1].errorPct - (450.0 / 220 / 2 - 1) * 100) < 1e-9);
        QCOMPARE(report.speedupMeanAbs.size(), size_t(2));
        QVERIFY(qAbs(report.speedupMeanAbs[0].meanAbsErrorPct - 20) < 1e-9);
        QVERIFY(qAbs(report.speedupMeanAbs[0].meanErrorPct + 20) < 1e-9);
        QCOMPARE(report.speedupMeanAbs[0].speedups, 1);
        // Cost against accuracy.
        QCOMPARE(report.costs[0].wallS, 6.0);
        QCOMPARE(report.costs[1].wallS, 240.0);
        QCOMPARE(report.costs[1].timedRows, 4);
        const QJsonObject json = estimates::estimatesJson(data, report);
        QCOMPARE(json.value("rows").toArray().size(), 8);
        QCOMPARE(json.value("mape").toArray()[0].toObject().value("estimator").toString(),
                 QString("analytical"));
        QCOMPARE(json.value("speedup_errors").toArray()[0].toObject().value("error_pct").toDouble(),
                 analytical.errorPct);
        // The profiling rows carry no measurement: they share the analytical rows' one.
        const QJsonObject shared = json.value("rows").toArray()[4].toObject();
        QCOMPARE(shared.value("measured_us").toDouble(), 100.0);
        QVERIFY(shared.value("measured_shared").toBool());
        QVERIFY(!json.value("rows").toArray()[0].toObject().value("measured_shared").toBool());
        QCOMPARE(shared.value("error_pct").toDouble(), 20.0);
    }
};

QTEST_GUILESS_MAIN(TestCpi)
#include "test_cpi.moc"
