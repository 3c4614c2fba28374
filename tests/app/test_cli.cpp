// Runs the real stallscope binary as a process, as scripts and CI jobs do.
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <zlib.h>
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

QByteArray gzip(const QByteArray& plain) {
    z_stream z{};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) qFatal("zlib");
    QByteArray out(static_cast<qsizetype>(deflateBound(&z, static_cast<uLong>(plain.size()))),
                   '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    z.avail_in = static_cast<uInt>(plain.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) qFatal("zlib");
    out.resize(static_cast<qsizetype>(z.total_out));
    deflateEnd(&z);
    return out;
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Width and height from a PNG's IHDR chunk; (0, 0) when the file is not a PNG.
QPair<int, int> pngSize(const QString& path) {
    const QByteArray b = fileBytes(path);
    if (b.size() < 24 || !b.startsWith("\x89PNG\r\n\x1a\n")) return {0, 0};
    auto be32 = [&](int at) {
        return int((uint(uchar(b[at])) << 24) | (uint(uchar(b[at + 1])) << 16) |
                   (uint(uchar(b[at + 2])) << 8) | uint(uchar(b[at + 3])));
    };
    return {be32(16), be32(20)};
}

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
        QTest::newRow("truncated gzip") << "gzip"
                                        << "truncated gzip stream";
        QTest::newRow("unknown format") << "unknown"
                                        << "unknown format";
        QTest::newRow("missing") << "missing"
                                 << "cannot open";
        // A directory of several results is a multi-host run: replay files cannot be hosts
        // (a directory holding one result is that result).
        QTest::newRow("directory") << "directory"
                                   << "replay-jsonl files cannot be the hosts of a run";
        QTest::newRow("bad line") << "badline"
                                  << ":3: WAIT of unknown DMA 8";
    }
    void badInputIsExitTwoAndChangesNothing() {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        const int before = profileCount();
        const QByteArray storeBefore = fileBytes(store_);
        QString path = dir_.path() + "/input-" + kind;
        if (kind == "empty") write(path, "");
        if (kind == "unknown") write(path, "just some words\n");
        if (kind == "directory") {
            QDir(dir_.path()).mkpath("two-replays");
            path = dir_.path() + "/two-replays";
            write(path + "/a.jsonl", kTrace);
            write(path + "/b.jsonl", kTrace);
        }
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
        if (kind == "gzip") {
            const QByteArray packed = gzip(QByteArray(kTrace).repeated(50));
            write(path, packed.left(packed.size() / 2));
        }
        const Run r = run({"import", path});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.startsWith("stallscope: error: " + path), qPrintable(r.err));
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QCOMPARE(fileBytes(store_), storeBefore);
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
        const Run info = run({"info", "w", "--json"}, readOnly);
        QCOMPARE(info.status, 0);
        QCOMPARE(QJsonDocument::fromJson(info.out.toUtf8()).object().value("end").toInteger(), 467);
        // Reading a read-only workspace leaves no -wal or -shm files behind.
        QVERIFY(!QFile::exists(readOnly + "-wal"));
        QVERIFY(!QFile::exists(readOnly + "-shm"));
    }

    void newerSchemaIsRefusedUntouched() {
        const QString trace = write(dir_.path() + "/n.jsonl", kTrace);
        const QString newer = dir_.path() + "/newer.sqlite";
        QCOMPARE(run({"import", trace}, newer).status, 0);
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(newer.toLocal8Bit().constData(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(db);
        const QByteArray before = fileBytes(newer);
        for (const QStringList& args : {QStringList{"import", trace}, QStringList{"list"},
                                        QStringList{"info", "1", "--json"}}) {
            const Run r = run(args, newer);
            QCOMPARE(r.status, 2);
            QVERIFY2(r.err.contains(newer + ": workspace schema version 99 is newer"),
                     qPrintable(r.err));
        }
        QCOMPARE(fileBytes(newer), before);
    }

    // A failed import into a workspace that does not exist yet leaves no file; list and info on
    // a missing workspace do not create one either.
    void failedFirstImportCreatesNoWorkspace() {
        const QString fresh = dir_.path() + "/fresh.sqlite";
        const Run r = run({"import", dir_.path() + "/no-such-file.jsonl"}, fresh);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("no-such-file.jsonl: cannot open"), qPrintable(r.err));
        QVERIFY(!QFile::exists(fresh));
        const Run list = run({"list"}, fresh);
        QCOMPARE(list.status, 0);
        QCOMPARE(list.out, QString());
        const Run info = run({"info", "1"}, fresh);
        QCOMPARE(info.status, 2);
        QVERIFY2(info.err.contains(fresh + ": no workspace here"), qPrintable(info.err));
        QVERIFY(!QFile::exists(fresh));
    }

    // info --json carries CONTRACT §5's keys for table kinds too, with their meaning per kind.
    // The README's first command: `demo` builds the bundled workspace (every kind of profile)
    // and, without a display, prints its summary.
    void demoWorkspaceHasEveryKind() {
        const QString store = dir_.path() + "/demo.sqlite";
        const Run r = run({"demo"}, store);
        QCOMPARE(r.status, 0);
        QVERIFY2(r.out.contains("11 profile(s)"), qPrintable(r.out));
        QVERIFY(r.out.contains("[1] allgather (replay): 1647 instructions, 60 DMAs, 56344 cycles"));
        // Every kind says what its view shows first.
        QVERIFY2(r.out.contains("[6] cpi-demo (cpi): 9 kernels, 3 source(s); MAPE AMALI 3.3%; "
                                "MAPE GCoM 25.3%"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("pointer_chase on vm (AMD EPYC): latency-bound"));
        QVERIFY(r.out.contains("[7] estimates-demo (estimates): 72 rows, 3 estimator(s)"));
        QVERIFY(r.out.contains("[8] train-step-trace (trace): 892 slices on 7 tracks, 384 flows"));
        // Transfers and hosts say so: 4,196,704 of 5,536,704 ns stalled before, a 4-rank run.
        QVERIFY2(r.out.contains("[9] offload-before.xplane (trace): 104 slices on 3 tracks, 0 "
                                "flows over 5.89 ms; 24 transfers, 75.8% of their runs stalled"),
                 qPrintable(r.out));
        QVERIFY(
            r.out.contains("[11] demo-run (trace): 624 slices on 20 tracks, 0 flows over "
                           "719.85 ms; 4 hosts"));
        const Run list = run({"list", "--json"}, store);
        QStringList kinds;
        for (const QJsonValue p :
             QJsonDocument::fromJson(list.out.toUtf8()).object().value("profiles").toArray())
            kinds << p.toObject().value("kind").toString();
        QCOMPARE(kinds, (QStringList{"replay", "replay", "replay", "replay", "noise", "cpi",
                                     "estimates", "trace", "trace", "trace", "trace"}));
        // The transfers demo: bf16 copies save what the re-simulation predicts for them.
        const QJsonObject compare =
            QJsonDocument::fromJson(
                run({"dma-compare", "offload-before.xplane", "offload-after.xplane", "--json"},
                    store)
                    .out.toUtf8())
                .object();
        QCOMPARE(compare.value("dmas").toArray().size(), 24);  // 8 runs x 3 copies
        const QJsonObject best =
            QJsonDocument::fromJson(
                run({"suggest", "offload-before.xplane", "--json"}, store).out.toUtf8())
                .object()
                .value("suggestions")
                .toArray()[0]
                .toObject();
        QCOMPARE(best.value("kind").toString(), QString("transfer-bound"));
        QCOMPARE(best.value("saving_ns").toInteger(),
                 -compare.value("delta").toObject().value("stall").toInteger());
        // The run demo: rank 2 is the straggler of step 3.
        const QJsonObject hosts =
            QJsonDocument::fromJson(run({"hosts", "demo-run", "--json"}, store).out.toUtf8())
                .object();
        QCOMPARE(hosts.value("hosts").toArray().size(), 4);
        QCOMPARE(hosts.value("stragglers").toArray()[3].toObject().value("host").toString(),
                 QString("rank 2"));
        // The trace demo: four profiler steps with their kernels and launch flows.
        const Run info = run({"info", "train-step-trace", "--json"}, store);
        const QJsonObject trace = QJsonDocument::fromJson(info.out.toUtf8()).object();
        QCOMPARE(trace.value("flows").toInt(), 384);  // 4 steps x 2 phases x 12 layers x 4
        // Running it again keeps the workspace as it is.
        QCOMPARE(run({"demo"}, store).status, 0);
        QCOMPARE(QJsonDocument::fromJson(run({"list", "--json"}, store).out.toUtf8())
                     .object()
                     .value("profiles")
                     .toArray()
                     .size(),
                 11);
    }

    void infoKeysForEveryKind() {
        const QString store = dir_.path() + "/kinds.sqlite";
        const QString cpi = write(dir_.path() + "/stacks.csv",
                                  "kernel,source,category,cycles\n"
                                  "gemm,hw,selected,600\ngemm,hw,long_scoreboard,400\n"
                                  "gemm,amali,selected,700\nsoftmax,hw,selected,300\n"
                                  "softmax,amali,selected,250\n");
        const QString noise = write(dir_.path() + "/noise.csv",
                                    "region,mode,k,time_ns\nloop,fp_add64,0,100\n"
                                    "loop,fp_add64,4,110\nloop,l1_ld64,0,100\n"
                                    "copy,fp_add64,0,40\n");
        const QString est = write(dir_.path() + "/est.csv",
                                  "workload,region,hardware,estimator,predicted_us,measured_us\n"
                                  "llm,attn,a100,roofline,3,5\nllm,attn,h100,roofline,2,\n"
                                  "llm,mlp,a100,sim,9,8\n");
        QCOMPARE(run({"import", cpi, noise, est}, store).status, 0);
        const auto infoOf = [&](const QString& name) {
            const Run r = run({"info", name, "--json"}, store);
            if (r.status != 0) qWarning("%s", qPrintable(r.err));
            return QJsonDocument::fromJson(r.out.toUtf8()).object();
        };
        const QJsonObject c = infoOf("stacks");
        for (const char* key : {"id", "kind", "tracks", "slices", "counters", "flows", "start",
                                "end", "time_unit", "top_ops"})
            QVERIFY2(c.contains(key), key);
        QCOMPARE(c.value("tracks").toInt(), 2);    // hw, amali
        QCOMPARE(c.value("slices").toInt(), 4);    // kernel x source stacks
        QCOMPARE(c.value("counters").toInt(), 2);  // selected, long_scoreboard
        QCOMPARE(c.value("end").toDouble(), 1300.0);
        QCOMPARE(c.value("time_unit").toString(), QString("cycles"));
        const QJsonObject top = c.value("top_ops").toArray().at(0).toObject();
        QCOMPARE(top.value("name").toString(), QString("gemm"));
        QCOMPARE(top.value("total").toDouble(), 1000.0);

        const QJsonObject n = infoOf("noise");
        QCOMPARE(n.value("tracks").toInt(), 3);  // loop/fp_add64, loop/l1_ld64, copy/fp_add64
        QCOMPARE(n.value("slices").toInt(), 4);
        QCOMPARE(n.value("end").toDouble(), 350.0);
        QCOMPARE(n.value("top_ops").toArray().at(0).toObject().value("name").toString(),
                 QString("loop"));

        const QJsonObject e = infoOf("est");
        QCOMPARE(e.value("tracks").toInt(), 2);  // a100, h100
        QCOMPARE(e.value("slices").toInt(), 3);
        QCOMPARE(e.value("end").toDouble(), 15.0);  // 5 + 2 (predicted, unmeasured) + 8
        QCOMPARE(e.value("time_unit").toString(), QString("us"));
    }

    // Ctrl-C during an import cancels it: exit 1, a message, the workspace byte-for-byte as it
    // was. The input is a FIFO so the signal is sure to arrive mid-import.
    void interruptCancelsImport() {
        const QString store = dir_.path() + "/interrupt.sqlite";
        QCOMPARE(run({"import", write(dir_.path() + "/first.jsonl", kTrace)}, store).status, 0);
        const QByteArray before = fileBytes(store);
        const QString fifo = dir_.path() + "/pipe.jsonl";
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        QProcess p;
        p.start(STALLSCOPE_BINARY, {"--store", store, "import", fifo});
        QVERIFY(p.waitForStarted());
        // Opening the writing end returns once the importer has opened the FIFO, which it does
        // after installing its interrupt handler.
        QFile writer(fifo);
        QVERIFY(writer.open(QIODevice::WriteOnly | QIODevice::Unbuffered));
        writer.write(QByteArray(kTrace));
        QVERIFY(::kill(static_cast<pid_t>(p.processId()), SIGINT) == 0);
        writer.close();
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("cancelled"));
        QCOMPARE(fileBytes(store), before);
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

    // compare A B: replay values, per-source CPI, noise absorption, kinds that do not match,
    // and render compare for every kind.
    void compareCommands() {
        const QString store = dir_.path() + "/compare.sqlite";
        const QString before = dir_.path() + "/cmp-ag.jsonl";
        const QString after = dir_.path() + "/cmp-agp.jsonl";
        QCOMPARE(run({"generate", "allgather", "--out", before}, store).status, 0);
        QCOMPARE(run({"generate", "allgather-pinned", "--out", after}, store).status, 0);
        QCOMPARE(run({"import", "--name", "ag", before}, store).status, 0);
        QCOMPARE(run({"import", "--name", "pinned", after}, store).status, 0);
        const Run replay = run({"compare", "ag", "pinned", "--json"}, store);
        QCOMPARE(replay.status, 0);
        const QJsonObject r = QJsonDocument::fromJson(replay.out.toUtf8()).object();
        QCOMPARE(r.value("kind").toString(), QString("replay"));
        QCOMPARE(r.value("a").toObject().value("total_cycles").toInteger(), 56344);
        QCOMPARE(r.value("b").toObject().value("total_cycles").toInteger(), 41656);
        const QJsonObject d = r.value("delta").toObject();
        QCOMPARE(d.value("total").toInteger(), -14688);
        QCOMPARE(d.value("total_pct").toDouble(), -100.0 * 14688 / 56344);
        // Stall: base latency 26,136 -> 11,772 (the setup DMAs are gone), transfer 24,816 ->
        // 24,576.
        QCOMPARE(r.value("a").toObject().value("base_stall_cycles").toInteger(), 26136);
        QCOMPARE(r.value("b").toObject().value("base_stall_cycles").toInteger(), 11772);
        QCOMPARE(d.value("base_stall").toInteger(), 11772 - 26136);
        QCOMPARE(d.value("base_stall_pct").toDouble(), 100.0 * (11772 - 26136) / 26136);
        QCOMPARE(d.value("transfer_stall_pct").toDouble(), 100.0 * (24576 - 24816) / 24816);
        // The 36 setup DMAs exist only in A. The 24 data DMAs are renumbered (84 fewer
        // instructions before them) but neither moved nor re-timed: not changed.
        QCOMPARE(d.value("changed_dmas").toInt(), 36);
        int onlyInA = 0, moved = 0;
        for (const QJsonValue v : r.value("dmas").toArray()) {
            onlyInA += v.toObject().value("match").toString() == "only-in-a";
            moved += v.toObject().value("issue_moved").toBool();
        }
        QCOMPARE(onlyInA, 36);
        QCOMPARE(moved, 0);
        const QJsonObject op = r.value("ops").toArray().at(0).toObject();
        QCOMPARE(op.value("a").toInteger(), 13446);
        QCOMPARE(op.value("b").toInteger(), 9774);
        QCOMPARE(op.value("delta").toInteger(), -3672);
        QCOMPARE(r.value("summary").toString(),
                 QString("B vs A: \u221226.1% cycles, \u221228.7% stall cycles, 36 DMAs changed"));
        // --align-op: all-gather.2 starts at 28,172 in A and 20,828 in B.
        const QJsonObject aligned =
            QJsonDocument::fromJson(
                run({"compare", "ag", "pinned", "--json", "--align-op", "all-gather.2"}, store)
                    .out.toUtf8())
                .object()
                .value("alignment")
                .toObject();
        QCOMPARE(aligned.value("a_cycle").toInteger(), 28172);
        QCOMPARE(aligned.value("b_cycle").toInteger(), 20828);
        QCOMPARE(aligned.value("offset").toInteger(), -7344);
        const Run bad = run({"compare", "ag", "pinned", "--align-op", "nope"}, store);
        QCOMPARE(bad.status, 2);
        QVERIFY2(bad.err.contains("no HLO op 'nope'"), qPrintable(bad.err));

        // CPI: per source; "old" only in A, "new" only in B.
        const QString cpiA = write(dir_.path() + "/cpiA.csv",
                                   "kernel,source,category,cycles\n"
                                   "gemm,hw,selected,600\ngemm,hw,long_scoreboard,400\n"
                                   "gemm,amali,selected,700\ngemm,amali,long_scoreboard,300\n"
                                   "softmax,hw,selected,300\nsoftmax,hw,barrier,100\n"
                                   "old,hw,selected,50\n");
        const QString cpiB = write(dir_.path() + "/cpiB.csv",
                                   "kernel,source,category,cycles\n"
                                   "gemm,hw,selected,600\ngemm,hw,long_scoreboard,100\n"
                                   "gemm,amali,selected,650\ngemm,amali,long_scoreboard,200\n"
                                   "softmax,hw,selected,300\nsoftmax,hw,barrier,20\n"
                                   "new,hw,selected,80\n");
        QCOMPARE(run({"import", cpiA, cpiB}, store).status, 0);
        const Run cpi = run({"compare", "cpiA", "cpiB", "--json"}, store);
        QCOMPARE(cpi.status, 0);
        const QJsonObject c = QJsonDocument::fromJson(cpi.out.toUtf8()).object();
        QCOMPARE(c.value("source").toString(), QString("hw"));
        QCOMPARE(c.value("a").toObject().value("total_cycles").toDouble(), 1400.0);
        QCOMPARE(c.value("b").toObject().value("total_cycles").toDouble(), 1020.0);
        QCOMPARE(c.value("a").toObject().value("stall_cycles").toDouble(), 500.0);
        QCOMPARE(c.value("b").toObject().value("stall_cycles").toDouble(), 120.0);
        QCOMPARE(c.value("delta").toObject().value("stall_pct").toDouble(), -76.0);
        const QJsonObject amali = c.value("sources").toArray().at(1).toObject();
        QCOMPARE(amali.value("source").toString(), QString("amali"));
        QCOMPARE(amali.value("total_a").toDouble(), 1000.0);
        QCOMPARE(amali.value("total_b").toDouble(), 850.0);
        QCOMPARE(c.value("only_in_a").toArray().at(0).toObject().value("kernel").toString(),
                 QString("old"));
        QCOMPARE(c.value("only_in_b").toArray().at(0).toObject().value("kernel").toString(),
                 QString("new"));
        QCOMPARE(c.value("matched").toInt(), 3);

        // Noise: fp_add64 absorbs 8 patterns in A and 16 in B; B's plateau is 10% lower.
        auto noiseCsv = [](int k1, double t0) {
            QByteArray rows = "machine,region,mode,k,rep,time_ns,body_instr\n";
            for (int k = 0; k <= 32; k += 2)
                for (int rep = 0; rep < 3; ++rep)
                    rows += "m1,loop,fp_add64," + QByteArray::number(k) + "," +
                            QByteArray::number(rep) + "," +
                            QByteArray::number(
                                (k <= k1 ? t0 : t0 + 4 * (k - k1)) * (1 + 0.002 * rep), 'f', 3) +
                            ",40\n";
            return rows;
        };
        QCOMPARE(run({"import", write(dir_.path() + "/noiseA.csv", noiseCsv(8, 100)),
                      write(dir_.path() + "/noiseB.csv", noiseCsv(16, 90))},
                     store)
                     .status,
                 0);
        const Run noise = run({"compare", "noiseA", "noiseB", "--json"}, store);
        QCOMPARE(noise.status, 0);
        const QJsonObject n = QJsonDocument::fromJson(noise.out.toUtf8()).object();
        const QJsonObject curve = n.value("curves").toArray().at(0).toObject();
        QCOMPARE(curve.value("abs_raw_a").toDouble(), 8.0);
        QCOMPARE(curve.value("abs_raw_b").toDouble(), 16.0);
        QCOMPARE(curve.value("abs_rel_a").toDouble(), 0.2);
        QCOMPARE(curve.value("abs_rel_b").toDouble(), 0.4);
        QVERIFY(qAbs(n.value("delta").toObject().value("total_pct").toDouble() + 10.0) < 1e-9);

        // Different kinds: exit 2 with the reason; nothing on stdout.
        const Run mixed = run({"compare", "ag", "cpiA", "--json"}, store);
        QCOMPARE(mixed.status, 2);
        QVERIFY2(mixed.err.contains("compare profiles of the same kind"), qPrintable(mixed.err));
        QVERIFY(mixed.out.isEmpty());
        QCOMPARE(run({"compare", "cpiA", "cpiB", "--align-op", "x"}, store).status, 2);

        // render compare draws every kind.
        for (const auto& [a, b] : {std::pair{"ag", "pinned"}, std::pair{"cpiA", "cpiB"},
                                   std::pair{"noiseA", "noiseB"}}) {
            const QString png = dir_.path() + "/cmp-" + a + ".png";
            const Run render = run({"render", "compare", a, "--against", b, "--out", png}, store);
            QVERIFY2(render.status == 0, qPrintable(render.err));
            QCOMPARE(pngSize(png).first, 1600);
        }
        const Run sized =
            run({"render", "compare", "ag", "--against", "pinned", "--align-op", "all-gather.1",
                 "--size", "800x600", "--out", dir_.path() + "/cmp-aligned.png"},
                store);
        QCOMPARE(sized.status, 0);
        QCOMPARE(pngSize(dir_.path() + "/cmp-aligned.png"), (QPair<int, int>(800, 600)));
        QCOMPARE(run({"render", "compare", "cpiA", "--against", "cpiB", "--op", "x", "--out",
                      dir_.path() + "/x.png"},
                     store)
                     .status,
                 2);
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
