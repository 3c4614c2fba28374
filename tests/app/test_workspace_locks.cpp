// The GUI's data-loss bug (issue 32): anything in the process that opened and closed the open
// workspace's files by name dropped the SQLite (fcntl) locks of the whole process, so another
// process took the workspace as unused, checkpointed it and deleted its -wal and -shm files
// under the GUI; the GUI's later imports went to the deleted WAL and their ids were reused.
// Each test leaves the process holding the workspace, does what the user did, then runs the
// command line on the same workspace and checks that the GUI's files and data survive.

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileSystemModel>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <memory>

#include "core/errors.h"
#include "core/open_workspaces.h"
#include "core/progress.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/export.h"
#include "views/common/file_dialogs.h"

using namespace stallscope;

namespace {

const char* const kTrace =
    R"({"traceEvents":[{"ph":"X","name":"step","pid":1,"tid":1,"ts":0,"dur":10},)"
    R"({"ph":"X","name":"kernel","pid":1,"tid":1,"ts":2,"dur":5}]})";

void writeFile(const QString& path, const QByteArray& content) {
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    QCOMPARE(file.write(content), content.size());
}

QString runCli(const QStringList& args, int* exitCode = nullptr) {
    QProcess p;
    p.start(STALLSCOPE_BINARY, args);
    if (!p.waitForFinished(60000)) return "timeout";
    if (exitCode) *exitCode = p.exitCode();
    return QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
}

// Whether this process still holds `path` open under its name (not "(deleted)").
bool heldUndeleted(const QString& path) {
    const QString wanted = QFileInfo(path).canonicalFilePath();
    if (wanted.isEmpty()) return false;  // gone from the folder
    for (const QFileInfo& fd : QDir("/proc/self/fd").entryInfoList(QDir::System | QDir::Files)) {
        const QString target = fd.symLinkTarget();
        if (target == wanted) return true;
    }
    return false;
}

}  // namespace

class TestWorkspaceLocks : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString store_, trace_;
    std::unique_ptr<Workspace> ws_;

    // What the GUI holds: an open workspace with a profile written through its own connection.
    void openAsGui() {
        ws_ = Workspace::open(store_.toStdString());
        Progress progress;
        importFiles(*ws_, {{trace_.toStdString()}, "gui-first", ""}, progress);
        QVERIFY(QFileInfo::exists(store_ + "-wal"));
        QVERIFY(heldUndeleted(store_ + "-wal"));
    }

    // The command line on the same workspace must see the GUI's work and leave its files alone;
    // a profile the GUI imports afterwards must be visible to the next command and keep its id.
    void checkSharedWithCommandLine() {
        int code = -1;
        QString out = runCli({"--store", store_, "list"}, &code);
        QCOMPARE(code, 0);
        QVERIFY2(out.contains("gui-first"), qPrintable(out));
        QVERIFY2(heldUndeleted(store_ + "-wal"), "the GUI's -wal was deleted under it");
        QVERIFY2(heldUndeleted(store_ + "-shm"), "the GUI's -shm was deleted under it");
        Progress progress;
        const auto second = importFiles(*ws_, {{trace_.toStdString()}, "gui-second", ""}, progress);
        QCOMPARE(second.size(), size_t(1));
        out = runCli({"--store", store_, "list", "--json"}, &code);
        QCOMPARE(code, 0);
        QVERIFY2(out.contains("gui-second"), qPrintable(out));
        out = runCli({"--store", store_, "import", "--name", "cli", trace_}, &code);
        QCOMPARE(code, 0);
        QVERIFY2(!out.startsWith(QString::number(second.front().id) + "\t"), qPrintable(out));
        QCOMPARE(ws_->profiles().size(), size_t(3));
    }

  private slots:
    void init() {
        QVERIFY(dir_.isValid());
        store_ = dir_.filePath("w.sqlite");
        trace_ = dir_.filePath("t.json");
        QFile::remove(store_);
        QFile::remove(store_ + "-wal");
        QFile::remove(store_ + "-shm");
        writeFile(trace_, kTrace);
    }
    void cleanup() { ws_.reset(); }

    // Import… pointed at the workspace's folder lists w.sqlite, -wal and -shm: the dialog must
    // not read them to find their types and icons.
    void fileDialogListingTheWorkspaceKeepsItsLocks() {
        openAsGui();
        QFileDialog dialog(nullptr, "Import Files", dir_.path());
        dialogs::makeContentBlind(dialog);
        dialog.setFileMode(QFileDialog::ExistingFiles);
        dialog.show();
        auto* model = dialog.findChild<QFileSystemModel*>();
        QVERIFY(model);
        const QModelIndex root = model->index(dir_.path());
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount(root) >= 4, 5000);
        for (int row = 0; row < model->rowCount(root); ++row)
            for (int column = 0; column < model->columnCount(root); ++column) {
                model->data(model->index(row, column, root), Qt::DisplayRole);
                model->data(model->index(row, column, root), Qt::DecorationRole);
            }
        // The types the dialog shows come from the names (the icon gatherer runs on a thread).
        QTest::qWait(300);
        const QModelIndex workspace = model->index(store_);
        QCOMPARE(model->data(workspace.siblingAtColumn(2)).toString(), QString("File"));
        dialog.reject();
        checkSharedWithCommandLine();
    }

    // A dropped or chosen workspace file is refused by name, before it is opened.
    void importingTheWorkspaceItselfIsRefusedWithoutOpeningIt() {
        openAsGui();
        for (const QString& path : {store_, store_ + "-wal", store_ + "-shm"}) {
            Progress progress;
            try {
                importFiles(*ws_, {{path.toStdString()}, "", ""}, progress);
                QFAIL("importing the open workspace was accepted");
            } catch (const InputError& e) {
                QVERIFY2(QString(e.what()).contains("open Stallscope workspace"), e.what());
            }
        }
        // Another spelling of the same file (a link) is the same file.
        const QString link = dir_.filePath("link.sqlite");
        QVERIFY(QFile::link(store_, link));
        QVERIFY(isOpenWorkspaceFile(link.toStdString()));
        QVERIFY(!isOpenWorkspaceFile(trace_.toStdString()));
        checkSharedWithCommandLine();
    }

    // Exports never write over the workspace (a PNG saved as w.sqlite destroyed it).
    void exportsRefuseTheWorkspace() {
        openAsGui();
        QString error;
        QImage image(4, 4, QImage::Format_RGB32);
        image.fill(Qt::white);
        QVERIFY(!exporting::writeImageFile(store_, image, &error));
        QVERIFY2(error.contains("open workspace"), qPrintable(error));
        QVERIFY(!exporting::writeTextFile(store_ + "-wal", "a,b\n", &error));
        checkSharedWithCommandLine();
    }

    // The workspace is no longer in the list once closed (a later import of it is a plain
    // "not a trace" error from its importer, not a refusal).
    void closedWorkspaceIsForgotten() {
        openAsGui();
        QVERIFY(isOpenWorkspaceFile(store_.toStdString()));
        ws_.reset();
        QVERIFY(!isOpenWorkspaceFile(store_.toStdString()));
    }
};

QTEST_MAIN(TestWorkspaceLocks)
#include "test_workspace_locks.moc"
