// Exploring a trace as in Perfetto and Nsight (issue 32): find highlights every match, an area
// selection (Shift-drag across tracks) sums its slices by name, a process's summary, following
// a flow from the details pane, and a device's utilisation lane.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPainter>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>
#include <fstream>

#include "core/trace/area_summary.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/trace/area_summary_panel.h"
#include "views/trace/trace_tracks.h"
#include "views/trace/trace_view.h"
#include "views/trace/utilisation_track.h"

using namespace stallscope;

namespace {

QJsonObject slice(const char* name, int tid, int ts, int dur) {
    return QJsonObject{{"ph", "X"},  {"name", name}, {"pid", 1},
                       {"tid", tid}, {"ts", ts},     {"dur", dur}};
}
QJsonObject threadName(int tid, const char* name) {
    return QJsonObject{{"ph", "M"},
                       {"name", "thread_name"},
                       {"pid", 1},
                       {"tid", tid},
                       {"args", QJsonObject{{"name", name}}}};
}

// Thread "main": outer 0-100 µs holding inner 20-50 and inner 60-70, late 150-200; thread "io":
// load 100-140; "stream 7": kern 0-30 and 160-180; "stream 8": kern 20-40; a flow from "late" (at
// 155 µs) to stream 7's second kern (160 µs).
std::string exploreTrace() {
    QJsonArray events{QJsonObject{{"ph", "M"},
                                  {"name", "process_name"},
                                  {"pid", 1},
                                  {"args", QJsonObject{{"name", "proc"}}}},
                      threadName(1, "main"),
                      threadName(2, "io"),
                      threadName(7, "stream 7"),
                      threadName(8, "stream 8"),
                      slice("outer", 1, 0, 100),
                      slice("inner", 1, 20, 30),
                      slice("inner", 1, 60, 10),
                      slice("late", 1, 150, 50),
                      slice("load", 2, 100, 40),
                      slice("kern", 7, 0, 30),
                      slice("kern", 7, 160, 20),
                      slice("kern", 8, 20, 20),
                      QJsonObject{{"ph", "s"},
                                  {"id", 1},
                                  {"pid", 1},
                                  {"tid", 1},
                                  {"ts", 155},
                                  {"cat", "ac2g"},
                                  {"name", "ac2g"}},
                      QJsonObject{{"ph", "f"},
                                  {"id", 1},
                                  {"pid", 1},
                                  {"tid", 7},
                                  {"ts", 160},
                                  {"cat", "ac2g"},
                                  {"name", "ac2g"},
                                  {"bp", "e"}}};
    return QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString();
}

bool sameColor(QColor a, QColor b, int tolerance = 3) {
    return std::abs(a.red() - b.red()) <= tolerance &&
           std::abs(a.green() - b.green()) <= tolerance &&
           std::abs(a.blue() - b.blue()) <= tolerance;
}

}  // namespace

class TestTraceExplore : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Workspace> ws_;
    std::string wsPath_;
    int64_t profile_ = 0;

    TraceSourcePtr source() { return std::make_shared<TraceSource>(wsPath_, profile_); }
    void show(TraceView& view) {
        view.timeline()->setAsynchronous(false);
        auto src = source();
        view.setSource(src, src->query([](const trace::TraceStore& s) { return s.opStats(); }));
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.timeline()->setWindow({0, 200000});
        view.timeline()->prepareNow(view.timeline()->viewport()->size());
    }
    int64_t trackNamed(const std::string& name) {
        const TraceSourcePtr src = source();
        for (const auto& t : src->store().tracks())
            if (t.name == name) return t.id;
        return -1;
    }
    // The summary table's row for `name`: count, self, in range, total (ns), or all -1.
    static std::array<double, 4> row(const QTableWidget* table, const QString& name) {
        std::array<double, 4> cells = {-1, -1, -1, -1};
        for (int r = 0; r < table->rowCount(); ++r) {
            if (table->item(r, 0)->text() != name) continue;
            for (int c = 0; c < 4; ++c)
                cells[size_t(c)] = table->item(r, c + 1)->data(tablekit::kSortRole).toDouble();
            break;
        }
        return cells;
    }

  private slots:
    void initTestCase() {
        wsPath_ = dir_.filePath("ws.sqlite").toStdString();
        ws_ = Workspace::open(wsPath_);
        const std::string path = dir_.filePath("explore.json").toStdString();
        std::ofstream(path) << exploreTrace();
        Progress progress;
        profile_ = importFiles(*ws_, ImportRequest{{path}, {}, {}}, progress).at(0).id;
    }

    void areaSummaryByName() {
        // [10, 120] µs over main and io: outer clipped to 90 of its 100 µs, holding inner 30 +
        // 10 (self 50); load 20 of its 40 µs; late and kern outside the tracks or the range.
        const TraceSourcePtr src = source();
        const trace::TraceStore& store = src->store();
        const int64_t origin = store.start();
        const trace::AreaSummary area = trace::summarizeArea(
            store, {trackNamed("main"), trackNamed("io")}, origin + 10000, origin + 120000);
        QCOMPARE(area.slices, uint64_t(4));
        QCOMPARE(area.tracks, size_t(2));
        QCOMPARE(area.ops.size(), size_t(3));
        QCOMPARE(area.ops[0].name, std::string("outer"));  // by self, descending
        QCOMPARE(area.ops[0].self, 50000.0);
        QCOMPARE(area.ops[0].inRange, 90000.0);
        QCOMPARE(area.ops[0].total, 100000.0);
        QCOMPARE(area.ops[1].name, std::string("inner"));
        QCOMPARE(area.ops[1].count, uint64_t(2));
        QCOMPARE(area.ops[1].self, 40000.0);
        QCOMPARE(area.ops[1].mean(), 20000.0);
        QCOMPARE(area.ops[2].name, std::string("load"));
        QCOMPARE(area.ops[2].inRange, 20000.0);
        QCOMPARE(area.ops[2].total, 40000.0);
        QCOMPARE(area.busy, 110000.0);
        // Read in windows of about one slice (as a 10^7-slice process is, in 200,000-slice
        // windows): the same sums, each slice counted once.
        std::vector<int64_t> all;
        for (const auto& t : store.tracks())
            if (t.slices > 0) all.push_back(t.id);
        const trace::AreaSummary whole =
            trace::summarizeArea(store, all, origin, origin + 200000, nullptr);
        const trace::AreaSummary windowed =
            trace::summarizeArea(store, all, origin, origin + 200000, nullptr, 1);
        QCOMPARE(whole.slices, uint64_t(8));
        QCOMPARE(windowed.slices, whole.slices);
        QCOMPARE(windowed.ops.size(), whole.ops.size());
        for (size_t i = 0; i < whole.ops.size(); ++i) {
            QCOMPARE(windowed.ops[i].name, whole.ops[i].name);
            QCOMPARE(windowed.ops[i].count, whole.ops[i].count);
            QCOMPARE(windowed.ops[i].total, whole.ops[i].total);
            QCOMPARE(windowed.ops[i].inRange, whole.ops[i].inRange);
            QCOMPARE(windowed.ops[i].self, whole.ops[i].self);
        }
        QCOMPARE(windowed.busy, whole.busy);
    }

    void shiftDragSelectsAnAreaAndSumsIt() {
        TraceView view;
        show(view);
        TimelineView* timeline = view.timeline();
        const QSize size = timeline->viewport()->size();
        const TimeMapping mapping = timeline->mappingFor(size);
        const TimelineTrack* main = nullptr;
        const TimelineTrack* io = nullptr;
        for (const auto& t : timeline->tracks()) {
            if (t->title() == "main") main = t.get();
            if (t->title() == "io") io = t.get();
        }
        QVERIFY(main && io);
        const QRect mainRect = timeline->trackRect(main), ioRect = timeline->trackRect(io);
        QVERIFY(ioRect.top() >= mainRect.bottom());  // main above io
        QSignalSpy ready(view.summaryPanel(), &AreaSummaryPanel::ready);
        // Shift-drag from 10 µs on main to 120 µs on io.
        const QPoint from(int(std::lround(mapping.x(10000))), mainRect.center().y());
        const QPoint to(int(std::lround(mapping.x(120000))), ioRect.center().y());
        QTest::mousePress(timeline->viewport(), Qt::LeftButton, Qt::ShiftModifier, from);
        QTest::mouseMove(timeline->viewport(), to);
        QTest::mouseRelease(timeline->viewport(), Qt::LeftButton, Qt::ShiftModifier, to);
        QCOMPARE(timeline->measuredTracks(), (std::vector<const TimelineTrack*>{main, io}));
        QVERIFY(ready.wait(5000));
        auto* tabs = view.findChild<QTabWidget*>();
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(view.summaryPanel()));
        const QTableWidget* table = view.summaryPanel()->table();
        QCOMPARE(table->rowCount(), 3);
        // Pixel rounding moves the range's ends by under a pixel (~170 ns here).
        const double px = mapping.unitsPerPixel();
        const auto outer = row(table, "outer");
        QCOMPARE(outer[0], 1.0);
        QVERIFY(std::abs(outer[1] - 50000) <= 2 * px);
        QCOMPARE(outer[3], 100000.0);
        const auto inner = row(table, "inner");
        QCOMPARE(inner[0], 2.0);
        QCOMPARE(inner[1], 40000.0);
        QVERIFY(std::abs(row(table, "load")[2] - 20000) <= 2 * px);
        QVERIFY2(view.summaryPanel()->headingText().startsWith("Area: "),
                 qPrintable(view.summaryPanel()->headingText()));
        QVERIFY(view.summaryPanel()->headingText().contains("on 2 tracks — 4 slices of 3 names"));
        // Drawn: the area is tinted on main and io, less on the stream below them, not at all
        // outside the range.
        const QImage image = timeline->renderImage(size);
        const int x = int(mapping.x(115000));  // inside the range, on no slice of main
        const QColor tinted = image.pixelColor(x, mainRect.top() + TraceSliceTrack::rowCenter(1));
        QVERIFY2(tinted.red() > tinted.blue() + 20, qPrintable(tinted.name()));
        const QColor outside = image.pixelColor(int(mapping.x(130000)),
                                                mainRect.top() + TraceSliceTrack::rowCenter(1));
        QVERIFY2(sameColor(outside, Qt::white, 8), qPrintable(outside.name()));
        const TimelineTrack* stream = nullptr;
        for (const auto& t : timeline->tracks())
            if (t->title() == "stream 8") stream = t.get();
        QVERIFY(stream);
        const QRect streamRect = timeline->trackRect(stream);
        const QColor below = image.pixelColor(int(mapping.x(115000)),
                                              streamRect.top() + TraceSliceTrack::rowCenter(0));
        // (Every track gets the measurement's light band; the area's tracks a stronger tint.)
        QVERIFY2(tinted.blue() + 25 < below.blue(), qPrintable(tinted.name() + below.name()));
    }

    void processHeaderSummarizesTheProcess() {
        TraceView view;
        show(view);
        QSignalSpy ready(view.summaryPanel(), &AreaSummaryPanel::ready);
        const TimelineTrack* header = view.timeline()->tracks().front().get();
        QVERIFY(header->isHeader());
        const QRect rect = view.timeline()->trackRect(header);
        QTest::mouseClick(view.timeline()->viewport(), Qt::LeftButton, {}, rect.center());
        QVERIFY(ready.wait(5000));
        QVERIFY2(view.summaryPanel()->headingText().startsWith("proc: "),
                 qPrintable(view.summaryPanel()->headingText()));
        const QTableWidget* table = view.summaryPanel()->table();
        QCOMPARE(table->rowCount(), 5);  // outer, inner, late, load, kern
        QCOMPARE(row(table, "kern")[0], 3.0);
        QCOMPARE(row(table, "kern")[3], 70000.0);
        QCOMPARE(row(table, "late")[1], 50000.0);
    }

    void detailsFollowAFlow() {
        TraceView view;
        show(view);
        TimelineView* timeline = view.timeline();
        const TimeMapping mapping = timeline->mappingFor(timeline->viewport()->size());
        const TimelineTrack* main = nullptr;
        for (const auto& t : timeline->tracks())
            if (t->title() == "main") main = t.get();
        const QRect mainRect = timeline->trackRect(main);
        QTest::mouseClick(
            timeline->viewport(), Qt::LeftButton, {},
            QPoint(int(mapping.x(170000)), mainRect.top() + TraceSliceTrack::rowCenter(0)));
        QVERIFY(timeline->selection());
        QCOMPARE(timeline->selection()->item.start, 150000.0);  // late
        QVERIFY2(view.detailsText().contains("→ to stream 7 at 160"),
                 qPrintable(view.detailsText()));
        QSignalSpy selected(timeline, &TimelineView::selectionChanged);
        view.followFlow(QUrl("flow:0"));
        QVERIFY(selected.wait(5000));
        QCOMPARE(timeline->selection()->track->title(), QString("stream 7"));
        QCOMPARE(timeline->selection()->item.start, 160000.0);
        QCOMPARE(timeline->selection()->item.end, 180000.0);
        // And back: the kernel lists where its flow came from (the launching slice's end, where
        // its arrow leaves).
        QVERIFY2(view.detailsText().contains("← from main at 200.0 µs"),
                 qPrintable(view.detailsText()));
    }

    void findHighlightsEveryMatch() {
        TraceView view;
        show(view);
        TimelineView* timeline = view.timeline();
        const QSize size = timeline->viewport()->size();
        const TimeMapping mapping = timeline->mappingFor(size);
        const TimelineTrack *main = nullptr, *io = nullptr;
        for (const auto& t : timeline->tracks()) {
            if (t->title() == "main") main = t.get();
            if (t->title() == "io") io = t.get();
        }
        const int row0 = timeline->trackRect(main).top() + TraceSliceTrack::rowCenter(0);
        const int row1 = timeline->trackRect(main).top() + TraceSliceTrack::rowCenter(1);
        const int ioRow = timeline->trackRect(io).top() + TraceSliceTrack::rowCenter(0);
        auto colorAt = [&](double ns, int y) {
            return timeline->renderImage(size).pixelColor(int(mapping.x(ns)), y);
        };
        // "er" matches outer and inner: both in colour, load (io) and late dimmed.
        view.findField()->setText("ER");
        QVERIFY(sameColor(colorAt(95000, row0), traceNameColor("outer")));
        QVERIFY(sameColor(colorAt(45000, row1), traceNameColor("inner")));
        QVERIFY(!sameColor(colorAt(135000, ioRow), traceNameColor("load"), 20));
        QVERIFY(!sameColor(colorAt(195000, row0), traceNameColor("late"), 20));
        // Cleared: everything in colour again.
        view.findField()->clear();
        QVERIFY(sameColor(colorAt(135000, ioRow), traceNameColor("load")));
        QVERIFY(sameColor(colorAt(195000, row0), traceNameColor("late")));
    }

    void utilisationLaneMergesStreams() {
        // stream 7 busy 0-30 and 160-180 µs, stream 8 20-40: merged 0-40 and 160-180.
        DeviceUtilisationTrack lane(
            source(),
            trace::StepDevice{"GPU 0", -1, {trackNamed("stream 7"), trackNamed("stream 8")}});
        QCOMPARE(lane.busyBetween(0, 200000), 60000.0);
        QCOMPARE(lane.busyBetween(30000, 170000), 20000.0);
        auto frame = std::dynamic_pointer_cast<const DeviceUtilisationTrack::Frame>(
            lane.prepare({0, 200000}, 500.0));
        QVERIFY(frame);
        QCOMPARE(frame->binWidth, 1000.0);
        QCOMPARE(frame->busy[size_t(10)], 1.0f);   // 10-11 µs
        QCOMPARE(frame->busy[size_t(50)], 0.0f);   // 50-51 µs
        QCOMPARE(frame->busy[size_t(170)], 1.0f);  // 170-171 µs
        // Drawn: green up to the top where busy, the empty background where idle.
        TimelineView view;
        view.setAsynchronous(false);
        auto track = std::make_shared<DeviceUtilisationTrack>(
            source(), trace::StepDevice{"GPU 0", -1, {trackNamed("stream 7")}});
        view.addTrack(track);
        view.resize(1000, 200);
        view.setWindow({0, 200000});
        const QSize size = view.viewport()->size();
        view.prepareNow(size);
        const QImage image = view.renderImage(size);
        const QRect rect = view.trackRect(track.get(), size);
        const TimeMapping mapping = view.mappingFor(size);
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(15000)), rect.top() + 4),
                          QColor(46, 140, 80)));
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(100000)), rect.top() + 4),
                          QColor(236, 242, 238)));
        QVERIFY(track->toolTip({0, 10000, 12000, 1, 0}).contains("busy 100.0%"));
    }

    // In the window the lane does not hold back the first frame: its intervals are read on a
    // thread of its own, the frames drawn meanwhile are partial, and the timeline asks again
    // until the busy profile is drawn.
    void utilisationLaneReadsInTheBackground() {
        auto lane = std::make_shared<DeviceUtilisationTrack>(
            source(), trace::StepDevice{"GPU 0", -1, {trackNamed("stream 7")}});
        lane->setReadsInBackground(true);
        const auto first = lane->prepare({0, 200000}, 500.0);
        QVERIFY(first->partial);
        QTRY_VERIFY(lane->ready());
        const auto after = std::dynamic_pointer_cast<const DeviceUtilisationTrack::Frame>(
            lane->prepare({0, 200000}, 500.0));
        QVERIFY(!after->partial);
        QCOMPARE(after->busy[size_t(10)], 1.0f);

        TimelineView view;  // asynchronous, as in the window
        auto track = std::make_shared<DeviceUtilisationTrack>(
            source(), trace::StepDevice{"GPU 0", -1, {trackNamed("stream 7")}});
        track->setReadsInBackground(true);
        view.addTrack(track);
        view.resize(1000, 200);
        view.setWindow({0, 200000});
        view.show();
        const QSize size = view.viewport()->size();
        const QRect rect = view.trackRect(track.get(), size);
        const TimeMapping mapping = view.mappingFor(size);
        const auto busyDrawn = [&] {
            QImage image(size, QImage::Format_ARGB32_Premultiplied);
            image.fill(Qt::white);
            QPainter painter(&image);
            view.paintContent(painter, size);
            return sameColor(image.pixelColor(int(mapping.x(15000)), rect.top() + 4),
                             QColor(46, 140, 80));
        };
        QTRY_VERIFY(busyDrawn());
    }
};

QTEST_MAIN(TestTraceExplore)
#include "test_trace_explore.moc"
