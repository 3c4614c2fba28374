// Transfers of trace profiles (core/transfers): HLO text, the link model on hand-made runs with
// exact expectations, hand-written XSpaces for each async pattern and the edge cases, storage
// with the profile, the CLI, and the real TPU sample against figures computed independently by
// tests/tools/xprof_transfers_reference.py (skipped when ../shared/samples is absent).
#include <sqlite3.h>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <deque>
#include <fstream>

#include "core/analysis/cache.h"
#include "core/compare/transfer_compare.h"
#include "core/progress.h"
#include "core/sqlite.h"
#include "core/trace/hosts.h"
#include "core/trace/step_analysis.h"
#include "core/trace/trace_store.h"
#include "core/transfers/hlo_text.h"
#include "core/transfers/transfers.h"
#include "core/transfers/transfers_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/importers/trace_fixtures.h"

using namespace stallscope;
using namespace stallscope::transfers;

namespace {

const QString kSamples = QStringLiteral(STALLSCOPE_SHARED_DIR "/samples/");

// The stored analysis when there is a current one (nothing is derived).
std::optional<Analysis> load(const Workspace& ws, int64_t id) {
    const auto found = TransfersAnalysis::cast(analysis::stored(ws, id, transfersAnalysis()));
    if (!found) return std::nullopt;
    return *found;
}

// ---- A small XSpace writer (the wire format of tsl's xplane.proto) ----
using fixtures::wire::bytesField;
using fixtures::wire::doubleField;
using fixtures::wire::intField;

using PlaneWriter = fixtures::XPlaneWriter;

// `runs` runs of jit_f on one TPU: copy-start, three fusions, a copy-done that blocks 2 µs (6
// slices with the module), 10 µs apart.
PlaneWriter copyRuns(int runs) {
    PlaneWriter plane("/device:TPU:0");
    const std::string copyStart =
        "%copy-start = (f32[256]{0}, f32[256]{0:S(5)}, u32[]{:S(2)}) "
        "copy-start(f32[256]{0:S(5)} %param)";
    const std::string copyDone =
        "%copy-done = f32[256]{0} copy-done((f32[256]{0}, f32[256]{0:S(5)}, u32[]{:S(2)}) "
        "%copy-start)";
    for (int r = 0; r < runs; ++r) {
        const int64_t t0 = int64_t(r) * 10000;
        plane.event("XLA Modules", "jit_f(1)", "jit_f(1)", t0, 9000000);
        plane.event("XLA Ops", "copy-start", copyStart, t0, 10000);
        for (int f = 0; f < 3; ++f) {
            const std::string name = "fusion." + std::to_string(f);
            plane.event("XLA Ops", name, "%" + name + " = f32[8]{0} fusion(), kind=kLoop",
                        t0 + 100 + 1000 * f, 900000);
        }
        plane.event("XLA Ops", "copy-done", copyDone, t0 + 4000, 2000000);
    }
    return plane;
}

// A Kineto complete event (times in µs, as Kineto writes them).
QJsonObject kinetoSlice(const char* name, const char* cat, int pid, int tid, double ts, double dur,
                        const QJsonObject& args) {
    return QJsonObject{{"ph", "X"},  {"name", name}, {"cat", cat}, {"pid", pid},
                       {"tid", tid}, {"ts", ts},     {"dur", dur}, {"args", args}};
}

void writeFile(const QString& path, const std::string& bytes) {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out << bytes;
}

int64_t importFile(Workspace& ws, const QString& path) {
    Progress progress;
    return importFiles(ws, ImportRequest{{path.toStdString()}, {}, {}}, progress).at(0).id;
}

const Transfer* byName(const Analysis& a, const std::string& name, uint32_t module = 0) {
    for (const Transfer& t : a.transfers)
        if (t.name == name && t.module == module) return &t;
    return nullptr;
}

// ---- A hand-made run: one link, base latency 100 ns, 1 byte/ns ----
//   steps: 0 issue A (1000 B) at 0, 1 issue B (1000 B) at 1, 2 wait A [10, 1100],
//          3 Y [1100, 1100] reads wait A, 4 wait B [1100, 2100], 5 X [2100, 2600] reads a
//          parameter, 6 issue C (1000 B, from param.3) at 2600, 7 wait C [2601, 3700].
// A link idle at A's issue takes 100 + 1000 ns; B queues behind A (done 2100); C finds the
// link idle again (done 3700). Every wait blocks, so every completion is measured.
struct HandRun {
    Analysis a;
    std::vector<RunProgram> programs;
    std::deque<std::vector<std::string_view>> operands;  // what the steps' operands view
};

HandRun handRun() {
    HandRun h;
    Analysis& a = h.a;
    a.links.push_back(Link{});
    a.links[0].name = "S(5)->S(0)";
    ModuleRun run;
    run.name = "jit_hand";
    run.start = 0;
    run.end = 3700;
    a.modules.push_back(run);
    auto transfer = [&](const char* name, const char* wait, int64_t issue, int64_t w, int64_t we,
                        int32_t issueStep, int32_t waitStep, const char* source) {
        Transfer t;
        t.id = uint32_t(a.transfers.size());
        t.name = name;
        t.waitName = wait;
        t.bytes = 1000;
        t.elementType = "f32";
        t.issue = issue;
        t.wait = w;
        t.waitEnd = we;
        t.blocked = we - w >= kBlockedWaitNs;
        t.completeMeasured = t.blocked;
        t.complete = we;
        t.issueStep = issueStep;
        t.waitStep = waitStep;
        t.sourceOperand = source;
        a.modules[0].transfers.push_back(t.id);
        a.transfers.push_back(t);
    };
    transfer("A", "wait-A", 0, 10, 1100, 0, 2, "param.1");
    transfer("B", "wait-B", 1, 1100, 2100, 1, 4, "param.2");
    transfer("C", "wait-C", 2600, 2601, 3700, 6, 7, "param.3");
    RunProgram p;
    auto step = [&](Role role, int64_t s, int64_t e, std::vector<uint32_t> ids,
                    std::string_view name, std::vector<std::string_view> operands) {
        Step st;
        st.role = role;
        st.start = s;
        st.end = e;
        st.transfers = std::move(ids);
        st.name = name;
        st.operands = h.operands.emplace_back(std::move(operands));
        p.steps.push_back(std::move(st));
    };
    step(Role::Issue, 0, 0, {0}, "A", {"param.1"});
    step(Role::Issue, 1, 1, {1}, "B", {"param.2"});
    step(Role::Wait, 10, 1100, {0}, "wait-A", {"A"});
    step(Role::Compute, 1100, 1100, {}, "Y", {"wait-A"});
    step(Role::Wait, 1100, 2100, {1}, "wait-B", {"B"});
    step(Role::Compute, 2100, 2600, {}, "X", {"param.9"});
    step(Role::Issue, 2600, 2600, {2}, "C", {"param.3"});
    step(Role::Wait, 2601, 3700, {2}, "wait-C", {"C"});
    h.programs.push_back(std::move(p));
    return h;
}

const Suggestion* suggestion(const Analysis& a, const std::string& kind, const std::string& to) {
    for (const Suggestion& s : a.suggestions)
        if (s.kind == kind && s.toOp == to) return &s;
    return nullptr;
}

}  // namespace

class TestTransfers : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // The transfers of a Kineto trace of these events, imported into a workspace of its own.
    Analysis kinetoTransfers(const QString& name, const QJsonArray& events) {
        const QString path = dir_.filePath(name + ".json");
        writeFile(path, QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString());
        auto ws = Workspace::open(dir_.filePath(name + ".sqlite").toStdString());
        return ofProfile(*ws, importFile(*ws, path));
    }

  private slots:
    void hloText() {
        const auto copy = hlo::parseInstruction(
            "%copy-start.2 = (f32[5,1024,1024,256]{3,2,1,0:T(8,128)}, "
            "f32[5,1024,1024,256]{3,2,1,0:T(8,128)S(5)}, u32[]{:S(2)}) "
            "copy-start(f32[5,1024,1024,256]{3,2,1,0:T(8,128)S(5)} %param.1)");
        QVERIFY(copy);
        QCOMPARE(copy->name, std::string("copy-start.2"));
        QCOMPARE(copy->opcode, std::string("copy-start"));
        QVERIFY(copy->shape.tuple);
        QCOMPARE(copy->shape.elements.size(), size_t(3));
        QCOMPARE(copy->shape.elementBytes(0), uint64_t(5368709120));  // 5*1024*1024*256*4
        QCOMPARE(copy->shape.elementSpace(0).value(), 0);
        QCOMPARE(copy->shape.elementSpace(1).value(), 5);
        QCOMPARE(copy->shape.elementSpace(2).value(), 2);
        QCOMPARE(copy->operands.size(), size_t(1));
        QCOMPARE(copy->operands[0].name, std::string("param.1"));
        QCOMPARE(copy->operands[0].shape->elementSpace(0).value(), 5);

        const auto gather = hlo::parseInstruction(
            "%all-gather-start = (bf16[8,128]{1,0}, bf16[32,128]{1,0}) "
            "all-gather-start(bf16[8,128]{1,0} %p0), channel_id=3, "
            "replica_groups={{0,1,2,3}}, dimensions={0}");
        QVERIFY(gather);
        QCOMPARE(gather->attribute("replica_groups"), std::string("{{0,1,2,3}}"));
        QCOMPARE(gather->attribute("channel_id"), std::string("3"));
        QCOMPARE(gather->shape.elementBytes(1), uint64_t(32 * 128 * 2));
        // Nested tuples flatten; sub-byte types round up; a dynamic bound counts in full.
        const auto nested = hlo::parseShape("((s4[3]{0}, f32[<=10]{0}), pred[2])");
        QVERIFY(nested);
        QCOMPARE(nested->elements.size(), size_t(2));
        QCOMPARE(nested->elementBytes(0), uint64_t(2 + 40));
        QCOMPARE(nested->bytes(), uint64_t(2 + 40 + 2));
        // Operands printed without '%', and ROOT.
        const auto plain = hlo::parseInstruction("ROOT %d = f32[4]{0} copy-done(f32[4]{0} s)");
        QVERIFY(plain);
        QCOMPARE(plain->operands.at(0).name, std::string("s"));
        QVERIFY(!hlo::parseInstruction("fusion.1"));
    }

    void modelOnHandRun() {
        HandRun h = handRun();
        model(h.a, h.programs);
        const Analysis& a = h.a;
        // The fit: B queued behind A gives 1000 ns for 1000 bytes; A and C (idle link) 1100.
        QCOMPARE(a.links[0].bytesPerNs, 1.0);
        QCOMPARE(a.links[0].baseLatencyNs, int64_t(100));
        QCOMPARE(a.links[0].fitObservations, 3u);
        // DOMAIN §1 split: A waited before ready (base 90 + transfer 1000); B after ready, after
        // 999 ns of queueing; C 1 ns after its issue (base 99).
        QCOMPARE(a.transfers[0].baseStall, int64_t(90));
        QCOMPARE(a.transfers[0].transferStall, int64_t(1000));
        QCOMPARE(a.transfers[1].baseStall, int64_t(0));
        QCOMPARE(a.transfers[1].transferStall, int64_t(1000));
        QCOMPARE(a.transfers[1].queueNs, int64_t(999));
        QCOMPARE(a.transfers[1].transferStart, int64_t(1100));
        QCOMPARE(a.transfers[2].baseStall, int64_t(99));
        QCOMPARE(a.transfers[2].transferStall, int64_t(1000));
        QCOMPARE(a.stallNs, int64_t(1090 + 1000 + 1099));
        // Busy: [100, 2100] and [2700, 3700].
        QCOMPARE(a.links[0].busyNs, int64_t(3000));
        // The unmodified run re-simulates exactly.
        QCOMPARE(a.modules[0].simulatedNs, int64_t(3700));
        QCOMPARE(a.modelErrorPct, 0.0);
        // Backtails: parameters are there at the module's start.
        QCOMPARE(a.transfers[2].backtailKind, Backtail::ModuleStart);
        QCOMPARE(a.transfers[2].backtail, int64_t(0));
        // Hoist C: to the module's start it would queue behind A and B (saves 99 ns); to
        // issue - stall (before X, at 2100) it saves 500 ns: C done at 3200 instead of 3700.
        const Suggestion* hoist = suggestion(a, "hoist", "wait-B");
        QVERIFY(hoist);
        QCOMPARE(hoist->savingNs, int64_t(500));
        QCOMPARE(hoist->transfers, std::vector<uint32_t>{2});
        // Overlap: X reads only a parameter, so it can run under wait A (or wait B); C then
        // goes out 500 ns earlier.
        const Suggestion* overlapA = suggestion(a, "overlap", "wait-A");
        QVERIFY(overlapA);
        QCOMPARE(overlapA->savingNs, int64_t(500));
        QCOMPARE(overlapA->evidence.value("independent_ops").toInt(), 1);
        QVERIFY(suggestion(a, "overlap", "wait-B"));
        // Y reads wait A: never moved above it. The link is busy 3000 of 3600 ns: not
        // transfer-bound.
        for (const Suggestion& s : a.suggestions) QVERIFY(s.kind != "transfer-bound");
        // What a suggestion claims is what re-simulating its edit gives.
        SimEdit edit;
        edit.order = {0, 1, 2, 3, 4, 6, 5, 7};
        QCOMPARE(simulate(a, h.programs[0], edit), int64_t(3200));
    }

    void transferBoundWhenTheLinkNeverRests() {
        // Three back-to-back 1000-byte copies waited one after another: the link is busy the
        // whole time, the waits are all transfer; halving the bytes (f32 -> bf16) saves 1500.
        Analysis a;
        a.links.push_back(Link{});
        a.links[0].name = "S(5)->S(0)";
        a.links[0].peakBytesPerNs = 4;
        ModuleRun run;
        run.name = "jit_bound";
        run.end = 3000;
        a.modules.push_back(run);
        RunProgram p;
        for (uint32_t i = 0; i < 3; ++i) {
            Transfer t;
            t.id = i;
            t.name = "copy-start." + std::to_string(i);
            t.bytes = 1000;
            t.elementType = "f32";
            t.issue = 0;
            t.wait = i == 0 ? 0 : int64_t(i) * 1000;
            t.waitEnd = int64_t(i + 1) * 1000;
            t.blocked = t.completeMeasured = true;
            t.complete = t.waitEnd;
            t.issueStep = int32_t(i);
            t.waitStep = int32_t(3 + i);
            a.transfers.push_back(t);
            a.modules[0].transfers.push_back(i);
        }
        for (uint32_t i = 0; i < 3; ++i) {
            Step s;
            s.role = Role::Issue;
            s.transfers = {i};
            p.steps.push_back(s);
        }
        for (uint32_t i = 0; i < 3; ++i) {
            Step s;
            s.role = Role::Wait;
            s.start = a.transfers[i].wait;
            s.end = a.transfers[i].waitEnd;
            s.transfers = {i};
            p.steps.push_back(s);
        }
        model(a, {p});
        QCOMPARE(a.links[0].bytesPerNs, 1.0);
        QCOMPARE(a.links[0].baseLatencyNs, int64_t(0));
        QCOMPARE(a.links[0].peakFraction(), 0.25);
        QCOMPARE(a.modules[0].simulatedNs, int64_t(3000));
        QCOMPARE(a.suggestions.size(), size_t(1));
        QCOMPARE(a.suggestions[0].kind, std::string("transfer-bound"));
        QCOMPARE(a.suggestions[0].savingNs, int64_t(1500));
        QCOMPARE(a.suggestions[0].evidence.value("busy_pct").toDouble(), 100.0);
        QVERIFY(QString::fromStdString(a.suggestions[0].text).contains("bf16"));
    }

    void handWrittenXSpace() {
        // One module run with each async pattern, and the edge cases around them.
        PlaneWriter plane("/device:TPU:0");
        const std::string copyStart =
            "%copy-start = (f32[256]{0}, f32[256]{0:S(5)}, u32[]{:S(2)}) "
            "copy-start(f32[256]{0:S(5)} %param)";
        plane.event("XLA Modules", "jit_m(1)", "jit_m(1)", 0, 10000000);
        plane.event("XLA Modules", "jit_inner(2)", "jit_inner(2)", 100, 100000);  // nested
        // A done whose start is not in the run (issued before the profile began).
        plane.event("XLA Ops", "copy-done.9",
                    "%copy-done.9 = f32[8]{0} copy-done((f32[8]{0}, f32[8]{0:S(5)}, "
                    "u32[]{:S(2)}) %copy-start.9)",
                    50, 5000);
        plane.event("XLA Ops", "copy-start", copyStart, 0, 10);
        plane.event("XLA Ops", "copy-done",
                    "%copy-done = f32[256]{0} copy-done((f32[256]{0}, f32[256]{0:S(5)}, "
                    "u32[]{:S(2)}) %copy-start)",
                    1000, 2000000);
        plane.event("XLA Ops", "all-gather-start",
                    "%all-gather-start = (f32[64]{0}, f32[256]{0}) all-gather-start(f32[64]{0} "
                    "%copy-done), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}",
                    3000, 1000);
        plane.event("XLA Ops", "fusion.1",
                    "%fusion.1 = f32[256]{0} fusion(f32[256]{0} %copy-done), kind=kLoop", 3001,
                    999000);
        plane.event("XLA Ops", "all-gather-done",
                    "%all-gather-done = f32[256]{0} all-gather-done((f32[64]{0}, f32[256]{0}) "
                    "%all-gather-start)",
                    4000, 2000000);
        plane.event("XLA Ops", "send",
                    "%send = (f32[16]{0}, u32[], token[]) send(f32[16]{0} %fusion.1, token[] "
                    "%after-all), channel_id=2, is_host_transfer=true",
                    6000, 1000);
        plane.event("XLA Ops", "send-done",
                    "%send-done = token[] send-done((f32[16]{0}, u32[], token[]) %send), "
                    "channel_id=2, is_host_transfer=true",
                    6001, 1000);
        plane.event("XLA Ops", "recv",
                    "%recv = (f32[32]{0}, u32[], token[]) recv(token[] %after-all.1), "
                    "channel_id=3",
                    6002, 1000);
        plane.event("XLA Ops", "recv-done",
                    "%recv-done = (f32[32]{0}, token[]) recv-done((f32[32]{0}, u32[], token[]) "
                    "%recv), channel_id=3",
                    6003, 1000000);
        // Issued, never waited in the window: the profile ends first.
        plane.event("XLA Ops", "copy-start.1",
                    "%copy-start.1 = (f32[4]{0:S(5)}, f32[4]{0}, u32[]{:S(2)}) "
                    "copy-start(f32[4]{0} %fusion.1)",
                    9000, 1);
        plane.event("Async XLA Ops", "async-copy", copyStart, 0, 3000000);
        const QString path = dir_.filePath("hand.xplane.pb");
        writeFile(path, plane.bytes());
        auto ws = Workspace::open(dir_.filePath("hand.sqlite").toStdString());
        const int64_t id = importFile(*ws, path);
        const auto stored = load(*ws, id);
        QVERIFY(stored);  // derived at import
        const Analysis& a = *stored;
        QCOMPARE(a.source, std::string("xprof"));
        QCOMPARE(a.transfers.size(), size_t(4));
        QCOMPARE(a.modules.size(), size_t(1));
        QCOMPARE(a.unmatched.at("done_without_start"), uint64_t(1));
        QCOMPARE(a.unmatched.at("start_without_done"), uint64_t(1));
        QCOMPARE(a.unmatched.at("nested_modules"), uint64_t(1));

        const Transfer* copy = byName(a, "copy-start");
        QVERIFY(copy);
        QCOMPARE(copy->bytes, uint64_t(1024));
        QCOMPARE(a.links[copy->link].name, std::string("S(5)->S(0)"));
        QCOMPARE(a.links[copy->link].peakBytesPerNs, 1000.0);  // HBM's; S(5) states none
        QCOMPARE(copy->wait, int64_t(1000));
        QCOMPARE(copy->stall(), int64_t(2000));
        QCOMPARE(copy->backtailKind, Backtail::ModuleStart);
        QCOMPARE(copy->inFlightStart, int64_t(0));
        QCOMPARE(copy->inFlightEnd, int64_t(3000));

        const Transfer* gather = byName(a, "all-gather-start");
        QVERIFY(gather);
        QCOMPARE(gather->bytes, uint64_t(1024));  // the gathered result
        QCOMPARE(a.links[gather->link].name, std::string("all-gather {{0,1,2,3}}"));
        QCOMPARE(gather->stall(), int64_t(2000));
        QCOMPARE(gather->backtailKind, Backtail::Producer);
        QCOMPARE(gather->backtailOp, std::string("copy-done"));
        QCOMPARE(gather->backtail, int64_t(3000));  // copy-done's end: issued right there

        const Transfer* send = byName(a, "send");
        QVERIFY(send);
        QCOMPARE(send->bytes, uint64_t(64));
        QCOMPARE(a.links[send->link].name, std::string("send host"));
        QVERIFY(!send->blocked);  // a 1 ns send-done
        QCOMPARE(send->stall(), int64_t(0));

        const Transfer* recv = byName(a, "recv");
        QVERIFY(recv);
        QCOMPARE(recv->bytes, uint64_t(128));
        QCOMPARE(a.links[recv->link].name, std::string("recv"));
        QCOMPARE(recv->stall(), int64_t(1000));
        QCOMPARE(a.stallNs, int64_t(2000 + 2000 + 1000));
    }

    void deferredDerivation() {
        // An XProf profile over the import's budget: the import notes the deferral, the first
        // request derives and stores, later ones read what was stored. Each run: copy-start,
        // three fusions, a copy-done that blocks 2 µs (6 slices with the module).
        constexpr int kRuns = int(kDeriveAtImportMaxSlices / 6) + 100;
        const PlaneWriter plane = copyRuns(kRuns);
        const QString path = dir_.filePath("deferred.xplane.pb");
        writeFile(path, plane.bytes());
        const std::string wsPath = dir_.filePath("deferred.sqlite").toStdString();
        auto ws = Workspace::open(wsPath);
        const int64_t id = importFile(*ws, path);
        {
            const trace::TraceStore store(*ws, id);
            QVERIFY(derivationSlices(store) > kDeriveAtImportMaxSlices);
            QVERIFY(!deriveAtImport(store));
            const QJsonObject note = store.metadata().value("transfers").toObject();
            QVERIFY(note.value("deferred").toString().contains("derived on the first request"));
        }
        QVERIFY(!load(*ws, id));
        // A read-only workspace derives for the request and stores nothing.
        {
            auto readOnly = Workspace::open(wsPath, Workspace::Mode::ReadOnly);
            QCOMPARE(ofProfile(*readOnly, id).transfers.size(), size_t(kRuns));
        }
        QVERIFY(!load(*ws, id));
        const Analysis first = ofProfile(*ws, id);
        QCOMPARE(first.transfers.size(), size_t(kRuns));
        QCOMPARE(first.modules.size(), size_t(kRuns));
        QCOMPARE(first.stallNs, int64_t(kRuns) * 2000);
        const auto stored = load(*ws, id);
        QVERIFY(stored);
        QCOMPARE(dmaJson(*stored), dmaJson(first));
        QCOMPARE(suggestJson(ofProfile(*ws, id)), suggestJson(first));
    }

    // Past the slice limit an XProf profile is still derived at import when its XLA lines are
    // at most half of it (a real TPU profile's quarter: +17-18 % on a 1 GB one), not when it is
    // nearly all XLA ops with transfers (+27 %). Here with a limit of 10 slices.
    void derivedAtImportByTheXlaShare() {
        PlaneWriter xla = copyRuns(10);  // 60 slices, all on XLA lines
        const QString onlyXla = dir_.filePath("only_xla.xplane.pb");
        writeFile(onlyXla, xla.bytes());
        PlaneWriter host("/host:CPU");
        for (int k = 0; k < 61; ++k)
            host.event("python3", "train_step", "train_step", int64_t(k) * 10000, 5000000);
        const QString mixed = dir_.filePath("mixed.xplane.pb");
        writeFile(mixed, xla.bytes() + host.bytes());
        auto ws = Workspace::open(dir_.filePath("share.sqlite").toStdString());
        const int64_t onlyId = importFile(*ws, onlyXla), mixedId = importFile(*ws, mixed);
        const trace::TraceStore only(*ws, onlyId), both(*ws, mixedId);
        QCOMPARE(derivationSlices(only), uint64_t(60));
        QCOMPARE(derivationSlices(both), uint64_t(60));  // a TPU host's threads are not read
        QVERIFY(!deriveAtImport(only, 10));
        QVERIFY(deriveAtImport(both, 10));  // 60 of 121 slices
        QVERIFY(deriveAtImport(only, 60));
    }

    void derivedAtImportOverTheFormerLimit() {
        // An XProf profile of 400,600 op and module slices (imports deferred those over 400,000
        // to the first request before derivation got 4-5 times cheaper): the import derives
        // and stores its transfers. Each run: copy-start, three fusions, a copy-done that
        // blocks 2 µs (6 slices with the module).
        constexpr int kRuns = 400000 / 6 + 100;
        const PlaneWriter plane = copyRuns(kRuns);
        const QString path = dir_.filePath("large.xplane.pb");
        writeFile(path, plane.bytes());
        const std::string wsPath = dir_.filePath("large.sqlite").toStdString();
        auto ws = Workspace::open(wsPath);
        const int64_t id = importFile(*ws, path);
        {
            const trace::TraceStore store(*ws, id);
            QCOMPARE(derivationSlices(store), uint64_t(kRuns) * 6);
            QVERIFY(deriveAtImport(store));
            const QJsonObject note = store.metadata().value("transfers").toObject();
            QCOMPARE(note.value("transfers").toInteger(), qint64(kRuns));
            QVERIFY(!note.contains("deferred"));
        }
        const auto atImport = load(*ws, id);
        QVERIFY(atImport);
        QCOMPARE(atImport->transfers.size(), size_t(kRuns));
        QCOMPARE(atImport->modules.size(), size_t(kRuns));
        QCOMPARE(atImport->stallNs, int64_t(kRuns) * 2000);

        // A profile imported before transfers were derived at import (nothing stored): the
        // first request derives and stores, later ones read what was stored; a read-only
        // workspace derives for the request and stores nothing.
        QCOMPARE(sqlite3_exec(ws->db(), "DELETE FROM analyses WHERE name = 'transfers'", nullptr,
                              nullptr, nullptr),
                 SQLITE_OK);
        QVERIFY(!load(*ws, id));
        {
            auto readOnly = Workspace::open(wsPath, Workspace::Mode::ReadOnly);
            QCOMPARE(ofProfile(*readOnly, id).transfers.size(), size_t(kRuns));
        }
        QVERIFY(!load(*ws, id));
        const Analysis first = ofProfile(*ws, id);
        QCOMPARE(dmaJson(first), dmaJson(*atImport));
        const auto stored = load(*ws, id);
        QVERIFY(stored);
        QCOMPARE(dmaJson(*stored), dmaJson(first));
        QCOMPARE(suggestJson(ofProfile(*ws, id)), suggestJson(first));
    }

    // An import's millions of transfers are written on two threads, each compressing 8 MB
    // pieces as zstd frames of their own: the payload is those frames in order and reads back
    // whole.
    void storageOfManyTransfers() {
        Analysis a;
        a.source = "xprof";
        a.links.push_back(Link{});
        a.links[0].name = "S(5)->S(0)";
        ModuleRun run;
        run.name = "jit_step";
        a.modules.push_back(run);
        constexpr uint32_t kTransfers = 300000;  // past the two-thread mark, ~40 MB of records
        for (uint32_t i = 0; i < kTransfers; ++i) {
            Transfer t;
            t.id = i;
            t.name = "copy-start." + std::to_string(i % 7);
            t.waitName = "copy-done." + std::to_string(i % 7);
            t.opcode = "copy-start";
            t.elementType = i % 2 ? "f32" : "bf16";
            t.bytes = uint64_t(i) * 4096;
            t.issue = int64_t(i) * 1000003;
            t.wait = t.issue + 5000 + i % 977;
            t.complete = t.wait + 17;
            t.baseStall = i % 13;
            t.issueTrack = i % 5;
            a.modules[0].transfers.push_back(i);
            a.transfers.push_back(std::move(t));
        }
        a.unmatched["start_without_done"] = 3;
        a.totalNs = 123456789;
        const std::string bytes = encode(a);
        const Analysis b = decode(bytes);
        QCOMPARE(b.transfers.size(), size_t(kTransfers));
        QCOMPARE(b.modules[0].transfers.size(), size_t(kTransfers));
        for (uint32_t i = 0; i < kTransfers; i += 997) {
            const Transfer& x = a.transfers[i];
            const Transfer& y = b.transfers[i];
            QCOMPARE(y.name, x.name);
            QCOMPARE(y.elementType, x.elementType);
            QCOMPARE(y.bytes, x.bytes);
            QCOMPARE(y.issue, x.issue);
            QCOMPARE(y.wait, x.wait);
            QCOMPARE(y.complete, x.complete);
            QCOMPARE(y.baseStall, x.baseStall);
            QCOMPARE(y.issueTrack, x.issueTrack);
        }
        QCOMPARE(b.transfers.back().name, a.transfers.back().name);
        QCOMPARE(b.unmatched.at("start_without_done"), uint64_t(3));
        QCOMPARE(b.totalNs, int64_t(123456789));
    }

    void storageRoundTrip() {
        HandRun h = handRun();
        model(h.a, h.programs);
        h.a.unmatched["done_without_start"] = 3;
        const std::string bytes = encode(h.a);
        const Analysis back = decode(bytes);
        QCOMPARE(dmaJson(back), dmaJson(h.a));
        QCOMPARE(suggestJson(back), suggestJson(h.a));
        // Foreign bytes and a newer version are refused, not misread.
        QVERIFY_THROWS_EXCEPTION(std::exception, decode("not a transfer analysis"));
        std::string newer = bytes;
        newer[4] = char(99);
        QVERIFY_THROWS_EXCEPTION(std::exception, decode(newer));

        // An analysis an older build derived (version 2, before stop 27's per-host correlations
        // and link fits) is derived again on its first request and replaced, not shown stale.
        const QString path = dir_.filePath("stale.json");
        const auto x = kinetoSlice;
        const QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 2, {{"correlation", 1}}),
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, 5, 10,
              {{"correlation", 1}, {"bytes", 4096}, {"device", 0}, {"stream", 7}})};
        writeFile(path, QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString());
        auto ws = Workspace::open(dir_.filePath("stale.sqlite").toStdString());
        const int64_t id = importFile(*ws, path);
        std::string older = bytes;  // the hand run's analysis, not this profile's
        older[4] = char(2);
        analysis::writeStored(*ws, id, "transfers", 2, older);
        QVERIFY(!load(*ws, id));
        QCOMPARE(ofProfile(*ws, id).transfers.size(), size_t(1));
        QCOMPARE(analysis::readStored(*ws, id, "transfers")->version, kEncodingVersion);
        QCOMPARE(load(*ws, id)->transfers.size(), size_t(1));
    }

    void handWrittenKineto() {
        // Two async HtoD copies waited by one stream sync, a copy nobody waits for on the host,
        // and a memcpy activity without its runtime call (times in µs, Kineto-style).
        const auto x = kinetoSlice;
        QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 5, {{"correlation", 1}}),
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 6, 4, {{"correlation", 2}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 20, 190, {{"correlation", 3}}),
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 250, 3, {{"correlation", 4}}),
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, 10, 100,
              {{"correlation", 1}, {"bytes", 1000000}, {"device", 0}, {"stream", 7}}),
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, 110, 100,
              {{"correlation", 2}, {"bytes", 1000000}, {"device", 0}, {"stream", 7}}),
            x("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 0, 8, 260, 20,
              {{"correlation", 4}, {"bytes", 5000}, {"device", 0}, {"stream", 8}}),
            x("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 0, 8, 300, 10,
              {{"correlation", 9}, {"bytes", 64}, {"device", 0}, {"stream", 8}}),
        };
        const Analysis a = kinetoTransfers("kineto", events);
        QCOMPARE(a.source, std::string("kineto"));
        QCOMPARE(a.transfers.size(), size_t(3));
        QCOMPARE(a.unmatched.at("activity_without_runtime_call"), uint64_t(1));
        QCOMPARE(a.unmatched.at("not_waited_on_host"), uint64_t(1));
        const Transfer& first = a.transfers[0];
        const Transfer& second = a.transfers[1];
        QCOMPARE(a.links[first.link].name, std::string("HtoD"));
        QCOMPARE(a.links[first.link].device, std::string("GPU 0"));
        // The link: 100 µs per MB queued (10 GB/s), 110 µs for the first on an idle link.
        QCOMPARE(a.links[first.link].bytesPerNs, 10.0);
        QCOMPARE(a.links[first.link].baseLatencyNs, int64_t(10000));
        // One sync, two copies: its 190 µs split at the first copy's completion.
        QCOMPARE(first.wait, int64_t(20000));
        QCOMPARE(first.stall(), int64_t(90000));
        QCOMPARE(second.stall(), int64_t(100000));
        QCOMPARE(second.queueNs, int64_t(110000 - 16000));  // ready at 6 + 10 µs
        QCOMPARE(a.stallNs, int64_t(190000));
        QCOMPARE(first.backtailKind, Backtail::ModuleStart);
        QVERIFY(!a.transfers[2].waited);
        // Runs end at the syncs that wait for copies: [0, 210 µs] and the rest, to 280 µs.
        QCOMPARE(a.modules.size(), size_t(2));
        QCOMPARE(a.modules[0].measuredNs(), int64_t(210000));
        QCOMPARE(a.modules[0].simulatedNs, int64_t(210000));
        QCOMPARE(a.modules[1].start, int64_t(210000));
        QCOMPARE(a.modules[1].end, int64_t(280000));
        QCOMPARE(a.modules[1].simulatedNs, int64_t(70000));
        QCOMPARE(a.transfers[2].backtailKind, Backtail::PreviousSync);
        QCOMPARE(a.transfers[2].backtail, int64_t(210000));
    }

    // A synchronous copy's activity (hipMemcpyWithStream, as a public ROCm trace has it) is no
    // transfer and is counted as what it is, not as an activity without its runtime call.
    void synchronousCopiesCountedApart() {
        const auto x = kinetoSlice;
        QJsonArray events{
            x("hipMemcpyWithStream", "cuda_runtime", 1, 1, 0, 30, {{"correlation", 10}}),
            x("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", 0, 7, 5, 20,
              {{"correlation", 10}, {"bytes", 2048}, {"device", 0}, {"stream", 7}}),
            x("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 0, 7, 40, 10,
              {{"correlation", 11}, {"bytes", 64}, {"device", 0}, {"stream", 7}}),
            // A symmetric-memory all-reduce (B200 sample: 73 of them) states no size; the host
            // op of the same kind is no kernel.
            x("multimem_all_reduce_kernel", "kernel", 0, 7, 60, 10,
              {{"correlation", 12}, {"device", 0}, {"stream", 7}}),
            x("c10d::allreduce_", "cpu_op", 1, 1, 55, 20, {}),
        };
        const Analysis a = kinetoTransfers("sync_copy", events);
        QCOMPARE(a.transfers.size(), size_t(0));
        QCOMPARE(a.unmatched.at("synchronous_copies"), uint64_t(1));
        QCOMPARE(a.unmatched.at("activity_without_runtime_call"), uint64_t(1));
        QCOMPARE(a.unmatched.at("collective_kernels_without_size"), uint64_t(1));
    }

    // Shapes of public HTA and TraceLens traces: a stream sync that returns before a copy ends
    // synchronised another stream (one rank had 359 such pairs: 872 µs of stall put on the
    // wrong wait); NCCL's generic kernel runs the collective its args name; an NCCL kernel
    // stating no size makes no 0-byte transfer but is counted.
    void kinetoWaitsAndCollectivesAsRealTracesHaveThem() {
        const auto x = kinetoSlice;
        QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 2, {{"correlation", 1}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 5, 15, {{"correlation", 2}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 60, 10, {{"correlation", 3}}),
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, 10, 40,
              {{"correlation", 1}, {"bytes", 4096}, {"device", 0}, {"stream", 7}}),
            x("cudaLaunchKernel", "cuda_runtime", 1, 1, 80, 2, {{"correlation", 4}}),
            x("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "kernel", 0, 8, 85, 5,
              {{"correlation", 4},
               {"device", 0},
               {"stream", 8},
               {"Collective name", "broadcast"},
               {"Out msg nelems", 10},
               {"dtype", "Float"}}),
            x("cudaLaunchKernel", "cuda_runtime", 1, 1, 90, 2, {{"correlation", 5}}),
            x("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "kernel", 0, 8, 95, 5,
              {{"correlation", 5}, {"device", 0}, {"stream", 8}}),
        };
        const Analysis a = kinetoTransfers("kineto_real_shapes", events);
        QCOMPARE(a.transfers.size(), size_t(2));
        const Transfer* copy = byName(a, "cudaMemcpyAsync");
        QVERIFY(copy);
        QCOMPARE(copy->wait, int64_t(60000));  // not the sync that returned at 20 µs
        QCOMPARE(copy->stall(), int64_t(0));
        QCOMPARE(copy->slack, int64_t(10000));  // done at 50 µs, waited for at 60
        const Transfer* broadcast = nullptr;
        for (const Transfer& t : a.transfers)
            if (t.bytes == 40) broadcast = &t;
        QVERIFY(broadcast);
        QCOMPARE(a.links[broadcast->link].name, std::string("nccl broadcast"));
        QCOMPARE(a.unmatched.at("collective_kernels_without_size"), uint64_t(1));
    }

    // Kineto measures a copy on its link: a copy queued 80 ms behind kernels on its stream
    // (as in a public H100 trace: a median 84 ms) ran at 1 MB/µs once it got the link; the fit
    // said 0.0125 GB/s from issue to completion before (model error 461 % on that trace).
    void kinetoLinkFitFromTheCopiesOnIt() {
        const auto x = kinetoSlice;
        QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 2, {{"correlation", 1}}),
            x("void gemm(float*)", "kernel", 0, 7, 1, 79999, {{"correlation", 0}, {"stream", 7}}),
            x("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 0, 7, 80000, 1,
              {{"correlation", 1}, {"bytes", 1000000}, {"device", 0}, {"stream", 7}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 10, 79992, {{"correlation", 2}}),
        };
        const Analysis a = kinetoTransfers("kineto_queued_copy", events);
        QCOMPARE(a.transfers.size(), size_t(1));
        const Link& link = a.links[a.transfers[0].link];
        QCOMPARE(link.bytesPerNs, 1000.0);                // 1 MB in 1 µs on the link
        QCOMPARE(link.baseLatencyNs, int64_t(80000000));  // issue to the link, idle
        QVERIFY2(std::abs(a.modelErrorPct) < 0.01, qPrintable(QString::number(a.modelErrorPct)));
    }

    // XProf GPU profiles put memcpys on stream lines named by what runs there
    // ("Stream #9(MemcpyH2D)"; a public ROCm JAX profile has 53 "CopyDeviceToDevice" on
    // "(MemcpyOther)" streams): the step breakdown counts them as copies (by the stream's kind
    // when the name tells nothing), and the transfer analysis counts them, since no runtime
    // call issues them (none here).
    void xprofGpuStreamCopies() {
        fixtures::XPlaneWriter gpu("/device:GPU:0");
        gpu.event("Stream #7(Kernel)", "fusion.1", "fusion.1", 1000, 10000000);
        gpu.event("Stream #9(MemcpyH2D)", "transfer_to_device", "transfer_to_device", 20000,
                  4000000);
        gpu.event("Stream #10(MemcpyOther)", "CopyDeviceToDevice", "CopyDeviceToDevice", 30000,
                  3000000);
        const QString path = dir_.filePath("gpu_streams.xplane.pb");
        writeFile(path, gpu.bytes());
        auto ws = Workspace::open(dir_.filePath("gpu_streams.sqlite").toStdString());
        const int64_t id = importFile(*ws, path);
        const trace::TraceStore store(*ws, id);
        const trace::StepAnalysis steps = trace::analyzeSteps(store, {});
        QCOMPARE(steps.breakdown.size(), size_t(1));
        const trace::DeviceStepBreakdown& b = steps.breakdown[0];
        QCOMPARE(b.at(trace::StepCategory::Compute), int64_t(10000));
        QCOMPARE(b.h2d, int64_t(4000));
        QCOMPARE(b.d2d, int64_t(3000));
        QCOMPARE(b.at(trace::StepCategory::Memcpy), int64_t(7000));
        const Analysis a = ofProfile(*ws, id);
        QCOMPARE(a.transfers.size(), size_t(0));
        QCOMPARE(a.unmatched.at("activity_without_runtime_call"), uint64_t(2));
    }

    // XProf GPU profiles without XLA Ops lines: the host's copy calls (CUDA "MemcpyH2D" with
    // memcpy_details async:1, ROCm "hipMemcpyHtoDAsync") bind to the device's copies by
    // correlation_id, and a host sync waits for them, as in Kineto traces (the public TF profile
    // in ../shared has 222 such copies, 4 synchronous; they were only counted before).
    void xprofGpuRuntimeCopies() {
        using Stats = fixtures::XPlaneWriter::EventStats;
        fixtures::XPlaneWriter host("/host:CPU");
        host.event("Host Threads/1", "MemcpyH2D", "MemcpyH2D", 1000, 2000000,
                   Stats{{"correlation_id", int64_t(5)},
                         {"memcpy_details", std::string("size:1000000 dest:0 async:1")}});
        host.event("Host Threads/1", "cuStreamSynchronize", "cuStreamSynchronize", 5000, 200000000);
        // ROCm states no size ("size:0"): counted, no transfer.
        host.event("Host Threads/1", "hipMemcpyHtoDAsync", "hipMemcpyHtoDAsync", 300000, 1000000,
                   Stats{{"correlation_id", int64_t(6)},
                         {"memcpy_details", std::string("kind:Unknown size:0 dest:512 async:1")}});
        // A synchronous copy (async:0) is its own wait.
        host.event("Host Threads/1", "MemcpyD2H", "MemcpyD2H", 400000, 3000000,
                   Stats{{"correlation_id", int64_t(7)},
                         {"memcpy_details", std::string("size:64 dest:0 async:0")}});
        fixtures::XPlaneWriter gpu("/device:GPU:0");
        gpu.event("Stream #9(MemcpyH2D)", "MemcpyH2D", "MemcpyH2D", 10000, 100000000,
                  Stats{{"correlation_id", int64_t(5)},
                        {"memcpy_details", std::string("size:1000000 dest:0 async:1")}});
        gpu.event("Stream #16(Kernel)", "__amd_rocclr_copyBuffer.kd", "__amd_rocclr_copyBuffer.kd",
                  301000, 2000000, Stats{{"correlation_id", int64_t(6)}});
        gpu.event("Stream #10(MemcpyD2H)", "MemcpyD2H", "MemcpyD2H", 401000, 1000000,
                  Stats{{"correlation_id", int64_t(7)},
                        {"memcpy_details", std::string("size:64 dest:0 async:0")}});
        gpu.event("Stream #10(MemcpyD2H)", "MemcpyD2H", "MemcpyD2H", 500000, 1000000,
                  Stats{{"correlation_id", int64_t(99)},
                        {"memcpy_details", std::string("size:64 dest:0 async:1")}});
        const QString path = dir_.filePath("gpu_runtime.xplane.pb");
        writeFile(path, gpu.bytes() + host.bytes());
        auto ws = Workspace::open(dir_.filePath("gpu_runtime.sqlite").toStdString());
        const int64_t id = importFile(*ws, path);
        // What the derivation reads: the GPU plane's stream lines and its host's threads.
        QCOMPARE(derivationSlices(trace::TraceStore(*ws, id)), uint64_t(8));
        const Analysis a = ofProfile(*ws, id);
        QCOMPARE(a.source, std::string("xprof"));
        QCOMPARE(a.transfers.size(), size_t(1));
        const Transfer& t = a.transfers[0];
        QCOMPARE(t.name, std::string("MemcpyH2D"));
        QCOMPARE(t.bytes, uint64_t(1000000));
        QCOMPARE(a.links[t.link].name, std::string("HtoD"));
        QCOMPARE(a.links[t.link].device, std::string("GPU 0"));
        QCOMPARE(t.issue, int64_t(1000));
        QCOMPARE(t.inFlightStart, int64_t(10000));
        QCOMPARE(t.complete, int64_t(110000));
        QCOMPARE(t.waitName, std::string("cuStreamSynchronize"));
        QCOMPARE(t.wait, int64_t(5000));
        QCOMPARE(t.stall(), int64_t(105000));
        QCOMPARE(a.unmatched.at("copies_without_size"), uint64_t(1));
        QCOMPARE(a.unmatched.at("synchronous_copies"), uint64_t(1));
        QCOMPARE(a.unmatched.at("activity_without_runtime_call"), uint64_t(1));
        QVERIFY(!a.unmatched.count("stream_memcpys_without_async_op"));
    }

    // Ranks of one run each number their correlations from 1 and have a GPU 0: a copy binds to
    // its own rank's call and runs on its own rank's link (both ranks' copies bound to the
    // last rank's call, on one "GPU 0" link, before).
    void kinetoRunRanksKeepTheirCorrelations() {
        const auto x = kinetoSlice;
        auto rank = [&](const QString& name, double bytes) {
            const QJsonArray events{
                x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 2, {{"correlation", 1}}),
                x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, 10, 100,
                  {{"correlation", 1}, {"bytes", bytes}, {"device", 0}, {"stream", 7}}),
                x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 20, 100, {{"correlation", 2}}),
            };
            const QString path = dir_.filePath(name + ".pt.trace.json");
            writeFile(path,
                      QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson().toStdString());
            return path.toStdString();
        };
        auto ws = Workspace::open(dir_.filePath("ranks.sqlite").toStdString());
        Progress progress;
        ImportRequest request{{rank("rank-0", 1000000), rank("rank-1", 2000000)}, {}, {}};
        request.asOne = true;
        const int64_t id = importFiles(*ws, request, progress).at(0).id;
        const Analysis a = ofProfile(*ws, id);
        QCOMPARE(a.transfers.size(), size_t(2));
        QCOMPARE(a.links.size(), size_t(2));
        const trace::TraceStore store(*ws, id);
        const std::vector<trace::RunHost> hosts = trace::runHosts(store.metadata());
        QCOMPARE(hosts.size(), size_t(2));
        for (const Transfer& t : a.transfers) {
            const int rankIndex = t.bytes == 1000000 ? 0 : 1;
            QCOMPARE(a.links[t.link].device, hosts[size_t(rankIndex)].name + " GPU 0");
            QCOMPARE(a.modules[t.module].device, hosts[size_t(rankIndex)].name + " host");
            // The issuing call is the rank's own: under its host track.
            const trace::TrackRow* track = store.track(t.issueTrack);
            while (track && track->parent >= 0) track = store.track(track->parent);
            QVERIFY(track);
            QCOMPARE(track->id, hosts[size_t(rankIndex)].track);
            QCOMPARE(t.stall(), int64_t(90000));
        }
        QVERIFY(a.transfers[0].bytes != a.transfers[1].bytes);
    }

    void kinetoDeviceWait() {
        // A copy on stream 9 that stream 7 waits for on the device (cudaEventRecord on 9 after
        // the copy, cudaStreamWaitEvent on 7, the next kernel on 7), and a second copy issued
        // after that record, waited by a host sync (after the device wait: a sync before it
        // would be the first wait). Times in µs with ns fractions.
        const auto x = kinetoSlice;
        QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 1000, 5, {{"correlation", 1}}),
            x("cudaEventRecord", "cuda_runtime", 1, 1, 1010, 1, {{"correlation", 2}}),
            x("cudaStreamWaitEvent", "cuda_runtime", 1, 1, 1012, 1, {{"correlation", 3}}),
            x("cudaLaunchKernel", "cuda_runtime", 1, 1, 1014, 2, {{"correlation", 4}}),
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 1020, 3, {{"correlation", 5}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 1090, 110, {{"correlation", 6}}),
            // Stream 9: the copies. Stream 7: a kernel running until 1030.5, the wait, the
            // kernel it held back starting at 1081.25.
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 9, 1006.125, 74,
              {{"correlation", 1}, {"bytes", 1000000}, {"device", 0}, {"stream", 9}}),
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 9, 1100, 50,
              {{"correlation", 5}, {"bytes", 500000}, {"device", 0}, {"stream", 9}}),
            x("void gemm(float*)", "kernel", 0, 7, 1000, 30.5,
              {{"correlation", 0}, {"device", 0}, {"stream", 7}}),
            x("Stream Wait Event", "cuda_sync", 0, 7, 1013, 0,
              {{"correlation", 3},
               {"device", 0},
               {"stream", 7},
               {"wait_on_stream", 9},
               {"wait_on_cuda_event_record_corr_id", 2}}),
            x("void relu(float*)", "kernel", 0, 7, 1081.25, 10,
              {{"correlation", 4}, {"device", 0}, {"stream", 7}}),
        };
        const Analysis a = kinetoTransfers("kineto_device_wait", events);
        QCOMPARE(a.transfers.size(), size_t(2));
        QVERIFY(!a.unmatched.count("not_waited_on_host"));
        const Transfer* onDevice = nullptr;
        const Transfer* onHost = nullptr;
        for (const Transfer& t : a.transfers) (t.bytes == 1000000 ? onDevice : onHost) = &t;
        QVERIFY(onDevice && onHost);
        // Stream 7 reached the wait when its kernel ended (1030.5 µs), resumed at 1081.25 µs;
        // the copy completed at 1080.125 µs: 49,625 ns of stall, all of it transferring (the
        // link's one observation is all bandwidth).
        QCOMPARE(onDevice->waitName, std::string("Stream Wait Event"));
        QCOMPARE(onDevice->wait, int64_t(1030500));
        QCOMPARE(onDevice->waitEnd, int64_t(1081250));
        QCOMPARE(onDevice->complete, int64_t(1080125));
        QVERIFY(onDevice->blocked);
        QCOMPARE(onDevice->stall(), int64_t(1080125 - 1030500));
        QCOMPARE(onDevice->baseStall, int64_t(0));
        const ModuleRun& deviceRun = a.modules[onDevice->module];
        QCOMPARE(deviceRun.device, std::string("GPU 0"));
        QCOMPARE(deviceRun.start, int64_t(1000000));
        QCOMPARE(deviceRun.end, int64_t(1081250));
        QCOMPARE(deviceRun.transfers.size(), size_t(1));
        // The second copy was issued after the record: the host sync waits for it.
        QCOMPARE(onHost->waitName, std::string("cudaStreamSynchronize"));
        QCOMPARE(onHost->wait, int64_t(1090000));
        QCOMPARE(onHost->stall(), int64_t(1150000 - 1090000));
        QCOMPARE(a.stallNs, int64_t(49625 + 60000));
    }

    void ncclBytesFromKernelArgs() {
        // PyTorch records a collective's elements and dtype on its NCCL kernel, launched
        // through the driver API; a kernel with a "bytes" arg keeps it.
        auto x = [](const char* name, const char* cat, int tid, int ts, int dur, QJsonObject args) {
            return QJsonObject{{"ph", "X"},  {"name", name}, {"cat", cat}, {"pid", 1},
                               {"tid", tid}, {"ts", ts},     {"dur", dur}, {"args", args}};
        };
        QJsonArray events{
            x("cuLaunchKernelEx", "cuda_driver", 1, 0, 5, {{"correlation", 1}}),
            x("cudaLaunchKernel", "cuda_runtime", 1, 10, 5, {{"correlation", 2}}),
            x("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "kernel", 7, 20,
              30,
              {{"correlation", 1},
               {"device", 0},
               {"stream", 7},
               {"In msg nelems", 25136},
               {"Out msg nelems", 201088},
               {"Group size", 8},
               {"dtype", "BFloat16"}}),
            x("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "kernel",
              7, 60, 30,
              {{"correlation", 2},
               {"device", 0},
               {"stream", 7},
               {"Out msg nelems", 1000},
               {"dtype", "Float"}}),
        };
        const Analysis a = kinetoTransfers("nccl", events);
        QCOMPARE(a.transfers.size(), size_t(2));
        QCOMPARE(a.transfers[0].name, std::string("cuLaunchKernelEx"));
        QCOMPARE(a.links[a.transfers[0].link].name, std::string("nccl AllGather"));
        QCOMPARE(a.transfers[0].bytes, uint64_t(201088 * 2));
        QCOMPARE(a.transfers[0].elementType, std::string("bf16"));
        QCOMPARE(a.transfers[1].bytes, uint64_t(1000 * 4));
        QCOMPARE(a.transfers[1].elementType, std::string("f32"));
    }

    void kinetoSample() {
        const QString path = kSamples + "real/hta_alexnet_trace.json.gz";
        if (!QFile::exists(path))
            QSKIP("../shared/samples/real/hta_alexnet_trace.json.gz is absent");
        auto ws = Workspace::open(dir_.filePath("alexnet.sqlite").toStdString());
        const Analysis a = ofProfile(*ws, importFile(*ws, path));
        // Computed from the JSON directly (cudaMemcpyAsync -> gpu_memcpy by correlation, the
        // first synchronize after each issue on its thread): 16 HtoD copies, 244,403,360
        // bytes, 468 µs of the syncs spent waiting for them.
        QCOMPARE(a.transfers.size(), size_t(16));
        uint64_t bytes = 0;
        for (const Transfer& t : a.transfers) bytes += t.bytes;
        QCOMPARE(bytes, uint64_t(244403360));
        QCOMPARE(a.stallNs, int64_t(468000));
        QCOMPARE(a.links.size(), size_t(1));
        QCOMPARE(a.links[0].name, std::string("HtoD"));
        // Copies of 256 B to 151 MB: the least-squares line has a negative per-copy cost
        // (-56.9 µs), so the line is through the origin, the large copies' rate (Python over the
        // JSON: sum(bytes * ns) / sum(bytes^2); the median rate said 4.39 GB/s before).
        QVERIFY2(qAbs(a.links[0].bytesPerNs - 4.34188475073146) < 1e-9,
                 qPrintable(QString::number(a.links[0].bytesPerNs, 'g', 15)));
        QVERIFY(!a.links[0].bandwidthLowerBound);
        QVERIFY(a.unmatched.empty());
        QVERIFY(a.modelErrorPct < 5.0);
    }

    // A sync returns a few µs after the copy it waits for: it ends that long after the copy
    // in a what-if too. (Held to its measured end as if it waited for kernels, the model could
    // not tell a faster copy from a slower one: no saving, and every run's model error 0.)
    void kinetoSyncReturnsAfterItsCopy() {
        const auto x = kinetoSlice;
        const QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 2, {{"correlation", 1}}),
            x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, 10, 10000,
              {{"correlation", 1}, {"bytes", 100000000}, {"device", 0}, {"stream", 7}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 20, 9995, {{"correlation", 2}}),
        };
        const Analysis a = kinetoTransfers("sync_return", events);
        QCOMPARE(a.transfers.size(), size_t(1));
        QCOMPARE(a.modules[0].simulatedNs, a.modules[0].measuredNs());
        // 100 MB at 10 GB/s: half the bytes take 5 ms less, and so does the sync.
        QCOMPARE(a.suggestions.size(), size_t(1));
        QCOMPARE(a.suggestions[0].kind, std::string("transfer-bound"));
        QCOMPARE(a.suggestions[0].savingNs, int64_t(5000000));
    }

    // A lone small copy (TraceLens' H100 Qwen trace: one 1-byte DtoH) is per-copy cost: the
    // model gives it its own time once (it had been its time twice, the run 11.5 % long).
    void kinetoLoneSmallCopyTakesItsOwnTime() {
        const auto x = kinetoSlice;
        const QJsonArray events{
            x("cudaMemcpyAsync", "cuda_runtime", 1, 1, 0, 3, {{"correlation", 1}}),
            x("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 0, 7, 14, 2.5,
              {{"correlation", 1}, {"bytes", 1}, {"device", 0}, {"stream", 7}}),
            x("cudaStreamSynchronize", "cuda_runtime", 1, 1, 4, 16, {{"correlation", 2}}),
        };
        const Analysis a = kinetoTransfers("lone_small_copy", events);
        QCOMPARE(a.transfers.size(), size_t(1));
        QVERIFY(a.links[0].bandwidthLowerBound);
        QCOMPARE(a.links[0].baseLatencyNs, int64_t(14000));  // issue -> link, no per-copy cost
        QCOMPARE(a.modules[0].simulatedNs, a.modules[0].measuredNs());
    }

    // Few copies of two sizes (a public NCCL trace: three broadcasts of 424 B and three of
    // 212 KB): the link moves their bytes in their time, 5.6 GB/s; the median ns per byte
    // averaged one of each and said 0.11 GB/s.
    void kinetoFewCopiesMoveTheirBytesInTheirTime() {
        const auto x = kinetoSlice;
        QJsonArray events;
        for (int k = 0; k < 6; ++k) {
            const double issue = 1000.0 * k;
            const bool small = k % 2 == 0;
            events.append(
                x("cudaMemcpyAsync", "cuda_runtime", 1, 1, issue, 0.5, {{"correlation", k + 1}}));
            events.append(x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, issue + 5,
                            small ? 7.7 : 30.0,
                            {{"correlation", k + 1},
                             {"bytes", small ? 424 : 212480},
                             {"device", 0},
                             {"stream", 7}}));
        }
        const Analysis a = kinetoTransfers("two_sizes", events);
        const Link& link = a.links[0];
        QVERIFY(!link.bandwidthLowerBound);
        QVERIFY2(qAbs(link.bytesPerNs - 638712.0 / 113100.0) < 1e-12,
                 qPrintable(QString::number(link.bytesPerNs, 'g', 15)));
    }

    // Copies of 2 B to 4 MiB that all take 3.4-5.1 µs (MI300X DtoD copies in public traces): a
    // line through them has a slope of jitter (here 4 TB/s, 5.2 TB/s in those traces: above
    // the HBM), so they are per-copy cost with the best rate as a lower bound. And the base
    // latency is what the first copies on an idle link reach (5 of these 8 waited 40 ms behind
    // kernels on their stream: the median made every copy 40 ms late in the model).
    void kinetoJitterIsNoBandwidth() {
        const auto x = kinetoSlice;
        const double durations[] = {3.4, 4.5, 3.6, 4.4, 3.8, 4.2, 4.0, 5.1};
        QJsonArray events;
        for (int k = 0; k < 8; ++k) {
            const double issue = 100000.0 * k;
            events.append(
                x("cudaMemcpyAsync", "cuda_runtime", 1, 1, issue, 0.5, {{"correlation", k + 1}}));
            events.append(x("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 0, 7,
                            issue + (k < 3 ? 1 : 40000), durations[k],
                            {{"correlation", k + 1},
                             {"bytes", qint64(2) << (3 * k)},
                             {"device", 0},
                             {"stream", 7}}));
        }
        const Analysis a = kinetoTransfers("jitter", events);
        const Link& link = a.links[0];
        QVERIFY(link.bandwidthLowerBound);
        QVERIFY2(qAbs(link.bytesPerNs - 4194304.0 / 5100.0) < 1e-9,
                 qPrintable(QString::number(link.bytesPerNs, 'g', 15)));
        // 1 µs to the link + the median of what the best rate leaves of each copy (3694.9 ns).
        QCOMPARE(link.baseLatencyNs, int64_t(1000 + 3695));
    }

    // Small copies on a link take their per-copy cost whatever their size: no bandwidth follows
    // from their bytes / time (their median rate read 0.016 GB/s here), so the link gets their
    // median time as a per-copy cost and, as a lower bound, the best rate any of them reached.
    void kinetoSmallCopiesArePerCopyCost() {
        const auto x = kinetoSlice;
        QJsonArray events;
        for (int k = 0; k < 8; ++k) {
            const double issue = 100.0 * k;
            events.append(
                x("cudaMemcpyAsync", "cuda_runtime", 1, 1, issue, 0.5, {{"correlation", k + 1}}));
            events.append(
                x("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, issue + 1, k < 4 ? 3 : 2,
                  {{"correlation", k + 1}, {"bytes", 4 << k}, {"device", 0}, {"stream", 7}}));
        }
        const Analysis a = kinetoTransfers("small_copies", events);
        QCOMPARE(a.transfers.size(), size_t(8));
        const Link& link = a.links[0];
        QVERIFY(link.bandwidthLowerBound);
        QCOMPARE(link.bytesPerNs, 512.0 / 2000.0);  // the 512 B copy in 2 µs
        // 1 µs to the link, then the per-copy cost: the median of what 0.256 B/ns leaves of
        // each copy (3000 - 4/0.256, ..., 2000 - 512/0.256 = 0 ns): 2312.5 ns. (The median copy,
        // 2500 ns, counted the bytes' time twice: once in it, once at the bandwidth.)
        QCOMPARE(link.baseLatencyNs, int64_t(1000 + 2313));
    }

    void tpuSample() {
        const QString path = kSamples + "xprof/tpu_inference_2.xplane.pb";
        if (!QFile::exists(path))
            QSKIP("../shared/samples/xprof/tpu_inference_2.xplane.pb is absent");
        auto ws = Workspace::open(dir_.filePath("tpu.sqlite").toStdString());
        const int64_t id = importFile(*ws, path);
        const Analysis a = ofProfile(*ws, id);
        {
            // The import stores the four devices encoded as merged, never merged: the same
            // bytes as the merged analysis encoded, which is what the import stored.
            const trace::TraceStore store(*ws, id);
            const StoredDerivation stored = deriveForStorage(store);
            QVERIFY(stored.bytes == encode(derive(store)));
            QVERIFY(stored.bytes == analysis::readStored(*ws, id, "transfers")->payload);
            QCOMPARE(stored.transfers, size_t(2400));
            QVERIFY(stored.modelErrorPct == a.modelErrorPct);
        }
        // From tests/tools/xprof_transfers_reference.py (its own wire decoder and HLO reading):
        // 4 devices x 100 jit_f runs x 6 copies of f32[5,1024,1024,256] (5,368,709,120 bytes).
        QCOMPARE(a.transfers.size(), size_t(2400));
        QCOMPARE(a.modules.size(), size_t(400));
        QCOMPARE(a.links.size(), size_t(8));
        QVERIFY(a.unmatched.empty());
        std::map<std::string, int64_t> stallByDevice;
        std::map<std::pair<std::string, std::string>, int64_t> stallByWait;
        std::map<std::string, uint64_t> bytesByDevice;
        for (const Transfer& t : a.transfers) {
            QCOMPARE(t.bytes, uint64_t(5368709120));
            const std::string& device = a.modules[t.module].device;
            stallByDevice[device] += t.stall();
            bytesByDevice[device] += t.bytes;
            if (t.blocked) stallByWait[{device, t.waitName}] += t.stall();
        }
        QCOMPARE(bytesByDevice["/device:TPU:0"], uint64_t(3221225472000));
        QCOMPARE(stallByDevice["/device:TPU:0"], int64_t(76048366398));
        QCOMPARE(stallByDevice["/device:TPU:1"], int64_t(76049419275));
        QCOMPARE(stallByDevice["/device:TPU:2"], int64_t(76131321078));
        QCOMPARE(stallByDevice["/device:TPU:3"], int64_t(76028811513));
        QCOMPARE((stallByWait[{"/device:TPU:0", "copy-done"}]), int64_t(18907648944));
        QCOMPARE((stallByWait[{"/device:TPU:0", "copy-done.2"}]), int64_t(22029145571));
        QCOMPARE((stallByWait[{"/device:TPU:0", "copy-done.4"}]), int64_t(17474860926));
        QCOMPARE((stallByWait[{"/device:TPU:0", "copy-done.5"}]), int64_t(17636710957));
        QCOMPARE(a.totalNs, int64_t(78415440858 + 78424430077 + 78416930943 + 78401187441));
        // Host -> HBM, one FIFO link per TPU: the median queued transfer (199 on TPU:0).
        const double fitted[] = {26.573255860877367, 26.57342250845396, 26.57172633894476,
                                 26.575413825904484};
        int hostLinks = 0;
        for (const Link& link : a.links) {
            if (link.name != "S(5)->S(0)") continue;
            const int device = link.device.back() - '0';
            QVERIFY(qAbs(link.bytesPerNs - fitted[device]) < 1e-9);
            QCOMPARE(link.baseLatencyNs, int64_t(0));
            QCOMPARE(link.peakBytesPerNs, 1637.993152512);
            ++hostLinks;
        }
        QCOMPARE(hostLinks, 4);
        // The third jit_f run on TPU:0, transfer by transfer.
        const ModuleRun& run = a.modules[2];
        QCOMPARE(run.device, std::string("/device:TPU:0"));
        QCOMPARE(run.start, int64_t(21068921496));
        QCOMPARE(run.end, int64_t(21853037828));
        const Transfer* first = byName(a, "copy-start", 2);
        QCOMPARE(first->issue, int64_t(21068921892));
        QCOMPARE(first->wait, int64_t(21068921909));
        QCOMPARE(first->waitEnd, int64_t(21258076764));
        const Transfer* third = byName(a, "copy-start.4", 2);
        QCOMPARE(third->wait, int64_t(21468260733));
        QCOMPARE(third->waitEnd, int64_t(21662696027));
        QVERIFY(third->queueNs > 0);  // behind copy-start and copy-start.2 on the link
        const Transfer* back = byName(a, "copy-start.5", 2);
        QCOMPARE(a.links[back->link].name, std::string("S(0)->S(5)"));
        QCOMPARE(back->stall(), int64_t(21853037828 - 21670669682));
        QCOMPARE(back->backtailOp, std::string("broadcast_add_fusion"));
        // The model against the measured runs (1.57 %: below the 5 % the issue asks for).
        QVERIFY(a.modelErrorPct < 5.0);
        // The stall at the copy-dones is 97 % of the runs: transfer-bound, with bf16 halving
        // the bytes as the re-simulated what-if.
        QVERIFY(double(a.stallNs) / double(a.totalNs) > 0.96);
        QVERIFY(!a.suggestions.empty());
        QCOMPARE(a.suggestions[0].kind, std::string("transfer-bound"));
        QCOMPARE(a.suggestions[0].runs, 100u);  // one device's runs: links are per device
        int hostBound = 0;
        for (const Suggestion& s : a.suggestions)
            hostBound += s.kind == "transfer-bound" &&
                         s.evidence.value("link").toString() == QString("S(5)->S(0)");
        QCOMPARE(hostBound, 4);
        QVERIFY(a.suggestions[0].savingPerRunNs > 100000000);                  // > 100 ms of 784
        for (const Suggestion& s : a.suggestions) QVERIFY(s.kind != "hoist");  // nothing to hoist
    }

    void cliOnTraces() {
        const QString path = kSamples + "xprof/tpu_inference_2.xplane.pb";
        if (!QFile::exists(path))
            QSKIP("../shared/samples/xprof/tpu_inference_2.xplane.pb is absent");
        const QString store = dir_.filePath("cli.sqlite");
        auto run = [&](const QStringList& args) {
            QProcess p;
            p.start(STALLSCOPE_BINARY, QStringList{"--store", store} + args);
            p.waitForFinished(120000);
            if (p.exitCode() != 0) qWarning() << p.readAllStandardError();
            return std::make_pair(p.exitCode(), p.readAllStandardOutput());
        };
        QCOMPARE(run({"import", "--name", "before", path}).first, 0);
        QCOMPARE(run({"import", "--name", "after", path}).first, 0);
        const auto dma = run({"dma", "before", "--json"});
        QCOMPARE(dma.first, 0);
        const QJsonObject d = QJsonDocument::fromJson(dma.second).object();
        for (const char* key : {"total_cycles", "stall_cycles", "base_stall_cycles",
                                "transfer_stall_cycles", "dmas", "links", "modules"})
            QVERIFY2(d.contains(key), key);
        QCOMPARE(d.value("time_unit").toString(), QString("ns"));
        const QJsonObject first = d.value("dmas").toArray().at(0).toObject();
        for (const char* key : {"id", "link", "bytes", "issue_instr", "wait_instr", "issue_cycle",
                                "ready_cycle", "complete_cycle", "wait_cycle", "base_stall",
                                "transfer_stall", "slack", "backtail_instr", "backtail_cycle"})
            QVERIFY2(first.contains(key), key);
        const auto suggest = run({"suggest", "before", "--json", "--limit", "1"});
        QCOMPARE(suggest.first, 0);
        const QJsonArray list =
            QJsonDocument::fromJson(suggest.second).object().value("suggestions").toArray();
        QCOMPARE(list.size(), 1);
        QCOMPARE(list.at(0).toObject().value("kind").toString(), QString("transfer-bound"));
        const auto compare = run({"dma-compare", "before", "after", "--json"});
        QCOMPARE(compare.first, 0);
        const QJsonObject c = QJsonDocument::fromJson(compare.second).object();
        QCOMPARE(c.value("delta").toObject().value("stall").toInteger(), qint64(0));
        QCOMPARE(c.value("dmas").toArray().size(), 2400);
        QCOMPARE(c.value("modules").toArray().size(), 400);
    }

    // Before/after pairs repeated names by occurrence: the k-th cudaMemcpyAsync of a run with
    // the k-th of the matched run, not every one with the first.
    void compareMatchesRepeatedNamesInOrder() {
        // Kineto runs are named by their host thread, whose id differs between two runs of
        // one script (HTA's trace_diff pair: 3113936 and 2568503): they match without it.
        auto analysisOf = [](std::vector<int64_t> stalls, size_t runs, const std::string& thread) {
            Analysis a;
            a.source = "kineto";
            for (size_t r = 0; r < runs; ++r) {
                ModuleRun run;
                run.name = thread;
                run.start = int64_t(r) * 1000000;
                run.end = run.start + 500000;
                for (size_t k = 0; k < stalls.size(); ++k) {
                    Transfer t;
                    t.id = uint32_t(a.transfers.size());
                    t.name = "cudaMemcpyAsync";
                    t.module = uint32_t(r);
                    t.bytes = 1000 * (k + 1);
                    t.issue = run.start + int64_t(k) * 1000;
                    t.complete = t.issue + 700;
                    t.baseStall = 100;
                    t.transferStall = stalls[k] - 100;
                    run.transfers.push_back(t.id);
                    run.stallNs += stalls[k];
                    a.transfers.push_back(t);
                }
                a.stallNs += run.stallNs;
                a.modules.push_back(run);
            }
            return a;
        };
        const Analysis before = analysisOf({500, 900, 300}, 2, "thread 3113936 (python3.8)");
        // One more copy, one more run.
        const Analysis after = analysisOf({200, 900, 100, 50}, 3, "thread 2568503 (python3.8)");
        const QJsonObject c = compare::transferComparisonJson(
            compare::compareTransfers(before, after), before, after);
        const QJsonArray dmas = c.value("dmas").toArray();
        QCOMPARE(dmas.size(), 6);  // 3 pairs in each of the 2 matched runs
        const std::array<int64_t, 3> deltas{-300, 0, -200};
        for (qsizetype i = 0; i < dmas.size(); ++i) {
            const QJsonObject d = dmas[i].toObject();
            QCOMPARE(d.value("occurrence").toInteger(), qint64(i % 3));
            QCOMPARE(d.value("a_bytes").toInteger(), qint64(1000 * (i % 3 + 1)));
            QCOMPARE(d.value("delta_stall").toInteger(), deltas[size_t(i % 3)]);
            QCOMPARE(d.value("a_index").toInteger(), qint64(i));
            QCOMPARE(d.value("b_index").toInteger(), qint64((i / 3) * 4 + i % 3));
        }
        const QJsonObject unmatched = c.value("unmatched").toObject();
        QCOMPARE(unmatched.value("b_runs").toInteger(), qint64(1));
        QCOMPARE(unmatched.value("a_runs").toInteger(), qint64(0));
        // The 4th copy of the two matched runs, and the 4 copies of the run B alone has.
        QCOMPARE(unmatched.value("b_transfers").toInteger(), qint64(2 + 4));
        QCOMPARE(c.value("modules").toArray().size(), 2);
        QCOMPARE(c.value("modules").toArray()[1].toObject().value("delta_stall_ns").toInteger(),
                 qint64(-500 + 50));
    }
};

QTEST_GUILESS_MAIN(TestTransfers)
#include "test_transfers.moc"
