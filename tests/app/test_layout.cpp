// Layout a user meets in the first minutes, on the two screens the issue was seen on (1280×800
// and 1920×1080, two offscreen screens side by side): selecting or previewing a suggestion with a
// long text keeps the window on its screen, the docks at their minimum width or more and Apply
// inside the window; the preview gets the timeline page and its splitter remembers its place;
// the overview's figures are never cut; dependency labels sit clear of the DMA bars; derived and
// demo profiles name a real size and source.
//
// STALLSCOPE_SCREENSHOT_DIR=/tmp/shots saves the windows it checks as PNGs.
#include <QApplication>
#include <QDockWidget>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>
#include <fstream>

#include "app/mainwindow.h"
#include "core/replay/codec.h"
#include "core/replay/dependencies.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/workspace.h"
#include "tests/app/two_screens.h"
#include "views/common/timeline_view.h"
#include "views/replay/replay_dcache_view.h"
#include "views/replay/replay_overview.h"
#include "views/replay/replay_profile_tab.h"
#include "views/shell/details_dock.h"
#include "views/shell/profile_summary.h"
#include "views/shell/suggestions_dock.h"
#include "views/shell/workspace_dock.h"
#include "views/trace/trace_view.h"

using namespace stallscope;
using stallscope::testing::screenOfSize;

namespace {

const QSize kSmallScreen(1280, 800);
const QSize kLargeScreen(1920, 1080);

// A widget's rect in `window` coordinates.
QRect rectIn(const QWidget* widget, const QWidget* window) {
    return QRect(widget->mapTo(window, QPoint(0, 0)), widget->size());
}

void saveShot(QWidget* widget, const QString& name) {
    const QString dir = qEnvironmentVariable("STALLSCOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) QVERIFY(widget->grab().save(dir + '/' + name + ".png"));
}

QString sizeName(QSize size) {
    return QStringLiteral("%1x%2").arg(size.width()).arg(size.height());
}

}  // namespace

class TestLayout : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase();
    void init();

    void suggestionKeepsWindowOnScreen_data();
    void suggestionKeepsWindowOnScreen();
    void previewSplitterRemembersItsPlace();
    void overviewCardsNeverCutAFigure();
    void dependencyLabelsClearOfBars();
    void derivedProfileRecordsItsStoredSize();
    void demoProfilesNameTheirOrigin();
    void traceTimelineGetsTheWindow_data();
    void traceTimelineGetsTheWindow();
    void dockWidthsSurviveImports();
    void tabTitlesStayReadable();

  private:
    QString writeWorkload(const char* scenario) {
        const QString path = dir_->filePath(QString(scenario) + ".jsonl");
        std::ofstream out(path.toStdString());
        replay::writeJsonl(replay::generateWorkload(scenario), out);
        return path;
    }
    // Checks the window against its screen: on it, docks not squeezed, Apply inside.
    void checkWindowFits(MainWindow& window, QSize screen);

    std::unique_ptr<QTemporaryDir> settingsDir_;
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestLayout::initTestCase() {
    QCOMPARE(QGuiApplication::screens().size(), 2);
    QVERIFY(screenOfSize(kSmallScreen) && screenOfSize(kLargeScreen));
    settingsDir_ = std::make_unique<QTemporaryDir>();
    QCoreApplication::setOrganizationName("StallscopeTests");
    QCoreApplication::setApplicationName("test_layout");
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir_->path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_->path());
}

void TestLayout::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    QSettings().clear();
}

void TestLayout::checkWindowFits(MainWindow& window, QSize screen) {
    QTest::qWait(50);  // layouts settle after posted events
    QVERIFY2(window.width() <= screen.width(),
             qPrintable(QString("window %1 px wide on a %2 px screen")
                            .arg(window.width())
                            .arg(screen.width())));
    QVERIFY(window.height() <= screen.height());
    QVERIFY(window.minimumSizeHint().width() <= screen.width());
    for (const char* name : {"workspaceDock", "detailsDock"}) {
        auto* dock = window.findChild<QDockWidget*>(name);
        QVERIFY(dock && dock->isVisible());
        QVERIFY2(dock->width() >= MainWindow::kSideDockMinimumWidth,
                 qPrintable(QString("%1 is %2 px wide").arg(name).arg(dock->width())));
        QVERIFY(dock->width() >= dock->minimumSizeHint().width());
        QVERIFY(window.rect().contains(rectIn(dock, &window)));
    }
    QPushButton* apply = window.suggestionsDock()->applyButton();
    QVERIFY(apply->isVisible());
    QVERIFY2(window.rect().contains(rectIn(apply, &window)),
             qPrintable(QString("Apply at x %1..%2 in a window %3 px wide")
                            .arg(rectIn(apply, &window).left())
                            .arg(rectIn(apply, &window).right())
                            .arg(window.width())));
}

void TestLayout::suggestionKeepsWindowOnScreen_data() {
    QTest::addColumn<QSize>("screen");
    QTest::newRow("1280x800") << kSmallScreen;
    QTest::newRow("1920x1080") << kLargeScreen;
}

void TestLayout::suggestionKeepsWindowOnScreen() {
    QFETCH(QSize, screen);
    MainWindow window(dir_->filePath("workspace.sqlite"));
    QScreen* target = screenOfSize(screen);
    window.setScreen(target);
    window.setGeometry(target->availableGeometry());
    QSignalSpy reloaded(&window, &MainWindow::profilesReloaded);
    window.show();
    QVERIFY(reloaded.wait(30000));
    QSignalSpy finished(&window, &MainWindow::importFinished);
    window.importFiles({writeWorkload("allgather")});
    QVERIFY(finished.wait(30000));
    QVERIFY(finished.front().at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(window.suggestionsDock()->list()->count() > 0, 30000);
    QCOMPARE(window.width(), screen.width());
    checkWindowFits(window, screen);
    if (QTest::currentTestFailed()) return;

    // Select the first suggestion as a user does: a click on it in the dock.
    QListWidget* list = window.suggestionsDock()->list();
    const QString text = window.suggestionsDock()->suggestions().front().text;
    QVERIFY2(text.size() > 200, qPrintable(text));  // the long text of the report
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                      list->visualItemRect(list->item(0)).center());
    auto* tab = qobject_cast<ReplayProfileTab*>(window.tabs()->currentWidget());
    QVERIFY(tab);
    QTRY_VERIFY_WITH_TIMEOUT(tab->shownSuggestion() == 0, 30000);
    ElidedLabel* status = tab->statusLabel();
    QCOMPARE(status->text(), "Suggestion 1: " + text);
    QCOMPARE(status->toolTip(), status->text());  // the whole text on hover
    QVERIFY(status->isElided());
    QVERIFY(status->shownText().endsWith(QStringLiteral("…")));
    QVERIFY(rectIn(status, &window).right() < window.width());
    checkWindowFits(window, screen);
    if (QTest::currentTestFailed()) return;
    saveShot(&window, "suggestion-" + sizeName(screen));

    // Preview: the re-simulated timeline under the original, the strip folded away.
    QSignalSpy previewed(tab, &ReplayProfileTab::previewReady);
    QVERIFY(window.suggestionsDock()->previewButton()->isEnabled());
    window.suggestionsDock()->previewButton()->click();
    QVERIFY(previewed.wait(30000));
    checkWindowFits(window, screen);
    if (QTest::currentTestFailed()) return;
    const QList<int> sizes = tab->timelineSplitter()->sizes();
    QCOMPARE(sizes.size(), 3);
    QCOMPARE(sizes[2], 0);  // the data-cache strip
    QVERIFY2(std::abs(sizes[0] - sizes[1]) <= tab->previewLabel()->height() + 8,
             qPrintable(QString("%1 / %2").arg(sizes[0]).arg(sizes[1])));
    QVERIFY(tab->previewTimeline()->height() >= tab->previewTimeline()->minimumHeight());
    QVERIFY(tab->previewLabel()->text().contains("saves"));
    saveShot(&window, "preview-" + sizeName(screen));

    // The overview page of that window: no figure cut at this size.
    tab->pages()->setCurrentWidget(tab->overview());
    QTest::qWait(50);
    for (const ReplayOverview::Card& card : tab->overview()->cardsFor(tab->overview()->size()))
        QVERIFY2(
            QFontMetrics(card.valueFont).horizontalAdvance(card.value) <= card.valueRect.width(),
            qPrintable(card.value));
    saveShot(&window, "overview-" + sizeName(screen));

    // Apply from there: the dock's Compare appears and the window still fits.
    QSignalSpy applied(&window, &MainWindow::suggestionApplied);
    window.suggestionsDock()->applyButton()->click();
    QVERIFY(applied.wait(30000));
    QVERIFY(applied.front().at(0).toBool());
    QTRY_VERIFY(window.suggestionsDock()->compareButton()->isVisible());
    checkWindowFits(window, screen);
    if (QTest::currentTestFailed()) return;
}

void TestLayout::previewSplitterRemembersItsPlace() {
    const auto doc = buildReplayDocument(replay::generateWorkload("matmul-starved"), std::nullopt);
    ReplayProfileTab tab(doc);
    tab.resize(1200, 800);
    tab.show();
    tab.pages()->setCurrentIndex(1);
    QSplitter* splitter = tab.timelineSplitter();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    const QList<int> before = splitter->sizes();
    QCOMPARE(before[1], 0);  // no preview yet
    QVERIFY(before[2] >= tab.dcacheStrip()->minimumHeight());

    QSignalSpy ready(&tab, &ReplayProfileTab::previewReady);
    tab.previewSuggestion(0);
    QVERIFY(ready.wait(30000));
    QCOMPARE(splitter->sizes()[2], 0);
    QVERIFY(!tab.dcacheStrip()->isVisibleTo(&tab));

    // Drag the handle between the two timelines 80 px down, as a user does.
    QSplitterHandle* handle = splitter->handle(1);
    const QPoint grip = handle->rect().center();
    QTest::mousePress(handle, Qt::LeftButton, {}, grip);
    QTest::mouseMove(handle, grip + QPoint(0, 40));
    QTest::mouseMove(handle, grip + QPoint(0, 80));
    QTest::mouseRelease(handle, Qt::LeftButton, {}, grip + QPoint(0, 80));
    const QList<int> moved = splitter->sizes();
    QVERIFY2(moved[0] > splitter->sizes()[1], qPrintable(QString::number(moved[0])));
    QVariantList stored = QSettings().value(ReplayProfileTab::kPreviewSizesKey).toList();
    QCOMPARE(stored.size(), 3);
    QCOMPARE(stored[0].toInt(), moved[0]);
    QCOMPARE(stored[1].toInt(), moved[1]);

    // Closing the preview gives the strip its room back.
    tab.closePreviewButton()->click();
    QVERIFY(!tab.previewTimeline()->isVisibleTo(&tab));
    QCOMPARE(splitter->sizes(), before);

    // A new tab's preview opens where the splitter was left.
    ReplayProfileTab other(doc);
    other.resize(1200, 800);
    other.show();
    other.pages()->setCurrentIndex(1);
    QVERIFY(QTest::qWaitForWindowExposed(&other));
    QSignalSpy otherReady(&other, &ReplayProfileTab::previewReady);
    other.previewSuggestion(0);
    QVERIFY2(otherReady.wait(30000),
             qPrintable(other.previewLabel()->text() + " / " + other.statusLabel()->text()));
    QCOMPARE(other.timelineSplitter()->sizes(), moved);
}

void TestLayout::overviewCardsNeverCutAFigure() {
    const auto doc =
        buildReplayDocument(replay::generateWorkload("allgather"), std::nullopt, false);
    ReplayOverview overview;
    overview.setDocument(doc);
    QCOMPARE(overview.minimumSizeHint(),
             QSize(ReplayOverview::kMinimumWidth, ReplayOverview::kMinimumHeight));
    int wideColumns = 0;
    for (int width : {ReplayOverview::kMinimumWidth, 560, 640, 700, 820, 1000, 1600}) {
        const QSize size(width, 600);
        const auto cards = overview.cardsFor(size);
        QCOMPARE(cards.size(), size_t(5));
        QSet<int> tops;
        for (const ReplayOverview::Card& card : cards) {
            // The figure fits its card at the font it is drawn in, and the card the page.
            const int advance = QFontMetrics(card.valueFont).horizontalAdvance(card.value);
            QVERIFY2(advance <= card.valueRect.width(),
                     qPrintable(QString("%1 at %2 px: %3 > %4")
                                    .arg(card.value)
                                    .arg(width)
                                    .arg(advance)
                                    .arg(card.valueRect.width())));
            QVERIFY(card.rect.contains(card.valueRect));
            QVERIFY(QRect(QPoint(0, 0), size).contains(card.rect));
            QVERIFY(card.valueFont.pointSizeF() >= QFont().pointSizeF() - 1e-6);
            tops.insert(card.rect.top());
        }
        if (width == 1600) {
            wideColumns = 5 / int(tops.size());
            QCOMPARE(cards.front().valueFont.pointSizeF(), QFont().pointSizeF() * 1.5);
        }
        // At the window's central width at 1280×800 the five figures do not fit in one row
        // at full size: they shrink or wrap.
        if (width == 640)
            QVERIFY(tops.size() > 1 ||
                    cards.front().valueFont.pointSizeF() < QFont().pointSizeF() * 1.5);
    }
    QCOMPARE(wideColumns, 5);
    // "56,344 cycles" is one of the figures checked above, whole.
    const ReplayOverview::Card total = overview.cardsFor({ReplayOverview::kMinimumWidth, 600})[0];
    QCOMPARE(total.value, QString("%1 cycles").arg(QLocale().toString(56344.0, 'f', 0)));
    overview.resize(ReplayOverview::kMinimumWidth, 600);
    saveShot(&overview, "overview-narrow");
}

void TestLayout::dependencyLabelsClearOfBars() {
    const auto doc = buildReplayDocument(replay::generateWorkload("allgather"), std::nullopt);
    // A DMA whose relaxed dependencies name constraints (labelled arrows).
    size_t dma = doc->trace.dmas.size();
    for (size_t d = 0; d < doc->trace.dmas.size() && dma == doc->trace.dmas.size(); ++d)
        for (const auto& e : replay::dmaDependencyEdges(doc->trace, doc->analysis.sim, d))
            if (e.relaxed && e.kind != replay::ConstraintKind::None) dma = d;
    QVERIFY(dma < doc->trace.dmas.size());

    ReplayProfileTab tab(doc);
    tab.resize(1400, 900);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    QSignalSpy ready(&tab, &ReplayProfileTab::dependenciesReady);
    tab.showDma(dma);
    QVERIFY(ready.wait(30000));
    TimelineView* view = tab.timeline();
    // The arrows' starts and the DMA in view: where the labels belong.
    TimeRange shown{double(doc->analysis.sim.dmas[dma].issueCycle),
                    double(doc->analysis.sim.dmas[dma].completeCycle)};
    for (const auto& e : tab.tracks().dependencies->edges())
        shown.start = std::min(shown.start, double(doc->analysis.sim.cycle[e.from]));
    view->fitRange(shown, 0.1);
    const QSize vp = view->viewport()->size();
    const TimeMapping mapping = view->mappingFor(vp);
    const auto trackRect = [&](const TimelineTrack* track) { return view->trackRect(track, vp); };
    const auto labels = tab.tracks().dependencies->labels(
        QFontMetrics(view->viewport()->font()), view->layoutFor(vp).dataArea, mapping, trackRect);
    QVERIFY(!labels.empty());
    for (const auto& label : labels)
        QVERIFY(view->layoutFor(vp).dataArea.contains(label.rect.toRect()));
    // Every DMA bar drawn, from its lane and row: no label overlaps one.
    int barsChecked = 0;
    for (const auto& lane : tab.tracks().lanes) {
        const QRect laneRect = view->trackRect(lane.get(), vp);
        if (laneRect.isEmpty()) continue;
        for (size_t d = 0; d < doc->trace.dmas.size(); ++d) {
            if (tab.tracks().laneOf(d) != lane.get()) continue;
            const TimelineItem item = lane->itemFor(d);
            const QRectF row = lane->barRect(laneRect, lane->shownRow(d));
            const QRectF bar(
                QPointF(mapping.x(item.start), row.top()),
                QPointF(std::max(mapping.x(item.end), mapping.x(item.start) + 1), row.bottom()));
            ++barsChecked;
            for (const auto& label : labels)
                QVERIFY2(!label.rect.intersects(bar),
                         qPrintable(QString("'%1' over DMA %2").arg(label.text).arg(d)));
        }
    }
    QVERIFY(barsChecked > 0);
    for (size_t i = 0; i < labels.size(); ++i)
        for (size_t j = i + 1; j < labels.size(); ++j)
            QVERIFY(!labels[i].rect.intersects(labels[j].rect));
    saveShot(&tab, "dependency-labels");
}

void TestLayout::derivedProfileRecordsItsStoredSize() {
    const QString store = dir_->filePath("derived.sqlite");
    QProcess import;
    import.start(STALLSCOPE_BINARY,
                 {"--store", store, "import", "--name", "mm", writeWorkload("matmul-starved")});
    QVERIFY(import.waitForFinished(60000));
    QCOMPARE(import.exitCode(), 0);
    ProfileInfo parent;
    {
        auto workspace = Workspace::open(store.toStdString(), Workspace::Mode::ReadOnly);
        parent = workspace->resolveProfile("mm");
    }
    const auto doc = loadReplayDocument(store, parent);
    const ProfileInfo derived = applySuggestionAsProfile(store, *doc, 0);
    auto workspace = Workspace::open(store.toStdString(), Workspace::Mode::ReadOnly);
    const std::int64_t stored = replay::storedInstructionStreamBytes(*workspace, derived.id);
    QVERIFY(stored > 0);
    QCOMPARE(derived.sourceSize, stored);
    QCOMPARE(workspace->profile(derived.id)->sourceSize, stored);
    QCOMPARE(derived.parentId.value_or(-1), parent.id);
    // The Details dock shows that size, not "0 bytes".
    DetailsDock details;
    details.setProfile(*workspace->profile(derived.id));
    QStringList fields;
    for (const QLineEdit* field : details.findChildren<QLineEdit*>()) fields << field->text();
    QVERIFY2(fields.contains(ProfileDetailsForm::formatSize(stored)), qPrintable(fields.join('|')));
    QVERIFY(!fields.contains("0 bytes"));
}

void TestLayout::demoProfilesNameTheirOrigin() {
    const QString store = dir_->filePath("demo.sqlite");
    QProcess demo;
    // Headless: a platform the binary can show a window on would open the GUI.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("QT_QPA_PLATFORM", "offscreen");
    demo.setProcessEnvironment(environment);
    demo.start(STALLSCOPE_BINARY, {"--store", store, "demo"});
    QVERIFY(demo.waitForFinished(120000));
    QCOMPARE(demo.exitCode(), 0);
    auto workspace = Workspace::open(store.toStdString(), Workspace::Mode::ReadOnly);
    QStringList sources;
    for (const ProfileInfo& p : workspace->profiles()) {
        sources << QString::fromStdString(p.sourcePath);
        QVERIFY2(p.sourceSize > 0, p.name.c_str());
    }
    QCOMPARE(
        sources,
        (QStringList{
            "generated demo workload (allgather)", "generated demo workload (allgather-pinned)",
            "generated demo workload (matmul-starved)", "generated demo workload (fragmentation)",
            ":/demo/noise-probe-demo.csv", ":/demo/cpi-demo.csv", ":/demo/estimates-demo.csv",
            ":/demo/train-step-trace.json", ":/demo/offload-before.xplane.pb",
            ":/demo/offload-after.xplane.pb",
            "generated demo run (4 Kineto ranks, rank 2 slow in step 3)"}));
    // Drawn from the demo: the Transfers tab of the before/after pair has stall blocks (the
    // stall colour), the Hosts tab the slow rank's cell.
    const QString png = dir_->filePath("transfers.png");
    QProcess render;
    render.setProcessEnvironment(environment);
    render.start(STALLSCOPE_BINARY,
                 {"--store", store, "render", "transfers", "offload-before.xplane", "--against",
                  "offload-after.xplane", "--out", png, "--size", "1400x800"});
    QVERIFY(render.waitForFinished(120000));
    QCOMPARE(render.exitCode(), 0);
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1400, 800));
    int stallPixels = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixelColor(x, y) == QColor(215, 60, 50)) ++stallPixels;
    QVERIFY2(stallPixels > 2000, qPrintable(QString::number(stallPixels)));
    // The bundled resources are what the sizes count.
    for (const ProfileInfo& p : workspace->profiles()) {
        const QString source = QString::fromStdString(p.sourcePath);
        if (source.startsWith(":/")) QCOMPARE(QFileInfo(source).size(), p.sourceSize);
    }
}

// Two screens side by side, the sizes the issue names.
int main(int argc, char** argv) {
    return stallscope::testing::runOnTwoScreens<TestLayout>(argc, argv);
}

void TestLayout::traceTimelineGetsTheWindow_data() {
    QTest::addColumn<QSize>("screen");
    QTest::addColumn<QSize>("atLeast");  // the timeline's viewport with the default docks
    QTest::newRow("1280x800") << kSmallScreen << QSize(560, 300);
    QTest::newRow("1920x1080") << kLargeScreen << QSize(1100, 500);
}

void TestLayout::traceTimelineGetsTheWindow() {
    // Issue 32: with the default docks a trace's plot was about 165x160 px at 1280x800. The
    // timeline gets most of the window at both sizes.
    QFETCH(QSize, screen);
    QFETCH(QSize, atLeast);
    const QString trace = dir_->filePath("trace.json");
    {
        std::ofstream out(trace.toStdString());
        out << R"({"traceEvents":[)";
        for (int i = 0; i < 40; ++i)
            out << (i ? "," : "") << R"({"ph":"X","name":"op","pid":1,"tid":)" << 1 + i % 4
                << R"(,"ts":)" << i * 10 << R"(,"dur":8})";
        out << "]}";
    }
    MainWindow window(dir_->filePath("workspace.sqlite"));
    QScreen* target = screenOfSize(screen);
    window.setScreen(target);
    window.setGeometry(target->availableGeometry());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy finished(&window, &MainWindow::importFinished);
    window.importFiles({trace});
    QVERIFY(finished.wait(30000));
    QVERIFY(finished.front().at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(window.workspaceDock()->currentProfile().has_value(), 30000);
    auto* view =
        qobject_cast<TraceView*>(window.openProfile(*window.workspaceDock()->currentProfile()));
    QVERIFY(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->source() != nullptr, 30000);
    QTest::qWait(50);
    const QSize plot = view->timeline()->viewport()->size();
    qInfo() << "timeline viewport" << plot << "in" << window.size();
    saveShot(&window, "trace-" + sizeName(screen));
    QVERIFY2(plot.width() >= atLeast.width() && plot.height() >= atLeast.height(),
             qPrintable(QString("%1x%2").arg(plot.width()).arg(plot.height())));
    checkWindowFits(window, screen);
}

void TestLayout::dockWidthsSurviveImports() {
    // Issue 32: dock widths changed after imports and never came back. Imports of profiles with
    // long names (file, ops, metadata), each opened and chosen, leave the side docks as wide as
    // the window opened them.
    const QString longName = dir_->filePath(
        "resnet50_ddp_rank0_bs256_amp_channels_last_torch_compile_max_autotune_2026_11_27_"
        "profile_with_a_very_long_file_name.json");
    {
        std::ofstream out(longName.toStdString());
        out << R"({"traceEvents":[)";
        for (int i = 0; i < 20; ++i)
            out << (i ? "," : "")
                << R"({"ph":"X","name":"void at::native::vectorized_elementwise_kernel<4, )"
                   R"(at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, )"
                   R"(at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>))"
                << i << R"(","pid":1,"tid":1,"ts":)" << i * 10
                << R"(,"dur":8,"args":{"a_very_long_argument_name_that_goes_on":")"
                << std::string(200, 'x') << R"("}})";
        out << R"(],"deviceProperties":[{"name":")" << std::string(150, 'D') << R"("}]})";
    }
    MainWindow window(dir_->filePath("docks.sqlite"));
    QScreen* target = screenOfSize(kSmallScreen);
    window.setScreen(target);
    window.setGeometry(target->availableGeometry());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTest::qWait(50);
    auto widths = [&] {
        QTest::qWait(50);
        return std::pair(window.findChild<QDockWidget*>("workspaceDock")->width(),
                         window.findChild<QDockWidget*>("detailsDock")->width());
    };
    const auto before = widths();
    for (const QString& file : {longName, writeWorkload("allgather")}) {
        QSignalSpy finished(&window, &MainWindow::importFinished);
        window.importFiles({file});
        QVERIFY(finished.wait(30000));
        QVERIFY(finished.front().at(0).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(window.workspaceDock()->currentProfile().has_value(), 30000);
        QVERIFY(window.openProfile(*window.workspaceDock()->currentProfile()));
        QTest::qWait(300);  // the view loads and the details dock fills
        const auto after = widths();
        QVERIFY2(after == before, qPrintable(QString("docks %1/%2 px wide, were %3/%4 after %5")
                                                 .arg(after.first)
                                                 .arg(after.second)
                                                 .arg(before.first)
                                                 .arg(before.second)
                                                 .arg(QFileInfo(file).fileName())));
    }
    saveShot(&window, "docks-after-imports-1280x800");
}

void TestLayout::tabTitlesStayReadable() {
    // Issue 32: with several tabs open at 1280x800 their titles shrank to "t…". Each keeps its
    // title (at most 32 characters, a longer name elided in the middle) and the bar scrolls.
    QStringList files;
    for (int i = 0; i < 8; ++i) {
        const QString name =
            i == 7 ? QStringLiteral("a_profile_name_far_longer_than_any_tab_should_be_rank7")
                   : QStringLiteral("train_step_rank%1").arg(i);
        files << dir_->filePath(name + ".json");
        std::ofstream(files.back().toStdString())
            << R"({"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":0,"dur":5}]})";
    }
    MainWindow window(dir_->filePath("tabs.sqlite"));
    QScreen* target = screenOfSize(kSmallScreen);
    window.setScreen(target);
    window.setGeometry(target->availableGeometry());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy finished(&window, &MainWindow::importFinished);
    window.importFiles(files);
    QVERIFY(finished.wait(30000));
    QVERIFY(finished.front().at(0).toBool());
    std::unique_ptr<Workspace> ws =
        Workspace::open(dir_->filePath("tabs.sqlite").toStdString(), Workspace::Mode::ReadOnly);
    const std::vector<ProfileInfo> profiles = ws->profiles();
    QCOMPARE(profiles.size(), size_t(8));
    for (const ProfileInfo& p : profiles) QVERIFY(window.openProfile(p));
    QTest::qWait(100);
    QTabBar* bar = window.tabs()->tabBar();
    QCOMPARE(bar->count(), 8);
    const QFontMetrics metrics(bar->font());
    for (int i = 0; i < bar->count(); ++i) {
        const QString title = bar->tabText(i);
        QVERIFY2(title.size() <= 32, qPrintable(title));
        QVERIFY2(bar->tabRect(i).width() > metrics.horizontalAdvance(title),
                 qPrintable(QString("%1 in %2 px").arg(title).arg(bar->tabRect(i).width())));
    }
    QCOMPARE(bar->tabText(7), QString("a_profile_name_…_should_be_rank7"));
}

#include "test_layout.moc"
