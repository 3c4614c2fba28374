// SQL over the workspace (core/query): golden queries over a small fixture whose every figure
// is known (tests/core/query/golden.sql), the command line's formats and refusals (the
// workspace file unchanged after them), and on every trace sample in ../shared the tables'
// figures equal to what `info` and `steps` give.

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>

#include "core/analysis/cache.h"
#include "core/noise/absorption.h"
#include "core/query/tables.h"
#include "core/trace/hosts_registration.h"
#include "core/trace/step_registration.h"
#include "core/trace/trace_store.h"
#include "core/transfers/transfers_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"

using namespace stallscope;

namespace {

const QString kQueryDir = QStringLiteral(STALLSCOPE_SOURCE_DIR "/tests/core/query");

struct Golden {
    QString title, sql;
    QStringList expected;
};

std::vector<Golden> readGolden() {
    QFile file(kQueryDir + "/golden.sql");
    if (!file.open(QIODevice::ReadOnly)) qFatal("golden.sql is missing");
    std::vector<Golden> cases;
    // A header up to the first blank line; then cases: "-- title", SQL, "-- expect", rows,
    // "-- end".
    enum { Header, Outside, Sql, Expect } state = Header;
    for (const QString& line : QString::fromUtf8(file.readAll()).split('\n')) {
        if (state == Header) {
            if (line.trimmed().isEmpty()) state = Outside;
        } else if (state == Outside && line.startsWith("-- ")) {
            cases.push_back({line.mid(3), {}, {}});
            state = Sql;
        } else if (state == Sql && line == "-- expect") {
            state = Expect;
        } else if (state == Sql) {
            cases.back().sql += line + ' ';
        } else if (state == Expect && line == "-- end") {
            state = Outside;
        } else if (state == Expect) {
            cases.back().expected << line;
        }
    }
    return cases;
}

QString csvOf(const query::Value& v) {
    switch (v.type) {
        case query::Value::Type::Integer:
            return QString::number(v.integer);
        case query::Value::Type::Real:
            return QString::number(v.real, 'g', 15);
        case query::Value::Type::Text:
            return QString::fromStdString(v.text);
        default:
            return {};
    }
}

QStringList rowsOf(Workspace& ws, const QString& sql) {
    QStringList out;
    query::run(
        ws, sql.toStdString(),
        [&](const std::vector<std::string>& columns) {
            QStringList names;
            for (const std::string& c : columns) names << QString::fromStdString(c);
            out << names.join(',');
        },
        [&](const std::vector<query::Value>& row) {
            QStringList cells;
            for (const query::Value& v : row) cells << csvOf(v);
            out << cells.join(',');
        });
    return out;
}

int64_t single(Workspace& ws, const QString& sql) {
    const QStringList rows = rowsOf(ws, sql);
    if (rows.size() != 2) qFatal("%s: expected one row", qPrintable(sql));
    return rows[1].toLongLong();
}

struct Run {
    int status = -1;
    QByteArray out;
    QString err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(STALLSCOPE_BINARY, args);
    if (!p.waitForFinished(120000)) qFatal("stallscope did not finish");
    return {p.exitCode(), p.readAllStandardOutput(), QString::fromUtf8(p.readAllStandardError())};
}

QByteArray fileHash(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

}  // namespace

class TestQuery : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString fixtureStore_;

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        fixtureStore_ = dir_.filePath("fixture.sqlite");
        auto ws = Workspace::open(fixtureStore_.toStdString());
        Progress progress;
        importFiles(*ws, ImportRequest{{(kQueryDir + "/fixture.json").toStdString()}, {}, {}},
                    progress);
    }

    void goldenQueries_data() {
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QStringList>("expected");
        for (const Golden& g : readGolden())
            QTest::newRow(qPrintable(g.title)) << g.sql << g.expected;
    }

    void goldenQueries() {
        QFETCH(QString, sql);
        QFETCH(QStringList, expected);
        QVERIFY(!expected.isEmpty());
        auto ws = Workspace::open(fixtureStore_.toStdString(), Workspace::Mode::ReadOnly);
        QCOMPARE(rowsOf(*ws, sql), expected);
    }

    // Every table answers a read under the read-only guard.
    void everyTableAnswers() {
        auto ws = Workspace::open(fixtureStore_.toStdString(), Workspace::Mode::ReadOnly);
        for (const std::string& name : query::tableNames()) {
            try {
                rowsOf(*ws, QString::fromStdString("SELECT count(*) FROM " + name));
            } catch (const std::exception& e) {
                QFAIL(qPrintable(QString::fromStdString(name + ": " + e.what())));
            }
        }
        QVERIFY(query::tableNames().size() >= 20);
    }

    void commandLineReadsOnly() {
        const QByteArray before = fileHash(fixtureStore_);
        // --json: columns and rows, values typed.
        const Run json =
            cli({"--store", fixtureStore_, "query", "--json",
                 "SELECT name, dur, NULL AS nothing_here FROM slice WHERE name = 'leaf'"});
        QCOMPARE(json.status, 0);
        const QJsonObject o = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(o.value("columns").toArray(), (QJsonArray{"name", "dur", "nothing_here"}));
        QCOMPARE(o.value("rows").toArray(), (QJsonArray{QJsonArray{"leaf", 5000, QJsonValue()}}));
        // --csv quotes what needs it.
        const Run csv = cli(
            {"--store", fixtureStore_, "query", "--csv", "SELECT 'a,b' AS x, 'say \"hi\"' AS y"});
        QCOMPARE(csv.status, 0);
        QCOMPARE(csv.out, QByteArray("x,y\n\"a,b\",\"say \"\"hi\"\"\"\n"));
        // Writes, settings and attachments are refused as read-only; bad SQL says where.
        for (const char* write :
             {"DELETE FROM profiles", "UPDATE profiles SET name = 'x'", "DROP TABLE profiles",
              "PRAGMA user_version = 7", "CREATE TABLE t(x)", "ATTACH 'other.db' AS o",
              "INSERT INTO profiles(name, kind, imported_at) VALUES ('x', 'trace', 'now')"}) {
            const Run refused = cli({"--store", fixtureStore_, "query", write});
            QCOMPARE(refused.status, 2);
            QVERIFY2(refused.err.contains("read-only"), qPrintable(refused.err));
        }
        const Run bad = cli({"--store", fixtureStore_, "query", "SELECT name FROM slice WHER x"});
        QCOMPARE(bad.status, 2);
        QVERIFY2(bad.err.contains("syntax error") && bad.err.contains("at byte 28"),
                 qPrintable(bad.err));
        const Run two = cli({"--store", fixtureStore_, "query", "SELECT 1; DELETE FROM profiles"});
        QCOMPARE(two.status, 2);
        QVERIFY(two.err.contains("one statement"));
        // args without an arg_set_id reads every arg set (the fixture's one: outer's 5 keys).
        const Run args = cli(
            {"--store", fixtureStore_, "query", "--csv",
             "SELECT key, string_value FROM args WHERE key = 's' OR key LIKE 'l%' ORDER BY key"});
        QCOMPARE(args.status, 0);
        QCOMPARE(args.out, QByteArray("key,string_value\nl[0],\nl[1],\ns,x\n"));
        // Reading pragmas pass.
        QCOMPARE(cli({"--store", fixtureStore_, "query", "PRAGMA table_info(slice)"}).status, 0);
        QCOMPARE(fileHash(fixtureStore_), before);  // nothing changed the workspace
    }

    // A 4-rank run (tests/tools/gen_multihost.py): the host table lists the ranks, host_step
    // each rank's steps as the hosts analysis has them.
    void hostsOfARun() {
        const QString run = dir_.filePath("run");
        QProcess gen;
        gen.start("python3", {STALLSCOPE_SOURCE_DIR "/tests/tools/gen_multihost.py", run, "--hosts",
                              "4", "--steps", "3", "--kernels", "5"});
        QVERIFY(gen.waitForFinished(60000));
        QCOMPARE(gen.exitCode(), 0);
        auto ws = Workspace::open(dir_.filePath("run.sqlite").toStdString());
        Progress progress;
        const int64_t id =
            importFiles(*ws, ImportRequest{{run.toStdString()}, {}, {}}, progress).at(0).id;
        const auto hosts = analysis::read(*ws, id, trace::hostsAnalysis());
        QVERIFY(hosts);
        QCOMPARE(rowsOf(*ws, "SELECT name FROM host ORDER BY id"),
                 (QStringList{"name", "rank 0", "rank 1", "rank 2", "rank 3"}));
        int64_t total = 0;
        for (const trace::HostSummary& h : hosts->hosts)
            for (const trace::HostStep& s : h.steps) total += s.duration;
        QCOMPARE(single(*ws, "SELECT sum(dur) FROM host_step"), total);
        QCOMPARE(single(*ws, "SELECT count(*) FROM host_step"), int64_t(12));
    }

    // The demo noise probe: one absorption row per curve, abs_raw as the fit gives it.
    void absorptionOfANoiseProbe() {
        auto ws = Workspace::open(dir_.filePath("noise.sqlite").toStdString());
        Progress progress;
        const int64_t id =
            importFiles(
                *ws,
                ImportRequest{{STALLSCOPE_SOURCE_DIR "/resources/noise-probe-demo.csv"}, {}, {}},
                progress)
                .at(0)
                .id;
        const noise::AbsorptionReport report = noise::analyzeProfile(*ws, id);
        QVERIFY(!report.curves.empty());
        QCOMPARE(single(*ws, "SELECT count(*) FROM absorption"), int64_t(report.curves.size()));
        const noise::Curve& first = report.curves.front();
        const QStringList rows =
            rowsOf(*ws, QString::fromStdString("SELECT abs_raw FROM absorption WHERE region = '" +
                                               first.region + "' AND mode = '" + first.mode +
                                               "' AND machine = '" + first.machine + "'"));
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1].toDouble(), first.fit.k1);
    }

    // A generated replay (allgather): the dma table has `dma --json`'s DMAs and stalls.
    void dmasOfAReplay() {
        const QString trace = dir_.filePath("ag.jsonl"), store = dir_.filePath("replay.sqlite");
        QCOMPARE(cli({"generate", "allgather", "--out", trace}).status, 0);
        QCOMPARE(cli({"--store", store, "import", trace}).status, 0);
        const Run dma = cli({"--store", store, "dma", "1", "--json"});
        QCOMPARE(dma.status, 0);
        const QJsonArray dmas = QJsonDocument::fromJson(dma.out).object().value("dmas").toArray();
        int64_t base = 0, transfer = 0;
        for (const QJsonValue v : dmas) {
            base += v.toObject().value("base_stall").toInteger();
            transfer += v.toObject().value("transfer_stall").toInteger();
        }
        QVERIFY(base > 0);
        auto ws = Workspace::open(store.toStdString(), Workspace::Mode::ReadOnly);
        QCOMPARE(
            rowsOf(*ws, "SELECT count(*), sum(base_stall), sum(transfer_stall) FROM dma"),
            (QStringList{"count(*),sum(base_stall),sum(transfer_stall)",
                         QStringLiteral("%1,%2,%3").arg(dmas.size()).arg(base).arg(transfer)}));
        // Its instructions, streamed with their simulated cycles: the stalls and the end agree
        // with the report's totals (1,647 instructions written by generate).
        const QJsonObject report = QJsonDocument::fromJson(dma.out).object();
        QCOMPARE(rowsOf(*ws,
                        "SELECT count(*), sum(stall), max(cycle + cost + stall) FROM "
                        "replay_instruction WHERE profile_id = 1"),
                 (QStringList{"count(*),sum(stall),max(cycle + cost + stall)",
                              QStringLiteral("1647,%1,%2")
                                  .arg(report.value("stall_cycles").toInteger())
                                  .arg(report.value("total_cycles").toInteger())}));
        QCOMPARE(single(*ws, "SELECT count(*) FROM replay_instruction WHERE kind = 'dma_issue'"),
                 int64_t(dmas.size()));
    }

    // CPI and metric samples (Nsight Compute, GPGPU-Sim, Sniper): cpi_stack and kernel_metric
    // hold what `cpi --json` reports (stack entries and their cycles, every metric).
    void cpiSamplesAgreeWithTheCli() {
        const QDir samples(QStringLiteral(STALLSCOPE_SHARED_DIR "/samples"));
        if (!samples.exists()) QSKIP("../shared/samples is absent");
        QStringList inputs{samples.filePath("sniper")};
        for (const char* dir : {"ncu", "gpgpusim"})
            for (const QFileInfo& f : QDir(samples.filePath(dir)).entryInfoList(QDir::Files))
                inputs << f.filePath();
        const QString store = dir_.filePath("cpi.sqlite");
        for (const QString& input : inputs) {
            const Run imported = cli({"--store", store, "import", input});
            QCOMPARE(imported.status, 0);
            const QString id = QString::fromUtf8(imported.out).section('\t', 0, 0);
            const Run cpi = cli({"--store", store, "cpi", id, "--json"});
            QCOMPARE(cpi.status, 0);
            const QJsonObject report = QJsonDocument::fromJson(cpi.out).object();
            int64_t entries = 0, metrics = 0;
            double cycles = 0;
            for (const QJsonValue k : report.value("kernels").toArray()) {
                const QJsonObject stack = k.toObject().value("stack").toObject();
                entries += stack.size();
                for (const QJsonValue v : stack) cycles += v.toDouble();
            }
            for (const QJsonValue k : report.value("kernel_metrics").toArray())
                metrics += k.toObject().value("metrics").toArray().size();
            auto ws = Workspace::open(store.toStdString(), Workspace::Mode::ReadOnly);
            QCOMPARE(single(*ws, "SELECT count(*) FROM cpi_stack WHERE profile_id = " + id),
                     entries);
            QCOMPARE(single(*ws, "SELECT count(*) FROM kernel_metric WHERE profile_id = " + id),
                     metrics);
            const QStringList sum = rowsOf(
                *ws, "SELECT coalesce(sum(cycles), 0) FROM cpi_stack WHERE profile_id = " + id);
            QVERIFY2(std::abs(sum[1].toDouble() - cycles) <= 1e-6 * std::max(1.0, cycles),
                     qPrintable(input));
        }
    }

    // The loadable extension gives Python's sqlite3 the same tables; the file stays as it was.
    void extensionGivesPythonTheTables() {
        const Run where = cli({"query", "--extension"});
        QCOMPARE(where.status, 0);
        const QString extension = QString::fromUtf8(where.out).trimmed();
        QVERIFY2(QFileInfo::exists(extension), qPrintable(extension));
        const QByteArray before = fileHash(fixtureStore_);
        QProcess python;
        // Debian's python3 loads extensions; a self-built one often cannot.
        python.start(QFileInfo::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3",
                     {"-c",
                      "import sqlite3, sys\n"
                      "c = sqlite3.connect(sys.argv[1])\n"
                      "if not hasattr(c, 'enable_load_extension'): print('NOEXT'); sys.exit()\n"
                      "c.enable_load_extension(True)\n"
                      "c.load_extension(sys.argv[2])\n"
                      "rows = c.execute('SELECT s.name, p.name FROM slice s JOIN slice p ON "
                      "p.id = s.parent_id ORDER BY s.ts').fetchall()\n"
                      "print(';'.join(a + '>' + b for a, b in rows))\n"
                      "print(c.execute('SELECT count(*), sum(dur) FROM slice').fetchone())\n",
                      fixtureStore_, extension});
        QVERIFY(python.waitForFinished(60000));
        const QString out = QString::fromUtf8(python.readAllStandardOutput());
        if (out.startsWith("NOEXT")) QSKIP("this python3's sqlite3 cannot load extensions");
        QCOMPARE(python.exitCode(), 0);
        QCOMPARE(out, QString("outer>ProfilerStep#1;inner>outer;inner>outer;leaf>inner;"
                              "outer>ProfilerStep#2\n(8, 555000)\n"));
        QCOMPARE(fileHash(fixtureStore_), before);
    }

    // Each trace sample: slices, per-op figures and steps as info and steps give them.
    void tablesAgreeWithInfoOnSamples() {
        const QDir samples(QStringLiteral(STALLSCOPE_SHARED_DIR "/samples"));
        if (!samples.exists()) QSKIP("../shared/samples is absent");
        const QStringList files{"kineto/before_fix_trace.json",   "kineto/after_fix_trace.json",
                                "chrome/simple_trace.json",       "chrome/x_event_trace.json",
                                "chrome/flow_simple.json",        "chrome/nestable_async.json",
                                "real/hta_alexnet_trace.json.gz", "real/tl_b200_eager.json.gz",
                                "real/tl_h100_qwen.json.gz"};
        std::vector<std::string> paths;
        for (const QString& f : files) paths.push_back(samples.filePath(f).toStdString());
        for (const char* dir : {"xprof", "chakra"})
            for (const QFileInfo& f : QDir(samples.filePath(dir)).entryInfoList(QDir::Files))
                paths.push_back(f.filePath().toStdString());
        const std::string store = dir_.filePath("samples.sqlite").toStdString();
        auto ws = Workspace::open(store);
        for (const std::string& path : paths) {
            Progress progress;
            const auto imported = importFiles(*ws, ImportRequest{{path}, {}, {}}, progress);
            const int64_t id = imported.at(0).id;
            const trace::TraceStore traceStore(*ws, id);
            const QJsonObject info = traceStore.infoJson(1000000);
            const QString p = QString::number(id);
            QCOMPARE(single(*ws, "SELECT count(*) FROM slice WHERE profile_id = " + p),
                     info.value("slices").toInteger() + info.value("instants").toInteger());
            QCOMPARE(single(*ws, "SELECT count(*) FROM counter WHERE profile_id = " + p),
                     info.value("counters").toInteger());
            QCOMPARE(single(*ws, "SELECT count(*) FROM flow WHERE profile_id = " + p),
                     info.value("flows").toInteger());
            // Per op: count and total of the ended slices (XProf ops known only in aggregate
            // have no slices to count).
            std::map<QString, std::pair<int64_t, int64_t>> ops;
            for (const QString& row :
                 rowsOf(*ws,
                        "SELECT name, count(*), sum(dur) + (sum(dur_ps) + 500) / 1000 FROM slice "
                        "WHERE profile_id = " +
                            p + " AND dur >= 0 AND instant = 0 GROUP BY name")
                     .mid(1)) {
                const int comma2 = int(row.lastIndexOf(',')),
                          comma1 = int(row.lastIndexOf(',', comma2 - 1));
                ops[row.left(comma1)] = {row.mid(comma1 + 1, comma2 - comma1 - 1).toLongLong(),
                                         row.mid(comma2 + 1).toLongLong()};
            }
            for (const QJsonValue v : info.value("top_ops").toArray()) {
                const QJsonObject op = v.toObject();
                if (op.contains("aggregated") || op.value("name").toString().contains(','))
                    continue;
                const auto found = ops.find(op.value("name").toString());
                QVERIFY2(found != ops.end(), qPrintable(op.value("name").toString()));
                QCOMPARE(found->second.first, op.value("count").toInteger());
                QCOMPARE(found->second.second, op.value("total").toInteger());
            }
            // Transfers and links as `dma --json` counts them.
            const auto moved = analysis::read(*ws, id, transfers::transfersAnalysis());
            QVERIFY(moved);
            int64_t bytes = 0;
            for (const transfers::Transfer& t : moved->transfers) bytes += int64_t(t.bytes);
            QCOMPARE(single(*ws, "SELECT count(*) FROM transfer WHERE profile_id = " + p),
                     int64_t(moved->transfers.size()));
            QCOMPARE(
                single(*ws, "SELECT coalesce(sum(bytes), 0) FROM transfer WHERE profile_id = " + p),
                bytes);
            QCOMPARE(single(*ws, "SELECT count(*) FROM link WHERE profile_id = " + p),
                     int64_t(moved->links.size()));
            // Steps as the step analysis has them.
            const auto steps = analysis::read(*ws, id, trace::stepsAnalysis());
            QVERIFY(steps);
            QCOMPARE(single(*ws, "SELECT count(*) FROM step WHERE profile_id = " + p),
                     int64_t(steps->steps.size()));
            int64_t total = 0;
            for (const trace::Step& s : steps->steps) total += steps->stepTime(s.index);
            QCOMPARE(
                single(*ws, "SELECT coalesce(sum(step_time), 0) FROM step WHERE profile_id = " + p),
                total);
        }
    }
};

QTEST_MAIN(TestQuery)
#include "test_query.moc"
