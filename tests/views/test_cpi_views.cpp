// CPI and estimates views: what is drawn (pixels at known places), hover, tables, export, the
// worker-thread load, and the command line (`cpi --json`, `render`) as a process.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/chart_kit.h"
#include "views/common/table_kit.h"
#include "views/cpi/cpi_charts.h"
#include "views/cpi/cpi_view.h"
#include "views/estimates/estimates_chart.h"
#include "views/estimates/estimates_view.h"
#include "views/view_kinds.h"

using namespace stallscope;

namespace {

const char* const kStacks = R"(kernel,source,category,cycles,group
gemm,hw,selected,40,gemm
gemm,hw,math_pipe_throttle,40,gemm
gemm,hw,wait,20,gemm
gemm,AMALI,selected,40,gemm
gemm,AMALI,math_pipe_throttle,70,gemm
ele1,hw,selected,20,ele
ele1,hw,long_scoreboard,150,ele
ele1,hw,no_instruction,30,ele
ele1,AMALI,selected,20,ele
ele1,AMALI,long_scoreboard,160,ele
)";

const char* const kEstimates = R"(workload,region,hardware,estimator,predicted_us,measured_us,wall_s
llama,attn,A100,analytical,80,100,1.5
llama,mlp,A100,analytical,240,300,1.5
llama,attn,H100,analytical,50,50,1.5
llama,mlp,H100,analytical,150,150,1.5
llama,attn,A100,profiling,120,100,60
llama,mlp,A100,profiling,330,300,60
llama,attn,H100,profiling,55,50,60
llama,mlp,H100,profiling,165,150,60
)";

QString write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

bool sameColor(const QColor& a, const QColor& b) {
    return qAbs(a.red() - b.red()) <= 2 && qAbs(a.green() - b.green()) <= 2 &&
           qAbs(a.blue() - b.blue()) <= 2;
}

// One kernel of `ncu --csv --page raw` (an Nsight Compute export of one kernel): many metrics.
const char* const kNcuOneKernel =
    R"csv("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpc__cycles_elapsed.max","dram__bytes_read.sum","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","sm__inst_executed.sum",
"","","","","","","","","","","","cycle","Mbyte","","","","","inst",
"0","4242","app","127.0.0.1","gemm_kernel(float*, float const*)","1","7","(128, 1, 1)","(80, 1, 1)","0","8.0","10,000","2.50","1","3","0.5","0.5","1,234,567",
)csv";

}  // namespace

class TestCpiViews : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString store_;
    ProfileInfo stacks_, estimates_;

  private slots:
    void initTestCase() {
        store_ = dir_.path() + "/ws.sqlite";
        auto ws = Workspace::open(store_.toStdString());
        Progress progress;
        const QString a = write(dir_.path() + "/stacks.csv", kStacks);
        const QString b = write(dir_.path() + "/estimates.csv", kEstimates);
        const auto imported =
            importFiles(*ws, {{a.toStdString(), b.toStdString()}, "", ""}, progress);
        stacks_ = *ws->profile(imported[0].id);
        estimates_ = *ws->profile(imported[1].id);
        QCOMPARE(stacks_.kind, std::string("cpi"));
        QCOMPARE(estimates_.kind, std::string("estimates"));
    }

    void renderedStacksAtKnownPixels() {
        auto ws = Workspace::open(store_.toStdString(), Workspace::Mode::ReadOnly);
        RenderOptions options;
        options.size = QSize(1200, 800);
        const QImage image = renderView("cpi", *ws, stacks_, options);
        QCOMPARE(image.size(), QSize(1200, 800));
        // Recompute the layout the renderer used and look at each segment's centre.
        const cpi::CpiData data = cpi::loadCpiData(*ws, stacks_.id);
        QImage scratch(image.size(), QImage::Format_ARGB32_Premultiplied);
        QPainter painter(&scratch);
        std::vector<charts::StackSegment> segments;
        charts::paintStackChart(painter, QRectF(0, 0, 1200, 800 * 0.68), data, {}, &segments);
        painter.end();
        QCOMPARE(segments.size(), size_t(10));  // one per stored row
        const charts::Palette palette = charts::categoryPalette(data.categories);
        for (const auto& s : segments) {
            // Inside the bottom-left corner: the centre carries the share label, the edges the
            // hw outline and the white gap between segments.
            const QPoint inside(int(s.rect.left()) + 6, int(s.rect.bottom()) - 4);
            QVERIFY(s.rect.height() > 12);
            QCOMPARE(s.color.rgb(), palette.at(s.category).rgb());
            QVERIFY2(sameColor(image.pixelColor(inside), s.color), s.category.c_str());
        }
        // Absolute scale: ele1 hw (200 cycles) is twice as tall as gemm hw (100 cycles).
        double gemmHw = 0, ele1Hw = 0;
        for (const auto& s : segments) {
            const auto& stack = data.stacks[static_cast<size_t>(s.stack)];
            if (stack.source != "hw") continue;
            (stack.kernel == "gemm" ? gemmHw : ele1Hw) += s.rect.height();
        }
        QVERIFY(qAbs(ele1Hw - 2 * gemmHw) < 1.0);
        // The MAPE panel below draws AMALI's bars in its series colour.
        int amaliPixels = 0;
        for (int y = static_cast<int>(800 * 0.68); y < 800; ++y)
            for (int x = 0; x < 1200; x += 2)
                if (image.pixelColor(x, y) == charts::seriesColor(1)) ++amaliPixels;
        QVERIFY(amaliPixels > 200);
    }

    void oneKernelsMetricsReadAsRows() {
        // Issue 32: an Nsight Compute export of one kernel showed its metrics as one row of 58
        // columns, about three visible at 1280x800. A few kernels start as a row per metric.
        const QString path = write(dir_.path() + "/one.ncu.csv", kNcuOneKernel);
        ProfileInfo profile;
        {
            auto ws = Workspace::open(store_.toStdString());
            Progress progress;
            profile = *ws->profile(
                importFiles(*ws, {{path.toStdString()}, "", "ncu-csv"}, progress).at(0).id);
        }
        CpiView view(profile, store_);
        new QAbstractItemModelTester(view.metricsModel(),
                                     QAbstractItemModelTester::FailureReportingMode::QtTest, &view);
        QSignalSpy loaded(&view, &CpiView::loaded);
        QVERIFY(loaded.wait(10000));
        QVERIFY(view.metricsAsRows()->isChecked());
        QAbstractItemModel* model = view.metricsTable()->model();
        const int metrics = model->rowCount();
        QVERIFY2(metrics >= 7, qPrintable(QString::number(metrics)));
        QCOMPARE(model->columnCount(), 3);  // metric, unit, the kernel
        QCOMPARE(model->headerData(2, Qt::Horizontal).toString(),
                 QString("#0 gemm_kernel(float*, float const*)"));
        int cycles = -1;
        for (int r = 0; r < metrics; ++r)
            if (model->index(r, 0).data().toString() == "gpc__cycles_elapsed.max") cycles = r;
        QVERIFY(cycles >= 0);
        QCOMPARE(model->index(cycles, 1).data().toString(), QString("cycle"));
        QCOMPARE(model->index(cycles, 2).data(tablekit::kSortRole).toDouble(), 10000.0);
        // Drawn: at 1200x800 every metric's row is inside the table's viewport.
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTableView* table = view.metricsTable();
        auto* tabs = qobject_cast<QTabWidget*>(table->parentWidget()->parentWidget());
        QVERIFY(tabs);
        tabs->setCurrentWidget(table);
        QCoreApplication::processEvents();
        const int lastRow = table->rowViewportPosition(metrics - 1);
        QVERIFY2(
            lastRow >= 0 && lastRow + table->rowHeight(metrics - 1) <= table->viewport()->height(),
            qPrintable(QString("row %1 at %2 in %3")
                           .arg(metrics - 1)
                           .arg(lastRow)
                           .arg(table->viewport()->height())));
        // Sorting by the kernel's values, then back to a row per kernel.
        table->sortByColumn(2, Qt::DescendingOrder);
        QCOMPARE(model->index(0, 0).data().toString(), QString("sm__inst_executed.sum"));
        view.metricsAsRows()->setChecked(false);
        QCOMPARE(model->rowCount(), 1);
        QCOMPARE(model->columnCount(), metrics + 2);
        QCOMPARE(model->index(0, 0).data().toString(),
                 QString("#0 gemm_kernel(float*, float const*)"));
    }

    void narrowChartKeepsEveryKernel() {
        // Issue 32: at 1280x800 the chart dropped 3 of 9 kernels to make room for the legend
        // beside it, and the footer saying so was elided. The legend now goes under the plot.
        std::vector<cpi::KernelStack> stacks;
        const std::vector<std::string> categories{
            "selected",        "not_selected",     "math_pipe_throttle", "wait",
            "long_scoreboard", "short_scoreboard", "lg_throttle",        "mio_throttle",
            "no_instruction",  "barrier"};
        for (int k = 0; k < 9; ++k)
            for (const char* source : {"hw", "AMALI", "GCoM"}) {
                cpi::KernelStack stack{"kernel_" + std::to_string(k), source, "", {}};
                for (size_t c = 0; c < categories.size(); ++c)
                    stack.cycles[categories[c]] = 1000.0 * double(k + 1) + double(c) * 10;
                stacks.push_back(stack);
            }
        const cpi::CpiData data = cpi::buildCpiData(stacks);
        QImage image(420, 420, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        std::vector<charts::StackSegment> segments;
        const charts::StackChartLayout layout =
            charts::paintStackChart(painter, QRectF(0, 0, 420, 420), data, {}, &segments);
        painter.end();
        QCOMPARE(layout.kernels.size(), size_t(9));
        QCOMPARE(layout.hiddenKernels, 0);
        // The legend's swatches sit under the bars, at the chart's left edge.
        double barsBottom = 0;
        for (const auto& seg : segments) barsBottom = std::max(barsBottom, seg.rect.bottom());
        const QColor top = charts::categoryPalette(data.categories).at(data.categories.back());
        int swatch = -1;
        for (int y = int(barsBottom) + 1; y < 420 && swatch < 0; ++y)
            if (sameColor(image.pixelColor(14, y), top)) swatch = y;
        QVERIFY2(swatch > barsBottom, qPrintable(QString("bars end at %1").arg(barsBottom)));
        // A wide chart keeps its legend beside the plot.
        QImage wide(1400, 420, QImage::Format_ARGB32_Premultiplied);
        wide.fill(Qt::white);
        QPainter widePainter(&wide);
        QCOMPARE(
            charts::paintStackChart(widePainter, QRectF(0, 0, 1400, 420), data, {}).kernels.size(),
            size_t(9));
        widePainter.end();
        QVERIFY(!sameColor(wide.pixelColor(14, swatch), top));
    }

    void categoryColoursAreStable() {
        QCOMPARE(charts::categoryColor("long_scoreboard"),
                 charts::categoryColor("long_scoreboard"));
        QVERIFY(charts::categoryColor("long_scoreboard") != charts::categoryColor("selected"));
        QCOMPARE(charts::categoryColor("MemData").name(), QString("#3572c6"));
        // Categories of one class drawn together get distinct shades of the class hue.
        const charts::Palette palette =
            charts::categoryPalette({"lg_throttle", "mio_throttle", "long_scoreboard"});
        QCOMPARE(palette.size(), size_t(3));
        QVERIFY(palette.at("lg_throttle") != palette.at("mio_throttle"));
        // A class alone keeps its plain colour.
        QCOMPARE(charts::categoryPalette({"long_scoreboard"}).at("long_scoreboard").rgb(),
                 charts::categoryColor("long_scoreboard").rgb());
    }

    void cpiViewLoadsOnWorkerAndHovers() {
        CpiView view(stacks_, store_);
        QSignalSpy loaded(&view, &CpiView::loaded);
        // Every model the view shows stays consistent through loading, sorting and mode changes.
        for (QTableView* table : {view.stacksTable(), view.mapeTable(), view.metricsTable()})
            new QAbstractItemModelTester(
                table->model(), QAbstractItemModelTester::FailureReportingMode::QtTest, &view);
        QSignalSpy suggestions(&view, &CpiView::suggestionsChanged);
        QVERIFY(loaded.wait(10000));
        QCOMPARE(suggestions.count(), 1);
        const auto items = suggestions.at(0).at(0).value<QList<SuggestionItem>>();
        QVERIFY(!items.isEmpty());
        QVERIFY(items[0].text.contains("long_scoreboard"));
        QCOMPARE(view.stacksTable()->model()->rowCount(), 4);
        // Sorting by total puts ele1 hw (200 cycles) first.
        view.stacksTable()->sortByColumn(3, Qt::DescendingOrder);
        QCOMPARE(view.stacksTable()->model()->index(0, 3).data().toDouble(), 200.0);
        QCOMPARE(view.stacksTable()->model()->index(0, 0).data().toString(), QString("ele1"));
        QCOMPARE(view.mapeTable()->model()->rowCount(), 3);  // overall + gemm + ele

        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QImage shot = view.stackChart()->grab().toImage();
        QVERIFY(!view.stackChart()->segments().empty());
        const charts::StackSegment& s = view.stackChart()->segments().front();
        // Inside the bottom-left corner (the centre may carry the share label).
        const QPointF inside(s.rect.left() + 6, s.rect.bottom() - 4);
        QVERIFY(sameColor(shot.pixelColor((inside * shot.devicePixelRatio()).toPoint()), s.color));
        QCOMPARE(s.color.rgb(),
                 charts::categoryPalette(view.viewData().raw.categories).at(s.category).rgb());
        const QString tip = view.stackChart()->hoverText(s.rect.center());
        QVERIFY2(tip.contains("cycles") && tip.contains("%"), qPrintable(tip));
        QVERIFY(view.stackChart()->hoverText(QPointF(2, 2)).isEmpty());

        view.setClasses(true);
        QStringList headers;
        for (int c = 0; c < view.stacksTable()->model()->columnCount(); ++c)
            headers << view.stacksTable()->model()->headerData(c, Qt::Horizontal).toString();
        QVERIFY(headers.contains("MemData"));
        QVERIFY(!headers.contains("long_scoreboard"));

        const QString csv = dir_.path() + "/export.csv";
        QVERIFY(view.exportCsv(csv));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readLine(), QByteArray("kernel,source,group,category,cycles\n"));
        QVERIFY(view.exportPng(dir_.path() + "/export.png"));
        QVERIFY(QImage(dir_.path() + "/export.png").width() == 1400);
        QVERIFY(view.exportSvg(dir_.path() + "/export.svg"));
        QFile svg(dir_.path() + "/export.svg");
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("<svg"));
    }

    void estimatesScatterAtKnownPixels() {
        auto ws = Workspace::open(store_.toStdString(), Workspace::Mode::ReadOnly);
        const auto data = estimates::loadEstimates(*ws, estimates_.id);
        QImage image(900, 700, QImage::Format_ARGB32_Premultiplied);
        QPainter painter(&image);
        std::vector<charts::ScatterPoint> points;
        charts::paintEstimateScatter(painter, QRectF(0, 0, 900, 700), data, &points);
        painter.end();
        QCOMPARE(points.size(), size_t(8));
        for (const auto& p : points) {
            const int estimator = data.rows[p.row].estimator == "analytical" ? 0 : 1;
            QVERIFY(sameColor(image.pixelColor(p.position.toPoint()),
                              charts::seriesColor(estimator + 1)));
        }
        // Exact predictions (analytical on H100) sit on the y = x line: equal distance from the
        // left and the bottom of the square plot.
        const auto& exact = points[2];
        const auto& other = points[3];
        QVERIFY(qAbs((exact.position.x() - other.position.x()) +
                     (exact.position.y() - other.position.y())) < 1e-6);
    }

    void estimatesViewTables() {
        EstimatesView view(estimates_, store_);
        QSignalSpy loaded(&view, &EstimatesView::loaded);
        QVERIFY(loaded.wait(10000));
        QCOMPARE(view.rowsTable()->model()->rowCount(), 8);
        // Two transitions rows (one per estimator) and two mean-absolute rows.
        QCOMPARE(view.speedupTable()->model()->rowCount(), 4);
        QCOMPARE(view.speedupTable()->model()->index(0, 5).data().toDouble(), -20.0);
        QVERIFY(view.exportSvg(dir_.path() + "/estimates.svg"));
    }

    void commandLine() {
        QProcess p;
        p.start(STALLSCOPE_BINARY,
                {"--store", store_, "cpi", QString::fromStdString(stacks_.name), "--json"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject json = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        const QJsonArray mape = json.value("mape").toArray();
        QCOMPARE(mape.size(), 1);
        // gemm: 110 vs 100 (10%), ele1: 180 vs 200 (10%).
        QCOMPARE(mape[0].toObject().value("model").toString(), QString("AMALI"));
        QVERIFY(qAbs(mape[0].toObject().value("mape_pct").toDouble() - 10) < 1e-9);
        QCOMPARE(json.value("kernels").toArray().size(), 4);

        p.start(STALLSCOPE_BINARY, {"--store", store_, "estimates",
                                    QString::fromStdString(estimates_.name), "--json"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject est = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(est.value("mape").toArray().size(), 4);
        QCOMPARE(est.value("speedup_errors").toArray().size(), 2);

        // Wrong kind is a usage error (exit 2) that names the profile.
        p.start(STALLSCOPE_BINARY,
                {"--store", store_, "cpi", QString::fromStdString(estimates_.name)});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("is a estimates profile, not cpi"));

        const QString out = dir_.path() + "/render.png";
        p.start(STALLSCOPE_BINARY,
                {"--store", store_, "render", "cpi", QString::fromStdString(stacks_.name), "--out",
                 out, "--size", "800x500"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(QImage(out).size(), QSize(800, 500));
    }
};

QTEST_MAIN(TestCpiViews)
#include "test_cpi_views.moc"
