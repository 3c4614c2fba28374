// Multi-host runs (issue 15) through the real binary: `import DIR`, `import --as-one`,
// `hosts --json`, `import --shard` and `merge`. Generated runs come from
// tests/tools/gen_multihost.py, which also writes what the JSON must say, computed from its own
// numbers (not from Stallscope); the real two-host XProf run is read from ../shared/samples.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>

namespace {

struct Run {
    int status = -1;
    QString out, err;
};

Run runProgram(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(300000)) qFatal("%s did not finish", qPrintable(program));
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

Run stallscope(const QStringList& args) {
    return runProgram(STALLSCOPE_BINARY, args);
}

QJsonObject jsonOf(const Run& r) {
    return QJsonDocument::fromJson(r.out.toUtf8()).object();
}

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Writes a run of `hosts` ranks into `dir` and returns what hosts --json must say.
QJsonObject generate(const QString& dir, int hosts, const QStringList& extra = {}) {
    const QString expected = dir + ".expected.json";
    const Run r =
        runProgram("python3", QStringList{STALLSCOPE_GEN_MULTIHOST, dir, "--hosts",
                                          QString::number(hosts), "--expected", expected} +
                                  extra);
    if (r.status != 0) qFatal("gen_multihost.py failed: %s", qPrintable(r.err));
    return readJson(expected);
}

// hosts --json against the generator's numbers: every host, every step's slowest host and its
// excess, and the op whose per-host total varies most.
void checkAgainst(const QJsonObject& got, const QJsonObject& expected) {
    const QJsonArray hosts = got.value("hosts").toArray();
    const QJsonArray want = expected.value("hosts").toArray();
    QCOMPARE(hosts.size(), want.size());
    for (qsizetype h = 0; h < want.size(); ++h) {
        const QJsonObject a = hosts[h].toObject(), b = want[h].toObject();
        QCOMPARE(a.value("name").toString(), b.value("name").toString());
        QCOMPARE(a.value("slices").toInteger(), b.value("slices").toInteger());
        QCOMPARE(a.value("steps").toInteger(), b.value("steps").toInteger());
        QCOMPARE(a.value("step_time_median").toInteger(), b.value("step_time_median").toInteger());
        QVERIFY(a.value("source").toString().endsWith(".pt.trace.json") ||
                a.value("source").toString().endsWith(".pt.trace.json.gz"));
    }
    const QJsonArray stragglers = got.value("stragglers").toArray();
    const QJsonArray wantStragglers = expected.value("stragglers").toArray();
    QCOMPARE(stragglers.size(), wantStragglers.size());
    for (qsizetype k = 0; k < wantStragglers.size(); ++k) {
        const QJsonObject a = stragglers[k].toObject(), b = wantStragglers[k].toObject();
        QCOMPARE(a.value("step").toInteger(), b.value("step").toInteger());
        QCOMPARE(a.value("step_name").toString(), b.value("step_name").toString());
        QCOMPARE(a.value("host").toString(), b.value("host").toString());
        QCOMPARE(a.value("step_time").toInteger(), b.value("step_time").toInteger());
        QVERIFY2(
            std::abs(a.value("excess_pct").toDouble() - b.value("excess_pct").toDouble()) < 1e-9,
            qPrintable(QString::number(a.value("excess_pct").toDouble())));
    }
    // The planted straggler is the slowest host of its step, by far.
    const QJsonObject planted = expected.value("straggler").toObject();
    const QJsonObject atStep = stragglers[planted.value("step").toInteger()].toObject();
    QCOMPARE(atStep.value("host").toString(), planted.value("host").toString());
    QVERIFY(atStep.value("excess_pct").toDouble() > 30);
    QCOMPARE(got.value("slowest_host").toObject().value("host").toString(),
             planted.value("host").toString());
    QCOMPARE(got.value("op_varying_most").toObject().value("name").toString(),
             expected.value("op_varying_most").toString());
}

// The hosts JSON without what depends on where the timelines live.
QJsonObject placeFree(QJsonObject o) {
    o.remove("id");
    o.remove("name");
    QJsonArray hosts;
    for (const QJsonValue v : o.value("hosts").toArray()) {
        QJsonObject h = v.toObject();
        for (const char* key : {"track", "shard", "shard_profile", "shard_track", "offset_ns"})
            h.remove(key);
        hosts.append(h);
    }
    o.insert("hosts", hosts);
    return o;
}

}  // namespace

class TestHosts : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString store(const QString& name) { return dir_.path() + "/" + name + ".sqlite"; }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void realTwoHostXprofRun() {
        const QString run = QString(STALLSCOPE_SHARED_DIR) + "/samples/xprof/GPU-multi-worker";
        if (!QDir(run).exists()) QSKIP("../shared/samples is absent");
        const QString ws = store("xprof");
        const Run imported = stallscope({"--store", ws, "import", run});
        QCOMPARE(imported.status, 0);
        QCOMPARE(imported.out, QString("1\ttrace\tGPU-multi-worker\n"));
        const QJsonObject info = jsonOf(stallscope({"--store", ws, "info", "1", "--json"}));
        // Two files of 23,128 events each (samples README), one profile.
        QCOMPARE(info.value("slices").toInteger(), 2 * 23128);
        const QJsonObject meta = info.value("metadata").toObject();
        QCOMPARE(meta.value("format").toString(), QString("xprof-xspace"));
        const QJsonArray hosts = meta.value("hosts").toArray();
        QCOMPARE(hosts.size(), 2);
        // Both files name the same host (the demo copied one file): named by file instead.
        QCOMPARE(hosts[0].toObject().value("name").toString(), QString("34.83.195.179_6003"));
        QCOMPARE(hosts[1].toObject().value("name").toString(), QString("34.83.195.180_6003"));
        for (const QJsonValue h : hosts) {
            QCOMPARE(h.toObject().value("size").toInteger(), 3039638);
            QVERIFY(h.toObject().value("hash").toString().startsWith("xxh128:"));
            QCOMPARE(h.toObject().value("offset_ns").toInteger(), 0);  // identical copies
        }
        // 9 planes a host; each host's planes below its host track, pids unique across hosts.
        QCOMPARE(meta.value("plane_details").toArray().size(), 18);
        QCOMPARE(hosts[1].toObject().value("first_pid").toInteger(), 9);
        QCOMPARE(meta.value("run").toObject().value("alignment").toString(),
                 QString("first common step (0)"));

        const QJsonObject h = jsonOf(stallscope({"--store", ws, "hosts", "1", "--json"}));
        const QJsonArray summaries = h.value("hosts").toArray();
        QCOMPARE(summaries.size(), 2);
        for (const QJsonValue v : summaries) {
            const QJsonObject s = v.toObject();
            QCOMPARE(s.value("slices").toInteger(), 23128);
            QCOMPARE(s.value("steps").toInteger(), 1);
            // The one-host figure of docs/steps.md: one XProf step of 19.87 ms.
            QCOMPARE(s.value("step_time_median").toInteger() / 10000, 1986);
            QCOMPARE(s.value("devices").toInteger(), 3);
        }
        const QJsonArray stragglers = h.value("stragglers").toArray();
        QCOMPARE(stragglers.size(), 1);
        QCOMPARE(stragglers[0].toObject().value("excess_pct").toDouble(), 0.0);
        // The whole-run step analysis still works: both hosts' three GPUs, named by host.
        const QJsonObject steps = jsonOf(stallscope({"--store", ws, "steps", "1", "--json"}));
        // One row per (step, device): one step on 6 devices.
        QCOMPARE(steps.value("steps").toArray().size(), 6);
        for (const QJsonValue v : steps.value("steps").toArray())
            QCOMPARE(v.toObject().value("index").toInteger(), 0);
        QCOMPARE(steps.value("devices").toArray().size(), 6);
        QVERIFY(steps.value("devices").toArray()[3].toObject().value("name").toString().startsWith(
            "34.83.195.180_6003 "));
    }

    // Older TensorFlow wrote `<host>.trace.json.gz` beside `<host>.xplane.pb`: the profiler's
    // own conversions of the same hosts. The XSpaces are the run; the others are named as left
    // out. A trace of another name still makes the directory mixed.
    void xprofConversionsBesideTheirXSpacesAreLeftOut() {
        const QString sample = QString(STALLSCOPE_SHARED_DIR) + "/samples/xprof/GPU-multi-worker";
        if (!QDir(sample).exists()) QSKIP("../shared/samples is absent");
        const QString run = dir_.path() + "/tfrun";
        QVERIFY(QDir().mkpath(run));
        const QString trace =
            R"({"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":2}]})";
        for (const QString host : {"34.83.195.179_6003", "34.83.195.180_6003"}) {
            QVERIFY(
                QFile::copy(sample + "/" + host + ".xplane.pb", run + "/" + host + ".xplane.pb"));
            QFile converted(run + "/" + host + ".trace.json");
            QVERIFY(converted.open(QIODevice::WriteOnly));
            converted.write(trace.toUtf8());
        }
        const QString ws = store("tfrun");
        const Run imported = stallscope({"--store", ws, "import", run});
        QCOMPARE(imported.status, 0);
        const QJsonObject info = jsonOf(stallscope({"--store", ws, "info", "1", "--json"}));
        QCOMPARE(info.value("slices").toInteger(), 2 * 23128);  // the XSpaces only
        const QJsonObject meta = info.value("metadata").toObject();
        QCOMPARE(meta.value("skipped_files").toArray(),
                 (QJsonArray{"34.83.195.179_6003.trace.json", "34.83.195.180_6003.trace.json"}));
        QVERIFY(meta.value("warnings").toArray().first().toString().contains("left out"));
        QFile other(run + "/worker-7.trace.json");
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.write(trace.toUtf8());
        other.close();
        const Run mixed = stallscope({"--store", ws, "import", run});
        QCOMPARE(mixed.status, 2);
        QVERIFY2(mixed.err.contains("mixes kinds of profiles"), qPrintable(mixed.err));
    }

    void generatedRunsNameThePlantedStraggler_data() {
        QTest::addColumn<int>("hosts");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("2 hosts") << 2 << QStringList{"--straggler-rank", "1"};
        QTest::newRow("8 hosts, gzip") << 8 << QStringList{"--gzip", "--straggler-rank", "5"};
        QTest::newRow("64 hosts") << 64
                                  << QStringList{"--kernels",        "6", "--straggler-rank", "37",
                                                 "--straggler-step", "1", "--straggler-pct",  "35"};
    }
    void generatedRunsNameThePlantedStraggler() {
        QFETCH(int, hosts);
        QFETCH(QStringList, options);
        const QString run = dir_.path() + "/gen" + QString::number(hosts);
        const QJsonObject expected = generate(run, hosts, options);
        const QString ws = store("gen" + QString::number(hosts));
        const Run imported = stallscope({"--store", ws, "import", run});
        QCOMPARE(imported.status, 0);
        const Run h = stallscope({"--store", ws, "hosts", "1", "--json"});
        QCOMPARE(h.status, 0);
        checkAgainst(jsonOf(h), expected);
        // Clocks aligned by Kineto's baseTimeNanoseconds: each host shifted by its base's
        // distance from the earliest.
        const QJsonArray hostMeta = jsonOf(stallscope({"--store", ws, "info", "1", "--json"}))
                                        .value("metadata")
                                        .toObject()
                                        .value("hosts")
                                        .toArray();
        for (qsizetype i = 0; i < hostMeta.size(); ++i)
            QCOMPARE(
                hostMeta[i].toObject().value("offset_ns").toInteger(),
                expected.value("hosts").toArray()[i].toObject().value("offset_ns").toInteger());
        // Stored on first request, read back the same.
        QCOMPARE(jsonOf(stallscope({"--store", ws, "hosts", "1", "--json"})), jsonOf(h));
        // The readable table names the straggler too.
        const Run table = stallscope({"--store", ws, "hosts", "1"});
        QVERIFY(
            table.out.contains(expected.value("straggler").toObject().value("host").toString()));
    }

    void asOneAlignsByTheFirstCommonStep() {
        const QString run = dir_.path() + "/nobase";
        const QJsonObject expected = generate(run, 4, {"--no-base", "--kernels", "4"});
        const QString ws = store("asone");
        QStringList files;
        for (int r = 0; r < 4; ++r) files << run + QString("/rank-%1.pt.trace.json").arg(r);
        const Run imported = stallscope(QStringList{"--store", ws, "import", "--as-one"} + files);
        QCOMPARE(imported.status, 0);
        QCOMPARE(imported.out.count('\n'), 1);  // one profile
        const QJsonObject meta =
            jsonOf(stallscope({"--store", ws, "info", "1", "--json"})).value("metadata").toObject();
        QCOMPARE(meta.value("run").toObject().value("alignment").toString(),
                 QString("first common step (0)"));
        const QJsonArray hosts = meta.value("hosts").toArray();
        for (qsizetype i = 0; i < hosts.size(); ++i)
            QCOMPARE(
                hosts[i].toObject().value("offset_ns").toInteger(),
                expected.value("hosts").toArray()[i].toObject().value("offset_ns").toInteger());
        checkAgainst(jsonOf(stallscope({"--store", ws, "hosts", "1", "--json"})), expected);
    }

    void mixedKindsAndBadHostsLeaveTheWorkspaceUnchanged() {
        const QString run = dir_.path() + "/mixed";
        generate(run, 2, {"--kernels", "2"});
        const QString ws = store("mixed");
        QCOMPARE(stallscope({"--store", ws, "import", run}).status, 0);
        // A minimal XSpace (one plane named "x") beside the Kineto traces.
        QFile xspace(run + "/host.xplane.pb");
        QVERIFY(xspace.open(QIODevice::WriteOnly));
        xspace.write(QByteArray("\x0a\x03\x12\x01x", 5));
        xspace.close();
        const Run mixed = stallscope({"--store", ws, "import", run});
        QCOMPARE(mixed.status, 2);
        QVERIFY2(mixed.err.contains("mixes kinds of profiles") &&
                     mixed.err.contains("host.xplane.pb") && mixed.err.contains(run),
                 qPrintable(mixed.err));
        // --format picks the kind; the Kineto hosts import.
        QCOMPARE(stallscope({"--store", ws, "import", "--format", "chrome-json", run}).status, 0);
        QFile::remove(run + "/host.xplane.pb");
        // A broken host: an error naming its file, and nothing of the run stored.
        QFile bad(run + "/rank-9.pt.trace.json");
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":}]})");
        bad.close();
        const QByteArray before = stallscope({"--store", ws, "list", "--json"}).out.toUtf8();
        const Run failed = stallscope({"--store", ws, "import", run});
        QCOMPARE(failed.status, 2);
        QVERIFY2(failed.err.contains("rank-9.pt.trace.json"), qPrintable(failed.err));
        QCOMPARE(stallscope({"--store", ws, "list", "--json"}).out.toUtf8(), before);
        // --as-one refuses mixed kinds too.
        QFile csv(run + "/runs.csv");
        QVERIFY(csv.open(QIODevice::WriteOnly));
        csv.write("region,mode,k,time_ns\nr,fp_add64,0,10\n");
        csv.close();
        const Run asOne = stallscope({"--store", ws, "import", "--as-one",
                                      run + "/rank-0.pt.trace.json", run + "/runs.csv"});
        QCOMPARE(asOne.status, 2);
        QVERIFY2(asOne.err.contains("different kinds"), qPrintable(asOne.err));
    }

    void shardsMergeToTheSingleImport() {
        const QString run = dir_.path() + "/sharded";
        const QJsonObject expected =
            generate(run, 16, {"--kernels", "8", "--straggler-rank", "11"});
        const QString shards = dir_.path() + "/shards";
        QVERIFY(QDir().mkpath(shards));
        QStringList shardFiles;
        for (int i = 0; i < 4; ++i) {
            QStringList files;
            for (int r = 4 * i; r < 4 * i + 4; ++r)
                files << run + QString("/rank-%1.pt.trace.json").arg(r);
            const QString shard = shards + QString("/shard-%1.sqlite").arg(i);
            const Run r = stallscope(QStringList{"import", "--shard", shard} + files);
            QCOMPARE(r.status, 0);
            shardFiles << shard;
        }
        // A shard is built once.
        QCOMPARE(
            stallscope({"import", "--shard", shardFiles[0], run + "/rank-0.pt.trace.json"}).status,
            2);
        const QString merged = shards + "/merged.sqlite";
        // Shards in any order: hosts come out by file name.
        const Run m = stallscope(QStringList{"merge", merged, shardFiles[2], shardFiles[0],
                                             shardFiles[3], shardFiles[1]});
        QCOMPARE(m.status, 0);
        const QJsonObject fromShards =
            jsonOf(stallscope({"--store", merged, "hosts", "1", "--json"}));
        checkAgainst(fromShards, expected);
        const QString single = store("single");
        QCOMPARE(stallscope({"--store", single, "import", run}).status, 0);
        const QJsonObject fromOne = jsonOf(stallscope({"--store", single, "hosts", "1", "--json"}));
        QCOMPARE(placeFree(fromShards), placeFree(fromOne));
        // No slices copied; each host's timeline is in its shard, at its host track.
        const QJsonObject info = jsonOf(stallscope({"--store", merged, "info", "1", "--json"}));
        QCOMPARE(info.value("slices").toInteger(), 0);
        const QJsonObject host11 =
            info.value("metadata").toObject().value("hosts").toArray()[11].toObject();
        QCOMPARE(host11.value("name").toString(), QString("rank 11"));
        QVERIFY(host11.value("shard").toString().endsWith("shard-2.sqlite"));
        const QJsonObject shardInfo = jsonOf(
            stallscope({"--store", host11.value("shard").toString(), "info", "1", "--json"}));
        const QJsonArray shardHosts =
            shardInfo.value("metadata").toObject().value("hosts").toArray();
        QCOMPARE(shardHosts[3].toObject().value("name").toString(), QString("rank 11"));
        QCOMPARE(shardHosts[3].toObject().value("track").toInteger(),
                 host11.value("shard_track").toInteger());
        // Same files, same run hash, however imported.
        const auto hashOf = [](const QString& ws) {
            return jsonOf(stallscope({"--store", ws, "list", "--json"}))
                .value("profiles")
                .toArray()[0]
                .toObject()
                .value("source_hash")
                .toString();
        };
        QCOMPARE(hashOf(merged), hashOf(single));
        // steps needs slices: refused on the merge with where to look instead.
        const Run steps = stallscope({"--store", merged, "steps", "1"});
        QCOMPARE(steps.status, 2);
        QVERIFY(steps.err.contains("shard"));
    }

    // `steps` of a run analyses each host on its own step markers: every rank's device rows
    // equal that rank imported alone (shifted by its clock offset), and the planted straggler's
    // step lasts what the generator planted.
    void runStepsAreEachHostsOwn() {
        const QString run = dir_.path() + "/runsteps";
        const QJsonObject expected =
            generate(run, 4, {"--kernels", "6", "--straggler-rank", "2", "--straggler-step", "3"});
        const QString ws = store("runsteps");
        QCOMPARE(stallscope({"--store", ws, "import", run}).status, 0);
        const QJsonObject runSteps = jsonOf(stallscope({"--store", ws, "steps", "1", "--json"}));
        const QJsonArray rows = runSteps.value("steps").toArray();
        QCOMPARE(rows.size(), 4 * 6);  // 6 steps x 4 ranks' GPUs
        const QJsonArray hostMeta = jsonOf(stallscope({"--store", ws, "info", "1", "--json"}))
                                        .value("metadata")
                                        .toObject()
                                        .value("hosts")
                                        .toArray();
        for (int r = 0; r < 4; ++r) {
            const QString alone = store(QString("rank%1").arg(r));
            QCOMPARE(stallscope({"--store", alone, "import",
                                 run + QString("/rank-%1.pt.trace.json").arg(r)})
                         .status,
                     0);
            const QJsonArray own = jsonOf(stallscope({"--store", alone, "steps", "1", "--json"}))
                                       .value("steps")
                                       .toArray();
            QCOMPARE(own.size(), 6);
            const qint64 offset = hostMeta[r].toObject().value("offset_ns").toInteger();
            for (const QJsonValue v : own) {
                const QJsonObject want = v.toObject();
                const QJsonObject got = rows[want.value("index").toInt() * 4 + r].toObject();
                QVERIFY(got.value("device").toString().startsWith(QString("rank %1").arg(r)));
                QCOMPARE(got.value("breakdown").toObject(), want.value("breakdown").toObject());
                QCOMPARE(got.value("duration").toInteger(), want.value("duration").toInteger());
                QCOMPARE(got.value("start").toInteger(), want.value("start").toInteger() + offset);
            }
        }
        const QJsonObject planted = expected.value("straggler").toObject();
        const QJsonObject slow = rows[planted.value("step").toInt() * 4 + 2].toObject();
        const QJsonObject wantSlow =
            expected.value("stragglers").toArray()[planted.value("step").toInt()].toObject();
        QCOMPARE(slow.value("duration").toInteger(), wantSlow.value("step_time").toInteger());
        // A run's step time is its slowest host's (the joined step spans every host's clock
        // offset): the generator's slowest host per step, nearest-rank median and max.
        std::vector<qint64> slowest;
        for (const QJsonValue v : expected.value("stragglers").toArray())
            slowest.push_back(v.toObject().value("step_time").toInteger());
        std::sort(slowest.begin(), slowest.end());
        const QJsonObject stepTime = runSteps.value("step_time").toObject();
        QCOMPARE(stepTime.value("max").toInteger(), slowest.back());
        QCOMPARE(stepTime.value("median").toInteger(), slowest[(slowest.size() + 1) / 2 - 1]);
        // Every rank computes in every step (the old whole-run analysis gave ranks 1-3 none).
        for (const QJsonValue v : rows)
            QVERIFY(v.toObject().value("breakdown").toObject().value("compute").toInteger() > 0);
    }
};

QTEST_GUILESS_MAIN(TestHosts)
#include "test_hosts.moc"
