#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QStatusTipEvent>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolBar>
#include <QTreeWidget>
#include <QUrl>

#include "app/import_runner.h"
#include "app/mainwindow.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/simulate.h"
#include "core/trace/hosts.h"
#include "core/trace/hosts_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "importers/run_import.h"
#include "views/common/timeline_view.h"
#include "views/cpi/cpi_compare_view.h"
#include "views/cpi/cpi_view.h"
#include "views/noise/absorption_view.h"
#include "views/noise/noise_compare_view.h"
#include "views/replay/replay_compare_view.h"
#include "views/replay/replay_profile_tab.h"
#include "views/shell/details_dock.h"
#include "views/shell/profile_summary.h"
#include "views/shell/shortcut_sheet.h"
#include "views/shell/suggestions_dock.h"
#include "views/shell/welcome_page.h"
#include "views/shell/workspace_dock.h"
#include "views/trace/hosts_trace_panel.h"
#include "views/trace/trace_view.h"

#include <fstream>

using namespace stallscope;

namespace {

// CONTRACT §1 example: a machine record, an hlo record and five instructions.
const char* const kMachineLine =
    R"({"record":"machine","name":"toy-tpu","clock_ghz":1.0,)"
    R"("spaces":[{"name":"hbm","bytes":17179869184},{"name":"dcache","bytes":16777216}],)"
    R"("links":[{"src":"hbm","dst":"dcache","base_latency":400,"bytes_per_cycle":64},)"
    R"({"src":"dcache","dst":"hbm","base_latency":400,"bytes_per_cycle":64}],)"
    R"("dcache":{"space":"dcache","page_bytes":512,"bucket_pages":256},)"
    R"("lightweight":["mov","add","sub","shl","shr","and","or","lea"]})";
const char* const kContractTrace[] = {
    R"({"record":"hlo","id":7,"name":"all-gather.3","category":"collective"})",
    R"({"record":"instr","i":0,"op":"sld","unit":"scalar","hlo":7,"rd":["s1"],"wr":["s2"],"mrd":[["dcache",4096,64]]})",
    R"({"record":"instr","i":1,"op":"add","unit":"scalar","rd":["s2"],"wr":["s3"]})",
    R"({"record":"instr","i":2,"op":"dma.issue","unit":"dma","rd":["s3"],"dma":{"id":3,"src":["hbm",65536,4096],"dst":["dcache",8192,4096]}})",
    R"({"record":"instr","i":3,"op":"matmul","unit":"mxu","cost":1,"busy":8,"mrd":[["dcache",0,4096]],"mwr":[["dcache",32768,4096]]})",
    R"({"record":"instr","i":4,"op":"dma.wait","unit":"dma","wait":3})",
};

void writeFile(const QString& path, const QByteArray& content) {
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    QCOMPARE(file.write(content), content.size());
}

QByteArray contractTrace() {
    QByteArray text = QByteArray(kMachineLine) + '\n';
    for (const char* line : kContractTrace) text += QByteArray(line) + '\n';
    return text;
}

// A valid trace of many cheap instructions, slow enough to import that a cancel lands.
QByteArray largeTrace(int instructions) {
    QByteArray text = QByteArray(kMachineLine) + '\n';
    text.reserve(instructions * 80);
    for (int i = 0; i < instructions; ++i)
        text += R"({"record":"instr","i":)" + QByteArray::number(i) +
                R"(,"op":"add","unit":"scalar","rd":["s1"],"wr":["s2"]})" + '\n';
    return text;
}

// Labels of the tree: "group" for top-level rows, "group/profile" for their children.
QStringList treeLabels(const QTreeWidget* tree) {
    QStringList labels;
    for (int g = 0; g < tree->topLevelItemCount(); ++g) {
        const QTreeWidgetItem* group = tree->topLevelItem(g);
        labels << group->text(0);
        for (int c = 0; c < group->childCount(); ++c)
            labels << group->text(0) + '/' + group->child(c)->text(0);
    }
    return labels;
}

int distinctColors(const QImage& image, const QRect& area) {
    QSet<QRgb> colors;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x) colors.insert(image.pixel(x, y));
    return static_cast<int>(colors.size());
}

// A drag of `data` entering `target`: whether it was accepted.
bool dragEnterAccepted(QWidget* target, const QMimeData& data) {
    QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    return enter.isAccepted();
}

void dropOn(QWidget* target, const QMimeData& data) {
    QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
}

void closeMessageBoxes() {
    for (QWidget* widget : QApplication::topLevelWidgets())
        if (auto* box = qobject_cast<QMessageBox*>(widget); box && box->isVisible()) box->close();
}

}  // namespace

class TestGui : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase();
    void init();
    void cleanup();

    void importShowsProfileWhileEventLoopRuns();
    void brokenFileReportsErrorAndKeepsTree();
    void cancelFromWindowStoresNothing();
    void cancelMidImportThroughRunner();
    void dropOfLocalFileImports();
    void droppedFolderImportsAsOneRun();
    void droppedBadFileNamesOffsetAndKeepsViews();
    void openRenameDeleteProfile();
    void closedTabsLeaveOneProfileChosen();
    void importByAnotherProgramShowsUp();
    void staleListResultsAreDropped();
    void suggestionsDockShowsEmptyStateAndItems();
    void selectingReplayProfileShowsItsSuggestions();
    void importedTraceSaysHowToSeeItsSuggestions();
    void suggestionChosenOnTheTabCanBeApplied();
    void eachKindOpensItsOwnView();
    void applySuggestionThenCompareWithOriginal();
    void compareTwoSelectedReplayProfiles();
    void renderedDockShowsTheTree();
    void recentWorkspacesPersist();
    void layoutPersists();
    void aboutNamesLibraryVersions();
    void questionMarkOpensTheKeySheet();
    void statusTipsLeaveTheStatusLine();
    void mergedRunHostOpensFromItsShard();

  private:
    QString workspacePath() const { return dir_->filePath("workspace.sqlite"); }
    QString writeContractTrace(const QString& name = "toy.jsonl") {
        const QString path = dir_->filePath(name);
        writeFile(path, contractTrace());
        return path;
    }
    // A window whose first profile list has arrived.
    std::unique_ptr<MainWindow> makeWindow() {
        auto window = std::make_unique<MainWindow>(workspacePath());
        QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
        window->show();
        if (reloaded.isEmpty()) reloaded.wait(30000);
        return window;
    }
    static bool importInto(MainWindow& window, const QStringList& files) {
        QSignalSpy finished(&window, &MainWindow::importFinished);
        QSignalSpy reloaded(&window, &MainWindow::profilesReloaded);
        window.importFiles(files);
        if (!finished.wait(30000)) return false;
        if (!finished.front().at(0).toBool()) return false;
        return reloaded.count() > 0 || reloaded.wait(30000);
    }

    std::unique_ptr<QTemporaryDir> settingsDir_;
    std::unique_ptr<QTemporaryDir> dir_;
};

void TestGui::initTestCase() {
    settingsDir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(settingsDir_->isValid());
    QCoreApplication::setOrganizationName("StallscopeTests");
    QCoreApplication::setApplicationName("test_gui");
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settingsDir_->path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir_->path());
}

void TestGui::init() {
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    QSettings().clear();
}

void TestGui::cleanup() {
    closeMessageBoxes();
    dir_.reset();
}

void TestGui::importShowsProfileWhileEventLoopRuns() {
    auto window = makeWindow();
    QTreeWidget* tree = window->profileTree();
    QCOMPARE(tree->topLevelItemCount(), 0);

    int ticks = 0;
    QTimer ticker;
    connect(&ticker, &QTimer::timeout, [&ticks] { ++ticks; });
    ticker.start(1);

    QSignalSpy finished(window.get(), &MainWindow::importFinished);
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    window->importFiles({writeContractTrace()});
    // The call returns at once: the import runs on a worker.
    QVERIFY(window->isImporting());
    QCOMPARE(finished.count(), 0);
    auto* progressBar = window->findChild<QProgressBar*>();
    QVERIFY(progressBar && progressBar->isVisible());

    QVERIFY(finished.wait(30000));
    QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
    QVERIFY(finished.front().at(1).toString().contains("toy"));
    QVERIFY(!window->isImporting());
    QVERIFY(!progressBar->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(reloaded.count() > 0, 30000);
    QVERIFY(ticks > 0);

    QCOMPARE(treeLabels(tree), QStringList({"replay", "replay/toy"}));
    QTreeWidgetItem* group = tree->topLevelItem(0);
    QCOMPARE(group->data(0, WorkspaceDock::kKindRole).toString(), QString("replay"));
    QVERIFY(group->isExpanded());
    // The imported profile is selected, so the Details dock shows it.
    QCOMPARE(tree->currentItem(), group->child(0));
    QVERIFY(window->detailsDock()->profileId().has_value());
    const std::optional<ProfileInfo> shown = window->workspaceDock()->currentProfile();
    QVERIFY(shown);
    QCOMPARE(shown->kind, std::string("replay"));
    QCOMPARE(shown->sourceSize, static_cast<int64_t>(contractTrace().size()));
}

void TestGui::brokenFileReportsErrorAndKeepsTree() {
    auto window = makeWindow();
    QVERIFY(importInto(*window, {writeContractTrace()}));
    const QStringList before = treeLabels(window->profileTree());

    // A gap in "i": 0, 1, then 5 on line 4.
    QByteArray broken = QByteArray(kMachineLine) + '\n';
    broken += R"({"record":"instr","i":0,"op":"add","unit":"scalar"})"
              "\n";
    broken += R"({"record":"instr","i":1,"op":"add","unit":"scalar"})"
              "\n";
    broken += R"({"record":"instr","i":5,"op":"add","unit":"scalar"})"
              "\n";
    const QString brokenPath = dir_->filePath("broken.jsonl");
    writeFile(brokenPath, broken);

    QSignalSpy finished(window.get(), &MainWindow::importFinished);
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    window->importFiles({brokenPath});
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.front().at(0).toBool(), false);
    const QString message = finished.front().at(1).toString();
    QVERIFY2(message.contains("broken.jsonl"), qPrintable(message));
    QVERIFY2(message.contains("4"), qPrintable(message));
    QVERIFY(window->statusText().contains("broken.jsonl"));

    QTest::qWait(100);
    QCOMPARE(reloaded.count(), 0);
    QCOMPARE(treeLabels(window->profileTree()), before);
    auto workspace = Workspace::open(workspacePath().toStdString(), Workspace::Mode::ReadOnly);
    QCOMPARE(workspace->profiles().size(), size_t{1});
}

void TestGui::cancelFromWindowStoresNothing() {
    const QString big = dir_->filePath("big.jsonl");
    writeFile(big, largeTrace(200000));
    auto window = makeWindow();

    QSignalSpy finished(window.get(), &MainWindow::importFinished);
    window->importFiles({big});
    QVERIFY(window->isImporting());
    // The worker sees the cancel at its first progress point at the latest.
    window->cancelImport();
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.front().at(0).toBool(), false);
    QVERIFY(window->importRunner()->lastOutcome().cancelled);
    QVERIFY(!window->isImporting());

    window->reloadProfiles();
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    QVERIFY(reloaded.wait(30000));
    QCOMPARE(window->profileTree()->topLevelItemCount(), 0);
    auto workspace = Workspace::open(workspacePath().toStdString(), Workspace::Mode::ReadOnly);
    QVERIFY(workspace->profiles().empty());
}

void TestGui::cancelMidImportThroughRunner() {
    const QString big = dir_->filePath("big.jsonl");
    writeFile(big, largeTrace(600000));

    ImportRunner runner;
    QSignalSpy progress(&runner, &ImportRunner::progressChanged);
    QSignalSpy finished(&runner, &ImportRunner::finished);
    // Cancel on the first progress update, i.e. while the worker is parsing.
    connect(&runner, &ImportRunner::progressChanged, &runner, &ImportRunner::cancel);
    QVERIFY(runner.start(workspacePath(), {big}));
    QVERIFY(runner.isRunning());
    QVERIFY(!runner.start(workspacePath(), {big}));
    QVERIFY(finished.wait(60000));

    QVERIFY(progress.count() > 0);
    QCOMPARE(finished.front().at(0).toBool(), false);
    QVERIFY(runner.lastOutcome().cancelled);
    QVERIFY(finished.front().at(2).value<QList<qint64>>().isEmpty());
    auto workspace = Workspace::open(workspacePath().toStdString(), Workspace::Mode::ReadOnly);
    QVERIFY(workspace->profiles().empty());
}

void TestGui::dropOfLocalFileImports() {
    auto window = makeWindow();
    const QString trace = writeContractTrace("dropped.jsonl");

    QMimeData remote;
    remote.setUrls({QUrl("https://example.invalid/trace.jsonl")});
    QVERIFY(!dragEnterAccepted(window.get(), remote));

    QMimeData local;
    local.setUrls({QUrl::fromLocalFile(trace)});
    QVERIFY(dragEnterAccepted(window.get(), local));

    QSignalSpy finished(window.get(), &MainWindow::importFinished);
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    dropOn(window.get(), local);
    QVERIFY(window->isImporting());
    QVERIFY(finished.wait(30000));
    QVERIFY(finished.front().at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(reloaded.count() > 0, 30000);
    QCOMPARE(treeLabels(window->profileTree()), QStringList({"replay", "replay/dropped"}));
}

void TestGui::droppedFolderImportsAsOneRun() {
    // Issue 32 #9: a folder dropped on the window was ignored. A folder of rank files is one
    // run: one trace profile, a host per rank.
    const QString run = dir_->filePath("ranks");
    QProcess gen;
    gen.start("python3",
              {STALLSCOPE_GEN_MULTIHOST, run, "--hosts", "3", "--steps", "3", "--kernels", "4"});
    QVERIFY(gen.waitForFinished(60000));
    QCOMPARE(gen.exitCode(), 0);
    auto window = makeWindow();
    QMimeData folder;
    folder.setUrls({QUrl::fromLocalFile(run)});
    QVERIFY(dragEnterAccepted(window.get(), folder));
    QSignalSpy finished(window.get(), &MainWindow::importFinished);
    dropOn(window.get(), folder);
    QVERIFY(finished.wait(60000));
    QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
    QTRY_COMPARE_WITH_TIMEOUT(treeLabels(window->profileTree()),
                              QStringList({"trace", "trace/ranks"}), 30000);
    auto ws = Workspace::open(window->workspacePath().toStdString(), Workspace::Mode::ReadOnly);
    const auto profiles = ws->profiles();
    QCOMPARE(profiles.size(), size_t(1));
    const QJsonObject meta =
        QJsonDocument::fromJson(QByteArray::fromStdString(profiles.front().metadataJson)).object();
    QCOMPARE(trace::runHosts(meta).size(), size_t(3));

    // The rank files chosen together (the dialog asks whether they are one run): one profile.
    auto second = std::make_unique<MainWindow>(dir_->filePath("second.sqlite"));
    QSignalSpy done(second.get(), &MainWindow::importFinished);
    QStringList ranks;
    for (const QFileInfo& f : QDir(run).entryInfoList({"*.json"}, QDir::Files))
        ranks << f.filePath();
    QCOMPARE(ranks.size(), 3);
    second->importFiles(ranks, true);
    QVERIFY(done.wait(60000));
    QVERIFY2(done.front().at(0).toBool(), qPrintable(done.front().at(1).toString()));
    auto ws2 =
        Workspace::open(dir_->filePath("second.sqlite").toStdString(), Workspace::Mode::ReadOnly);
    QCOMPARE(ws2->profiles().size(), size_t(1));
}

// A broken file dropped on the window: a message box names the file and the byte where it
// breaks; the open view, the tabs and the workspace tree are as they were.
void TestGui::droppedBadFileNamesOffsetAndKeepsViews() {
    auto window = makeWindow();
    QVERIFY(importInto(*window, {writeContractTrace()}));
    QWidget* view = window->openProfile(*window->workspaceDock()->currentProfile());
    QVERIFY(view);
    const QStringList tree = treeLabels(window->profileTree());
    const int tabs = window->tabs()->count();

    // A missing comma between two members of the second event: the name at byte 65.
    const QString broken = dir_->filePath("broken_drop.json");
    writeFile(broken,
              "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2},\n"
              "{\"ph\":\"X\" \"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":4,\"dur\":1}]");
    QMimeData data;
    data.setUrls({QUrl::fromLocalFile(broken)});
    QVERIFY(dragEnterAccepted(window.get(), data));
    QSignalSpy finished(window.get(), &MainWindow::importFinished);
    dropOn(window.get(), data);
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.front().at(0).toBool(), false);

    QMessageBox* box = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((box =
                                  [] {
                                      for (QWidget* w : QApplication::topLevelWidgets())
                                          if (auto* b = qobject_cast<QMessageBox*>(w);
                                              b && b->isVisible())
                                              return b;
                                      return static_cast<QMessageBox*>(nullptr);
                                  }()) != nullptr,
                             5000);
    const QString details = box->informativeText();
    QVERIFY2(details.contains(broken) && details.contains("byte 65"), qPrintable(details));
    QCOMPARE(box->text(), QString("Nothing was imported."));
    closeMessageBoxes();

    QCOMPARE(window->tabs()->count(), tabs);
    QCOMPARE(window->tabs()->currentWidget(), view);
    QVERIFY(view->isVisible());
    QCOMPARE(treeLabels(window->profileTree()), tree);
}

void TestGui::openRenameDeleteProfile() {
    auto window = makeWindow();
    QVERIFY(importInto(*window, {writeContractTrace()}));
    QTreeWidget* tree = window->profileTree();
    QTreeWidgetItem* item = tree->topLevelItem(0)->child(0);

    // Double-click opens the replay tab; opening again focuses it.
    const QRect rect = tree->visualItemRect(item);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(tree->viewport(), Qt::LeftButton, {}, rect.center());
    QTabWidget* tabs = window->tabs();
    QCOMPARE(tabs->count(), 1);
    QCOMPARE(tabs->tabText(0), QString("toy"));
    auto* replayTab = qobject_cast<ReplayProfileTab*>(tabs->widget(0));
    QVERIFY(replayTab);
    window->openProfile(*window->workspaceDock()->currentProfile());
    QCOMPARE(tabs->count(), 1);

    // Rename runs on a worker, then the tree and the tab follow.
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    window->renameProfile(item->data(0, WorkspaceDock::kProfileIdRole).toLongLong(), "step 1");
    QVERIFY(reloaded.wait(30000));
    QCOMPARE(treeLabels(tree), QStringList({"replay", "replay/step 1"}));
    QCOMPARE(tabs->tabText(0), QString("step 1"));

    // F2 edits the name in place; Return commits it and the workspace renames the profile.
    tree->setFocus();
    tree->setCurrentItem(tree->topLevelItem(0)->child(0));
    QTest::keyClick(tree, Qt::Key_F2);
    auto* editor = tree->viewport()->findChild<QLineEdit*>();
    QVERIFY(editor);
    QTRY_VERIFY(editor->isVisible());
    editor->selectAll();
    QTest::keyClicks(editor, "step 2");
    QTest::keyClick(editor, Qt::Key_Return);
    QVERIFY(reloaded.wait(30000));
    QCOMPARE(treeLabels(tree), QStringList({"replay", "replay/step 2"}));
    QCOMPARE(tabs->tabText(0), QString("step 2"));

    // Ctrl+W closes the current tab.
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    QTest::keyClick(window.get(), Qt::Key_W, Qt::ControlModifier);
    QCOMPARE(tabs->count(), 0);

    // A view registered for the kind replaces the summary page.
    window->registerView("replay", [](const ProfileInfo& profile, const QString&) {
        return new QLabel(QString::fromStdString(profile.name));
    });
    QVERIFY(qobject_cast<QLabel*>(window->openProfile(*window->workspaceDock()->currentProfile())));
    QCOMPARE(tabs->count(), 1);

    // Delete asks first; answering Cancel keeps the profile.
    tree->setCurrentItem(tree->topLevelItem(0)->child(0));
    auto answer = [](const QString& button) {
        QTimer::singleShot(0, [button] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            QVERIFY(box);
            for (QAbstractButton* candidate : box->buttons())
                if (candidate->text().remove('&') == button) candidate->click();
        });
    };
    answer("Cancel");
    window->workspaceDock()->deleteAction()->trigger();
    QTest::qWait(100);
    QCOMPARE(treeLabels(tree), QStringList({"replay", "replay/step 2"}));

    answer("Delete");
    window->workspaceDock()->deleteAction()->trigger();
    QVERIFY(reloaded.wait(30000));
    QCOMPARE(tree->topLevelItemCount(), 0);
    QCOMPARE(tabs->count(), 0);  // the deleted profile's tab closed
    QVERIFY(!window->detailsDock()->profileId().has_value());
}

void TestGui::closedTabsLeaveOneProfileChosen() {
    // Issue 32 #8: after Ctrl+W on several tabs several profiles stayed highlighted and Delete
    // asked about one of them.
    QStringList files;
    for (const char* scenario : {"allgather", "allgather-pinned", "matmul-starved"}) {
        files << dir_->path() + "/" + scenario + ".jsonl";
        std::ofstream out(files.back().toStdString());
        replay::writeJsonl(replay::generateWorkload(scenario), out);
    }
    auto window = makeWindow();
    QVERIFY(importInto(*window, files));
    QTreeWidget* tree = window->profileTree();
    QTreeWidgetItem* group = tree->topLevelItem(0);
    QCOMPARE(group->childCount(), 3);
    for (int i = 0; i < 3; ++i)
        window->openProfile(*window->workspaceDock()->profile(
            group->child(i)->data(0, WorkspaceDock::kProfileIdRole).toLongLong()));
    QCOMPARE(window->tabs()->count(), 3);
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    QTest::keyClick(window.get(), Qt::Key_W, Qt::ControlModifier);
    QTest::keyClick(window.get(), Qt::Key_W, Qt::ControlModifier);
    QCOMPARE(window->tabs()->count(), 1);
    // The remaining tab's profile, alone.
    const QList<QTreeWidgetItem*> chosen = tree->selectedItems();
    QCOMPARE(chosen.size(), 1);
    QCOMPARE(chosen.front()->text(0), window->tabs()->tabText(0));
    QCOMPARE(chosen.front()->data(0, WorkspaceDock::kProfileIdRole).toLongLong(),
             window->workspaceDock()->currentProfile()->id);

    // Delete covers every highlighted profile (Ctrl+click), and asks once about all of them.
    group->child(0)->setSelected(true);
    group->child(1)->setSelected(true);
    const int highlighted = int(tree->selectedItems().size());
    size_t asked = 0;
    connect(window->workspaceDock(), &WorkspaceDock::deleteRequested, window.get(),
            [&asked](const std::vector<ProfileInfo>& profiles) { asked = profiles.size(); });
    QString question;
    QTimer::singleShot(0, [&question] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        QVERIFY(box);
        question = box->text();
        for (QAbstractButton* button : box->buttons())
            if (button->text().remove('&') == "Cancel") button->click();
    });
    window->workspaceDock()->deleteAction()->trigger();
    QCOMPARE(asked, size_t(highlighted));
    QVERIFY(highlighted >= 2);
    QVERIFY2(question.startsWith(QString("Delete these %1 profiles:").arg(highlighted)),
             qPrintable(question));
}

void TestGui::importByAnotherProgramShowsUp() {
    // Issue 32 #10: a command-line import into the open workspace never reached the window.
    // Here the other program is a second connection in this process, as `stallscope import`
    // would open one: nothing tells the window but the file changing.
    auto window = makeWindow();
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    QCOMPARE(window->profileTree()->topLevelItemCount(), 0);
    {
        auto other = Workspace::open(window->workspacePath().toStdString());
        Progress progress;
        importFiles(*other, ImportRequest{{writeContractTrace().toStdString()}, {}, {}}, progress);
    }
    QTRY_COMPARE_WITH_TIMEOUT(treeLabels(window->profileTree()),
                              QStringList({"replay", "replay/toy"}), 10000);
    // The window's own reads (which may create and remove the WAL) do not start reloads of
    // their own: once settled, the count stays.
    QTest::qWait(1500);
    const qsizetype settled = reloaded.count();
    QTest::qWait(2000);
    QCOMPARE(reloaded.count(), settled);
    // Reload (F5) reads the list again by hand.
    const int before = int(reloaded.count());
    QAction* reload = nullptr;
    for (QAction* action : window->actions())
        if (action->shortcut() == QKeySequence(QKeySequence::Refresh)) reload = action;
    QVERIFY(reload);
    reload->trigger();
    QTRY_VERIFY(reloaded.count() > before);
}

void TestGui::staleListResultsAreDropped() {
    auto window = makeWindow();
    QVERIFY(importInto(*window, {writeContractTrace()}));
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    // Three reloads in a row: only the newest result is applied.
    window->reloadProfiles();
    window->reloadProfiles();
    window->reloadProfiles();
    QVERIFY(reloaded.wait(30000));
    QTest::qWait(200);
    QCOMPARE(reloaded.count(), 1);
    QCOMPARE(treeLabels(window->profileTree()), QStringList({"replay", "replay/toy"}));
}

void TestGui::suggestionsDockShowsEmptyStateAndItems() {
    auto window = makeWindow();
    SuggestionsDock* dock = window->suggestionsDock();
    QCOMPARE(dock->emptyMessage(),
             QString("Suggestions appear here for replay, trace, CPI and noise profiles"));
    QVERIFY(!dock->list()->isVisible());
    window->setSuggestions({{"hoist-dma", "Issue DMA 3 before instruction 0", 1200}});
    QCOMPARE(dock->list()->count(), 1);
    QVERIFY(dock->list()->isVisible());
    QVERIFY(dock->list()->item(0)->text().contains("DMA 3"));
    window->setSuggestions({});
    QVERIFY(!dock->list()->isVisible());
}

void TestGui::selectingReplayProfileShowsItsSuggestions() {
    const QString path = dir_->path() + "/matmul.jsonl";
    {
        std::ofstream out(path.toStdString());
        replay::writeJsonl(replay::generateWorkload("matmul-starved"), out);
    }
    auto window = makeWindow();
    QVERIFY(importInto(*window, {path}));
    // The imported profile is selected; its analysis runs on a worker and fills the dock.
    SuggestionsDock* dock = window->suggestionsDock();
    QTRY_VERIFY_WITH_TIMEOUT(dock->list()->count() > 0, 20000);
    const SuggestionItem best = dock->suggestions().front();
    QVERIFY2(QStringList({"hoist", "group", "pin"}).contains(best.kind), qPrintable(best.kind));
    QVERIFY(best.savingCycles > 0);
    QVERIFY2(best.text.contains("re-simulated saving"), qPrintable(best.text));
    for (const SuggestionItem& item : dock->suggestions())
        QVERIFY(item.savingCycles <= best.savingCycles);
}

void TestGui::importedTraceSaysHowToSeeItsSuggestions() {
    // Issue 32 #4: after an import the dock said "Suggestions appear here for replay, trace…"
    // over a trace that has suggestions. It says how to see them, and lists them once the
    // trace's view has derived them.
    const QString sample = QString(STALLSCOPE_SHARED_DIR) + "/samples/kineto/before_fix_trace.json";
    if (!QFileInfo::exists(sample)) QSKIP("../shared/samples is absent");
    auto window = makeWindow();
    QVERIFY(importInto(*window, {sample}));
    SuggestionsDock* dock = window->suggestionsDock();
    QTRY_COMPARE(dock->emptyMessage(),
                 QString("Open “before_fix_trace” (double-click it, or Enter) to see its "
                         "suggestions"));
    QVERIFY(!dock->list()->isVisible());
    window->openProfile(*window->workspaceDock()->currentProfile());
    QTRY_VERIFY_WITH_TIMEOUT(dock->list()->count() > 0, 30000);
    QVERIFY(dock->list()->isVisible());
}

void TestGui::suggestionChosenOnTheTabCanBeApplied() {
    // Issue 32 #6: Preview/Apply stayed disabled for a suggestion chosen on the replay
    // overview card, and were disabled with no hint for suggestions no edit expresses.
    const QString path = dir_->path() + "/card.jsonl";
    {
        std::ofstream out(path.toStdString());
        replay::writeJsonl(replay::generateWorkload("matmul-starved"), out);
    }
    auto window = makeWindow();
    QVERIFY(importInto(*window, {path}));
    SuggestionsDock* dock = window->suggestionsDock();
    QTRY_VERIFY_WITH_TIMEOUT(dock->list()->count() > 1, 20000);
    QVERIFY(!dock->previewButton()->isEnabled());
    auto* tab = qobject_cast<ReplayProfileTab*>(
        window->openProfile(*window->workspaceDock()->currentProfile()));
    QVERIFY(tab);
    QTRY_VERIFY_WITH_TIMEOUT(tab->isLoaded(), 20000);
    tab->showSuggestion(1);  // what a click on the overview card's second row does
    QCOMPARE(dock->list()->currentRow(), 1);
    QVERIFY(dock->previewButton()->isEnabled());
    QVERIFY(dock->applyButton()->isEnabled());

    // One that cannot be applied says why on the disabled buttons.
    SuggestionItem bound{"input_bound", "The input pipeline takes 60 % of each step", 0};
    bound.whyNotApplicable = "No edit re-simulates this recommendation";
    window->setSuggestions({bound});
    dock->list()->setCurrentRow(0);
    QVERIFY(!dock->previewButton()->isEnabled());
    QCOMPARE(dock->previewButton()->toolTip(), bound.whyNotApplicable);
    QCOMPARE(dock->applyButton()->toolTip(), bound.whyNotApplicable);
}

void TestGui::applySuggestionThenCompareWithOriginal() {
    const QString path = dir_->path() + "/mm.jsonl";
    {
        std::ofstream out(path.toStdString());
        replay::writeJsonl(replay::generateWorkload("matmul-starved"), out);
    }
    auto window = makeWindow();
    QVERIFY(importInto(*window, {path}));
    SuggestionsDock* dock = window->suggestionsDock();
    QTRY_VERIFY_WITH_TIMEOUT(dock->list()->count() > 0, 20000);
    QVERIFY(!dock->compareButton()->isVisibleTo(dock));
    const double saving = dock->suggestions().front().savingCycles;
    QSignalSpy applied(window.get(), &MainWindow::suggestionApplied);
    window->applySuggestion(0);
    QVERIFY(applied.wait(20000));
    QVERIFY2(applied.front().at(0).toBool(), qPrintable(applied.front().at(2).toString()));
    QCOMPARE(applied.front().at(2).toString(), QString("mm (suggestion applied)"));
    QVERIFY(dock->compareButton()->isVisibleTo(dock));

    // One click on the dock's Compare opens the applied result against its parent.
    const int tabsBefore = window->tabs()->count();
    dock->compareButton()->click();
    if (!QTest::qWaitFor([&] { return window->tabs()->count() == tabsBefore + 1; }, 30000)) {
        QStringList texts;
        for (const QLabel* label : window->statusBar()->findChildren<QLabel*>())
            texts << label->text();
        QFAIL(qPrintable("no comparison tab; status: " + texts.join(" | ")));
    }
    auto* view = qobject_cast<ReplayCompareView*>(window->tabs()->currentWidget());
    QVERIFY(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isLoaded(), 20000);
    QCOMPARE(window->tabs()->tabText(window->tabs()->currentIndex()),
             QString("mm (suggestion applied) vs mm"));
    // The summary is the re-simulated saving of that one suggestion, as a share of the total.
    const auto total = replay::simulate(replay::generateWorkload("matmul-starved")).totalCycles;
    const QString expected =
        QString("B vs A: \u2212%1% cycles").arg(100.0 * saving / double(total), 0, 'f', 1);
    QVERIFY2(view->summary().startsWith(expected), qPrintable(view->summary() + " / " + expected));

    // Issue 32 #5: Compare again brings the same tab forward instead of opening another.
    const int tabsWithComparison = window->tabs()->count();
    dock->compareButton()->click();
    // The profiles are read on a worker (milliseconds): a second tab would be there by now.
    QVERIFY(!QTest::qWaitFor([&] { return window->tabs()->count() > tabsWithComparison; }, 3000));
    QCOMPARE(window->tabs()->currentWidget(), view);
    // ... and the button belongs to the derived profile: gone when another profile is chosen,
    // back when the derived one (which has an original) is.
    const int64_t derivedId = applied.front().at(1).toLongLong();
    window->workspaceDock()->selectProfile(derivedId - 1);
    QTRY_VERIFY(!dock->compareButton()->isVisibleTo(dock));
    window->workspaceDock()->selectProfile(derivedId);
    QTRY_VERIFY(dock->compareButton()->isVisibleTo(dock));
}

void TestGui::compareTwoSelectedReplayProfiles() {
    const QString before = dir_->path() + "/allgather.jsonl";
    const QString after = dir_->path() + "/allgather-pinned.jsonl";
    for (const auto& [file, scenario] :
         {std::pair{before, "allgather"}, std::pair{after, "allgather-pinned"}}) {
        std::ofstream out(file.toStdString());
        replay::writeJsonl(replay::generateWorkload(scenario), out);
    }
    auto window = makeWindow();
    QVERIFY(importInto(*window, {before, after}));
    QTreeWidget* tree = window->profileTree();
    QTreeWidgetItem* group = tree->topLevelItem(0);
    QCOMPARE(group->childCount(), 2);
    QAction* compare = window->workspaceDock()->compareAction();
    group->child(0)->setSelected(true);
    QVERIFY(!compare->isEnabled());  // one selected
    group->child(1)->setSelected(true);
    QVERIFY(compare->isEnabled());
    compare->trigger();
    auto* view = qobject_cast<ReplayCompareView*>(window->tabs()->currentWidget());
    QVERIFY(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isLoaded(), 20000);
    // 56,344 cycles before, 41,656 after (the pinned variant has no setup DMAs).
    QVERIFY2(view->summary().startsWith("B vs A: \u221226.1% cycles"), qPrintable(view->summary()));
    QCOMPARE(view->dmaTable()->rowCount(), 60);
    QVERIFY(view->dmaCsv().count('\n') == 61);

    // One cycle axis: zooming the before timeline moves the after timeline with it.
    view->before()->setWindow({1000, 9000});
    QCOMPARE(view->after()->window(), (TimeRange{1000, 9000}));
    view->after()->setWindow({2000, 4000});
    QCOMPARE(view->before()->window(), (TimeRange{2000, 4000}));

    // The rendered comparison draws both runs: the HLO band of each half is drawn in the
    // all-gather op colour at the same cycle.
    view->before()->fitAll();
    const QImage image = view->renderImage(QSize(1200, 800));
    QCOMPARE(image.size(), QSize(1200, 800));
    int coloured = 0;
    for (int y = 0; y < 800; ++y) {
        const QColor c = image.pixelColor(600, y);
        coloured += (c.saturation() > 60);
    }
    QVERIFY2(coloured > 40, qPrintable(QString::number(coloured)));

    // A reload keeps the comparison open with its title (it used to be taken for profile 0 and
    // closed); deleting one of its profiles closes it.
    const int tabs = window->tabs()->count();
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    window->reloadProfiles();
    QVERIFY(reloaded.wait(30000));
    QCOMPARE(window->tabs()->count(), tabs);
    QCOMPARE(window->tabs()->tabText(window->tabs()->indexOf(view)),
             QString("allgather-pinned vs allgather"));
    qint64 pinned = -1;
    for (const ProfileInfo& p : Workspace::open(window->workspacePath().toStdString())->profiles())
        if (p.name == "allgather-pinned") pinned = p.id;
    QVERIFY(pinned >= 0);
    window->deleteProfile(pinned);
    QTRY_COMPARE_WITH_TIMEOUT(window->tabs()->count(), tabs - 1, 30000);
}

void TestGui::eachKindOpensItsOwnView() {
    const QString cpi = dir_->path() + "/stacks.csv";
    writeFile(cpi,
              "kernel,source,category,cycles\n"
              "gemm,hw,selected,100\ngemm,hw,long_scoreboard,300\n"
              "gemm,amali,selected,90\ngemm,amali,long_scoreboard,250\n");
    const QString noise = dir_->path() + "/noise.csv";
    QByteArray rows = "region,mode,k,time_ns\n";
    for (int k = 0; k <= 40; k += 4)
        rows += "loop,fp_add64," + QByteArray::number(k) + "," +
                QByteArray::number(k <= 12 ? 100 : 100 + 5 * (k - 12)) + "\n";
    writeFile(noise, rows);
    auto window = makeWindow();
    QVERIFY(importInto(*window, {cpi, noise}));
    std::optional<ProfileInfo> cpiProfile, noiseProfile;
    for (const ProfileInfo& p :
         Workspace::open(window->workspacePath().toStdString())->profiles()) {
        if (p.kind == "cpi") cpiProfile = p;
        if (p.kind == "noise") noiseProfile = p;
    }
    QVERIFY(cpiProfile && noiseProfile);
    QVERIFY(qobject_cast<CpiView*>(window->openProfile(*cpiProfile)));
    QVERIFY(qobject_cast<AbsorptionView*>(window->openProfile(*noiseProfile)));
    QCOMPARE(window->tabs()->count(), 2);
    // The tree follows the current tab, and the suggestions dock shows what that tab's view
    // derived (kept per profile, so switching back brings them back).
    QCOMPARE(window->profileTree()->currentItem()->text(0), QString("noise"));
    window->tabs()->setCurrentIndex(0);
    QCOMPARE(window->profileTree()->currentItem()->text(0), QString("stacks"));
    const auto showsCpiSuggestions = [&] {
        const auto items = window->suggestionsDock()->suggestions();
        return !items.isEmpty() && items.front().text.contains("long_scoreboard");
    };
    QTRY_VERIFY_WITH_TIMEOUT(showsCpiSuggestions(), 20000);
    window->tabs()->setCurrentIndex(1);
    QCOMPARE(window->profileTree()->currentItem()->text(0), QString("noise"));
    QVERIFY(!showsCpiSuggestions());
    window->tabs()->setCurrentIndex(0);
    QVERIFY(showsCpiSuggestions());

    // Two profiles of either kind open side by side (loaded on a worker).
    const QString cpi2 = dir_->path() + "/stacks2.csv";
    writeFile(cpi2,
              "kernel,source,category,cycles\n"
              "gemm,hw,selected,100\ngemm,hw,long_scoreboard,100\n"
              "gemm,amali,selected,90\ngemm,amali,long_scoreboard,150\n");
    const QString noise2 = dir_->path() + "/noise2.csv";
    rows = "region,mode,k,time_ns\n";
    for (int k = 0; k <= 40; k += 4)
        rows += "loop,fp_add64," + QByteArray::number(k) + "," +
                QByteArray::number(k <= 20 ? 100 : 100 + 5 * (k - 20)) + "\n";
    writeFile(noise2, rows);
    QVERIFY(importInto(*window, {cpi2, noise2}));
    std::optional<ProfileInfo> cpiProfile2, noiseProfile2;
    for (const ProfileInfo& p :
         Workspace::open(window->workspacePath().toStdString())->profiles()) {
        if (p.name == "stacks2") cpiProfile2 = p;
        if (p.name == "noise2") noiseProfile2 = p;
    }
    QVERIFY(cpiProfile2 && noiseProfile2);
    auto* cpiCompare =
        qobject_cast<CpiCompareView*>(window->openComparison(*cpiProfile, *cpiProfile2));
    QVERIFY(cpiCompare);
    QTRY_VERIFY_WITH_TIMEOUT(cpiCompare->isLoaded(), 20000);
    // hw: gemm 400 -> 200 cycles, its stall (long_scoreboard) 300 -> 100.
    QCOMPARE(cpiCompare->summary(),
             QString("B vs A (hw): \u221250.0% cycles, \u221266.7% stall cycles over 1 kernel"));
    QCOMPARE(window->tabs()->tabText(window->tabs()->currentIndex()), QString("stacks2 vs stacks"));
    auto* noiseCompare =
        qobject_cast<NoiseCompareView*>(window->openComparison(*noiseProfile, *noiseProfile2));
    QVERIFY(noiseCompare);
    QTRY_VERIFY_WITH_TIMEOUT(noiseCompare->isLoaded(), 20000);
    QCOMPARE(noiseCompare->comparison().curves.size(), size_t(1));
    QCOMPARE(noiseCompare->comparison().curves[0].a.fit.k1, 12.0);
    QCOMPARE(noiseCompare->comparison().curves[0].b.fit.k1, 20.0);
    QCOMPARE(window->tabs()->count(), 4);
    // Different kinds: nothing opens.
    QVERIFY(!window->openComparison(*cpiProfile, *noiseProfile));
    QCOMPARE(window->tabs()->count(), 4);
}

void TestGui::renderedDockShowsTheTree() {
    auto window = makeWindow();
    QVERIFY(importInto(*window, {writeContractTrace()}));
    QTreeWidget* tree = window->profileTree();
    QTreeWidgetItem* group = tree->topLevelItem(0);
    QTreeWidgetItem* item = group->child(0);

    // Rows: the group first, its profile right below and indented.
    const QRect groupRect = tree->visualItemRect(group);
    const QRect itemRect = tree->visualItemRect(item);
    QVERIFY(groupRect.isValid() && itemRect.isValid());
    QCOMPARE(groupRect.top(), 0);
    QCOMPARE(itemRect.top(), groupRect.bottom() + 1);
    QVERIFY(tree->visualRect(tree->model()->index(0, 0, tree->model()->index(0, 0))).left() >
            tree->visualRect(tree->model()->index(0, 0)).left());

    const QImage image = tree->viewport()->grab().toImage();
    QVERIFY(!image.isNull());
    // Text is drawn in both rows; the area under the last row is plain background.
    QVERIFY(distinctColors(image, groupRect.adjusted(0, 1, 0, -1)) > 2);
    QVERIFY(distinctColors(image, itemRect.adjusted(0, 1, 0, -1)) > 2);
    const QRect below(0, itemRect.bottom() + 4, image.width(), 10);
    if (below.bottom() < image.height()) QCOMPARE(distinctColors(image, below), 1);

    const QImage whole = window->grab().toImage();
    const QRect dockArea =
        window->findChild<QDockWidget*>("workspaceDock")->geometry().intersected(whole.rect());
    QVERIFY(!dockArea.isEmpty());
    QVERIFY(distinctColors(whole, dockArea) > 4);

    // For humans: STALLSCOPE_SCREENSHOT=/tmp/main.png saves the window with a tab open, plus
    // main-empty.png (new workspace), main-welcome.png (no tab) and main-importing.png.
    if (const QString shot = qEnvironmentVariable("STALLSCOPE_SCREENSHOT"); !shot.isEmpty()) {
        const QString base = shot.left(shot.lastIndexOf('.'));
        MainWindow fresh(dir_->filePath("empty.sqlite"));
        QSignalSpy freshLoaded(&fresh, &MainWindow::profilesReloaded);
        fresh.resize(1280, 800);
        fresh.show();
        QVERIFY(freshLoaded.wait(30000));
        QTest::qWait(50);
        QVERIFY(fresh.grab().save(base + "-empty.png"));

        window->resize(1280, 800);
        QTest::qWait(50);
        QVERIFY(window->grab().save(base + "-welcome.png"));

        const QString big = dir_->filePath("big.jsonl");
        writeFile(big, largeTrace(600000));
        QSignalSpy progress(window->importRunner(), &ImportRunner::progressChanged);
        QSignalSpy finished(window.get(), &MainWindow::importFinished);
        window->importFiles({big});
        progress.wait(30000);
        QVERIFY(window->grab().save(base + "-importing.png"));
        window->cancelImport();
        QVERIFY(finished.wait(30000));

        window->openProfile(*window->workspaceDock()->profile(
            item->data(0, WorkspaceDock::kProfileIdRole).toLongLong()));
        window->setSuggestions(
            {{"hoist-dma", "Issue DMA 3 at instruction 0 to overlap it with the scalar setup", 396},
             {"pin-addresses", "Pin the node addresses to skip 12 setup DMAs", 5120}});
        QTest::qWait(50);
        QVERIFY(window->grab().save(shot));
    }
}

void TestGui::recentWorkspacesPersist() {
    MainWindow::clearRecentWorkspaces();
    for (int i = 0; i < 10; ++i)
        MainWindow::addRecentWorkspace(dir_->filePath(QString("w%1").arg(i)));
    MainWindow::addRecentWorkspace(dir_->filePath("w5"));  // again: moves to the front

    QStringList expected{dir_->filePath("w5")};
    for (int i = 9; expected.size() < MainWindow::kMaxRecentWorkspaces; --i)
        if (i != 5) expected << dir_->filePath(QString("w%1").arg(i));
    QCOMPARE(MainWindow::recentWorkspaces(), expected);

    // Stored, not just cached: a fresh QSettings reads the same list.
    QSettings settings;
    settings.sync();
    QCOMPARE(QSettings().value("recentWorkspaces").toStringList(), expected);

    // Opening a window puts its workspace first.
    auto window = makeWindow();
    QCOMPARE(MainWindow::recentWorkspaces().front(), workspacePath());
    QCOMPARE(MainWindow::recentWorkspaces().size(), MainWindow::kMaxRecentWorkspaces);

    // Switching workspaces records the new one and shows it in the title.
    const QString other = dir_->filePath("other.sqlite");
    QSignalSpy reloaded(window.get(), &MainWindow::profilesReloaded);
    QVERIFY(window->openWorkspace(other));
    QVERIFY(reloaded.wait(30000));
    QCOMPARE(MainWindow::recentWorkspaces().front(), other);
    QVERIFY(window->windowTitle().contains("other.sqlite"));
}

void TestGui::layoutPersists() {
    {
        auto window = makeWindow();
        for (QDockWidget* dock : window->findChildren<QDockWidget*>())
            QVERIFY2(!dock->objectName().isEmpty(), qPrintable(dock->windowTitle()));
        QVERIFY(window->windowTitle().contains("workspace.sqlite"));
        window->findChild<QDockWidget*>("detailsDock")->hide();
        window->resize(1000, 700);
        window->close();
    }
    QVERIFY(QSettings().contains("MainWindow/state"));
    auto window = makeWindow();
    QVERIFY(window->findChild<QDockWidget*>("detailsDock")->isHidden());
    QVERIFY(window->findChild<QDockWidget*>("workspaceDock")->isVisible());
    QCOMPARE(window->size(), QSize(1000, 700));
}

void TestGui::questionMarkOpensTheKeySheet() {
    // Issue 32 (Perfetto's habits): `?` opens a sheet of the keys, and the welcome page names
    // the traces most people bring.
    auto window = makeWindow();
    auto* welcome = window->findChild<WelcomePage*>();
    QVERIFY(welcome);
    QStringList texts;
    for (const QLabel* label : welcome->findChildren<QLabel*>()) texts << label->text();
    QVERIFY(texts.join(" ").contains("PyTorch profiler"));
    QVERIFY(texts.join(" ").contains("XProf"));
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    QTest::keyClick(window.get(), '?');
    QTRY_VERIFY(window->findChild<ShortcutSheet*>());
    ShortcutSheet* sheet = window->findChild<ShortcutSheet*>();
    QVERIFY(sheet->isVisible());
    // Every single key the sheet lists for the timeline is one the timeline answers.
    TimelineView timeline;
    timeline.setWindow({0, 1000});
    const QMap<QString, QList<int>> keys{{"W / S", {Qt::Key_W, Qt::Key_S}},
                                         {"A / D", {Qt::Key_A, Qt::Key_D}},
                                         {"F", {Qt::Key_F}},
                                         {"Home", {Qt::Key_Home}},
                                         {"Esc", {Qt::Key_Escape}}};
    int checked = 0;
    const QList<ShortcutSheet::Group> groups = ShortcutSheet::groups();
    for (const ShortcutSheet::Entry& e : groups.front().entries)
        for (int key : keys.value(e.keys)) {
            QVERIFY2(timeline.navigateByKey(key), qPrintable(e.keys));
            ++checked;
        }
    QCOMPARE(checked, 7);
    if (qEnvironmentVariableIsSet("STALLSCOPE_KEEP_RENDERS")) {
        const QString dir = qEnvironmentVariable("STALLSCOPE_KEEP_RENDERS");
        window->grab().save(dir + "/welcome.png");
        sheet->grab().save(dir + "/key-sheet.png");
    }
    sheet->close();
}

void TestGui::statusTipsLeaveTheStatusLine() {
    // Issue 32 #7: hovering the Import button put its tip over the status message.
    auto window = makeWindow();
    QVERIFY(importInto(*window, {writeContractTrace()}));
    const QString message = window->statusText();
    QVERIFY(!message.isEmpty());
    QStatusTipEvent tip("Import traces and results into the workspace");
    QCoreApplication::sendEvent(window.get(), &tip);
    QVERIFY(window->statusBar()->currentMessage().isEmpty());
    QCOMPARE(window->statusText(), message);
    // The tip is the button's tooltip instead.
    QToolBar* toolbar = window->findChild<QToolBar*>();
    QVERIFY(toolbar);
    QCOMPARE(toolbar->actions().front()->toolTip(),
             QString("Import traces and results into the workspace"));
}

void TestGui::aboutNamesLibraryVersions() {
    const QString text = MainWindow::aboutText();
    QVERIFY(text.contains(STALLSCOPE_VERSION));
    QVERIFY(text.contains(qVersion()));
    for (const char* library : {"SQLite", "zstd", "protobuf"}) QVERIFY(text.contains(library));
}

// A merged run (shards hold the timelines): clicking rank 2's step 3 in its Hosts tab opens a
// tab of rank 2's shard at that step; asking again focuses that tab.
void TestGui::mergedRunHostOpensFromItsShard() {
    const QString run = dir_->filePath("run");
    QProcess gen;
    gen.start("python3", {STALLSCOPE_GEN_MULTIHOST, run, "--hosts", "4", "--steps", "5",
                          "--kernels", "10", "--straggler-rank", "2", "--straggler-step", "3"});
    QVERIFY(gen.waitForFinished(60000));
    QCOMPARE(gen.exitCode(), 0);
    auto shard = [&](const QString& name, int from) {
        const std::string path = dir_->filePath(name).toStdString();
        auto ws = Workspace::open(path);
        Progress progress;
        ImportRequest request{
            {(run + QString("/rank-%1.pt.trace.json").arg(from)).toStdString(),
             (run + QString("/rank-%1.pt.trace.json").arg(from + 1)).toStdString()},
            {},
            {}};
        request.asOne = true;
        trace::loadOrAnalyzeHosts(*ws, importFiles(*ws, request, progress).at(0).id);
        return path;
    };
    const std::vector<std::string> shards{shard("shard0.sqlite", 0), shard("shard1.sqlite", 2)};
    {
        auto ws = Workspace::open(workspacePath().toStdString());
        Progress progress;
        mergeShards(*ws, shards, "run", progress);
    }
    auto window = makeWindow();
    auto* merged = qobject_cast<TraceView*>(
        window->openProfile(*Workspace::open(workspacePath().toStdString())->profile(1)));
    QVERIFY(merged);
    QTRY_VERIFY_WITH_TIMEOUT(merged->panel<HostsTracePanel>()->result() != nullptr, 30000);
    merged->panel<HostsTracePanel>()->showHostStep(2, 3);
    QTabWidget* tabs = window->tabs();
    QTRY_COMPARE(tabs->count(), 2);
    QCOMPARE(tabs->tabText(1), QString("rank 2 (shard)"));
    QVERIFY(tabs->tabToolTip(1).contains("shard1.sqlite"));
    auto* host = qobject_cast<TraceView*>(tabs->widget(1));
    QVERIFY(host);
    QCOMPARE(tabs->currentWidget(), host);
    QTRY_VERIFY_WITH_TIMEOUT(host->panel<HostsTracePanel>()->result() != nullptr, 30000);
    const trace::HostsAnalysis& hosts = *host->panel<HostsTracePanel>()->result();
    QCOMPARE(hosts.hosts[0].host.name, std::string("rank 2"));
    const trace::HostStep& step = hosts.hosts[0].steps.at(3);
    QCOMPARE(step.name, std::string("ProfilerStep#3"));
    const double origin = double(host->source()->origin());
    QTRY_VERIFY(host->timeline()->window().length() < double(step.duration) * 1.2);
    QVERIFY(host->timeline()->window().start <= double(step.start) - origin);
    // Again: the same tab, focused.
    tabs->setCurrentIndex(0);
    merged->panel<HostsTracePanel>()->showHostStep(2, 1);
    QCOMPARE(tabs->count(), 2);
    QCOMPARE(tabs->currentWidget(), host);
}

QTEST_MAIN(TestGui)
#include "test_gui.moc"
