// The view kit every view is built from: background jobs (delivery, superseding, errors, owner
// lifetime), formatters, export, table cells, and the shared time navigation.

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QPainter>
#include <QSet>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>
#include <stdexcept>

#include "views/common/async_job.h"
#include "views/common/export.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/time_navigation.h"
#include "views/common/timeline_view.h"
#include "views/trace/args_html.h"

using namespace stallscope;

class TestViewKit : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

    // Issue 32 #2: zoomed in far from 0, absolute labels repeat ("24.75 ms" thrice); they
    // become offsets from the first tick instead, and stay absolute when they differ.
    void axisLabelsNeverRepeat() {
        TimelineView view;
        TimeFormat ns;
        ns.primary = [](double t) { return format::nanoseconds(t); };
        view.setTimeFormat(ns);
        const TimeMapping close{{24.75e6, 24.75e6 + 5000}, 0, 600};  // a tick every 1 µs
        const auto ticks = view.axisTicks(close);
        QVERIFY(ticks.size() >= 4);
        QCOMPARE(ticks[0].second, QString("24.75 ms"));
        QCOMPARE(ticks[1].second, QStringLiteral("+1.00 µs"));
        QSet<QString> labels;
        for (const auto& [t, label] : ticks) labels.insert(label);
        QCOMPARE(labels.size(), qsizetype(ticks.size()));
        const auto wide = view.axisTicks(TimeMapping{{0, 1e9}, 0, 1100});
        QVERIFY(wide.size() >= 5);
        for (const auto& [t, label] : wide) QVERIFY2(!label.startsWith('+'), qPrintable(label));
        QCOMPARE(wide[1].second, QString("100.0 ms"));
    }

    // Issue 32 #13: arguments as a table of keys, arrays on one line, numbers as written.
    void argumentsReadAsATable() {
        QJsonArray ids;
        for (int i = 0; i < 20; ++i) ids.append(i);
        const QString html = argumentsHtml(QJsonObject{{"bytes", 1154750},
                                                       {"dims", QJsonArray{64, 3, 224, 224}},
                                                       {"ids", ids},
                                                       {"n", QJsonObject{{"k", 2.5}}},
                                                       {"name", "a<b"}});
        QVERIFY2(html.contains("<td><b>bytes</b></td><td>1154750</td>"), qPrintable(html));
        QVERIFY(html.contains("<td><b>dims</b></td><td>[64, 3, 224, 224]</td>"));
        QVERIFY(html.contains("[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, … 4 more]"));
        QVERIFY(html.contains("<td><b>n.k</b></td><td>2.5</td>"));
        QVERIFY(html.contains("<td>a&lt;b</td>"));
        QVERIFY(!html.contains("e+06"));
    }

    void jobDeliversOnTheEventLoopNeverInsideStart() {
        QObject owner;
        async::JobSlot slot(&owner);
        int delivered = 0;
        slot.start([] { return 42; }, [&](int value) { delivered = value; });
        QThread::msleep(50);  // the work has surely finished: still not delivered inside start()
        QCOMPARE(delivered, 0);
        QTRY_COMPARE(delivered, 42);
        QTRY_VERIFY(!slot.isBusy());
    }

    void newerJobSupersedesOlder() {
        QObject owner;
        async::JobSlot slot(&owner);
        QList<int> delivered;
        const uint64_t first = slot.start(
            [] {
                QThread::msleep(150);
                return 1;
            },
            [&](int v) { delivered << v; });
        const uint64_t second = slot.start([] { return 2; }, [&](int v) { delivered << v; });
        QVERIFY(second > first);
        QCOMPARE(slot.currentJob(), second);
        QTRY_VERIFY(!slot.isBusy());
        QCOMPARE(delivered, QList<int>{2});  // the slow first result never shows over the second
    }

    void errorsReachTheHandlerOrJobErrors() {
        QObject owner;
        QString handled;
        async::JobSlot withHandler(&owner, [&](const QString& e) { handled = e; });
        withHandler.start([]() -> int { throw std::runtime_error("disk on fire"); },
                          [](int) { QFAIL("no result expected"); });
        QTRY_COMPARE(handled, QString("disk on fire"));

        QSignalSpy reported(&async::JobErrors::instance(), &async::JobErrors::failed);
        async::JobSlot withoutHandler(&owner);
        withoutHandler.start([] { throw 7; }, [] {});
        QTRY_COMPARE(reported.count(), 1);
        QVERIFY(reported.at(0).at(0).toString().contains("unknown error"));
    }

    void ownerGoneDropsResultWithoutWaiting() {
        std::atomic<bool> finished = false;
        bool delivered = false;
        auto* owner = new QObject;
        {
            async::JobSlot slot(owner);
            slot.start(
                [&finished] {
                    QThread::msleep(300);
                    finished = true;
                },
                [&delivered] { delivered = true; });
            QElapsedTimer timer;
            timer.start();
            delete owner;                    // the owner goes while the job runs
            QVERIFY(timer.elapsed() < 150);  // nothing waited for the worker
        }
        QTRY_VERIFY(finished.load());
        QTest::qWait(50);
        QVERIFY(!delivered);
    }

    void followSharesOneFutureAmongSlots() {
        // Two views follow one shared load (the replay document cache): both get its result,
        // a superseded follower gets nothing, and a failed load reaches the handler.
        QObject owner;
        async::JobSlot tab(&owner), dock(&owner), late(&owner);
        QFuture<int> shared = QtConcurrent::run([] {
            QThread::msleep(80);
            return 7;
        });
        int tabValue = 0, dockValue = 0, lateValue = 0;
        tab.follow(shared, [&](int v) { tabValue = v; });
        dock.follow(shared, [&](int v) { dockValue = v; });
        late.follow(shared, [&](int v) { lateValue = v; });
        late.supersede();
        QTRY_COMPARE(tabValue, 7);
        QTRY_COMPARE(dockValue, 7);
        QTRY_VERIFY(!tab.isBusy() && !dock.isBusy());
        QTest::qWait(20);
        QCOMPARE(lateValue, 0);

        // Already finished: still delivered on the event loop, never inside follow().
        int again = 0;
        tab.follow(shared, [&](int v) { again = v; });
        QCOMPARE(again, 0);
        QTRY_COMPARE(again, 7);

        QString error;
        async::JobSlot failing(&owner, [&](const QString& e) { error = e; });
        failing.follow(
            QtConcurrent::run([]() -> int { throw std::runtime_error("no such profile"); }),
            [](int) { QFAIL("no result expected"); });
        QTRY_COMPARE(error, QString("no such profile"));
    }

    void formatters() {
        QCOMPARE(format::tickStep(10, 5), 2.0);
        QCOMPARE(format::stepAtLeast(0.3), 0.5);
        QCOMPARE(format::stepAtLeast(0), 1.0);
        QCOMPARE(format::nearestWholeStep(3.4), 2.0);
        QCOMPARE(format::nearestWholeStep(0.2), 1.0);  // whole units at least
        QCOMPARE(format::count(56344), QString("56,344"));
        QCOMPARE(format::signedCount(-14688), QString("\u221214,688"));
        QCOMPARE(format::signedCount(0.2), QString("0"));
        QCOMPARE(format::shortNumber(12345), QString("12.3k"));
        QCOMPARE(format::shortSigned(-1500), QString("\u22121.5k"));
        QCOMPARE(format::cycles(56344), QString("56.34k"));
        QCOMPARE(format::cycles(9999), QString("9999"));
        QCOMPARE(format::nanoseconds(1.5e6), QString("1.50 ms"));
        QCOMPARE(format::percentOf(1, 8), QString("12.5%"));
        QCOMPARE(format::dataSizeWithBytes(512), QString("512 bytes"));
        QCOMPARE(format::dataSizeWithBytes(1572864), QString("1.5 MiB (1,572,864 bytes)"));
    }

    void exportWritesAndNamesTheFileOnFailure() {
        QCOMPARE(exporting::csvField("plain"), QString("plain"));
        QCOMPARE(exporting::csvField("a,b"), QString("\"a,b\""));
        QCOMPARE(exporting::csvField("say \"hi\""), QString("\"say \"\"hi\"\"\""));
        QCOMPARE(exporting::csvRow({"x", "1,5", ""}), QString("x,\"1,5\","));
        QTemporaryDir dir;
        const QString path = dir.path() + "/out.csv";
        QVERIFY(exporting::writeTextFile(path, "a,b\n1,2\n"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), QByteArray("a,b\n1,2\n"));
        QString error;
        const QString missing = dir.path() + "/no/such/dir/out.csv";
        QVERIFY(!exporting::writeTextFile(missing, "x", &error));
        QVERIFY2(error.contains(missing), qPrintable(error));

        const QString svg = dir.path() + "/chart.svg";
        QVERIFY(exporting::writeSvgFile(
            svg, QSize(200, 100),
            [](QPainter& p, const QRectF& r) { p.fillRect(r.adjusted(10, 10, -10, -10), Qt::red); },
            "Kit chart"));
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QByteArray text = svgFile.readAll();
        QVERIFY(text.contains("<title>Kit chart</title>"));
        QVERIFY(text.contains("#ff0000"));
    }

    void tableCellsSortByValue() {
        QStandardItemModel model;
        model.appendRow({tablekit::standardCell("12", 12.0)});
        model.appendRow({tablekit::standardCell("\u22125", -5.0)});
        model.appendRow({tablekit::standardCell("100", 100.0)});
        auto* proxy = tablekit::sortingProxy(&model, &model);
        proxy->sort(0, Qt::AscendingOrder);
        // As text "100" < "12" < "−5"; as numbers −5 < 12 < 100.
        QCOMPARE(proxy->index(0, 0).data().toString(), QString("\u22125"));
        QCOMPARE(proxy->index(1, 0).data().toString(), QString("12"));
        QCOMPARE(proxy->index(2, 0).data().toString(), QString("100"));
        QCOMPARE(model.item(0)->textAlignment(), Qt::AlignRight | Qt::AlignVCenter);
        QVERIFY(!model.item(0)->isEditable());
    }

    void navigationLinksWindowsAndCursorsThroughOffsets() {
        TimelineView a, b, hidden;
        for (TimelineView* v : {&a, &b, &hidden}) {
            v->setExtent(TimeRange{0, 10000});
            v->resize(800, 300);
        }
        TimeNavigation navigation;
        navigation.link(&a);
        navigation.link(&b, 100);  // b's time = shared time + 100
        bool hiddenActive = false;
        navigation.link(&hidden, 0, [&] { return hiddenActive; });
        a.setWindow({1000, 2000});
        QCOMPARE(b.window(), (TimeRange{1100, 2100}));
        QCOMPARE(hidden.window(), (TimeRange{0, 10000}));  // inactive: did not follow
        b.setWindow({600, 1600});
        QCOMPARE(a.window(), (TimeRange{500, 1500}));
        b.setCursorTime(700);
        emit b.cursorMoved(700);
        QCOMPARE(a.cursorTime(), std::optional<double>(600));
        {
            const auto hold = navigation.hold();
            a.setWindow({3000, 4000});
            QCOMPARE(b.window(), (TimeRange{600, 1600}));  // held: b stays
        }
        hiddenActive = true;
        a.setWindow({2000, 3000});
        QCOMPARE(hidden.window(), (TimeRange{2000, 3000}));
    }

    void navigationKeysAndWheel() {
        const TimeRange w{1000, 2000}, all{0, 10000};
        QCOMPARE(*TimeNavigation::windowForKey(Qt::Key_A, w, 1500, all), (TimeRange{850, 1850}));
        QCOMPARE(*TimeNavigation::windowForKey(Qt::Key_D, w, 1500, all), (TimeRange{1150, 2150}));
        const TimeRange in = *TimeNavigation::windowForKey(Qt::Key_W, w, 1500, all);
        QCOMPARE(in.length(), 1000 / 1.5);
        QCOMPARE((in.start + in.end) / 2, 1500.0);  // zoomed around the anchor
        QCOMPARE(*TimeNavigation::windowForKey(Qt::Key_Home, w, 1500, all), all);
        QVERIFY(!TimeNavigation::windowForKey(Qt::Key_Q, w, 1500, all));
        QCOMPARE(TimeNavigation::wheelZoomFactor(120), 1.25);
        // Zooming keeps the anchor's place: 25 % into the window before and after.
        const TimeRange z = TimeNavigation::zoomed(w, 2, 1250);
        QCOMPARE(z, (TimeRange{1125, 1625}));
    }
};

QTEST_MAIN(TestViewKit)
#include "test_view_kit.moc"
