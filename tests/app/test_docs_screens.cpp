// The screenshots in docs/screens: the main window on the demo workspace at 1280x800 and
// 1920x1080 (two offscreen screens), one per view, each in the state a user meets it. Runs only
// with STALLSCOPE_SCREENSHOT_DIR set (a tool for the docs, not a check of behaviour):
//   STALLSCOPE_SCREENSHOT_DIR=docs/screens build/tests/test_docs_screens
// It still fails when a view comes up blank (a central area of one colour).
#include <QAction>
#include <QApplication>
#include <QProcess>
#include <QScreen>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "app/mainwindow.h"
#include "core/workspace.h"
#include "tests/app/two_screens.h"
#include "views/common/timeline_view.h"
#include "views/trace/trace_view.h"

using namespace stallscope;
using stallscope::testing::screenOfSize;

namespace {

// Brings forward the tab named `name` of any tab widget inside `view`.
bool showTab(QWidget* view, const QString& name) {
    for (QTabWidget* tabs : view->findChildren<QTabWidget*>())
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i).remove('&') == name) {
                tabs->setCurrentIndex(i);
                return true;
            }
    return false;
}

}  // namespace

class TestDocsScreens : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString store_;
    QString out_;

    std::optional<ProfileInfo> profileNamed(const std::string& name) {
        auto ws = Workspace::open(store_.toStdString(), Workspace::Mode::ReadOnly);
        for (const ProfileInfo& p : ws->profiles())
            if (p.name == name) return p;
        return std::nullopt;
    }
    void save(MainWindow& window, const QString& name, QSize screen) {
        QTest::qWait(1500);  // views load on workers, charts lay out
        const QImage image = window.grab().toImage();
        // Not blank: the tab area holds more than a handful of colours.
        const QRect area = window.tabs()->geometry();
        QSet<QRgb> colours;
        for (int y = area.top(); y < area.bottom(); y += 3)
            for (int x = area.left(); x < area.right(); x += 3) colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(name));
        QVERIFY(image.save(QStringLiteral("%1/%2-%3x%4.png")
                               .arg(out_, name)
                               .arg(screen.width())
                               .arg(screen.height())));
    }

  private slots:
    void initTestCase() {
        out_ = qEnvironmentVariable("STALLSCOPE_SCREENSHOT_DIR");
        if (out_.isEmpty()) QSKIP("set STALLSCOPE_SCREENSHOT_DIR to write the docs' screenshots");
        QCoreApplication::setOrganizationName("StallscopeTests");
        QCoreApplication::setApplicationName("test_docs_screens");
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir_.path());
        store_ = dir_.filePath("demo.sqlite");
        QProcess demo;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("QT_QPA_PLATFORM", "offscreen");
        demo.setProcessEnvironment(environment);
        demo.start(STALLSCOPE_BINARY, {"--store", store_, "demo"});
        QVERIFY(demo.waitForFinished(180000));
        QCOMPARE(demo.exitCode(), 0);
    }

    void views_data() {
        QTest::addColumn<QSize>("screen");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }

    void views() {
        QFETCH(QSize, screen);
        QSettings().clear();
        MainWindow window(store_);
        QScreen* target = screenOfSize(screen);
        QVERIFY(target);
        window.setScreen(target);
        window.setGeometry(target->availableGeometry());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.profileTree()->topLevelItemCount() > 0, 30000);
        save(window, "welcome", screen);

        // A PyTorch trace: its timeline and overview, steps, critical path, an area's summary.
        auto* trace =
            qobject_cast<TraceView*>(window.openProfile(*profileNamed("train-step-trace")));
        QVERIFY(trace);
        QTRY_VERIFY_WITH_TIMEOUT(trace->source() != nullptr, 30000);
        save(window, "trace", screen);
        for (const char* tab : {"Steps", "Critical path"}) {
            QTRY_VERIFY_WITH_TIMEOUT(showTab(trace, tab), 30000);
            save(window, QString("trace-%1").arg(QString(tab).toLower().replace(' ', '-')), screen);
        }
        TimelineView* timeline = trace->timeline();
        std::vector<const TimelineTrack*> area;
        for (const auto& track : timeline->tracks())
            if (track->title() == "main thread" || track->title() == "dataloader")
                area.push_back(track.get());
        const TimeRange window0 = timeline->window();
        timeline->setArea(
            {window0.start + window0.length() * 0.2, window0.start + window0.length() * 0.45},
            area);
        save(window, "trace-area-summary", screen);

        // XProf before/after: the transfer lanes over the timeline, and the comparison.
        auto* xprof =
            qobject_cast<TraceView*>(window.openProfile(*profileNamed("offload-before.xplane")));
        QVERIFY(xprof);
        QTRY_VERIFY_WITH_TIMEOUT(xprof->source() != nullptr, 30000);
        save(window, "xprof-transfers", screen);
        QVERIFY(window.openComparison(*profileNamed("offload-before.xplane"),
                                      *profileNamed("offload-after.xplane")));
        save(window, "trace-compare", screen);

        // A multi-host run.
        QWidget* run = window.openProfile(*profileNamed("demo-run"));
        QTRY_VERIFY_WITH_TIMEOUT(showTab(run, "Hosts"), 30000);
        save(window, "hosts", screen);

        // A replay: overview, timeline with its suggestion, the data cache.
        QWidget* replay = window.openProfile(*profileNamed("allgather"));
        save(window, "replay-overview", screen);
        window.showSuggestion(0);
        save(window, "replay-timeline", screen);
        QWidget* fragmentation = window.openProfile(*profileNamed("fragmentation"));
        QTRY_VERIFY_WITH_TIMEOUT(showTab(fragmentation, "Data cache"), 30000);
        save(window, "replay-dcache", screen);
        Q_UNUSED(replay);

        // The other kinds.
        window.openProfile(*profileNamed("cpi-demo"));
        save(window, "cpi", screen);
        window.openProfile(*profileNamed("estimates-demo"));
        save(window, "estimates", screen);
        window.openProfile(*profileNamed("noise-probe-demo"));
        save(window, "absorption", screen);
        for (QAction* action : window.findChildren<QAction*>())
            if (action->text() == "&Query (SQL)") action->trigger();
        save(window, "query", screen);
    }
};

// Two screens side by side, the sizes the docs show.
int main(int argc, char** argv) {
    return stallscope::testing::runOnTwoScreens<TestDocsScreens>(argc, argv);
}

#include "test_docs_screens.moc"
