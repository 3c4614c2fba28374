// Multi-host runs read on several threads (issue 15, item 2): the profile must be the one a
// one-worker import makes, row for row; a bad host file or a cancellation must leave the
// workspace as it was.
#include <sqlite3.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/importers/trace_fixtures.h"

using namespace stallscope;

namespace {

// Every row of `table` (blobs in hex), in primary-key order.
QStringList rowsOf(Workspace& ws, const QString& table, const QString& order) {
    QStringList rows;
    sqlite3_stmt* st = nullptr;
    const QByteArray sql = ("SELECT * FROM " + table + " ORDER BY " + order).toUtf8();
    if (sqlite3_prepare_v2(ws.db(), sql.constData(), -1, &st, nullptr) != SQLITE_OK)
        qFatal("cannot read %s: %s", qPrintable(table), sqlite3_errmsg(ws.db()));
    while (sqlite3_step(st) == SQLITE_ROW) {
        QStringList cells;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            if (sqlite3_column_type(st, c) == SQLITE_BLOB)
                cells << QByteArray(static_cast<const char*>(sqlite3_column_blob(st, c)),
                                    sqlite3_column_bytes(st, c))
                             .toHex();
            else
                cells << QString::fromUtf8(
                    reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
        }
        rows << cells.join('|');
    }
    sqlite3_finalize(st);
    return rows;
}

// The profile's metadata without the figures that time the import (*_ms).
QJsonObject untimed(const QJsonObject& o) {
    QJsonObject out;
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key().endsWith("_ms")) continue;
        out.insert(it.key(),
                   it.value().isObject() ? QJsonValue(untimed(it.value().toObject())) : it.value());
    }
    return out;
}

int count(Workspace& ws, const char* sql) {
    return int(rowsOf(ws, QString("(%1)").arg(sql), "1").value(0).toInt());
}

class ImportWorkers {
  public:
    explicit ImportWorkers(const char* n) { qputenv("STALLSCOPE_IMPORT_WORKERS", n); }
    ~ImportWorkers() { qunsetenv("STALLSCOPE_IMPORT_WORKERS"); }
};

}  // namespace

class TestParallelImport : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString run_;  // five generated Kineto ranks

    std::unique_ptr<Workspace> importWith(const char* workers, const std::string& source,
                                          const QString& store) {
        ImportWorkers forced(workers);
        auto ws = Workspace::open((dir_.path() + "/" + store).toStdString());
        Progress progress;
        importFiles(*ws, {{source}, "run", ""}, progress);
        return ws;
    }

    void compareProfiles(Workspace& a, Workspace& b) {
        QCOMPARE(a.profiles().size(), size_t(1));
        QCOMPARE(b.profiles().size(), size_t(1));
        const ProfileInfo pa = a.profiles().front(), pb = b.profiles().front();
        QCOMPARE(pa.sourceHash, pb.sourceHash);
        QCOMPARE(pa.sourceSize, pb.sourceSize);
        const QJsonObject ma =
            QJsonDocument::fromJson(QByteArray::fromStdString(pa.metadataJson)).object();
        const QJsonObject mb =
            QJsonDocument::fromJson(QByteArray::fromStdString(pb.metadataJson)).object();
        QCOMPARE(untimed(ma), untimed(mb));
        const std::pair<const char*, const char*> tables[] = {
            {"trace_tracks", "id"},
            {"trace_chunks", "track_id, level, seq"},
            {"trace_args", "seq"},
            {"blobs", "stream, seq"}};
        for (const auto& [table, order] : tables) {
            const QStringList ra = rowsOf(a, table, order), rb = rowsOf(b, table, order);
            QVERIFY2(!ra.isEmpty() || QString(table) == "trace_args", table);
            QCOMPARE(ra.size(), rb.size());
            for (qsizetype i = 0; i < ra.size(); ++i)
                QVERIFY2(ra[i] == rb[i], qPrintable(QString("%1 row %2").arg(table).arg(i)));
        }
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        run_ = dir_.path() + "/run";
        QProcess gen;
        gen.start("python3", {STALLSCOPE_GEN_MULTIHOST, run_, "--hosts", "5", "--kernels", "300"});
        QVERIFY(gen.waitForFinished(120000));
        QCOMPARE(gen.exitCode(), 0);
        QCOMPARE(QDir(run_).entryList(QDir::Files).size(), 5);
    }

    void parallelEqualsOneWorker() {
        const auto one = importWith("1", run_.toStdString(), "one.sqlite");
        const auto three = importWith("3", run_.toStdString(), "three.sqlite");
        compareProfiles(*one, *three);
        // The generator's run: 5 hosts, each a host thread and a GPU stream below its process.
        const QJsonObject meta =
            QJsonDocument::fromJson(QByteArray::fromStdString(one->profiles()[0].metadataJson))
                .object();
        QCOMPARE(meta.value("run").toObject().value("hosts").toInteger(), 5);
        QCOMPARE(count(*one, "SELECT count(*) FROM trace_tracks WHERE parent_id IS NULL"), 5);
    }

    // XProf hosts carry where their session started (the Task Environment plane's
    // profile_start_time, ns since the epoch): a host that started 2.5 ms later is shifted by
    // 2.5 ms, whatever its own clock says.
    void xprofHostsAlignByProfileStartTime() {
        const QString runDir = dir_.path() + "/xrun";
        QVERIFY(QDir().mkpath(runDir));
        const uint64_t epoch = 1700000000000000000ull;
        const std::array<uint64_t, 2> starts{epoch + 2500000, epoch};  // host0 started later
        for (int h = 0; h < 2; ++h) {
            fixtures::XPlaneWriter task("Task Environment");
            task.planeStat("profile_start_time", starts[size_t(h)]);
            fixtures::XPlaneWriter device("/device:TPU:0");
            device.event("XLA Ops", "fusion.1", "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %p)",
                         1000 + 10 * h, 5000000);
            std::ofstream(QString("%1/host%2.xplane.pb").arg(runDir).arg(h).toStdString(),
                          std::ios::binary)
                << task.bytes() + device.bytes();  // two XSpaces concatenated: both planes
        }
        auto ws = Workspace::open((dir_.path() + "/xrun.sqlite").toStdString());
        Progress progress;
        const int64_t id =
            importFiles(*ws, {{runDir.toStdString()}, "xrun", ""}, progress).at(0).id;
        const QJsonObject meta =
            QJsonDocument::fromJson(QByteArray::fromStdString(ws->profiles()[0].metadataJson))
                .object();
        QCOMPARE(meta.value("run").toObject().value("alignment").toString(),
                 QString("xprof profile_start_time"));
        const QJsonArray hosts = meta.value("hosts").toArray();
        QCOMPARE(hosts.size(), 2);
        QCOMPARE(hosts[0].toObject().value("offset_ns").toInteger(), qint64(2500000));
        QCOMPARE(hosts[1].toObject().value("offset_ns").toInteger(), qint64(0));
        // On the timeline: host0's fusion (1000 ns on its clock) sits 2.5 ms - 10 ns after
        // host1's (1010 ns on its own).
        const trace::TraceStore store(*ws, id);
        std::vector<int64_t> fusionStarts(2, -1);
        for (const trace::TrackRow& t : store.tracks()) {
            if (t.name != "XLA Ops") continue;
            int64_t host = t.parent;
            while (host >= 0 && store.track(host)->parent >= 0) host = store.track(host)->parent;
            const int index = host == hosts[0].toObject().value("track").toInteger() ? 0 : 1;
            for (const trace::SliceItem& s : store.slices(t.id, INT64_MIN / 2, INT64_MAX / 2, 0))
                fusionStarts[size_t(index)] = s.start;
        }
        QCOMPARE(fusionStarts[0] - fusionStarts[1], int64_t(2500000 - 10));
    }

    void parallelEqualsOneWorkerXProf() {
        // Two XProf hosts: the second host's planes are numbered after the first's.
        const std::string xprof = STALLSCOPE_SHARED_DIR "/samples/xprof/GPU-multi-worker";
        if (!std::filesystem::exists(xprof)) QSKIP("shared samples missing");
        const auto one = importWith("1", xprof, "xone.sqlite");
        const auto two = importWith("2", xprof, "xtwo.sqlite");
        compareProfiles(*one, *two);
    }

    void badHostInTheMiddleFailsAndStoresNothing() {
        const QString bad = dir_.path() + "/bad";
        QVERIFY(QDir().mkpath(bad));
        for (const QString& name : QDir(run_).entryList(QDir::Files))
            QVERIFY(QFile::copy(run_ + "/" + name, bad + "/" + name));
        // rank-2 breaks off in the middle of an event.
        QFile rank2(bad + "/rank-2.pt.trace.json");
        QVERIFY(rank2.open(QIODevice::ReadWrite));
        const QByteArray text = rank2.readAll();
        rank2.resize(0);
        rank2.seek(0);
        rank2.write(text.left(text.size() / 2) + "{\"ph\": \"X\", \"ts\": tru");
        rank2.close();

        ImportWorkers forced("3");
        auto ws = Workspace::open((dir_.path() + "/bad.sqlite").toStdString());
        Progress earlier;
        importFiles(*ws, {{(run_ + "/rank-0.pt.trace.json").toStdString()}, "single", ""}, earlier);
        const int tracksBefore = count(*ws, "SELECT count(*) FROM trace_tracks");
        Progress progress;
        try {
            importFiles(*ws, {{bad.toStdString()}, "run", ""}, progress);
            QFAIL("a broken host was imported");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("rank-2.pt.trace.json"), e.what());
        }
        QCOMPARE(count(*ws, "SELECT count(*) FROM profiles"), 1);
        QCOMPARE(count(*ws, "SELECT count(*) FROM trace_tracks"), tracksBefore);
        QCOMPARE(QString::fromStdString(ws->profiles()[0].name), QString("single"));
    }

    void cancelMidwayStoresNothing() {
        ImportWorkers forced("2");
        auto ws = Workspace::open((dir_.path() + "/cancel.sqlite").toStdString());
        int reports = 0;
        Progress progress([&](double, const std::string&) { ++reports; });
        progress.cancelAtReport(4);
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 importFiles(*ws, {{run_.toStdString()}, "run", ""}, progress));
        QCOMPARE(reports, 3);  // the fourth report raised the cancellation
        QCOMPARE(count(*ws, "SELECT count(*) FROM profiles"), 0);
        QCOMPARE(count(*ws, "SELECT count(*) FROM trace_tracks"), 0);
        QCOMPARE(count(*ws, "SELECT count(*) FROM trace_chunks"), 0);
        QCOMPARE(count(*ws, "SELECT count(*) FROM trace_args"), 0);
    }
};

QTEST_GUILESS_MAIN(TestParallelImport)
#include "test_parallel_import.moc"
