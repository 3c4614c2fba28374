// Faults a workspace must survive, with the real binary as users run it: an import killed at
// random points, a full disk (a file size limit), a read-only workspace, and two imports into one
// new workspace at the same moment. After each, the workspace passes SQLite's integrity check,
// holds nothing of the failed import, and takes the next one.
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>

namespace {

struct Run {
    int status = -1;
    QString out, err;
};

// A Chrome trace of `events` nested X events on 8 threads (~100 bytes an event).
QString writeTrace(const QString& path, int events) {
    FILE* f = std::fopen(path.toLocal8Bit().constData(), "wb");
    if (!f) qFatal("cannot write %s", qPrintable(path));
    std::fputs("{\"traceEvents\":[\n", f);
    for (int i = 0; i < events; ++i)
        std::fprintf(f,
                     "%s{\"ph\":\"X\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,"
                     "\"dur\":%d,\"args\":{\"i\":%d}}\n",
                     i ? "," : "", i % 97, i % 8, i / 8 * 3, i % 1000, 2 + i % 5, i);
    std::fputs("]}\n", f);
    std::fclose(f);
    return path;
}

// Opens the file directly with SQLite: what PRAGMA integrity_check says, and a count.
QString integrity(const QString& store) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(store.toLocal8Bit().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
    QString result =
        sqlite3_step(st) == SQLITE_ROW
            ? QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)))
            : QString("no answer: ") + sqlite3_errmsg(db);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return result;
}

qint64 scalar(const QString& store, const char* sql) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(store.toLocal8Bit().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    qint64 value = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        value = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return value;
}

// Rows of any table that belong to no stored profile: what an interrupted import would leave.
qint64 orphanRows(const QString& store) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(store.toLocal8Bit().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    QStringList tables;
    sqlite3_prepare_v2(db,
                       "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE "
                       "'%profile_id%'",
                       -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW)
        tables << QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(db);
    qint64 orphans = 0;
    for (const QString& table : tables) {
        const QByteArray sql = "SELECT count(*) FROM \"" + table.toUtf8() +
                               "\" WHERE profile_id NOT IN (SELECT id FROM profiles)";
        const qint64 n = scalar(store, sql.constData());
        if (n < 0) return -1;  // the query failed: never reads as "no orphans"
        orphans += n;
    }
    return tables.isEmpty() ? -1 : orphans;
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A rollback journal SQLite must play back: it starts with the journal magic (a journal cut
// short before its header was written, or zeroed at commit, is not).
bool isHotJournal(const QString& path) {
    static const QByteArray magic("\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", 8);
    return fileBytes(path).startsWith(magic);
}

// A workspace file without the header fields every write transaction bumps (the file change
// counter at 24 and the version-valid-for number at 92): switching the journal mode to write
// directly and back is two such transactions.
QByteArray withoutChangeCounters(QByteArray bytes) {
    if (bytes.size() >= 100) {
        bytes.replace(24, 4, QByteArray(4, '\0'));
        bytes.replace(92, 4, QByteArray(4, '\0'));
    }
    return bytes;
}

}  // namespace

class TestFaults : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString small_, large_;
    int hotJournals_ = 0;  // kills that left a rollback journal to recover

    Run run(const QString& store, const QStringList& args) {
        QProcess p;
        p.start(STALLSCOPE_BINARY, QStringList{"--store", store} + args);
        if (!p.waitForFinished(240000)) qFatal("stallscope did not finish");
        return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

    // Starts an import, kills it with SIGKILL after `ms`, and checks what is left.
    void killAt(const QString& store, const QString& input, int ms) {
        QProcess p;
        p.start(STALLSCOPE_BINARY,
                QStringList{"--store", store, "import", "--name", "killed", input});
        QVERIFY(p.waitForStarted());
        QTest::qWait(ms);
        p.kill();  // SIGKILL, through QProcess (no pid that may have been reused)
        p.waitForFinished(30000);
        // The command line writes through a rollback journal: killed mid-write, the main file
        // holds half-written pages until a writable connection rolls the journal back. The next
        // command does, even one that only reads (a query opens the workspace read-only).
        if (isHotJournal(store + "-journal")) {
            ++hotJournals_;
            const Run query = run(store, {"query", "--csv", "SELECT count(*) AS n FROM profile"});
            QVERIFY2(query.status == 0, qPrintable(query.err));
            QVERIFY2(query.out.contains("n\n1\n") || query.out.contains("n\n2\n"),
                     qPrintable(query.out));
            QVERIFY(!isHotJournal(store + "-journal"));
        }
        QCOMPARE(integrity(store), QString("ok"));
        const qint64 profiles = scalar(store, "SELECT count(*) FROM profiles");
        // Killed before its commit: nothing of it; after it: all of it.
        QVERIFY2(profiles == 1 || profiles == 2,
                 qPrintable(QString("%1 profiles after a kill at %2 ms").arg(profiles).arg(ms)));
        QCOMPARE(orphanRows(store), qint64(0));
        if (profiles == 2) {
            const Run info = run(store, {"info", "killed", "--json"});
            QCOMPARE(info.status, 0);
            const int expected = input == large_ ? 3000000 : 20000;
            QCOMPARE(QJsonDocument::fromJson(info.out.toUtf8()).object().value("slices").toInt(),
                     expected);
        }
    }

    // Back to one profile for the next kill (the schema cascades the rest).
    static void backToFirstProfile(const QString& store) {
        sqlite3* db = nullptr;
        sqlite3_open(store.toLocal8Bit().constData(), &db);
        sqlite3_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM profiles WHERE name != 'first'",
                     nullptr, nullptr, nullptr);
        sqlite3_close(db);
    }

  private slots:
    void initTestCase() {
        small_ = writeTrace(dir_.filePath("small.json"), 20000);    // ~2 MB
        large_ = writeTrace(dir_.filePath("large.json"), 3000000);  // ~300 MB
        QVERIFY(QFileInfo(large_).size() > 250'000'000);
    }

    void killedImportsLeaveTheWorkspaceSound() {
        QRandomGenerator random(20261124);
        const QString store = dir_.filePath("killed.sqlite");
        QCOMPARE(run(store, {"import", "--name", "first", small_}).status, 0);
        // Kills of the large import land within its length as measured here (it took about a
        // second on a fast machine: kills up to 2.5 s mostly came after it, and under a loaded
        // `ctest -j2` none left a journal now and then).
        QElapsedTimer timed;
        timed.start();
        QCOMPARE(run(dir_.filePath("timed.sqlite"), {"import", large_}).status, 0);
        const int largeMs = std::max(100, int(timed.elapsed()));
        QFile::remove(dir_.filePath("timed.sqlite"));
        for (int i = 0; i < 10; ++i) {
            const bool large = i % 2 == 1;
            const int ms = large ? random.bounded(largeMs / 4, largeMs) : random.bounded(5, 120);
            killAt(store, large ? large_ : small_, ms);
            if (QTest::currentTestFailed()) return;
            if (scalar(store, "SELECT count(*) FROM profiles") == 2)
                QCOMPARE(run(store, {"import", "--name", "again", small_}).status, 0);
            backToFirstProfile(store);
        }
        // Kills late in the large import land while it writes its pages: one must have left a
        // journal (tried from half its length to its end when none of the above did).
        for (int step = 0; hotJournals_ == 0 && step <= 10; ++step) {
            killAt(store, large_, largeMs / 2 + largeMs * step / 20);
            if (QTest::currentTestFailed()) return;
            backToFirstProfile(store);
        }
        qInfo("%d kills left a rollback journal (the large import took %d ms)", hotJournals_,
              largeMs);
        QVERIFY2(hotJournals_ > 0, "no kill left a journal: the recovery went unchecked");
        // The workspace takes the next import.
        const Run next = run(store, {"import", "--name", "next", small_});
        QVERIFY2(next.status == 0, qPrintable(next.err));
        QCOMPARE(scalar(store, "SELECT count(*) FROM profiles"), qint64(2));
        QCOMPARE(integrity(store), QString("ok"));
    }

    // A file size limit stands in for a full disk: writes past it fail with EFBIG (SIGXFSZ
    // ignored, as a shell's ulimit -f leaves it for the process to see). Two ways to fill it: the
    // workspace's own writes (a small import a little over the limit), and the temporary spill
    // file of a 300 MB import.
    void fullDiskFailsClearlyAndChangesNothing() {
        const QString store = dir_.filePath("full.sqlite");
        QCOMPARE(run(store, {"import", "--name", "first", small_}).status, 0);
        QCOMPARE(run(store, {"info", "first"}).status, 0);  // checkpointed, WAL empty
        const QByteArray before = fileBytes(store);
        struct Case {
            QString input;
            qint64 limit;
            const char* says;
        };
        // Limits below the workspace's own size and below what the large import spills (about
        // 30 MB encoded; its workspace grows to 40 MB).
        for (const Case& c : {Case{small_, 128 << 10, "disk is full"},
                              Case{large_, qint64(16) << 20, "spill file"}}) {
            QProcess p;
            const qint64 limit = c.limit;
            p.setChildProcessModifier([limit] {
                ::signal(SIGXFSZ, SIG_IGN);
                const rlimit r{rlim_t(limit), rlim_t(limit)};
                ::setrlimit(RLIMIT_FSIZE, &r);
            });
            p.start(STALLSCOPE_BINARY, {"--store", store, "import", "--name", "big", c.input});
            QVERIFY(p.waitForFinished(240000));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QVERIFY(p.exitCode() != 0);
            // The workspace named (its WAL filled) or the spill file: whichever filled first.
            QVERIFY2((err.contains(c.says) || err.contains(store + ": the disk is full")) &&
                         err.contains("nothing was stored"),
                     qPrintable(err));
            // Past the size limit the failed import cannot always write its pages back itself:
            // its journal stays for the next command to roll back (as after a kill).
            QCOMPARE(run(store, {"list"}).status, 0);
            QCOMPARE(integrity(store), QString("ok"));
            QCOMPARE(scalar(store, "SELECT count(*) FROM profiles"), qint64(1));
            QCOMPARE(orphanRows(store), qint64(0));
            // Every page as it was. The large import wrote the file directly (the journal
            // played back, the file cut to its old size), switching the journal mode there and
            // back: two header counters moved. The small one never left the WAL: not a byte.
            if (c.input == large_)
                QCOMPARE(withoutChangeCounters(fileBytes(store)), withoutChangeCounters(before));
            else
                QCOMPARE(fileBytes(store), before);
        }
        QCOMPARE(run(store, {"import", "--name", "after", small_}).status, 0);
    }

    void readOnlyWorkspaceOpensAndRefusesWrites() {
        const QString store = dir_.filePath("ro.sqlite");
        QCOMPARE(run(store, {"import", "--name", "first", small_}).status, 0);
        QVERIFY(
            QFile::setPermissions(store, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther));
        const QByteArray before = fileBytes(store);
        const Run list = run(store, {"list"});
        QCOMPARE(list.status, 0);
        QVERIFY(list.out.contains("first"));
        QCOMPARE(run(store, {"info", "first", "--json"}).status, 0);
        const Run import = run(store, {"import", small_});
        QCOMPARE(import.status, 2);
        QVERIFY2(import.err.contains(store) && import.err.contains("read-only"),
                 qPrintable(import.err));
        QCOMPARE(fileBytes(store), before);
        QVERIFY(QFile::setPermissions(store, QFile::ReadOwner | QFile::WriteOwner));
    }

    // Length prefixes that claim gigabytes in a file of a few bytes: refused with a clear error
    // under a 600 MB address-space limit (they used to be allocated first: std::bad_alloc).
    void lengthPrefixesAllocateNothingUnread() {
        const QString replay = dir_.filePath("hostile.ssrp");
        const QString chakra = dir_.filePath("hostile.0.et");
        {
            QFile f(replay);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                QByteArray("SSREPLAY\x01\x80\x80\x80\x80\x08"
                           "abc",
                           17));  // chunk 2^31
        }
        {
            QFile f(chakra);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                QByteArray("\x80\x80\x80\x80\x04"
                           "abc",
                           8));  // message of 2^30 bytes
        }
        const QString store = dir_.filePath("hostile.sqlite");
        struct Case {
            QString file, format, says;
        };
        for (const Case& c : {Case{replay, "replay-binary", "byte 14: truncated chunk"},
                              Case{chakra, "chakra-et", "the file ends inside a message"}}) {
            QProcess p;
            p.setChildProcessModifier([] {
                const rlimit limit{rlim_t(600) << 20, rlim_t(600) << 20};
                ::setrlimit(RLIMIT_AS, &limit);
            });
            p.start(STALLSCOPE_BINARY, {"--store", store, "import", "--format", c.format, c.file});
            QVERIFY(p.waitForFinished(60000));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QCOMPARE(p.exitCode(), 2);
            QVERIFY2(err.contains(c.file) && err.contains(c.says), qPrintable(err));
        }
    }

    void twoImportsIntoOneNewWorkspace() {
        // The last trial's first import is large: it writes the file directly (no WAL), and the
        // second waits for it or is told the workspace is busy; either way it must not remove
        // the new file the first is writing.
        for (int trial = 0; trial < 5; ++trial) {
            const QString store = dir_.filePath(QString("both%1.sqlite").arg(trial));
            QProcess a, b;
            a.start(STALLSCOPE_BINARY,
                    {"--store", store, "import", "--name", "a", trial == 4 ? large_ : small_});
            if (trial == 4) QTest::qWait(200);
            b.start(STALLSCOPE_BINARY, {"--store", store, "import", "--name", "b", small_});
            QVERIFY(a.waitForFinished(120000) && b.waitForFinished(120000));
            for (QProcess* p : {&a, &b}) {
                const QString err = QString::fromUtf8(p->readAllStandardError());
                // Both land, or one is told the workspace is busy: never a corrupt file.
                QVERIFY2(p->exitCode() == 0 || err.contains("busy"), qPrintable(err));
            }
            QCOMPARE(integrity(store), QString("ok"));
            QCOMPARE(scalar(store, "SELECT count(*) FROM profiles"),
                     qint64((a.exitCode() == 0) + (b.exitCode() == 0)));
            if (trial == 4) QCOMPARE(a.exitCode(), 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestFaults)
#include "test_faults.moc"
