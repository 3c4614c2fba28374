// Trace importers (Chrome JSON, XProf XSpace, Chakra ET) on the real samples and on small
// hand-written files for each event type and edge case.
#include <sys/resource.h>
#include <zstd.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/sqlite.h"
#include "core/trace/step_analysis.h"
#include "core/trace/trace_store.h"
#include "core/transfers/transfers.h"
#include "core/workspace.h"
#include "importers/chrome/chrome_json.h"
#include "importers/chrome/event_pipeline.h"
#include "importers/import_service.h"
#include "tests/importers/trace_fixtures.h"

using namespace stallscope;
using trace::TraceStore;

namespace {

// A framed Chakra node as astra-sim's 2023 traces hold them (no GlobalMetadata before it),
// written field by field: id (1, left out when 0 as protobuf does), name (2), type (3, COMP
// 4), ctrl_deps (4, packed; dep < 0: none), duration_micros (7), after its varint length.
QByteArray chakraNode(int id, char name, int dep, int durationMicros) {
    QByteArray node;
    if (id != 0) node += QByteArray("\x08") + char(id);
    node += QByteArray("\x12\x01") + name + QByteArray("\x18\x04");
    if (dep >= 0) node += QByteArray("\x22\x01") + char(dep);
    node += QByteArray("\x38") + char(durationMicros);
    return QByteArray(1, char(node.size())) + node;
}

// A framed Chakra message (its varint length first), and a Node of the current schema: id (1),
// name (2), type (3: COMP 4, COMM_COLL 7), duration_micros (7, when > 0), attributes (10).
std::string chakraFrame(const std::string& message) {
    std::string out;
    fixtures::wire::varint(out, message.size());
    return out + message;
}
std::string chakraAttr(const std::string& name, int valueField, uint64_t value) {
    using namespace fixtures::wire;
    return bytesField(10, bytesField(1, name) + intField(valueField, value));
}
std::string chakraNodeOf(uint64_t id, const std::string& name, uint64_t type,
                         uint64_t durationMicros, const std::string& attrs) {
    using namespace fixtures::wire;
    std::string node = intField(1, id) + bytesField(2, name) + intField(3, type);
    if (durationMicros > 0) node += intField(7, durationMicros);
    return chakraFrame(node + attrs);
}
// The same with data dependencies (5, packed).
std::string chakraNodeAfter(uint64_t id, const std::string& name, uint64_t type,
                            const std::vector<uint64_t>& deps, uint64_t durationMicros,
                            const std::string& attrs = {}) {
    using namespace fixtures::wire;
    std::string node = intField(1, id) + bytesField(2, name) + intField(3, type);
    std::string packed;
    for (uint64_t d : deps) varint(packed, d);
    if (!packed.empty()) node += bytesField(5, packed);
    if (durationMicros > 0) node += intField(7, durationMicros);
    return chakraFrame(node + attrs);
}
#pragma GCC diagnostic ignored "-Wunused-function"

QString samples() {
    return QStringLiteral(STALLSCOPE_SHARED_DIR) + "/samples/";
}

QString write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

struct Imported {
    ProfileInfo profile;
    QJsonObject meta;
};

Imported importOne(Workspace& ws, const QString& path, const std::string& format = {}) {
    Progress progress;
    ImportRequest request{{path.toStdString()}, {}, format};
    const auto out = importFiles(ws, request, progress);
    const ProfileInfo p = *ws.profile(out.at(0).id);
    return {p, QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object()};
}

const trace::TrackRow* trackNamed(const TraceStore& store, const std::string& name) {
    for (const auto& t : store.tracks())
        if (t.name == name) return &t;
    return nullptr;
}

std::vector<trace::SliceItem> allSlices(const TraceStore& store, int64_t track) {
    return store.slices(track, INT64_MIN / 2, INT64_MAX / 2, 0);
}

int64_t count(Workspace& ws, const std::string& sql) {
    sql::Statement st(ws.db(), sql);
    return st.step() ? st.int64(0) : -1;
}

}  // namespace

class TestTraceImporters : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    std::unique_ptr<Workspace> ws_;

    QString path(const QString& name) const { return dir_.filePath(name); }
    QString sample(const QString& rel) {
        const QString p = samples() + rel;
        if (!QFile::exists(p)) return {};
        return p;
    }

  private slots:
    void init() { ws_ = Workspace::open(path("ws.sqlite").toStdString()); }
    void cleanup() {
        ws_.reset();
        QFile::remove(path("ws.sqlite"));
        QFile::remove(path("ws.sqlite-wal"));
        QFile::remove(path("ws.sqlite-shm"));
    }

    void chromeSimpleTrace() {
        const QString file = sample("chrome/simple_trace.json");
        if (file.isEmpty()) QSKIP("samples not available");
        const Imported imp = importOne(*ws_, file);
        QCOMPARE(imp.profile.kind, std::string("trace"));
        QCOMPARE(imp.meta.value("format").toString(), QString("chrome-json"));
        // samples/README.md: 37 events: B/E 8+8, X 4, C 5, I 6, P 3, M 3.
        QCOMPARE(imp.meta.value("events").toInt(), 37);
        const QJsonObject phases = imp.meta.value("phases").toObject();
        QCOMPARE(phases.value("B").toInt(), 8);
        QCOMPARE(phases.value("E").toInt(), 8);
        QCOMPARE(phases.value("X").toInt(), 4);
        QCOMPARE(phases.value("C").toInt(), 5);
        QCOMPARE(phases.value("I").toInt(), 6);
        QCOMPARE(phases.value("P").toInt(), 3);
        QCOMPARE(phases.value("M").toInt(), 3);
        QCOMPARE(imp.meta.value("ignored_events").toObject().value("P").toInt(), 3);
        TraceStore store(*ws_, imp.profile.id);
        const QJsonObject info = store.infoJson();
        QCOMPARE(info.value("slices").toInt(), 12);  // 8 B/E pairs + 4 X
        QCOMPARE(info.value("instants").toInt(), 6);
        QCOMPARE(info.value("counters").toInt(), 5);
        QCOMPARE(info.value("start").toInteger(), 818000);  // ts 818 us
        QCOMPARE(info.value("end").toInteger(), 880000);
        QCOMPARE(info.value("time_unit").toString(), QString("ns"));
        const QJsonObject top = info.value("top_ops").toArray().at(0).toObject();
        QCOMPARE(top.value("name").toString(), QString("A"));
        QCOMPARE(top.value("total").toInteger(), 27000);
        // thread_name metadata names the threads; B/E nest under X on threadA.
        const trace::TrackRow* a = trackNamed(store, "threadA");
        QVERIFY(a);
        QCOMPARE(a->slices, uint64_t(11));
        QCOMPARE(a->maxDepth, 2u);
        const auto slices = allSlices(store, a->id);
        const auto asub =
            std::find_if(slices.begin(), slices.end(),
                         [&](const trace::SliceItem& s) { return store.text(s.name) == "Asub"; });
        QVERIFY(asub != slices.end());
        QCOMPARE(asub->start, int64_t(829000));
        QCOMPARE(asub->dur, int64_t(3000));
        QCOMPARE(asub->depth, 2u);  // inside "A long name..." (B) inside "Long X type" (X)
        QVERIFY(trackNamed(store, "counter"));
        QCOMPARE(trackNamed(store, "counter")->samples, uint64_t(5));
        QCOMPARE(trackNamed(store, "Global")->instants, uint64_t(1));  // s:"g"
    }

    void chromeFlowSimple() {
        const QString file = sample("chrome/flow_simple.json");
        if (file.isEmpty()) QSKIP("samples not available");
        const Imported imp = importOne(*ws_, file);
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(store.infoJson().value("slices").toInt(), 5);
        // s 2 / t 1 / f 2: id 8780d402 is s -> t -> f (two arrows), 8780d403 is s -> f. As in
        // Perfetto, an arrow leaves its source slice at its end and enters the destination slice
        // at its start.
        const auto& flows = store.flows();
        QCOMPARE(flows.size(), size_t(3));
        auto tidOf = [&](int64_t track) { return store.track(track)->tid; };
        std::set<std::tuple<std::string, int64_t, std::string, int64_t>> pairs;
        for (const auto& f : flows) {
            pairs.insert({tidOf(f.fromTrack), f.fromTs, tidOf(f.toTrack), f.toTs});
            QCOMPARE(f.fromDepth, 0);
            QCOMPARE(f.toDepth, 0);
        }
        const std::set<std::tuple<std::string, int64_t, std::string, int64_t>> expected{
            {"15904", 10000, "15895", 1001000},     // SenderB 0-10 -> Blergh (f: next slice)
            {"15903", 3012000, "15794", 3200000},   // SenderA 3002-3012 -> OtherSlice (t encloses)
            {"15794", 3700000, "15894", 3331000}};  // OtherSlice 3200-3700 -> SomeSlice (3331):
                                                    // a backward arrow
        QCOMPARE(pairs, expected);
    }

    void chromeKineto() {
        struct Case {
            const char* file;
            int64_t launch, kernel;
        };
        // launch: the end of cudaLaunchKernel (ts + 10 ns), where its flow arrow leaves.
        for (const Case c : {Case{"kineto/before_fix_trace.json", 88437691101739, 88437691101749},
                             Case{"kineto/after_fix_trace.json", 88511388202775, 88511388202785}}) {
            const QString file = sample(c.file);
            if (file.isEmpty()) QSKIP("samples not available");
            const Imported imp = importOne(*ws_, file);
            TraceStore store(*ws_, imp.profile.id);
            const QJsonObject info = store.infoJson();
            QCOMPARE(info.value("slices").toInt(), 9);
            QCOMPARE(info.value("instants").toInt(), 2);
            QCOMPARE(info.value("flows").toInt(), 1);  // ac2g id 1; f 200 and 300 have no s
            QCOMPARE(imp.meta.value("unmatched_flow_events").toInt(), 2);
            QCOMPARE(imp.meta.value("display_time_unit").toString(), QString("ms"));
            // The GPU stream is a thread of the GPU 0 process, named by thread_name metadata.
            const trace::TrackRow* stream = trackNamed(store, "stream 1");
            QVERIFY(stream);
            QCOMPARE(store.track(stream->parent)->name,
                     std::string("CuptiActivityProfilerTest (GPU 0)"));
            QCOMPARE(store.track(stream->parent)->sortIndex, int64_t(5000000));
            QCOMPARE(stream->slices, uint64_t(3));
            const auto kernels = allSlices(store, stream->id);
            QCOMPARE(store.text(kernels.at(0).name), std::string("Kernel"));
            QCOMPARE(kernels.at(0).start, c.kernel);
            QCOMPARE(kernels.at(0).dur, int64_t(20));  // 0.02 us
            const trace::FlowRow& f = store.flows().at(0);
            QCOMPARE(f.fromTs, c.launch);
            QCOMPARE(f.fromDepth, 1);  // cudaLaunchKernel, inside op1
            QCOMPARE(f.toTrack, stream->id);
            QCOMPARE(f.toTs, c.kernel);
            QCOMPARE(f.toDepth, 0);
            const std::string args = store.args(kernels.at(0).args);
            QVERIFY(args.find("\"correlation\": 1") != std::string::npos);
        }
    }

    void chromeNestableAsyncAndXEvents() {
        const QString async = sample("chrome/nestable_async.json");
        const QString xevents = sample("chrome/x_event_trace.json");
        if (async.isEmpty() || xevents.isEmpty()) QSKIP("samples not available");
        Imported imp = importOne(*ws_, async);
        QJsonObject info = TraceStore(*ws_, imp.profile.id).infoJson();
        QCOMPARE(info.value("slices").toInt(), 9);                    // b 9
        QCOMPARE(info.value("instants").toInt(), 2);                  // n 2
        QCOMPARE(imp.meta.value("unmatched_end_events").toInt(), 1);  // ..._UNMATCHED_END
        // ..._UNMATCHED_BEGIN (80 us) has no end of its own: it ends with REQUEST_BAR at 100 us,
        // which is not "never ended".
        QCOMPARE(imp.meta.value("unterminated_slices").toInt(), 0);
        QCOMPARE(imp.meta.value("async_closed_by_parent").toInt(), 1);
        QVERIFY(
            !imp.meta.value("warnings")
                 .toArray()
                 .contains(QJsonValue("1 slices never ended; they run to the end of the trace")));
        QCOMPARE(imp.meta.value("warnings").toArray().at(1).toString(),
                 QString("1 async slices had no end event of their own; they end with the "
                         "enclosing slice of their id"));
        // REQUEST_BAR (10-100 us) and REQUEST_FOO (110-200 us) lead the op table.
        QCOMPARE(info.value("top_ops").toArray().at(0).toObject().value("total").toInteger(),
                 90000);

        imp = importOne(*ws_, xevents);
        info = TraceStore(*ws_, imp.profile.id).infoJson();
        QCOMPARE(imp.meta.value("events").toInt(), 4027);
        QCOMPARE(info.value("slices").toInt(), 2799 + 442 + 53);  // X, B/E pairs, S/F pairs
        QCOMPARE(info.value("instants").toInt(), 59 + 124);       // i, T steps
        QCOMPARE(info.value("counters").toInt(), 42);
        QCOMPARE(imp.meta.value("ignored_events").toObject().value("D").toInt(), 2);
        QCOMPARE(imp.meta.value("ignored_events").toObject().value("N").toInt(), 2);
    }

    void chromeEventTypes() {
        // Object form: displayTimeUnit, counters with id, instants of each scope, flow v2,
        // legacy async, process/thread sort indexes.
        const QByteArray json = fixtures::kEventTypesJson;
        const Imported imp = importOne(*ws_, write(path("types.json"), json));
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(imp.meta.value("display_time_unit").toString(), QString("ns"));
        QCOMPARE(imp.meta.value("trace_metadata").toObject().value("traceName").toString(),
                 QString("t"));
        const trace::TrackRow* worker = trackNamed(store, "worker");
        QVERIFY(worker);
        QCOMPARE(worker->sortIndex, int64_t(-5));
        QCOMPARE(store.track(worker->parent)->name, std::string("proc"));
        const auto send = allSlices(store, worker->id);
        QCOMPARE(send.at(0).start, int64_t(1500));
        QCOMPARE(send.at(0).dur, int64_t(2250));
        QCOMPARE(store.flows().size(), size_t(1));
        QCOMPARE(store.flows()[0].fromTs, int64_t(3750));  // send ends at 1.5 + 2.25 us
        QCOMPARE(store.flows()[0].toTs, int64_t(10000));
        QCOMPARE(trackNamed(store, "mem a used")->samples, uint64_t(2));
        const auto free = store.counters(trackNamed(store, "mem a free")->id, 0, 1000000, 0);
        QCOMPARE(free.size(), size_t(2));
        QCOMPARE(free[0].value, 7.0);  // numeric strings count
        QCOMPARE(free[1].value, 3.0);
        QCOMPARE(trackNamed(store, "proc")->instants, uint64_t(1));  // s:"p"
        const trace::TrackRow* job = trackNamed(store, "job");
        QVERIFY(job);
        QCOMPARE(job->slices, uint64_t(1));
        QCOMPARE(job->instants, uint64_t(1));  // the T step
        QCOMPARE(allSlices(store, job->id).at(0).dur, int64_t(4000));
    }

    // Chrome recordings (catapult test data): an InputLatency async slice begins in the browser
    // process and ends in a renderer (async ids are global unless id2 says "local"), and
    // navigation/paint marks are 'R' events (instants; they were dropped as unknown phases).
    void chromeAsyncAcrossProcessesAndMarks() {
        const QByteArray json = R"({"traceEvents":[
{"ph":"S","name":"InputLatency","cat":"benchmark","id":"0xd5f","pid":1,"tid":1,"ts":10},
{"ph":"F","name":"InputLatency","cat":"benchmark","id":"0xd5f","pid":2,"tid":7,"ts":14},
{"ph":"b","name":"load","cat":"net","id2":{"local":"0x1"},"pid":1,"tid":1,"ts":20},
{"ph":"e","name":"load","cat":"net","id2":{"local":"0x1"},"pid":2,"tid":7,"ts":30},
{"ph":"R","name":"firstPaint","cat":"blink","pid":2,"tid":7,"ts":25,"s":"t"},
{"ph":"X","name":"work","cat":"c","pid":2,"tid":7,"ts":0,"dur":40}]})";
        const Imported imp = importOne(*ws_, write(path("async_marks.json"), json));
        const QJsonObject trace = imp.meta.value("trace").toObject();
        // The InputLatency pair (4 µs), the local 'b' left open, "work".
        QCOMPARE(trace.value("slices").toInt(), 3);
        QCOMPARE(trace.value("unended_slices").toInt(), 1);
        QCOMPARE(trace.value("instants").toInt(), 1);
        TraceStore store(*ws_, imp.profile.id);
        bool found = false;
        for (const trace::TrackRow& t : store.tracks())
            for (const auto& s : allSlices(store, t.id))
                if (store.text(s.name) == "InputLatency") {
                    QCOMPARE(s.dur, int64_t(4000));
                    found = true;
                }
        QVERIFY(found);
    }

    void chromeTimesToPicoseconds() {
        // Kineto writes epoch microseconds (~1.7e15), integers or with decimals; all of int64's
        // +-292 years of nanoseconds are accepted, decimals 4-6 are picoseconds.
        struct Case {
            const char* text;
            int64_t ns;
            uint16_t ps;
        };
        for (const Case c :
             {Case{"1695835535123456", 1695835535123456000, 0},
              Case{"1712186718123456.250", 1712186718123456250, 0}, Case{"1.0005", 1000, 500},
              Case{"2.1234567", 2123, 457}, Case{"0.9999995", 1000, 0}, Case{"-1.5005", -1501, 500},
              Case{"-3", -3000, 0}, Case{"1.5e3", 1500000, 0},
              Case{"9223372036854774", 9223372036854774000, 0}}) {
            int64_t ns = 0;
            uint16_t ps = 0;
            QVERIFY2(chrome::decimalToTime(c.text, ns, ps), c.text);
            QCOMPARE(ns, c.ns);
            QCOMPARE(ps, c.ps);
        }
        int64_t ns = 0;
        uint16_t ps = 0;
        QVERIFY(!chrome::decimalToTime("9223372036854776", ns, ps));  // past int64 ns
        QVERIFY(!chrome::decimalToTime("1e300", ns, ps));
        QVERIFY(!chrome::decimalToTime("12abc", ns, ps));
    }

    void chromeKinetoEpochFlowsUnended() {
        const Imported imp =
            importOne(*ws_, write(path("kineto_epoch.json"), fixtures::kKinetoEpochJson));
        TraceStore store(*ws_, imp.profile.id);
        constexpr int64_t kBase = 1700000000000000000;  // ns
        const QJsonObject info = store.infoJson();
        QCOMPARE(info.value("start").toInteger(), kBase + 100000);
        QCOMPARE(info.value("end").toInteger(), kBase + 900000);
        auto trackOf = [&](const std::string& pid, const std::string& tid) {
            for (const auto& t : store.tracks())
                if (t.pid == pid && t.tid == tid) return t.id;
            return int64_t(-1);
        };
        const int64_t cpu = trackOf("1", "1"), stream = trackOf("0", "7");
        // Four flows, whatever the file order: f of id 7 before its s; id 7 reused later (its
        // second f has no bp, so it enters the next slice, kernelB at 230 us); id 9 between two
        // zero-length slices at 300 us; id 13's f stamped 20 us before its s (clock skew) still
        // pairs, pointing back. Lone f 11, lone s 12 and f 9 of another category count.
        QCOMPARE(info.value("flows").toInt(), 4);
        QCOMPARE(imp.meta.value("flow_events").toInt(), 11);
        QCOMPARE(imp.meta.value("flows_ending_before_start").toInt(), 1);
        QCOMPARE(imp.meta.value("unmatched_flow_starts").toInt(), 1);
        QCOMPARE(imp.meta.value("unmatched_flow_ends").toInt(), 2);
        QCOMPARE(imp.meta.value("trace").toObject().value("unbound_flows").toInt(), 0);
        std::set<std::tuple<int64_t, int64_t, int32_t, int64_t, int64_t, int32_t>> flows;
        for (const trace::FlowRow& f : store.flows())
            flows.insert({f.fromTrack, f.fromTs, f.fromDepth, f.toTrack, f.toTs, f.toDepth});
        const std::set<std::tuple<int64_t, int64_t, int32_t, int64_t, int64_t, int32_t>> expected{
            {cpu, kBase + 105000, 0, stream, kBase + 110000, 0},
            {cpu, kBase + 205000, 0, stream, kBase + 230000, 0},
            {cpu, kBase + 300000, 0, stream, kBase + 300000, 0},
            {cpu, kBase + 475000, 0, stream, kBase + 450000, 0}};
        QCOMPARE(flows, expected);

        const auto precise = allSlices(store, trackOf("2", "2"));
        QCOMPARE(precise.at(0).start, kBase + 600000);
        QCOMPARE(precise.at(0).startPs, uint16_t(500));
        QCOMPARE(precise.at(0).dur, int64_t(1234));
        QCOMPARE(precise.at(0).durPs, uint16_t(500));

        // "never" has no E: drawn to the trace's end (900 us), marked, out of the statistics.
        const auto thread = allSlices(store, trackOf("2", "1"));
        QCOMPARE(thread.size(), size_t(2));
        QCOMPARE(store.text(thread[0].name), std::string("done"));
        QCOMPARE(thread[0].dur, int64_t(10250));
        QVERIFY(!thread[0].unended);
        QCOMPARE(store.text(thread[1].name), std::string("never"));
        QCOMPARE(thread[1].dur, int64_t(200000));
        QVERIFY(thread[1].unended);
        QCOMPARE(imp.meta.value("unterminated_slices").toInt(), 1);
        QCOMPARE(imp.meta.value("trace").toObject().value("unended_slices").toInt(), 1);
        QVERIFY(imp.meta.value("warnings").toArray().at(0).toString().contains("never ended"));
        std::map<std::string, trace::OpStat> ops;
        for (const trace::OpStat& op : store.opStats()) ops[op.name] = op;
        QCOMPARE(ops.at("never").count, uint64_t(0));
        QCOMPARE(ops.at("never").total, int64_t(0));
        QCOMPARE(ops.at("never").unended, uint64_t(1));
        QCOMPARE(ops.at("done").count, uint64_t(1));
        QCOMPARE(ops.at("done").total, int64_t(10250));
        QCOMPARE(ops.at("done").unended, uint64_t(0));
        QCOMPARE(ops.at("cudaLaunchKernel").count, uint64_t(3));
        QCOMPARE(ops.at("cudaLaunchKernel").total, int64_t(15000));
    }

    void chromeNonStandardArgsKeptAsText() {
        const Imported imp =
            importOne(*ws_, write(path("kineto2021.json"), fixtures::kNonStandardArgsJson));
        QCOMPARE(imp.meta.value("repaired_values").toInt(), 7);  // 5 numbers, 2 characters
        QVERIFY(imp.meta.value("warnings").toArray().at(0).toString().contains("bare inf"));
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(store.infoJson().value("slices").toInt(), 2);
        QCOMPARE(store.infoJson().value("instants").toInt(), 1);
        auto argsOn = [&](const std::string& tid) {
            for (const auto& t : store.tracks())
                if (t.tid == tid)
                    return QJsonDocument::fromJson(QByteArray::fromStdString(
                                                       store.args(allSlices(store, t.id)[0].args)))
                        .object();
            return QJsonObject();
        };
        const QJsonObject memcpy = argsOn("stream 7");
        QCOMPARE(memcpy.value("bytes").toInt(), 200);
        QCOMPARE(memcpy.value("memory bandwidth (GB/s)").toString(), QString("inf"));
        QCOMPARE(memcpy.value("lo").toString(), QString("-inf"));
        QCOMPARE(memcpy.value("r").toArray().at(1).toString(), QString("Infinity"));
        QCOMPARE(argsOn("1").value("note").toString(), QString("a\tb\x01c"));
    }

    // Review findings: a negative start keeps its duration; an id reused at the moment its flow
    // ends starts a new flow; a bare inf across the read window's edge still imports.
    void chromeNegativeTimesReusedIdsAndWindowEdges() {
        const QByteArray json =
            "[{\"ph\":\"X\",\"name\":\"early\",\"pid\":1,\"tid\":1,\"ts\":-5,\"dur\":1},"
            "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":2},"
            "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":2},"
            "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":2},"
            "{\"ph\":\"X\",\"name\":\"d\",\"pid\":1,\"tid\":2,\"ts\":20,\"dur\":2},"
            "{\"ph\":\"s\",\"id\":1,\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":0},"
            "{\"ph\":\"f\",\"id\":1,\"cat\":\"c\",\"pid\":1,\"tid\":2,\"ts\":10,\"bp\":\"e\"},"
            "{\"ph\":\"s\",\"id\":1,\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":10},"
            "{\"ph\":\"f\",\"id\":1,\"cat\":\"c\",\"pid\":1,\"tid\":2,\"ts\":20,\"bp\":\"e\"}]";
        const Imported imp = importOne(*ws_, write(path("reuse.json"), json));
        TraceStore store(*ws_, imp.profile.id);
        const auto main = allSlices(store, trackNamed(store, "Thread 1")->id);
        QCOMPARE(main.at(0).start, int64_t(-5000));
        QCOMPARE(main.at(0).dur, int64_t(1000));
        std::set<std::pair<int64_t, int64_t>> arrows;
        for (const trace::FlowRow& f : store.flows()) arrows.insert({f.fromTs, f.toTs});
        // a (0-2 us) -> b (10 us); c (10-12 us) -> d (20 us).
        QCOMPARE(arrows, (std::set<std::pair<int64_t, int64_t>>{{2000, 10000}, {12000, 20000}}));
        QCOMPARE(imp.meta.value("flows_ending_before_start").toInt(), 0);

        // A 4 KiB window: the bare inf lands on every position around its edge.
        const size_t window = importBuffers().jsonWindow;
        importBuffers().jsonWindow = 4096;
        for (int pad = 4000; pad < 4110; pad += 3) {
            QByteArray text = "[{\"ph\":\"X\",\"name\":\"" + QByteArray(pad, 'p') +
                              "\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"bw\":-inf}}]";
            const Imported edge = importOne(*ws_, write(path("edge.json"), text));
            QCOMPARE(edge.meta.value("repaired_values").toInt(), 1);
        }
        importBuffers().jsonWindow = window;
    }

    void chromeWindowsReadAsOneReader() {
        // The import parses the file in windows on two workers, cut where an event seems to
        // start. Whatever the text around the cuts, the events, the document's end state and the
        // error must be those of one reader reading it all: checked on 4 KiB windows against
        // next(), on documents made to put "}, {" where no event starts.
        auto event = [](int i, const QByteArray& extra) {
            return "{\"ph\":\"X\",\"name\":\"op\\u00e9\\\"" + QByteArray::number(i) +
                   QByteArray(i % 97, '_') + "\",\"pid\":1,\"tid\":" + QByteArray::number(i % 3) +
                   ",\"ts\":" + QByteArray::number(i) +
                   ".25,\"dur\":1,\"args\":{\"v\":" + (i % 5 ? "1" : "nan") + ",\"s\":\"a\\nb\"" +
                   extra + "}}";
        };
        auto document = [&](const QByteArray& head, int events, int tricky,
                            const QByteArray& tail) {
            QByteArray json = head;
            for (int i = 0; i < events; ++i) {
                if (i) json += i % 7 ? "," : " ,\n ";
                QByteArray extra;
                if (tricky && i % tricky == 1)
                    extra = ",\"t\":\"x}, {y\",\"l\":[{\"a\":1}, {\"b\":2}]";
                if (tricky && i == 150) extra += ",\"big\":\"" + QByteArray(9000, 'b') + "\"";
                json += event(i, extra);
            }
            return json + tail;
        };
        struct Read {
            QStringList events;
            QString end;  // top-level members, display unit, missing bracket, trailing data
            QString error;
            uint64_t reparsed = 0;
        };
        auto describe = [](const chrome::RawEvent& ev) {
            return QString("%1|%2|%3.%4|%5|%6")
                .arg(QString::fromUtf8(ev.name.data(), qsizetype(ev.name.size())))
                .arg(QString::fromUtf8(ev.tid.data(), qsizetype(ev.tid.size())))
                .arg(ev.tsNs)
                .arg(ev.tsPs)
                .arg(QString::fromUtf8(ev.args.data(), qsizetype(ev.args.size())))
                .arg(ev.offset);
        };
        auto endState = [](const chrome::EventReader& reader) {
            QString end;
            for (const auto& [key, value] : reader.topLevel())
                end += QString::fromStdString(key + "=" + value + ";");
            return end + QString::fromStdString(reader.displayTimeUnit()) +
                   QString("|%1|%2").arg(reader.missingClose()).arg(reader.trailingOffset());
        };
        auto readAll = [&](const QString& file, bool windows) {
            Read read;
            InputFile input(file.toStdString());
            chrome::EventReader reader(input);
            try {
                if (windows) {
                    chrome::EventPipeline pipeline(reader);
                    // Every event is checked once the whole batch is read: views must last.
                    while (const chrome::EventBatch* batch = pipeline.next())
                        for (const chrome::RawEvent& ev : batch->events)
                            read.events << describe(ev);
                    read.reparsed = pipeline.windowsReparsed();
                } else {
                    chrome::RawEvent ev;
                    while (reader.next(ev)) read.events << describe(ev);
                }
            } catch (const std::exception& e) {
                read.error = e.what();
            }
            read.end = endState(reader);
            return read;
        };
        const QByteArray prologue = "{\"traceName\":\"t\",\"deviceProperties\":[" +
                                    QByteArray(30, ' ') + "{\"a\":\"" + QByteArray(5000, 'd') +
                                    "\"}, {\"b\":2}],\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
        struct Case {
            const char* what;
            QByteArray json;
            int reparses;  // windows parsed again: 1 some, 0 none, -1 either
        };
        const Case cases[] = {
            {"plain", document("{\"traceEvents\":[", 300, 0, "],\"schemaVersion\":1}"), 0},
            {"array form", "\xEF\xBB\xBF" + document("[", 300, 0, "]"), 0},
            {"cuts in strings and arrays", document("{\"traceEvents\":[", 300, 3, "]}"), 1},
            {"long prologue, members after",
             document(prologue, 300, 0,
                      "],\"after\":[{\"x\":1}, {\"y\":\"" + QByteArray(6000, 'y') +
                          "\"}],\"schemaVersion\":2}"),
             1},
            {"missing bracket", document("[", 300, 0, ""), 0},
            {"trailing data", document("{\"traceEvents\":[", 300, 0, "]}\n\n  junk"), 0},
            {"error late", document("[", 300, 0, ",{\"ph\":\"X\",\"ts\":1,}]"), 0},
            {"error inside a tricky window",
             document("[", 120, 4, ",{\"ph\":\"X\",\"ts\":\"x}, {\",\"dur\":q}]"), -1},
        };
        const size_t window = importBuffers().jsonWindow;
        importBuffers().jsonWindow = 4096;
        for (const Case& c : cases) {
            const QString file = write(path("windows.json"), c.json);
            const Read one = readAll(file, false);
            const Read windows = readAll(file, true);
            QVERIFY2(one.events.size() >= 120, c.what);
            QCOMPARE(windows.events, one.events);
            QCOMPARE(windows.end, one.end);
            QCOMPARE(windows.error, one.error);
            // The cuts that fell outside the events array or inside a value were parsed again;
            // on plain documents every window is used as its worker parsed it.
            QVERIFY2(c.reparses < 0 || (windows.reparsed > 0) == (c.reparses > 0),
                     qPrintable(
                         QString("%1: %2 windows parsed again").arg(c.what).arg(windows.reparsed)));
        }
        importBuffers().jsonWindow = window;
        const Read plain = readAll(write(path("windows.json"), cases[0].json), false);
        QVERIFY(plain.events.at(5).startsWith(QString::fromUtf8("op\u00e9\"5_____|2|5250.0|")));
        QVERIFY(plain.events.at(5).contains("\"v\":\"nan\""));
        QCOMPARE(plain.end, QString("schemaVersion=1;|0|-1"));
        const Read late = readAll(write(path("windows.json"), cases[6].json), true);
        QVERIFY2(late.error.contains("byte ") && late.error.contains("expected a member name"),
                 qPrintable(late.error));
    }

    void chromeDetectedBehindLargeMetadata() {
        // Kineto may write tens of KB of deviceProperties/metadata before "traceEvents": the
        // importer is found from the object's structure, not from the first 4 KiB.
        QByteArray json = "{\"metadata\": {\"note\": \"";
        json += QByteArray(40000, 'x');
        json += "\", \"nested\": [1, {\"a\": \"]}\"}]}, \"deviceProperties\": [],\n";
        json +=
            "\"traceEvents\": [{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,"
            "\"ts\":5,\"dur\":2}]}";
        const Imported imp = importOne(*ws_, write(path("late.json"), json));
        QCOMPARE(imp.meta.value("format").toString(), QString("chrome-json"));
        QCOMPARE(TraceStore(*ws_, imp.profile.id).infoJson().value("slices").toInt(), 1);
        // An object whose members hold no traceEvents is not taken for a trace.
        QByteArray other = "{\"metadata\": \"" + QByteArray(40000, 'y') + "\", \"rows\": []}";
        bool refused = false;
        try {
            importOne(*ws_, write(path("other.json"), other));
        } catch (const InputError& e) {
            refused = QString::fromStdString(e.what()).contains("unknown format");
        }
        QVERIFY(refused);
    }

    // Chrome writes events per thread buffer, so an async end can come before its begin in the
    // file (catapult's multiple_input_latency: 544 of them). Async events pair in time order,
    // as catapult pairs them: that file now has catapult's 2 unmatched ends and 33 open slices.
    // Slices with equal start and duration nest in file order, Chrome's and Perfetto's rule,
    // not in string-table order (issue 34: a real Switch-Transformer trace had 88 module /
    // _call_impl pairs inverted). "alpha" is interned first (an earlier thread), "zeta" comes
    // first on thread 1: "zeta" is the parent. A B/E pair nests by its B, though its slice is
    // only complete at its E.
    void chromeEqualSpansNestInFileOrder() {
        const QByteArray json = R"([
{"ph":"X","name":"alpha","pid":1,"tid":9,"ts":100,"dur":1},
{"ph":"X","name":"zeta","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"X","name":"alpha","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"X","name":"kernel","pid":1,"tid":1,"ts":2,"dur":3},
{"ph":"B","name":"zz_outer","pid":1,"tid":2,"ts":0},
{"ph":"B","name":"alpha","pid":1,"tid":2,"ts":0},
{"ph":"E","pid":1,"tid":2,"ts":10},
{"ph":"E","pid":1,"tid":2,"ts":10}
])";
        const Imported imp = importOne(*ws_, write(path("ties.json"), json));
        TraceStore store(*ws_, imp.profile.id);
        // (track holding `name`, depth) of every slice.
        std::map<std::pair<std::string, std::string>, uint32_t> depthOf;  // (first name, name)
        for (const trace::TrackRow& t : store.tracks()) {
            auto slices = allSlices(store, t.id);
            std::erase_if(slices, [](const auto& i) { return i.kind != trace::ItemKind::Slice; });
            if (slices.size() < 2) continue;
            std::sort(slices.begin(), slices.end(),
                      [](const auto& a, const auto& b) { return a.depth < b.depth; });
            const std::string first = store.text(slices.front().name);
            for (const auto& s : slices) depthOf[{first, store.text(s.name)}] = s.depth;
        }
        QCOMPARE(depthOf.at({"zeta", "zeta"}), 0u);
        QCOMPARE(depthOf.at({"zeta", "alpha"}), 1u);
        QCOMPARE(depthOf.at({"zeta", "kernel"}), 2u);
        QCOMPARE(depthOf.at({"zz_outer", "zz_outer"}), 0u);
        QCOMPARE(depthOf.at({"zz_outer", "alpha"}), 1u);
        // Self times follow: the outer slices are covered by their equal children.
        for (const trace::OpStat& op : store.opStats()) {
            if (op.name == "zeta" || op.name == "zz_outer") QCOMPARE(op.self, int64_t(0));
            if (op.name == "alpha") QCOMPARE(op.self, int64_t(1000 + 7000 + 10000));
        }
    }

    void chromeAsyncEndBeforeItsBeginInTheFile() {
        const QByteArray json = R"([
{"ph":"F","cat":"input","name":"Latency","id":"0x7","pid":1,"tid":2,"ts":30},
{"ph":"e","cat":"gpu","name":"Frame","id":"9","pid":1,"tid":2,"ts":25},
{"ph":"S","cat":"input","name":"Latency","id":"0x7","pid":1,"tid":1,"ts":10},
{"ph":"T","cat":"input","name":"Latency","id":"0x7","pid":1,"tid":1,"ts":20},
{"ph":"b","cat":"gpu","name":"Frame","id":"9","pid":1,"tid":1,"ts":15},
{"ph":"F","cat":"input","name":"Latency","id":"0x8","pid":1,"tid":2,"ts":40}
])";
        const Imported imp = importOne(*ws_, write(path("async_order.json"), json));
        QCOMPARE(imp.meta.value("unmatched_end_events").toInt(), 1);  // the 0x8 end alone
        TraceStore store(*ws_, imp.profile.id);
        const trace::TrackRow* latency = trackNamed(store, "Latency");
        const trace::TrackRow* frame = trackNamed(store, "Frame");
        QVERIFY(latency && frame);
        auto slices = allSlices(store, latency->id);
        // The step (T) is an instant on the slice's track.
        QCOMPARE(std::count_if(slices.begin(), slices.end(),
                               [](const trace::SliceItem& i) {
                                   return i.kind == trace::ItemKind::Instant && i.start == 20000;
                               }),
                 1);
        std::erase_if(slices,
                      [](const trace::SliceItem& i) { return i.kind != trace::ItemKind::Slice; });
        QCOMPARE(slices.size(), size_t(1));
        QCOMPARE(slices[0].start, int64_t(10000));
        QCOMPARE(slices[0].dur, int64_t(20000));
        QVERIFY(!slices[0].unended);
        QCOMPARE(allSlices(store, frame->id).at(0).dur, int64_t(10000));
        QCOMPARE(imp.meta.value("trace").toObject().value("unended_slices").toInt(), 0);
    }

    // An id reused by many flows (catapult's flow.json) leaves a start whose end never came and
    // an end whose start never came: no pair of each other (the lone-event pass that pairs an
    // end stamped before its start made 266 such arrows there: 859 against catapult's 591).
    void chromeReusedFlowIdsInventNoArrows() {
        const QByteArray json = R"([
{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":20},
{"ph":"X","name":"b","pid":1,"tid":2,"ts":0,"dur":20},
{"ph":"s","cat":"c","name":"f","id":1,"pid":1,"tid":1,"ts":1},
{"ph":"s","cat":"c","name":"f","id":1,"pid":1,"tid":1,"ts":2},
{"ph":"f","cat":"c","name":"f","id":1,"pid":1,"tid":2,"ts":3,"bp":"e"},
{"ph":"f","cat":"c","name":"f","id":1,"pid":1,"tid":2,"ts":10,"bp":"e"},
{"ph":"f","cat":"c","name":"g","id":2,"pid":1,"tid":2,"ts":4,"bp":"e"},
{"ph":"s","cat":"c","name":"g","id":2,"pid":1,"tid":1,"ts":5}
])";
        const Imported imp = importOne(*ws_, write(path("reused_flows.json"), json));
        TraceStore store(*ws_, imp.profile.id);
        // id 1: 2 -> 3 only; id 2, used once, its end stamped before its start: drawn back.
        QCOMPARE(store.flows().size(), size_t(2));
        QCOMPARE(imp.meta.value("unmatched_flow_starts").toInt(), 1);
        QCOMPARE(imp.meta.value("unmatched_flow_ends").toInt(), 1);
        QCOMPARE(imp.meta.value("flows_ending_before_start").toInt(), 1);
    }

    // Flow ids are keyed by their text: "01" is not 1 and "0x1F" not "0x1f", while 7 and "7"
    // (the same text) are one id; categories keep ids apart. Flows come out in the order of
    // their id's first event in the file.
    void chromeFlowIdsKeyedByText() {
        const QByteArray json = R"([
{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":20},
{"ph":"X","name":"b","pid":1,"tid":2,"ts":0,"dur":20},
{"ph":"s","cat":"c","name":"one","id":1,"pid":1,"tid":1,"ts":1},
{"ph":"f","cat":"c","name":"one","id":"01","pid":1,"tid":2,"ts":2,"bp":"e"},
{"ph":"s","cat":"c","name":"upper","id":"0x1F","pid":1,"tid":1,"ts":3},
{"ph":"s","cat":"c","name":"hex","id":"0x1f","pid":1,"tid":1,"ts":4},
{"ph":"f","cat":"c","name":"hex","id":"0x1f","pid":1,"tid":2,"ts":5,"bp":"e"},
{"ph":"f","cat":"c","name":"seven","id":"7","pid":1,"tid":2,"ts":6,"bp":"e"},
{"ph":"s","cat":"c","name":"seven","id":7,"pid":1,"tid":1,"ts":5.5},
{"ph":"s","cat":"c","name":"minus","id":-3,"pid":1,"tid":1,"ts":7},
{"ph":"f","cat":"d","name":"minus","id":-3,"pid":1,"tid":2,"ts":8,"bp":"e"},
{"ph":"s","cat":"d","name":"minus","id":-3,"pid":1,"tid":1,"ts":7.5}
])";
        const Imported imp = importOne(*ws_, write(path("flow_ids.json"), json));
        TraceStore store(*ws_, imp.profile.id);
        const auto& flows = store.flows();
        QCOMPARE(flows.size(), size_t(3));
        QCOMPARE(store.text(flows[0].name), std::string("hex"));
        QCOMPARE(store.text(flows[1].name), std::string("seven"));
        QCOMPARE(store.text(flows[2].name), std::string("minus"));
        QCOMPARE(imp.meta.value("unmatched_flow_starts").toInt(), 3);  // 1, "0x1F", c:-3
        QCOMPARE(imp.meta.value("unmatched_flow_ends").toInt(), 1);    // "01"
        QCOMPARE(imp.meta.value("flow_events").toInt(), 10);
    }

    void chromeEdgeCases() {
        // Unmatched E, overlapping X on one thread, unknown ph, non-ASCII and escaped names,
        // huge args, and a missing closing bracket.
        const std::string huge(6 << 20, 'x');  // larger than the reader's 4 MiB window
        QByteArray json = fixtures::kEdgeCasesJson;
        json += QByteArray::fromStdString(huge) + "\"}},\n";
        // Escapes: \u00e9, a surrogate pair and an escaped quote (a plain literal: moc misreads
        // backslashes in raw strings).
        json +=
            "{\"ph\":\"X\",\"name\":\"esc \\u00e9\\ud83d\\ude00 \\\"q\\\"\",\"pid\":1,\"tid\":3,"
            "\"ts\":22,\"dur\":1},\n";
        const Imported imp = importOne(*ws_, write(path("edge.json"), json));
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(imp.meta.value("unmatched_end_events").toInt(), 1);
        QCOMPARE(imp.meta.value("ignored_events").toObject().value("Z").toInt(), 1);
        QCOMPARE(imp.meta.value("missing_close_bracket").toBool(), true);
        QVERIFY(imp.meta.value("warnings").toArray().at(0).toString().contains("closing bracket"));
        QCOMPARE(imp.meta.value("trace").toObject().value("overlapping_slices").toInt(), 1);
        const auto overlapping = allSlices(store, trackNamed(store, "Thread 2")->id);
        QCOMPARE(overlapping.size(), size_t(2));
        QCOMPARE(overlapping[1].depth, 1u);  // B starts inside A: drawn one row down
        const auto names = allSlices(store, trackNamed(store, "Thread 3")->id);
        QCOMPARE(store.text(names[0].name), std::string("名前 ünïcode"));
        QCOMPARE(store.text(names[1].name), std::string("esc é\xF0\x9F\x98\x80 \"q\""));
        const auto big = allSlices(store, trackNamed(store, "Thread 4")->id);
        QCOMPARE(store.args(big.at(0).args).size(),
                 huge.size() + std::string(fixtures::kBlobArgsJson).size());
        QCOMPARE(store.infoJson().value("slices").toInt(), 6);
    }

    void chromeCompressed() {
        const QString file = sample("chrome/simple_trace.json");
        if (file.isEmpty()) QSKIP("samples not available");
        QFile in(file);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray raw = in.readAll();
        QByteArray packed(int(ZSTD_compressBound(size_t(raw.size()))), '\0');
        packed.resize(int(ZSTD_compress(packed.data(), size_t(packed.size()), raw.data(),
                                        size_t(raw.size()), 3)));
        const Imported imp = importOne(*ws_, write(path("simple.json.zst"), packed));
        QCOMPARE(imp.meta.value("compression").toString(), QString("zstd"));
        QCOMPARE(TraceStore(*ws_, imp.profile.id).infoJson().value("slices").toInt(), 12);
    }

    void chromeBrokenJsonReportsOffset() {
        const QByteArray json = fixtures::kBrokenJson;
        const QString file = write(path("broken.json"), json);
        try {
            importOne(*ws_, file, "chrome-json");
            QFAIL("broken JSON was accepted");
        } catch (const InputError& e) {
            const qsizetype at = json.indexOf("\"ph\":\"X\" \"name\"") + 9;  // the stray '"'
            QVERIFY2(QString(e.what()).contains(QString("broken.json: byte %1:").arg(at)),
                     e.what());
        }
        QCOMPARE(ws_->profiles().size(), size_t(0));  // nothing stored
        QCOMPARE(count(*ws_, "SELECT count(*) FROM trace_chunks"), 0);

        // The file ends inside an event: an error, not a warning.
        const QByteArray cut = fixtures::kCutJson;
        try {
            importOne(*ws_, write(path("cut.json"), cut), "chrome-json");
            QFAIL("truncated JSON was accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains(QString("byte %1: the JSON ends inside an event")
                                                    .arg(cut.indexOf("{\"ph\"", 5))),
                     e.what());
        }
    }

    void chromeConcurrentAsync() {
        // ids 1, 2, 3 of "req" overlap: each gets its own lane instead of being drawn nested;
        // id 4 starts after they all ended and reuses the first lane (with its child).
        const Imported imp =
            importOne(*ws_, write(path("async.json"), QByteArray(fixtures::kConcurrentAsyncJson)));
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(imp.meta.value("trace").toObject().value("overlapping_slices").toInt(), 0);
        QCOMPARE(imp.meta.value("async_lanes").toInt(), 2);
        QVERIFY(imp.meta.value("warnings").toArray().isEmpty());
        const auto lanes = store.children(store.children(-1).at(0)->id);
        QCOMPARE(lanes.size(), size_t(3));
        QCOMPARE(lanes[0]->name, std::string("req"));
        QCOMPARE(lanes[1]->name, std::string("req (2)"));
        QCOMPARE(lanes[2]->name, std::string("req (3)"));
        const auto first = allSlices(store, lanes[0]->id);
        QCOMPARE(first.size(), size_t(3));  // id 1 (0-30), id 4 (60-70), its parse (62-64)
        QCOMPARE(first[0].start, int64_t(0));
        QCOMPARE(first[0].dur, int64_t(30000));
        QCOMPARE(first[1].start, int64_t(60000));
        QCOMPARE(first[2].depth, 1u);
        QCOMPARE(store.text(first[2].name), std::string("parse"));
        QCOMPARE(allSlices(store, lanes[1]->id).at(0).start, int64_t(10000));  // id 2
        QCOMPARE(allSlices(store, lanes[1]->id).at(0).depth, 0u);
        QCOMPARE(allSlices(store, lanes[2]->id).at(0).start, int64_t(20000));  // id 3
        QCOMPARE(allSlices(store, lanes[2]->id).at(0).dur, int64_t(30000));
    }

    void chromeBrokenArgsAndTrailingData() {
        // Broken JSON inside "args" is an error at its byte, not stored as it is.
        const QByteArray broken = fixtures::kBrokenArgsJson;
        try {
            importOne(*ws_, write(path("args.json"), broken), "chrome-json");
            QFAIL("broken args were accepted");
        } catch (const InputError& e) {
            const qsizetype at = broken.indexOf(",,") + 1;  // the second comma
            QVERIFY2(QString(e.what()).contains(
                         QString("args.json: byte %1: malformed JSON in \"args\": expected a "
                                 "member name")
                             .arg(at)),
                     e.what());
        }
        QCOMPARE(ws_->profiles().size(), size_t(0));
        // Data after the closing bracket: imported, with a warning naming its offset.
        const QByteArray trailing = fixtures::kTrailingGarbageJson;
        const Imported imp = importOne(*ws_, write(path("trailing.json"), trailing));
        const qsizetype at = trailing.indexOf("garbage");
        QCOMPARE(imp.meta.value("trailing_data_offset").toInteger(), at);
        QCOMPARE(imp.meta.value("warnings").toArray().at(0).toString(),
                 QString("byte %1: data after the end of the JSON document was ignored").arg(at));
        QCOMPARE(imp.meta.value("missing_close_bracket").toBool(), false);
        QCOMPARE(TraceStore(*ws_, imp.profile.id).infoJson().value("slices").toInt(), 1);
        // Whitespace after the bracket is fine.
        const Imported clean = importOne(
            *ws_, write(path("clean.json"), QByteArray(fixtures::kBrokenJson).left(55) + "]\n\n "));
        QVERIFY(!clean.meta.contains("trailing_data_offset"));
        QVERIFY(clean.meta.value("warnings").toArray().isEmpty());
    }

    void chromeGzip() {
        const QString file = sample("kineto/before_fix_trace.json");
        if (file.isEmpty()) QSKIP("samples not available");
        QFile in(file);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const std::string packed = fixtures::gzip(in.readAll().toStdString());
        const Imported imp =
            importOne(*ws_, write(path("kineto.json.gz"), QByteArray::fromStdString(packed)));
        QCOMPARE(imp.meta.value("format").toString(), QString("chrome-json"));
        QCOMPARE(imp.meta.value("compression").toString(), QString("gzip"));
        QCOMPARE(imp.meta.value("events").toInt(), 75);
        const QJsonObject info = TraceStore(*ws_, imp.profile.id).infoJson();
        QCOMPARE(info.value("slices").toInt(), 9);
        QCOMPARE(info.value("flows").toInt(), 1);
    }

    void xprofSample() {
        const QString file = sample("xprof/tpu_inference_2.xplane.pb");
        if (file.isEmpty()) QSKIP("samples not available");
        const Imported imp = importOne(*ws_, file);
        QCOMPARE(imp.meta.value("format").toString(), QString("xprof-xspace"));
        // samples/README.md: 7 planes, 142 lines, 26,723 events.
        QCOMPARE(imp.meta.value("planes").toInt(), 7);
        QCOMPARE(imp.meta.value("lines").toInt(), 142);
        QCOMPARE(imp.meta.value("events").toInt(), 26723);
        QCOMPARE(imp.meta.value("aggregated_events").toArray().size(), 0);
        TraceStore store(*ws_, imp.profile.id);
        const QJsonObject info = store.infoJson();
        QCOMPARE(info.value("slices").toInt(), 26723);
        QCOMPARE(info.value("start").toInteger(), 482851900);
        QCOMPARE(info.value("end").toInteger(), 98635909582);
        std::vector<std::string> processes;
        for (const auto* t : store.children(-1)) processes.push_back(t->name);
        // Planes without events (/host:metadata, Task Environment) hold no track.
        QCOMPARE(processes,
                 (std::vector<std::string>{"/device:TPU:0", "/device:TPU:1", "/device:TPU:2",
                                           "/device:TPU:3", "/host:CPU"}));
        // 140 line tracks plus two lanes for the Async XLA Ops of TPU 0 that overlap without
        // nesting (600 events: 214 + 194 + 192); nothing is drawn as a false child any more.
        QCOMPARE(info.value("tracks").toInt(), 142);
        QCOMPARE(imp.meta.value("trace").toObject().value("overlapping_slices").toInt(), 0);
        const auto tpu0 = store.children(store.children(-1)[0]->id);
        QCOMPARE(tpu0[0]->name, std::string("XLA Modules"));
        QCOMPARE(tpu0[1]->name, std::string("XLA Ops"));
        QCOMPARE(tpu0[1]->slices, uint64_t(1504));
        QCOMPARE(tpu0[2]->name, std::string("Async XLA Ops"));
        QCOMPARE(tpu0[2]->slices, uint64_t(214));
        QCOMPARE(tpu0[3]->name, std::string("Async XLA Ops (2)"));
        QCOMPARE(tpu0[3]->slices, uint64_t(194));
        QCOMPARE(tpu0[4]->name, std::string("Async XLA Ops (3)"));
        QCOMPARE(tpu0[4]->slices, uint64_t(192));
        QCOMPARE(imp.meta.value("warnings").toArray().at(0).toString(),
                 QString("2 extra lanes hold events that overlap others on their line without "
                         "nesting"));
        const QJsonObject top = info.value("top_ops").toArray().at(0).toObject();
        QCOMPARE(top.value("name").toString(), QString("jit_f(12190760917235803885)"));
        QCOMPARE(top.value("count").toInt(), 400);
        // 313,657,988,976,350 ps summed exactly, then rounded to ns.
        QCOMPARE(top.value("total").toInteger(), 313657988976);
        // The first op: offset 5439011744500 ps, 4443766328 ps long: picoseconds kept.
        const auto ops = store.slices(tpu0[1]->id, store.start(), store.end(), 0);
        QCOMPARE(store.text(ops.at(0).name), std::string("broadcast.2"));
        QCOMPARE(ops.at(0).start, int64_t(5439011744));
        QCOMPARE(int(ops.at(0).startPs), 500);
        QCOMPARE(ops.at(0).dur, int64_t(4443766));
        QCOMPARE(int(ops.at(0).durPs), 328);
        // Its args: the event's own stats, its metadata's stats (hlo_category, bytes_accessed
        // ...) and the full HLO text behind the display name.
        const QJsonObject args =
            QJsonDocument::fromJson(QByteArray::fromStdString(store.args(ops.at(0).args))).object();
        QCOMPARE(args.value("device_offset_ps").toInteger(), 5438997127500);
        QCOMPARE(args.value("hlo_category").toString(), QString("broadcast"));
        QCOMPARE(args.value("bytes_accessed").toInteger(), 5368709120);
        QCOMPARE(args.value("flops").toInteger(), 0);
        QCOMPARE(args.value("shape_with_layout").toString(),
                 QString("f32[5,1024,1024,256]{3,2,1,0:T(8,128)}"));
        QVERIFY(
            args.value("long_name")
                .toString()
                .startsWith("%broadcast.2 = f32[5,1024,1024,256]{3,2,1,0:T(8,128)} broadcast("));
        const auto allReduce = std::find_if(ops.begin(), ops.end(), [&](const trace::SliceItem& x) {
            return store.text(x.name) == "all-reduce";
        });
        QVERIFY(allReduce != ops.end());
        const std::string arArgs = store.args(allReduce->args);
        QVERIFY(arArgs.find("\"all_reduce_unique_id\":131073") != std::string::npos);
        QVERIFY(arArgs.find("\"program_id\":9646411105960254074") != std::string::npos);
        QVERIFY(arArgs.find("\"flops\":1342177280") != std::string::npos);
        // 219 events last between 0 and 1 ns: they keep their picoseconds (and 1117 last 0).
        uint64_t subNs = 0, zero = 0;
        for (const auto& t : store.tracks())
            for (const auto& x : allSlices(store, t.id)) {
                if (x.dur == 0 && x.durPs > 0) ++subNs;
                if (x.dur == 0 && x.durPs == 0) ++zero;
            }
        QCOMPARE(subNs, uint64_t(219));
        QCOMPARE(zero, uint64_t(1117));
        // Plane stats describe the devices in the profile metadata.
        const QJsonArray planes = imp.meta.value("plane_details").toArray();
        QCOMPARE(planes.size(), 7);
        const QJsonObject tpu0Stats = planes.at(0).toObject().value("stats").toObject();
        QCOMPARE(planes.at(0).toObject().value("name").toString(), QString("/device:TPU:0"));
        QCOMPARE(tpu0Stats.value("device_type_string").toString(), QString("TPU v6 Lite"));
        QCOMPARE(tpu0Stats.value("peak_teraflops_per_second").toDouble(), 918.0);
        QCOMPARE(tpu0Stats.value("peak_hbm_bw_gigabytes_per_second").toDouble(), 1637.993152512);
        QCOMPARE(planes.at(6)
                     .toObject()
                     .value("stats")
                     .toObject()
                     .value("profile_start_time")
                     .toInteger(),
                 1741722099081044120);
    }

    void xprofHandWritten() {
        // Every XStat value kind, metadata stats merged under the event's own, display names,
        // picoseconds, overlapping lanes, aggregated events; plain, gzip and zstd files.
        const std::string space = fixtures::handWrittenXSpace();
        const std::string gz = fixtures::gzip(space);
        std::string zst(ZSTD_compressBound(space.size()), '\0');
        zst.resize(ZSTD_compress(zst.data(), zst.size(), space.data(), space.size(), 3));
        struct Case {
            const char* file;
            const std::string* bytes;
            const char* compression;
        };
        for (const Case c :
             {Case{"hand.xplane.pb", &space, "none"}, Case{"hand.xplane.pb.gz", &gz, "gzip"},
              Case{"hand.xplane.pb.zst", &zst, "zstd"}}) {
            const Imported imp =
                importOne(*ws_, write(path(c.file), QByteArray::fromStdString(*c.bytes)));
            QCOMPARE(imp.meta.value("format").toString(), QString("xprof-xspace"));
            QCOMPARE(imp.meta.value("compression").toString(), QString(c.compression));
            QCOMPARE(imp.meta.value("events").toInt(), 7);
            QCOMPARE(imp.meta.value("aggregated_events").toInt(), 2);
            QCOMPARE(imp.meta.value("compressed_stats").toInt(), 1);
            QCOMPARE(imp.meta.value("hostnames").toArray().at(0).toString(), QString("host-a"));
            const QJsonObject plane = imp.meta.value("plane_details").toArray().at(0).toObject();
            QCOMPARE(plane.value("stats").toObject().value("device_type_string").toString(),
                     QString("TPU test"));
            QCOMPARE(plane.value("stats").toObject().value("peak_teraflops_per_second").toDouble(),
                     918.5);
            TraceStore store(*ws_, imp.profile.id);
            const trace::TrackRow* ops = trackNamed(store, "XLA Ops");
            QVERIFY(ops);
            const auto slices = allSlices(store, ops->id);
            QCOMPARE(slices.size(), size_t(3));
            // fusion.1 at 1000 ns + 1500 ps for 2250 ps, shown by its display name.
            QCOMPARE(store.text(slices[0].name), std::string("fusion.1"));
            QCOMPARE(slices[0].start, int64_t(1001));
            QCOMPARE(int(slices[0].startPs), 500);
            QCOMPARE(slices[0].dur, int64_t(2));
            QCOMPARE(int(slices[0].durPs), 250);
            QCOMPARE(slices[0].durNs(), 2.25);
            // Own stats first (flops 42 wins over the metadata's 100; kind resolves its
            // ref_value), then the metadata's, then the HLO text.
            QCOMPARE(store.args(slices[0].args),
                     std::string("{\"flops\":42,\"kind\":\"kLoop\",\"hlo_category\":"
                                 "\"convolution\",\"long_name\":\"%fusion.1 = f32[8]{0} "
                                 "fusion(f32[8]{0} %p), kind=kLoop\"}"));
            // A 0.4 ns event without stats: the metadata's stats only.
            QCOMPARE(slices[1].start, int64_t(1005));
            QCOMPARE(slices[1].dur, int64_t(0));
            QCOMPARE(int(slices[1].durPs), 400);
            QCOMPARE(store.args(slices[1].args),
                     std::string("{\"hlo_category\":\"convolution\",\"flops\":100,"
                                 "\"long_name\":\"%fusion.1 = f32[8]{0} fusion(f32[8]{0} %p), "
                                 "kind=kLoop\"}"));
            // compressed_str_value, gunzipped; no display name, so no long_name.
            QCOMPARE(store.text(slices[2].name), std::string("copy"));
            QCOMPARE(store.args(slices[2].args), std::string("{\"tf_op\":\"jit(f)/copy\"}"));
            // The overlapping copy-starts: two lanes, each of depth 0.
            const trace::TrackRow* lane1 = trackNamed(store, "Async XLA Ops");
            const trace::TrackRow* lane2 = trackNamed(store, "Async XLA Ops (2)");
            QVERIFY(lane1 && lane2);
            QCOMPARE(lane1->slices, uint64_t(1));
            QCOMPARE(lane2->slices, uint64_t(1));
            QCOMPARE(lane2->maxDepth, 0u);
            QCOMPARE(allSlices(store, lane2->id).at(0).start, int64_t(1005));
            QVERIFY(!trackNamed(store, "Aggregated"));  // no timed events
            // Aggregated copies (5 + 3, 7 + 2 us) count in the op statistics, summed per op.
            const QJsonArray agg = imp.meta.value("aggregated_ops").toArray();
            QCOMPARE(agg.size(), 1);
            QCOMPARE(agg.at(0).toObject().value("name").toString(), QString("copy"));
            QCOMPARE(agg.at(0).toObject().value("occurrences").toInt(), 8);
            QCOMPARE(agg.at(0).toObject().value("duration_ps").toInteger(), 9000000);
            QCOMPARE(agg.at(0).toObject().value("events").toInt(), 2);
            const auto opStats = store.opStats();
            QCOMPARE(opStats.at(0).name, std::string("copy"));
            QCOMPARE(opStats.at(0).count, uint64_t(9));  // 1 timed + 8 aggregated
            QCOMPARE(opStats.at(0).aggregated, uint64_t(8));
            QCOMPARE(opStats.at(0).total, int64_t(9003));
            const auto fusion = std::find_if(opStats.begin(), opStats.end(),
                                             [](const auto& o) { return o.name == "fusion.1"; });
            QCOMPARE(fusion->count, uint64_t(2));
            QCOMPARE(fusion->total, int64_t(3));  // 2.25 + 0.4 ns, rounded
            QCOMPARE(fusion->p95, int64_t(2));
            const QJsonObject info = store.infoJson();
            QCOMPARE(info.value("top_ops").toArray().at(0).toObject().value("aggregated").toInt(),
                     8);
            QCOMPARE(info.value("aggregated_ops")
                         .toArray()
                         .at(0)
                         .toObject()
                         .value("occurrences")
                         .toInt(),
                     8);
        }
    }

    void xprofTruncated() {
        // A plane that claims 16 bytes but has 3.
        const QByteArray bytes("\x0a\x10\x08\x01\x12", 5);
        try {
            importOne(*ws_, write(path("bad.xplane.pb"), bytes));
            QFAIL("truncated protobuf was accepted");
        } catch (const InputError& e) {
            QVERIFY2(
                QString(e.what()).contains(
                    "bad.xplane.pb: byte 0: XSpace: a length-delimited field runs past the end"),
                e.what());
        }
        const QString file = sample("xprof/tpu_inference_2.xplane.pb");
        if (file.isEmpty()) return;
        QFile in(file);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QVERIFY_THROWS_EXCEPTION(
            InputError, importOne(*ws_, write(path("half.xplane.pb"), in.read(in.size() / 2))));
        QCOMPARE(ws_->profiles().size(), size_t(0));
    }

    // A public repository holds an XProf sample saved through a text pipeline: every byte from
    // 0x80 up became U+FFFD (EF BF BD). No reader can undo that; the error says so instead of
    // "truncated file?".
    void xprofSavedAsText() {
        const std::string space = fixtures::handWrittenXSpace();
        std::string mangled;
        for (const char c : space) {
            if (uint8_t(c) >= 0x80)
                mangled += "\xEF\xBF\xBD";
            else
                mangled += c;
        }
        try {
            importOne(*ws_, write(path("text.xplane.pb"), QByteArray::fromStdString(mangled)));
            QFAIL("a text-mangled XSpace was accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("text.xplane.pb: byte ") &&
                         QString(e.what()).contains("saved as text") &&
                         !QString(e.what()).contains("truncated"),
                     e.what());
        }
        QCOMPARE(ws_->profiles().size(), size_t(0));
        // Under another name than *.xplane.pb, told by its first plane's name.
        const Imported renamed =
            importOne(*ws_, write(path("host.xspace.pb"), QByteArray::fromStdString(space)));
        QCOMPARE(renamed.meta.value("format").toString(), QString("xprof-xspace"));
        QCOMPARE(renamed.meta.value("events").toInt(), 7);
    }

    void chakraAllGather() {
        const QString file = sample("chakra/all_gather.0.et");
        if (file.isEmpty()) QSKIP("samples not available");
        const Imported imp = importOne(*ws_, file);
        QCOMPARE(imp.meta.value("format").toString(), QString("chakra-et"));
        QCOMPARE(imp.meta.value("chakra_version").toString(), QString("0.0.4"));
        QCOMPARE(imp.meta.value("ranks").toArray().size(), 4);  // rank 0 brings ranks 1-3
        const QJsonArray coll = imp.meta.value("collectives").toArray();
        QCOMPARE(coll.size(), 4);
        for (const auto& c : coll) {
            QCOMPARE(c.toObject().value("comm_size").toInteger(), 1048576);
            QCOMPARE(c.toObject().value("comm_type").toString(), QString("ALL_GATHER"));
        }
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(store.children(-1).size(), size_t(1));
        QCOMPARE(store.children(store.children(-1)[0]->id).size(), size_t(4));
        QVERIFY(!imp.meta.contains("chakra_schema"));
        const auto node = allSlices(store, trackNamed(store, "rank 2")->id);
        QCOMPARE(store.text(node.at(0).name), std::string("all_gather_4npus_1MB"));
        QVERIFY(store.args(node.at(0).args).find("\"comm_size\":1048576") != std::string::npos);
    }

    void chakraDependencies() {
        const QString file = sample("chakra/custom_allreduce.0.et");
        if (file.isEmpty()) QSKIP("samples not available");
        const Imported imp = importOne(*ws_, file);
        QCOMPARE(imp.meta.value("ranks").toArray().size(), 8);
        QCOMPARE(imp.meta.value("nodes").toInt(), 280);
        QCOMPARE(imp.meta.value("node_types").toObject().value("COMP_NODE").toInt(), 56);
        QCOMPARE(imp.meta.value("node_types").toObject().value("COMM_SEND_NODE").toInt(), 112);
        QCOMPARE(imp.meta.value("node_types").toObject().value("COMM_RECV_NODE").toInt(), 112);
        QCOMPARE(imp.meta.value("dependencies").toInt(), 272);
        QCOMPARE(imp.meta.value("missing_dependencies").toInt(), 0);
        QVERIFY(imp.meta.value("schedule").toString().contains("ASAP"));
        TraceStore store(*ws_, imp.profile.id);
        QCOMPARE(store.flows().size(), size_t(272));
        // Seven 7-us compute steps chained by dependencies: the schedule ends at 49 us.
        QCOMPARE(store.end(), int64_t(49000));
        const auto rank0 = allSlices(store, trackNamed(store, "rank 0")->id);
        QCOMPARE(store.text(rank0[0].name), std::string("COMP_NODE_tb0_step1"));
        QCOMPARE(rank0[0].dur, int64_t(7000));
        const auto step3 = std::find_if(rank0.begin(), rank0.end(), [&](const trace::SliceItem& s) {
            return store.text(s.name) == "COMP_NODE_tb0_step3";
        });
        QCOMPARE(step3->start, int64_t(7000));  // after step 1
        // The version is only in the schema attribute of these traces.
        QCOMPARE(imp.meta.value("chakra_version").toString(), QString("0.0.4"));
        QCOMPARE(imp.meta.value("chakra_schema").toString(), QString("1.0.2-chakra.0.0.4"));
        QCOMPARE(imp.meta.value("global_metadata").toObject().value("collective").toString(),
                 QString("allreduce"));
        // Send and receive nodes are not collectives: their comm_type stays a number (5, 6),
        // not BROADCAST or ALL_TO_ALL.
        auto argsOf = [&](const char* name) {
            const auto it = std::find_if(rank0.begin(), rank0.end(),
                                         [&](const auto& x) { return store.text(x.name) == name; });
            return QJsonDocument::fromJson(QByteArray::fromStdString(store.args(it->args)))
                .object();
        };
        const QJsonObject send = argsOf("COMM_SEND_NODE_tb0_step0");
        QCOMPARE(send.value("type").toString(), QString("COMM_SEND_NODE"));
        QCOMPARE(send.value("comm_type").toInt(), 5);
        QCOMPARE(send.value("comm_size").toInt(), 131072);
        QCOMPARE(send.value("comm_dst").toInt(), 1);
        const QJsonObject recv = argsOf("COMM_RECV_NODE_tb0_step1");
        QCOMPARE(recv.value("comm_type").toInt(), 6);
        QCOMPARE(recv.value("comm_src").toInt(), 7);
        QCOMPARE(imp.meta.value("collectives").toArray().size(), 0);
        // Dependencies bind to their own nodes: COMP step1 (0-7 us, depth 0) -> SEND step2
        // (a zero-length node at 7 us, depth 1) leaves at the end of step 1.
        const int64_t r0 = trackNamed(store, "rank 0")->id;
        const auto flow =
            std::find_if(store.flows().begin(), store.flows().end(), [&](const auto& f) {
                return f.fromTrack == r0 && f.fromTs == 7000 && f.fromDepth == 0 && f.toTs == 7000;
            });
        QVERIFY(flow != store.flows().end());
        QCOMPARE(flow->toDepth, 1);
    }

    // A generator's Chakra trace states op counts and sizes, no durations: the import, the
    // steps and the transfers say so instead of a 0 ns breakdown, and a GlobalMetadata whose
    // schema names no Chakra version shows no version (issue 34). With timed compute but
    // untimed collectives (ASTRA-sim inputs), communication's absence is said too.
    void chakraWithoutDurationsSaysSo() {
        using namespace fixtures::wire;
        const std::string meta = chakraFrame(
            bytesField(2, bytesField(1, "schema") + bytesField(29, "symbolic_tensor_network")));
        const std::string untimed =
            meta + chakraNodeOf(1, "mm", 4, 0, chakraAttr("num_ops", 9, 2013425664)) +
            chakraNodeOf(2, "ag", 7, 0,
                         chakraAttr("comm_type", 9, 2) + chakraAttr("comm_size", 13, 1048576));
        const Imported imp =
            importOne(*ws_, write(path("stg.0.et"), QByteArray::fromStdString(untimed)));
        QVERIFY(!imp.meta.contains("chakra_version"));
        QCOMPARE(imp.meta.value("chakra_schema").toString(), QString("symbolic_tensor_network"));
        QVERIFY(!imp.meta.value("evidence").toArray().contains("durations"));
        QVERIFY(imp.meta.value("warnings").toArray().at(0).toString().startsWith("no durations"));
        TraceStore store(*ws_, imp.profile.id);
        QVERIFY(trace::analyzeSteps(store).note.starts_with("no durations"));
        QVERIFY(transfers::derive(store).note.starts_with("no durations"));

        const std::string partlyTimed =
            meta + chakraNodeOf(1, "mm", 4, 5, chakraAttr("num_ops", 9, 2013425664)) +
            chakraNodeOf(2, "ag", 7, 0,
                         chakraAttr("comm_type", 9, 2) + chakraAttr("comm_size", 13, 1048576));
        const Imported partly =
            importOne(*ws_, write(path("astra.0.et"), QByteArray::fromStdString(partlyTimed)));
        QVERIFY(partly.meta.value("evidence").toArray().contains("durations"));
        TraceStore partlyStore(*ws_, partly.profile.id);
        const std::string note = trace::analyzeSteps(partlyStore).note;
        QVERIFY2(note.starts_with("no durations for 1 collectives (1048576 bytes)"), note.c_str());
    }

    void chakraWithoutGlobalMetadata() {
        // astra-sim's traces of 2023 have no GlobalMetadata: the first message is a Node (here
        // with id 0, which protobuf leaves out).
        const QByteArray first = chakraNode(0, 'a', -1, 7);
        const QByteArray second = chakraNode(1, 'b', 0, 5);
        const QString rank0 = write(path("old_dp.0.et"), first + second);
        write(path("old_dp.1.et"), first);
        const Imported imp = importOne(*ws_, rank0);
        QCOMPARE(imp.meta.value("format").toString(), QString("chakra-et"));
        QCOMPARE(imp.meta.value("nodes").toInt(), 3);
        QCOMPARE(imp.meta.value("ranks_without_global_metadata").toInt(), 2);
        QCOMPARE(imp.meta.value("dependencies").toInt(), 1);
        QVERIFY(imp.meta.value("warnings").toArray().at(0).toString().contains("GlobalMetadata"));
        TraceStore store(*ws_, imp.profile.id);
        const auto nodes = allSlices(store, trackNamed(store, "rank 0")->id);
        QCOMPARE(nodes.size(), size_t(2));
        QCOMPARE(store.text(nodes[0].name), std::string("a"));
        QCOMPARE(nodes[0].dur, int64_t(7000));
        QCOMPARE(store.text(nodes[1].name), std::string("b"));
        QCOMPARE(nodes[1].start, int64_t(7000));  // after a, its control dependency
        QCOMPARE(nodes[1].dur, int64_t(5000));
        QCOMPARE(store.flows().size(), size_t(1));
    }

    // Ranks placed ASAP meet: a collective ends its duration after the last rank arrived, a
    // receive after its send did (comm_src/comm_dst/comm_tag, the k-th of each). Rank 0: fwd0
    // [0, 10), ar arrives at 10 and waits for rank 1's (fwd1 ends at 30): [10, 35); send [35, 37)
    // to rank 1 with tag 7, tail0 [37, 41). Rank 1: the receive arrives at 0 and ends 3 us after
    // the send arrived at 35: [0, 38); tail1 after it and ar: [38, 44). Checked against a Python
    // schedule of the same files written apart (memoised arrival/finish recursion).
    void chakraRanksMeetAtCollectivesAndReceives() {
        const auto attr = [](const char* name, uint64_t v) { return chakraAttr(name, 7, v); };
        const std::string rank0 =
            chakraNodeAfter(1, "fwd0", 4, {}, 10) +
            chakraNodeAfter(2, "ar", 7, {1}, 5, chakraAttr("comm_type", 9, 0)) +
            chakraNodeAfter(3, "send", 5, {2}, 2, attr("comm_dst", 1) + attr("comm_tag", 7)) +
            chakraNodeAfter(4, "tail0", 4, {3}, 4);
        const std::string rank1 =
            chakraNodeAfter(1, "fwd1", 4, {}, 30) +
            chakraNodeAfter(2, "ar", 7, {1}, 5, chakraAttr("comm_type", 9, 0)) +
            chakraNodeAfter(3, "recv", 6, {}, 3, attr("comm_src", 0) + attr("comm_tag", 7)) +
            chakraNodeAfter(4, "tail1", 4, {3, 2}, 6);
        write(path("meet.1.et"), QByteArray::fromStdString(rank1));
        const Imported imp =
            importOne(*ws_, write(path("meet.0.et"), QByteArray::fromStdString(rank0)));
        const QJsonObject met = imp.meta.value("rendezvous").toObject();
        QCOMPARE(met.value("collectives").toInt(), 1);
        QCOMPARE(met.value("send_receive").toInt(), 1);
        QCOMPARE(met.value("unmatched").toInt(), 0);
        QCOMPARE(met.value("released_early").toInt(), 0);
        TraceStore store(*ws_, imp.profile.id);
        const auto spans = [&](const char* rank) {
            std::map<std::string, std::pair<int64_t, int64_t>> out;
            for (const auto& n : allSlices(store, trackNamed(store, rank)->id))
                out[store.text(n.name)] = {n.start / 1000, (n.start + n.dur) / 1000};
            return out;
        };
        using Span = std::pair<int64_t, int64_t>;
        const auto r0 = spans("rank 0"), r1 = spans("rank 1");
        QCOMPARE(r0.at("ar"), Span(10, 35));
        QCOMPARE(r0.at("send"), Span(35, 37));
        QCOMPARE(r0.at("tail0"), Span(37, 41));
        QCOMPARE(r1.at("ar"), Span(30, 35));
        QCOMPARE(r1.at("recv"), Span(0, 38));
        QCOMPARE(r1.at("tail1"), Span(38, 44));

        // Each rank's receive waits for a send the other makes after its own receive: neither can
        // arrive, so the first receive waited at goes alone (said), and the other then meets its
        // send. A send to a rank the trace does not have meets no one (said).
        const auto crossed = [&](uint64_t peer) {
            return chakraNodeAfter(1, "recv", 6, {}, 1, attr("comm_src", peer)) +
                   chakraNodeAfter(2, "send", 5, {1}, 1, attr("comm_dst", peer));
        };
        write(path("cross.1.et"), QByteArray::fromStdString(crossed(0)));
        const Imported cross = importOne(
            *ws_,
            write(path("cross.0.et"),
                  QByteArray::fromStdString(
                      crossed(1) + chakraNodeAfter(3, "lost", 5, {2}, 1, attr("comm_dst", 5)))));
        const QJsonObject crossMet = cross.meta.value("rendezvous").toObject();
        QCOMPARE(crossMet.value("send_receive").toInt(), 2);
        QCOMPARE(crossMet.value("released_early").toInt(), 1);
        QCOMPARE(crossMet.value("unmatched").toInt(), 1);
        const QJsonArray warnings = cross.meta.value("warnings").toArray();
        const auto says = [&](const char* text) {
            return std::any_of(warnings.begin(), warnings.end(),
                               [&](const QJsonValue& w) { return w.toString().contains(text); });
        };
        QVERIFY(says("1 collectives or send/receive pairs went before all their ranks arrived"));
        QVERIFY(says("1 collectives, sends or receives meet no other rank"));
        TraceStore crossStore(*ws_, cross.profile.id);
        std::vector<int64_t> ends;
        for (const char* rank : {"rank 0", "rank 1"})
            for (const auto& n : allSlices(crossStore, trackNamed(crossStore, rank)->id))
                if (crossStore.text(n.name) == "send") ends.push_back((n.start + n.dur) / 1000);
        std::sort(ends.begin(), ends.end());
        // The receive released alone ends at 1, its rank sends [1, 2); the other's receive
        // ends 1 us after that send arrived (2), then its send [2, 3).
        QCOMPARE(ends, (std::vector<int64_t>{2, 3}));
    }

    // Dependency cycles (a public PyTorch Chakra trace has 941 nodes on them: an op and its
    // kernel depending on each other): every node is still placed, each cycle broken at its
    // first node in file order, and the import says so. a <-> b, c after b, d on itself.
    void chakraDependencyCycle() {
        const QByteArray a = chakraNode(0, 'a', 1, 7);
        const QByteArray b = chakraNode(1, 'b', 0, 5);
        const QByteArray c = chakraNode(2, 'c', 1, 2);
        const QByteArray d = chakraNode(3, 'd', 3, 1);  // lists itself: no cycle to break
        const Imported imp = importOne(*ws_, write(path("cycle.0.et"), a + b + c + d));
        QCOMPARE(imp.meta.value("nodes").toInt(), 4);
        QCOMPARE(imp.meta.value("cycle_breaks").toInt(), 1);
        const QJsonArray warnings = imp.meta.value("warnings").toArray();
        QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const QJsonValue& w) {
            return w.toString().contains("cycles: 1 nodes");
        }));
        TraceStore store(*ws_, imp.profile.id);
        const auto nodes = allSlices(store, trackNamed(store, "rank 0")->id);
        QCOMPARE(nodes.size(), size_t(4));
        auto startOf = [&](const char* name) {
            for (const auto& n : nodes)
                if (store.text(n.name) == name) return n.start;
            return int64_t(-1);
        };
        QCOMPARE(startOf("a"), int64_t(0));      // the cycle broken here
        QCOMPARE(startOf("b"), int64_t(7000));   // after a
        QCOMPARE(startOf("c"), int64_t(12000));  // after b (left at 0 before)
        QCOMPARE(startOf("d"), int64_t(0));
        QCOMPARE(store.flows().size(), size_t(4));  // d's arrow to itself is drawn
    }

    // Profiles imported before strings, flows and op statistics were packed into blobs hold
    // them as rows (trace_strings, trace_flows, trace_ops): they read the same.
    void rowStoredProfilesReadTheSame() {
        const QString file = sample("chakra/custom_allreduce.0.et");
        if (file.isEmpty()) QSKIP("samples not available");
        const Imported imp = importOne(*ws_, file);
        const int64_t id = imp.profile.id;
        std::vector<std::string> texts;
        std::vector<trace::FlowRow> flows;
        std::vector<trace::OpStat> ops;
        QJsonObject info;
        {
            TraceStore packed(*ws_, id);
            for (uint32_t i = 0; !packed.text(i).empty() || i == 0; ++i)
                texts.push_back(packed.text(i));
            flows = packed.flows();
            ops = packed.opStats();
            info = packed.infoJson();
        }
        QVERIFY(texts.size() > 10);
        QCOMPARE(flows.size(), size_t(272));
        sql::Statement str(ws_->db(),
                           "INSERT INTO trace_strings(profile_id, id, text) VALUES(?,?,?)");
        for (size_t i = 0; i < texts.size(); ++i)
            str.bind(1, id).bind(2, int64_t(i)).bind(3, texts[i]).exec();
        sql::Statement flow(ws_->db(),
                            "INSERT INTO trace_flows(profile_id, id, name_id, from_track, from_ns, "
                            "from_depth, to_track, to_ns, to_depth) VALUES(?,?,?,?,?,?,?,?,?)");
        for (const trace::FlowRow& f : flows)
            flow.bind(1, id)
                .bind(2, f.id)
                .bind(3, int64_t(f.name))
                .bind(4, f.fromTrack)
                .bind(5, f.fromTs)
                .bind(6, int64_t(f.fromDepth))
                .bind(7, f.toTrack)
                .bind(8, f.toTs)
                .bind(9, int64_t(f.toDepth))
                .exec();
        sql::Statement op(ws_->db(),
                          "INSERT INTO trace_ops(profile_id, name_id, count, total_ns, self_ns, "
                          "min_ns, max_ns, p50_ns, p95_ns) VALUES(?,?,?,?,?,?,?,?,?)");
        for (const trace::OpStat& o : ops) {
            const auto name = std::find(texts.begin(), texts.end(), o.name) - texts.begin();
            op.bind(1, id)
                .bind(2, int64_t(name))
                .bind(3, int64_t(o.count))
                .bind(4, o.total)
                .bind(5, o.self)
                .bind(6, o.min)
                .bind(7, o.max)
                .bind(8, o.p50)
                .bind(9, o.p95)
                .exec();
        }
        sql::exec(ws_->db(), "DELETE FROM blobs WHERE profile_id = " + std::to_string(id));
        TraceStore rows(*ws_, id);
        for (size_t i = 0; i < texts.size(); ++i) QCOMPARE(rows.text(uint32_t(i)), texts[i]);
        QCOMPARE(rows.flows().size(), flows.size());
        for (size_t i = 0; i < flows.size(); ++i) {
            const trace::FlowRow& a = flows[i];
            const trace::FlowRow& b = rows.flows()[i];
            QCOMPARE(std::tie(a.id, a.name, a.fromTrack, a.fromTs, a.fromDepth, a.toTrack, a.toTs,
                              a.toDepth),
                     std::tie(b.id, b.name, b.fromTrack, b.fromTs, b.fromDepth, b.toTrack, b.toTs,
                              b.toDepth));
        }
        const std::vector<trace::OpStat> rowOps = rows.opStats();
        QCOMPARE(rowOps.size(), ops.size());
        for (size_t i = 0; i < ops.size(); ++i) {
            QCOMPARE(rowOps[i].name, ops[i].name);
            QCOMPARE(std::tie(rowOps[i].count, rowOps[i].total, rowOps[i].self, rowOps[i].min,
                              rowOps[i].max, rowOps[i].p50, rowOps[i].p95),
                     std::tie(ops[i].count, ops[i].total, ops[i].self, ops[i].min, ops[i].max,
                              ops[i].p50, ops[i].p95));
        }
        QCOMPARE(rows.infoJson(), info);
    }

    void chakraGzipAndRankSetOnce() {
        // A gzip rank set imports like the plain one.
        QStringList plain;
        for (int r = 0; r < 8; ++r) {
            const QString file = sample(QString("chakra/custom_allreduce.%1.et").arg(r));
            if (file.isEmpty()) QSKIP("samples not available");
            QFile in(file);
            QVERIFY(in.open(QIODevice::ReadOnly));
            write(path(QString("ring.%1.et.gz").arg(r)),
                  QByteArray::fromStdString(fixtures::gzip(in.readAll().toStdString())));
        }
        Imported imp = importOne(*ws_, path("ring.0.et.gz"));
        QCOMPARE(imp.meta.value("compression").toString(), QString("gzip"));
        QCOMPARE(imp.meta.value("ranks").toArray().size(), 8);
        QCOMPARE(imp.meta.value("nodes").toInt(), 280);
        QCOMPARE(imp.meta.value("dependencies").toInt(), 272);

        // `import all_gather.*.et`: rank 0 brings the set, so ranks 1-3 are not imported again.
        std::vector<std::string> files;
        for (int r = 0; r < 4; ++r) {
            const QString file = sample(QString("chakra/all_gather.%1.et").arg(r));
            if (file.isEmpty()) QSKIP("samples not available");
            files.push_back(file.toStdString());
        }
        std::swap(files[0], files[2]);  // the order given does not matter
        const size_t before = ws_->profiles().size();
        Progress progress;
        const auto out = importFiles(*ws_, ImportRequest{files, {}, {}}, progress);
        QCOMPARE(out.size(), size_t(1));
        QCOMPARE(ws_->profiles().size(), before + 1);
        const ProfileInfo p = *ws_->profile(out[0].id);
        QCOMPARE(p.name, std::string("all_gather.0"));
        const QJsonObject meta =
            QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object();
        QCOMPARE(meta.value("ranks").toArray().size(), 4);
        QCOMPARE(TraceStore(*ws_, p.id).infoJson().value("slices").toInt(), 4);
    }

    void cliInfoJson() {
        const QString file = sample("chrome/flow_simple.json");
        if (file.isEmpty()) QSKIP("samples not available");
        if (!QFile::exists(STALLSCOPE_BINARY)) QSKIP("stallscope binary not built");
        const QString store = path("cli.sqlite");
        QProcess import;
        import.start(STALLSCOPE_BINARY, {"--store", store, "import", file});
        QVERIFY(import.waitForFinished(60000));
        QCOMPARE(import.exitCode(), 0);
        QProcess info;
        info.start(STALLSCOPE_BINARY, {"--store", store, "info", "flow_simple", "--json"});
        QVERIFY(info.waitForFinished(60000));
        QCOMPARE(info.exitCode(), 0);
        const QJsonObject o = QJsonDocument::fromJson(info.readAllStandardOutput()).object();
        QCOMPARE(o.value("kind").toString(), QString("trace"));
        QCOMPARE(o.value("tracks").toInt(), 10);
        QCOMPARE(o.value("slices").toInt(), 5);
        QCOMPARE(o.value("counters").toInt(), 0);
        QCOMPARE(o.value("flows").toInt(), 3);
        QCOMPARE(o.value("start").toInteger(), 0);
        QCOMPARE(o.value("end").toInteger(), 3731000);
        QCOMPARE(o.value("time_unit").toString(), QString("ns"));
        const QJsonObject top = o.value("top_ops").toArray().at(0).toObject();
        QCOMPARE(top.value("name").toString(), QString("OtherSlice"));
        QCOMPARE(top.value("count").toInt(), 1);
        QCOMPARE(top.value("total").toInteger(), 500000);
    }

    void chromeStreamingMemoryBound() {
        // ~150 MB of nested X events (1.5 M slices: more than the writer's in-memory budget, so
        // runs spill) imported by a child process; its peak RSS must stay far below the file size.
        const QString file = path("large.json");
        {
            std::ofstream out(file.toStdString());
            out << "[";
            char line[256];
            for (int i = 0; i < 1'500'000; ++i) {
                const int tid = i % 8, depth = (i / 8) % 4;
                std::snprintf(
                    line, sizeof line,
                    "%s{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"op%d\",\"pid\":1,\"tid\":%d,"
                    "\"ts\":%d.%03d,\"dur\":%d,\"args\":{\"i\":%d,\"pad\":\"0123456789abcdef\"}}\n",
                    i ? "," : "", i % 50, tid, (i / 32) * 100 + depth, i % 1000, 90 - depth * 20,
                    i);
                out << line;
            }
            out << "]";
        }
        const qint64 size = QFileInfo(file).size();
        QVERIFY(size > 140'000'000);
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("STALLSCOPE_TRACE_IMPORT_CHILD", file);
        env.insert("STALLSCOPE_TRACE_IMPORT_STORE", path("child.sqlite"));
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(child.waitForFinished(300000));
        QCOMPARE(child.exitCode(), 0);
        const QList<QByteArray> out = child.readAllStandardOutput().trimmed().split(' ');
        QCOMPARE(out.size(), 2);
        const long peakKb = out[0].toLong();
        QCOMPARE(out[1].toLongLong(), 1'500'000LL);  // slices stored
        qInfo() << "child peak RSS" << peakKb / 1024 << "MB for a" << size / 1'000'000 << "MB file";
        QVERIFY2(peakKb < 160 * 1024, qPrintable(QString("peak RSS %1 kB").arg(peakKb)));
        QFile::remove(file);
    }
};

// With STALLSCOPE_TRACE_IMPORT_CHILD set, the executable imports that file and prints its peak
// RSS (kB) and the number of slices stored: the memory-bound test runs it as a child process.
int main(int argc, char** argv) {
    if (const char* file = std::getenv("STALLSCOPE_TRACE_IMPORT_CHILD")) {
        QCoreApplication app(argc, argv);
        auto ws = Workspace::open(std::getenv("STALLSCOPE_TRACE_IMPORT_STORE"));
        Progress progress;
        const auto out = importFiles(*ws, ImportRequest{{file}, {}, {}}, progress);
        const int64_t slices = TraceStore(*ws, out.at(0).id).infoJson().value("slices").toInteger();
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        std::printf("%ld %lld\n", usage.ru_maxrss, static_cast<long long>(slices));
        return 0;
    }
    QCoreApplication app(argc, argv);
    TestTraceImporters test;
    return QTest::qExec(&test, argc, argv);
}
#include "test_trace_importers.moc"
