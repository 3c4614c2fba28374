// The Critical path tab and its timeline strip: three synced steps of 211 µs (gemm_a and
// elementwise, 100 µs each on stream 7, then a cudaDeviceSynchronize returning 4 µs after the
// stream drains). The path's kernels colour the strip kernel-green; C hides strip and outlines;
// the tab lists the step's segments and the sync recommendation re-simulated (211 -> 200 µs:
// the stream's work is the floor), which the suggestions dock carries beside its bound. A
// CPU-only trace says why it has no graph.

#include <QCheckBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QTreeWidget>
#include <QtTest>
#include <fstream>

#include "core/trace/step_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/shell/elided_label.h"
#include "views/trace/critical_path_trace_panel.h"
#include "views/trace/critical_path_tracks.h"
#include "views/trace/predicted_track.h"
#include "views/trace/step_tracks.h"
#include "views/trace/trace_view.h"
#include "views/trace/utilisation_track.h"
#include "views/trace/whatif_box.h"

using namespace stallscope;

namespace {

QJsonObject slice(const char* cat, const QString& name, int pid, int tid, double ts, double dur,
                  const QJsonObject& args = {}) {
    return {{"ph", "X"},  {"cat", cat}, {"name", name}, {"pid", pid},
            {"tid", tid}, {"ts", ts},   {"dur", dur},   {"args", args}};
}

// Steps at 0, 300 and 600 µs; with `device` false, host ops only (no graph).
std::string syncedSteps(bool device) {
    QJsonArray events;
    int correlation = 0;
    for (int k = 0; k < 3; ++k) {
        const double t = 300.0 * k;
        events.append(
            slice("user_annotation", QString("ProfilerStep#%1").arg(k + 1), 1, 1, t, 211));
        if (!device) {
            events.append(slice("cpu_op", "aten::mm", 1, 1, t + 1, 200));
            continue;
        }
        for (const auto& [name, launched, start] :
             {std::tuple{"gemm_a", 0.0, 5.0}, std::tuple{"elementwise", 2.0, 106.0}}) {
            const QJsonObject args{{"correlation", ++correlation}};
            events.append(slice("cuda_runtime", "cudaLaunchKernel", 1, 1, t + launched, 1, args));
            events.append(
                slice("kernel", name, 0, 7, t + start, 100,
                      QJsonObject{{"correlation", correlation}, {"stream", 7}, {"device", 0}}));
        }
        events.append(slice("cuda_runtime", "cudaDeviceSynchronize", 1, 1, t + 3, 207));
    }
    return QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString();
}

bool near(QColor a, QColor b) {
    return std::abs(a.red() - b.red()) <= 3 && std::abs(a.green() - b.green()) <= 3 &&
           std::abs(a.blue() - b.blue()) <= 3;
}

const CriticalPathStripTrack* pathStrip(const TimelineView* timeline) {
    for (const auto& track : timeline->tracks())
        if (auto* strip = dynamic_cast<const CriticalPathStripTrack*>(track.get())) return strip;
    return nullptr;
}

}  // namespace

class TestCriticalPathView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    int64_t importTrace(const QString& name, const std::string& json) {
        const std::string path = dir_.filePath(name + ".json").toStdString();
        std::ofstream(path) << json;
        auto ws = Workspace::open(dir_.filePath("ws.sqlite").toStdString());
        Progress progress;
        return importFiles(*ws, ImportRequest{{path}, {}, {}}, progress).at(0).id;
    }

  private slots:
    void pathOnTimelineAndInTab() {
        const int64_t id = importTrace("synced", syncedSteps(true));
        TraceView view;
        view.resize(1280, 800);
        QSignalSpy suggestions(&view, &TraceView::suggestionsReady);
        view.open(dir_.filePath("ws.sqlite").toStdString(), id);
        auto* panel = view.panel<CriticalPathTracePanel>();
        QTRY_VERIFY_WITH_TIMEOUT(panel->result() != nullptr, 30000);
        // Once every analysis arrived, the status line no longer says one is running.
        auto* status = view.findChild<ElidedLabel*>();
        QVERIFY(status);
        QTRY_VERIFY_WITH_TIMEOUT(!status->text().startsWith("Analysing"), 30000);
        const graph::CriticalPath& path = *panel->result();
        QCOMPARE(path.steps.size(), size_t(3));
        QCOMPARE(path.steps[0].duration, int64_t(211000));

        // The strip follows the steps' strip and the device's utilisation, above the trace's
        // tracks.
        QVERIFY(dynamic_cast<const StepStripTrack*>(view.timeline()->tracks().at(0).get()));
        QVERIFY(dynamic_cast<const DeviceUtilisationTrack*>(view.timeline()->tracks().at(1).get()));
        const CriticalPathStripTrack* strip = pathStrip(view.timeline());
        QVERIFY(strip == view.timeline()->tracks().at(2).get());

        // Drawn: mid-gemm_a of step 2 (its path runs through the kernels) is kernel-green on the
        // strip; the outlines change the kernel's own stream track.
        view.showRange(300000, 511000);
        view.timeline()->setAsynchronous(false);
        const QSize size = view.timeline()->viewport()->size();
        const QImage shown = view.timeline()->renderImage(size);
        const TimeMapping mapping = view.timeline()->mappingFor(size);
        const double origin = double(view.source()->origin());
        const int x = int(mapping.x(300000 + 55000 - origin));
        const QRect stripRect = view.timeline()->trackRect(strip, size);
        QVERIFY(near(shown.pixelColor(x, stripRect.center().y()), pathview::kindColor("kernel")));

        // C hides the strip and the outlines.
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.timeline()->setFocus();
        QTest::keyClick(view.timeline(), Qt::Key_C);
        QVERIFY(!panel->shownOnTimeline());
        QVERIFY(pathStrip(view.timeline()) == nullptr);
        const QImage hidden = view.timeline()->renderImage(size);
        int changed = 0;
        for (int y = 0; y < size.height(); ++y)
            if (shown.pixelColor(x, y) != hidden.pixelColor(x, y)) ++changed;
        QVERIFY2(changed > StepStripTrack::kHeight, qPrintable(QString::number(changed)));
        QTest::keyClick(view.timeline(), Qt::Key_C);
        QVERIFY(panel->shownOnTimeline() && pathStrip(view.timeline()));

        // The tab: step 1's segments sum to its 211 µs; a row zooms the timeline to it.
        QTableWidget* segments = panel->segmentTable();
        QCOMPARE(segments->rowCount(), int(path.steps[0].segments.size()));
        double sum = 0;
        for (int r = 0; r < segments->rowCount(); ++r)
            sum += segments->item(r, 3)->data(tablekit::kSortRole).toDouble();
        QCOMPARE(sum, 211000.0);
        const graph::PathSegment& first = path.steps[0].segments.front();
        panel->showSegment(0);
        QVERIFY(view.timeline()->window().contains(double(first.start) - origin));
        // The sync recommendation re-simulated: 211 -> 200 µs.
        QTableWidget* savings = panel->savingTable();
        QCOMPARE(savings->rowCount(), 1);
        QCOMPARE(savings->item(0, 0)->text(), QString("sync_stall"));
        QCOMPARE(savings->item(0, 4)->data(tablekit::kSortRole).toDouble(), 11000.0);
        // The dock carries the re-simulated saving beside the bound.
        bool resimulated = false;
        for (const SuggestionItem& item : view.suggestionItems())
            if (item.kind == "sync_stall") resimulated = item.text.contains("re-simulated: 11");
        QVERIFY(resimulated);
    }

    // The what-if box: a kernel on the path made 2x faster, previewed (211 -> 161 µs a step),
    // applied (the window's part done here: import and mark as derived) and checked in the
    // derived profile's own steps.
    void whatifPreviewApplyAndTheDerivedSteps() {
        const int64_t id = importTrace("whatif", syncedSteps(true));
        const std::string store = dir_.filePath("ws.sqlite").toStdString();
        TraceView view;
        view.resize(1280, 800);
        view.open(store, id);
        auto* panel = view.panel<CriticalPathTracePanel>();
        QTRY_VERIFY_WITH_TIMEOUT(panel->result() != nullptr, 30000);
        // Clicking gemm_a's row on the path proposes it 2x faster.
        QTableWidget* segments = panel->segmentTable();
        int gemm = -1;
        for (int r = 0; r < segments->rowCount(); ++r)
            if (segments->item(r, 1)->text() == "gemm_a") gemm = r;
        QVERIFY(gemm >= 0);
        emit segments->cellClicked(gemm, 1);
        WhatifBox* box = panel->whatif();
        QCOMPARE(box->edits().kernelSpeedups.size(), size_t(1));
        QCOMPARE(box->edits().kernelSpeedups[0].first, std::string("gemm_a"));
        QSignalSpy previewed(box, &WhatifBox::previewed);
        box->preview();
        QVERIFY(previewed.wait(30000));
        QVERIFY2(box->result()->text().contains("predicted 161.0 µs"),
                 qPrintable(box->result()->text()));
        // The preview on the timeline: the kernels' stream re-simulated, right under it.
        QVERIFY(box->previewLanes());
        int64_t streamId = -1;
        for (const graph::PredictedLane& l : *box->previewLanes())
            for (const graph::PredictedItem& i : l.items)
                if (i.kind == graph::NodeKind::Kernel) streamId = l.track;
        const TimelineTrack* stream = view.binding()->trackFor(streamId);
        QVERIFY(stream);
        const auto& tracks = view.timeline()->tracks();
        const auto at = std::find_if(tracks.begin(), tracks.end(),
                                     [&](const auto& t) { return t.get() == stream; });
        QVERIFY(at != tracks.end() && at + 1 != tracks.end());
        const auto* predicted = dynamic_cast<const PredictedLaneTrack*>((at + 1)->get());
        QVERIFY(predicted);
        // gemm_a in half its 100 µs; elementwise starts 50 µs earlier, 1 µs after it.
        const auto& items = predicted->lane().items;
        QVERIFY(items.size() >= 2);
        QCOMPARE(predicted->itemName(items[0]), QString("gemm_a"));
        QCOMPARE(items[0].end - items[0].start, int64_t(50000));
        QCOMPARE(items[0].measuredEnd - items[0].measuredStart, int64_t(100000));
        QCOMPARE(items[1].start - items[1].measuredStart, int64_t(-50000));
        QCOMPARE(items[1].start - items[0].end, int64_t(1000));
        // Drawn: 80 µs into step 1 the predicted lane runs elementwise (kernel green); at 180 µs
        // it is done (the lane's band), while the measured stream still runs it.
        view.showRange(0, 211000);
        view.timeline()->setAsynchronous(false);
        view.timeline()->ensureTrackVisible(predicted);
        const QSize size = view.timeline()->viewport()->size();
        const QImage image = view.timeline()->renderImage(size);
        const TimeMapping mapping = view.timeline()->mappingFor(size);
        const double origin = double(view.source()->origin());
        const QRect lane = view.timeline()->trackRect(predicted, size);
        QVERIFY(!lane.isEmpty());
        // (The bar's top row: the names are written across its middle.)
        const int barTop = lane.top() + 3;
        QVERIFY(near(image.pixelColor(int(mapping.x(80000 - origin)), barTop),
                     pathview::kindColor("kernel")));
        QVERIFY(
            near(image.pixelColor(int(mapping.x(180000 - origin)), barTop), QColor(246, 244, 252)));
        QSignalSpy requested(box, &WhatifBox::saveRequested);
        box->apply();
        QVERIFY(requested.wait(30000));
        const QString file = requested.at(0).at(0).toString();
        QVERIFY(
            requested.at(0).at(1).toString().endsWith("what if kernels matching gemm_a 2x "
                                                      "faster"));
        int64_t derived = 0;
        {
            auto ws = Workspace::open(store);
            Progress progress;
            derived = importFiles(*ws, ImportRequest{{file.toStdString()}, "derived", {}}, progress)
                          .at(0)
                          .id;
            ws->setParentProfile(derived, id);
            QCOMPARE(ws->profile(derived)->parentId.value_or(-1), id);
            // The predicted trace keeps the steps, each 161 µs.
            const auto steps = trace::loadOrAnalyzeSteps(*ws, derived);
            QCOMPARE(steps.steps.size(), size_t(3));
            for (const trace::Step& s : steps.steps) QCOMPARE(s.duration(), int64_t(161000));
        }
        box->setSaved(derived, "derived");
        QVERIFY(box->compareButton()->isEnabled());
        QSignalSpy compare(box, &WhatifBox::compareRequested);
        box->compareButton()->click();
        QCOMPARE(compare.size(), 1);
        QCOMPARE(compare.at(0).at(0).toLongLong(), derived);
    }

    // Issue 32 #11: the timeline's keys (W/A/S/D, C, [ and ]) work wherever the view's focus
    // is, not only after clicking the timeline; the find field keeps its typing.
    void keysWorkWithoutClickingTheTimeline() {
        const int64_t id = importTrace("keys", syncedSteps(true));
        TraceView view;
        view.resize(1280, 800);
        view.open(dir_.filePath("ws.sqlite").toStdString(), id);
        auto* panel = view.panel<CriticalPathTracePanel>();
        QTRY_VERIFY_WITH_TIMEOUT(panel->result() != nullptr, 30000);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* tree = view.findChild<QTreeWidget*>();
        QVERIFY(tree);
        tree->setFocus();
        QTRY_VERIFY(tree->hasFocus());
        const double before = view.timeline()->window().length();
        QTest::keyClick(tree, Qt::Key_W);
        QVERIFY2(view.timeline()->window().length() < before * 0.95,
                 qPrintable(QString::number(view.timeline()->window().length())));
        QTest::keyClick(tree, Qt::Key_C);
        QVERIFY(!panel->shownOnTimeline());
        auto* find = view.findChild<QLineEdit*>();
        QVERIFY(find);
        find->setFocus();
        QTRY_VERIFY(find->hasFocus());
        const double zoomed = view.timeline()->window().length();
        QTest::keyClicks(find, "wasd");
        QCOMPARE(find->text(), QString("wasd"));
        QCOMPARE(view.timeline()->window().length(), zoomed);
    }

    // Over the graph budget the path is walked by windows and says so at length: the tab shows
    // the note's first clause and keeps the whole in the tooltip (four wrapped lines left the
    // what-if box no height at 1280x800).
    void aLongNoteKeepsToItsFirstClause() {
        const int64_t id = importTrace("windowed", syncedSteps(true));
        // Set for the view's whole life: its workers read it (getenv beside unsetenv races).
        qputenv("STALLSCOPE_GRAPH_MEMORY_MB", "0.001");
        [&] {
            TraceView view;
            view.resize(1280, 800);
            view.open(dir_.filePath("ws.sqlite").toStdString(), id);
            auto* panel = view.panel<CriticalPathTracePanel>();
            QTRY_VERIFY_WITH_TIMEOUT(panel->result() != nullptr, 30000);
            const std::string& note = panel->result()->note;
            QVERIFY2(note.starts_with("walked a batch of steps at a time (1 window of up to 10000 "
                                      "slices); runs of one kind on one track are one segment"),
                     note.c_str());
            QCOMPARE(panel->result()->steps.size(), size_t(3));
            QLabel* summary = nullptr;
            for (QLabel* label : view.findChildren<QLabel*>())
                if (label->text().startsWith("The chain of work")) summary = label;
            QVERIFY(summary);
            QVERIFY2(
                summary->text().endsWith("Not in the graph: walked a batch of steps at a time (1 "
                                         "window of up to 10000 slices); … (the rest in this "
                                         "text's tooltip)"),
                qPrintable(summary->text()));
            QCOMPARE(summary->toolTip(), QString::fromStdString(note));
        }();
        QThreadPool::globalInstance()->waitForDone();  // the view's jobs outlive it
        qunsetenv("STALLSCOPE_GRAPH_MEMORY_MB");
    }

    void traceWithoutGraphSaysWhy() {
        const int64_t id = importTrace("cpu", syncedSteps(false));
        TraceView view;
        view.resize(1280, 800);
        view.open(dir_.filePath("ws.sqlite").toStdString(), id);
        auto* panel = view.panel<CriticalPathTracePanel>();
        QTRY_VERIFY_WITH_TIMEOUT(panel->result() != nullptr, 30000);
        QVERIFY(!panel->result()->why.empty());
        QVERIFY(pathStrip(view.timeline()) == nullptr);
        QVERIFY(view.overviewHtml().contains("No step graph"));
    }
};

QTEST_MAIN(TestCriticalPathView)
#include "test_critical_path_view.moc"
