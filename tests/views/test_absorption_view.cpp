// Absorption views: the curve chart is checked at known pixels, the table and the sweep from a
// constructed report.
#include <QApplication>
#include <QFile>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <random>

#include "core/noise/absorption.h"
#include "tests/core/noise_curves.h"
#include "views/noise/absorption_view.h"

using namespace stallscope;
using namespace stallscope::noise;

namespace {

// Exact curves (no noise): flat to k1, then +`slope` per pattern.
void addCurve(std::vector<NoiseRun>& runs, const std::string& region, const std::string& mode,
              double k1, double slope, const std::string& q = {}, double perf = 10,
              const std::string& c = {}) {
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
            if (!c.empty()) r.params["c"] = c;
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

// True when a pixel within `radius` (`dx` across) of `at` is tinted blue, even faintly: a thin
// antialiased line between pixel columns is only half its colour.
bool bluish(const QImage& image, QPointF at, int radius, int dx) {
    for (int y = int(at.y()) - radius; y <= int(at.y()) + radius; ++y)
        for (int x = int(at.x()) - dx; x <= int(at.x()) + dx; ++x) {
            if (!image.rect().contains(x, y)) continue;
            const QColor c = image.pixelColor(x, y);
            if (c.blue() - c.red() > 40 && c.blue() >= c.green()) return true;
        }
    return false;
}

}  // namespace

class TestAbsorptionView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;  // images the tests write, for a look when a test fails

  private slots:
    void initTestCase() {
        if (qEnvironmentVariableIsSet("STALLSCOPE_KEEP_TEST_OUTPUT")) {
            dir_.setAutoRemove(false);
            qInfo("images in %s", qPrintable(dir_.path()));
        }
    }

    void curveChartAtKnownPixels() {
        std::vector<NoiseRun> runs;
        addCurve(runs, "triad", "fp_add64", 16, 5);  // k1 = 16, k2 = 16, +5% per pattern
        const AbsorptionReport report = analyzeRuns(runs);
        QCOMPARE(report.curves[0].fit.k1, 16.0);
        const auto groups = curveGroups(report);
        QCOMPARE(groups.size(), size_t(1));
        const charts::ChartSpec spec = curvesChart(report, groups[0]);
        const charts::RenderedChart chart = charts::renderChart(spec, QSize(900, 600));
        QVERIFY(chart.image.save(dir_.filePath("curve.png")));
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

    // The knee intervals: a translucent band across the plot around k1, and on the k axis a bar
    // per mode (k1 solid, k2 hatched); a knee that could not be placed gets a note at the top.
    void intervalBandsAndNotesAreDrawn() {
        // A noisy curve: flat to 12, a transient at half the final slope to 18, 0.8% noise.
        std::vector<NoiseRun> runs;
        std::mt19937 random(3);
        std::normal_distribution<double> gauss(0, 0.008);
        for (int k = 0; k <= 40; ++k)
            for (int rep = 0; rep < 5; ++rep) {
                NoiseRun r;
                r.region = "kernel";
                r.mode = "fp_add64";
                r.k = k;
                r.rep = rep;
                const double t = noise::testing::kneeCurveTime(k, 1000, 12, 18, 10);
                r.time = t * (1 + gauss(random));
                runs.push_back(r);
            }
        const AbsorptionReport report = analyzeRuns(runs);
        const noise::CurveFit& fit = report.curves[0].fit;
        QVERIFY(fit.degraded && fit.k2 && !fit.uncertain);
        QVERIFY2(fit.k1 >= 11 && fit.k1 <= 13, qPrintable(QString::number(fit.k1)));
        QVERIFY(fit.kneeHigh > fit.k1Low);
        const charts::ChartSpec spec = curvesChart(report, curveGroups(report)[0]);
        QCOMPARE(spec.spans.size(), size_t(3));
        QCOMPARE(spec.spans[0].from, fit.k1Low);  // k1 across the plot
        QCOMPARE(spec.spans[0].to, fit.kneeHigh);
        QCOMPARE(spec.spans[0].lane, -1);
        QCOMPARE(spec.spans[1].lane, 0);  // k1 on the k axis
        QVERIFY(!spec.spans[1].hatched);
        QCOMPARE(spec.spans[2].from, *fit.k2Low);  // k2 on the k axis, hatched
        QCOMPARE(spec.spans[2].to, fit.saturationHigh);
        QVERIFY(spec.spans[2].hatched);
        QVERIFY(spec.notes.isEmpty());
        QVERIFY2(spec.series[1].name.startsWith(QString("fp_add64: k1 %1 (").arg(fit.k1)),
                 qPrintable(spec.series[1].name));

        const charts::RenderedChart chart = charts::renderChart(spec, QSize(900, 600));
        QVERIFY(chart.image.save(dir_.filePath("bands.png")));
        // High above the curve (which stays below 1.3): inside the k1 band a light blue tint,
        // beside it the background.
        const double middle = (fit.k1Low + fit.kneeHigh) / 2;
        const QColor inside = chart.image.pixelColor(chart.toPixel({middle, 1.3}, false).toPoint());
        QVERIFY2(inside.blue() > inside.red() + 15 && inside.lightness() > 180,
                 qPrintable(inside.name()));
        const QColor beside =
            chart.image.pixelColor(chart.toPixel({fit.k1Low - 2.5, 1.3}, false).toPoint());
        QVERIFY2(beside.blue() - beside.red() < 8 && beside.lightness() > 220,
                 qPrintable(beside.name()));  // white, or a grey grid line
        // The k1 bar sits in the lowest lane, just above the x axis.
        const QPointF axis = chart.toPixel({middle, *spec.yMin}, false);
        QVERIFY(bluish(chart.image, axis - QPointF(0, 4.5), 1, 2));
        QVERIFY(!bluish(chart.image,
                        chart.toPixel({fit.k1Low - 2.5, *spec.yMin}, false) - QPointF(0, 4.5), 1,
                        2));

        // Two noise quantities cannot place a knee: the chart says so above the plot.
        std::vector<NoiseRun> coarse;
        for (double k : {0.0, 10.0})
            for (int rep = 0; rep < 3; ++rep) {
                NoiseRun r;
                r.region = "coarse";
                r.mode = "l1_ld64";
                r.k = k;
                r.time = (k > 0 ? 150 : 100) + 0.1 * rep;
                coarse.push_back(r);
            }
        const AbsorptionReport few = analyzeRuns(coarse);
        const charts::ChartSpec noted = curvesChart(few, curveGroups(few)[0]);
        QCOMPARE(noted.notes, QStringList("l1_ld64: only two noise quantities: the knee lies "
                                          "anywhere between k=0 and k=10"));
        const charts::RenderedChart image = charts::renderChart(noted, QSize(900, 600));
        QVERIFY(image.image.save(dir_.filePath("note.png")));
        const QPointF plotTopLeft = image.toPixel({*noted.xMin, *noted.yMax}, false);
        int brown = 0;  // the note's pixels: QColor(150, 60, 0), antialiased
        for (int y = 0; y < int(plotTopLeft.y()); ++y)
            for (int x = int(plotTopLeft.x()); x < int(plotTopLeft.x()) + 300; ++x) {
                const QColor c = image.image.pixelColor(x, y);
                brown += c.red() > c.green() + 40 && c.green() > c.blue() + 10;
            }
        QVERIFY2(brown > 50, qPrintable(QString::number(brown)));
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
        // The kind is not repeated at the start of the text (the dock shows "kind — text").
        QVERIFY2(items[0].text.startsWith("vectorize or cut FP work; L1 absorbs 12"),
                 qPrintable(items[0].text));
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
        QVERIFY(chart.image.save(dir_.filePath("sweep.png")));
        // The performance line on the right axis (dashed: look along it for its colour).
        QVERIFY(
            colorNear(chart.image, chart.toPixel({0.45, 0.206}, true), QColor(90, 90, 90), 3, 12));

        const QImage full = renderAbsorptionReport(report, QSize(1200, 800));
        QCOMPARE(full.size(), QSize(1200, 800));
        QVERIFY(full.save(dir_.filePath("report.png")));
    }

    void separateK2MarkerIsDrawnAndLabelled() {
        // Flat to 12, a transient of +1% per pattern to 24, then +5% per pattern.
        std::vector<NoiseRun> runs;
        for (int k = 0; k <= 40; k += 4)
            for (int rep = 0; rep < 3; ++rep) {
                NoiseRun r;
                r.region = "kernel";
                r.mode = "fp_add64";
                r.k = k;
                r.time = 100 + (k > 12 ? std::min(k, 24) - 12 : 0) + (k > 24 ? 5 * (k - 24) : 0) +
                         0.01 * rep;
                runs.push_back(r);
            }
        const AbsorptionReport report = analyzeRuns(runs);
        QCOMPARE(report.curves[0].fit.k1, 12.0);
        QCOMPARE(*report.curves[0].fit.k2, 24.0);
        const charts::ChartSpec spec = curvesChart(report, curveGroups(report)[0]);
        QCOMPARE(spec.markers.size(), size_t(2));
        QCOMPARE(spec.markers[0].label, QString("k1"));
        QCOMPARE(spec.markers[1].label, QString("k2"));
        QVERIFY(spec.markers[1].dotted);
        const charts::RenderedChart chart = charts::renderChart(spec, QSize(900, 600));
        QVERIFY(chart.image.save(dir_.filePath("k2.png")));
        const QColor blue = modeColor("fp_add64");
        // Both lines far above the curve (1.0 at k = 12, 1.12 at k = 24), nothing between them.
        QVERIFY(bluish(chart.image, chart.toPixel({12, 1.7}, false), 8, 2));
        QVERIFY(bluish(chart.image, chart.toPixel({24, 1.7}, false), 8, 2));
        QVERIFY(!bluish(chart.image, chart.toPixel({18, 1.7}, false), 8, 30));
        QVERIFY(!bluish(chart.image, chart.toPixel({30, 1.7}, false), 8, 30));
        // The labels sit right of their lines at the top of the plot, in the mode's colour;
        // none between the two lines beyond the label's width.
        const QPointF top24 = chart.toPixel({24, *spec.yMax}, false);
        QVERIFY(colorNear(chart.image, top24 + QPointF(10, 9), blue.darker(115), 6, 6));
        const QPointF top18 = chart.toPixel({18, *spec.yMax}, false);
        QVERIFY(!colorNear(chart.image, top18 + QPointF(10, 9), blue.darker(115), 6, 6));
    }

    void xRangeFollowsVisibleDataAndBandsAreNotFlattened() {
        // +20% per pattern from k = 8: the curve leaves the 3x clip at k = 18, long before 40.
        std::vector<NoiseRun> runs;
        addCurve(runs, "stream", "memory_ld64", 8, 20);
        const AbsorptionReport report = analyzeRuns(runs);
        const charts::ChartSpec spec = curvesChart(report, curveGroups(report)[0]);
        QCOMPARE(*spec.yMax, 3.0);
        QVERIFY2(std::abs(*spec.xMax - 18 * 1.08) < 1e-9, qPrintable(QString::number(*spec.xMax)));
        // The band runs to k = 20, the first point wholly above the plot, with its true value
        // (the chart clips it at the edge) rather than a flat edge at 3x.
        const charts::ChartSeries& band = spec.series[0];
        QCOMPARE(band.style, charts::ChartSeries::Style::Band);
        QCOMPARE(band.points.size(), 6);
        QCOMPARE(band.upper.last(), QPointF(20, 3.4));
        // Data within the clip keep the whole range.
        std::vector<NoiseRun> gentle;
        addCurve(gentle, "stream", "fp_add64", 16, 5);
        const AbsorptionReport flat = analyzeRuns(gentle);
        QCOMPARE(*curvesChart(flat, curveGroups(flat)[0]).xMax, 40.0);
    }

    void sweepPlotsEveryOtherParameterValue() {
        // c in {64, 2, 16} (text order would put 16 before 2) x q in {0, 0.25, 0.5}.
        std::vector<NoiseRun> runs;
        const double k1s[3][3] = {{0, 8, 12}, {4, 16, 24}, {28, 8, 99}};  // 99: never degrades
        const char* cs[3] = {"2", "16", "64"};
        const char* qs[3] = {"0", "0.25", "0.5"};
        for (int c = 2; c >= 0; --c)
            for (int q = 0; q < 3; ++q)
                addCurve(runs, "spmxv", "fp_add64", k1s[c][q], 5, qs[q], 1.0 / (q + 1 + c), cs[c]);
        const AbsorptionReport report = analyzeRuns(runs);
        QCOMPARE(QString::fromStdString(paramsLabel(curveGroups(report)[0].params)),
                 QString("c=2, q=0"));
        QCOMPARE(QString::fromStdString(paramsLabel(curveGroups(report)[3].params)),
                 QString("c=16, q=0"));
        const auto sweeps = sweepGroups(report);
        QCOMPARE(sweeps.size(), size_t(2));
        QCOMPARE(QString::fromStdString(sweeps[1].param), QString("q"));
        const charts::ChartSpec spec = sweepChart(report, sweeps[1]);
        QCOMPARE(spec.title, QString("Absorption vs q — spmxv on box"));
        QCOMPARE(spec.series.size(), size_t(6));  // three absorption, three performance
        QCOMPARE(spec.series[0].name, QString("fp_add64, c=2"));
        QCOMPARE(spec.series[1].name, QString("fp_add64, c=16"));
        QCOMPARE(spec.series[2].name, QString("fp_add64, c=64"));
        QCOMPARE(spec.series[0].points, QList<QPointF>({{0, 0}, {0.25, 8}, {0.5, 12}}));
        // k = 40 is the last tested: c=64, q=0.5 absorbed all of it, a lower bound.
        QCOMPARE(spec.series[2].points, QList<QPointF>({{0, 28}, {0.25, 8}, {0.5, 40}}));
        QCOMPARE(spec.series[2].open, QList<QPointF>({{0.5, 40}}));
        QVERIFY(spec.series[0].open.isEmpty());
        QCOMPARE(spec.openLegend, QString("≥ k1: no degradation seen"));
        QCOMPARE(spec.series[3].name, QString("perf., c=2"));
        QVERIFY(spec.series[3].secondaryAxis);
        QCOMPARE(spec.series[5].points.last(), QPointF(0.5, 1.0 / 5));
        QVERIFY(spec.series[0].color != spec.series[2].color);

        // The hollow triangle is drawn at the lower bound, a filled dot at a measured value.
        const charts::RenderedChart chart = charts::renderChart(spec, QSize(900, 600));
        QVERIFY(chart.image.save(dir_.filePath("sweep_q.png")));
        const QPointF open = chart.toPixel({0.5, 40}, false);
        QCOMPARE(chart.image.pixelColor(open.toPoint()), QColor(Qt::white));  // hollow
        QVERIFY(colorNear(chart.image, open, spec.series[2].color, 6));
        const QPointF filled = chart.toPixel({0.25, 8}, false);
        QVERIFY(colorNear(chart.image, filled, spec.series[2].color, 1));

        const QString csv = sweepCsv(report, sweeps[1]);
        QVERIFY(
            csv.startsWith("machine,region,param,value,other_params,mode,k1,lower_bound,k2,"
                           "perf,perf_unit\n"));
        QVERIFY(csv.contains("box,spmxv,q,0.5,c=64,fp_add64,40,1,,0.2,GB/s\n"));
        QVERIFY(csv.contains("box,spmxv,q,0.25,c=2,fp_add64,8,0,8,0.5,GB/s\n"));
        QCOMPARE(csv.count('\n'), 10);
    }

    void renderShowsSweepsAndSaysWhatIsLeftOut() {
        std::vector<NoiseRun> runs;
        for (const char* c : {"1", "64"})
            for (const char* q : {"0", "0.25", "0.5", "0.75"})
                addCurve(runs, "spmxv", "fp_add64", 8, 5, q, 1, c);
        const AbsorptionReport report = analyzeRuns(runs);
        QCOMPARE(curveGroups(report).size(), size_t(8));
        const ReportCharts shown = reportCharts(report);
        QCOMPARE(shown.charts.size(), size_t(4));
        QCOMPARE(shown.charts[0].title, QString("Absorption vs c — spmxv on box"));
        QCOMPARE(shown.charts[1].title, QString("Absorption vs q — spmxv on box"));
        QCOMPARE(shown.charts[2].title, QString("spmxv — box (c=1, q=0)"));
        QCOMPARE(shown.charts[3].title, QString("spmxv — box (c=1, q=0.25)"));
        QCOMPARE(shown.note, QString("6 of 8 curve charts left out (the GUI's Curves and Sweep "
                                     "tabs show every one)"));
        // Without a sweep all six curve charts fit and nothing is said.
        std::vector<NoiseRun> plain;
        for (const char* region : {"a", "b", "c"}) addCurve(plain, region, "fp_add64", 8, 5);
        QVERIFY(reportCharts(analyzeRuns(plain)).note.isEmpty());
        QCOMPARE(reportCharts(analyzeRuns(plain)).charts.size(), size_t(3));
        const QImage image = renderAbsorptionReport(report, QSize(1400, 900));
        QVERIFY(image.save(dir_.filePath("render_many.png")));
        QCOMPARE(image.size(), QSize(1400, 900));
    }

    void eachTabExportsWhatItShows() {
        std::vector<NoiseRun> runs;
        addCurve(runs, "stream", "fp_add64", 40, 5, "0");  // never degrades within 0..40
        addCurve(runs, "stream", "l1_ld64", 24, 5, "0");
        addCurve(runs, "stream", "memory_ld64", 0, 5, "0");
        addCurve(runs, "stream", "fp_add64", 20, 5, "1");
        addCurve(runs, "stream", "l1_ld64", 24, 5, "1");
        const AbsorptionReport report = analyzeRuns(runs);
        AbsorptionView view(ProfileInfo{}, QString());
        view.setReport(report);
        QVERIFY(view.tabs()->isTabEnabled(2));
        auto read = [](const QString& path) {
            QFile file(path);
            return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
        };

        view.tabs()->setCurrentIndex(0);
        QVERIFY(view.exportTo("CSV", dir_.filePath("curves.csv")));
        QVERIFY(read(dir_.filePath("curves.csv")).startsWith("machine,region,params,mode,k,"));
        QVERIFY(view.exportTo("PNG", dir_.filePath("curves.png")));
        QCOMPARE(QImage(dir_.filePath("curves.png")).size(), QSize(1200, 800));

        view.tabs()->setCurrentIndex(1);
        QVERIFY(view.exportTo("CSV", dir_.filePath("table.csv")));
        QCOMPARE(read(dir_.filePath("table.csv")), comparisonCsv(report));
        QVERIFY(view.exportTo("PNG", dir_.filePath("table.png")));
        const QImage table(dir_.filePath("table.png"));
        const QImage expected = renderComparisonTable(report);
        QCOMPARE(table.size(), expected.size());
        QCOMPARE(table.convertToFormat(QImage::Format_ARGB32),
                 expected.convertToFormat(QImage::Format_ARGB32));
        QFont font;
        font.setPointSizeF(8.5);
        QCOMPARE(table.height(), 3 * (QFontMetrics(font).height() + 6) + 1);  // header, 2 rows
        QVERIFY(view.exportTo("SVG", dir_.filePath("table.svg")));
        const QString svg = read(dir_.filePath("table.svg"));
        QVERIFY(svg.contains("bandwidth-bound"));
        QVERIFY(svg.contains("evidence"));
        QVERIFY(!svg.contains("noise patterns per iteration"));  // not a curve chart

        view.tabs()->setCurrentIndex(2);
        QVERIFY(view.exportTo("CSV", dir_.filePath("sweep.csv")));
        const QString sweep = read(dir_.filePath("sweep.csv"));
        QVERIFY(sweep.startsWith("machine,region,param,value,other_params,mode,k1,lower_bound,"));
        QVERIFY(sweep.contains("box,stream,q,0,,fp_add64,40,1,,10,GB/s\n"));
        QVERIFY(view.exportTo("SVG", dir_.filePath("sweep.svg")));
        QVERIFY(read(dir_.filePath("sweep.svg")).contains("Absorption vs q"));
    }
};

QTEST_MAIN(TestAbsorptionView)
#include "test_absorption_view.moc"
