#include <QJsonArray>
#include <QtTest>

#include "core/compare/kind_compare.h"
#include "core/compare/replay_compare.h"
#include "core/errors.h"
#include "core/replay/generate.h"

using namespace stallscope::replay;
using stallscope::InputError;
namespace cpi = stallscope::cpi;
namespace noise = stallscope::noise;

namespace {

// Two DMAs of 640 bytes (10 transfer cycles) over one link with base latency 400.
InstructionStream twoDmas(bool hoisted, int64_t firstId, int64_t secondId) {
    InstructionStreamBuilder builder;
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

// Three DMAs: 1 and 2 on link hbm->dcache, 3 on its own link hbm2->dcache (so moving it does not
// change the others' queueing). The ISSUE of DMA 3 costs 0 cycles, so moving it changes no other
// instruction's cycle: in `hoisted` it sits right after DMA 1's ISSUE, which renumbers DMA 2's
// ISSUE (index 2 -> 3) without moving it.
InstructionStream threeDmas(bool hoisted) {
    InstructionStreamBuilder builder;
    Machine m;
    m.name = "hand";
    m.spaces = {{"hbm", 1 << 20}, {"hbm2", 1 << 20}, {"dcache", 1 << 16}};
    m.links = {{0, 2, 400, 64}, {1, 2, 400, 64}};
    builder.setMachine(m);
    int64_t index = 0;
    auto issue = [&](int64_t id, const char* space, int64_t address, int64_t cost) {
        InstrRecord r;
        r.index = index++;
        r.op = "dma.issue";
        r.unit = "dma";
        r.cost = cost;
        r.hasDma = true;
        r.dmaId = id;
        r.dmaSrc = {space, address, 640};
        r.dmaDst = {"dcache", address, 640};
        builder.addInstr(r);
    };
    auto plain = [&](const char* op, const char* unit, int64_t cost) {
        InstrRecord r;
        r.index = index++;
        r.op = op;
        r.unit = unit;
        r.cost = cost;
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
    issue(1, "hbm", 0, 1);
    if (hoisted) issue(3, "hbm2", 4096, 0);
    plain("vadd", "vpu", 1);
    issue(2, "hbm", 1024, 1);
    plain("vadd", "vpu", 1);
    plain("vadd", "vpu", 1);
    if (!hoisted) issue(3, "hbm2", 4096, 0);
    plain("matmul", "mxu", 2000);  // every DMA completes before the WAITs: no stall
    wait(1);
    wait(2);
    wait(3);
    return builder.finish();
}

// HLO op h0 (three instructions of 10 cycles) then h1 (two); in `moved`, one instruction of h1
// runs first, then h0's one, then h1's other three: h1's main block starts at cycle 20.
InstructionStream twoOps(bool moved) {
    InstructionStreamBuilder builder;
    Machine m;
    m.name = "hand";
    m.spaces = {{"hbm", 1 << 20}, {"dcache", 1 << 16}};
    m.links = {{0, 1, 400, 64}};
    builder.setMachine(m);
    builder.addHlo({0, "h0", "compute"});
    builder.addHlo({1, "h1", "compute"});
    int64_t index = 0;
    auto add = [&](int64_t hlo) {
        InstrRecord r;
        r.index = index++;
        r.op = "vadd";
        r.unit = "vpu";
        r.cost = 10;
        r.hlo = hlo;
        builder.addInstr(r);
    };
    for (int64_t hlo :
         moved ? std::vector<int64_t>{1, 0, 1, 1, 1} : std::vector<int64_t>{0, 0, 0, 1, 1})
        add(hlo);
    return builder.finish();
}

}  // namespace

class TestCompare : public QObject {
    Q_OBJECT
  private slots:
    void hoistedSecondDmaByHand() {
        const InstructionStream a = twoDmas(false, 1, 2);
        const InstructionStream b = twoDmas(true, 1, 2);
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
        // DMA 2's ISSUE moved above DMA 1's WAIT (original index 1); DMA 1 stayed put.
        QVERIFY(!c.dmas[0].issueMoved);
        QVERIFY(c.dmas[1].issueMoved);
        QCOMPARE(c.dmas[1].issueShift, int64_t(-1));
        QCOMPARE(c.changedDmas, size_t(2));
        QCOMPARE(QString::fromStdString(c.summary),
                 QString("B vs A: \u221248.8% cycles, \u221249.0% stall cycles, 2 DMAs changed"));
        // Per-op cycles: issue cost only for dma.issue; waits carry the stalls.
        QCOMPARE(QString::fromStdString(c.ops[0].name), QString("dma.wait"));
        QCOMPARE(c.ops[0].a, uint64_t(820));
        QCOMPARE(c.ops[0].b, uint64_t(419));
        QVERIFY(qAbs(c.ops[0].deltaPct() - (-48.902439)) < 1e-4);
        const QJsonObject json = comparisonJson(c, a, b);
        const QJsonObject delta = json.value("delta").toObject();
        QCOMPARE(delta.value("total").toInteger(), -401);
        QCOMPARE(delta.value("stall").toInteger(), -401);
        // Stall split. A: each WAIT waits 399 cycles of base latency and 10 of transfer.
        // B: DMA 1's WAIT at cycle 2 waits 398 + 10; DMA 2 queues behind DMA 1 on the link
        // (transfer 410-420) and its WAIT at cycle 411 waits 9 cycles of transfer only.
        QCOMPARE(json.value("a").toObject().value("base_stall_cycles").toInteger(), 798);
        QCOMPARE(json.value("b").toObject().value("base_stall_cycles").toInteger(), 398);
        QCOMPARE(json.value("b").toObject().value("transfer_stall_cycles").toInteger(), 19);
        QCOMPARE(delta.value("base_stall_pct").toDouble(), 100.0 * (398 - 798) / 798);
        QCOMPARE(delta.value("transfer_stall_pct").toDouble(), -5.0);
        QCOMPARE(json.value("a").toObject().value("base_stall_pct_of_stall").toDouble(),
                 100.0 * 798 / 818);
        QCOMPARE(json.value("ops").toArray().size(), 2);
        const QJsonObject second = json.value("dmas").toArray().at(1).toObject();
        QCOMPARE(second.value("issue_moved").toBool(), true);
        QCOMPARE(second.value("issue_shift").toInteger(), -1);
        QVERIFY(!json.contains("alignment"));
    }

    // Renumbering is not a move: DMA 3's ISSUE moves from index 5 to 1, which shifts DMA 2's
    // ISSUE from index 2 to 3 with the same neighbours and cycles: only DMA 3 changed.
    void renumberedIssueIsNotAMove() {
        const InstructionStream a = threeDmas(false), b = threeDmas(true);
        const Analysis aa = analyze(a), ab = analyze(b);
        QCOMPARE(aa.sim.stallCycles, uint64_t(0));
        QCOMPARE(ab.sim.stallCycles, uint64_t(0));
        const ReplayComparison c = compareReplays(a, aa, b, ab);
        QCOMPARE(c.dmas.size(), size_t(3));
        const DmaDelta& d1 = c.dmas[0];
        const DmaDelta& d2 = c.dmas[1];
        const DmaDelta& d3 = c.dmas[2];
        QCOMPARE(a.dmas[d2.a].id, int64_t(2));
        QCOMPARE(d2.issueInstrA, int64_t(2));
        QCOMPARE(d2.issueInstrB, int64_t(3));  // renumbered...
        QVERIFY(!d2.issueMoved);               // ...but not moved
        QCOMPARE(d2.issueShift, int64_t(0));
        QCOMPARE(d2.slackA, d2.slackB);
        QVERIFY(!d2.changed());
        QVERIFY(!d1.issueMoved && !d1.changed());
        QCOMPARE(a.dmas[d3.a].id, int64_t(3));
        QVERIFY(d3.issueMoved);
        QCOMPARE(d3.issueInstrA, int64_t(5));
        QCOMPARE(d3.issueShift, int64_t(-4));  // now before original instruction 1
        QCOMPARE(d3.issueCycleA, int64_t(5));
        QCOMPARE(d3.issueCycleB, int64_t(1));
        QCOMPARE(c.changedDmas, size_t(1));
        QVERIFY(QString::fromStdString(c.summary).endsWith("1 DMAs changed"));
    }

    // An op only in B is +100% and one only in A is −100%, as in trace compare.
    void newAndGoneOpsArePlusMinusHundred() {
        const InstructionStream a = twoOps(false);
        InstructionStream b =
            threeDmas(false);  // no HLO ops: every instruction counts under its opcode
        const ReplayComparison c = compareReplays(a, analyze(a), b, analyze(b));
        bool sawNew = false, sawGone = false;
        for (const OpDelta& op : c.ops) {
            if (op.a == 0 && op.b > 0) {
                QCOMPARE(op.deltaPct(), 100.0);
                sawNew = true;
            }
            if (op.b == 0 && op.a > 0) {
                QCOMPARE(op.deltaPct(), -100.0);
                sawGone = true;
            }
        }
        QVERIFY(sawNew && sawGone);
        const OpDelta same{"x", 0, 0};
        QCOMPARE(same.deltaPct(), 0.0);
    }

    void alignmentAtAnHloOp() {
        const InstructionStream a = twoOps(false), b = twoOps(true);
        const Analysis aa = analyze(a), ab = analyze(b);
        QCOMPARE(hloOpStartCycle(a, aa.sim, "h1"), std::optional<uint64_t>(30));
        // B: h1 runs [0, 10) and [20, 50): the longer run is its block.
        QCOMPARE(hloOpStartCycle(b, ab.sim, "h1"), std::optional<uint64_t>(20));
        QCOMPARE(hloOpStartCycle(b, ab.sim, "h0"), std::optional<uint64_t>(10));
        QVERIFY(!hloOpStartCycle(a, aa.sim, "nope"));
        QCOMPARE(commonHloOps(a, b), (std::vector<std::string>{"h0", "h1"}));
        const Alignment at = alignAtOp(a, aa.sim, b, ab.sim, "h1");
        QCOMPARE(at.a, uint64_t(30));
        QCOMPARE(at.b, uint64_t(20));
        QCOMPARE(at.offset(), int64_t(-10));
        QVERIFY_THROWS_EXCEPTION(InputError, alignAtOp(a, aa.sim, b, ab.sim, "nope"));
        const QJsonObject json =
            comparisonJson(compareReplays(a, aa, b, ab), a, b, std::optional<Alignment>(at));
        const QJsonObject alignment = json.value("alignment").toObject();
        QCOMPARE(alignment.value("op").toString(), QString("h1"));
        QCOMPARE(alignment.value("offset").toInteger(), -10);
    }

    // CPI: totals per source (hw and a model are never added up), kernels present on one side
    // only are listed, per-category deltas.
    void cpiComparedPerSource() {
        auto stack = [](std::string kernel, std::string source,
                        std::map<std::string, double> cycles) {
            return cpi::KernelStack{std::move(kernel), std::move(source), {}, std::move(cycles)};
        };
        const cpi::CpiData a = cpi::buildCpiData(
            {stack("gemm", "hw", {{"selected", 600}, {"long_scoreboard", 400}}),
             stack("gemm", "amali", {{"selected", 700}, {"long_scoreboard", 300}}),
             stack("softmax", "hw", {{"selected", 300}, {"barrier", 100}}),
             stack("old", "hw", {{"selected", 50}})});
        const cpi::CpiData b = cpi::buildCpiData(
            {stack("gemm", "hw", {{"selected", 600}, {"long_scoreboard", 100}}),
             stack("gemm", "amali", {{"selected", 650}, {"long_scoreboard", 200}}),
             stack("softmax", "hw", {{"selected", 300}, {"barrier", 20}}),
             stack("new", "hw", {{"selected", 80}})});
        const stallscope::CpiComparison c = stallscope::compareCpiStacks(a, b);
        QCOMPARE(c.stacks.size(), size_t(3));
        QCOMPARE(c.sources.size(), size_t(2));
        QCOMPARE(c.sources[0].source, std::string("hw"));
        QCOMPARE(c.sources[0].kernels, size_t(2));
        QCOMPARE(c.sources[0].totalA, 1400.0);  // gemm 1000 + softmax 400; "old" unmatched
        QCOMPARE(c.sources[0].totalB, 1020.0);
        QCOMPARE(c.sources[0].stallA, 500.0);  // long_scoreboard 400 + barrier 100
        QCOMPARE(c.sources[0].stallB, 120.0);
        QCOMPARE(c.sources[1].source, std::string("amali"));
        QCOMPARE(c.sources[1].totalA, 1000.0);
        QCOMPARE(c.sources[1].totalB, 850.0);
        QCOMPARE(c.onlyInA, (std::vector<std::pair<std::string, std::string>>{{"old", "hw"}}));
        QCOMPARE(c.onlyInB, (std::vector<std::pair<std::string, std::string>>{{"new", "hw"}}));
        QCOMPARE(c.stacks[0].delta("long_scoreboard"), -300.0);
        QCOMPARE(c.primarySource, std::string("hw"));
        QCOMPARE(QString::fromStdString(c.summary),
                 QString("B vs A (hw): \u221227.1% cycles, \u221276.0% stall cycles over 2 "
                         "kernels, 1 only in A, 1 only in B"));
        const QJsonObject json = stallscope::cpiComparisonJson(c);
        QCOMPARE(json.value("a").toObject().value("total_cycles").toDouble(), 1400.0);
        QCOMPARE(json.value("delta").toObject().value("total").toDouble(), -380.0);
        QCOMPARE(json.value("source").toString(), QString("hw"));
        QCOMPARE(json.value("only_in_a").toArray().at(0).toObject().value("kernel").toString(),
                 QString("old"));
        QCOMPARE(json.value("sources").toArray().at(1).toObject().value("total_pct").toDouble(),
                 -15.0);
    }

    // Noise: Abs_raw / Abs_rel of both sides and the plateau change in percent.
    void noiseDeltaHasAbsorptionAndPercent() {
        std::vector<noise::NoiseRun> runsA, runsB;
        auto add = [](std::vector<noise::NoiseRun>& runs, double k1, double t0) {
            for (double k = 0; k <= 32; k += 2)
                for (int rep = 0; rep < 3; ++rep) {
                    noise::NoiseRun r;
                    r.region = "loop";
                    r.mode = "fp_add64";
                    r.k = k;
                    r.rep = rep;
                    r.bodyInstr = 40;
                    r.time = (k <= k1 ? t0 : t0 + 4 * (k - k1)) * (1 + 0.002 * rep);
                    runs.push_back(r);
                }
        };
        add(runsA, 8, 100);
        add(runsB, 16, 90);
        const auto c =
            stallscope::compareNoise(noise::analyzeRuns(runsA), noise::analyzeRuns(runsB));
        QCOMPARE(c.curves.size(), size_t(1));
        QCOMPARE(c.curves[0].a.fit.k1, 8.0);
        QCOMPARE(c.curves[0].b.fit.k1, 16.0);
        const QJsonObject json = stallscope::noiseComparisonJson(c);
        const QJsonObject curve = json.value("curves").toArray().at(0).toObject();
        QCOMPARE(curve.value("abs_raw_a").toDouble(), 8.0);
        QCOMPARE(curve.value("abs_raw_b").toDouble(), 16.0);
        QCOMPARE(curve.value("abs_rel_a").toDouble(), 0.2);
        QCOMPARE(curve.value("abs_rel_b").toDouble(), 0.4);
        const double t0a = c.curves[0].a.fit.t0, t0b = c.curves[0].b.fit.t0;
        QCOMPARE(json.value("delta").toObject().value("total_pct").toDouble(),
                 100.0 * (t0b - t0a) / t0a);
        QVERIFY(qAbs(json.value("delta").toObject().value("total_pct").toDouble() + 10.0) < 0.01);
        QVERIFY(
            QString::fromStdString(c.summary).startsWith("B vs A: \u221210.0% plateau runtime"));
    }

    void matchesByLinkBytesOrderWhenIdsDiffer() {
        const InstructionStream a = twoDmas(false, 1, 2);
        const InstructionStream b = twoDmas(true, 10, 20);
        const ReplayComparison c = compareReplays(a, analyze(a), b, analyze(b));
        QCOMPARE(c.dmas.size(), size_t(2));
        for (const DmaDelta& d : c.dmas) QCOMPARE(int(d.match), int(DmaMatch::ByLinkBytesOrder));
        QCOMPARE(b.dmas[c.dmas[0].b].id, int64_t(10));
        QCOMPARE(b.dmas[c.dmas[1].b].id, int64_t(20));
        QCOMPARE(c.dmas[1].stallB, int64_t(9));
    }

    void unmatchedDmasAreReported() {
        const InstructionStream a = generateWorkload("allgather");
        const InstructionStream b = generateWorkload("allgather-pinned");
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
