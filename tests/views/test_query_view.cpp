// The Query tab over the golden fixture (tests/core/query/fixture.json): results arrive in the
// table (drawn: the first cell has text pixels, rows past the end none), a long result pages in
// 1,000 rows at a time, a double-click on a row with ts and dur asks for that time on the
// profile's timeline, writes are refused with the reason shown, and Cancel stops a query that
// would run for ever.

#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/timeline_view.h"
#include "views/query/query_view.h"
#include "views/trace/query_tracks.h"
#include "views/trace/trace_view.h"

using namespace stallscope;

namespace {

// Pixels in `rect` that differ from its most common colour (the background).
int inkIn(const QImage& image, const QRect& rect) {
    std::map<QRgb, int> counts;
    for (int y = rect.top(); y <= rect.bottom(); ++y)
        for (int x = rect.left(); x <= rect.right(); ++x) ++counts[image.pixel(x, y)];
    int most = 0, total = 0;
    for (const auto& [colour, n] : counts) {
        most = std::max(most, n);
        total += n;
    }
    return total - most;
}

}  // namespace

class TestQueryView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString store_;
    qint64 profile_ = 0;

  private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("stallscope-tests");
        QVERIFY(dir_.isValid());
        store_ = dir_.filePath("ws.sqlite");
        auto ws = Workspace::open(store_.toStdString());
        Progress progress;
        profile_ =
            importFiles(
                *ws,
                ImportRequest{{STALLSCOPE_SOURCE_DIR "/tests/core/query/fixture.json"}, {}, {}},
                progress)
                .at(0)
                .id;
    }

    void resultsDrawnAndRowsShowTheirTime() {
        QueryView view(store_);
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy finished(&view, &QueryView::finished);
        view.setSql("SELECT profile_id, name, ts, dur FROM slice ORDER BY ts, depth");
        view.run();
        QVERIFY(finished.wait(20000));
        QCOMPARE(view.model()->rowCount(), 8);
        QCOMPARE(view.model()->headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QString("name"));
        QCOMPARE(view.model()->data(view.model()->index(1, 1), Qt::DisplayRole).toString(),
                 QString("outer"));
        QVERIFY2(view.status()->text().startsWith("8 rows"), qPrintable(view.status()->text()));
        // Drawn: text in the first row's name cell; nothing below the last row.
        QTableView* table = view.table();
        const QImage image = table->viewport()->grab().toImage();
        const QRect first = table->visualRect(view.model()->index(0, 1));
        QVERIFY(inkIn(image, first.adjusted(2, 2, -2, -2)) > 20);
        const QRect last = table->visualRect(view.model()->index(7, 1));
        const QRect below(last.left(), last.bottom() + 30, last.width(), 20);
        if (below.bottom() < image.height()) QCOMPARE(inkIn(image, below), 0);
        // A double-click on outer (ts 10 µs, dur 100 µs) asks for that time.
        QSignalSpy time(&view, &QueryView::timeRequested);
        const QPoint outer = first.center() + QPoint(0, first.height());
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, outer);
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, outer);
        QCOMPARE(time.size(), 1);
        QCOMPARE(time.at(0).at(0).toLongLong(), profile_);
        QCOMPARE(time.at(0).at(1).toLongLong(), 10000);
        QCOMPARE(time.at(0).at(2).toLongLong(), 110000);
    }

    // "Show as track": the rows with ts, dur and profile_id go to their profile, labelled by
    // name; pinned, they draw as boxes of their label's colour on the trace's timeline.
    void resultPinnedAsTrack() {
        QueryView view(store_);
        QSignalSpy finished(&view, &QueryView::finished);
        view.setSql("SELECT profile_id, name, ts, dur FROM slice WHERE name = 'inner'");
        view.run();
        QVERIFY(finished.wait(20000));
        QPushButton* show = nullptr;
        for (QPushButton* b : view.findChildren<QPushButton*>())
            if (b->text() == "Show as track") show = b;
        QVERIFY(show && show->isEnabled());
        QSignalSpy requested(&view, &QueryView::trackRequested);
        show->click();
        QCOMPARE(requested.size(), 1);
        QCOMPARE(requested.at(0).at(0).toLongLong(), profile_);
        const auto rows = view.trackRows(nullptr);
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(rows[0].items.size(), size_t(2));
        QCOMPARE(std::get<0>(rows[0].items[1]), qint64(50000));
        QCOMPARE(std::get<2>(rows[0].items[1]), QString("inner"));

        TraceView trace;
        trace.resize(1280, 800);
        trace.open(store_.toStdString(), profile_);
        QTRY_VERIFY_WITH_TIMEOUT(trace.source() != nullptr, 20000);
        std::vector<QueryTrackItem> items;
        for (const auto& [ts, dur, label] : rows[0].items) items.push_back({ts, dur, label});
        trace.panel<QueryTracksPanel>()->pin(QueryTrackData::make("Query: inner", items));
        const QueryResultTrack* pinned = nullptr;
        for (const auto& t : trace.timeline()->tracks())
            if (auto* q = dynamic_cast<const QueryResultTrack*>(t.get())) pinned = q;
        QVERIFY(pinned);
        QCOMPARE(pinned->title(), QString("Query: inner"));
        trace.showRange(0, 150000);
        trace.timeline()->setAsynchronous(false);
        const QSize size = trace.timeline()->viewport()->size();
        const QImage image = trace.timeline()->renderImage(size);
        const TimeMapping mapping = trace.timeline()->mappingFor(size);
        const QRect rect = trace.timeline()->trackRect(pinned, size);
        const double origin = double(trace.source()->origin());
        const int inside = int(mapping.x(21000 - origin)), outside = int(mapping.x(45000 - origin));
        QCOMPARE(image.pixelColor(inside, rect.top() + 4).rgb(),
                 QueryResultTrack::colorOf("inner").rgb());
        QVERIFY(image.pixelColor(outside, rect.top() + 4).rgb() !=
                QueryResultTrack::colorOf("inner").rgb());
    }

    void longResultsPage() {
        QueryView view(store_);
        QSignalSpy finished(&view, &QueryView::finished);
        view.setSql(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
            "2500) SELECT i FROM n");
        view.run();
        QVERIFY(finished.wait(20000));
        QCOMPARE(view.model()->received(), size_t(2500));
        QCOMPARE(view.model()->rowCount(), QueryResultModel::kPage);
        QVERIFY(view.model()->canFetchMore({}));
        view.model()->fetchMore({});
        view.model()->fetchMore({});
        QCOMPARE(view.model()->rowCount(), 2500);
        QVERIFY(view.model()->csv().startsWith("i\n1\n2\n"));
    }

    void writesAreRefusedAndCancelStops() {
        QueryView view(store_);
        QSignalSpy finished(&view, &QueryView::finished);
        view.setSql("DELETE FROM profiles");
        view.run();
        QVERIFY(finished.wait(20000));
        QVERIFY2(view.status()->text().contains("read-only"), qPrintable(view.status()->text()));
        view.setSql(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
            "SELECT count(*) FROM n");
        view.run();
        QVERIFY(view.running());
        QTest::qWait(200);
        view.cancel();
        QVERIFY(finished.wait(20000));
        QVERIFY(!view.running());
        QVERIFY2(view.status()->text().contains("ancel"), qPrintable(view.status()->text()));
    }
};

QTEST_MAIN(TestQueryView)
#include "test_query_view.moc"
