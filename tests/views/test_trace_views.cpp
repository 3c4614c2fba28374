// Trace views: slices drawn at known pixels for a tiny hand-written Chrome trace, hit-testing,
// the op table, find next/previous, the rendered PNG, and the compare view (linked zoom, delta
// table, CDF chart).
#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <random>

#include "core/sqlite.h"
#include "core/trace/trace_writer.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/importers/trace_fixtures.h"
#include "views/common/format.h"
#include "views/common/render.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/shell/elided_label.h"
#include "views/shell/profile_summary.h"
#include "views/trace/flow_index.h"
#include "views/trace/trace_compare_view.h"
#include "views/trace/trace_tracks.h"
#include "views/trace/trace_view.h"
#include "views/trace/transfer_compare.h"
#include "views/view_kinds.h"

using namespace stallscope;

namespace {

QJsonObject slice(const char* name, int tid, int ts, int dur) {
    return QJsonObject{{"ph", "X"},  {"name", name}, {"pid", 1},
                       {"tid", tid}, {"ts", ts},     {"dur", dur}};
}

// Thread "main": outer 0-100 µs with inner 20-50 and inner 60-70 nested, late 150-200;
// thread "io": load 100-140 (a second track under the same process).
std::string tinyTrace() {
    QJsonObject outer = slice("outer", 1, 0, 100);
    outer.insert("args", QJsonObject{{"bytes", 4096}});
    QJsonArray events{QJsonObject{{"ph", "M"},
                                  {"name", "process_name"},
                                  {"pid", 1},
                                  {"args", QJsonObject{{"name", "proc"}}}},
                      QJsonObject{{"ph", "M"},
                                  {"name", "thread_name"},
                                  {"pid", 1},
                                  {"tid", 1},
                                  {"args", QJsonObject{{"name", "main"}}}},
                      QJsonObject{{"ph", "M"},
                                  {"name", "thread_name"},
                                  {"pid", 1},
                                  {"tid", 2},
                                  {"args", QJsonObject{{"name", "io"}}}},
                      outer,
                      slice("inner", 1, 20, 30),
                      slice("inner", 1, 60, 10),
                      slice("late", 1, 150, 50),
                      slice("load", 2, 100, 40)};
    return QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString();
}

bool sameColor(QColor a, QColor b, int tolerance = 2) {
    return std::abs(a.red() - b.red()) <= tolerance &&
           std::abs(a.green() - b.green()) <= tolerance &&
           std::abs(a.blue() - b.blue()) <= tolerance;
}

}  // namespace

class TestTraceViews : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Workspace> ws_;
    int64_t tiny_ = 0;
    std::string wsPath_;

    std::string write(const QString& name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        std::ofstream(path) << text;
        return path;
    }
    int64_t importFile(const std::string& path) {
        Progress progress;
        return importFiles(*ws_, ImportRequest{{path}, {}, {}}, progress).at(0).id;
    }
    TraceSourcePtr tinySource() { return std::make_shared<TraceSource>(wsPath_, tiny_); }
    // The tiny trace shown in `view`, its op table filled as open() fills it.
    void showTiny(TraceView& view) {
        auto source = tinySource();
        view.setSource(source,
                       source->query([](const trace::TraceStore& s) { return s.opStats(); }));
    }

  private slots:
    void initTestCase() {
        wsPath_ = dir_.filePath("ws.sqlite").toStdString();
        ws_ = Workspace::open(wsPath_);
        tiny_ = importFile(write("tiny.json", tinyTrace()));
    }

    // The timeline's flows stay packed per stored chunk (65,536 flows) and decode by time
    // window: 150,000 flows in three chunks, once with ids in time order (chunks by time) and
    // once shuffled (every chunk spans the trace: held decoded and sorted instead). Either way a
    // window's flows are exactly those a filter over all of them finds, in the same order.
    void flowIndexFindsAWindowsFlows_data() {
        QTest::addColumn<bool>("shuffled");
        QTest::newRow("ids in time order") << false;
        QTest::newRow("ids shuffled") << true;
    }
    void flowIndexFindsAWindowsFlows() {
        QFETCH(bool, shuffled);
        constexpr int kFlows = 150000;
        std::vector<int64_t> starts(kFlows);
        for (int i = 0; i < kFlows; ++i) starts[size_t(i)] = int64_t(i) * 10;
        if (shuffled) std::shuffle(starts.begin(), starts.end(), std::mt19937(7));
        sql::Transaction tx(ws_->db());
        ProfileInfo info;
        info.name = shuffled ? "flows-shuffled" : "flows-ordered";
        info.kind = "trace";
        const int64_t id = ws_->insertProfile(info);
        {
            trace::TraceWriter writer(*ws_, id);
            const uint32_t from = writer.addTrack({}), to = writer.addTrack({});
            const uint32_t name = writer.intern("f");
            for (int64_t start : starts)
                writer.addFlow({from, start}, {to, start + 5 + start % 7}, name);
            writer.finish([](double) {});
        }
        tx.commit();
        const trace::TraceStore store(*ws_, id);
        const std::atomic<bool> stop{false};
        const FlowIndex index(store, stop);
        QCOMPARE(index.size(), size_t(kFlows));
        QCOMPARE(index.longest(), int64_t(11));
        QCOMPARE(index.packed(), !shuffled);
        std::vector<trace::FlowRow> all;
        store.forEachFlow([&](const trace::FlowRow& f) { all.push_back(f); });
        for (const auto& [a, b] : std::vector<std::pair<int64_t, int64_t>>{
                 {0, 99}, {655300, 655500}, {1000000, 1400000}, {-50, 2000000}}) {
            std::vector<int64_t> expected, found;
            for (const trace::FlowRow& f : all)
                if (std::min(f.fromTs, f.toTs) >= a && std::min(f.fromTs, f.toTs) <= b)
                    expected.push_back(f.fromTs);
            std::sort(expected.begin(), expected.end());
            for (const trace::FlowRow& f : index.between(a, b)) found.push_back(f.fromTs);
            QCOMPARE(found, expected);
            QVERIFY(index.atLeastBetween(a, b) <= expected.size());
        }
        // Counted without decoding: all of them over the whole trace.
        QCOMPARE(index.atLeastBetween(-50, 2000000), size_t(kFlows));
    }

    void slicesAtKnownPixels() {
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, tinySource());
        binding.show(traceTracksInOrder(binding.source()->store()));
        // The process's header, then main and io (the process itself has no data).
        QCOMPARE(view.tracks().size(), size_t(3));
        QCOMPARE(view.tracks()[0]->title(), QString("proc"));
        QVERIFY(view.tracks()[0]->isHeader());
        QCOMPARE(view.tracks()[0]->height(), TraceProcessHeaderTrack::kHeight);
        QCOMPARE(view.tracks()[1]->title(), QString("main"));
        QCOMPARE(view.tracks()[1]->titleIndent(), 12);
        QCOMPARE(view.tracks()[1]->height(),
                 2 * TraceSliceTrack::kPadding + 2 * TraceSliceTrack::kRowHeight);  // depth 0..1
        view.setWindow({0, 200000});
        view.resize(1150, 400);
        const QSize size = view.viewport()->size();  // itemAt() works in viewport coordinates
        const QImage image = view.renderImage(size);
        const TimeMapping mapping = view.mappingFor(size);
        QCOMPARE(mapping.left, double(TimelineView::kGutterWidth));
        const QRect main = view.trackRect(view.tracks()[1].get(), size);
        QCOMPARE(main.top(), view.layoutFor(size).tracks.top() + TraceProcessHeaderTrack::kHeight);
        // outer covers 0..100 µs at depth 0: the left half of the data area.
        QCOMPARE(mapping.window, (TimeRange{0, 200000}));
        QCOMPARE(mapping.x(100000), mapping.left + 0.5 * mapping.width);
        const int row0 = main.top() + TraceSliceTrack::rowCenter(0);
        const int row1 = main.top() + TraceSliceTrack::rowCenter(1);
        const QColor outer = traceNameColor("outer"), inner = traceNameColor("inner");
        // Sample away from the labels (text is drawn from the left edge).
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(95000)), row0), outer));
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(48000)), row1), inner));
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(68000)), row1), inner));
        // Between the inner slices (50..60 µs) depth 1 is empty; after outer depth 0 is empty.
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(55000)), row1), Qt::white, 20));
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(125000)), row0), Qt::white, 20));
        QVERIFY(sameColor(image.pixelColor(int(mapping.x(195000)), row0), traceNameColor("late")));
        const QRect io = view.trackRect(view.tracks()[2].get(), size);
        QVERIFY(sameColor(
            image.pixelColor(int(mapping.x(135000)), io.top() + TraceSliceTrack::rowCenter(0)),
            traceNameColor("load")));

        // Hit-testing: the inner slice at 20..50 µs, depth 1; nothing in the gap.
        const auto hit = view.itemAt(QPoint(int(mapping.x(30000)), row1));
        QVERIFY(hit);
        QCOMPARE(hit->item.start, 20000.0);
        QCOMPARE(hit->item.end, 50000.0);
        QCOMPARE(hit->item.row, 1);
        QCOMPARE(hit->track->toolTip(hit->item), QString("inner\n30.00 µs at 20.00 µs"));
        QVERIFY(!view.itemAt(QPoint(int(mapping.x(55000)), row1)));
        const auto outerHit = view.itemAt(QPoint(int(mapping.x(90000)), row0));
        QVERIFY(outerHit);
        const auto* track = dynamic_cast<const TraceSliceTrack*>(outerHit->track);
        QVERIFY(track);
        const std::string args = binding.source()->query(
            [&](const trace::TraceStore& s) { return s.args(track->argsOf(outerHit->item)); });
        QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(args))
                     .object()
                     .value("bytes")
                     .toInt(),
                 4096);
    }

    // A slice whose end the trace never recorded runs to the trace's end with a red dashed
    // outline and arrow; tooltip and details say it did not end; times read from the profile's
    // start (an epoch clock), the absolute one in the details.
    void unendedSliceIsMarked() {
        constexpr qint64 kEpochUs = 1712186718000000;
        QJsonArray events{
            QJsonObject{{"ph", "X"},
                        {"name", "first"},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", kEpochUs},
                        {"dur", 100}},
            QJsonObject{
                {"ph", "B"}, {"name", "open"}, {"pid", 1}, {"tid", 1}, {"ts", kEpochUs + 200}},
            QJsonObject{{"ph", "X"},
                        {"name", "tail"},
                        {"pid", 1},
                        {"tid", 2},
                        {"ts", kEpochUs + 1900},
                        {"dur", 100}}};
        const int64_t id = importFile(
            write("unended.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, std::make_shared<TraceSource>(wsPath_, id));
        binding.show(traceTracksInOrder(binding.source()->store()));
        view.setWindow({0, 2000000});
        view.resize(1150, 400);
        const QSize size = view.viewport()->size();
        const QImage image = view.renderImage(size);
        const TimeMapping mapping = view.mappingFor(size);
        const TimelineTrack* thread = view.tracks()[1].get();
        const int row0 = view.trackRect(thread, size).top() + TraceSliceTrack::rowCenter(0);
        const QColor red(200, 30, 30);
        // The arrow just inside the slice's end (the trace's end, 2000 us), then the dashed
        // outline along the top; the fill in between keeps the op's colour.
        const int endX = int(mapping.x(2000000));
        QVERIFY(sameColor(image.pixelColor(endX - 4, row0), red, 30));
        int redOnTop = 0;
        const int top = row0 - TraceSliceTrack::kRowHeight / 2 + 1;
        for (int x = int(mapping.x(300000)); x < int(mapping.x(1000000)); ++x)
            if (sameColor(image.pixelColor(x, top), red, 40)) ++redOnTop;
        QVERIFY2(redOnTop > 50, qPrintable(QString::number(redOnTop)));  // dashes: about half
        QVERIFY(
            sameColor(image.pixelColor(int(mapping.x(1000000)), row0), traceNameColor("open")) ||
            sameColor(image.pixelColor(int(mapping.x(1000000)), row0), Qt::white, 30));
        // A slice that ended has no red on its outline.
        int redOnFirst = 0;
        for (int x = int(mapping.x(0)) + 1; x < int(mapping.x(100000)); ++x)
            if (sameColor(image.pixelColor(x, top), red, 40)) ++redOnFirst;
        QCOMPARE(redOnFirst, 0);

        const auto hit = view.itemAt(QPoint(int(mapping.x(600000)), row0));
        QVERIFY(hit);
        QCOMPARE(hit->item.start, 200000.0);
        QCOMPARE(hit->item.end, 2000000.0);
        const QString tip = hit->track->toolTip(hit->item);
        QVERIFY2(tip.startsWith("open\nDid not end: began at 200.0 µs"), qPrintable(tip));
        const DetailFields fields = hit->track->details(hit->item);
        auto field = [&](const QString& name) {
            for (const auto& [key, value] : fields)
                if (key == name) return value;
            return QString();
        };
        QVERIFY(field("Duration").startsWith("did not end"));
        QCOMPARE(field("Start"), QString("200.0 µs"));
        QCOMPARE(field("Absolute start"),
                 QString("1712186718000200000 ns (2024-04-03 23:25:18.000200000 UTC)"));
    }

    // The details dock lists what the importer could not use, from the profile's metadata.
    void detailsListImportNotes() {
        QJsonArray events{
            QJsonObject{{"ph", "B"}, {"name", "open"}, {"pid", 1}, {"tid", 1}, {"ts", 10}},
            QJsonObject{{"ph", "P"}, {"name", "sample"}, {"pid", 1}, {"tid", 1}, {"ts", 12}},
            QJsonObject{{"ph", "f"},
                        {"name", "flow"},
                        {"cat", "c"},
                        {"id", 3},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", 15},
                        {"bp", "e"}},
            QJsonObject{
                {"ph", "X"}, {"name", "x"}, {"pid", 1}, {"tid", 2}, {"ts", 0}, {"dur", 20}}};
        const int64_t id = importFile(
            write("notes.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        ProfileDetailsForm form;
        form.setProfile(*ws_->profile(id));
        QCOMPARE(form.importNotesText(),
                 QString("• 1 slices never ended: drawn to the end of the trace and left out of "
                         "op totals, means and percentiles\n"
                         "• 1 flow steps or ends have no start with their id\n"
                         "• 1 events of phase \"P\" were not used (a phase Stallscope does not "
                         "draw)"));
        form.setProfile(*ws_->profile(tiny_));
        QCOMPARE(form.importNotesText(), QString("none: everything in the file was used"));
    }

    // The overview strip shows where the tracks are busy: a slice over 0-100 µs and one over
    // 300-400 µs leave the middle half empty.
    void minimapShowsBusyTime() {
        const int64_t id = importFile(
            write("gaps.json",
                  // Starting late (5 ms): timeline times are relative to the profile's start.
                  R"({"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":5000,"dur":100,"name":"a"},)"
                  R"({"ph":"X","pid":1,"tid":1,"ts":5300,"dur":100,"name":"b"}]})"));
        const auto density = TraceSource(wsPath_, id).query([](const trace::TraceStore& s) {
            return trackBusyDensity(s, 8);
        });
        QCOMPARE(density, (std::vector<double>{1, 1, 0, 0, 0, 0, 1, 1}));
        TraceView view;
        QSignalSpy loaded(&view, &TraceView::loaded);
        view.open(wsPath_, id);
        QVERIFY(loaded.wait(10000));
        const QSize size(1000, 400);
        const TimelineView::Layout layout = view.timeline()->layoutFor(size);
        QImage image;
        const auto stripColour = [&](double ns) {
            const double x = layout.dataArea.left() + ns / 400000.0 * layout.dataArea.width();
            return image.pixelColor(int(x), layout.minimap.center().y());
        };
        // The density arrives after the first frame, from its own worker.
        const auto busyShown = [&] {
            image = view.timeline()->renderImage(size);
            return stripColour(50000) != stripColour(200000);
        };
        QTRY_VERIFY_WITH_TIMEOUT(busyShown(), 10000);
        QCOMPARE(stripColour(350000), stripColour(50000));
        // The headless render draws the same strip.
        RenderOptions options;
        options.size = size;
        options.sizeGiven = true;
        image = renderTraceTimelineImage(std::make_shared<TraceSource>(wsPath_, id), options);
        QVERIFY(stripColour(50000) != stripColour(200000));
        QCOMPARE(stripColour(350000), stripColour(50000));
    }

    // Trace times carry their own unit: the measurement and the axis say it once.
    void measurementNamesItsUnitOnce() {
        TimelineView view;
        setTraceTimeFormat(view);
        QCOMPARE(view.measurementText({1000, 1501000}), QString::fromUtf8("Δ 1.50 ms"));
        QVERIFY(view.timeFormat().unit.isEmpty());
    }

    void foldedItemsAreCounted() {
        // 2000 slices of 1 µs every 2 µs: at 1000 pixels for 4 ms they fold into counted blocks
        // whose counts add up to the slices in the window.
        QJsonArray events;
        for (int i = 0; i < 2000; ++i) events.append(slice("tick", 1, 2 * i, 1));
        const int64_t id = importFile(
            write("ticks.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        auto source = std::make_shared<TraceSource>(wsPath_, id);
        TraceSliceTrack track(source, source->store().tracks().back());
        const auto frame = std::dynamic_pointer_cast<const TraceSliceTrack::Frame>(
            track.prepare({0, 4000000}, 4000.0));
        QVERIFY(frame);
        uint64_t total = 0;
        for (const auto& item : frame->items) {
            QCOMPARE(item.kind, trace::ItemKind::Folded);
            total += item.count;
        }
        QCOMPARE(total, uint64_t(2000));
        QVERIFY(frame->items.size() <= 1000);
    }

    void focusingTheTrackTreeKeepsTheView() {
        // Issue 32 #1: after a recommendation zoomed the timeline, a click on the Ops tab
        // jumped to Details, selected the first process and zoomed out: the track tree took
        // focus, Qt made its first row current, and that counted as choosing it.
        TraceView view;
        view.timeline()->setAsynchronous(false);
        showTiny(view);
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* tabs = view.findChild<QTabWidget*>();
        QVERIFY(tabs);
        tabs->setCurrentIndex(0);
        const int before = tabs->currentIndex();
        view.timeline()->setWindow({20000, 60000});
        QVERIFY(!view.trackTree()->currentItem());
        view.trackTree()->setFocus(Qt::TabFocusReason);
        QCoreApplication::processEvents();
        QCOMPARE(tabs->currentIndex(), before);
        QCOMPARE(view.timeline()->window().start, 20000.0);
        QCOMPARE(view.timeline()->window().end, 60000.0);
        // A click on a row still shows its details.
        QTreeWidgetItem* first = view.trackTree()->topLevelItem(0);
        const QRect rect = view.trackTree()->visualItemRect(first);
        QTest::mouseClick(view.trackTree()->viewport(), Qt::LeftButton, {}, rect.center());
        QVERIFY(view.detailsText().contains("Process"));
    }

    void findCountsTheMatches() {
        // Issue 32 (Perfetto's habit): the find field says how many slices match as it is
        // typed. The tiny trace: outer, inner x2, late, load.
        TraceView view;
        showTiny(view);
        QLineEdit* find = view.findField();
        auto* status = view.findChild<ElidedLabel*>();
        QVERIFY(status);
        find->setText("INN");  // case-folded, as Next matches
        QCOMPARE(status->text(), QString("2 slices match “INN” in 1 name: Enter or Next steps "
                                         "through them"));
        find->setText("o");  // outer, load
        QVERIFY2(status->text().startsWith("2 slices match “o” in 2 names"),
                 qPrintable(status->text()));
        find->setText("zzz");
        QCOMPARE(status->text(), QString("No slice matches “zzz”"));
        find->clear();
        QVERIFY(status->text().isEmpty());
    }

    void opTableAndFind() {
        TraceView view;
        view.timeline()->setAsynchronous(false);
        auto source = tinySource();
        auto ops = source->query([](const trace::TraceStore& s) { return s.opStats(); });
        view.setSource(source, ops);
        view.resize(1200, 800);
        QStandardItemModel* model = view.opModel();
        QAbstractItemModelTester tester(model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 4);
        // Rows in store order (total descending): outer 100 µs (self 60), late 50, inner 40,
        // load 40.
        auto row = [&](const QString& name) {
            for (int r = 0; r < model->rowCount(); ++r)
                if (model->item(r, 0)->text() == name) return r;
            return -1;
        };
        const int outer = row("outer"), inner = row("inner");
        QCOMPARE(model->item(outer, 1)->text(), QString("1"));
        QCOMPARE(model->item(outer, 2)->text(), QString("100.0 µs"));
        QCOMPARE(model->item(outer, 3)->text(), QString("60.00 µs"));
        QCOMPARE(model->item(inner, 1)->text(), QString("2"));
        QCOMPARE(model->item(inner, 4)->data(tablekit::kSortRole).toDouble(), 20000.0);  // mean
        QCOMPARE(model->item(inner, 5)->data(tablekit::kSortRole).toDouble(), 10000.0);  // p50
        QCOMPARE(model->item(inner, 6)->data(tablekit::kSortRole).toDouble(), 30000.0);  // p95
        // The table is sorted by total, descending; clicking Count sorts numerically.
        QCOMPARE(view.opTable()->model()->index(0, 0).data().toString(), QString("outer"));
        view.opTable()->sortByColumn(1, Qt::DescendingOrder);
        QCOMPARE(view.opTable()->model()->index(0, 0).data().toString(), QString("inner"));

        // Find: next from the start, next again, then no more; previous goes back.
        QSignalSpy found(&view, &TraceView::foundSlice);
        auto findAndWait = [&](const QString& needle, bool forward) {
            const int before = int(found.count());
            view.findNext(needle, forward);
            if (found.count() == before) found.wait(5000);
            return found.last().at(0).toBool();
        };
        QVERIFY(findAndWait("INNER", true));
        QCOMPARE(view.timeline()->selection()->item.start, 20000.0);
        QVERIFY(findAndWait("inner", true));
        QCOMPARE(view.timeline()->selection()->item.start, 60000.0);
        QCOMPARE(view.timeline()->selection()->item.row, 1);
        QVERIFY(!findAndWait("inner", true));
        QVERIFY(findAndWait("inner", false));
        QCOMPARE(view.timeline()->selection()->item.start, 20000.0);

        // Selecting an op in the table finds its next slice.
        view.timeline()->clearSelection();
        view.timeline()->fitAll();
        view.selectOp("late");
        if (found.count() < 5) found.wait(5000);
        QCOMPARE(view.timeline()->selection()->item.start, 150000.0);
        // A match's arguments are shown as a clicked slice's are (outer's {"bytes": 4096}).
        view.timeline()->clearSelection();
        QVERIFY(findAndWait("outer", true));
        QTRY_VERIFY(view.detailsText().contains("4096"));
        QVERIFY(view.detailsText().contains("bytes"));

        // Track tree: proc → main, io; filtering by "io" leaves one track on the timeline.
        QCOMPARE(view.trackTree()->topLevelItemCount(), 1);
        QCOMPARE(view.trackTree()->topLevelItem(0)->childCount(), 2);
        view.setTrackFilter("io");
        QCOMPARE(view.timeline()->tracks().size(), size_t(2));  // the header and io
        QCOMPARE(view.timeline()->tracks()[1]->title(), QString("io"));
        view.setTrackFilter("");
        QCOMPARE(view.timeline()->tracks().size(), size_t(3));
        view.trackTree()->topLevelItem(0)->setExpanded(false);  // collapsing hides the threads
        QCOMPARE(view.timeline()->tracks().size(), size_t(0));
        QVERIFY(view.overviewHtml().contains("200.0 µs"));
    }

    void renderedPng() {
        RenderOptions options;
        options.size = QSize(1150, 300);
        options.sizeGiven = true;
        options.from = 0;
        options.to = 200000;
        const ProfileInfo profile = *ws_->profile(tiny_);
        const QImage image = renderView("timeline", *ws_, profile, options);
        const QString out = dir_.filePath("tiny.png");
        QVERIFY(image.save(out));
        const QImage png(out);
        QCOMPARE(png.size(), QSize(1150, 300));
        // Same geometry as the widget.
        TimelineView probe;
        probe.setAsynchronous(false);
        TraceTimelineBinding binding(probe, tinySource());
        const std::vector<std::shared_ptr<TimelineTrack>> lanes =
            traceLeadingLanes(*ws_, profile, binding.source());
        binding.setLeadingTracks(lanes);
        binding.show(traceTracksInOrder(binding.source()->store()));
        probe.setWindow({0, 200000});
        const QRect main = probe.trackRect(probe.tracks()[lanes.size() + 1].get(), options.size);
        const int y = main.top() + TraceSliceTrack::rowCenter(0);
        const TimeMapping mapping = probe.mappingFor(options.size);
        const int x95 = int(mapping.left + 0.475 * mapping.width);   // 95 µs: inside outer
        const int x195 = int(mapping.left + 0.975 * mapping.width);  // 195 µs: inside late
        QVERIFY(sameColor(png.pixelColor(x95, y), traceNameColor("outer")));
        QVERIFY(sameColor(png.pixelColor(x195, y), traceNameColor("late")));
    }
    void reorderAndPinTracks() {
        TraceView view;
        view.timeline()->setAsynchronous(false);
        showTiny(view);
        auto idOf = [&](const std::string& name) {
            for (const auto& t : view.source()->store().tracks())
                if (t.name == name) return t.id;
            return int64_t(-1);
        };
        const int64_t main = idOf("main"), io = idOf("io"), proc = idOf("proc");
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{main, io}));
        // Move io up: the tree and the timeline follow; the item stays checked.
        view.moveTrack(io, -1);
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{io, main}));
        QTreeWidgetItem* process = view.trackTree()->topLevelItem(0);
        QCOMPARE(process->child(0)->text(0), QString("io"));
        QCOMPARE(process->child(0)->checkState(0), Qt::Checked);
        QVERIFY(process->isExpanded());
        view.moveTrack(io, -1);  // already first: nothing moves
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{io, main}));
        view.moveTrack(io, 1);
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{main, io}));
        // Pinning io puts it on top (under its process's header), marked bold in the tree.
        view.setPinned(io, true);
        QVERIFY(view.isPinned(io));
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{io, main}));
        QCOMPARE(view.timeline()->tracks()[0]->title(), QString("proc"));
        QCOMPARE(view.timeline()->tracks()[1]->title(), QString("io"));
        QVERIFY(process->child(1)->font(0).bold());
        // The order survives filtering (the view keeps it for the session).
        view.setTrackFilter("i");
        view.setTrackFilter("");
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{io, main}));
        view.setPinned(io, false);
        QCOMPARE(view.shownTrackIds(), (std::vector<int64_t>{main, io}));
        QVERIFY(!process->child(1)->font(0).bold());
        // Clicking the process in the tree shows its details.
        view.trackTree()->setCurrentItem(view.trackTree()->topLevelItem(0));
        QCOMPARE(view.detailsText(), QString("\nProcess\nproc\npid\n1\nTracks\n2\n"));
        QVERIFY(proc >= 0);
    }

    void opTableFollowsTimelineSelection() {
        TraceView view;
        view.timeline()->setAsynchronous(false);
        showTiny(view);
        view.resize(1200, 800);
        view.timeline()->setWindow({0, 200000});
        view.timeline()->prepareNow(view.timeline()->viewport()->size());
        // Click "late" (150-200 us) on main: its op row becomes the table's current row, and the
        // timeline keeps the clicked slice (no find is triggered by the table).
        const TimelineTrack* main = view.timeline()->tracks()[1].get();
        const QSize size = view.timeline()->viewport()->size();
        const TimeMapping mapping = view.timeline()->mappingFor(size);
        const QRect rect = view.timeline()->trackRect(main, size);
        const auto hit = view.timeline()->itemAt(
            QPoint(int(mapping.x(175000)), rect.top() + TraceSliceTrack::rowCenter(0)));
        QVERIFY(hit);
        view.timeline()->select(hit->track, hit->item);
        const QModelIndex current = view.opTable()->currentIndex();
        QVERIFY(current.isValid());
        QCOMPARE(view.opTable()->model()->index(current.row(), 0).data().toString(),
                 QString("late"));
        QCOMPARE(view.timeline()->selection()->item.start, 150000.0);
        // Selecting inner: the row follows.
        const auto inner = view.timeline()->itemAt(
            QPoint(int(mapping.x(65000)), rect.top() + TraceSliceTrack::rowCenter(1)));
        QVERIFY(inner);
        view.timeline()->select(inner->track, inner->item);
        QCOMPARE(view.opTable()
                     ->model()
                     ->index(view.opTable()->currentIndex().row(), 0)
                     .data()
                     .toString(),
                 QString("inner"));
        QCOMPARE(view.timeline()->selection()->item.start, 60000.0);
    }

    void formatsAndCounterUnits() {
        QCOMPARE(format::nanoseconds(830), QString("830 ns"));
        QCOMPARE(format::nanoseconds(2.25), QString("2.250 ns"));
        QCOMPARE(format::nanoseconds(0.4), QString("400 ps"));
        QCOMPARE(format::nanoseconds(30000), QString("30.00 µs"));
        QCOMPARE(format::counterUnit("unused_memory_bytes 0xaf5a"), QString("B"));
        QCOMPARE(format::counterUnit("FPS fps"), QString());
        QCOMPARE(format::counterValue(36250000, "B"), QString("34.6 MiB"));
        QCOMPARE(format::counterValue(512, "B"), QString("512 B"));
        QCOMPARE(format::counterValue(36140000, ""), QString("36.1 M"));
        QCOMPARE(format::counterValue(59.97, ""), QString("59.97"));
    }

    void zeroLengthAndSubNanosecondSlicesStayVisible() {
        // A zero-length slice and a picosecond-wide one (XProf) are drawn at least 3 px wide
        // and can be clicked; details show the exact duration.
        QJsonArray events{slice("wide", 1, 0, 100), slice("zero", 1, 50, 0)};
        const int64_t id = importFile(
            write("zero.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        auto source = std::make_shared<TraceSource>(wsPath_, id);
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, source);
        binding.show(traceTracksInOrder(source->store()));
        view.resize(1200, 300);
        view.setWindow({0, 100000});
        const QSize size = view.viewport()->size();
        const QImage image = view.renderImage(size);
        const TimeMapping mapping = view.mappingFor(size);
        const QRect rect = view.trackRect(view.tracks()[1].get(), size);
        const int y = rect.top() + TraceSliceTrack::rowCenter(1);
        const int x = int(std::ceil(mapping.x(50000)));
        QVERIFY(sameColor(image.pixelColor(x + 1, y), traceNameColor("zero"), 40));
        const auto hit = view.itemAt(QPoint(x + 2, y));
        QVERIFY(hit);
        QCOMPARE(hit->item.start, 50000.0);
        QCOMPARE(hit->item.end, 50000.0);
        // Sub-ns: itemOf keeps the picoseconds.
        trace::SliceItem ps;
        ps.start = 7;
        ps.startPs = 250;
        ps.dur = 0;
        ps.durPs = 400;
        const TimelineItem item = TraceSliceTrack::itemOf(ps);
        QCOMPARE(item.start, 7.25);
        QCOMPARE(item.end, 7.65);
        const auto* track = dynamic_cast<const TraceSliceTrack*>(view.tracks()[1].get());
        QVERIFY(track->details(item).contains(qMakePair(QString("Duration"), QString("400 ps"))));
    }

    void flowArrowsPointTheirWay() {
        const TimeMapping mapping{{0, 1000}, 200, 1000};  // 1 px per ns from x = 200
        const QRect a(200, 100, 1000, 42), b(200, 200, 1000, 42);
        trace::FlowRow f;
        f.fromTs = 100;
        f.fromDepth = 0;
        f.toTs = 500;
        f.toDepth = 0;
        // Forward between tracks: the head points right, its tip at the target's start.
        auto arrow = TraceFlowOverlay::arrowFor(f, a, b, mapping, 0);
        QVERIFY(arrow);
        QCOMPARE(arrow->tip, QPointF(700, 200 + TraceSliceTrack::rowCenter(0)));
        for (const QPointF& p : arrow->head) QVERIFY(p.x() <= arrow->tip.x() + 1e-9);
        // Backward: the head points left (and down onto the target row's top edge).
        f.fromTs = 500;
        f.toTs = 100;
        arrow = TraceFlowOverlay::arrowFor(f, a, b, mapping, 0);
        QVERIFY(arrow);
        QCOMPARE(arrow->tip.x(), 300.0);
        QCOMPARE(arrow->tip.y(), 200.0 + TraceSliceTrack::kPadding + 1);
        for (const QPointF& p : arrow->head) QVERIFY(p.x() >= arrow->tip.x() - 1e-9);
        // Along one row: an arc to the target's top edge, off the labels.
        f.fromTs = 100;
        f.toTs = 500;
        arrow = TraceFlowOverlay::arrowFor(f, a, a, mapping, 0);
        QCOMPARE(arrow->tip, QPointF(700, 100 + TraceSliceTrack::kPadding + 1));
        QVERIFY(arrow->path.boundingRect().top() < 100 + TraceSliceTrack::kPadding);
        // Back to back on one row: nothing to draw.
        f.toTs = 100;
        QVERIFY(!TraceFlowOverlay::arrowFor(f, a, a, mapping, 0));
        // Same instant, one row down: straight down to the target row's top edge.
        f.toDepth = 1;
        arrow = TraceFlowOverlay::arrowFor(f, a, a, mapping, 0);
        QCOMPARE(arrow->tip,
                 QPointF(300, 100 + TraceSliceTrack::kPadding + TraceSliceTrack::kRowHeight + 1));
        for (const QPointF& p : arrow->head) QVERIFY(p.y() <= arrow->tip.y() + 1e-9);
    }

    void flowsFollowTheSelectedSlice() {
        // Two launch → kernel flows: launchA (0-10 µs, main) → kernelA (50-60 µs, io) and
        // launchB (100-110 µs) → kernelB (150-160 µs). By default only the selected slice's
        // arrows are drawn; All draws both, None neither.
        auto flow = [](const char* ph, int id, int tid, int ts) {
            QJsonObject e{{"ph", ph}, {"id", id},      {"pid", 1},      {"tid", tid},
                          {"ts", ts}, {"cat", "ac2g"}, {"name", "ac2g"}};
            if (QString(ph) == "f") e.insert("bp", "e");
            return e;
        };
        QJsonArray events{slice("launchA", 1, 0, 10),   slice("kernelA", 2, 50, 10),
                          slice("launchB", 1, 100, 10), slice("kernelB", 2, 150, 10),
                          flow("s", 1, 1, 5),           flow("f", 1, 2, 50),
                          flow("s", 2, 1, 105),         flow("f", 2, 2, 150)};
        const int64_t id = importFile(
            write("flows.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, std::make_shared<TraceSource>(wsPath_, id));
        binding.show(traceTracksInOrder(binding.source()->store()));
        QCOMPARE(binding.source()->waitForFlows()->size(), size_t(2));
        QCOMPARE(binding.flowDisplay(), FlowDisplay::Selected);
        view.setWindow({0, 200000});
        view.resize(1000, 300);
        const QSize size = view.viewport()->size();
        const TimeMapping mapping = view.mappingFor(size);
        const QImage none = [&] {
            binding.setFlowDisplay(FlowDisplay::None);
            return view.renderImage(size);
        }();
        // Pixels that differ from the arrow-less image between x(from) and x(to) µs.
        auto changed = [&](const QImage& image, double from, double to) {
            int count = 0;
            for (int x = int(mapping.x(from * 1000)) + 2; x < int(mapping.x(to * 1000)) - 2; ++x)
                for (int y = 0; y < size.height(); ++y)
                    if (image.pixel(x, y) != none.pixel(x, y)) ++count;
            return count;
        };
        binding.setFlowDisplay(FlowDisplay::Selected);
        const QImage nothingSelected = view.renderImage(size);
        QCOMPARE(changed(nothingSelected, 10, 50), 0);
        QCOMPARE(changed(nothingSelected, 110, 150), 0);

        const QRect main = view.trackRect(view.tracks()[1].get(), size);
        const auto launchA =
            view.itemAt(QPoint(int(mapping.x(2000)), main.top() + TraceSliceTrack::rowCenter(0)));
        QVERIFY(launchA);
        QCOMPARE(launchA->item.start, 0.0);
        view.select(launchA->track, launchA->item);
        const QImage selectedA = view.renderImage(size);
        QVERIFY(changed(selectedA, 10, 50) > 20);  // launchA's arrow
        QCOMPARE(changed(selectedA, 110, 150), 0);

        binding.setFlowDisplay(FlowDisplay::All);
        const QImage all = view.renderImage(size);
        QVERIFY(changed(all, 10, 50) > 20);
        QVERIFY(changed(all, 110, 150) > 20);

        // The span test itself: an end at the slice (its depth), nested in it, or outside.
        using Tie = TraceFlowOverlay::FlowTie;
        const TraceFlowOverlay::SliceSpan span{7, 100, 200, 1};
        trace::FlowRow f;
        f.fromTrack = 7;
        f.fromTs = 150;
        f.fromDepth = 2;
        f.toTrack = 8;
        QCOMPARE(TraceFlowOverlay::tie(f, span), Tie::Nested);
        f.fromDepth = 0;  // the parent's flow, not the selected slice's
        QCOMPARE(TraceFlowOverlay::tie(f, span), Tie::None);
        f.toTrack = 7;
        f.toTs = 200;
        f.toDepth = 1;
        QCOMPARE(TraceFlowOverlay::tie(f, span), Tie::Own);
        f.toTs = 201;
        QCOMPARE(TraceFlowOverlay::tie(f, span), Tie::None);
    }

    void stepSelectionDrawsNoFlowsOfItsLaunches() {
        // Issue 32 #13: a ProfilerStep holding 12 launches drew every launch → kernel arrow when
        // selected. Now: a selected slice draws its own flows; one without any, the flows of the
        // slices nested in it only while they are few (an aten op and its launch).
        QJsonArray events{slice("ProfilerStep#1", 1, 0, 1300)};
        for (int i = 0; i < 12; ++i) {
            events.append(slice("aten::op", 1, 100 * i + 10, 50));
            events.append(slice("cudaLaunchKernel", 1, 100 * i + 20, 20));
            events.append(slice("kernel", 2, 100 * i + 60, 30));
            events.append(QJsonObject{{"ph", "s"},
                                      {"id", i},
                                      {"pid", 1},
                                      {"tid", 1},
                                      {"ts", 100 * i + 25},
                                      {"cat", "ac2g"},
                                      {"name", "ac2g"}});
            events.append(QJsonObject{{"ph", "f"},
                                      {"id", i},
                                      {"pid", 1},
                                      {"tid", 2},
                                      {"ts", 100 * i + 60},
                                      {"cat", "ac2g"},
                                      {"name", "ac2g"},
                                      {"bp", "e"}});
        }
        const int64_t id = importFile(
            write("step_flows.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, std::make_shared<TraceSource>(wsPath_, id));
        binding.show(traceTracksInOrder(binding.source()->store()));
        QCOMPARE(binding.source()->waitForFlows()->size(), size_t(12));
        view.setWindow({0, 1400000});
        view.resize(1400, 300);
        const QSize size = view.viewport()->size();
        const TimeMapping mapping = view.mappingFor(size);
        // The selection drawn with and without its arrows: pixels that differ between the
        // launch's end and the kernel's start of launch i.
        QImage none, image;
        auto render = [&] {
            binding.setFlowDisplay(FlowDisplay::None);
            none = view.renderImage(size);
            binding.setFlowDisplay(FlowDisplay::Selected);
            image = view.renderImage(size);
        };
        auto arrowPixels = [&](int i) {
            int count = 0;
            for (int x = int(mapping.x((100 * i + 41) * 1000.0)) + 1;
                 x < int(mapping.x((100 * i + 60) * 1000.0)) - 1; ++x)
                for (int y = 0; y < size.height(); ++y)
                    if (image.pixel(x, y) != none.pixel(x, y)) ++count;
            return count;
        };
        // The slice at `us` and `depth` on thread 1, found by probing down the column.
        auto selectAt = [&](double us, int depth) {
            std::optional<TimelineView::Selection> hit;
            for (int y = 0; y < size.height() && !hit; ++y) {
                const auto probe = view.itemAt(QPoint(int(mapping.x(us * 1000)), y));
                if (probe && probe->item.row == depth && probe->track->title() == "Thread 1")
                    hit = probe;
            }
            QVERIFY2(hit, qPrintable(QString("nothing at %1 us, depth %2").arg(us).arg(depth)));
            view.select(hit->track, hit->item);
        };
        render();        // lays the tracks out
        selectAt(5, 0);  // the step: 12 nested flows, none of its own
        render();
        for (int i = 0; i < 12; ++i) QCOMPARE(arrowPixels(i), 0);
        selectAt(312, 1);  // aten::op #3: no flow of its own, one nested (its launch's)
        render();
        QVERIFY(arrowPixels(3) > 10);
        QCOMPARE(arrowPixels(2), 0);
        QCOMPARE(arrowPixels(4), 0);
        selectAt(525, 2);  // cudaLaunchKernel #5: its own arrow only
        render();
        QVERIFY(arrowPixels(5) > 10);
        QCOMPARE(arrowPixels(3), 0);
    }

    void renderSaysWhatIsCut() {
        // 60 threads do not fit in the default 900 px: the render says how many are below and
        // how tall an image would show them; with that size nothing is cut.
        QJsonArray events;
        for (int t = 0; t < 60; ++t) events.append(slice("work", t + 1, t, 10));
        const int64_t id = importFile(
            write("many.json",
                  QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString()));
        auto source = std::make_shared<TraceSource>(wsPath_, id);
        RenderOptions options;  // 1600x900, fitted
        QImage image = renderTraceTimelineImage(source, options);
        QCOMPARE(image.size(), QSize(1600, 900));
        const QColor hint(255, 236, 200);
        QVERIFY(sameColor(image.pixelColor(1500, 900 - TimelineView::kLegendHeight / 2), hint));
        // Header 22 + 60 tracks of 24 px, plus minimap, axis, legend and margin.
        const int needed = TimelineView::kMinimapHeight + TimelineView::kAxisHeight +
                           TraceProcessHeaderTrack::kHeight + 60 * 24 +
                           TimelineView::kLegendHeight + 12;
        options.size = QSize(1600, needed);
        options.sizeGiven = true;
        image = renderTraceTimelineImage(source, options);
        QVERIFY(!sameColor(image.pixelColor(1500, needed - TimelineView::kLegendHeight / 2), hint));
    }

    void xprofHeadersAndDeviceDetails() {
        const QString file =
            QStringLiteral(STALLSCOPE_SHARED_DIR) + "/samples/xprof/tpu_inference_2.xplane.pb";
        if (!QFile::exists(file)) QSKIP("samples not available");
        const int64_t id = importFile(file.toStdString());
        auto source = std::make_shared<TraceSource>(wsPath_, id);
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, source);
        binding.show(traceTracksInOrder(source->store()));
        // Each plane heads its lines, so the four "XLA Ops" tracks are told apart.
        QStringList headers;
        for (const auto& t : view.tracks())
            if (t->isHeader()) headers << t->title();
        QCOMPARE(headers,
                 (QStringList{"/device:TPU:0  ·  TPU v6 Lite", "/device:TPU:1  ·  TPU v6 Lite",
                              "/device:TPU:2  ·  TPU v6 Lite", "/device:TPU:3  ·  TPU v6 Lite",
                              "/host:CPU"}));
        QCOMPARE(view.tracks()[1]->title(), QString("XLA Modules"));
        const DetailFields details = view.tracks()[0]->details(TimelineItem{});
        QVERIFY(details.contains(qMakePair(QString("peak_teraflops_per_second"), QString("918"))));
        QVERIFY(details.contains(qMakePair(QString("device_type_string"), QString("TPU v6 Lite"))));
        // Lines with events: XLA Modules, XLA Ops, Async XLA Ops (three lanes), XLA TraceMe.
        QVERIFY(details.contains(qMakePair(QString("Tracks"), QString("6"))));
        QVERIFY(details.contains(qMakePair(QString("Plane id"), QString("2"))));
    }

    void compareViewLinkedZoomTableAndCdf() {
        QJsonArray shorter{slice("outer", 1, 0, 50), slice("inner", 1, 10, 10)};
        const int64_t b = importFile(write(
            "b.json", QJsonDocument(QJsonObject{{"traceEvents", shorter}}).toJson().toStdString()));
        CompareView view;
        view.setAsynchronous(false);
        view.setData(loadTraceComparison(wsPath_, tiny_, b));
        // Linked time scale: zooming A moves B to the same window, and back.
        view.timelineA()->setWindow({10000, 60000});
        QCOMPARE(view.timelineB()->window(), (TimeRange{10000, 60000}));
        view.timelineB()->zoomBy(2.0, 35000);
        QCOMPARE(view.timelineA()->window(), view.timelineB()->window());
        QVERIFY(view.summary().startsWith("B vs A: \u221275.0% total time"));  // 200 → 50 µs
        view.setOpFilter("inn");
        QCOMPARE(view.deltaTable()->model()->rowCount(), 1);
        // inner: A 2 slices (30+10 µs), B 1 slice of 10 µs: −75%.
        QCOMPARE(view.deltaCsv(), QString("op,count_a,count_b,total_a_ns,total_b_ns,mean_a_ns,"
                                          "mean_b_ns,p50_a_ns,p50_b_ns,p95_a_ns,p95_b_ns,"
                                          "delta_total_ns,delta_pct\n"
                                          "inner,2,1,40000,10000,20000,10000,10000,10000,30000,"
                                          "10000,-30000,-75\n"));
    }

    // Before/after of transfers: the same program twice, its host->HBM copy waited 900 µs in A
    // and 200 µs in B (each run: copy-start at 0, fusion.1 0.01-0.1 ms, copy-done blocking from
    // 0.1 ms, fusion.2 reading the copy).
    void compareViewTransfersBeforeAfter() {
        auto xspace = [&](const QString& name, int64_t waitUs) {
            fixtures::XPlaneWriter plane("/device:TPU:0");
            for (int run = 0; run < 2; ++run) {
                const int64_t t0 = int64_t(run) * 2000000;  // ns
                const int64_t copyEnd = t0 + 100000 + waitUs * 1000;
                plane.event("XLA Modules", "jit_m(1)", "jit_m(1)", t0,
                            (copyEnd + 50000 - t0) * 1000);
                plane.event("XLA Ops", "copy-start",
                            "%copy-start = (f32[262144]{0}, f32[262144]{0:S(5)}, u32[]{:S(2)}) "
                            "copy-start(f32[262144]{0:S(5)} %param)",
                            t0, 1000000);
                plane.event("XLA Ops", "fusion.1",
                            "%fusion.1 = f32[64]{0} fusion(f32[64]{0} %param.2), kind=kLoop",
                            t0 + 10000, 90000000);
                plane.event("XLA Ops", "copy-done",
                            "%copy-done = f32[262144]{0} copy-done((f32[262144]{0}, "
                            "f32[262144]{0:S(5)}, u32[]{:S(2)}) %copy-start)",
                            t0 + 100000, waitUs * 1000000);
                plane.event("XLA Ops", "fusion.2",
                            "%fusion.2 = f32[64]{0} fusion(f32[262144]{0} %copy-done), "
                            "kind=kLoop",
                            copyEnd, 50000000);
            }
            const std::string path = dir_.filePath(name).toStdString();
            std::ofstream(path, std::ios::binary) << plane.bytes();
            return importFile(path);
        };
        const int64_t a = xspace("before.xplane.pb", 900), b = xspace("after.xplane.pb", 200);
        CompareView view;
        view.setAsynchronous(false);
        view.setData(loadTraceComparison(wsPath_, a, b));
        TransferComparePane* pane = view.transferPane();
        QVERIFY(pane->summary()->text().contains("2 runs and 2 transfers matched"));
        // It fits the central area of a 1280x800 window with its docks (about 640x650): before,
        // the one-line summary, the stacked timelines and the step charts asked for 744x713.
        QVERIFY2(view.minimumSizeHint().width() <= 600 && view.minimumSizeHint().height() <= 600,
                 qPrintable(QString("%1x%2")
                                .arg(view.minimumSizeHint().width())
                                .arg(view.minimumSizeHint().height())));
        QTableWidget* modules = pane->moduleTable();
        QCOMPARE(modules->rowCount(), 2);
        // Both runs' stall fell by 700 µs; the first (the most changed, first) is shown.
        for (int r = 0; r < 2; ++r)
            QCOMPARE(modules->item(r, 7)->data(tablekit::kSortRole).toDouble(), -700000.0);
        QCOMPARE(pane->transferTable()->rowCount(), 1);
        QCOMPARE(pane->transferTable()->item(0, 0)->text(), QString("copy-start"));
        QCOMPARE(pane->transferTable()->item(0, 1)->data(tablekit::kSortRole).toDouble(),
                 double(262144 * 4));
        QCOMPARE(pane->transferTable()->item(0, 5)->data(tablekit::kSortRole).toDouble(), 900000.0);
        QCOMPARE(pane->transferTable()->item(0, 6)->data(tablekit::kSortRole).toDouble(), 200000.0);
        // Drawn: A's stall block 4.5 times B's on one scale, in the stall colour; B's run ends
        // left of A's.
        QImage image(900, 200, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        const TransferLifetimeChart::Layout layout =
            pane->chart()->paintChart(painter, QRectF(image.rect()));
        painter.end();
        QCOMPARE(layout.stallA.size(), size_t(1));
        QVERIFY(std::abs(layout.stallA[0].width() / layout.stallB[0].width() - 4.5) < 0.05);
        QVERIFY(layout.xEndB < layout.xEndA);
        QVERIFY(
            sameColor(image.pixelColor(layout.stallA[0].center().toPoint()), QColor(215, 60, 50)));
        QVERIFY(
            sameColor(image.pixelColor(layout.stallB[0].center().toPoint()), QColor(215, 60, 50)));
        QVERIFY(layout.stallB[0].top() > layout.stallA[0].top());  // B's lane under A's
        QVERIFY(pane->transfersCsv().contains(
            "jit_m(1),0,copy-start,0,1048576,1048576,0,0,900000,200000,-700000,0,0\n"));
        if (qEnvironmentVariableIsSet("STALLSCOPE_KEEP_RENDERS")) {
            image.save(qEnvironmentVariable("STALLSCOPE_KEEP_RENDERS") + "/transfer-compare.png");
            // The whole comparison at a desktop size, the Transfers tab shown.
            auto* pages = pane->parentWidget()->parentWidget();
            if (auto* tabs = qobject_cast<QTabWidget*>(pages)) tabs->setCurrentWidget(pane);
            view.resize(1400, 900);
            view.grab().save(qEnvironmentVariable("STALLSCOPE_KEEP_RENDERS") +
                             "/transfer-compare-view.png");
        }
    }
};

QTEST_MAIN(TestTraceViews)
#include "test_trace_views.moc"
