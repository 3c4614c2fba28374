// Comparison views (issue 8): the replay comparison's synchronized selection, cursor, scroll
// and alignment, table order and sorting, renders checked at known pixels; the trace
// comparison's CDF op chooser and chart; the CPI and noise comparison views.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QHeaderView>
#include <QScrollBar>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "core/replay/generate.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/chart_kit.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/cpi/cpi_charts.h"
#include "views/cpi/cpi_compare_view.h"
#include "views/noise/noise_compare_view.h"
#include "views/replay/replay_compare_view.h"
#include "views/replay/replay_tracks.h"
#include "views/trace/trace_compare_view.h"

using namespace stallscope;

namespace {

ProfileInfo profileNamed(const std::string& name) {
    ProfileInfo p;
    p.name = name;
    p.kind = "replay";
    return p;
}

ReplayComparisonPtr allgatherVsPinned() {
    return compareReplayDocuments(
        buildReplayDocument(replay::generateWorkload("allgather"), profileNamed("ag"), false),
        buildReplayDocument(replay::generateWorkload("allgather-pinned"), profileNamed("pinned"),
                            false));
}

// Stall-density purple on the minimap (blended with the window overlay): red well above green.
bool stallPurple(QColor c) {
    return c.red() > c.green() + 25 && c.blue() > c.green() + 25;
}

int countPixels(const QImage& image, const QRect& area, const std::function<bool(QColor)>& test) {
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x) n += test(image.pixelColor(x, y));
    return n;
}

std::vector<double> sortKeys(const QTableWidget* table, int column) {
    std::vector<double> out;
    for (int r = 0; r < table->rowCount(); ++r)
        out.push_back(table->item(r, column)->data(tablekit::kSortRole).toDouble());
    return out;
}

cpi::KernelStack stack(std::string kernel, std::string source,
                       std::map<std::string, double> cycles) {
    return cpi::KernelStack{std::move(kernel), std::move(source), {}, std::move(cycles)};
}

CpiCompareData cpiPair() {
    return compareCpiData(
        cpi::buildCpiData({stack("gemm", "hw", {{"selected", 600}, {"long_scoreboard", 400}}),
                           stack("gemm", "amali", {{"selected", 700}, {"long_scoreboard", 300}}),
                           stack("softmax", "hw", {{"selected", 300}, {"barrier", 100}}),
                           stack("old", "hw", {{"selected", 50}})}),
        cpi::buildCpiData({stack("gemm", "hw", {{"selected", 600}, {"long_scoreboard", 100}}),
                           stack("gemm", "amali", {{"selected", 650}, {"long_scoreboard", 200}}),
                           stack("softmax", "hw", {{"selected", 300}, {"barrier", 20}}),
                           stack("new", "hw", {{"selected", 80}})}));
}

std::vector<noise::NoiseRun> noiseRuns(double k1, double t0) {
    std::vector<noise::NoiseRun> runs;
    for (const char* mode : {"fp_add64", "l1_ld64"})
        for (double k = 0; k <= 32; k += 2)
            for (int rep = 0; rep < 3; ++rep) {
                noise::NoiseRun r;
                r.region = "loop";
                r.mode = mode;
                r.k = k;
                r.rep = rep;
                r.bodyInstr = 40;
                const double knee = std::string(mode) == "fp_add64" ? k1 : 20;
                r.time = (k <= knee ? t0 : t0 + 4 * (k - knee)) * (1 + 0.002 * rep);
                runs.push_back(r);
            }
    return runs;
}

}  // namespace

class TestCompareViews : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void replaySelectionCursorScrollAndTablesFollowBothSides();
    void replayAlignmentAtAnHloOp();
    void replayRenderAtKnownPixels();
    void traceCompareTableOrderCdfOpAndChart();
    void cpiComparisonView();
    void noiseComparisonView();
};

void TestCompareViews::replaySelectionCursorScrollAndTablesFollowBothSides() {
    ReplayCompareView view(allgatherVsPinned());
    view.resize(1400, 900);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    TimelineView* a = view.before();
    TimelineView* b = view.after();
    const auto& c = view.data()->comparison;

    // Same rows, same heights: HLO band, two DMA lanes, three units on each side. The pinned
    // run has no setup DMAs: its hbm→dcache row says so instead of being left out.
    QCOMPARE(view.tracksA().lanes.size(), size_t(2));
    QCOMPARE(view.tracksB().lanes.size(), size_t(1));
    QCOMPARE(a->tracks().size(), b->tracks().size());
    QCOMPARE(a->tracks().size(), size_t(6));
    for (size_t i = 0; i < a->tracks().size(); ++i)
        QCOMPARE(a->tracks()[i]->height(), b->tracks()[i]->height());
    QCOMPARE(a->tracks()[1]->title(), QString("DMA hbm→dcache · 36"));
    QCOMPARE(b->tracks()[1]->title(), QString("DMA hbm→dcache"));
    QCOMPARE(a->tracks()[2]->height(),
             std::max(view.tracksA().lanes[1]->height(), view.tracksB().lanes[0]->height()));
    QCOMPARE(view.laneRow(false, 0), b->tracks()[2].get());
    QCOMPARE(a->tracks()[5]->title(), b->tracks()[5]->title());

    // One cycle axis.
    a->setWindow({1000, 9000});
    QCOMPARE(b->window(), (TimeRange{1000, 9000}));
    b->setWindow({2000, 4000});
    QCOMPARE(a->window(), (TimeRange{2000, 4000}));

    // Clicking a DMA in A selects its matched DMA in B and its row in the table.
    size_t index = 0;
    while (c.dmas[index].match == replay::DmaMatch::OnlyInA) ++index;
    const replay::DmaDelta& d = c.dmas[index];
    const DmaLaneTrack& laneA = *view.tracksA().laneOf(d.a);
    const TimelineItem itemA = laneA.itemFor(d.a);
    a->fitRange({itemA.start, itemA.end}, 0.5);
    QApplication::processEvents();
    const QSize size = a->viewport()->size();
    const QRect rowRect = a->trackRect(view.laneRow(true, laneA.lane()), size);
    QVERIFY(!rowRect.isEmpty());
    const QRectF bar = laneA.barRect(rowRect, itemA.row);
    const auto& timing = view.data()->a->analysis.sim.dmas[d.a];
    const QPoint click(int(a->mappingFor(size).x(double(timing.issueCycle) + 50)),
                       int(bar.top() + 4));
    QTest::mouseClick(a->viewport(), Qt::LeftButton, {}, click);
    QVERIFY(a->selection());
    QCOMPARE(a->selection()->item.id, int64_t(d.a));
    QVERIFY(b->selection());
    QCOMPARE(b->selection()->item.id, int64_t(d.b));
    QCOMPARE(view.dmaDeltaOfRow(view.dmaTable()->currentRow()), int(index));

    // Clearing the selection in B clears A's.
    b->clearSelection();
    QVERIFY(!a->selection());

    // The cursor follows the mouse in both; leaving either clears both.
    QTest::mouseMove(a->viewport(), click + QPoint(10, 0));
    QVERIFY(a->cursorTime() && b->cursorTime());
    QCOMPARE(*b->cursorTime(), *a->cursorTime());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(a->viewport(), &leave);
    QVERIFY(!a->cursorTime());
    QVERIFY(!b->cursorTime());

    // A row of the DMA table selects both DMAs and zooms both timelines onto them.
    a->fitAll();
    int row = -1;
    for (int r = 0; r < view.dmaTable()->rowCount(); ++r) {
        const auto& candidate = c.dmas[size_t(view.dmaDeltaOfRow(r))];
        if (candidate.a != replay::kNone && candidate.b != replay::kNone &&
            view.dmaDeltaOfRow(r) != int(index))
            row = r;
    }
    QVERIFY(row >= 0);
    view.dmaTable()->setCurrentCell(row, 3);
    const replay::DmaDelta& e = c.dmas[size_t(view.dmaDeltaOfRow(row))];
    QVERIFY(a->selection() && b->selection());
    QCOMPARE(a->selection()->item.id, int64_t(e.a));
    QCOMPARE(b->selection()->item.id, int64_t(e.b));
    const auto& ta = view.data()->a->analysis.sim.dmas[e.a];
    QVERIFY(a->window().contains(double(ta.issueCycle)));
    QVERIFY(a->window().length() < 56344 / 2);
    QCOMPARE(b->window(), a->window());

    // Rows scroll together.
    view.resize(1400, 600);
    QApplication::processEvents();
    QVERIFY(a->verticalScrollBar()->maximum() > 40);
    a->verticalScrollBar()->setValue(40);
    QCOMPARE(b->verticalScrollBar()->value(), 40);

    // Tables: largest change first, kept until a header is clicked; sorting is numeric.
    QCOMPARE(view.opTable()->item(0, 0)->text(), QString::fromStdString(c.ops[0].name));
    QCOMPARE(view.opTable()->horizontalHeader()->sortIndicatorSection(), -1);
    // DMAs: largest |Δ stall| first (a setup DMA gone from B: its whole stall).
    int64_t largest = 0;
    for (const auto& m : c.dmas)
        largest = std::max<int64_t>(largest, std::llabs(m.stallB - m.stallA));
    QCOMPARE(largest, int64_t(407));
    QCOMPARE(view.dmaTable()->item(0, 5)->text(), QString("\u2212407"));
    QCOMPARE(view.dmaTable()->item(0, 1)->text(), QString("—"));
    view.dmaTable()->sortItems(5, Qt::AscendingOrder);  // Δ stall: −409 before −10 before 0
    const auto keys = sortKeys(view.dmaTable(), 5);
    QVERIFY(std::is_sorted(keys.begin(), keys.end()));
    QVERIFY(keys.front() < -100 && keys.back() >= 0);
    // Totals: cycles, stall, base, transfer, slack with A, B, Δ, Δ%.
    QTableWidget* totals = view.totalsTable();
    QCOMPARE(totals->item(0, 1)->text(), QString("56,344"));
    QCOMPARE(totals->item(0, 2)->text(), QString("41,656"));
    QCOMPARE(totals->item(0, 3)->text(), QString("\u221214,688"));
    QCOMPARE(totals->item(0, 4)->text(), QString("\u221226.1%"));
    QCOMPARE(totals->item(2, 1)->text(), QString("26,136"));  // base-latency stall
    QCOMPARE(totals->item(3, 2)->text(), QString("24,576"));  // transfer stall in B
    const QStringList totalsCsv = view.totalsCsv().split('\n');
    QCOMPARE(totalsCsv[0], QString("metric,a,b,delta,delta_pct"));
    QVERIFY2(totalsCsv[1].startsWith("total_cycles,56344,41656,-14688,-26.068"),
             qPrintable(totalsCsv[1]));
    const QStringList opCsv = view.opCsv().split('\n', Qt::SkipEmptyParts);
    QCOMPARE(opCsv.size(), int(c.ops.size()) + 1);
    QCOMPARE(opCsv[0], QString("op,a_cycles,b_cycles,delta_cycles,delta_pct"));
    QVERIFY2(opCsv[1].startsWith(QString::fromStdString(c.ops[0].name) + ",13446,9774,-3672,"),
             qPrintable(opCsv[1]));
    const QString path = dir_.filePath("ops.csv");
    QVERIFY(view.exportCsv(ReplayCompareView::Table::Ops, path));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(file.readAll()), view.opCsv());
}

void TestCompareViews::replayAlignmentAtAnHloOp() {
    ReplayCompareView view(allgatherVsPinned());
    view.resize(1400, 900);
    TimelineView* a = view.before();
    TimelineView* b = view.after();
    // The start, then every HLO op of both runs.
    QCOMPARE(view.alignBox()->count(),
             1 + int(replay::commonHloOps(view.data()->a->trace, view.data()->b->trace).size()));
    QVERIFY(view.alignBox()->findData(QString("all-gather.2")) > 0);
    view.setAlignment("all-gather.2");
    QCOMPARE(view.alignment().offset(), int64_t(-7344));  // 20,828 in B, 28,172 in A
    QCOMPARE(view.alignBox()->currentText(), QString("at all-gather.2"));
    QCOMPARE(b->window().start - a->window().start, -7344.0);
    QCOMPARE(b->extent().start - a->extent().start, -7344.0);
    a->setWindow({28000, 30000});
    QCOMPARE(b->window(), (TimeRange{28000 - 7344, 30000 - 7344}));
    b->setWindow({20000, 21000});
    QCOMPARE(a->window(), (TimeRange{27344, 28344}));
    // The cursor maps through the same offset.
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTest::mouseMove(a->viewport(), QPoint(600, 120));
    QVERIFY(a->cursorTime() && b->cursorTime());
    QCOMPARE(*b->cursorTime(), *a->cursorTime() - 7344);
    view.setAlignment("");
    QCOMPARE(view.alignment().offset(), int64_t(0));
    QCOMPARE(b->window(), a->window());
}

void TestCompareViews::replayRenderAtKnownPixels() {
    ReplayCompareView view(allgatherVsPinned());
    const int width = 1200;
    QImage image = view.renderImage(QSize(width, 800), true);
    // Fitted: summary (50) + per side a label strip (20) and the whole timeline.
    const int half = view.before()->fittedSize(QSize(width, 1 << 20)).height();
    QCOMPARE(image.size(), QSize(width, 50 + 2 * (20 + half)));
    const int topA = 50 + 20, topB = 50 + 20 + half + 20;
    // Minimaps share the axis [0, 56,344]: B (41,656 cycles) has no stall density right of
    // x = 200 + 41656 / 56344 * 992 ≈ 933, A has some there.
    const QRect rightOfB(960, 0, width - 8 - 960 - 2, TimelineView::kMinimapHeight - 8);
    QCOMPARE(countPixels(image, rightOfB.translated(0, topB + 4), stallPurple), 0);
    QVERIFY(countPixels(image, rightOfB.translated(0, topA + 4), stallPurple) > 20);
    QVERIFY(countPixels(image, QRect(210, topB + 4, 700, 20), stallPurple) > 200);
    // The label strips hold the side names, clear of the minimaps.
    QVERIFY(countPixels(image, QRect(8, topA - 16, 120, 12),
                        [](QColor c) { return c.lightness() < 90; }) > 10);

    // Aligned at all-gather.2, its band starts at the same x in both halves (28,172 in A,
    // 20,828 in B); unaligned, B is in the middle of the op there.
    const QSize size(width, half);
    auto bandY = [&](TimelineView* v) {
        return v->trackRect(v->tracks()[0].get(), size).center().y();
    };
    const QColor opColor = image.pixelColor(int(view.before()->mappingFor(size).x(28172 + 300)),
                                            topA + bandY(view.before()));
    QVERIFY(opColor.saturation() > 40);
    // The first x around A's op start where the band turns into the op's colour.
    auto opStartX = [&](const QImage& img, int top, TimelineView* v) {
        const int y = top + bandY(v);
        const int from = int(view.before()->mappingFor(size).x(28172 - 1500));
        const int to = int(view.before()->mappingFor(size).x(28172 + 1500));
        for (int x = from + 1; x <= to; ++x)
            if (img.pixelColor(x, y) == opColor && img.pixelColor(x - 1, y) != opColor) return x;
        return -1;
    };
    const int startA = opStartX(image, topA, view.before());
    QVERIFY(std::abs(startA - view.before()->mappingFor(size).x(28172)) <= 2);
    QCOMPARE(opStartX(image, topB, view.after()), -1);
    view.setAlignment("all-gather.2");
    image = view.renderImage(QSize(width, 800), true);
    QCOMPARE(opStartX(image, topA, view.before()), startA);
    QVERIFY(std::abs(opStartX(image, topB, view.after()) - startA) <= 1);
    QCOMPARE(view.after()->mappingFor(size).x(20828), view.before()->mappingFor(size).x(28172));
}

void TestCompareViews::traceCompareTableOrderCdfOpAndChart() {
    const QString samples = QStringLiteral(STALLSCOPE_SHARED_DIR) + "/samples/kineto/";
    if (!QFile::exists(samples + "before_fix_trace.json")) QSKIP("samples not available");
    const std::string path = dir_.filePath("kineto.sqlite").toStdString();
    int64_t ida = 0, idb = 0;
    {
        auto ws = Workspace::open(path);
        Progress progress;
        ida = importFiles(
                  *ws, ImportRequest{{(samples + "before_fix_trace.json").toStdString()}, {}, {}},
                  progress)
                  .at(0)
                  .id;
        idb = importFiles(*ws,
                          ImportRequest{{(samples + "after_fix_trace.json").toStdString()}, {}, {}},
                          progress)
                  .at(0)
                  .id;
    }
    CompareView view;
    view.setAsynchronous(false);
    view.resize(1400, 900);
    QAbstractItemModelTester deltaTester(view.deltaModel(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setData(loadTraceComparison(path, ida, idb));
    // The comparison's order (|Δ total| descending, then name) with no sort column.
    QTableView* table = view.deltaTable();
    QCOMPARE(table->horizontalHeader()->sortIndicatorSection(), -1);
    // Issue 32: the change sits beside the op's name, not after ten A/B columns.
    QCOMPARE(table->horizontalHeader()->visualIndex(CompareView::kDeltaTotalColumn), 1);
    QCOMPARE(table->horizontalHeader()->visualIndex(CompareView::kDeltaPctColumn), 2);
    QCOMPARE(table->model()->headerData(CompareView::kDeltaTotalColumn, Qt::Horizontal).toString(),
             QString("Δ total"));
    QCOMPARE(table->model()->index(0, 0).data().toString(), QString("Event Sync"));
    QCOMPARE(table->model()->index(8, 0).data().toString(), QString("op_wait"));
    table->sortByColumn(3, Qt::DescendingOrder);  // Total A
    QCOMPARE(table->model()->index(0, 0).data().toString(), QString("Test trace (0)"));
    QCOMPARE(table->model()->index(1, 0).data().toString(), QString("op1"));
    // CDF op chooser: A's ops by total time, then "all ops"; the largest is the default.
    QComboBox* ops = view.cdfOpBox();
    QCOMPARE(ops->count(), 10);
    QCOMPARE(ops->currentData().toString(), QString("Test trace (0)"));
    QCOMPARE(ops->itemData(1).toString(), QString("op1"));
    QCOMPARE(ops->itemData(9).toString(), QString("*"));
    view.setCdfOp("op1");
    QCOMPARE(ops->currentData().toString(), QString("op1"));
    QCOMPARE(view.cdfChart()->xTitle(), QString("op1 duration / its median in A"));

    // The CDF chart: identical curves (durations are equal) still show A (dashed blue) over B
    // (orange), the A median marker and the x-axis title.
    QImage chart(420, 260, QImage::Format_ARGB32_Premultiplied);
    chart.fill(Qt::white);
    {
        QPainter painter(&chart);
        view.cdfChart()->paintChart(painter, chart.rect());
    }
    const QRect plot = view.cdfChart()->plotArea(chart.rect());
    auto near = [](QColor want) {
        return [want](QColor c) {
            return std::abs(c.red() - want.red()) < 40 && std::abs(c.green() - want.green()) < 40 &&
                   std::abs(c.blue() - want.blue()) < 40;
        };
    };
    QVERIFY(countPixels(chart, plot, near(CdfChart::kColorA)) > 20);
    QVERIFY(countPixels(chart, plot, near(CdfChart::kColorB)) > 20);
    const QRect xTitle(plot.left(), plot.bottom() + 19, plot.width(), 14);
    QVERIFY(countPixels(chart, xTitle, [](QColor c) { return c.lightness() < 120; }) > 30);

    // The minimaps show each profile's busy time (empty before).
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage a = view.timelineA()->renderImage(QSize(1000, 200));
    QVERIFY(countPixels(a, QRect(TimelineView::kGutterWidth + 2, 6, 700, 16),
                        [](QColor c) { return c.blue() > c.red() + 40; }) > 1000);
}

void TestCompareViews::cpiComparisonView() {
    CpiCompareView view(cpiPair());
    QVERIFY(view.isLoaded());
    QCOMPARE(view.summary(), QString("B vs A (hw): \u221227.1% cycles, \u221276.0% stall cycles "
                                     "over 2 kernels, 1 only in A, 1 only in B"));
    // Per kernel: gemm/hw changed most (−300), then gemm/amali (−150), then softmax (−80).
    QTableWidget* kernels = view.kernelTable();
    QCOMPARE(kernels->rowCount(), 3);
    QCOMPARE(kernels->item(0, 0)->text() + "/" + kernels->item(0, 1)->text(), QString("gemm/hw"));
    QCOMPARE(kernels->item(0, 4)->text(), QString("\u2212300"));
    QCOMPARE(kernels->item(0, 5)->text(), QString("\u221230.0%"));
    QCOMPARE(kernels->item(2, 0)->text(), QString("softmax"));
    const QStringList sources = view.csv(CpiCompareView::Table::Sources).split('\n');
    QCOMPARE(sources[1], QString("hw,2,1400,1020,-27.1428571428571,500,120,-76"));
    QCOMPARE(sources[2], QString("amali,1,1000,850,-15,300,200,-33.3333333333333"));
    QVERIFY(view.csv(CpiCompareView::Table::Categories)
                .contains("gemm,hw,long_scoreboard,MemData,400,100,-300,-75\n"));
    // GSI classes: long_scoreboard folds into MemData, barrier into Sync.
    view.setClasses(true);
    QVERIFY(view.csv(CpiCompareView::Table::Categories).contains("gemm,hw,MemData,MemData,400,"));

    // The per-category delta chart at known pixels: bars left of the zero line for fewer
    // cycles, in the category's colour, as long as the largest |Δ| over half the plot.
    view.setClasses(false);
    QImage image(600, 300, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    std::vector<CategoryDeltaBar> bars;
    {
        QPainter painter(&image);
        bars = paintCategoryDeltas(painter, QRectF(image.rect()), view.current(), -1);
    }
    // Summed over hw's two kernels: selected 900 -> 900, long_scoreboard 400 -> 100,
    // barrier 100 -> 20.
    QCOMPARE(bars.size(), size_t(3));
    const CategoryDeltaBar* scoreboard = nullptr;
    const CategoryDeltaBar* barrier = nullptr;
    for (const auto& bar : bars) {
        if (bar.category == "long_scoreboard") scoreboard = &bar;
        if (bar.category == "barrier") barrier = &bar;
        if (bar.category == "selected") QVERIFY(bar.rect.isEmpty());
    }
    QVERIFY(scoreboard && barrier);
    QCOMPARE(scoreboard->a, 400.0);
    QCOMPARE(scoreboard->b, 100.0);
    QVERIFY(std::abs(scoreboard->rect.right() - barrier->rect.right()) < 0.5);  // the zero line
    QVERIFY(std::abs(barrier->rect.width() / scoreboard->rect.width() - 80.0 / 300.0) < 0.01);
    const QPoint center = scoreboard->rect.center().toPoint();
    // Compared as RGB values: the palette may build its colours in HSL.
    QCOMPARE(image.pixelColor(center).rgb(), charts::categoryColor("long_scoreboard").rgb());
    QCOMPARE(image.pixelColor(barrier->rect.center().toPoint()).rgb(),
             charts::categoryColor("barrier").rgb());
    // Side by side: A's and B's bars of each source in one kernel group.
    const cpi::CpiData side = sideBySideStacks(view.current());
    QCOMPARE(side.sources, (std::vector<std::string>{"A·hw", "B·hw", "A·amali", "B·amali"}));
    QCOMPARE(side.stacks.size(), size_t(6));
}

void TestCompareViews::noiseComparisonView() {
    NoiseCompareView view(
        compareNoise(noise::analyzeRuns(noiseRuns(8, 100)), noise::analyzeRuns(noiseRuns(16, 90))));
    QVERIFY(view.isLoaded());
    QVERIFY2(view.summary().startsWith(
                 "B vs A: \u221210.0% plateau runtime, absorption changed on 1 of 2 matched"),
             qPrintable(view.summary()));
    QCOMPARE(view.groupBox()->count(), 1);
    QCOMPARE(view.table()->rowCount(), 2);
    const QStringList csv = view.csv().split('\n', Qt::SkipEmptyParts);
    QCOMPARE(csv.size(), 3);
    QVERIFY2(csv[1].startsWith(",loop,,fp_add64,8,16,8,0.2,0.4,"), qPrintable(csv[1]));
    QVERIFY2(csv[2].startsWith(",loop,,l1_ld64,20,20,0,0.5,0.5,"), qPrintable(csv[2]));
    // Overlay: per mode A (points) and B (dashed) normalized to A's t0; k1 marked on both.
    const auto groups = noiseCompareGroups(view.comparison());
    const charts::ChartSpec spec = noiseOverlayChart(view.comparison(), groups[0]);
    QCOMPARE(spec.series.size(), size_t(4));
    QCOMPARE(spec.series[0].style, charts::ChartSeries::Style::LineWithPoints);
    QCOMPARE(spec.series[1].style, charts::ChartSeries::Style::Dashed);
    const double t0a = view.comparison().curves[0].a.fit.t0;
    QCOMPARE(spec.series[1].points.front().y(),
             view.comparison().curves[0].b.fit.points[0].median / t0a);  // B's plateau ≈ 0.9
    std::vector<double> markers;
    for (const auto& m : spec.markers) markers.push_back(m.x);
    QCOMPARE(markers, (std::vector<double>{8, 16, 20, 20}));
    const QImage image = renderNoiseComparison(view.comparison(), QSize(1000, 700));
    QCOMPARE(image.size(), QSize(1000, 700));
}

QTEST_MAIN(TestCompareViews)
#include "test_compare_views.moc"
