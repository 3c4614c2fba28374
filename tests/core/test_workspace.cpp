#include <sys/stat.h>

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/cpi/cpi.h"
#include "core/errors.h"
#include "core/sqlite.h"
#include "core/workspace.h"

using namespace stallscope;

namespace {
QByteArray fileHash(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

int scalar(sqlite3* db, const char* sql) {
    sql::Statement st(db, sql);
    return st.step() ? static_cast<int>(st.int64(0)) : -1;
}
}  // namespace

class TestWorkspace : public QObject {
    Q_OBJECT
  private slots:
    void createsCurrentSchema() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/ws.sqlite").toStdString();
        auto ws = Workspace::open(path);
        QCOMPARE(ws->schemaVersion(), Workspace::kSchemaVersion);
        QCOMPARE(scalar(ws->db(), "PRAGMA application_id"), Workspace::kApplicationId);
        sql::Statement mode(ws->db(), "PRAGMA journal_mode");
        QVERIFY(mode.step());
        QCOMPARE(QString::fromStdString(mode.text(0)), QString("wal"));
        QCOMPARE(scalar(ws->db(), "PRAGMA foreign_keys"), 1);
        QCOMPARE(scalar(ws->db(),
                        "SELECT count(*) FROM sqlite_master WHERE name IN "
                        "('profiles','blobs')"),
                 2);
        QVERIFY(ws->profiles().empty());
    }

    void migratesOlderSchemaKeepingData() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/old.sqlite").toStdString();
        Workspace::createAtVersion(path, 1);
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QCOMPARE(scalar(db, "PRAGMA user_version"), 1);
            sql::exec(db,
                      "INSERT INTO profiles(name, kind, imported_at) VALUES('old run', 'replay', "
                      "'2026-01-01T00:00:00Z')");
            sqlite3_close(db);
        }
        auto ws = Workspace::open(path);
        QCOMPARE(ws->schemaVersion(), Workspace::kSchemaVersion);
        QCOMPARE(scalar(ws->db(),
                        "SELECT count(*) FROM sqlite_master WHERE name IN "
                        "('noise_runs','cpi_stacks','kernel_metric_sets','kernel_metric_names',"
                        "'estimates')"),
                 5);
        // The old one-row-per-metric table is gone after 4 -> 5.
        QCOMPARE(
            scalar(ws->db(), "SELECT count(*) FROM sqlite_master WHERE name = 'kernel_metrics'"),
            0);
        const auto profiles = ws->profiles();
        QCOMPARE(profiles.size(), size_t(1));
        QCOMPARE(QString::fromStdString(profiles[0].name), QString("old run"));
        QVERIFY(!profiles[0].parentId.has_value());
        ws->appendBlob(profiles[0].id, "replay", 0, "xyz", 3);
        QCOMPARE(ws->readBlobs(profiles[0].id, "replay").at(0), std::string("xyz"));
    }

    // Schema 4 kept one row per kernel metric; 5 packs them per kernel. The rows of a version-4
    // workspace come back through the loaders unchanged and in order.
    // An empty string_view without a data pointer binds as empty text, not NULL (a NOT NULL
    // column would refuse it); NULL is bindNull's job.
    void emptyViewBindsAsText() {
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(":memory:", &db), SQLITE_OK);
        sql::exec(db, "CREATE TABLE t(v TEXT NOT NULL)");
        {
            sql::Statement insert(db, "INSERT INTO t(v) VALUES(?)");
            insert.bind(1, std::string_view());
            insert.exec();
            sql::Statement read(db, "SELECT typeof(v), length(v) FROM t");
            QVERIFY(read.step());
            QCOMPARE(read.text(0), std::string("text"));
            QCOMPARE(read.int64(1), int64_t(0));
        }
        sqlite3_close(db);
    }

    void migratesKernelMetricRowsToSets() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/v4.sqlite").toStdString();
        Workspace::createAtVersion(path, 4);
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            sql::exec(
                db,
                "INSERT INTO profiles(id, name, kind, imported_at) VALUES"
                "(1, 'ncu a', 'cpi', '2026-01-01T00:00:00Z'),"
                "(2, 'ncu b', 'cpi', '2026-01-01T00:00:00Z');"
                "INSERT INTO kernel_metrics(profile_id, kernel, source, name, unit, value, text)"
                " VALUES"
                "(1, '#0 gemm', 'hw', 'Elapsed Cycles', 'cycle', 13485, NULL),"
                "(1, '#0 gemm', 'hw', 'Grid Size', '', NULL, '(224, 1, 1)'),"
                "(2, '#0 relu', 'hw', 'Elapsed Cycles', 'cycle', 2000, NULL),"
                "(1, '#1 relu', 'hw', 'Elapsed Cycles', 'cycle', 512, NULL),"
                "(1, '#1 relu', 'hw', 'rule: Occupancy', 'OPT', 80.34, 'long text');");
            sqlite3_close(db);
        }
        auto ws = Workspace::open(path);
        QCOMPARE(ws->schemaVersion(), Workspace::kSchemaVersion);
        const auto a = cpi::loadKernelMetrics(*ws, 1);
        QCOMPARE(a.size(), size_t(2));
        QCOMPARE(a[0].kernel, std::string("#0 gemm"));
        QCOMPARE(a[0].metrics.size(), size_t(2));
        QCOMPARE(a[0].metrics[0].name, std::string("Elapsed Cycles"));
        QCOMPARE(a[0].metrics[0].unit, std::string("cycle"));
        QCOMPARE(a[0].metrics[0].value.value(), 13485.0);
        QVERIFY(!a[0].metrics[1].value);
        QCOMPARE(a[0].metrics[1].text, std::string("(224, 1, 1)"));
        QCOMPARE(a[1].kernel, std::string("#1 relu"));
        QCOMPARE(a[1].metrics[1].value.value(), 80.34);
        QCOMPARE(a[1].metrics[1].text, std::string("long text"));
        const auto b = cpi::loadKernelMetrics(*ws, 2);
        QCOMPARE(b.size(), size_t(1));
        QCOMPARE(b[0].metrics[0].value.value(), 2000.0);
        // Profile 1 names three (name, unit) pairs: Elapsed Cycles, Grid Size, the rule.
        QCOMPARE(scalar(ws->db(), "SELECT count(*) FROM kernel_metric_names WHERE profile_id = 1"),
                 3);
        // Deleting a profile takes its sets and names along.
        ws->deleteProfile(1);
        QCOMPARE(scalar(ws->db(), "SELECT count(*) FROM kernel_metric_sets"), 1);
        QCOMPARE(scalar(ws->db(), "SELECT count(*) FROM kernel_metric_names"), 1);
    }

    void refusesNewerSchemaUntouched() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/new.sqlite").toStdString();
        { Workspace::open(path); }
        {
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            sql::exec(db, "PRAGMA user_version = 99");
            sql::exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
            sqlite3_close(db);
        }
        const QByteArray before = fileHash(QString::fromStdString(path));
        try {
            Workspace::open(path);
            QFAIL("a newer schema must be refused");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("schema version 99 is newer"), e.what());
        }
        QCOMPARE(fileHash(QString::fromStdString(path)), before);
    }

    void refusesFilesThatAreNotWorkspaces() {
        QTemporaryDir dir;
        const QString text = dir.path() + "/notes.txt";
        QFile f(text);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not a database, it is a shopping list\n");
        f.close();
        const QByteArray before = fileHash(text);
        QVERIFY_THROWS_EXCEPTION(InputError, Workspace::open(text.toStdString()));
        QCOMPARE(fileHash(text), before);

        // An SQLite file of another program.
        const std::string other = (dir.path() + "/other.sqlite").toStdString();
        sqlite3* db = nullptr;
        sqlite3_open(other.c_str(), &db);
        sql::exec(db, "CREATE TABLE names(id INTEGER, name TEXT)");
        sqlite3_close(db);
        try {
            Workspace::open(other);
            QFAIL("foreign SQLite file accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("another program"), e.what());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, Workspace::open(dir.path().toStdString()));
    }

    void refusesReadOnlyWorkspaceForWriting() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/ro.sqlite").toStdString();
        { Workspace::open(path); }
        QVERIFY(::chmod(path.c_str(), 0444) == 0);
        try {
            Workspace::open(path);
            QFAIL("read-only workspace opened for writing");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("read-only"), e.what());
        }
        auto ro = Workspace::open(path, Workspace::Mode::ReadOnly);
        QVERIFY(ro->readOnly());
        QVERIFY(ro->profiles().empty());
    }

    void namesRenameDelete() {
        QTemporaryDir dir;
        auto ws = Workspace::open((dir.path() + "/ws.sqlite").toStdString());
        ProfileInfo p;
        p.name = ws->uniqueName("run");
        p.kind = "replay";
        const int64_t a = ws->insertProfile(p);
        p.name = ws->uniqueName("run");
        QCOMPARE(QString::fromStdString(p.name), QString("run (2)"));
        const int64_t b = ws->insertProfile(p);
        QVERIFY_THROWS_EXCEPTION(InputError, ws->renameProfile(b, "run"));
        ws->renameProfile(b, "after fix");
        QCOMPARE(QString::fromStdString(ws->resolveProfile("after fix").name),
                 QString("after fix"));
        QCOMPARE(ws->resolveProfile(std::to_string(a)).id, a);
        QVERIFY_THROWS_EXCEPTION(InputError, ws->resolveProfile("nope"));
        ws->appendBlob(a, "replay", 0, "abc", 3);
        ws->deleteProfile(a);
        QCOMPARE(scalar(ws->db(), "SELECT count(*) FROM blobs"), 0);  // cascaded
        QCOMPARE(ws->profiles().size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestWorkspace)
#include "test_workspace.moc"
