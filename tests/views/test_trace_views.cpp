// Trace views: slices drawn at known pixels for a tiny hand-written Chrome trace, hit-testing,
// the op table, find next/previous, the rendered PNG, and the compare view (linked zoom, delta
// table, CDF chart).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>
#include <fstream>

#include "compare_view.h"
#include "import_service.h"
#include "render.h"
#include "timeline_view.h"
#include "trace_tracks.h"
#include "trace_view.h"
#include "workspace.h"

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

  private slots:
    void initTestCase() {
        wsPath_ = dir_.filePath("ws.sqlite").toStdString();
        ws_ = Workspace::open(wsPath_);
        tiny_ = importFile(write("tiny.json", tinyTrace()));
    }

    void slicesAtKnownPixels() {
        TimelineView view;
        view.setAsynchronous(false);
        TraceTimelineBinding binding(view, tinySource());
        binding.show(traceTracksInOrder(binding.source()->store()));
        QCOMPARE(view.tracks().size(), size_t(2));  // main and io; the process has no data
        QCOMPARE(view.tracks()[0]->title(), QString("main"));
        QCOMPARE(view.tracks()[0]->height(),
                 2 * TraceSliceTrack::kPadding + 2 * TraceSliceTrack::kRowHeight);  // depth 0..1
        view.setWindow({0, 200000});
        view.resize(1150, 400);
        const QSize size = view.viewport()->size();  // itemAt() works in viewport coordinates
        const QImage image = view.renderImage(size);
        const TimeMapping mapping = view.mappingFor(size);
        QCOMPARE(mapping.left, double(TimelineView::kGutterWidth));
        const QRect main = view.trackRect(view.tracks()[0].get(), size);
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
        const QRect io = view.trackRect(view.tracks()[1].get(), size);
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

    void opTableAndFind() {
        TraceView view;
        view.timeline()->setAsynchronous(false);
        auto source = tinySource();
        auto ops = source->query([](const trace::TraceStore& s) { return s.opStats(); });
        view.setSource(source, ops);
        view.resize(1200, 800);
        QStandardItemModel* model = view.opModel();
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
        QCOMPARE(model->item(inner, 4)->data(Qt::UserRole + 2).toDouble(), 20000.0);  // mean
        QCOMPARE(model->item(inner, 5)->data(Qt::UserRole + 2).toDouble(), 10000.0);  // p50
        QCOMPARE(model->item(inner, 6)->data(Qt::UserRole + 2).toDouble(), 30000.0);  // p95
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

        // Track tree: proc → main, io; filtering by "io" leaves one track on the timeline.
        QCOMPARE(view.trackTree()->topLevelItemCount(), 1);
        QCOMPARE(view.trackTree()->topLevelItem(0)->childCount(), 2);
        view.setTrackFilter("io");
        QCOMPARE(view.timeline()->tracks().size(), size_t(1));
        QCOMPARE(view.timeline()->tracks()[0]->title(), QString("io"));
        view.setTrackFilter("");
        QCOMPARE(view.timeline()->tracks().size(), size_t(2));
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
        binding.show(traceTracksInOrder(binding.source()->store()));
        probe.setWindow({0, 200000});
        const QRect main = probe.trackRect(probe.tracks()[0].get(), options.size);
        const int y = main.top() + TraceSliceTrack::rowCenter(0);
        const TimeMapping mapping = probe.mappingFor(options.size);
        const int x95 = int(mapping.left + 0.475 * mapping.width);   // 95 µs: inside outer
        const int x195 = int(mapping.left + 0.975 * mapping.width);  // 195 µs: inside late
        QVERIFY(sameColor(png.pixelColor(x95, y), traceNameColor("outer")));
        QVERIFY(sameColor(png.pixelColor(x195, y), traceNameColor("late")));
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
};

QTEST_MAIN(TestTraceViews)
#include "test_trace_views.moc"
