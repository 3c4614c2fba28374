// Trace compare (issue 8): per-op deltas and percentiles on a known distribution, CDF points
// normalized to the median of "before", the real Kineto before/after pair and the
// `stallscope compare A B --json` command.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <climits>
#include <fstream>
#include <set>
#include <tuple>

#include "core/compare/trace_compare.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"

using namespace stallscope;
using namespace stallscope::trace;

namespace {

// A Chrome trace with op "k" run back to back on one thread for each duration (µs), plus one
// op "only" of `onlyUs` µs when positive.
std::string chromeTrace(const std::vector<int>& durationsUs, int onlyUs) {
    QJsonArray events;
    int ts = 0;
    for (int d : durationsUs) {
        events.append(QJsonObject{
            {"ph", "X"}, {"name", "k"}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", d}});
        ts += d + 5;  // 5 µs idle between slices
    }
    if (onlyUs > 0)
        events.append(QJsonObject{
            {"ph", "X"}, {"name", "only"}, {"pid", 1}, {"tid", 2}, {"ts", 0}, {"dur", onlyUs}});
    return QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString();
}

int64_t importFile(Workspace& ws, const std::string& path) {
    Progress progress;
    return importFiles(ws, ImportRequest{{path}, {}, {}}, progress).at(0).id;
}

}  // namespace

class TestTraceCompare : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::string write(const QString& name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        std::ofstream(path) << text;
        return path;
    }

  private slots:
    void percentilesAndDeltasOnKnownDistribution() {
        // A: 10, 20, ..., 100 µs; B: each halved. Nearest rank: p50 = 5th, p95 = 10th value.
        std::vector<int> a, b;
        for (int i = 1; i <= 10; ++i) {
            a.push_back(10 * i);
            b.push_back(5 * i);
        }
        auto ws = Workspace::open(dir_.filePath("known.sqlite").toStdString());
        const int64_t ida = importFile(*ws, write("a.json", chromeTrace(a, 0)));
        const int64_t idb = importFile(*ws, write("b.json", chromeTrace(b, 40)));
        const TraceStore sa(*ws, ida), sb(*ws, idb);
        const TraceComparison c = compareTraces(collectDurations(sa), collectDurations(sb));
        QCOMPARE(c.ops.size(), size_t(2));
        const OpDelta& k = c.ops[0];  // largest |delta| first
        QCOMPARE(k.name, std::string("k"));
        QCOMPARE(k.a.count, uint64_t(10));
        QCOMPARE(k.a.total, int64_t(550000));
        QCOMPARE(k.a.p50, int64_t(50000));
        QCOMPARE(k.a.p95, int64_t(100000));
        QCOMPARE(k.a.mean, 55000.0);
        QCOMPARE(k.b.total, int64_t(275000));
        QCOMPARE(k.b.p50, int64_t(25000));
        QCOMPARE(k.b.p95, int64_t(50000));
        QCOMPARE(k.deltaTotal(), int64_t(-275000));
        QCOMPARE(k.deltaPct(), -50.0);
        const OpDelta& only = c.ops[1];
        QCOMPARE(only.name, std::string("only"));
        QCOMPARE(only.a.count, uint64_t(0));
        QCOMPARE(only.b.total, int64_t(40000));
        QCOMPARE(only.deltaPct(), 100.0);
        QCOMPARE(c.opsChanged, 2);
        // Spans: A = 550 + 9*5 = 595 µs, B = 275 + 45 = 320 µs; idle = the 9 gaps of 5 µs in A;
        // in B "only" (0..40 µs) covers the gaps inside it: 5+10 (k1 0-5, gap, k2 10-20, gap 20-25,
        // k3 25-40) so B's idle is 45 - 10 = 35 µs.
        QCOMPARE(c.a.span, int64_t(595000));
        QCOMPARE(c.b.span, int64_t(320000));
        QCOMPARE(c.a.idle(), int64_t(45000));
        QCOMPARE(c.b.idle(), int64_t(35000));
        // CDFs normalized to A's median of k (50 µs): A 0.2..2.0, B 0.1..1.0 ("only" is not in A).
        QCOMPARE(c.cdfA.size(), size_t(10));
        QCOMPARE(c.cdfA.front().value, 0.2);
        QCOMPARE(c.cdfA.front().fraction, 0.1);
        QCOMPARE(c.cdfA.back().value, 2.0);
        QCOMPARE(c.cdfA.back().fraction, 1.0);
        QCOMPARE(cdfAt(c.cdfA, 1.0), 0.5);
        QCOMPARE(cdfAt(c.cdfB, 1.0), 1.0);
        QCOMPARE(cdfAt(c.cdfB, 0.5), 0.5);
        QCOMPARE(c.summary, QString("B vs A: \u221246.2% total time, \u221242.7% op time, "
                                    "\u221222.2% idle time, 2 ops changed"));
        const QJsonObject json = comparisonJson(c);
        QCOMPARE(json.value("delta").toObject().value("total").toInteger(), -275000);
        QCOMPARE(json.value("delta").toObject().value("stall").toInteger(), -10000);
        const QJsonObject op = json.value("ops").toArray().at(0).toObject();
        QCOMPARE(op.value("name").toString(), QString("k"));
        QCOMPARE(op.value("a").toObject().value("p95").toInteger(), 100000);
        QCOMPARE(op.value("delta_pct").toDouble(), -50.0);
        QCOMPARE(json.value("cdf").toObject().value("b").toArray().at(4).toArray().at(1).toDouble(),
                 0.5);
        QCOMPARE(json.value("cdf").toObject().value("op").toString(), QString("k"));
        QVERIFY(json.value("percentiles").toString().startsWith("nearest-rank"));
        // The minimap density is the busy time binned: it adds up to the busy time.
        double busy = 0;
        for (double v : c.a.busyDensity) busy += v;
        QCOMPARE(c.a.busyDensity.size(), TraceDurations::kDensityBins);
        QVERIFY(qAbs(busy - 550000.0) < 1e-6);
        // Down-sampled CDF: at most the requested points, the maximum always kept.
        const TraceComparison coarse =
            compareTraces(collectDurations(sa), collectDurations(sb), "k", 4);
        QCOMPARE(coarse.cdfA.size(), size_t(4));
        QCOMPARE(coarse.cdfA[1].value, 1.0);  // ceil(2*10/4) = 5th value: 50 µs / 50 µs
        QCOMPARE(coarse.cdfA[1].fraction, 0.5);
        QCOMPARE(coarse.cdfA.back().value, 2.0);
    }

    // p95 by nearest rank differs from the interpolated value on a skewed distribution: of
    // {10, 20, 30, 40, 1000}, the nearest-rank p95 is the 5th value (ceil(0.95 * 5) = 5), 1000;
    // linear interpolation would give 40 + 0.8 * 960 = 808. p50 is the 3rd value, 30.
    void percentilesAreNearestRankNotInterpolated() {
        const OpSummary s = summarize({10, 20, 30, 40, 1000});
        QCOMPARE(s.count, uint64_t(5));
        QCOMPARE(s.p50, int64_t(30));
        QCOMPARE(s.p95, int64_t(1000));
        QCOMPARE(s.mean, 220.0);
        // 1..20: nearest rank p95 = 19th value, 19 (interpolated 19.05); p50 = 10th, 10
        // (interpolated 10.5).
        std::vector<int64_t> twenty;
        for (int64_t v = 1; v <= 20; ++v) twenty.push_back(v);
        QCOMPARE(summarize(twenty).p95, int64_t(19));
        QCOMPARE(summarize(twenty).p50, int64_t(10));
        QCOMPARE(nearestRank({}, 0.95), int64_t(0));
    }

    // The CDF's default op is the one with the largest total in A (SnR Fig. 6 plots one op);
    // "*" mixes all ops, each normalized to its own median in A.
    void cdfOpDefaultAndAllOps() {
        TraceDurations a, b;
        a.byOp["small"] = {10, 10, 10, 40};    // total 70, median (nearest rank) 10
        a.byOp["big"] = {100, 200, 300};       // total 600, median 200
        b.byOp["small"] = {5, 5, 5, 5};        // all 0.5 of A's median
        b.byOp["big"] = {100, 100, 100, 400};  // 0.5 x3, 2.0
        b.byOp["new"] = {1};                   // not in A: no reference, in no curve
        TraceComparison c = compareTraces(a, b);
        QCOMPARE(defaultCdfOp(a), std::string("big"));
        QCOMPARE(c.cdfOp, std::string("big"));
        QCOMPARE(c.cdfA.size(), size_t(3));  // 0.5, 1.0, 1.5
        QCOMPARE(c.cdfA[0].value, 0.5);
        QCOMPARE(cdfAt(c.cdfB, 0.5), 0.75);
        QCOMPARE(cdfAt(c.cdfB, 2.0), 1.0);
        setCdfOp(c, kAllOps);
        QCOMPARE(c.cdfOp, std::string(kAllOps));
        // A: small 1,1,1,4 and big 0.5,1,1.5; B: small 0.5 x4 and big 0.5 x3, 2.
        QCOMPARE(cdfAt(c.cdfA, 1.0), 5.0 / 7.0);
        QCOMPARE(cdfAt(c.cdfB, 0.5), 7.0 / 8.0);
        setCdfOp(c, "small");
        QCOMPARE(cdfAt(c.cdfB, 0.5), 1.0);
        QCOMPARE(cdfAt(c.cdfA, 1.0), 0.75);
        QCOMPARE(comparisonJson(c).value("cdf").toObject().value("op").toString(),
                 QString("small"));
    }

    void kinetoBeforeAfterPair() {
        const QString samples = QStringLiteral(STALLSCOPE_SHARED_DIR) + "/samples/kineto/";
        if (!QFile::exists(samples + "before_fix_trace.json")) QSKIP("samples not available");
        auto ws = Workspace::open(dir_.filePath("kineto.sqlite").toStdString());
        const int64_t ida = importFile(*ws, (samples + "before_fix_trace.json").toStdString());
        const int64_t idb = importFile(*ws, (samples + "after_fix_trace.json").toStdString());
        const TraceStore sa(*ws, ida), sb(*ws, idb);
        const TraceComparison c = compareTraces(collectDurations(sa), collectDurations(sb));
        // Both files hold the same 9 "X" events with the same durations and the same offsets
        // from their trace's start; only their order in the file and the absolute timestamps
        // (and pids) differ. So every op keeps its count and total and every delta is 0.
        const std::map<std::string, int64_t> totalNs{
            {"op1", 40},         {"op_record", 20},         {"op_wait", 20},
            {"op_evt_sync", 20}, {"cudaLaunchKernel", 10},  {"Kernel", 20},
            {"Event Sync", 20},  {"Stream Wait Event", 10}, {"Test trace (0)", 300}};
        QCOMPARE(c.ops.size(), totalNs.size());
        QCOMPARE(c.a.slices, uint64_t(9));
        QCOMPARE(c.b.slices, uint64_t(9));
        QCOMPARE(c.a.span, int64_t(300));
        QCOMPARE(c.b.span, int64_t(300));
        QCOMPARE(c.opTimeA, int64_t(460));
        QCOMPARE(c.opTimeB, int64_t(460));
        QCOMPARE(c.opsChanged, 0);
        for (const OpDelta& op : c.ops) {
            QVERIFY2(totalNs.count(op.name), op.name.c_str());
            QCOMPARE(op.a.count, uint64_t(1));
            QCOMPARE(op.b.count, uint64_t(1));
            QCOMPARE(op.a.total, totalNs.at(op.name));
            QCOMPARE(op.b.total, totalNs.at(op.name));
            QCOMPARE(op.deltaTotal(), int64_t(0));
            QCOMPARE(op.deltaPct(), 0.0);
        }
        // Identical relative timing: (op, start - trace start, duration) match one for one.
        auto timing = [](const TraceStore& store) {
            std::multiset<std::tuple<std::string, int64_t, int64_t>> out;
            for (const TrackRow& track : store.tracks())
                for (const SliceItem& s : store.slices(track.id, INT64_MIN / 2, INT64_MAX / 2, 0))
                    if (s.kind == ItemKind::Slice)
                        out.insert({store.text(s.name), s.start - store.start(), s.dur});
            return out;
        };
        const auto timingA = timing(sa);
        QCOMPARE(timingA.size(), size_t(9));
        QVERIFY(timingA == timing(sb));
        QVERIFY(timingA.count({"Stream Wait Event", 100, 10}) == 1);
        // Default CDF op: the largest total in A, the 300 ns "Test trace (0)".
        QCOMPARE(c.cdfOp, std::string("Test trace (0)"));
        QCOMPARE(c.cdfA.size(), size_t(1));
        QCOMPARE(c.cdfA[0].value, 1.0);
        QCOMPARE(c.cdfB[0].fraction, 1.0);
        QCOMPARE(c.summary, QString("B vs A: 0.0% total time, 0.0% op time, 0.0% idle time, "
                                    "0 ops changed"));
    }

    void compareCommandJson() {
        std::vector<int> a{10, 20, 30}, b{10, 20};
        const QString store = dir_.filePath("cli.sqlite");
        const QString fa = QString::fromStdString(write("cli_a.json", chromeTrace(a, 0)));
        const QString fb = QString::fromStdString(write("cli_b.json", chromeTrace(b, 0)));
        QProcess p;
        p.start(STALLSCOPE_BINARY, {"--store", store, "import", fa, fb});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        p.start(STALLSCOPE_BINARY, {"--store", store, "compare", "cli_a", "cli_b", "--json"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject json = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(json.value("kind").toString(), QString("trace"));
        QCOMPARE(json.value("a").toObject().value("name").toString(), QString("cli_a"));
        QCOMPARE(json.value("a").toObject().value("total").toInteger(), 70000);  // 60 + 2 gaps
        QCOMPARE(json.value("b").toObject().value("total").toInteger(), 35000);
        QCOMPARE(json.value("delta").toObject().value("total").toInteger(), -35000);
        const QJsonObject k = json.value("ops").toArray().at(0).toObject();
        QCOMPARE(k.value("name").toString(), QString("k"));
        QCOMPARE(k.value("a").toObject().value("count").toInt(), 3);
        QCOMPARE(k.value("b").toObject().value("total").toInteger(), 30000);
        QCOMPARE(k.value("delta_pct").toDouble(), -50.0);
        QVERIFY(json.value("summary").toString().startsWith("B vs A: \u221250.0% total time"));
        // --op picks the CDF's op; an op A does not have is refused (exit 2).
        p.start(STALLSCOPE_BINARY,
                {"--store", store, "compare", "cli_a", "cli_b", "--json", "--op", "*"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(QJsonDocument::fromJson(p.readAllStandardOutput())
                     .object()
                     .value("cdf")
                     .toObject()
                     .value("op")
                     .toString(),
                 QString("*"));
        p.start(STALLSCOPE_BINARY, {"--store", store, "compare", "cli_a", "cli_b", "--op", "nope"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("no op 'nope'"));
    }
};

QTEST_GUILESS_MAIN(TestTraceCompare)
#include "test_trace_compare.moc"
