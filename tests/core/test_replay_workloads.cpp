// The SnR findings reproduced on the generated reference workloads (CONTRACT.md §6).

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

#include <sstream>

#include "core/errors.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/report.h"
#include "core/replay/suggest.h"
#include "core/replay/whatif.h"

using namespace stallscope;
using namespace stallscope::replay;

namespace {

// All-gather DMA ids: invocation * 100 + 1..9 for the setup phase, + 50..55 for the data phase.
bool isSetupDma(const Dma& d) {
    return d.id % 100 < 50;
}

struct SetupStall {
    uint64_t dmas = 0, stall = 0, base = 0, transfer = 0;
};

SetupStall setupStall(const InstructionStream& t, const Simulation& sim) {
    SetupStall s;
    for (size_t d = 0; d < t.dmas.size(); ++d) {
        if (!isSetupDma(t.dmas[d])) continue;
        ++s.dmas;
        s.base += sim.dmas[d].baseStall;
        s.transfer += sim.dmas[d].transferStall;
    }
    s.stall = s.base + s.transfer;
    return s;
}

size_t countKind(const Analysis& a, const char* kind) {
    return static_cast<size_t>(std::count_if(a.suggestions.begin(), a.suggestions.end(),
                                             [&](const Suggestion& s) { return s.kind == kind; }));
}

std::string jsonl(const InstructionStream& t) {
    std::ostringstream out;
    writeJsonl(t, out);
    return out.str();
}

}  // namespace

class TestReplayWorkloads : public QObject {
    Q_OBJECT

  private slots:
    void allGatherSetupIsBaseLatencyBound() {
        const InstructionStream t = generateWorkload("allgather");
        QCOMPARE(t.dmas.size(), size_t(4 * (9 + 6)));
        const Analysis a = analyze(t);
        const SetupStall s = setupStall(t, a.sim);
        QCOMPARE(s.dmas, 36ull);
        // Small transfers: almost all of the setup stall is base latency (SnR Fig. 5, green).
        QVERIFY(s.stall > 0);
        QVERIFY2(s.base * 100 >= s.stall * 95,
                 qPrintable(QString("base %1 of %2").arg(s.base).arg(s.stall)));
        QVERIFY(s.base > 20 * s.transfer);
        // Every setup DMA waits out nearly the whole base latency of 400 cycles.
        for (size_t d = 0; d < t.dmas.size(); ++d)
            if (isSetupDma(t.dmas[d])) QVERIFY(a.sim.dmas[d].baseStall >= 390);
    }

    void allGatherSuggestionsCutSetupStalls() {
        const InstructionStream t = generateWorkload("allgather");
        const Analysis a = analyze(t);
        QVERIFY(countKind(a, "pin") == 1);
        QVERIFY(countKind(a, "group") >= 4);
        const Suggestion& pin = *std::find_if(a.suggestions.begin(), a.suggestions.end(),
                                              [](const Suggestion& s) { return s.kind == "pin"; });
        // The 9 setup DMAs of invocations 2..4 fetch the same node tables again.
        QCOMPARE(pin.dmas.size(), size_t(27));
        for (int64_t id : pin.dmas) QVERIFY(id >= 100 && id % 100 < 50);
        QVERIFY(pin.savingCycles > 0);

        const WhatifResult r = applyAllSuggestions(t);
        const Simulation after = simulate(r.edited.trace);
        QCOMPARE(after.totalCycles, r.afterTotal);
        const SetupStall before = setupStall(t, a.sim);
        const SetupStall cut = setupStall(r.edited.trace, after);
        QCOMPARE(cut.dmas, 9ull);  // only the first invocation still fetches them
        QVERIFY2(cut.stall * 5 <= before.stall * 2,
                 qPrintable(QString("setup stall %1 -> %2").arg(before.stall).arg(cut.stall)));
        // The first invocation's nine serial DMAs now overlap in two waves (3 then 6).
        QVERIFY2(cut.stall < 3 * 420, qPrintable(QString::number(cut.stall)));
        QVERIFY(r.afterTotal < r.beforeTotal);
        QCOMPARE(QString::fromStdString(verifyDependencies(t, r.edited.trace, r.edited.origIndex)),
                 QString());
        const QJsonObject report = whatifReport(r);
        QCOMPARE(report["before"].toObject()["total_cycles"].toInteger(),
                 static_cast<qint64>(a.sim.totalCycles));
        QVERIFY(report["applied"].toArray().size() >= 2);
    }

    void pinnedAllGatherIsFaster() {
        const InstructionStream full = generateWorkload("allgather");
        const InstructionStream pinned = generateWorkload("allgather-pinned");
        QCOMPARE(pinned.dmas.size(), size_t(4 * 6));
        for (const Dma& d : pinned.dmas) QVERIFY(!isSetupDma(d));
        const Simulation a = simulate(full);
        const Simulation b = simulate(pinned);
        QVERIFY2(b.totalCycles < a.totalCycles,
                 qPrintable(QString("%1 vs %2").arg(b.totalCycles).arg(a.totalCycles)));
        // The difference is the setup phase: at least its 36 base latencies.
        QVERIFY(a.totalCycles - b.totalCycles >= 36 * 390);
    }

    void matmulStarvedGetsPrefetches() {
        const InstructionStream t = generateWorkload("matmul-starved");
        const Analysis a = analyze(t);
        QCOMPARE(t.dmas.size(), size_t(48));
        QVERIFY(countKind(a, "hoist") >= 10);
        for (const Suggestion& s : a.suggestions) {
            QVERIFY(s.savingCycles > 0);
            if (s.kind != "hoist") continue;
            const Dma& d = t.dmas[s.dmaIndices[0]];
            QVERIFY(s.toInstr < d.issueInstr);
            QVERIFY(s.toInstr >= a.deps.dmas[s.dmaIndices[0]].backtailInstrRelocated);
        }
        // Each weight DMA's buffer was last read four tiles earlier: long backtails.
        const DmaDependencies& dep = a.deps.dmas[10];
        QCOMPARE(dep.binding, ConstraintKind::DestinationReader);
        QVERIFY(t.dmas[10].issueInstr - dep.backtailInstr > 40);

        const size_t mxu = a.utilization.unitIndex(t, "mxu");
        QVERIFY(mxu != kNone);
        const double before = a.utilization.overall[mxu];
        const WhatifResult r = applyAllSuggestions(t);
        const Simulation after = simulate(r.edited.trace);
        const UnitUtilization u = unitUtilization(r.edited.trace, after, 64);
        const double afterUtil = u.overall[u.unitIndex(r.edited.trace, "mxu")];
        QVERIFY2(afterUtil > before * 1.5,
                 qPrintable(QString("mxu utilization %1 -> %2").arg(before).arg(afterUtil)));
        // Matrix work is unchanged: 48 tiles x 8 matmuls x 80 cycles.
        QCOMPARE(static_cast<uint64_t>(afterUtil * after.totalCycles + 0.5), 48ull * 8 * 80);
        QVERIFY(r.afterStall * 10 < r.beforeStall);
        QCOMPARE(QString::fromStdString(verifyDependencies(t, r.edited.trace, r.edited.origIndex)),
                 QString());
    }

    void fragmentationLargestFreeBelowUnused() {
        const InstructionStream t = generateWorkload("fragmentation");
        const Analysis a = analyze(t);
        const DcacheAnalysis& d = a.dcache;
        QCOMPARE(d.pages, 32768u);
        QCOMPARE(d.buckets, 128u);
        QVERIFY2(d.medianUnusedPct > 20 && d.medianUnusedPct < 80,
                 qPrintable(QString::number(d.medianUnusedPct)));
        QVERIFY2(
            d.medianLargestFreePct * 2 < d.medianUnusedPct,
            qPrintable(QString("%1 vs %2").arg(d.medianLargestFreePct).arg(d.medianUnusedPct)));
        for (uint32_t bin = 0; bin < d.bins; ++bin)
            QVERIFY(d.largestFreePct[bin] <= d.unusedPct[bin] + 1e-9);
        const QJsonObject report = dcacheReport(d);
        QCOMPARE(report["median_unused_pct"].toDouble(), d.medianUnusedPct);
        QCOMPARE(report["unused_pct"].toArray().size(), 512);
    }

    void everySuggestionIsReSimulatedAndLegal() {
        GenerateOptions options;
        options.instructions = 20000;
        for (const std::string& name : workloadNames()) {
            const InstructionStream t = generateWorkload(name, options);
            const Analysis a = analyze(t);
            for (const Suggestion& s : a.suggestions) {
                const EditedTrace e = applyPlan(t, s.plan);
                const Simulation full = simulate(e.trace);
                QCOMPARE(static_cast<int64_t>(a.sim.totalCycles) -
                             static_cast<int64_t>(full.totalCycles),
                         s.savingCycles);
                QCOMPARE(QString::fromStdString(verifyDependencies(t, e.trace, e.origIndex)),
                         QString());
            }
            const WhatifResult all = applyAllSuggestions(t);
            QVERIFY2(all.afterTotal <= all.beforeTotal, name.c_str());
            QCOMPARE(QString::fromStdString(
                         verifyDependencies(t, all.edited.trace, all.edited.origIndex)),
                     QString());
        }
    }

    // Applying every suggestion never breaks a dependency, on many seeds: the fragmentation
    // workload relocates destinations, whose data later edits of the same round must not clobber
    // (seeds 3, 5 and 8 once did).
    void applyAllKeepsDependenciesOnManySeeds() {
        for (uint64_t seed = 1; seed <= 10; ++seed) {
            GenerateOptions options;
            options.seed = seed;
            for (const char* name : {"fragmentation", "matmul-starved", "allgather"}) {
                const InstructionStream t = generateWorkload(name, options);
                const WhatifResult all = applyAllSuggestions(t);
                const QString where = QString("%1 seed %2").arg(name).arg(seed);
                QVERIFY2(all.afterTotal < all.beforeTotal, qPrintable(where));
                QCOMPARE(QString::fromStdString(
                             verifyDependencies(t, all.edited.trace, all.edited.origIndex)),
                         QString());
            }
        }
    }

    void deterministicGeneration() {
        for (const std::string& name : workloadNames()) {
            GenerateOptions options;
            options.instructions = 5000;
            QCOMPARE(jsonl(generateWorkload(name, options)),
                     jsonl(generateWorkload(name, options)));
        }
        GenerateOptions other;
        other.instructions = 5000;
        other.seed = 2;
        GenerateOptions first;
        first.instructions = 5000;
        QVERIFY(jsonl(generateWorkload("scale", first)) != jsonl(generateWorkload("scale", other)));
        QVERIFY_THROWS_EXCEPTION(InputError, generateWorkload("nonsense"));
    }

    void scaleMix() {
        GenerateOptions options;
        options.instructions = 100000;
        const InstructionStream t = generateWorkload("scale", options);
        QCOMPARE(t.instrs.size(), size_t(100000));
        // About one DMA every 10-20 instructions.
        QVERIFY2(t.dmas.size() * 20 >= t.instrs.size() && t.dmas.size() * 10 <= t.instrs.size(),
                 qPrintable(QString::number(t.dmas.size())));
        const Analysis a = analyze(t);
        const size_t mxu = a.utilization.unitIndex(t, "mxu");
        const size_t vpu = a.utilization.unitIndex(t, "vpu");
        QVERIFY(mxu != kNone && vpu != kNone);
        QVERIFY(a.utilization.overall[mxu] > 0);
        QVERIFY(!a.suggestions.empty());
        const QJsonObject info = replayInfo(t, a.sim, 1);
        QCOMPARE(info["slices"].toInteger(), static_cast<qint64>(100000 + t.dmas.size()));
        QCOMPARE(info["top_ops"].toArray().size(), 4);  // four HLO ops cover every instruction
    }
};

QTEST_GUILESS_MAIN(TestReplayWorkloads)
#include "test_replay_workloads.moc"
