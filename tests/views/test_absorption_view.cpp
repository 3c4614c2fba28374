// Absorption views: the curve chart is checked at known pixels, the table and the sweep from a
// constructed report.
#include <QApplication>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>

#include "absorption_view.h"
#include "noise/absorption.h"

using namespace stallscope;
using namespace stallscope::noise;

namespace {

// Exact curves (no noise): flat to k1, then +`slope` per pattern.
void addCurve(std::vector<NoiseRun>& runs, const std::string& region, const std::string& mode,
              double k1, double slope, const std::string& q = {}, double perf = 10) {
    for (int k = 0; k <= 40; k += 4)
        for (int rep = 0; rep < 3; ++rep) {
            NoiseRun r;
            r.machine = "box";
            r.region = region;
            r.mode = mode;
            r.k = k;
            r.rep = rep;
            r.time = 100 + (k > k1 ? slope * (k - k1) : 0);
            r.perf = perf;
            r.extra["perf_unit"] = "GB/s";
            if (!q.empty()) r.params["q"] = q;
            runs.push_back(r);
        }
}

// True when a pixel within `radius` of `at` is close to `color`.
bool colorNear(const QImage& image, QPointF at, const QColor& color, int radius, int dx = -1) {
    const int rx = dx < 0 ? radius : dx;
    for (int y = int(at.y()) - radius; y <= int(at.y()) + radius; ++y)
        for (int x = int(at.x()) - rx; x <= int(at.x()) + rx; ++x) {
            if (!image.rect().contains(x, y)) continue;
            const QColor c = image.pixelColor(x, y);
            if (std::abs(c.red() - color.red()) < 30 && std::abs(c.green() - color.green()) < 30 &&
                std::abs(c.blue() - color.blue()) < 30)
                return true;
        }
    return false;
}

}  // namespace

class TestAbsorptionView : public QObject {
    Q_OBJECT
  private slots:
    void curveChartAtKnownPixels() {
        std::vector<NoiseRun> runs;
        addCurve(runs, "triad", "fp_add64", 16, 5);  // k1 = 16, k2 = 16, +5% per pattern
        const AbsorptionReport report = analyzeRuns(runs);
        QCOMPARE(report.curves[0].fit.k1, 16.0);
        const auto groups = curveGroups(report);
        QCOMPARE(groups.size(), size_t(1));
        const charts::ChartSpec spec = curvesChart(report, groups[0]);
        const charts::RenderedChart chart = charts::renderChart(spec, QSize(900, 600));
        chart.image.save("/tmp/test_absorption_curve.png");
        const QColor blue = modeColor("fp_add64");

        // The plateau: the median line at normalized 1.0 between k = 4 and k = 12.
        for (double k : {4.0, 8.0, 12.0})
            QVERIFY2(colorNear(chart.image, chart.toPixel({k, 1.0}, false), blue, 2),
                     qPrintable(QString("plateau at k=%1").arg(k)));
        // The saturation line: normalized 1 + 0.05 * (k - 16).
        QVERIFY(colorNear(chart.image, chart.toPixel({28, 1.6}, false), blue, 3));
        // k1 marker: a vertical dashed line at k = 16, far above the curve (y = 2.1).
        QVERIFY(colorNear(chart.image, chart.toPixel({16, 2.1}, false), blue, 8, 1));
        // Nothing is drawn above the plateau away from the marker.
        const QPointF empty = chart.toPixel({6, 2.1}, false);
        QVERIFY(!colorNear(chart.image, empty, blue, 4));
        const QColor background = chart.image.pixelColor(empty.toPoint());
        QVERIFY(background.lightness() > 220);
        // The y axis is clipped at 3x: the last point (k = 40, 2.2x) lies inside the plot.
        QVERIFY(colorNear(chart.image, chart.toPixel({40, 2.2}, false), blue, 4));
    }

    void comparisonTableAndCsv() {
        std::vector<NoiseRun> runs;
        addCurve(runs, "hacc", "fp_add64", 0, 5);
        addCurve(runs, "hacc", "l1_ld64", 12, 5);
        addCurve(runs, "stream", "fp_add64", 40, 5);  // never degrades within 0..40
        addCurve(runs, "stream", "l1_ld64", 24, 5);
        addCurve(runs, "stream", "memory_ld64", 0, 5);
        const AbsorptionReport report = analyzeRuns(runs);
        const auto rows = comparisonRows(report);
        QCOMPARE(rows.size(), size_t(2));
        QCOMPARE(rows[0].region, QString("hacc"));
        QCOMPARE(rows[0].fp, QString("0"));
        QCOMPARE(rows[0].l1, QString("12"));
        QCOMPARE(rows[0].memory, QString("–"));
        QCOMPARE(rows[0].cls, QString("compute-bound"));
        QCOMPARE(rows[0].performance, QString("10 GB/s"));
        QCOMPARE(rows[1].fp, QString("≥40"));
        QCOMPARE(rows[1].cls, QString("bandwidth-bound"));
        const QString csv = comparisonCsv(report);
        QVERIFY(csv.startsWith("machine,region,params,cores,performance,FP abs.,L1 abs."));
        QVERIFY(csv.contains("box,stream,,,10 GB/s,≥40,24,0,–,bandwidth-bound"));

        AbsorptionView view(ProfileInfo{}, QString());
        QSignalSpy suggestions(&view, &AbsorptionView::suggestionsReady);
        view.setReport(report);
        QCOMPARE(suggestions.count(), 1);
        const auto items = suggestions.at(0).at(0).value<QList<SuggestionItem>>();
        QCOMPARE(items.size(), 2);
        QCOMPARE(items[0].kind, QString("compute-bound"));
        QVERIFY(items[0].text.startsWith("compute-bound: vectorize or cut FP work; L1 absorbs 12"));
        QCOMPARE(view.table()->rowCount(), 2);
        QCOMPARE(view.table()->item(1, 9)->text(), QString("bandwidth-bound"));
        QVERIFY(!view.tabs()->isTabEnabled(2));  // no swept parameter
    }

    void sweepChartHasPerformanceAxis() {
        std::vector<NoiseRun> runs;
        // Fig. 8's shape: absorption drops then rises again while performance only falls.
        addCurve(runs, "spmxv", "fp_add64", 20, 5, "0", 0.24);
        addCurve(runs, "spmxv", "fp_add64", 8, 5, "0.25", 0.23);
        addCurve(runs, "spmxv", "fp_add64", 28, 5, "0.5", 0.20);
        const AbsorptionReport report = analyzeRuns(runs);
        const auto sweeps = sweepGroups(report);
        QCOMPARE(sweeps.size(), size_t(1));
        QCOMPARE(QString::fromStdString(sweeps[0].param), QString("q"));
        const charts::ChartSpec spec = sweepChart(report, sweeps[0]);
        QCOMPARE(spec.y2Label, QString("performance (GB/s)"));
        QCOMPARE(spec.series.size(), size_t(2));
        const QList<QPointF> expected{{0, 20}, {0.25, 8}, {0.5, 28}};
        QCOMPARE(spec.series[0].points, expected);
        QVERIFY(spec.series[1].secondaryAxis);
        QCOMPARE(spec.series[1].points.size(), 3);

        const charts::RenderedChart chart = charts::renderChart(spec, QSize(800, 500));
        QVERIFY(colorNear(chart.image, chart.toPixel({0.25, 8}, false), modeColor("fp_add64"), 3));
        chart.image.save("/tmp/test_absorption_sweep.png");
        // The performance line on the right axis (dashed: look along it for its colour).
        QVERIFY(
            colorNear(chart.image, chart.toPixel({0.45, 0.206}, true), QColor(90, 90, 90), 3, 12));

        const QImage full = renderAbsorptionReport(report, QSize(1200, 800));
        QCOMPARE(full.size(), QSize(1200, 800));
        full.save("/tmp/test_absorption_report.png");
    }
};

QTEST_MAIN(TestAbsorptionView)
#include "test_absorption_view.moc"
