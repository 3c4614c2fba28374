// Step views of trace profiles: the stacked step chart (bar heights, colours, the step-time line),
// the Steps tab and timeline strip of a trace view on a Kineto-like trace whose GPU waits for
// the DataLoader 60 % of each step, the step picker, and the recommendation reaching the
// suggestions list and the timeline.

#include <QComboBox>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/trace/critical_path_trace_panel.h"
#include "views/trace/step_chart.h"
#include "views/trace/step_tracks.h"
#include "views/trace/steps_panel.h"
#include "views/trace/steps_trace_panel.h"
#include "views/trace/trace_compare_view.h"
#include "views/trace/trace_view.h"
#include "views/trace/transfer_tracks.h"
#include "views/trace/transfers_trace_panel.h"
#include "views/trace/whatif_box.h"
#include "views/view_kinds.h"

using namespace stallscope;

namespace {

// Two steps on one device: step 0 is 1 µs (600 ns GEMM, 400 ns idle), step 1 is 2 µs (500 ns
// GEMM, 500 ns attention, 1000 ns waiting for input).
trace::StepAnalysis handMadeAnalysis() {
    trace::StepAnalysis a;
    a.source = trace::StepSource::ProfilerStep;
    a.devices.push_back({"GPU 0", -1, {}});
    a.steps.push_back({0, "ProfilerStep#0", 0, 1000, -1});
    a.steps.push_back({1, "ProfilerStep#1", 1000, 3000, -1});
    trace::DeviceStepBreakdown first;
    first.step = 0;
    first.ns[size_t(trace::StepCategory::Compute)] = 600;
    first.ns[size_t(trace::StepCategory::Idle)] = 400;
    first.gemm = 600;
    trace::DeviceStepBreakdown second;
    second.step = 1;
    second.ns[size_t(trace::StepCategory::Compute)] = 1000;
    second.ns[size_t(trace::StepCategory::Input)] = 1000;
    second.gemm = 500;
    second.attention = 500;
    a.breakdown = {first, second};
    return a;
}

bool near(QColor a, QColor b) {
    return std::abs(a.red() - b.red()) <= 3 && std::abs(a.green() - b.green()) <= 3 &&
           std::abs(a.blue() - b.blue()) <= 3;
}

// Kineto-like: per 10 ms step the host spends `loaderUs` (6 ms: starving) in the DataLoader,
// then launches one GEMM that runs 3.7 ms on stream 7.
// firstStep: the number of the first ProfilerStep marker (profilers number from where they
// started recording).
std::string inputBoundTrace(int loaderUs = 6000, int firstStep = 0) {
    QJsonArray events{QJsonObject{{"ph", "M"},
                                  {"name", "process_name"},
                                  {"pid", 0},
                                  {"args", QJsonObject{{"name", "GPU 0"}}}},
                      QJsonObject{{"ph", "M"},
                                  {"name", "process_name"},
                                  {"pid", 1000},
                                  {"args", QJsonObject{{"name", "python"}}}}};
    for (int step = 0; step < 3; ++step) {
        const int t0 = step * 10000;
        auto slice = [](const char* cat, const QString& name, int pid, int tid, int ts, int dur) {
            return QJsonObject{{"ph", "X"},  {"cat", cat}, {"name", name}, {"pid", pid},
                               {"tid", tid}, {"ts", ts},   {"dur", dur}};
        };
        events.append(slice("user_annotation",
                            QStringLiteral("ProfilerStep#%1").arg(firstStep + step), 1000, 1000, t0,
                            10000));
        events.append(slice("user_annotation",
                            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1000,
                            1000, t0 + 10, loaderUs));
        QJsonObject launch = slice("cuda_runtime", "cudaLaunchKernel", 1000, 1000, t0 + 6100, 10);
        launch.insert("args", QJsonObject{{"correlation", step + 1}});
        events.append(launch);
        QJsonObject kernel = slice("kernel", "ampere_sgemm_128x64_nn", 0, 7, t0 + 6200, 3700);
        kernel.insert("args", QJsonObject{{"device", 0}, {"stream", 7}, {"correlation", step + 1}});
        events.append(kernel);
    }
    return QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString();
}

}  // namespace

class TestStepViews : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // Imports one file into the workspace at wsPath (created when absent); the profile's id.
    static int64_t importInto(const std::string& wsPath, const std::string& file) {
        auto ws = Workspace::open(wsPath);
        Progress progress;
        return importFiles(*ws, ImportRequest{{file}, {}, {}}, progress).at(0).id;
    }

  private slots:
    void chartBarsFollowTheBreakdown() {
        const trace::StepAnalysis analysis = handMadeAnalysis();
        QImage image(800, 400, QImage::Format_ARGB32_Premultiplied);
        QPainter painter(&image);
        const steps::ChartLayout layout =
            steps::paintStepChart(painter, QRectF(0, 0, 800, 400), analysis, {0, false, {}});
        painter.end();
        // Step 0: GEMM and idle; step 1: GEMM, attention and input.
        QCOMPARE(layout.segments.size(), size_t(5));
        QCOMPARE(layout.bars.size(), size_t(2));
        auto segment = [&](int step, const QString& key) -> const steps::Segment* {
            for (const steps::Segment& s : layout.segments)
                if (s.step == step && steps::series()[size_t(s.series)].key == key) return &s;
            return nullptr;
        };
        const steps::Segment* gemm0 = segment(0, "gemm");
        const steps::Segment* idle0 = segment(0, "idle");
        const steps::Segment* input1 = segment(1, "input");
        QVERIFY(gemm0 && idle0 && input1 && segment(1, "attention"));
        QCOMPARE(gemm0->ns, int64_t(600));
        QCOMPARE(gemm0->share, 0.6);
        // Heights in proportion to the nanoseconds: 600 : 400, and step 1's input 1000.
        QVERIFY(std::abs(gemm0->rect.height() / idle0->rect.height() - 1.5) < 0.01);
        QVERIFY(std::abs(input1->rect.height() / idle0->rect.height() - 2.5) < 0.01);
        // GEMM at the bottom, idle on top of it.
        QVERIFY(std::abs(gemm0->rect.bottom() - layout.plot.bottom()) < 0.5);
        QVERIFY(std::abs(idle0->rect.bottom() - gemm0->rect.top()) < 0.5);
        // What is drawn there has the series' colour.
        const QPoint inGemm = gemm0->rect.center().toPoint();
        QVERIFY(near(image.pixelColor(inGemm), steps::series()[0].color));
        const QPoint inInput = input1->rect.center().toPoint();
        QVERIFY(near(image.pixelColor(inInput), steps::categoryColor(trace::StepCategory::Input)));
        // The step-time line: step 1 (2 µs) twice as high above the axis as step 0 (1 µs), and
        // on top of each bar.
        QCOMPARE(layout.line.size(), size_t(2));
        const double h0 = layout.plot.bottom() - layout.line[0].y();
        const double h1 = layout.plot.bottom() - layout.line[1].y();
        QVERIFY(std::abs(h1 / h0 - 2.0) < 0.01);
        QVERIFY(std::abs(layout.line[0].y() - idle0->rect.top()) < 0.5);

        // 100 %: both bars reach the top of the plot.
        QImage normalized(800, 400, QImage::Format_ARGB32_Premultiplied);
        QPainter p2(&normalized);
        const steps::ChartLayout full =
            steps::paintStepChart(p2, QRectF(0, 0, 800, 400), analysis, {0, true, {}});
        p2.end();
        double top0 = 1e9, top1 = 1e9;
        for (const steps::Segment& s : full.segments)
            (s.step == 0 ? top0 : top1) = std::min(s.step == 0 ? top0 : top1, s.rect.top());
        QVERIFY(std::abs(top0 - full.plot.top()) < 0.5);
        QVERIFY(std::abs(top1 - full.plot.top()) < 0.5);

        // Narrow: the legend goes under the axis and names only the series drawn.
        QImage narrow(400, 300, QImage::Format_ARGB32_Premultiplied);
        QPainter p3(&narrow);
        const steps::ChartLayout small =
            steps::paintStepChart(p3, QRectF(0, 0, 400, 300), analysis, {0, false, {}});
        p3.end();
        auto colourBelowPlot = [&](QColor colour) {
            for (int y = int(small.plot.bottom()) + 20; y < narrow.height(); ++y)
                for (int x = 0; x < narrow.width(); ++x)
                    if (near(narrow.pixelColor(x, y), colour)) return true;
            return false;
        };
        QVERIFY(small.plot.right() > 380);  // no legend column on the right
        QVERIFY(colourBelowPlot(steps::series()[0].color));
        QVERIFY(colourBelowPlot(steps::categoryColor(trace::StepCategory::Input)));
        QVERIFY(!colourBelowPlot(steps::categoryColor(trace::StepCategory::Communication)));

        const QString csv = steps::breakdownCsv(analysis, 0);
        QVERIFY(csv.startsWith("step,name,start_ns,duration_ns,gemm_ns,attention_ns,"));
        QVERIFY(csv.contains("\n1,ProfilerStep#1,1000,2000,500,500,0,0,0,0,0,1000,0\n"));
    }

    void stripSplitsEachStepOverItsSpan() {
        auto analysis = std::make_shared<const trace::StepAnalysis>(handMadeAnalysis());
        StepStripTrack strip(analysis, 0, 0);
        QImage image(400, StepStripTrack::kHeight, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        QFont small = painter.font();
        small.setPixelSize(6);  // labels stay in the middle rows, away from the sampled ones
        painter.setFont(small);
        const TimeMapping mapping{{0, 4000}, 0, 400};  // 0.1 px per ns
        strip.paint(painter, QRect(0, 0, 400, StepStripTrack::kHeight), mapping, nullptr, {});
        painter.end();
        // Step 1 spans x 100..300: GEMM 100..150, attention 150..200, input 200..300.
        const int y = StepStripTrack::kHeight - 4;  // the bar spans rows 2..17
        QVERIFY(near(image.pixelColor(125, y), steps::series()[0].color));
        QVERIFY(near(image.pixelColor(175, y), steps::series()[1].color));
        QVERIFY(near(image.pixelColor(290, y), steps::categoryColor(trace::StepCategory::Input)));
        QVERIFY(near(image.pixelColor(350, y), Qt::white));  // after the last step
        QCOMPARE(strip.stepAt(1500), 1);
        QCOMPARE(strip.stepAt(3500), -1);
        const auto hit = strip.hitTest(QPoint(250, 5), QRect(0, 0, 400, 20), mapping, nullptr);
        QVERIFY(hit);
        QCOMPARE(hit->start, 1000.0);
        QCOMPARE(hit->end, 3000.0);
        QVERIFY(strip.toolTip(*hit).startsWith("ProfilerStep#1: 2.00 µs"));
    }

    void traceViewShowsStepsAndRecommendation() {
        const std::string path = dir_.filePath("input.json").toStdString();
        std::ofstream(path) << inputBoundTrace();
        const std::string wsPath = dir_.filePath("ws.sqlite").toStdString();
        const int64_t id = importInto(wsPath, path);
        TraceView view;
        view.resize(1400, 900);
        QSignalSpy suggestions(&view, &TraceView::suggestionsReady);
        view.open(wsPath, id);
        QTRY_VERIFY_WITH_TIMEOUT(view.panel<StepsTracePanel>()->result() != nullptr, 20000);
        const trace::StepAnalysis& analysis = *view.panel<StepsTracePanel>()->result();
        QCOMPARE(analysis.steps.size(), size_t(3));
        // The picker lists the steps; choosing one zooms the timeline to it (3 % margin).
        QCOMPARE(view.panel<StepsTracePanel>()->stepPicker()->count(), 4);
        view.panel<StepsTracePanel>()->showStep(1);
        const TimeRange window = view.timeline()->window();
        const double origin = double(view.source()->origin());
        QVERIFY(std::abs(window.start - (10e6 - origin - 0.3e6)) < 1);
        QVERIFY(std::abs(window.end - (20e6 - origin + 0.3e6)) < 1);
        // The strip leads the timeline's tracks.
        QVERIFY(dynamic_cast<const StepStripTrack*>(view.timeline()->tracks().at(0).get()));
        // Steps tab: 3 rows; the input share of each step is 60 % (6 of 10 ms).
        QCOMPARE(view.panel<StepsTracePanel>()->stepsPanel()->stepTable()->rowCount(), 3);
        const auto* b = steps::breakdownOf(analysis, 0, 0);
        QVERIFY(b);
        QCOMPARE(b->at(trace::StepCategory::Input), int64_t(6000000));
        QCOMPARE(b->at(trace::StepCategory::Compute), int64_t(3700000));
        // The recommendation: in the panel, to the dock, and on the timeline when activated.
        // Announced as the steps, the transfers (none here) and the critical path arrive; the
        // last carries the recommendation's re-simulated saving.
        QTRY_VERIFY_WITH_TIMEOUT(view.panel<CriticalPathTracePanel>()->result() != nullptr, 20000);
        QTRY_VERIFY(suggestions.count() >= 3);
        const auto items = suggestions.last().at(0).value<QList<SuggestionItem>>();
        QVERIFY(!items.isEmpty());
        QCOMPARE(items.at(0).kind, QString("input_bound"));
        QVERIFY2(items.at(0).text.contains("re-simulated"), qPrintable(items.at(0).text));
        QVERIFY(items.at(0).canApply);  // the what-if re-simulates it (issue 32 #6)
        QVERIFY(view.panel<StepsTracePanel>()
                    ->stepsPanel()
                    ->recommendations()
                    ->item(0)
                    ->text()
                    .contains("DataLoader"));
        view.show();  // hidden widgets do not pass size changes on to their layouts
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const int minimumWidth = view.minimumSizeHint().width();
        view.panel<StepsTracePanel>()->showRecommendation(0);
        QCoreApplication::processEvents();  // the layouts take the new size hints
        // Its sentence goes to the status line, elided: the view asks for no more width.
        QCOMPARE(view.minimumSizeHint().width(), minimumWidth);
        const trace::StepRecommendation& r = analysis.recommendations.at(0);
        const TimeRange shown = view.timeline()->window();
        QVERIFY(shown.start <= double(r.start) - origin && shown.end >= double(r.end) - origin);
        QVERIFY(view.overviewHtml().contains("input_bound"));

        // Issue 32 #6: Preview of the recommendation re-simulates its edit in the Critical
        // path tab's what-if (no input wait), that tab in front.
        auto* criticalPath = view.panel<CriticalPathTracePanel>();
        QSignalSpy previewed(criticalPath->whatif(), &WhatifBox::previewed);
        view.previewSuggestion(0, false);
        QVERIFY(previewed.wait(20000));
        QCOMPARE(criticalPath->whatif()->edits().noInputWait, true);
        QVERIFY(criticalPath->widget()->isVisible());
        QVERIFY2(criticalPath->whatif()->result()->text().contains("predicted"),
                 qPrintable(criticalPath->whatif()->result()->text()));
    }

    void stepsAreNumberedAsTheTimelineNamesThem() {
        // Issue 32 #3: the chart and the picker numbered steps 0-2 while the timeline showed
        // ProfilerStep#5-#7, and the picker kept its step after the view moved elsewhere.
        const std::string path = dir_.filePath("numbered.json").toStdString();
        std::ofstream(path) << inputBoundTrace(6000, 5);
        const std::string wsPath = dir_.filePath("numbered.sqlite").toStdString();
        const int64_t id = importInto(wsPath, path);
        TraceView view;
        view.resize(1400, 900);
        view.open(wsPath, id);
        auto* panel = view.panel<StepsTracePanel>();
        QTRY_VERIFY_WITH_TIMEOUT(panel->result() != nullptr, 20000);
        const trace::StepAnalysis& analysis = *panel->result();
        QCOMPARE(analysis.steps.size(), size_t(3));
        QComboBox* picker = panel->stepPicker();
        QCOMPARE(picker->itemText(1), QString("ProfilerStep#5 · 10.00 ms"));
        QCOMPARE(picker->itemText(3), QString("ProfilerStep#7 · 10.00 ms"));
        QCOMPARE(steps::stepNumber(analysis.steps[2]), QString("7"));
        QVERIFY(steps::stepSummary(analysis, 1, 0).startsWith("ProfilerStep#6: 10.00 ms"));
        // The chart's axis reads 5 6 7 under the bars.
        QImage chart(900, 400, QImage::Format_ARGB32);
        chart.fill(Qt::white);
        QPainter painter(&chart);
        const steps::ChartLayout layout =
            steps::paintStepChart(painter, QRect(0, 0, 900, 400), analysis, {});
        painter.end();
        QCOMPARE(layout.axisLabels, (std::vector<QString>{"5", "6", "7"}));
        // The picker follows the timeline: a step chosen, then the whole trace.
        panel->showStep(2);
        QCOMPARE(picker->currentIndex(), 3);
        const double origin = double(view.source()->origin());
        view.timeline()->setWindow({10e6 - origin + 1e6, 20e6 - origin - 1e6});  // inside #6
        QCOMPARE(picker->currentText(), QString("ProfilerStep#6 · 10.00 ms"));
        view.timeline()->setWindow({0 - origin, 30e6 - origin});
        QCOMPARE(picker->currentIndex(), 0);
    }

    void renderDrawsTheStepsLaneAndTheOverview() {
        // Issue 32 #12: `render timeline` lacked the steps lane the GUI leads with, and
        // `render overview` refused trace profiles.
        const std::string path = dir_.filePath("render.json").toStdString();
        std::ofstream(path) << inputBoundTrace();
        const std::string wsPath = dir_.filePath("render.sqlite").toStdString();
        const int64_t id = importInto(wsPath, path);
        auto ws = Workspace::open(wsPath, Workspace::Mode::ReadOnly);
        const ProfileInfo profile = *ws->profile(id);
        // Each step's 6 ms of input wait is drawn in the strip in its series' colour; nothing
        // else on a trace timeline has it.
        QColor input;
        for (const steps::Series& series : steps::series())
            if (series.key == "input") input = series.color;
        QVERIFY(input.isValid());
        const QImage timeline = renderView("timeline", *ws, profile, RenderOptions{});
        int inputPixels = 0;
        for (int y = 0; y < timeline.height(); ++y)
            for (int x = 0; x < timeline.width(); ++x)
                if (timeline.pixelColor(x, y) == input) ++inputPixels;
        QVERIFY2(inputPixels > 3 * 100, qPrintable(QString::number(inputPixels)));
        // The overview page, fitted to its text: the steps, the recommendation and the tables.
        const QImage overview = renderView("overview", *ws, profile, RenderOptions{});
        QCOMPARE(overview.width(), 1000);
        QVERIFY2(overview.height() > 400, qPrintable(QString::number(overview.height())));
        int ink = 0;
        for (int y = 0; y < overview.height(); ++y)
            for (int x = 0; x < overview.width(); ++x)
                if (qGray(overview.pixel(x, y)) < 128) ++ink;
        QVERIFY(ink > 2000);
    }

    void evidenceAndSharesReadAsNumbers() {
        // Issue 32: evidence read "calls=," and "1.15475e+06"; a recommendation claiming no
        // share of its own read "up to 0.0 %".
        const QJsonObject evidence{{"count", 1154750.0},
                                   {"calls", QJsonObject{{"cudaDeviceSynchronize", 4}}},
                                   {"share", 0.1234567},
                                   {"bytes", QJsonArray{1048576.0, 2.5}}};
        QCOMPARE(evidenceText(evidence),
                 QString("bytes=[1048576, 2.5], calls={\"cudaDeviceSynchronize\":4}, "
                         "count=1154750, share=0.123"));
        QCOMPARE(evidenceNumber(313658.25), QString("313658.3"));
        QCOMPARE(stepShareText(0), QString("no share of step time of its own"));
        QCOMPARE(stepShareText(34.2), QString("up to 34 % of step time"));
        QCOMPARE(stepShareText(3.26), QString("up to 3.3 % of step time"));
    }

    void compareShowsTheInputShareDrop() {
        // The same run with more loader workers: the loader returns in 0.1 ms, the GEMM still
        // starts at 6.2 ms (the step keeps its shape), so the GPU idles for other reasons.
        auto import = [&](const QString& name, int loaderUs) {
            const std::string path = dir_.filePath(name).toStdString();
            std::ofstream(path) << inputBoundTrace(loaderUs);
            auto ws = Workspace::open(dir_.filePath("cmp.sqlite").toStdString());
            Progress progress;
            return importFiles(*ws, ImportRequest{{path}, {}, {}}, progress).at(0).id;
        };
        const int64_t starved = import("starved.json", 6000);
        const int64_t fed = import("fed.json", 100);
        CompareView view;
        view.setAsynchronous(false);
        view.setData(loadTraceComparison(dir_.filePath("cmp.sqlite").toStdString(), starved, fed));
        QTableWidget* table = view.stepDeltaTable();
        int inputRow = -1;
        for (int r = 0; r < table->rowCount(); ++r)
            if (table->item(r, 0)->text() == "input") inputRow = r;
        QVERIFY(inputRow >= 0);
        QCOMPARE(table->item(inputRow, 1)->data(tablekit::kSortRole).toDouble(), 60.0);
        QCOMPARE(table->item(inputRow, 2)->data(tablekit::kSortRole).toDouble(), 1.0);
        QVERIFY(view.stepRecommendationLabel()->text().contains("gone: input_bound"));
        // Both charts on one scale: the same step duration reaches the same height.
        for (StepChartWidget* chart : {view.stepChartA(), view.stepChartB()}) {
            chart->resize(500, 300);
            chart->grab();  // paints it (the Steps page is not the current one)
        }
        const auto& la = view.stepChartA()->chartLayout();
        const auto& lb = view.stepChartB()->chartLayout();
        QCOMPARE(la.line.size(), size_t(3));
        QCOMPARE(lb.line.size(), size_t(3));
        QCOMPARE((la.plot.bottom() - la.line[0].y()) / la.plot.height(),
                 (lb.plot.bottom() - lb.line[0].y()) / lb.plot.height());
    }

    // A trace whose copies make no transfer (a synchronous copy, a copy whose runtime call is
    // not in the trace): the overview says what the analysis counted instead of nothing.
    void overviewNamesWhatMadeNoTransfer() {
        auto slice = [](const char* name, const char* cat, int pid, int tid, double ts, double dur,
                        const QJsonObject& args) {
            return QJsonObject{{"ph", "X"},  {"name", name}, {"cat", cat}, {"pid", pid},
                               {"tid", tid}, {"ts", ts},     {"dur", dur}, {"args", args}};
        };
        const QJsonArray events{
            slice("hipMemcpyWithStream", "cuda_runtime", 1, 1, 0, 30, {{"correlation", 10}}),
            slice("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", 0, 7, 5, 20,
                  {{"correlation", 10}, {"bytes", 2048}, {"device", 0}, {"stream", 7}}),
            slice("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 0, 7, 40, 10,
                  {{"correlation", 11}, {"bytes", 64}, {"device", 0}, {"stream", 7}})};
        const std::string path = dir_.filePath("no_transfer.json").toStdString();
        std::ofstream(path)
            << QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString();
        const std::string wsPath = dir_.filePath("no_transfer.sqlite").toStdString();
        const int64_t id = importInto(wsPath, path);
        TraceView view;
        view.open(wsPath, id);
        QTRY_VERIFY_WITH_TIMEOUT(view.overviewHtml().contains("No async transfer found"), 20000);
        QVERIFY(view.panel<TransfersTracePanel>()->result() == nullptr);
        QVERIFY2(
            view.overviewHtml().contains("activity without runtime call 1, synchronous copies 1"),
            qPrintable(view.overviewHtml()));
    }

    void tpuTransfersOnTheTimeline() {
        // The real TPU v6e profile: transfers derived at import, drawn per link above the
        // trace's tracks, their figures in the overview, the transfer edit first in the dock.
        const QString sample =
            QStringLiteral(STALLSCOPE_SHARED_DIR "/samples/xprof/tpu_inference_2.xplane.pb");
        if (!QFileInfo::exists(sample)) QSKIP("../shared/samples/xprof is absent");
        const std::string wsPath = dir_.filePath("tpu.sqlite").toStdString();
        const int64_t id = importInto(wsPath, sample.toStdString());
        TraceView view;
        view.resize(1400, 900);
        QSignalSpy suggestions(&view, &TraceView::suggestionsReady);
        view.open(wsPath, id);
        QTRY_VERIFY_WITH_TIMEOUT(
            view.panel<TransfersTracePanel>()->result() && view.panel<StepsTracePanel>()->result(),
            60000);
        // 4 TPUs x 100 runs x 6 copies (tests/tools/xprof_transfers_reference.py).
        QCOMPARE(view.panel<TransfersTracePanel>()->result()->transfers.size(), size_t(2400));
        int linkTracks = 0;
        for (const auto& track : view.timeline()->tracks())
            if (dynamic_cast<const TransferLinkTrack*>(track.get())) ++linkTracks;
        int links = 0;
        for (const transfers::Link& l : view.panel<TransfersTracePanel>()->result()->links)
            if (l.transfers > 0) ++links;
        QVERIFY(links >= 4);
        QCOMPARE(linkTracks, links);
        QVERIFY(view.overviewHtml().contains("2,400 async transfers"));
        // Headline cards as a replay's: 304.26 s of the runs' 313.66 s stalled at the waits
        // (tests/tools/xprof_transfers_reference.py), the host link busiest.
        QCOMPARE(view.panel<TransfersTracePanel>()->cards()->placedCards().size(), size_t(6));
        QVERIFY(view.panel<TransfersTracePanel>()->cards()->isVisibleTo(&view));
        CardStrip strip;  // as drawn at 1200 px
        strip.setCards(TransfersTracePanel::cardsOf(*view.panel<TransfersTracePanel>()->result()));
        strip.resize(1200, strip.heightForWidth(1200));
        const std::vector<Card> cards = strip.placedCards();
        QCOMPARE(cards.size(), size_t(6));
        QCOMPARE(cards[1].title, QString("Stalled"));
        const transfers::Analysis& ta = *view.panel<TransfersTracePanel>()->result();
        QVERIFY(std::abs(double(ta.stallNs) / 1e9 - 304.26) < 0.01);
        QVERIFY(std::abs(double(ta.totalNs) / 1e9 - 313.66) < 0.01);
        QCOMPARE(cards[1].value, format::nanoseconds(double(ta.stallNs)));
        QCOMPARE(cards[1].detail, QString("97.0% at waits"));
        // Issue 32, words of another kind: "Run time 313.658 s · 400 runs" on a 98 s trace.
        // The runs of 4 TPUs add up past the trace's span: the card says what it sums.
        QCOMPARE(cards[0].title, QString("In module runs"));
        QCOMPARE(cards[0].detail, QString("400 runs, summed over 4 devices"));
        QCOMPARE(cards[4].title, QString("Slack, summed"));
        QVERIFY(cards[5].detail.startsWith("S(5)->S(0) · "));
        QVERIFY(cards[5].detail.contains("/device:TPU:"));
        QCOMPARE(cards[0].rect.top(), cards[5].rect.top());  // one row at 1200 px
        QImage drawn(strip.size(), QImage::Format_ARGB32_Premultiplied);
        strip.render(&drawn);
        QVERIFY(cards[5].rect.right() < drawn.width());
        QVERIFY(near(drawn.pixelColor(cards[1].rect.left() + 1, cards[1].rect.center().y()),
                     QColor(215, 60, 50)));
        drawn.save(dir_.filePath("tpu-cards.png"));
        if (qEnvironmentVariableIsSet("STALLSCOPE_KEEP_RENDERS"))
            drawn.save(qEnvironmentVariable("STALLSCOPE_KEEP_RENDERS") + "/tpu-cards.png");
        // Copies hidden behind compute vs exposed, summed over steps and devices.
        int64_t copies = 0, hidden = 0;
        for (const trace::DeviceStepBreakdown& b :
             view.panel<StepsTracePanel>()->result()->breakdown) {
            copies += b.memcpyTotal;
            hidden += b.memcpyHidden;
        }
        QVERIFY(copies > 0);
        QVERIFY(view.overviewHtml().contains(
            QStringLiteral("Memory copies: %1 in all, %2 hidden behind compute")
                .arg(format::nanoseconds(double(copies)), format::nanoseconds(double(hidden)))));
        // The dock's first item is the transfer edit; showing it selects its transfer.
        const auto items = suggestions.last().at(0).value<QList<SuggestionItem>>();
        QVERIFY(!items.isEmpty());
        QCOMPARE(items.at(0).kind, QString("transfer-bound"));
        view.showSuggestion(0);
        const auto& selection = view.timeline()->selection();
        QVERIFY(selection);
        QVERIFY(dynamic_cast<const TransferLinkTrack*>(selection->track));
        QCOMPARE(
            selection->item.id,
            int64_t(
                view.panel<TransfersTracePanel>()->result()->suggestions.at(0).transfers.at(0)));
        // What is drawn: the selected transfer's bar on its link track is the transfer colour.
        view.timeline()->setAsynchronous(false);
        const QSize size(1200, 700);  // every lane in the image, whatever the hidden view's size
        const QImage image = view.timeline()->renderImage(size);
        const QRect rect = view.timeline()->trackRect(selection->track, size);
        const auto* link = static_cast<const TransferLinkTrack*>(selection->track);
        const TimeMapping mapping = view.timeline()->mappingFor(size);
        const transfers::Transfer& t =
            view.panel<TransfersTracePanel>()->result()->transfers.at(size_t(selection->item.id));
        const double x =
            mapping.x(double((t.transferStart + t.complete) / 2 - view.source()->origin()));
        const QRectF row = link->rowRect(rect, link->rowOf(t.id));
        QVERIFY(near(image.pixelColor(int(x), int(row.center().y())), QColor(60, 120, 190)));
    }
};

QTEST_MAIN(TestStepViews)
#include "test_step_views.moc"
