// Runs the real stallscope binary as a process, as scripts and CI jobs do.
#include <sys/stat.h>
#include <zstd.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const char* const kTrace =
    R"({"record":"machine","name":"toy-tpu","clock_ghz":1.0,"spaces":[{"name":"hbm","bytes":17179869184},{"name":"dcache","bytes":16777216}],"links":[{"src":"hbm","dst":"dcache","base_latency":400,"bytes_per_cycle":64}],"dcache":{"space":"dcache","page_bytes":512,"bucket_pages":256},"lightweight":["mov","add"]}
{"record":"instr","i":0,"op":"sld","unit":"scalar","rd":["s1"],"wr":["s2"],"mrd":[["dcache",4096,64]]}
{"record":"instr","i":1,"op":"add","unit":"scalar","rd":["s2"],"wr":["s3"]}
{"record":"instr","i":2,"op":"dma.issue","unit":"dma","rd":["s3"],"dma":{"id":3,"src":["hbm",65536,4096],"dst":["dcache",8192,4096]}}
{"record":"instr","i":3,"op":"dma.wait","unit":"dma","wait":3}
)";

struct Run {
    int status = -1;
    QString out, err;
};

QString write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString store_;

    Run run(const QStringList& args, const QString& store = {}) {
        QProcess p;
        p.start(STALLSCOPE_BINARY, QStringList{"--store", store.isEmpty() ? store_ : store} + args);
        if (!p.waitForFinished(120000)) qFatal("stallscope did not finish");
        return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

    int profileCount() {
        const Run r = run({"list", "--json"});
        return static_cast<int>(
            QJsonDocument::fromJson(r.out.toUtf8()).object().value("profiles").toArray().size());
    }

  private slots:
    void initTestCase() { store_ = dir_.path() + "/ws.sqlite"; }

    void importListInfo() {
        const QString trace = write(dir_.path() + "/toy.jsonl", kTrace);
        const Run imported = run({"import", trace});
        QCOMPARE(imported.status, 0);
        QCOMPARE(imported.out, QString("1\treplay\ttoy\n"));
        const Run named = run({"import", "--name", "second run", trace});
        QCOMPARE(named.out, QString("2\treplay\tsecond run\n"));

        const Run list = run({"list", "--json"});
        QCOMPARE(list.status, 0);
        const QJsonArray profiles =
            QJsonDocument::fromJson(list.out.toUtf8()).object().value("profiles").toArray();
        QCOMPARE(profiles.size(), 2);
        QCOMPARE(profiles[0].toObject().value("name").toString(), QString("toy"));
        QCOMPARE(profiles[0].toObject().value("kind").toString(), QString("replay"));
        QCOMPARE(profiles[0].toObject().value("source").toString(), trace);

        const Run info = run({"info", "toy", "--json"});
        QCOMPARE(info.status, 0);
        const QJsonObject o = QJsonDocument::fromJson(info.out.toUtf8()).object();
        QCOMPARE(o.value("kind").toString(), QString("replay"));
        QCOMPARE(o.value("id").toInt(), 1);
        QCOMPARE(o.value("time_unit").toString(), QString("cycles"));
        // The DMA issues at cycle 2, is ready at 402 and completes 4096/64 = 64 cycles later at
        // 466; the WAIT at cycle 3 stalls 463 cycles, and its own cost ends the run at 467.
        QCOMPARE(o.value("end").toInteger(), 467);
    }

    void badInputIsExitTwoAndChangesNothing_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << "empty"
                               << "file is empty";
        QTest::newRow("truncated zstd") << "zstd"
                                        << "truncated zstd stream";
        QTest::newRow("unknown format") << "unknown"
                                        << "unknown format";
        QTest::newRow("missing") << "missing"
                                 << "cannot open";
        QTest::newRow("directory") << "directory"
                                   << "is a directory";
        QTest::newRow("bad line") << "badline"
                                  << ":3: WAIT of unknown DMA 8";
    }
    void badInputIsExitTwoAndChangesNothing() {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        const int before = profileCount();
        QString path = dir_.path() + "/input-" + kind;
        if (kind == "empty") write(path, "");
        if (kind == "unknown") write(path, "just some words\n");
        if (kind == "directory") path = dir_.path();
        if (kind == "badline") {
            QByteArray body = QByteArray(kTrace).split('\n').mid(0, 2).join('\n');
            write(path, body + "\n" +
                            R"({"record":"instr","i":1,"op":"dma.wait","wait":8})"
                            "\n");
        }
        if (kind == "zstd") {
            const QByteArray plain = QByteArray(kTrace).repeated(50);
            QByteArray packed(static_cast<qsizetype>(ZSTD_compressBound(plain.size())), '\0');
            packed.resize(static_cast<qsizetype>(
                ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3)));
            write(path, packed.left(packed.size() / 2));
        }
        const Run r = run({"import", path});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.startsWith("stallscope: error: " + path), qPrintable(r.err));
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QCOMPARE(profileCount(), before);
    }

    void badWorkspaces() {
        const QString trace = write(dir_.path() + "/w.jsonl", kTrace);
        const QString notSqlite = write(dir_.path() + "/notes.sqlite", "plain text, not SQLite\n");
        Run r = run({"import", trace}, notSqlite);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(notSqlite + ": not a Stallscope workspace"), qPrintable(r.err));
        QFile f(notSqlite);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("plain text, not SQLite\n"));

        const QString readOnly = dir_.path() + "/ro.sqlite";
        QCOMPARE(run({"import", trace}, readOnly).status, 0);
        QVERIFY(::chmod(readOnly.toLocal8Bit().constData(), 0444) == 0);
        r = run({"import", trace}, readOnly);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("read-only"), qPrintable(r.err));
        const Run list = run({"list"}, readOnly);  // reading still works
        QCOMPARE(list.status, 0);
        QCOMPARE(list.out.count('\n'), 1);
    }

    void replayCommandsAndFormatRoundTrip() {
        const QString jsonl = dir_.path() + "/ag.jsonl";
        const QString binary = dir_.path() + "/ag.ssrp";
        const QString back = dir_.path() + "/ag-back.jsonl";
        QCOMPARE(run({"generate", "allgather", "--out", jsonl}).status, 0);
        QCOMPARE(run({"convert", jsonl, binary}).status, 0);
        QCOMPARE(run({"convert", binary, back}).status, 0);
        QFile a(jsonl), b(back);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());  // JSONL -> binary -> JSONL is byte-identical

        const QString store = dir_.path() + "/replay.sqlite";
        QCOMPARE(run({"import", "--name", "text", jsonl}, store).status, 0);
        QCOMPARE(run({"import", "--name", "bin", binary}, store).status, 0);
        for (const char* command : {"dma", "suggest", "dcache"}) {
            const Run fromText = run({command, "text", "--json"}, store);
            const Run fromBinary = run({command, "bin", "--json"}, store);
            QCOMPARE(fromText.status, 0);
            QCOMPARE(fromText.out, fromBinary.out);
        }
        const QJsonObject dma =
            QJsonDocument::fromJson(run({"dma", "text", "--json"}, store).out.toUtf8()).object();
        QCOMPARE(dma.value("total_cycles").toInteger(), 56344);
        QCOMPARE(dma.value("stall_cycles").toInteger(),
                 dma.value("base_stall_cycles").toInteger() +
                     dma.value("transfer_stall_cycles").toInteger());
        const QJsonObject first = dma.value("dmas").toArray().at(0).toObject();
        for (const char* key : {"id", "link", "bytes", "issue_instr", "wait_instr", "issue_cycle",
                                "ready_cycle", "complete_cycle", "wait_cycle", "base_stall",
                                "transfer_stall", "slack", "backtail_instr", "backtail_cycle"})
            QVERIFY2(first.contains(key), key);
        QCOMPARE(first.value("ready_cycle").toInteger(),
                 first.value("issue_cycle").toInteger() + 400);

        const QJsonObject top =
            QJsonDocument::fromJson(
                run({"suggest", "text", "--json", "--limit", "2"}, store).out.toUtf8())
                .object();
        QCOMPARE(top.value("suggestions").toArray().size(), 2);
        QCOMPARE(top.value("total_suggestions").toInt(), 39);
        QVERIFY(
            top.value("suggestions").toArray()[0].toObject().value("saving_cycles").toInteger() >=
            top.value("suggestions").toArray()[1].toObject().value("saving_cycles").toInteger());

        // Applying every suggestion re-simulates faster and writes a trace that imports again.
        const QString edited = dir_.path() + "/ag-edited.jsonl";
        const Run whatif =
            run({"whatif", "text", "--apply-suggestions", "--out", edited, "--json"}, store);
        QCOMPARE(whatif.status, 0);
        const QJsonObject w = QJsonDocument::fromJson(whatif.out.toUtf8()).object();
        QCOMPARE(w.value("before").toObject().value("total_cycles").toInteger(), 56344);
        QVERIFY(w.value("after").toObject().value("total_cycles").toInteger() < 56344);
        QVERIFY(!w.value("applied").toArray().isEmpty());
        QFile editedFile(edited);
        QVERIFY(editedFile.open(QIODevice::ReadOnly));
        QVERIFY(editedFile.readAll().contains("\"orig_i\":"));
        QCOMPARE(run({"import", "--name", "edited", edited}, store).status, 0);
        const QJsonObject after =
            QJsonDocument::fromJson(run({"dma", "edited", "--json"}, store).out.toUtf8()).object();
        QCOMPARE(after.value("total_cycles").toInteger(),
                 w.value("after").toObject().value("total_cycles").toInteger());

        // Hoisting a dependent DMA above the DMA that brings its address is refused.
        const Run illegal = run({"whatif", "text", "--hoist", "2@0", "--json"}, store);
        QCOMPARE(illegal.status, 2);
        QVERIFY2(illegal.err.startsWith("stallscope: error: "), qPrintable(illegal.err));
        QCOMPARE(run({"whatif", "text", "--hoist", "banana", "--json"}, store).status, 2);
        QCOMPARE(run({"generate", "nonsense", "--out", dir_.path() + "/x.jsonl"}).status, 2);
    }

    void usageErrors() {
        Run r = run({"frobnicate"});
        QCOMPARE(r.status, 2);
        r = run({"info", "no such profile", "--json"});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("no profile named or numbered 'no such profile'"),
                 qPrintable(r.err));
        r = run({"import", "--bogus", "x"});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("unknown option --bogus"), qPrintable(r.err));
        r = run({"import", "--format", "nope", dir_.path() + "/toy.jsonl"});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("unknown --format 'nope'"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
