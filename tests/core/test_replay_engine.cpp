// Hand-computed checks of the replay engine: timing model, DMA engine, dependencies, data-cache
// liveness, what-if edits, suggestions and the JSONL writer.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <deque>
#include <sstream>

#include "core/errors.h"
#include "core/replay/dcache.h"
#include "core/replay/dependencies.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/report.h"
#include "core/replay/simulate.h"
#include "core/replay/suggest.h"
#include "core/replay/whatif.h"

using namespace stallscope;
using namespace stallscope::replay;

namespace {

struct M {
    const char* space;
    int64_t address, bytes;
};

// Builds small traces instruction by instruction through InstructionStreamBuilder.
class Build {
  public:
    explicit Build(uint64_t dcacheBytes = 16 * 1024 * 1024, uint32_t bucketPages = 256) {
        Machine m;
        m.name = "test";
        m.spaces = {{"hbm", 1ull << 32}, {"dcache", dcacheBytes}};
        m.links = {{0, 1, 400, 64}, {1, 0, 400, 64}};
        m.dcache = DcacheGeometry{1, 512, bucketPages};
        m.lightweight = {"mov", "add", "sub", "shl", "shr", "and", "or", "lea"};
        b_.setMachine(m);
    }
    Build& op(const char* opcode, uint32_t cost = 1, std::vector<std::string> rd = {},
              std::vector<std::string> wr = {}, std::vector<M> mrd = {}, std::vector<M> mwr = {},
              const char* unit = "scalar") {
        start(opcode, unit);
        r_.cost = cost;
        keep(rd, r_.rd);
        keep(wr, r_.wr);
        for (const M& m : mrd) r_.mrd.push_back({m.space, m.address, m.bytes});
        for (const M& m : mwr) r_.mwr.push_back({m.space, m.address, m.bytes});
        b_.addInstr(r_);
        return *this;
    }
    Build& issue(int64_t id, M src, M dst, std::vector<std::string> rd = {},
                 std::vector<M> mrd = {}) {
        start("dma.issue", "dma");
        keep(rd, r_.rd);
        for (const M& m : mrd) r_.mrd.push_back({m.space, m.address, m.bytes});
        r_.hasDma = true;
        r_.dmaId = id;
        r_.dmaSrc = {src.space, src.address, src.bytes};
        r_.dmaDst = {dst.space, dst.address, dst.bytes};
        b_.addInstr(r_);
        return *this;
    }
    Build& wait(int64_t id) {
        start("dma.wait", "dma");
        r_.wait = id;
        b_.addInstr(r_);
        return *this;
    }
    InstructionStream finish() { return b_.finish(); }

  private:
    void start(const char* opcode, const char* unit) {
        r_.clear();
        r_.index = static_cast<int64_t>(b_.instrCount());
        r_.op = opcode;
        r_.unit = unit;
    }
    void keep(const std::vector<std::string>& names, std::vector<std::string_view>& out) {
        for (const auto& n : names) out.push_back(storage_.emplace_back(n));
    }
    InstructionStreamBuilder b_;
    InstrRecord r_;
    std::deque<std::string> storage_;
};

// Re-imports CONTRACT §1 JSONL (the test's own small reader on QJsonDocument).
InstructionStream readJsonl(const std::string& text, std::vector<int64_t>* origIndex = nullptr) {
    InstructionStreamBuilder builder;
    std::istringstream in(text);
    std::string line;
    std::deque<std::string> storage;
    auto keep = [&](const QJsonValue& v) -> std::string_view {
        return storage.emplace_back(v.toString().toStdString());
    };
    auto region = [&](const QJsonValue& v) {
        const QJsonArray a = v.toArray();
        return InstrRecord::RegionRecord{keep(a[0]), a[1].toInteger(), a[2].toInteger()};
    };
    while (std::getline(in, line)) {
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
        const QString kind = o["record"].toString();
        if (kind == "machine") {
            Machine m;
            m.name = o["name"].toString().toStdString();
            m.clockGhz = o["clock_ghz"].toDouble();
            for (const auto& sv : o["spaces"].toArray()) {
                const QJsonObject s = sv.toObject();
                m.spaces.push_back({s["name"].toString().toStdString(),
                                    static_cast<uint64_t>(s["bytes"].toInteger())});
            }
            for (const auto& lv : o["links"].toArray()) {
                const QJsonObject l = lv.toObject();
                m.links.push_back({m.findSpace(l["src"].toString().toStdString()),
                                   m.findSpace(l["dst"].toString().toStdString()),
                                   static_cast<uint32_t>(l["base_latency"].toInteger()),
                                   l["bytes_per_cycle"].toDouble()});
            }
            if (o.contains("dcache")) {
                const QJsonObject d = o["dcache"].toObject();
                m.dcache = DcacheGeometry{m.findSpace(d["space"].toString().toStdString()),
                                          static_cast<uint32_t>(d["page_bytes"].toInteger()),
                                          static_cast<uint32_t>(d["bucket_pages"].toInteger())};
            }
            for (const auto& w : o["lightweight"].toArray())
                m.lightweight.push_back(w.toString().toStdString());
            builder.setMachine(m);
        } else if (kind == "hlo") {
            builder.addHlo({o["id"].toInteger(), o["name"].toString().toStdString(),
                            o["category"].toString().toStdString()});
        } else if (kind == "instr") {
            InstrRecord r;
            r.index = o["i"].toInteger();
            r.op = keep(o["op"]);
            r.unit = keep(o["unit"]);
            if (o.contains("cost")) r.cost = o["cost"].toInteger();
            if (o.contains("busy")) r.busy = o["busy"].toInteger();
            if (o.contains("hlo")) r.hlo = o["hlo"].toInteger();
            if (o.contains("cycle")) r.cycle = o["cycle"].toInteger();
            if (o.contains("stall")) r.stall = o["stall"].toInteger();
            if (o.contains("wait")) r.wait = o["wait"].toInteger();
            for (const auto& v : o["rd"].toArray()) r.rd.push_back(keep(v));
            for (const auto& v : o["wr"].toArray()) r.wr.push_back(keep(v));
            for (const auto& v : o["mrd"].toArray()) r.mrd.push_back(region(v));
            for (const auto& v : o["mwr"].toArray()) r.mwr.push_back(region(v));
            if (o.contains("dma")) {
                const QJsonObject d = o["dma"].toObject();
                r.hasDma = true;
                r.dmaId = d["id"].toInteger();
                r.dmaSrc = region(d["src"]);
                r.dmaDst = region(d["dst"]);
            }
            if (origIndex)
                origIndex->push_back(o.contains("orig_i") ? o["orig_i"].toInteger() : -1);
            builder.addInstr(r);
        }
    }
    return builder.finish();
}

bool sameRegion(const Region& a, const Region& b) {
    return a.space == b.space && a.address == b.address && a.bytes == b.bytes;
}

// Compares two traces by meaning (string ids may differ between builds).
QString compareTraces(const InstructionStream& a, const InstructionStream& b) {
    if (a.machine.name != b.machine.name || a.machine.clockGhz != b.machine.clockGhz)
        return "machine";
    if (a.machine.spaces.size() != b.machine.spaces.size() ||
        a.machine.links.size() != b.machine.links.size() ||
        a.machine.lightweight != b.machine.lightweight)
        return "machine lists";
    for (size_t l = 0; l < a.machine.links.size(); ++l)
        if (a.machine.links[l].baseLatency != b.machine.links[l].baseLatency ||
            a.machine.links[l].bytesPerCycle != b.machine.links[l].bytesPerCycle ||
            a.machine.linkName(l) != b.machine.linkName(l))
            return "link";
    if (a.hlos.size() != b.hlos.size()) return "hlos";
    for (size_t h = 0; h < a.hlos.size(); ++h)
        if (a.hlos[h].id != b.hlos[h].id || a.hlos[h].name != b.hlos[h].name ||
            a.hlos[h].category != b.hlos[h].category)
            return "hlo";
    if (a.instrs.size() != b.instrs.size() || a.dmas.size() != b.dmas.size()) return "counts";
    if (a.measuredCycle != b.measuredCycle || a.measuredStall != b.measuredStall) return "measured";
    for (size_t i = 0; i < a.instrs.size(); ++i) {
        const Instr& x = a.instrs[i];
        const Instr& y = b.instrs[i];
        if (a.opName(x) != b.opName(y) || a.unitName(x) != b.unitName(y) || x.cost != y.cost ||
            x.busy != y.busy || x.kind != y.kind || x.dma != y.dma ||
            (x.hlo == kNone) != (y.hlo == kNone) ||
            (x.hlo != kNone && a.hlos[x.hlo].id != b.hlos[y.hlo].id))
            return QString("instr %1").arg(i);
        if (x.regReads != y.regReads || x.regWrites != y.regWrites || x.memReads != y.memReads ||
            x.memWrites != y.memWrites)
            return QString("instr %1 operand counts").arg(i);
        for (uint32_t k = 0; k < x.regReads + x.regWrites; ++k)
            if (a.strings[a.regRefs[x.regBegin + k]] != b.strings[b.regRefs[y.regBegin + k]])
                return QString("instr %1 registers").arg(i);
        for (uint32_t k = 0; k < x.memReads + x.memWrites; ++k)
            if (!sameRegion(a.memRefs[x.memBegin + k], b.memRefs[y.memBegin + k]))
                return QString("instr %1 memory").arg(i);
    }
    for (size_t d = 0; d < a.dmas.size(); ++d) {
        const Dma& x = a.dmas[d];
        const Dma& y = b.dmas[d];
        if (x.id != y.id || !sameRegion(x.src, y.src) || !sameRegion(x.dst, y.dst) ||
            x.link != y.link || x.issueInstr != y.issueInstr || x.waitInstr != y.waitInstr)
            return QString("dma %1").arg(d);
    }
    return {};
}

// i0 mov s1; i1 ISSUE X (dcache 0..256); i2 vadd; i3 WAIT X; i4 vmul; i5 sld s2 <- X's data;
// i6 add s3 <- s2; i7 shl s4 <- s3; i8 vadd; i9 ISSUE Y (uses s4); i10 WAIT Y.
InstructionStream chainTrace() {
    return Build()
        .op("mov", 1, {}, {"s1"})
        .issue(1, {"hbm", 0, 256}, {"dcache", 0, 256}, {"s1"})
        .op("vadd", 10, {}, {}, {}, {}, "vpu")
        .wait(1)
        .op("vmul", 5, {}, {}, {}, {}, "vpu")
        .op("sld", 1, {}, {"s2"}, {{"dcache", 0, 8}})
        .op("add", 1, {"s2"}, {"s3"})
        .op("shl", 1, {"s3"}, {"s4"})
        .op("vadd", 3, {}, {}, {}, {}, "vpu")
        .issue(2, {"hbm", 4096, 64}, {"dcache", 1024, 64}, {"s4"})
        .wait(2)
        .finish();
}

// The destination of DMA 1 still holds data read at i2; pages 1..6 stay live until i6.
// `lastPageFree`: page 7 is never used, so a relocation has somewhere to go.
InstructionStream liveDestinationTrace(bool lastPageFree) {
    const int64_t span = lastPageFree ? 3584 : 4096;
    return Build(4096, 4)
        .op("vst", 1, {}, {}, {}, {{"dcache", 0, span}}, "vpu")
        .op("vadd", 100, {}, {}, {}, {}, "vpu")
        .op("vld", 1, {}, {}, {{"dcache", 0, span}}, {}, "vpu")
        .issue(1, {"hbm", 0, 512}, {"dcache", 0, 512})
        .wait(1)
        .op("vld", 1, {}, {}, {{"dcache", 0, 512}}, {}, "vpu")
        .op("vld", 1, {}, {}, {{"dcache", 512, span - 512}}, {}, "vpu")
        .finish();
}

}  // namespace

class TestReplayEngine : public QObject {
    Q_OBJECT

  private slots:
    void waitCases() {
        // DMA 1: WAIT before its base latency; DMA 2: WAIT during the transfer; DMA 3: slack.
        const InstructionStream t = Build()
                                        .issue(1, {"hbm", 0, 6400}, {"dcache", 0, 6400})
                                        .wait(1)
                                        .issue(2, {"hbm", 0, 6400}, {"dcache", 8192, 6400})
                                        .op("nop", 450)
                                        .wait(2)
                                        .issue(3, {"hbm", 0, 64}, {"dcache", 16384, 64})
                                        .op("nop", 500)
                                        .wait(3)
                                        .finish();
        const Simulation sim = simulate(t);
        const DmaTiming& a = sim.dmas[0];
        QCOMPARE(a.issueCycle, 0ull);
        QCOMPARE(a.readyCycle, 400ull);
        QCOMPARE(a.completeCycle, 500ull);  // 6400 B at 64 B/cycle = 100 cycles
        QCOMPARE(a.waitCycle, 1ull);
        QCOMPARE(a.baseStall, 399ull);
        QCOMPARE(a.transferStall, 100ull);
        QCOMPARE(a.slack, 0ull);
        QCOMPARE(sim.stall[1], 499ull);
        const DmaTiming& b = sim.dmas[1];
        QCOMPARE(b.issueCycle, 501ull);
        QCOMPARE(b.completeCycle, 1001ull);
        QCOMPARE(b.waitCycle, 952ull);
        QCOMPARE(b.baseStall, 0ull);
        QCOMPARE(b.transferStall, 49ull);
        const DmaTiming& c = sim.dmas[2];
        QCOMPARE(c.issueCycle, 1002ull);
        QCOMPARE(c.completeCycle, 1403ull);  // 64 B: one cycle
        QCOMPARE(c.waitCycle, 1503ull);
        QCOMPARE(c.baseStall + c.transferStall, 0ull);
        QCOMPARE(c.slack, 100ull);
        QCOMPARE(sim.totalCycles, 1504ull);
        QCOMPARE(sim.stallCycles, 548ull);
        QCOMPARE(sim.baseStallCycles, 399ull);
        QCOMPARE(sim.transferStallCycles, 149ull);
        QCOMPARE(sim.costCycles + sim.stallCycles, sim.totalCycles);
        QVERIFY(!sim.divergence.measured);
    }

    void linkContention() {
        // B joins the same link at 401 but A transfers until 500: B waits in the queue.
        const InstructionStream t = Build()
                                        .issue(1, {"hbm", 0, 6400}, {"dcache", 0, 6400})
                                        .issue(2, {"hbm", 8192, 3200}, {"dcache", 8192, 3200})
                                        .wait(1)
                                        .wait(2)
                                        .finish();
        const Simulation sim = simulate(t);
        QCOMPARE(sim.dmas[1].readyCycle, 401ull);
        QCOMPARE(sim.dmas[1].startCycle, 500ull);
        QCOMPARE(sim.dmas[1].completeCycle, 550ull);
        QCOMPARE(sim.dmas[0].baseStall, 398ull);
        QCOMPARE(sim.dmas[0].transferStall, 100ull);
        QCOMPARE(sim.dmas[1].waitCycle, 501ull);
        QCOMPARE(sim.dmas[1].baseStall, 0ull);
        QCOMPARE(sim.dmas[1].transferStall, 49ull);
        QCOMPARE(sim.totalCycles, 551ull);
    }

    void linksInParallel() {
        // hbm->dcache and dcache->hbm are different links: B transfers while A does.
        const InstructionStream t = Build()
                                        .issue(1, {"hbm", 0, 6400}, {"dcache", 0, 6400})
                                        .issue(2, {"dcache", 65536, 6400}, {"hbm", 1 << 20, 6400})
                                        .wait(1)
                                        .wait(2)
                                        .finish();
        const Simulation sim = simulate(t);
        QCOMPARE(sim.dmas[1].startCycle, 401ull);
        QCOMPARE(sim.dmas[1].completeCycle, 501ull);
        QCOMPARE(sim.dmas[1].waitCycle, 501ull);
        QCOMPARE(sim.dmas[1].slack, 0ull);
        QCOMPARE(sim.stall[3], 0ull);
        QCOMPARE(sim.totalCycles, 502ull);
    }

    void neverWaitedDmaCompletes() {
        const InstructionStream t =
            Build().issue(1, {"hbm", 0, 640}, {"dcache", 0, 640}).op("nop", 5).finish();
        const Simulation sim = simulate(t);
        QCOMPARE(sim.dmas[0].completeCycle, 410ull);
        QCOMPARE(sim.dmas[0].waitCycle, kNoCycle);
        QCOMPARE(sim.dmas[0].baseStall + sim.dmas[0].transferStall + sim.dmas[0].slack, 0ull);
        QCOMPARE(sim.totalCycles, 6ull);
    }

    void divergenceAgainstMeasured() {
        InstructionStreamBuilder b;
        Machine m;
        m.spaces = {{"hbm", 0}};
        b.setMachine(m);
        InstrRecord r;
        const int64_t cycles[] = {0, 1, 5};
        for (int64_t i = 0; i < 3; ++i) {
            r.clear();
            r.index = i;
            r.op = "nop";
            r.cycle = cycles[i];
            b.addInstr(r);
        }
        const InstructionStream t = b.finish();
        const Simulation sim = simulate(t);
        QVERIFY(sim.divergence.measured);
        QCOMPARE(sim.divergence.compared, 3ull);
        QCOMPARE(sim.divergence.differing, 1ull);
        QCOMPARE(sim.divergence.maxAbsDiff, 3ull);  // model says 2, trace says 5
        QCOMPARE(sim.divergence.firstDiffering, 2u);
        const QJsonObject report = dmaReport(t, analyze(t));
        const QJsonObject dv = report["divergence"].toObject();
        QCOMPARE(dv["differing"].toInteger(), 1);
        QCOMPARE(dv["max_abs_diff"].toInteger(), 3);
        QCOMPARE(dv["first_differing_instr"].toInteger(), 2);
    }

    void emptyTraceAndNoDataCache() {
        InstructionStreamBuilder b;
        Machine m;
        m.spaces = {{"hbm", 0}, {"sram", 1 << 20}};
        m.links = {{0, 1, 10, 2.5}};  // fractional bandwidth: ceil(bytes / 2.5)
        b.setMachine(m);
        const InstructionStream empty = b.finish();
        const Analysis none = analyze(empty);
        QCOMPARE(none.sim.totalCycles, 0ull);
        QVERIFY(!none.dcache.present);
        QVERIFY(none.suggestions.empty());

        InstructionStreamBuilder c;
        c.setMachine(m);
        InstrRecord r;
        r.index = 0;
        r.op = "dma.issue";
        r.hasDma = true;
        r.dmaId = 5;
        r.dmaSrc = {"hbm", 0, 11};
        r.dmaDst = {"sram", 0, 11};
        c.addInstr(r);
        r.clear();
        r.index = 1;
        r.op = "dma.wait";
        r.wait = 5;
        c.addInstr(r);
        const InstructionStream t = c.finish();
        const Analysis a = analyze(t);
        QCOMPARE(a.sim.dmas[0].completeCycle, 15ull);  // 10 + ceil(11 / 2.5)
        QCOMPARE(a.sim.totalCycles, 16ull);
        QVERIFY(!a.dcache.present);
        QCOMPARE(dcacheReport(a.dcache)["pages"].toInteger(), 0);
        QVERIFY(a.suggestions.empty());  // nothing to hoist above
    }

    void relaxedChainThroughDmaData() {
        const InstructionStream t = chainTrace();
        const Simulation sim = simulate(t);
        QCOMPARE(sim.dmas[0].completeCycle, 405ull);
        QCOMPARE(sim.stall[3], 393ull);
        QCOMPARE(sim.cycle[9], 417ull);
        QCOMPARE(sim.totalCycles, 819ull);
        const DependencyAnalysis deps = analyzeDependencies(t, sim);
        // DMA 1: only a lightweight mov feeds it, nothing constrains it.
        QCOMPARE(deps.dmas[0].backtailInstr, 0u);
        QCOMPARE(deps.dmas[0].backtailCycle, 0ull);
        QCOMPARE(std::vector<uint32_t>(deps.chain(0).begin(), deps.chain(0).end()),
                 std::vector<uint32_t>{0});
        // DMA 2: chain shl <- add <- sld; sld reads DMA 1's data: legal right after DMA 1's ISSUE
        // with DMA 1's WAIT moved along, from DMA 1's completion on.
        const DmaDependencies& y = deps.dmas[1];
        QCOMPARE(std::vector<uint32_t>(deps.chain(1).begin(), deps.chain(1).end()),
                 (std::vector<uint32_t>{5, 6, 7}));
        QCOMPARE(y.backtailInstr, 2u);
        QCOMPARE(y.backtailCycle, 405ull);
        QCOMPARE(y.binding, ConstraintKind::DmaData);
        QCOMPARE(y.bindingInstr, 1u);
        QCOMPARE(std::vector<uint32_t>(deps.dataDmas(1).begin(), deps.dataDmas(1).end()),
                 std::vector<uint32_t>{0});
        QCOMPARE(waitsToMove(t, deps, 1, 2), std::vector<uint32_t>{3});
        QCOMPARE(waitsToMove(t, deps, 1, 4), std::vector<uint32_t>{});

        const auto edges = dmaDependencyEdges(t, sim, 1);
        int conservative = 0, chainLinks = 0, dmaData = 0;
        for (const DependencyEdge& e : edges) {
            if (!e.relaxed) {
                ++conservative;
                QCOMPARE(e.from, 7u);
                QCOMPARE(e.to, 9u);
            } else if (e.kind == ConstraintKind::None) {
                ++chainLinks;
            } else if (e.kind == ConstraintKind::DmaData) {
                ++dmaData;
                QCOMPARE(e.from, 1u);
                QCOMPARE(e.to, 5u);
            }
        }
        QCOMPARE(conservative, 1);
        QCOMPARE(chainLinks, 3);  // 7->9, 6->7, 5->6
        QCOMPARE(dmaData, 1);
    }

    // Memory the ISSUE reads itself (its `mrd`, e.g. a descriptor a store wrote) binds it in
    // both trackings: the store must stay above it.
    void issueOwnMemoryReadsConstrain() {
        const InstructionStream t =
            Build()
                .op("st", 1, {}, {}, {}, {{"dcache", 0, 64}})
                .op("add", 1, {}, {"s1"})
                .issue(1, {"hbm", 4096, 64}, {"dcache", 8192, 64}, {}, {{"dcache", 0, 64}})
                .wait(1)
                .finish();
        const Simulation sim = simulate(t);
        const DependencyAnalysis deps = analyzeDependencies(t, sim);
        QCOMPARE(deps.dmas[0].backtailInstr, 1u);
        QCOMPARE(deps.dmas[0].binding, ConstraintKind::StoreData);
        QCOMPARE(deps.dmas[0].bindingInstr, 0u);
        QCOMPARE(deps.dmas[0].conservativeInstr, 1u);
        QCOMPARE(deps.dmas[0].conservativeProducer, 0u);
        QVERIFY_THROWS_EXCEPTION(InputError, applyHoists(t, {{1, 0}}));
        QCOMPARE(applyHoists(t, {{1, 1}}).edited.origIndex, (std::vector<uint32_t>{0, 2, 1, 3}));
    }

    // Conservative tracking keeps the ISSUE after its direct producers; relaxed moves the chain.
    void conservativeVersusRelaxedBacktail() {
        const InstructionStream t = chainTrace();
        const DependencyAnalysis deps = analyzeDependencies(t, simulate(t));
        QCOMPARE(deps.dmas[1].conservativeProducer, 7u);  // shl feeds the ISSUE at 9
        QCOMPARE(deps.dmas[1].conservativeInstr, 8u);
        QCOMPARE(deps.dmas[1].backtailInstr, 2u);  // relaxed, with the chain 5 6 7
    }

    // ceil(bytes / bandwidth) exactly, also where floating point lands a hair above a whole
    // number: 69 B at 2.3 B/cycle and 21 B at 0.7 B/cycle both take 30 cycles.
    void fractionalBandwidthTransfers() {
        QCOMPARE(transferCycles(Link{0, 1, 0, 2.3}, 69), uint64_t(30));
        QCOMPARE(transferCycles(Link{0, 1, 0, 0.7}, 21), uint64_t(30));
        QCOMPARE(transferCycles(Link{0, 1, 0, 2.3}, 70), uint64_t(31));
        QCOMPARE(transferCycles(Link{0, 1, 0, 64}, 4097), uint64_t(65));
    }

    void duplicateLinkRefused() {
        Machine m;
        m.spaces = {{"hbm", 1 << 20}, {"dcache", 1 << 20}};
        m.links = {{0, 1, 50, 64}, {0, 1, 5, 64}};
        InstructionStreamBuilder b;
        try {
            b.setMachine(m);
            QFAIL("a link declared twice was accepted");
        } catch (const InstructionStreamError& e) {
            QCOMPARE(QString(e.what()), QString("link hbm->dcache declared twice"));
        }
    }

    void neverWaitedDmasAreReported() {
        const InstructionStream t = Build()
                                        .issue(7, {"hbm", 0, 64}, {"dcache", 0, 64})
                                        .issue(8, {"hbm", 64, 64}, {"dcache", 64, 64})
                                        .wait(8)
                                        .finish();
        const QJsonObject report = dmaReport(t, analyze(t));
        QCOMPARE(report["never_waited_dmas"].toArray(), QJsonArray{7});
    }

    void hoistMovesChainAndWait() {
        const InstructionStream t = chainTrace();
        const WhatifResult r = applyHoists(t, {{2, 2}});
        // Order: 0 1 | 3 5 6 7 9 | 2 4 8 10. WAIT X stalls at cycle 2 until 405; Y issues at 409,
        // completes at 810; the fillers end at 428 where WAIT Y stalls until 810.
        QCOMPARE(r.edited.origIndex, (std::vector<uint32_t>{0, 1, 3, 5, 6, 7, 9, 2, 4, 8, 10}));
        QCOMPARE(r.beforeTotal, 819ull);
        QCOMPARE(r.afterTotal, 811ull);
        QCOMPARE(r.applied.size(), size_t(1));
        QCOMPARE(r.applied[0].predictedSaving, int64_t(8));
        QCOMPARE(QString::fromStdString(verifyDependencies(t, r.edited.trace, r.edited.origIndex)),
                 QString());
        const QJsonObject report = whatifReport(r);
        QCOMPARE(report["before"].toObject()["total_cycles"].toInteger(), 819);
        QCOMPARE(report["after"].toObject()["total_cycles"].toInteger(), 811);
        QCOMPARE(report["applied"].toArray().size(), 1);
    }

    void illegalHoistRefused() {
        const InstructionStream t = chainTrace();
        try {
            applyHoists(t, {{2, 1}});
            QFAIL("hoisting above the producing DMA's ISSUE must be refused");
        } catch (const InputError& e) {
            const QString why = e.what();
            QVERIFY2(why.contains("cannot hoist DMA 2 above instruction 2"), qPrintable(why));
            QVERIFY2(why.contains("dma-data at instruction 1 (dma.issue)"), qPrintable(why));
        }
        try {
            applyHoists(t, {{1, 3}});
            QFAIL("a hoist to after the ISSUE must be refused");
        } catch (const InputError& e) {
            QVERIFY(QString(e.what()).contains("its ISSUE is at instruction 1"));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, applyHoists(t, {{99, 0}}));
    }

    void registerConflictConstrains() {
        // mov s4 feeds the ISSUE, but i0 still reads the old s4: the chain cannot jump above it.
        const InstructionStream t = Build()
                                        .op("sadd", 1, {"s4"}, {"s9"})
                                        .op("mov", 1, {}, {"s4"})
                                        .issue(1, {"hbm", 0, 64}, {"dcache", 0, 64}, {"s4"})
                                        .wait(1)
                                        .finish();
        const Simulation sim = simulate(t);
        const DependencyAnalysis deps = analyzeDependencies(t, sim);
        QCOMPARE(deps.dmas[0].backtailInstr, 1u);
        QCOMPARE(deps.dmas[0].binding, ConstraintKind::RegisterConflict);
        QCOMPARE(deps.dmas[0].bindingInstr, 0u);
        try {
            applyHoists(t, {{1, 0}});
            QFAIL("WAR on s4 must be refused");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("register-conflict at instruction 0 (sadd)"),
                     e.what());
        }
    }

    void liveDestinationWithoutFreeRegionRefused() {
        const InstructionStream t = liveDestinationTrace(false);
        const Simulation sim = simulate(t);
        QCOMPARE(sim.totalCycles, 513ull);
        const DependencyAnalysis deps = analyzeDependencies(t, sim);
        QCOMPARE(deps.dmas[0].backtailInstr, 3u);
        QCOMPARE(deps.dmas[0].binding, ConstraintKind::DestinationReader);
        QCOMPARE(deps.dmas[0].backtailInstrRelocated, 0u);
        try {
            applyHoists(t, {{1, 1}});
            QFAIL("no free region: must be refused");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains(
                         "no contiguous free region of 512 bytes is free over cycles [1, 511]"),
                     e.what());
        }
        try {
            applyHoists(t, {{1, 1}}, false);
            QFAIL("without relocation: must be refused");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("holds live data"), e.what());
        }
        // No suggestion can hoist it either.
        const Analysis a = analyze(t);
        QCOMPARE(a.suggestions.size(), size_t(0));
    }

    void relocationHoist() {
        const InstructionStream t = liveDestinationTrace(true);
        const WhatifResult r = applyHoists(t, {{1, 1}});
        QVERIFY(r.applied[0].relocated);
        QCOMPARE(r.edited.origIndex, (std::vector<uint32_t>{0, 3, 1, 2, 4, 5, 6}));
        const InstructionStream& e = r.edited.trace;
        QCOMPARE(e.dmas[0].dst.address, 3584ull);              // page 7, never used
        QCOMPARE(e.memRead(e.instrs[5])[0].address, 3584ull);  // the read of DMA 1's data follows
        QCOMPARE(e.memRead(e.instrs[3])[0].address, 0ull);     // the old contents' read does not
        QCOMPARE(r.beforeTotal, 513ull);
        QCOMPARE(r.afterTotal, 412ull);
        QCOMPARE(QString::fromStdString(verifyDependencies(t, e, r.edited.origIndex)), QString());

        // Algorithm 2 finds the same relocation, one instruction further up.
        const Analysis a = analyze(t);
        QCOMPARE(a.suggestions.size(), size_t(1));
        const Suggestion& s = a.suggestions[0];
        QCOMPARE(QString::fromStdString(s.kind), QString("hoist"));
        QCOMPARE(s.toInstr, 0u);
        QCOMPARE(s.savingCycles, int64_t(102));
        QVERIFY(s.partial);  // 102 cycles of backtail for 407 stall cycles
        QVERIFY(QString::fromStdString(s.text).contains("partial"));
        auto evidence = [&](const std::string& key) {
            for (const auto& [k, v] : s.evidence)
                if (k == key) return v;
            return int64_t(-1);
        };
        QCOMPARE(evidence("relocated_to"), int64_t(3584));
        QCOMPARE(evidence("stall_cycles"), int64_t(407));
        QCOMPARE(evidence("base_stall"), int64_t(399));
        QCOMPARE(evidence("transfer_stall"), int64_t(8));
        QCOMPARE(evidence("backtail_instrs"), int64_t(0));  // the live destination binds at i3
        QCOMPARE(evidence("push_limit"), int64_t(102));
        QCOMPARE(evidence("free_contiguous_bytes"), int64_t(512));
        const QJsonObject report = suggestReport(t, a);
        const QJsonObject first = report["suggestions"].toArray()[0].toObject();
        QCOMPARE(first["kind"].toString(), QString("hoist"));
        QCOMPARE(first["dmas"].toArray()[0].toInteger(), 1);
        QCOMPARE(first["to_instr"].toInteger(), 0);
        QCOMPARE(first["saving_cycles"].toInteger(), 102);
        QVERIFY(first["text"].toString().contains("writes [dcache, 3584, 512] instead"));
    }

    void checkerCatchesBrokenEdit() {
        const InstructionStream t = chainTrace();
        // Move the sld above DMA 1's WAIT without moving the WAIT: reads data not yet arrived.
        EditPlan plan;
        plan.moves.push_back(Move{{5}, 3});
        const EditedTrace e = applyPlan(t, plan);
        QCOMPARE(QString::fromStdString(verifyDependencies(t, e.trace, e.origIndex)),
                 QString("instruction 5 (sld) now reads DMA data before that DMA's WAIT"));
        // Move the add above the sld it depends on.
        EditPlan swap;
        swap.moves.push_back(Move{{6}, 5});
        const EditedTrace f = applyPlan(t, swap);
        QCOMPARE(QString::fromStdString(verifyDependencies(t, f.trace, f.origIndex)),
                 QString("instruction 6 (add) no longer reads the data it read in the original "
                         "trace"));
        // A WAIT above its ISSUE cannot even be materialized.
        EditPlan bad;
        bad.moves.push_back(Move{{3}, 0});
        QVERIFY_THROWS_EXCEPTION(InputError, applyPlan(t, bad));
    }

    void incrementalResimMatchesFull() {
        const InstructionStream t = chainTrace();
        const Simulation sim = simulate(t);
        IncrementalSimulator inc(t, sim);
        EditPlan plan;
        plan.moves.push_back(Move{{3, 5, 6, 7, 9}, 2});
        const ResimResult r = resimulatePlan(inc, plan);
        const Simulation full = simulate(applyPlan(t, plan).trace);
        QCOMPARE(r.totalCycles, full.totalCycles);
        QCOMPARE(r.stallCycles, full.stallCycles);
        QCOMPARE(r.totalCycles, 811ull);
    }

    void pageLiveness() {
        // 4 pages of 512 B, buckets of 2 pages. Pages 0,1 written at 0; page 0 read at 10,
        // page 1 read at 31; page 3 written at 11 and never read.
        const InstructionStream t = Build(2048, 2)
                                        .op("vst", 1, {}, {}, {}, {{"dcache", 0, 1024}}, "vpu")
                                        .op("nop", 9)
                                        .op("vld", 1, {}, {}, {{"dcache", 0, 512}}, {}, "vpu")
                                        .op("vst", 1, {}, {}, {}, {{"dcache", 1536, 512}}, "vpu")
                                        .op("nop", 19)
                                        .op("vld", 1, {}, {}, {{"dcache", 512, 512}}, {}, "vpu")
                                        .finish();
        const Simulation sim = simulate(t);
        QCOMPARE(sim.totalCycles, 32ull);
        const DcacheAnalysis d = analyzeDcache(t, sim, DcacheOptions{2});
        QCOMPARE(d.pages, 4u);
        QCOMPARE(d.buckets, 2u);
        QCOMPARE(d.pageWrites, 3ull);
        QCOMPARE(d.wastedPages, 1ull);
        // Cycles 0..10: pages 0,1 live (50% unused, largest free run pages 2-3 = 50%);
        // cycles 11..31: page 1 live (75% unused, largest run 50%). Lower weighted medians:
        QCOMPARE(d.medianUnusedPct, 75.0);
        QCOMPARE(d.medianLargestFreePct, 50.0);
        QCOMPARE(d.binCycles, 16ull);
        QCOMPARE(d.unusedPct[0], (11 * 50.0 + 5 * 75.0) / 16);
        QCOMPARE(d.unusedPct[1], 75.0);
        QCOMPARE(d.largestFreePct[0], 50.0);
        QCOMPARE(d.bucketUsed[0 * 2 + 0], (2 * 11 + 1 * 5) / 16.0);
        QCOMPARE(d.bucketUsed[0 * 2 + 1], 0.0);
        QCOMPARE(d.bucketUsed[1 * 2 + 0], 1.0);
        // Medians do not depend on binning.
        const DcacheAnalysis fine = analyzeDcache(t, sim, DcacheOptions{7});
        QCOMPARE(fine.medianUnusedPct, 75.0);
        QCOMPARE(fine.medianLargestFreePct, 50.0);
        // Queries: page 3 is taken at cycle 11 by the wasted write.
        QVERIFY(d.isFree(1024, 512, 0, 31));
        QVERIFY(!d.isFree(1536, 512, 11, 11));
        QVERIFY(d.isFree(1536, 512, 12, 31));
        QVERIFY(!d.isFree(0, 512, 10, 10));
        QVERIFY(d.isFree(0, 512, 11, 31));
        QCOMPARE(d.findFree(512, 0, 31), std::optional<uint64_t>(1024));
        QCOMPARE(d.findFree(1024, 0, 31), std::optional<uint64_t>());
        QCOMPARE(d.findFree(1024, 12, 31), std::optional<uint64_t>(1024));
        QCOMPARE(d.largestFree(11, 31), 512ull);
        QCOMPARE(d.largestFree(12, 31), 1024ull);
        const QJsonObject report = dcacheReport(d);
        QCOMPARE(report["pages"].toInteger(), 4);
        QCOMPARE(report["bucket_pages"].toInteger(), 2);
        QCOMPARE(report["bins"].toInteger(), 2);
        QCOMPARE(report["median_unused_pct"].toDouble(), 75.0);
        QCOMPARE(report["median_largest_free_pct"].toDouble(), 50.0);
        QCOMPARE(report["wasted_pages"].toInteger(), 1);
        QCOMPARE(report["heatmap"].toArray().size(), 2);
    }

    void wastedPagesPerBucketAndBin() {
        // 4 pages of 512 B, buckets of 2 pages. Pages 0,1 written at 0; page 0 again at 10 (its
        // data of cycle 0 never read); page 1 read at 11; pages 2,3 written at 12; page 3 again
        // at 32. Never read: page 0 of cycle 0 and of 10, page 2 of 12, page 3 of 12 and of 32.
        const InstructionStream t = Build(2048, 2)
                                        .op("vst", 1, {}, {}, {}, {{"dcache", 0, 1024}}, "vpu")
                                        .op("nop", 9)
                                        .op("vst", 1, {}, {}, {}, {{"dcache", 0, 512}}, "vpu")
                                        .op("vld", 1, {}, {}, {{"dcache", 512, 512}}, {}, "vpu")
                                        .op("vst", 1, {}, {}, {}, {{"dcache", 1024, 1024}}, "vpu")
                                        .op("nop", 19)
                                        .op("vst", 1, {}, {}, {}, {{"dcache", 1536, 512}}, "vpu")
                                        .finish();
        const Simulation sim = simulate(t);
        QCOMPARE(sim.totalCycles, 33ull);
        const DcacheAnalysis d = analyzeDcache(t, sim, DcacheOptions{2});
        QCOMPARE(d.binCycles, 17ull);
        QCOMPARE(d.pageWrites, 6ull);
        QCOMPARE(d.wastedPages, 5ull);
        // Counted in the bin of the write: bin 0 holds cycles 0..16, bin 1 cycles 17..32.
        QCOMPARE(d.bucketWasted, (std::vector<double>{2, 2, 0, 1}));
        const DcacheAnalysis one = analyzeDcache(t, sim, DcacheOptions{1});
        QCOMPARE(one.bucketWasted, (std::vector<double>{2, 3}));
        // One cycle a bin: each write in its own cycle's bin.
        const DcacheAnalysis fine = analyzeDcache(t, sim, DcacheOptions{512});
        QCOMPARE(fine.binCycles, 1ull);
        std::vector<double> expected(512 * 2, 0.0);
        expected[0 * 2 + 0] = 1;
        expected[10 * 2 + 0] = 1;
        expected[12 * 2 + 1] = 2;
        expected[32 * 2 + 1] = 1;
        QCOMPARE(fine.bucketWasted, expected);
    }

    void dmaReportKeys() {
        const InstructionStream t = chainTrace();
        const Analysis a = analyze(t);
        const QJsonObject r = dmaReport(t, a);
        QCOMPARE(r["total_cycles"].toInteger(), 819);
        QCOMPARE(r["stall_cycles"].toInteger(), 793);
        QCOMPARE(r["base_stall_cycles"].toInteger(), 389 + 399);
        QCOMPARE(r["transfer_stall_cycles"].toInteger(), 4 + 1);
        const QJsonObject y = r["dmas"].toArray()[1].toObject();
        QCOMPARE(y["id"].toInteger(), 2);
        QCOMPARE(y["link"].toString(), QString("hbm->dcache"));
        QCOMPARE(y["bytes"].toInteger(), 64);
        QCOMPARE(y["issue_instr"].toInteger(), 9);
        QCOMPARE(y["wait_instr"].toInteger(), 10);
        QCOMPARE(y["issue_cycle"].toInteger(), 417);
        QCOMPARE(y["ready_cycle"].toInteger(), 817);
        QCOMPARE(y["complete_cycle"].toInteger(), 818);
        QCOMPARE(y["wait_cycle"].toInteger(), 418);
        QCOMPARE(y["base_stall"].toInteger(), 399);
        QCOMPARE(y["transfer_stall"].toInteger(), 1);
        QCOMPARE(y["slack"].toInteger(), 0);
        QCOMPARE(y["backtail_instr"].toInteger(), 2);
        QCOMPARE(y["backtail_cycle"].toInteger(), 405);
        QVERIFY(!r.contains("divergence"));
        const QJsonObject info = replayInfo(t, a.sim, 7);
        QCOMPARE(info["kind"].toString(), QString("replay"));
        QCOMPARE(info["tracks"].toInteger(), 3 + 1);  // scalar, dma, vpu + one DMA link
        QCOMPARE(info["slices"].toInteger(), 11 + 2);
        QCOMPARE(info["end"].toInteger(), 819);
        QCOMPARE(info["time_unit"].toString(), QString("cycles"));
        const QJsonObject top = info["top_ops"].toArray()[0].toObject();
        QCOMPARE(top["name"].toString(), QString("dma.wait"));
        QCOMPARE(top["count"].toInteger(), 2);
        QCOMPARE(top["total"].toInteger(), 2 + 793);
    }

    void jsonlRoundTrip() {
        GenerateOptions options;
        options.invocations = 2;
        const InstructionStream t = generateWorkload("allgather", options);
        std::ostringstream out;
        writeJsonl(t, out);
        const InstructionStream back = readJsonl(out.str());
        QCOMPARE(compareTraces(t, back), QString());
        std::ostringstream again;
        writeJsonl(back, again);
        QCOMPARE(again.str(), out.str());
        // Defaults are omitted.
        const std::string text = out.str();
        QVERIFY(text.find("\"cost\":1,") == std::string::npos);
        QVERIFY(
            text.find("{\"record\":\"instr\",\"i\":0,\"op\":\"mov\",\"unit\":\"scalar\",\"hlo\":2,"
                      "\"wr\":[\"s10\"]}") != std::string::npos);

        // Measured values and orig_i.
        InstructionStreamBuilder b;
        Machine m;
        m.name = "measured \"quoted\"";
        m.spaces = {{"hbm", 0}};
        b.setMachine(m);
        InstrRecord r;
        for (int64_t i = 0; i < 3; ++i) {
            r.clear();
            r.index = i;
            r.op = "nop";
            r.cost = 2;
            r.busy = 5;
            if (i != 1) r.cycle = i * 2;
            if (i == 2) r.stall = 0;
            b.addInstr(r);
        }
        const InstructionStream measured = b.finish();
        std::ostringstream mout;
        const std::vector<uint32_t> orig{2, 0, 1};
        writeJsonl(measured, mout, &orig);
        std::vector<int64_t> origBack;
        const InstructionStream mback = readJsonl(mout.str(), &origBack);
        QCOMPARE(compareTraces(measured, mback), QString());
        QCOMPARE(origBack, (std::vector<int64_t>{2, 0, 1}));
        QCOMPARE(mback.measuredCycle, (std::vector<int64_t>{0, -1, 4}));
    }
};

QTEST_GUILESS_MAIN(TestReplayEngine)
#include "test_replay_engine.moc"
