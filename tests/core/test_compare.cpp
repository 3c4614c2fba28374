#include <QJsonArray>
#include <QtTest>

#include "generate.h"
#include "replay_compare.h"

using namespace stallscope::replay;

namespace {

// Two DMAs of 640 bytes (10 transfer cycles) over one link with base latency 400.
Trace twoDmas(bool hoisted, int64_t firstId, int64_t secondId) {
    TraceBuilder builder;
    Machine m;
    m.name = "hand";
    m.spaces = {{"hbm", 1 << 20}, {"dcache", 1 << 16}};
    m.links = {{0, 1, 400, 64}};
    builder.setMachine(m);
    int64_t index = 0;
    auto issue = [&](int64_t id, int64_t address) {
        InstrRecord r;
        r.index = index++;
        r.op = "dma.issue";
        r.unit = "dma";
        r.hasDma = true;
        r.dmaId = id;
        r.dmaSrc = {"hbm", address, 640};
        r.dmaDst = {"dcache", address, 640};
        builder.addInstr(r);
    };
    auto wait = [&](int64_t id) {
        InstrRecord r;
        r.index = index++;
        r.op = "dma.wait";
        r.unit = "dma";
        r.wait = id;
        builder.addInstr(r);
    };
    issue(firstId, 0);
    if (hoisted) issue(secondId, 1024);
    wait(firstId);
    if (!hoisted) issue(secondId, 1024);
    wait(secondId);
    return builder.finish();
}

}  // namespace

class TestCompare : public QObject {
    Q_OBJECT
  private slots:
    void hoistedSecondDmaByHand() {
        const Trace a = twoDmas(false, 1, 2);
        const Trace b = twoDmas(true, 1, 2);
        const Analysis aa = analyze(a), ab = analyze(b);
        // A: 0 issue, 1 wait (ready 400, done 410: stall 409), 411 issue, 412 wait (stall 409).
        QCOMPARE(aa.sim.totalCycles, uint64_t(822));
        QCOMPARE(aa.sim.stallCycles, uint64_t(818));
        // B: the second DMA queues behind the first on the link (410..420); waits at 2 and 411.
        QCOMPARE(ab.sim.totalCycles, uint64_t(421));
        QCOMPARE(ab.sim.stallCycles, uint64_t(417));
        const ReplayComparison c = compareReplays(a, aa, b, ab);
        QCOMPARE(c.dmas.size(), size_t(2));
        QCOMPARE(int(c.dmas[0].match), int(DmaMatch::ById));
        QCOMPARE(c.dmas[0].stallA, int64_t(409));
        QCOMPARE(c.dmas[0].stallB, int64_t(408));
        QCOMPARE(c.dmas[1].stallA, int64_t(409));
        QCOMPARE(c.dmas[1].stallB, int64_t(9));
        QCOMPARE(c.dmas[1].issueInstrA, int64_t(2));
        QCOMPARE(c.dmas[1].issueInstrB, int64_t(1));
        QCOMPARE(c.changedDmas, size_t(2));
        QCOMPARE(QString::fromStdString(c.summary),
                 QString("B vs A: -48.8% cycles, -49.0% stall cycles, 2 DMAs changed"));
        // Per-op cycles: issue cost only for dma.issue; waits carry the stalls.
        QCOMPARE(QString::fromStdString(c.ops[0].name), QString("dma.wait"));
        QCOMPARE(c.ops[0].a, uint64_t(820));
        QCOMPARE(c.ops[0].b, uint64_t(419));
        QVERIFY(qAbs(c.ops[0].deltaPct() - (-48.902439)) < 1e-4);
        const QJsonObject json = comparisonJson(c, a, b);
        QCOMPARE(json.value("delta").toObject().value("total").toInteger(), -401);
        QCOMPARE(json.value("delta").toObject().value("stall").toInteger(), -401);
        QCOMPARE(json.value("ops").toArray().size(), 2);
    }

    void matchesByLinkBytesOrderWhenIdsDiffer() {
        const Trace a = twoDmas(false, 1, 2);
        const Trace b = twoDmas(true, 10, 20);
        const ReplayComparison c = compareReplays(a, analyze(a), b, analyze(b));
        QCOMPARE(c.dmas.size(), size_t(2));
        for (const DmaDelta& d : c.dmas) QCOMPARE(int(d.match), int(DmaMatch::ByLinkBytesOrder));
        QCOMPARE(b.dmas[c.dmas[0].b].id, int64_t(10));
        QCOMPARE(b.dmas[c.dmas[1].b].id, int64_t(20));
        QCOMPARE(c.dmas[1].stallB, int64_t(9));
    }

    void unmatchedDmasAreReported() {
        const Trace a = generateWorkload("allgather");
        const Trace b = generateWorkload("allgather-pinned");
        const ReplayComparison c = compareReplays(a, analyze(a), b, analyze(b));
        size_t onlyA = 0;
        for (const DmaDelta& d : c.dmas) onlyA += d.match == DmaMatch::OnlyInA;
        // The pinned variant has no setup DMAs: 60 - 24 of them exist only in A.
        QCOMPARE(a.dmas.size(), size_t(60));
        QCOMPARE(b.dmas.size(), size_t(24));
        QCOMPARE(onlyA, size_t(36));
        QVERIFY(c.b.totalCycles < c.a.totalCycles);
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
