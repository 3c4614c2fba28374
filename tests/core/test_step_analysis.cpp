// Step breakdown (issue 18): hand-written Kineto-style traces with every category and overlap
// rule and their exact nanoseconds, recommendations on traces built to trigger each one, the
// DataLoader-starved run against the same run with more loader workers, storage, the CLI, and
// the real samples against an independent computation (tests/tools/steps_reference.py).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <random>
#include <stdexcept>

#include "core/analysis/cache.h"
#include "core/compare/step_compare.h"
#include "core/errors.h"
#include "core/trace/step_analysis.h"
#include "core/trace/step_registration.h"
#include "core/trace/steps/internal.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"

using namespace stallscope;
using namespace stallscope::trace;

namespace {

constexpr int kHostPid = 1, kHostTid = 1, kGpuPid = 0;

// Builds a Kineto-like Chrome trace: a host thread, GPU streams, launch flows (ac2g).
class TraceBuilder {
  public:
    TraceBuilder() {
        meta("process_name", kHostPid, 0, "python3");
        meta("thread_name", kHostPid, kHostTid, "thread 1 (python3)");
        meta("process_name", kGpuPid, 0, "python3");
        meta("process_labels", kGpuPid, 0, "GPU 0");
    }
    // Times in µs.
    TraceBuilder& host(const QString& name, double ts, double dur, int tid = kHostTid) {
        events_.append(QJsonObject{{"ph", "X"},
                                   {"cat", "cpu_op"},
                                   {"name", name},
                                   {"pid", kHostPid},
                                   {"tid", tid},
                                   {"ts", ts},
                                   {"dur", dur}});
        return *this;
    }
    TraceBuilder& stream(int tid) {
        meta("thread_name", kGpuPid, tid, QString("stream %1 ").arg(tid));
        return *this;
    }
    // Another thread of the device process (MTIA's "DMA_REQUEST").
    TraceBuilder& deviceThread(int tid, const QString& name) {
        meta("thread_name", kGpuPid, tid, name);
        return *this;
    }
    // The runtime call gpu() launches from (default cudaLaunchKernel).
    TraceBuilder& launcher(const QString& name) {
        launcher_ = name;
        return *this;
    }
    // A device slice with exactly these args (no correlation, no launch).
    TraceBuilder& deviceSlice(const QString& name, double ts, double dur, int tid,
                              const QJsonObject& args) {
        events_.append(QJsonObject{{"ph", "X"},
                                   {"cat", "mtia_ccp_events"},
                                   {"name", name},
                                   {"pid", kGpuPid},
                                   {"tid", tid},
                                   {"ts", ts},
                                   {"dur", dur},
                                   {"args", args}});
        return *this;
    }
    // A device activity; launched > 0: a cudaLaunchKernel at that time with its flow (without
    // one when !flow: bound only by their shared correlation id, as some traces have them).
    TraceBuilder& gpu(const QString& name, double ts, double dur, int tid = 7, double launched = -1,
                      bool flow = true) {
        const QString cat = name.startsWith("Memcpy")   ? "gpu_memcpy"
                            : name.startsWith("Memset") ? "gpu_memset"
                                                        : "kernel";
        const int id = ++correlation_;
        events_.append(QJsonObject{
            {"ph", "X"},
            {"cat", cat},
            {"name", name},
            {"pid", kGpuPid},
            {"tid", tid},
            {"ts", ts},
            {"dur", dur},
            {"args", QJsonObject{{"device", 0}, {"stream", tid}, {"correlation", id}}}});
        if (launched >= 0) {
            events_.append(QJsonObject{{"ph", "X"},
                                       {"cat", "cuda_runtime"},
                                       {"name", launcher_},
                                       {"pid", kHostPid},
                                       {"tid", kHostTid},
                                       {"ts", launched},
                                       {"dur", 1},
                                       {"args", QJsonObject{{"correlation", id}}}});
            if (!flow) return *this;
            events_.append(QJsonObject{{"ph", "s"},
                                       {"cat", "ac2g"},
                                       {"name", "ac2g"},
                                       {"id", id},
                                       {"pid", kHostPid},
                                       {"tid", kHostTid},
                                       {"ts", launched}});
            events_.append(QJsonObject{{"ph", "f"},
                                       {"bp", "e"},
                                       {"cat", "ac2g"},
                                       {"name", "ac2g"},
                                       {"id", id},
                                       {"pid", kGpuPid},
                                       {"tid", tid},
                                       {"ts", ts}});
        }
        return *this;
    }
    // Kineto's gpu_user_annotation: the GPU span of a host range, no launch correlation.
    TraceBuilder& annotation(const QString& name, double ts, double dur, int tid = 7) {
        events_.append(QJsonObject{{"ph", "X"},
                                   {"cat", "gpu_user_annotation"},
                                   {"name", name},
                                   {"pid", kGpuPid},
                                   {"tid", tid},
                                   {"ts", ts},
                                   {"dur", dur},
                                   {"args", QJsonObject{{"External id", 1}}}});
        return *this;
    }
    std::string json() const {
        return QJsonDocument(QJsonObject{{"traceEvents", events_}}).toJson().toStdString();
    }

  private:
    void meta(const char* what, int pid, int tid, const QString& value) {
        const char* key = QByteArray(what).endsWith("labels") ? "labels" : "name";
        events_.append(QJsonObject{{"ph", "M"},
                                   {"name", what},
                                   {"pid", pid},
                                   {"tid", tid},
                                   {"args", QJsonObject{{key, value}}}});
    }
    QJsonArray events_;
    int correlation_ = 0;
    QString launcher_ = "cudaLaunchKernel";
};

int64_t us(double v) {
    return int64_t(v * 1000);
}

const StepRecommendation* findRecommendation(const StepAnalysis& a, const std::string& kind) {
    for (const StepRecommendation& r : a.recommendations)
        if (r.kind == kind) return &r;
    return nullptr;
}

}  // namespace

class TestStepAnalysis : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Workspace> ws_;
    int files_ = 0;

    int64_t import(const std::string& json) {
        const std::string path = dir_.filePath(QString("t%1.json").arg(++files_)).toStdString();
        std::ofstream(path) << json;
        Progress progress;
        return importFiles(*ws_, ImportRequest{{path}, {}, {}}, progress).at(0).id;
    }
    StepAnalysis analyze(const std::string& json, const StepOptions& options = {}) {
        const TraceStore store(*ws_, import(json));
        return analyzeSteps(store, options);
    }

    // Every category and overlap rule in one 100 µs step (see the comments for each stretch).
    static TraceBuilder everyCategory() {
        TraceBuilder t;
        t.stream(7).stream(8);
        t.host("ProfilerStep#1", 0, 100);
        // [0, 10): the device idles while the host is in the DataLoader -> input 10.
        t.host("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 10);
        // [10, 30): a GEMM; [20, 40) NCCL on another stream: 10 hidden, [30, 40) exposed.
        t.gpu("ampere_sgemm_128x64_nn", 10, 20);
        t.gpu("ncclKernel_AllReduce_RING_LL_Sum_float", 20, 20, 8);
        // [40, 45): idle; the next kernel was launched at 41, after the device went idle:
        // host_wait 5. Attention [45, 55).
        t.gpu("flash_fwd_kernel", 45, 10, 7, 41);
        // H2D copy [55, 60), memset [60, 62).
        t.gpu("Memcpy HtoD (Pageable -> Device)", 55, 5);
        t.gpu("Memset (Device)", 60, 2);
        // [62, 70): idle with the next kernel queued since 50, host doing nothing: idle 8.
        t.gpu("elementwise_kernel", 70, 10, 7, 50);
        // D2H [80, 90) on stream 8 with a kernel [85, 88) beside it: memcpy 7 exposed, 3 hidden.
        t.gpu("Memcpy DtoH (Device -> Pinned)", 80, 10, 8);
        t.gpu("vectorized_elementwise_kernel", 85, 3);
        // [90, 100): idle while the host synchronises (since 89): host_wait 10, a sync stall.
        t.host("cudaStreamSynchronize", 89, 11);
        return t;
    }

  private slots:
    // Shapes of real traces (public PyTorch profiles of MI300 and 2021 ResNet-50 runs): kernels
    // under 1 µs written as dur 0 by whole-µs Kineto, launches bound only by correlation (no
    // ac2g flows), AMD's GEMM (Tensile "Cijk_") and ROCm blit kernel names; and a CPU-only
    // trace, which gets no advice about a device it does not have.
    void realTraceShapes() {
        TraceBuilder t;
        t.stream(7);
        t.host("ProfilerStep#1", 0, 100);
        t.gpu("Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", 10, 20, 7, 2);  // latency 8
        t.gpu("void at::native::vectorized_elementwise_kernel<4>", 30, 0, 7, 5);   // 25, 0 long
        t.gpu("__amd_rocclr_fillBufferAligned.kd", 40, 4, 7, 30, false);  // 10, by correlation
        t.gpu("__amd_rocclr_copyBuffer.kd", 50, 6, 7, 44, false);         // 6, by correlation
        t.gpu("_combined_routing_memset", 60, 2, 7, 55);  // a Triton kernel, not a memset; 5
        const StepAnalysis a = analyze(t.json());
        QCOMPARE(a.breakdown.size(), size_t(1));
        const DeviceStepBreakdown& b = a.breakdown[0];
        QCOMPARE(b.activities, int64_t(5));
        QCOMPARE(b.at(StepCategory::Compute), us(22));
        QCOMPARE(b.gemm, us(20));
        QCOMPARE(b.at(StepCategory::Memset), us(4));
        QCOMPARE(b.at(StepCategory::Memcpy), us(6));
        QCOMPARE(b.otherCopy, us(6));
        // Latencies 5, 6, 8, 10, 25 µs: nearest-rank p50 the 3rd, p95 the 5th.
        QCOMPARE(a.launchLatency.count, uint64_t(5));
        QCOMPARE(a.launchLatency.p50, us(8));
        QCOMPARE(a.launchLatency.p95, us(25));

        // MTIA (a public inference trace): its device streams record event_record/event_wait
        // and the runtime's synchronize as slices, copies as dma_request.
        TraceBuilder mtia;
        mtia.stream(7);
        mtia.host("ProfilerStep#1", 0, 100);
        mtia.gpu("pe_exe", 10, 30);
        mtia.gpu("event_wait", 40, 20);
        mtia.gpu("synchronize", 40, 25);
        mtia.gpu("dma_request", 60, 5);
        const StepAnalysis m = analyze(mtia.json());
        QCOMPARE(m.breakdown[0].at(StepCategory::Compute), us(30));
        QCOMPARE(m.breakdown[0].at(StepCategory::Memcpy), us(5));
        QCOMPARE(m.breakdown[0].activities, int64_t(2));

        // MTIA training (a public HTA sample): DMAs overlap on a stream and have no
        // correlation (not GPU annotations holding them), a "DMA_REQUEST" thread of the device
        // carries more, and kernels launch from "runFunction - ..." calls, dated from their
        // start (8 µs here), not their end.
        TraceBuilder train;
        train.stream(7).deviceThread(801, "DMA_REQUEST");
        train.launcher("runFunction - job_prep_and_submit_for_execution");
        train.host("ProfilerStep#1", 0, 100);
        train.gpu("fc-dtype_Float", 10, 20, 7, 2);
        train.deviceSlice("dma_request", 40, 20, 7, {{"stream", 7}, {"size", 64}});
        train.deviceSlice("dma_request", 45, 5, 7, {{"stream", 7}, {"size", 64}});
        train.deviceSlice("dma_request", 70, 5, 801, {{"direction", "DEVICE_TO_HOST"}});
        const StepAnalysis tr = analyze(train.json());
        QCOMPARE(tr.breakdown.size(), size_t(1));
        QCOMPARE(tr.breakdown[0].at(StepCategory::Compute), us(20));
        QCOMPARE(tr.breakdown[0].at(StepCategory::Memcpy), us(25));
        QCOMPARE(tr.breakdown[0].activities, int64_t(4));
        QCOMPARE(tr.launchLatency.count, uint64_t(1));
        QCOMPARE(tr.launchLatency.p50, us(8));

        TraceBuilder cpu;
        cpu.host("ProfilerStep#1", 0, 100);
        cpu.host("aten::mm", 10, 50);
        const StepAnalysis c = analyze(cpu.json());
        QCOMPARE(c.devices.size(), size_t(1));
        QCOMPARE(c.devices[0].name, std::string("(no device activity)"));
        QCOMPARE(c.breakdown[0].at(StepCategory::Idle), us(100));
        QVERIFY(c.recommendations.empty());  // was "device_idle 100 %"
    }

    void initTestCase() {
        QVERIFY(dir_.isValid());
        ws_ = Workspace::open(dir_.filePath("ws.sqlite").toStdString());
    }

    // steps[].kernels are compute kernels, as kernels_per_step and small_kernels count them;
    // steps[].activities every device activity (copies, memsets, collectives too) (issue 34).
    void kernelsAreComputeKernelsActivitiesAreAll() {
        const StepAnalysis a = analyze(everyCategory().json());
        const DeviceStepBreakdown& b = a.breakdown.at(0);
        QCOMPARE(b.activities, int64_t(8));  // 4 kernels, NCCL, 2 copies, a memset
        QCOMPARE(b.kernels, int64_t(4));     // sgemm, flash, elementwise, vectorized
        const QJsonObject step = toJson(a).value("steps").toArray().at(0).toObject();
        QCOMPARE(step.value("kernels").toInt(), 4);
        QCOMPARE(step.value("activities").toInt(), 8);
        QVERIFY(toJson(a).value("device_activity").toBool());
        QVERIFY(!toJson(a).contains("note"));
    }

    // A trace without device activity is not "91 % idle": the analysis says it has no device,
    // in JSON, in the table and in the GUI's overview text (issue 34).
    void hostOnlyTraceSaysSo() {
        TraceBuilder t;
        t.host("ProfilerStep#1", 0, 100);
        t.host("aten::mm", 10, 40);
        const StepAnalysis a = analyze(t.json());
        QVERIFY(!a.deviceActivity);
        QVERIFY(a.recommendations.empty());
        const QJsonObject json = toJson(a);
        QVERIFY(!json.value("device_activity").toBool(true));
        QVERIFY(json.value("note").toString().startsWith("no device activity"));
        const std::string table = stepsTable(a);
        QVERIFY2(table.find("devices: 0") != std::string::npos, table.c_str());
        QVERIFY2(table.find("no device activity") != std::string::npos, table.c_str());
        // And it survives the stored form.
        QVERIFY(!stepAnalysisFromJson(json).deviceActivity);
        QCOMPARE(stepAnalysisFromJson(json).note, a.note);
    }

    void everyCategoryToTheNanosecond() {
        const StepAnalysis a = analyze(everyCategory().json());
        QCOMPARE(a.source, StepSource::ProfilerStep);
        QCOMPARE(a.steps.size(), size_t(1));
        QCOMPARE(a.steps[0].duration(), us(100));
        QCOMPARE(a.devices.size(), size_t(1));
        QCOMPARE(a.devices[0].name, std::string("GPU 0"));
        QCOMPARE(a.devices[0].tracks.size(), size_t(2));
        QCOMPARE(a.breakdown.size(), size_t(1));
        const DeviceStepBreakdown& b = a.breakdown[0];
        QCOMPARE(b.at(StepCategory::Compute), us(43));  // 20 + 10 + 10 + 3
        QCOMPARE(b.at(StepCategory::Communication), us(10));
        QCOMPARE(b.at(StepCategory::Memcpy), us(12));  // 5 H2D + 7 D2H
        QCOMPARE(b.at(StepCategory::Memset), us(2));
        QCOMPARE(b.at(StepCategory::HostWait), us(15));  // 5 late launch + 10 sync
        QCOMPARE(b.at(StepCategory::Input), us(10));
        QCOMPARE(b.at(StepCategory::Idle), us(8));
        int64_t sum = 0;
        for (int64_t ns : b.ns) sum += ns;
        QCOMPARE(sum, us(100));
        QCOMPARE(b.gemm, us(20));
        QCOMPARE(b.attention, us(10));
        QCOMPARE(b.otherCompute, us(13));
        QCOMPARE(b.h2d, us(5));
        QCOMPARE(b.d2h, us(7));
        QCOMPARE(b.d2d + b.peer + b.otherCopy, int64_t(0));
        QCOMPARE(b.communicationTotal, us(20));
        QCOMPARE(b.communicationHidden, us(10));
        QCOMPARE(b.memcpyTotal, us(15));
        QCOMPARE(b.memcpyHidden, us(3));
        QCOMPARE(b.activities, int64_t(8));

        // Host: DataLoader 10, the sync 11, two launches 1 each, nothing else.
        QCOMPARE(a.host.size(), size_t(1));
        const HostStepBreakdown& h = a.host[0];
        QCOMPARE(h.ns[size_t(HostCategory::Input)], us(10));
        QCOMPARE(h.ns[size_t(HostCategory::Sync)], us(11));
        QCOMPARE(h.ns[size_t(HostCategory::Runtime)], us(2));
        QCOMPARE(h.ns[size_t(HostCategory::Idle)], us(77));

        // Launch -> start: 45 - 41 and 70 - 50.
        QCOMPARE(a.launchLatency.count, uint64_t(2));
        QCOMPARE(a.launchLatency.p50, us(4));
        QCOMPARE(a.launchLatency.p95, us(20));
        QCOMPARE(a.launchLatency.mean, us(12));

        // Gaps, longest first, with their causes and what the host did.
        QCOMPARE(a.gaps.size(), size_t(4));
        QCOMPARE(a.gapCounts[size_t(StepCategory::Input)], uint64_t(1));
        QCOMPARE(a.gapCounts[size_t(StepCategory::HostWait)], uint64_t(2));
        QCOMPARE(a.gapCounts[size_t(StepCategory::Idle)], uint64_t(1));
        QCOMPARE(a.gaps[0].duration(), us(10));
        QCOMPARE(a.gaps[2].start, us(62));
        QCOMPARE(a.gaps[2].cause, StepCategory::Idle);
        QCOMPARE(a.gaps[3].start, us(40));
        QCOMPARE(a.gaps[3].hostWait, us(5));
        for (const IdleGap& g : a.gaps)
            if (g.start == us(0))
                QCOMPARE(
                    g.hostActivity,
                    std::string("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));

        // Input 10 %, sync stall 10 %, exposed communication 10 %, memcpy + memset 14 %.
        const auto* input = findRecommendation(a, "input_bound");
        QVERIFY(input);
        QCOMPARE(input->sharePct, 10.0);
        QCOMPARE(input->start, us(0));
        QCOMPARE(input->end, us(10));
        const auto* sync = findRecommendation(a, "sync_stall");
        QVERIFY(sync);
        QCOMPARE(sync->sharePct, 10.0);
        QCOMPARE(sync->evidence.value("sync_calls").toInt(), 1);
        QCOMPARE(sync->start, us(89));
        const auto* comm = findRecommendation(a, "exposed_communication");
        QVERIFY(comm);
        QCOMPARE(comm->sharePct, 10.0);
        QCOMPARE(comm->evidence.value("hidden_pct").toDouble(), 50.0);
        QCOMPARE(comm->start, us(30));
        QCOMPARE(comm->end, us(40));
        const auto* copy = findRecommendation(a, "memcpy_bound");
        QVERIFY(copy);
        QCOMPARE(copy->sharePct, 14.0);
        QVERIFY(!findRecommendation(a, "launch_bound"));  // 5 % < 10 %
        QVERIFY(!findRecommendation(a, "device_idle"));   // 8 % < 20 %
    }

    void priorityWhenCategoriesOverlap() {
        // Three streams at once: compute beats communication beats memcpy beats memset.
        TraceBuilder t;
        t.stream(7).stream(8).stream(9).stream(10);
        t.host("ProfilerStep#1", 0, 40);
        t.gpu("Memset (Device)", 0, 40, 10);
        t.gpu("Memcpy DtoD (Device -> Device)", 0, 30, 9);
        t.gpu("ncclDevKernel_AllGather", 0, 20, 8);
        t.gpu("sm90_xmma_gemm_bf16", 0, 10, 7);
        const StepAnalysis a = analyze(t.json());
        const DeviceStepBreakdown& b = a.breakdown.at(0);
        QCOMPARE(b.at(StepCategory::Compute), us(10));
        QCOMPARE(b.at(StepCategory::Communication), us(10));
        QCOMPARE(b.at(StepCategory::Memcpy), us(10));
        QCOMPARE(b.at(StepCategory::Memset), us(10));
        QCOMPARE(b.d2d, us(10));
        QCOMPARE(b.communicationTotal, us(20));
        QCOMPARE(b.communicationHidden, us(10));
        QCOMPARE(b.memcpyTotal, us(30));
        QCOMPARE(b.memcpyHidden, us(10));
    }

    void idleCausesPriority() {
        // The device is idle the whole 30 µs step: [0, 10) input while the host also launches,
        // [10, 20) a runtime call, [20, 30) nothing -> input 10, host_wait 10, idle 10.
        TraceBuilder t;
        t.stream(7);
        t.host("ProfilerStep#1", 0, 30);
        t.host("DataLoader.__next__", 0, 10, 2);
        t.host("cudaMalloc", 5, 15);
        // After the step, launched as the trace begins (not late): the rest is plain idle.
        t.gpu("late_kernel", 40, 5, 7, 0);
        const StepAnalysis a = analyze(t.json());
        const DeviceStepBreakdown& b = a.breakdown.at(0);
        QCOMPARE(b.at(StepCategory::Input), us(10));
        QCOMPARE(b.at(StepCategory::HostWait), us(10));
        QCOMPARE(b.at(StepCategory::Idle), us(10));
        QCOMPARE(a.gaps.size(), size_t(1));
        QCOMPARE(a.gaps[0].cause, StepCategory::Input);  // ties go to the higher cause
    }

    void annotationsAndSyncMarkersAreNotActivity() {
        // Kineto's GPU copy of the step marker and its cuda_sync markers sit on the stream.
        TraceBuilder t;
        t.stream(7);
        t.host("ProfilerStep#1", 0, 50);
        t.host("nccl:all_reduce", 45, 4);
        t.annotation("ProfilerStep#1", 5, 40);   // holding the kernel
        t.annotation("nccl:all_reduce", 46, 2);  // holding nothing: named like a host range
        t.gpu("some_kernel", 10, 10);
        t.gpu("Stream Sync", 30, 5);
        const StepAnalysis a = analyze(t.json());
        const DeviceStepBreakdown& b = a.breakdown.at(0);
        QCOMPARE(b.at(StepCategory::Compute), us(10));
        QCOMPARE(b.at(StepCategory::Idle), us(40));
        QCOMPARE(b.activities, int64_t(1));
    }

    void stepsFromProfilerStepsAndStepOp() {
        TraceBuilder t;
        t.stream(7);
        for (int i = 0; i < 3; ++i) {
            const double s = 100.0 * i;
            t.host(QString("ProfilerStep#%1").arg(i + 5), s, 90 + 5 * i);
            t.host("forward", s + 1, 50);
            t.gpu("k", s + 10, 40, 7, s + 2);
        }
        const StepAnalysis a = analyze(t.json());
        QCOMPARE(a.steps.size(), size_t(3));
        QCOMPARE(a.steps[0].name, std::string("ProfilerStep#5"));
        QCOMPARE(a.steps[2].duration(), us(100));
        QCOMPARE(a.breakdown[1].at(StepCategory::Compute), us(40));
        // --step-op: from one occurrence to the next, the last to its own end.
        StepOptions byOp;
        byOp.stepOp = "forward";
        const StepAnalysis b = analyze(t.json(), byOp);
        QCOMPARE(b.source, StepSource::StepOp);
        QCOMPARE(b.steps.size(), size_t(3));
        QCOMPARE(b.steps[0].start, us(1));
        QCOMPARE(b.steps[0].end, us(101));
        QCOMPARE(b.steps[2].end, us(251));
        byOp.stepOp = "no such op";
        QVERIFY_THROWS_EXCEPTION(InputError, analyze(t.json(), byOp));
    }

    void wholeTraceWithoutMarkers() {
        TraceBuilder t;
        t.stream(7);
        t.gpu("k", 10, 30, 7, 0);
        t.host("aten::mm", 0, 5);
        const StepAnalysis a = analyze(t.json());
        QCOMPARE(a.source, StepSource::WholeTrace);
        QCOMPARE(a.steps.size(), size_t(1));
        QCOMPARE(a.steps[0].start, us(0));
        QCOMPARE(a.steps[0].end, us(40));
        QCOMPARE(a.breakdown[0].at(StepCategory::Compute), us(30));
        // [0, 10): the kernel was launched at 0, when the device went idle: not late; the
        // host is in aten::mm (an operator, not a runtime call) and the cudaLaunchKernel [0, 1).
        QCOMPARE(a.breakdown[0].at(StepCategory::HostWait), us(1));
        QCOMPARE(a.breakdown[0].at(StepCategory::Idle), us(9));
    }

    // Launch latencies and kernel lengths are held in 4 bytes below 2^32 ns (4.3 s): one
    // longer (a kernel queued 5 s behind its launch, a 4.5 s kernel) still counts in order.
    void figuresPastFourSeconds() {
        TraceBuilder t;
        t.stream(7);
        t.gpu("k1", 10, 2, 7, 5);
        t.gpu("k2", 20, 3, 7, 15);
        t.gpu("k3", 5'000'030, 4'500'000, 7, 25);
        const StepAnalysis a = analyze(t.json());
        QCOMPARE(a.launchLatency.count, uint64_t(3));
        QCOMPARE(a.launchLatency.p50, us(5));
        QCOMPARE(a.launchLatency.p95, us(5'000'005));
        QCOMPARE(a.launchLatency.max, us(5'000'005));
        QCOMPARE(a.launchLatency.mean, (us(5) + us(5) + us(5'000'005)) / 3);
        QCOMPARE(a.medianKernel, us(3));
    }

    // The host's interval lists are kept packed (varint deltas in blocks of 64): every lookup
    // the analysis makes gives what the plain list gives, across block edges, with gaps of 0 ns
    // to 2^40 ns between them and lengths to 2^33 ns.
    void packedIntervalsMatchTheList() {
        std::mt19937_64 random(7);
        for (const size_t count :
             {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(1000)}) {
            std::vector<steps::Interval> list;
            int64_t t = -5000;
            for (size_t i = 0; i < count; ++i) {
                const int64_t gap = random() % 4 == 0 ? int64_t(random() % (int64_t(1) << 40))
                                                      : int64_t(random() % 100);
                const int64_t length = 1 + int64_t(random() % (int64_t(1) << (random() % 34)));
                list.push_back({t + gap, t + gap + length});
                t = t + gap + length;
            }
            steps::mergeIntervals(list);
            const steps::PackedIntervals packed(list);
            QCOMPARE(packed.size(), list.size());
            std::vector<steps::Interval> walked;
            for (auto c = packed.begin(); c.valid(); c.next()) walked.push_back(*c);
            QCOMPARE(walked.size(), list.size());
            for (size_t i = 0; i < list.size(); ++i) {
                QCOMPARE(walked[i].start, list[i].start);
                QCOMPARE(walked[i].end, list[i].end);
            }
            std::vector<int64_t> probes{INT64_MIN / 2, -5001, t, t + 1};
            for (const steps::Interval& v : list)
                for (const int64_t d : {-1, 0, 1}) {
                    probes.push_back(v.start + d);
                    probes.push_back(v.end + d);
                }
            for (const int64_t probe : probes) {
                const size_t expected = steps::firstEndingAfter(list, probe);
                const auto found = packed.firstEndingAfter(probe);
                QCOMPARE(found.valid(), expected < list.size());
                if (found.valid()) QCOMPARE(found->start, list[expected].start);
                QCOMPARE(packed.overlapsAny(probe, probe + 1000),
                         steps::overlapsAny(list, probe, probe + 1000));
            }
        }
    }

    // A host class's intervals come as runs (a track's, by start, merged as they come): the
    // runs merged give what merging the whole list gives (empty intervals left out, touching
    // ones joined, runs overlapping each other, starts repeated).
    void intervalRunsMergeAsTheWholeList() {
        std::mt19937_64 random(5);
        for (const size_t runs : {size_t(0), size_t(1), size_t(2), size_t(7)}) {
            steps::IntervalRuns packed;
            std::vector<steps::Interval> all;
            for (size_t r = 0; r < runs; ++r) {
                int64_t t = int64_t(random() % 1000) - 500;
                const size_t count = random() % 300;
                for (size_t i = 0; i < count; ++i) {
                    t += int64_t(random() % 50);
                    const int64_t length = random() % 5 == 0 ? 0 : int64_t(random() % 80);
                    packed.add(t, t + length);
                    // What the gathering held before: each run merged as it came.
                    if (i > 0 && t <= all.back().end)
                        all.back().end = std::max(all.back().end, t + length);
                    else
                        all.push_back({t, t + length});
                }
                packed.endRun();
            }
            steps::mergeIntervals(all);
            const steps::PackedIntervals merged = packed.merged();
            QCOMPARE(merged.size(), all.size());
            size_t i = 0;
            for (auto c = merged.begin(); c.valid(); c.next(), ++i) {
                QCOMPARE(c->start, all[i].start);
                QCOMPARE(c->end, all[i].end);
            }
        }
        // A track not by start: each slice before the one being merged starts a run of its
        // own, so nothing it covers is lost (the union of all).
        steps::IntervalRuns outOfOrder;
        for (const auto& [from, to] : std::vector<std::pair<int64_t, int64_t>>{
                 {10, 20}, {30, 40}, {5, 8}, {15, 25}, {50, 50}, {45, 47}})
            outOfOrder.add(from, to);
        outOfOrder.endRun();
        const steps::PackedIntervals union_ = outOfOrder.merged();
        std::vector<std::pair<int64_t, int64_t>> got;
        for (auto c = union_.begin(); c.valid(); c.next()) got.emplace_back(c->start, c->end);
        QCOMPARE(got,
                 (std::vector<std::pair<int64_t, int64_t>>{{5, 8}, {10, 25}, {30, 40}, {45, 47}}));
    }

    // A host thread's runtime calls, packed: the call ending at a time is the one
    // std::lower_bound finds in the sorted list (the first of equal ends), for lookups in
    // order, backwards, jumping blocks ahead, before the first and past the last call.
    void packedCallsFindWhatLowerBoundFinds() {
        std::mt19937_64 random(3);
        for (const size_t count : {size_t(0), size_t(1), size_t(64), size_t(65), size_t(2000)}) {
            std::vector<steps::RuntimeCall> calls;
            int64_t end = -(int64_t(1) << 40);
            for (size_t i = 0; i < count; ++i) {
                if (random() % 4 != 0)
                    end += int64_t(random() % (random() % 8 == 0 ? 1 << 30 : 40));
                calls.push_back({end, end - int64_t(random() % 100000)});
            }
            std::sort(calls.begin(), calls.end());
            steps::PackedCalls packed(calls);
            QCOMPARE(packed.size(), calls.size());
            const auto expected = [&](int64_t t) -> std::optional<int64_t> {
                const auto it =
                    std::lower_bound(calls.begin(), calls.end(), steps::RuntimeCall{t, INT64_MIN});
                if (it == calls.end() || it->end != t) return std::nullopt;
                return it->start;
            };
            std::vector<int64_t> probes{INT64_MIN / 2, end + 1};
            for (const steps::RuntimeCall& c : calls)
                for (const int64_t d : {-1, 0, 1}) probes.push_back(c.end + d);
            // In order (the flows' usual order), then shuffled (backwards and far jumps).
            for (const bool shuffled : {false, true}) {
                if (shuffled) std::shuffle(probes.begin(), probes.end(), random);
                for (const int64_t t : probes) QCOMPARE(packed.startOfCallEndingAt(t), expected(t));
            }
        }
    }

    // Device activities are kept packed too: every field reads back exactly (launches unknown,
    // before or long after the start, tracks -1 and large, durations of 0 to 2^40 ns, starts
    // repeated across block edges), and the first activity starting from t is lower_bound's.
    void packedActivitiesMatchTheList() {
        std::mt19937_64 random(11);
        for (const size_t count :
             {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(3000)}) {
            std::vector<steps::Activity> list;
            int64_t t = -int64_t(1) << 50;
            for (size_t i = 0; i < count; ++i) {
                // Runs of equal starts (some longer than a block), and jumps of up to 2^45 ns.
                if (random() % 3 != 0)
                    t += random() % 5 == 0 ? int64_t(random() % (int64_t(1) << 45))
                                           : int64_t(random() % 1000);
                const int64_t length = int64_t(random() % (int64_t(1) << (random() % 41)));
                const int64_t launch = random() % 4 == 0 ? INT64_MIN
                                       : random() % 3 == 0
                                           ? t + int64_t(random() % 5000)
                                           : t - int64_t(random() % (int64_t(1) << 36));
                const auto track = random() % 4 == 0 ? -1 : int32_t(random() % 100000);
                list.push_back(
                    {t, t + length, launch, track, uint8_t(random() % steps::kDeviceClassCount)});
            }
            steps::PackedActivities packed;
            for (const steps::Activity& a : list) packed.push_back(a);
            QCOMPARE(packed.size(), list.size());
            size_t i = 0;
            for (auto c = packed.begin(); c.valid(); c.next(), ++i) {
                QCOMPARE(c.index(), i);
                QCOMPARE(c->start, list[i].start);
                QCOMPARE(c->end, list[i].end);
                QCOMPARE(c->launch, list[i].launch);
                QCOMPARE(c->launchTrack, list[i].launchTrack);
                QCOMPARE(c->cls, list[i].cls);
            }
            QCOMPARE(i, list.size());
            std::vector<int64_t> probes{INT64_MIN / 2, t + 1};
            for (const steps::Activity& a : list)
                for (const int64_t d : {-1, 0, 1}) probes.push_back(a.start + d);
            for (const int64_t probe : probes) {
                const auto expected = std::lower_bound(
                    list.begin(), list.end(), probe,
                    [](const steps::Activity& a, int64_t x) { return a.start < x; });
                const auto found = packed.firstStartingFrom(probe);
                QCOMPARE(found.valid(), expected != list.end());
                if (found.valid()) QCOMPARE(found.index(), size_t(expected - list.begin()));
            }
        }
        // Out of start order is refused, not stored wrong.
        steps::PackedActivities packed;
        packed.push_back({10, 20, INT64_MIN, -1, 0});
        QVERIFY_THROWS_EXCEPTION(std::logic_error, packed.push_back({9, 20, INT64_MIN, -1, 0}));
    }

    void launchBoundTraceRecommendsGraphs() {
        // 200 kernels of 2 µs, each launched 3 µs after the previous one ended.
        TraceBuilder t;
        t.stream(7);
        t.host("ProfilerStep#1", 0, 1000);
        for (int i = 0; i < 200; ++i) t.gpu("elementwise_kernel", 5.0 * i + 3, 2, 7, 5.0 * i + 1);
        const StepAnalysis a = analyze(t.json());
        const DeviceStepBreakdown& b = a.breakdown.at(0);
        QCOMPARE(b.at(StepCategory::Compute), us(400));
        QCOMPARE(b.at(StepCategory::HostWait), us(600));
        const auto* launch = findRecommendation(a, "launch_bound");
        QVERIFY(launch);
        QCOMPARE(launch->sharePct, 60.0);
        QVERIFY(QString::fromStdString(launch->text).contains("CUDA graphs"));
        QVERIFY(findRecommendation(a, "small_kernels"));
        QVERIFY(!findRecommendation(a, "sync_stall"));
        QVERIFY(!findRecommendation(a, "input_bound"));
    }

    void syncStallTrace() {
        // Each of 4 iterations: a 20 µs kernel, the host syncs (in aten::item) until it ends,
        // then launches the next one 9 µs later: 10 µs idle after each of the first three
        // syncs; after the last, 1 µs while aten::item returns, then 9 µs of plain idle.
        TraceBuilder t;
        t.stream(7);
        t.host("ProfilerStep#1", 0, 120);
        for (int i = 0; i < 4; ++i) {
            const double s = 30.0 * i;
            t.gpu("gemm_kernel", s, 20, 7, i == 0 ? -1 : s - 1);
            t.host("aten::item", s + 1, 20);
            t.host("cudaStreamSynchronize", s + 2, 18.5);
        }
        const StepAnalysis a = analyze(t.json());
        QCOMPARE(a.breakdown.at(0).at(StepCategory::HostWait), us(31));
        QCOMPARE(a.breakdown.at(0).at(StepCategory::Idle), us(9));
        const auto* sync = findRecommendation(a, "sync_stall");
        QVERIFY(sync);
        QCOMPARE(sync->evidence.value("sync_calls").toInt(), 4);  // aten::item holds each sync
        QVERIFY(qAbs(sync->sharePct - 100.0 * 31 / 120) < 1e-9);
        QVERIFY(!findRecommendation(a, "launch_bound"));
    }

    void hiddenCommunicationIsNoRecommendation() {
        TraceBuilder t;
        t.stream(7).stream(8);
        t.host("ProfilerStep#1", 0, 100);
        t.gpu("cutlass_gemm", 0, 100);
        t.gpu("ncclKernel_ReduceScatter", 10, 80, 8);
        const StepAnalysis a = analyze(t.json());
        QCOMPARE(a.breakdown.at(0).at(StepCategory::Communication), int64_t(0));
        QCOMPARE(a.breakdown.at(0).communicationHidden, us(80));
        QVERIFY(!findRecommendation(a, "exposed_communication"));
    }

    void starvedLoaderAgainstMoreWorkers() {
        // Four steps: the loader takes 40 µs (starved) or 2 µs (more workers), then 60 µs of
        // kernels launched as the step begins.
        auto run = [](double loaderUs) {
            TraceBuilder t;
            t.stream(7);
            double s = 0;
            for (int i = 0; i < 4; ++i) {
                const double step = loaderUs + 60;
                t.host(QString("ProfilerStep#%1").arg(i), s, step);
                t.host("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", s,
                       loaderUs);
                t.gpu("ampere_sgemm", s + loaderUs, 60, 7, s + loaderUs - 0.5);
                s += step;
            }
            return t.json();
        };
        const StepAnalysis starved = analyze(run(40));
        const StepAnalysis fed = analyze(run(2));
        QCOMPARE(starved.steps.size(), size_t(4));
        QCOMPARE(starved.sharePct(StepCategory::Input), 40.0);
        QVERIFY(qAbs(fed.sharePct(StepCategory::Input) - 100.0 * 2 / 62) < 1e-9);
        QVERIFY(findRecommendation(starved, "input_bound"));
        QVERIFY(!findRecommendation(fed, "input_bound"));
        const QJsonObject c = compare::stepComparisonJson(compare::compareSteps(starved, fed));
        QVERIFY(c.value("recommendations_gone").toArray().contains("input_bound"));
        for (const QJsonValue v : c.value("categories").toArray())
            if (v.toObject().value("category") == "input")
                QVERIFY(v.toObject().value("delta_share_pct").toDouble() < -30);
    }

    void storedAndReadBack() {
        const int64_t id = import(everyCategory().json());
        const StepAnalysis first = loadOrAnalyzeSteps(*ws_, id);
        QVERIFY(analysis::stored(*ws_, id, stepsAnalysis()) != nullptr);
        const StepAnalysis again = loadOrAnalyzeSteps(*ws_, id);
        QCOMPARE(QJsonDocument(toJson(again)).toJson(), QJsonDocument(toJson(first)).toJson());
        // Times beyond 2^53 ns (epoch clocks) survive the JSON form exactly.
        StepAnalysis big = first;
        big.steps[0].start += int64_t(1) << 60;
        big.steps[0].end += int64_t(1) << 60;
        QCOMPARE(stepAnalysisFromJson(toJson(big)).steps[0].end, big.steps[0].end);
    }

    void cliStepsAndSuggest() {
        const QString store = dir_.filePath("cli.sqlite");
        const QString file = dir_.filePath("cli.json");
        std::ofstream(file.toStdString()) << everyCategory().json();
        auto run = [&](const QStringList& args) {
            QProcess p;
            p.start(STALLSCOPE_BINARY, QStringList{"--store", store} + args);
            p.waitForFinished(60000);
            return std::make_pair(p.exitCode(), p.readAllStandardOutput());
        };
        QCOMPARE(run({"import", file}).first, 0);
        const auto [status, out] = run({"steps", "1", "--json"});
        QCOMPARE(status, 0);
        const QJsonObject o = QJsonDocument::fromJson(out).object();
        const QJsonObject step = o.value("steps").toArray().at(0).toObject();
        for (const char* key : {"index", "start", "end", "duration", "device", "breakdown"})
            QVERIFY2(step.contains(key), key);
        QCOMPARE(step.value("duration").toInteger(), us(100));
        QCOMPARE(step.value("breakdown").toObject().value("input").toInteger(), us(10));
        QCOMPARE(o.value("categories").toArray().size(), qsizetype(kStepCategoryCount));
        const QJsonObject rec = o.value("recommendations").toArray().at(0).toObject();
        for (const char* key : {"kind", "text", "share_pct", "evidence"})
            QVERIFY2(rec.contains(key), key);
        const auto [tableStatus, table] = run({"steps", "1"});
        QCOMPARE(tableStatus, 0);
        QVERIFY(table.contains("host_wait"));
        const auto [suggestStatus, suggest] = run({"suggest", "1", "--json"});
        QCOMPARE(suggestStatus, 0);
        const QJsonArray suggestions =
            QJsonDocument::fromJson(suggest).object().value("suggestions").toArray();
        QCOMPARE(suggestions.size(), o.value("recommendations").toArray().size());
        QCOMPARE(run({"steps", "1", "--step-op", "nothing"}).first, 2);
    }

    // The real Kineto samples against tests/tools/steps_reference.py, which reads the JSON
    // itself and works from the events' `cat` and `correlation` where Stallscope works from
    // track names, nesting and flows. The expected values below are what it printed.
    void realKinetoSamplesMatchTheReference_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QList<qint64>>("expected");  // duration, 7 categories, gemm,
                                                      // attention, other, kernels, p50
        QTest::newRow("h100 qwen")
            << "real/tl_h100_qwen.json.gz"
            << QList<qint64>{47151395, 43071901, 0,       2368,     200681, 2512464, 0,
                             1363981,  11981921, 3685616, 27404364, 1621,   1206173};
        QTest::newRow("b200 eager")
            << "real/tl_b200_eager.json.gz"
            << QList<qint64>{87412863, 8652137, 2141501, 802844,  0,   75367158, 0,
                             449223,   1038233, 816029,  6797875, 929, 10388};
        QTest::newRow("hta alexnet")
            << "real/hta_alexnet_trace.json.gz"
            << QList<qint64>{43458933000, 10630000, 0, 55503000, 8000, 43335420000, 0,
                             57372000,    5120000,  0, 5510000,  98,   199000};
        QTest::newRow("kineto before")
            << "kineto/before_fix_trace.json"
            << QList<qint64>{300, 20, 0, 0, 0, 30, 0, 250, 0, 0, 20, 1, 20};
    }
    void realKinetoSamplesMatchTheReference() {
        QFETCH(QString, file);
        QFETCH(QList<qint64>, expected);
        const QString path = QString(STALLSCOPE_SHARED_DIR) + "/samples/" + file;
        if (!QFile::exists(path)) QSKIP("../shared/samples is absent");
        Progress progress;
        const int64_t id =
            importFiles(*ws_, ImportRequest{{path.toStdString()}, {}, {}}, progress).at(0).id;
        const StepAnalysis a = analyzeSteps(TraceStore(*ws_, id));
        QCOMPARE(a.breakdown.size(), size_t(1));
        const DeviceStepBreakdown& b = a.breakdown[0];
        QCOMPARE(a.steps[0].duration(), expected[0]);
        for (size_t c = 0; c < kStepCategoryCount; ++c) {
            QVERIFY2(b.ns[c] == expected[qsizetype(c) + 1], kCategoryNames[c]);
        }
        QCOMPARE(b.gemm, expected[8]);
        QCOMPARE(b.attention, expected[9]);
        QCOMPARE(b.otherCompute, expected[10]);
        QCOMPARE(b.activities, expected[11]);
        QCOMPARE(a.launchLatency.p50, expected[12]);
    }

    // The TPU sample's XLA Ops line draws zero-length ops (copy-start, a fusion) at the start of
    // the copy-done or fusion running then, as their children: those are still activities, not
    // annotations holding them. Over its 400 module runs x devices, an independent reading of
    // the XSpace that keeps every op (/tmp/realhunt2/py/tpu_breakdown.py in stop 26) gives
    // copies 304,247,382,885 ns, compute 9,399,928,048, idle 14,897,698 (within 5 ns: its own
    // ps rounding); dropping such ops as containers left 7.1 s of copy-done waits idle.
    void tpuSampleZeroLengthOpsMakeNoContainers() {
        const QString path =
            QString(STALLSCOPE_SHARED_DIR) + "/samples/xprof/tpu_inference_2.xplane.pb";
        if (!QFile::exists(path)) QSKIP("../shared/samples is absent");
        Progress progress;
        const int64_t id =
            importFiles(*ws_, ImportRequest{{path.toStdString()}, {}, {}}, progress).at(0).id;
        const StepAnalysis a = analyzeSteps(TraceStore(*ws_, id));
        QCOMPARE(a.breakdown.size(), size_t(400));
        int64_t copies = 0, compute = 0, idle = 0;
        for (const DeviceStepBreakdown& b : a.breakdown) {
            copies += b.at(StepCategory::Memcpy);
            compute += b.at(StepCategory::Compute);
            idle += b.at(StepCategory::Idle) + b.at(StepCategory::HostWait);
        }
        QCOMPARE(copies, int64_t(304247382889));
        QCOMPARE(compute, int64_t(9399928052));
        QCOMPARE(idle, int64_t(14897691));
    }

    // Every real trace sample (Kineto, XProf TPU and GPU, Chakra): each step sums to its
    // duration on every device, and the figures that must hold do.
    void everyRealTraceSampleAddsUp_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("devices");
        QTest::newRow("tpu") << "xprof/tpu_inference_2.xplane.pb"
                             << "xla_modules" << 4;
        QTest::newRow("xprof gpu") << "xprof/GPU-multi-worker/34.83.195.179_6003.xplane.pb"
                                   << "xla_steps" << 3;
        QTest::newRow("chakra allreduce") << "chakra/custom_allreduce.0.et"
                                          << "whole_trace" << 8;
        QTest::newRow("chakra resnet") << "real/chakra_resnet50_dp_2023/resnet50_DataParallel.0.et"
                                       << "whole_trace" << 64;
        QTest::newRow("h100") << "real/tl_h100_qwen.json.gz"
                              << "profiler_step" << 1;
        QTest::newRow("b200") << "real/tl_b200_eager.json.gz"
                              << "whole_trace" << 1;
    }
    void everyRealTraceSampleAddsUp() {
        QFETCH(QString, file);
        QFETCH(QString, source);
        QFETCH(int, devices);
        const QString path = QString(STALLSCOPE_SHARED_DIR) + "/samples/" + file;
        if (!QFile::exists(path)) QSKIP("../shared/samples is absent");
        Progress progress;
        const int64_t id =
            importFiles(*ws_, ImportRequest{{path.toStdString()}, {}, {}}, progress).at(0).id;
        const StepAnalysis a = analyzeSteps(TraceStore(*ws_, id));
        QCOMPARE(QString(stepSourceName(a.source)), source);
        QCOMPARE(int(a.devices.size()), devices);
        QVERIFY(!a.steps.empty());
        QCOMPARE(a.breakdown.size(), a.steps.size() * a.devices.size());
        for (const DeviceStepBreakdown& b : a.breakdown) {
            int64_t sum = 0;
            for (int64_t ns : b.ns) sum += ns;
            QCOMPARE(sum, a.steps[size_t(b.step)].duration());
            QCOMPARE(b.gemm + b.attention + b.otherCompute, b.at(StepCategory::Compute));
            QCOMPARE(b.h2d + b.d2h + b.d2d + b.peer + b.otherCopy, b.at(StepCategory::Memcpy));
            QVERIFY(b.communicationHidden <= b.communicationTotal);
            QCOMPARE(b.communicationTotal - b.communicationHidden,
                     b.at(StepCategory::Communication));
        }
        for (const HostStepBreakdown& h : a.host) {
            int64_t sum = 0;
            for (int64_t ns : h.ns) sum += ns;
            QCOMPARE(sum, a.steps[size_t(h.step)].duration());
        }
        // The stored form reads back the same.
        QCOMPARE(QJsonDocument(toJson(stepAnalysisFromJson(toJson(a)))).toJson(),
                 QJsonDocument(toJson(a)).toJson());
    }
};

QTEST_GUILESS_MAIN(TestStepAnalysis)
#include "test_step_analysis.moc"
