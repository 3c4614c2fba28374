// CPI-stack and estimate importers: the real samples in ../shared/samples, hand-written files for
// each format quirk, line-numbered errors and rollback.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <map>

#include "core/cpi/cpi.h"
#include "core/errors.h"
#include "core/sqlite.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "importers/registry.h"

using namespace stallscope;

namespace {

QString write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

QString sample(const QString& relative) {
    return QString(STALLSCOPE_SHARED_DIR) + "/samples/" + relative;
}

// The first file of a sample folder matching a suffix.
QString sampleMatching(const QString& folder, const QString& prefix, const QString& suffix) {
    QDir dir(sample(folder));
    for (const QString& name : dir.entryList(QDir::Files))
        if (name.startsWith(prefix) && name.endsWith(suffix)) return dir.filePath(name);
    return {};
}

// Raw page as `ncu --csv --page raw` writes it: ==PROF== and ==WARNING== lines (with commas and
// quotes), a units row, thousands
// separators, n/a, trailing commas, a metric column one kernel lacks.
const char* const kNcuRaw =
    R"csv(==PROF== Connected to process 4242 (/usr/bin/app)
==WARNING== Could not find section "Foo, Bar" (a message with "quotes", and commas)
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpc__cycles_elapsed.max","dram__bytes_read.sum","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","sm__inst_executed.sum",
"","","","","","","","","","","","cycle","Mbyte","","","","","inst",
"0","4242","app","127.0.0.1","gemm_kernel(float*, float const*)","1","7","(128, 1, 1)","(80, 1, 1)","0","8.0","10,000","2.50","1","3","0.5","0.5","1,234,567",
"1","4242","app","127.0.0.1","relu_kernel","1","7","(256, 1, 1)","(40, 1, 1)","0","8.0","2,000","n/a","1","1","2","","n/a",
)csv";

}  // namespace

class TestCpiImporters : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Workspace> ws_;
    int files_ = 0;

    QString file(const QByteArray& bytes, const QString& ext) {
        return write(dir_.path() + "/f" + QString::number(++files_) + ext, bytes);
    }

    ImportedProfile importOne(const QString& path, const std::string& format = {}) {
        Progress progress;
        const auto imported = importFiles(*ws_, {{path.toStdString()}, "", format}, progress);
        return imported.at(0);
    }

    // Error message of a failing import; the workspace must be unchanged.
    QString importError(const QString& path, const std::string& format = {}) {
        const auto before = ws_->profiles().size();
        Progress progress;
        try {
            importFiles(*ws_, {{path.toStdString()}, "", format}, progress);
        } catch (const InputError& e) {
            if (ws_->profiles().size() != before) return "workspace changed";
            if (count("cpi_stacks", -1) != rowsBefore_) return "stack rows left behind";
            return QString::fromStdString(e.what());
        }
        return "no error";
    }

    int64_t count(const char* table, int64_t profile) {
        sql::Statement st(ws_->db(), std::string("SELECT COUNT(*) FROM ") + table +
                                         (profile < 0 ? "" : " WHERE profile_id = ?"));
        if (profile >= 0) st.bind(1, profile);
        st.step();
        return st.int64(0);
    }

    std::map<std::string, double> stack(int64_t profile, const std::string& kernel) {
        sql::Statement st(ws_->db(),
                          "SELECT category, cycles FROM cpi_stacks WHERE profile_id = ? AND "
                          "kernel = ?");
        st.bind(1, profile).bind(2, kernel);
        std::map<std::string, double> out;
        while (st.step()) out[st.text(0)] += st.real(1);
        return out;
    }

    double total(const std::map<std::string, double>& s) {
        double sum = 0;
        for (const auto& [k, v] : s) sum += v;
        return sum;
    }

    // The stored metric `name` of `kernel` (first of that name), as the loaders return it.
    std::optional<cpi::KernelMetric> storedMetric(int64_t profile, const std::string& kernel,
                                                  const std::string& name) {
        for (const cpi::KernelMetrics& k : cpi::loadKernelMetrics(*ws_, profile)) {
            if (k.kernel != kernel) continue;
            for (const cpi::KernelMetric& m : k.metrics)
                if (m.name == name) return m;
        }
        return std::nullopt;
    }

    std::optional<double> metric(int64_t profile, const std::string& kernel,
                                 const std::string& name, std::string* text = nullptr) {
        const auto m = storedMetric(profile, kernel, name);
        if (!m) return std::nullopt;
        if (text) *text = m->text;
        return m->value;
    }

    int64_t metricCount(int64_t profile) {
        int64_t n = 0;
        for (const cpi::KernelMetrics& k : cpi::loadKernelMetrics(*ws_, profile))
            n += static_cast<int64_t>(k.metrics.size());
        return n;
    }

    QJsonObject metadata(int64_t profile) {
        return QJsonDocument::fromJson(
                   QByteArray::fromStdString(ws_->profile(profile)->metadataJson))
            .object();
    }

    int64_t rowsBefore_ = 0;

  private slots:
    void init() {
        ws_ = Workspace::open(
            (dir_.path() + "/ws" + QString::number(++files_) + ".sqlite").toStdString());
        rowsBefore_ = 0;
    }

    // ---- real samples -----------------------------------------------------------------------

    void ncuDetailsSample() {
        const QString path = sampleMatching("ncu", "kernel_0001", ".details.csv");
        if (path.isEmpty()) QSKIP("../shared/samples/ncu is absent");
        const auto p = importOne(path);
        QCOMPARE(p.kind, std::string("cpi"));
        QCOMPARE(metadata(p.id).value("format").toString(), QString("ncu-csv"));
        const std::string kernel =
            "#0 enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, "
            "__nv_bfloat16, float, 0, 1, 1, 0, 7, 0, cublasGemvParamsEx<int, "
            "cublasGemvTensorStridedBatched<const __nv_bfloat16>, "
            "cublasGemvTensorStridedBatched<const __nv_bfloat16>, "
            "cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13)";
        // "13,485" in the file: the thousands separator is not a field separator.
        QCOMPARE(metric(p.id, kernel, "GPU Speed Of Light Throughput / Elapsed Cycles").value(),
                 13485.0);
        QCOMPARE(metric(p.id, kernel, "GPU Speed Of Light Throughput / SM Active Cycles").value(),
                 9495.42);
        QCOMPARE(metric(p.id, kernel, "dram__bytes_read.sum").value(), 2.33);
        // Two sections both have "Memory Throughput"; both are kept apart.
        QCOMPARE(metric(p.id, kernel, "GPU Speed Of Light Throughput / Memory Throughput").value(),
                 19.66);
        QCOMPARE(metric(p.id, kernel, "Memory Workload Analysis / Memory Throughput").value(),
                 345.14);
        std::string text;
        QVERIFY(!metric(p.id, kernel, "flop_count_hp.sum", &text));
        QCOMPARE(text, std::string("n/a"));
        metric(p.id, kernel, "Block Size", &text);
        QCOMPARE(text, std::string("(32, 4, 1)"));
        metric(p.id, kernel, "rule: SchedulerStats / IssueSlotUtilization", &text);
        QVERIFY(text.starts_with("Every scheduler is capable"));
        QCOMPARE(metric(p.id, kernel, "rule: SchedulerStats / IssueSlotUtilization").value(),
                 80.34);
        // 44 metric rows + 4 rule rows + 10 launch fields (ID to CC without the name).
        QCOMPARE(metricCount(p.id), 44 + 4 + 10);
        // Stored as one set against a dictionary of the 58 (name, unit) pairs.
        QCOMPARE(count("kernel_metric_sets", p.id), 1);
        QCOMPARE(count("kernel_metric_names", p.id), 58);
        // No warp-state metrics in these exports: no stack, and the profile says why.
        QCOMPARE(count("cpi_stacks", p.id), 0);
        QVERIFY(metadata(p.id).value("notice").toString().contains("No warp-state metrics"));
    }

    void ncuMetricsSample() {
        const QString path = sampleMatching("ncu", "kernel_0002", ".metrics.csv");
        if (path.isEmpty()) QSKIP("../shared/samples/ncu is absent");
        const auto p = importOne(path);
        const std::string prefix = "#0 ";
        const auto kernels = cpi::loadKernelMetrics(*ws_, p.id);
        QCOMPARE(kernels.size(), size_t(1));
        const std::string kernel = kernels[0].kernel;
        QVERIFY(kernel.starts_with(prefix));
        QCOMPARE(metric(p.id, kernel, "gpu__time_duration.sum").value(), 18.34);
        QCOMPARE(metric(p.id, kernel, "GPU Speed Of Light Throughput / Duration").value(), 18.34);
        QCOMPARE(metric(p.id, kernel, "dram__bytes_read.sum").value(), 17.57);
    }

    void gpgpusimSample() {
        const QString path = sample("gpgpusim/shm_image2.log");
        if (!QFile::exists(path)) QSKIP("../shared/samples/gpgpusim is absent");
        const auto p = importOne(path);
        QCOMPARE(metadata(p.id).value("format").toString(), QString("gpgpusim-log"));
        const std::string kernel = "#1 _Z10testKernelPfS_S_jjjj";
        QCOMPARE(metric(p.id, kernel, "gpu_sim_cycle").value(), 133032.0);
        QCOMPARE(metric(p.id, kernel, "gpu_sim_insn").value(), 92963248.0);
        QCOMPARE(metric(p.id, kernel, "warp_state.W0_Idle").value(), 32904.0);
        QCOMPARE(metric(p.id, kernel, "warp_state.W0_Scoreboard").value(), 224987.0);
        QCOMPARE(metric(p.id, kernel, "warp_state.Stall").value(), 133151.0);
        QCOMPARE(metric(p.id, kernel, "warp_state.W32").value(), 3310868.0);
        QCOMPARE(metric(p.id, kernel, "gpgpu_n_stall_shd_mem").value(), 11505.0);
        const auto s = stack(p.id, kernel);
        // The stack is the warp-state distribution scaled to gpu_sim_cycle.
        QVERIFY(qAbs(total(s) - 133032.0) < 1e-6);
        const double states = 133151 + 32904 + 224987 + 7 * 26260 + 3310868;  // 3,885,730
        const double scale = 133032.0 / states;
        QVERIFY(qAbs(s.at("W0_Idle") - 32904 * scale) < 1e-6);
        QVERIFY(qAbs(s.at("W25") - 26260 * scale) < 1e-6);
        // Stall splits into the shared-memory breakdown (3390 + 8115 = 11505) and the rest.
        QVERIFY(qAbs(s.at("shd_mem:c_mem.bk_conf") - 3390 * scale) < 1e-6);
        QVERIFY(qAbs(s.at("shd_mem:gl_mem.coal_stall") - 8115 * scale) < 1e-6);
        QVERIFY(qAbs(s.at("Stall") - (133151 - 11505) * scale) < 1e-6);
        QVERIFY(!s.count("W1"));  // zero buckets are left out
    }

    void sniperSample() {
        const QString path = sample("sniper/sim.stats.sqlite3");
        if (!QFile::exists(path)) QSKIP("../shared/samples/sniper is absent");
        const auto p = importOne(path);
        QCOMPARE(metadata(p.id).value("format").toString(), QString("sniper-stats"));
        QCOMPARE(metadata(p.id).value("frequency_ghz").toDouble(), 2.66);
        const auto s = stack(p.id, "core 0");
        // roi-end components (fs) sum to performance_model.elapsed_time = 9,643,662,474,685 fs.
        const double fsToCycles = 2.66e-6;
        QVERIFY(qAbs(total(s) - 9643662474685.0 * fsToCycles) < 1e-3);
        QCOMPARE(metric(p.id, "core 0", "performance_model.elapsed_time").value(), 9643662474685.0);
        QVERIFY(qAbs(s.at("mem-dram") - 6013380770631.0 * fsToCycles) < 1e-3);
        // Base (2,544,061,543,641 fs = 6,767,203.7 cycles) splits as Sniper's cpistack_data.py
        // does: instructions / dispatch width (15,715,837 / 4) stay base, the remainder goes to
        // the critical-path contributors by interval_timer.cpContr_* (scaled by the remainder's
        // share of Base, 0.4194), and detailed-cpiBase-DispatchWidth (1,192) is dispatch_width.
        QVERIFY(qAbs(s.at("base") - 3928263.636063) < 1e-3);
        QVERIFY(qAbs(s.at("depend-int") - 787358.787770) < 1e-3);  // cpContr_generic
        QVERIFY(qAbs(s.at("mem-l1d") - 1884370.425451) < 1e-3);    // load_l1 + store
        QCOMPARE(s.at("dispatch_width"), 1192.0);
        QVERIFY(qAbs(s.at("branch") - 573544192509.0 * fsToCycles) < 1e-3);
        QVERIFY(qAbs(s.at("ifetch") - 512371774368.0 * fsToCycles) < 1e-3);
        QVERIFY(qAbs(s.at("sync-syscall") - 243667357.0 * fsToCycles) < 1e-6);
        QVERIFY(!s.count("imbalance-end"));  // one core: nothing unaccounted
        QCOMPARE(metric(p.id, "core 0", "performance_model.instruction_count").value(), 15715837.0);
        // Cycles as sim.out prints them (sniper_lib: the interval's global time for every core,
        // not the core's own elapsed time, which also counts time outside the ROI on cores that
        // start late or run ahead: a public 2-core run had core 1 at 545,621 against 257,911).
        QCOMPARE(metric(p.id, "core 0", "cycles").value(), 25651976.0);
    }

    // A directory that is one result (a Sniper output directory: sim.stats.sqlite3 beside its
    // sim.cfg and sim.out, the unit Sniper's own tools take) imports as that result, named
    // after the directory; it was refused ("import the files themselves") (issue 34). The rule
    // is any directory holding one profile file: a hand-written noise result shows it.
    void directoryHoldingOneResultIsThatResult() {
        QDir(dir_.path()).mkpath("probe-run-7");
        write(dir_.path() + "/probe-run-7/runs.csv",
              "region,mode,k,time_ns\nloop,fp_add64,0,100\nloop,fp_add64,1,101\n");
        write(dir_.path() + "/probe-run-7/README.txt", "how the probe was run\n");
        const auto noise = importOne(dir_.path() + "/probe-run-7/");
        QCOMPARE(noise.kind, std::string("noise"));
        QCOMPARE(noise.name, std::string("probe-run-7"));

        const QString stats = sample("sniper/sim.stats.sqlite3");
        if (!QFile::exists(stats)) QSKIP("../shared/samples/sniper is absent");
        const QString result = dir_.path() + "/gcc-1core";
        QDir(dir_.path()).mkpath("gcc-1core");
        for (const char* name : {"sim.stats.sqlite3", "sim.cfg", "sim.out"})
            QVERIFY(QFile::copy(sample(QString("sniper/") + name), result + "/" + name));
        const auto p = importOne(result);
        QCOMPARE(p.kind, std::string("cpi"));
        QCOMPARE(p.name, std::string("gcc-1core"));
        QCOMPARE(metadata(p.id).value("frequency_ghz").toDouble(), 2.66);  // its sim.cfg read
        QCOMPARE(metric(p.id, "core 0", "cycles").value(), 25651976.0);    // = its sim.out
    }

    // ---- hand-written quirks ----------------------------------------------------------------

    void ncuRawQuirks() {
        // Saved by Excel: a UTF-8 byte-order mark before the first line.
        const auto p = importOne(file(QByteArray("\xEF\xBB\xBF") + kNcuRaw, ".csv"));
        QCOMPARE(metadata(p.id).value("page").toString(), QString("raw"));
        const std::string gemm = "#0 gemm_kernel(float*, float const*)";
        QCOMPARE(metric(p.id, gemm, "gpc__cycles_elapsed.max").value(), 10000.0);
        QCOMPARE(metric(p.id, gemm, "sm__inst_executed.sum").value(), 1234567.0);
        QCOMPARE(storedMetric(p.id, gemm, "dram__bytes_read.sum")->unit, std::string("Mbyte"));
        // selected 1 + long_scoreboard 3 + wait 0.5 + barrier 0.5 = 5 warps per issue: shares
        // of 10,000 cycles.
        const auto s = stack(p.id, gemm);
        QCOMPARE(s.at("selected"), 2000.0);
        QCOMPARE(s.at("long_scoreboard"), 6000.0);
        QCOMPARE(s.at("wait"), 1000.0);
        QCOMPARE(s.at("barrier"), 1000.0);
        // The second kernel lacks the barrier column (empty) and has n/a elsewhere.
        const auto relu = stack(p.id, "#1 relu_kernel");
        QCOMPARE(relu.size(), size_t(3));
        QCOMPARE(relu.at("wait"), 1000.0);
        std::string text;
        QVERIFY(!metric(p.id, "#1 relu_kernel", "dram__bytes_read.sum", &text));
        QCOMPARE(text, std::string("n/a"));
        QVERIFY(!metadata(p.id).contains("notice"));
    }

    void ncuDetailsWithWarpStates() {
        const QByteArray csv =
            R"("ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"
"3","k","GPU Speed Of Light Throughput","Elapsed Cycles","Kcycle","1.50"
"3","k","Command line profiler metrics","smsp__pcsamp_warps_issue_stalled_long_scoreboard","","300"
"3","k","Command line profiler metrics","smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued","","250"
"3","k","Command line profiler metrics","smsp__pcsamp_warps_issue_stalled_math_pipe_throttle","","100"
"3","k","Command line profiler metrics","smsp__pcsamp_warps_issue_stalled_selected","","100"
)";
        const auto p = importOne(file(csv, ".csv"));
        const auto s = stack(p.id, "#3 k");
        // 1.50 Kcycle = 1500 cycles split 3:1:1 by samples; "_not_issued" is a subset, skipped.
        QCOMPARE(s.size(), size_t(3));
        QCOMPARE(s.at("long_scoreboard"), 900.0);
        QCOMPARE(s.at("math_pipe_throttle"), 300.0);
        QCOMPARE(s.at("selected"), 300.0);
    }

    void ncuQuotedNewline() {
        // Rule descriptions may span lines inside quotes; the next record keeps its line number.
        const QByteArray csv =
            "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
            "Value\",\"Rule Name\",\"Rule Type\",\"Rule Description\"\n"
            "\"0\",\"k\",\"S\",\"\",\"\",\"\",\"R\",\"OPT\",\"first line\nsecond line\"\n"
            "\"0\",\"k\",\"S\",\"Elapsed Cycles\",\"cycle\",\"oops\",\n"
            "\"0\",\"k\",\"S\",\"\",\"\",\"\",\n";
        const QString path = file(csv, ".csv");
        QCOMPARE(importError(path), path + ":5: row has neither a metric nor a rule");
    }

    void gpgpusimTwoKernelsDifferencesCounters() {
        const QByteArray log = R"(GPGPU-Sim uArch: simulation start
kernel_name = first
kernel_launch_uid = 1
gpu_sim_cycle = 1000
gpu_sim_insn = 500
gpu_tot_sim_cycle = 1000
gpgpu_n_stall_shd_mem = 40
gpgpu_stall_shd_mem[s_mem][bk_conf] = 40
Warp Occupancy Distribution:
Stall:100	W0_Idle:200	W0_Scoreboard:300	W1:0	W2:400
GPGPU-Sim uArch: Shader 0 bind to kernel 2 'second'
kernel_name = second
kernel_launch_uid = 2
gpu_sim_cycle = 3000
gpu_sim_insn = 700
gpu_tot_sim_cycle = 4000
gpgpu_n_stall_shd_mem = 100
gpgpu_stall_shd_mem[s_mem][bk_conf] = 100
Stall:400	W0_Idle:200	W0_Scoreboard:900	W1:0	W2:1000
)";
        const auto p = importOne(file(log, ".log"));
        const auto first = stack(p.id, "#1 first");
        QCOMPARE(total(first), 1000.0);
        QCOMPARE(first.at("W2"), 400.0);  // 1000 states over 1000 cycles: scale 1
        QCOMPARE(first.at("shd_mem:s_mem.bk_conf"), 40.0);
        QCOMPARE(first.at("Stall"), 60.0);
        // Second kernel: 300 Stall, 0 Idle, 600 Scoreboard, 600 W2 = 1500 states on 3000 cycles.
        const auto second = stack(p.id, "#2 second");
        QCOMPARE(total(second), 3000.0);
        QVERIFY(!second.count("W0_Idle"));
        QCOMPARE(second.at("W0_Scoreboard"), 1200.0);
        QCOMPARE(second.at("W2"), 1200.0);
        QCOMPARE(second.at("shd_mem:s_mem.bk_conf"), 120.0);  // (100 - 40) * 2
        QCOMPARE(second.at("Stall"), 480.0);                  // (300 - 60) * 2
        QCOMPARE(metric(p.id, "#2 second", "warp_state.W0_Scoreboard").value(), 600.0);
        QCOMPARE(metric(p.id, "#2 second", "instructions").value(), 700.0);
    }

    void accelSimMultiStreamBlocks() {
        // Accel-Sim multi-stream runs print a stats block with an empty kernel_name (and uid)
        // and uids naming several streams' launches: each block is one kernel.
        const QByteArray log = R"(Accel-Sim [build accelsim-commit-test]
kernel_name = _Z5saxpyifPfS_ _Z5saxpyifPfS_ 
kernel_launch_uid = 1 3 
gpu_sim_cycle = 750
gpu_tot_sim_cycle = 750
Stall:30	W0_Idle:10	W0_Scoreboard:20	W1:0	W2:15
GPGPU-Sim uArch: Shader 0 unbind
Destroy streams for kernel 1: size 0
kernel_name = 
kernel_launch_uid = 
gpu_sim_cycle = 8
gpu_tot_sim_cycle = 758
Stall:30	W0_Idle:10	W0_Scoreboard:20	W1:0	W2:23
GPGPU-Sim uArch: Shader 0 unbind
kernel_name=_Z5scaleifPf
kernel_launch_uid = 2
gpu_sim_cycle = 489
gpu_tot_sim_cycle = 1247
)";
        const auto p = importOne(file(log, ".log"));
        QCOMPARE(metadata(p.id).value("kernels").toInt(), 3);
        const auto saxpy = stack(p.id, "#1 3 _Z5saxpyifPfS_ _Z5saxpyifPfS_");
        QCOMPARE(total(saxpy), 750.0);
        QCOMPARE(saxpy.at("W2"), 750.0 * 15 / 75);
        // The unnamed kernel keeps its own 8 cycles (it used to overwrite the saxpy's 750); it is
        // kernel 1's, as the line before it says (it was "#2", the block's ordinal, which
        // another kernel's uid also is).
        const auto unnamed = stack(p.id, "#1 (unnamed)");
        QCOMPARE(total(unnamed), 8.0);
        QCOMPARE(unnamed.at("W2"), 8.0);  // only W2 grew: 8 of 8 states
        QCOMPARE(metric(p.id, "#2 _Z5scaleifPf", "cycles").value(), 489.0);
    }

    // Metric lists in public ncu scripts ask for a reason's per-pipe split beside the reason
    // and for .pct beside .ratio: each stall counts once (3 + 1 warps per issue here).
    void ncuStallVariantsCountOnce() {
        const QByteArray csv =
            "\"ID\",\"Kernel Name\",\"gpc__cycles_elapsed.max\","
            "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
            "\"smsp__average_warps_issue_stalled_long_scoreboard_pipe_l1tex_per_issue_active."
            "ratio\","
            "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\","
            "\"smsp__average_warps_issue_stalled_wait_per_issue_active.pct\"\n"
            "\"0\",\"k\",\"1000\",\"3\",\"2\",\"1\",\"50\"\n";
        const auto p = importOne(file(csv, ".csv"));
        const auto s = stack(p.id, "#0 k");
        QCOMPARE(s.size(), size_t(2));
        QCOMPARE(s.at("long_scoreboard"), 750.0);
        QCOMPARE(s.at("wait"), 250.0);
    }

    // A kernel's stack sums to its gpu_sim_cycle exactly: shares of 659 cycles by warp states
    // 1:1:7 add up to 659.0000000000001 in floating point (a public Accel-Sim log showed
    // 658.9999999999999 for its 659-cycle kernel).
    void gpgpusimStackSumsToTheCyclesExactly() {
        const QByteArray log = R"(Accel-Sim [build accelsim-commit-test]
kernel_name = _Z3addiPfS_
kernel_launch_uid = 4
gpu_sim_cycle = 659
Stall:0	W0_Idle:1	W0_Scoreboard:1	W1:0	W2:7
)";
        const auto p = importOne(file(log, ".log"));
        const auto add = stack(p.id, "#4 _Z3addiPfS_");
        QCOMPARE(add.size(), size_t(3));
        double sum = 0;
        for (const char* state : {"W0_Idle", "W0_Scoreboard", "W2"}) sum += add.at(state);
        QVERIFY2(sum == 659.0, qPrintable(QString::number(sum, 'g', 17)));  // exactly
    }

    // `ncu --csv ./app > out.log` puts the application's own output (here with commas and a
    // quote) before ncu's table, as public logs have it (a Rodinia cfd run: 9 lines of it).
    void ncuTableAfterApplicationOutput() {
        const QString other = file("no table here, just output\n1,2,3\n", ".csv");
        QCOMPARE(importError(other, "ncu-csv"),
                 other +
                     ": no Nsight Compute table: none of its 2 lines is a header with a "
                     "'Kernel Name' column");
        const QByteArray log = QByteArray(
                                   "WG size of kernel:initialize = 192, compute_step = 192\n"
                                   "Starting \"cfd\", 3 iterations...\n") +
                               kNcuRaw;
        const auto p = importOne(file(log, ".log"));  // detected without --format
        QCOMPARE(metadata(p.id).value("kernels").toInt(), 2);
        QCOMPARE(
            metric(p.id, "#0 gemm_kernel(float*, float const*)", "gpc__cycles_elapsed.max").value(),
            10000.0);
    }

    void ncuExportWithoutKernels() {
        const QByteArray log =
            "==PROF== Connected to process 4242 (/usr/bin/python3)\n"
            "==WARNING== No kernels were profiled.\n"
            "==PROF== Disconnected from process 4242\n";
        const QString path = file(log, ".csv");
        QCOMPARE(importError(path),
                 path +
                     ": an Nsight Compute export without kernels: ncu printed only its own "
                     "messages, no table of kernels ('==WARNING== No kernels were profiled.')");
    }

    void cpiCsvContract() {
        const QByteArray csv =
            "kernel,source,category,cycles,group\n"
            "gemm_1,hw,long_scoreboard,\"1,200\",gemm\n"
            "gemm_1,hw,selected,800,gemm\n"
            "gemm_1,AMALI,long_scoreboard,1000,gemm\n"
            "relu,hw,wait,50,ele\n";
        const auto p = importOne(file(csv, ".csv"));
        QCOMPARE(metadata(p.id).value("format").toString(), QString("cpi-csv"));
        QCOMPARE(stack(p.id, "gemm_1").at("long_scoreboard"), 2200.0);  // hw 1200 + AMALI 1000
        QCOMPARE(count("cpi_stacks", p.id), 4);
        sql::Statement st(ws_->db(),
                          "SELECT grp FROM cpi_stacks WHERE profile_id = ? AND kernel = 'relu'");
        st.bind(1, p.id);
        QVERIFY(st.step());
        QCOMPARE(st.text(0), std::string("ele"));
    }

    void estimatesCsvContract() {
        const QByteArray csv =
            "workload,region,hardware,estimator,predicted_us,measured_us,wall_s\n"
            "llama,attn,A100,roofline,80,100,1.5\n"
            "llama,attn,H100,roofline,50,,\n";
        const auto p = importOne(file(csv, ".csv"));
        QCOMPARE(p.kind, std::string("estimates"));
        sql::Statement st(ws_->db(),
                          "SELECT predicted_us, measured_us, wall_s FROM estimates "
                          "WHERE profile_id = ? ORDER BY rowid");
        st.bind(1, p.id);
        QVERIFY(st.step());
        QCOMPARE(st.real(0), 80.0);
        QCOMPARE(st.real(1), 100.0);
        QCOMPARE(st.real(2), 1.5);
        QVERIFY(st.step());
        QVERIFY(st.isNull(1));
        QVERIFY(st.isNull(2));
    }

    void detectionLeavesOtherCsvAlone() {
        const std::string noise = "region,mode,k,time_ns\nloop,fp_add64,0,100\n";
        const Sniff sniff{"noise.csv", noise, Compression::None};
        for (const Importer* imp : {&cpiCsvImporter(), &ncuCsvImporter(), &gpgpusimLogImporter(),
                                    &sniperStatsImporter(), &estimatesCsvImporter()})
            QCOMPARE(imp->detect(sniff), 0);
        const std::string cpi = "kernel,source,category,cycles\n";
        QCOMPARE(detectImporter({"x.csv", cpi, Compression::None})->format(),
                 std::string("cpi-csv"));
        QCOMPARE(detectImporter({"x.csv", kNcuRaw, Compression::None})->format(),
                 std::string("ncu-csv"));
        const std::string est = "workload,region,hardware,estimator,predicted_us,measured_us\n";
        QCOMPARE(detectImporter({"x.csv", est, Compression::None})->format(),
                 std::string("estimates-csv"));
    }

    // ---- bad input: file and line, nothing stored ------------------------------------------

    void badInputs_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("error");
        QTest::newRow("cpi cycles not a number")
            << QByteArray("kernel,source,category,cycles\nk,hw,wait,10\nk,hw,barrier,lots\n")
            << "cpi-csv"
            << ":3: cycles 'lots' is not a number";
        QTest::newRow("cpi negative cycles")
            << QByteArray("kernel,source,category,cycles\nk,hw,wait,-1\n") << "cpi-csv"
            << ":2: cycles must not be negative (-1)";
        QTest::newRow("cpi missing column")
            << QByteArray("kernel,source,cycles\nk,hw,1\n") << "cpi-csv"
            << ":1: header lacks the required column 'category'";
        QTest::newRow("cpi short row")
            << QByteArray("kernel,source,category,cycles\nk,hw,wait,1\n\nk,hw\n") << "cpi-csv"
            << ":4: expected 4 fields (as in the header), found 2";
        QTest::newRow("cpi long row")
            << QByteArray("kernel,source,category,cycles\nk,hw,wait,1\nk<a,b>,hw,wait,1\n")
            << "cpi-csv"
            << ":3: expected 4 fields (as in the header), found 5";
        QTest::newRow("estimates predicted")
            << QByteArray(
                   "workload,region,hardware,estimator,predicted_us,measured_us\n"
                   "w,r,A100,roofline,1,2\nw,r,H100,roofline,n/a,2\n")
            << "estimates-csv"
            << ":3: predicted_us 'n/a' is not a number";
        QTest::newRow("estimates measured")
            << QByteArray(
                   "workload,region,hardware,estimator,predicted_us,measured_us\n"
                   "w,r,A100,roofline,1,fast\n")
            << "estimates-csv"
            << ":2: measured_us 'fast' is not a number";
        QTest::newRow("ncu raw short row")
            << QByteArray(
                   "\"ID\",\"Kernel Name\",\"gpc__cycles_elapsed.max\"\n\"\",\"\",\"cycle\"\n"
                   "\"0\",\"k\",\"5\"\n\"1\",\"k2\"\n")
            << "ncu-csv"
            << ":4: expected 3 fields, found 2";
        QTest::newRow("ncu unclosed quote")
            << QByteArray("\"ID\",\"Kernel Name\",\"x\"\n\"0\",\"k,5\n") << "ncu-csv"
            << ":2: quoted field is not closed before the end of the file";
        QTest::newRow("gpgpusim warp state")
            << QByteArray("GPGPU-Sim\nkernel_name = k\ngpu_sim_cycle = 10\nStall:1\tW0_Idle\n")
            << "gpgpusim-log"
            << ":4: warp-state entry 'W0_Idle' is not NAME:COUNT";
        QTest::newRow("gpgpusim cycles")
            << QByteArray("GPGPU-Sim\nkernel_name = k\ngpu_sim_cycle = many\n") << "gpgpusim-log"
            << ":3: gpu_sim_cycle = 'many' is not a number";
        QTest::newRow("gpgpusim no cycles")
            << QByteArray("GPGPU-Sim\n\nkernel_name = k\ngpu_sim_insn = 5\n") << "gpgpusim-log"
            << ":3: kernel 'k' has no gpu_sim_cycle line";
        QTest::newRow("gpgpusim no kernels")
            << QByteArray("GPGPU-Sim\nnothing here\n") << "gpgpusim-log"
            << ":2: no kernel statistics found";
    }

    void badInputs() {
        QFETCH(QByteArray, content);
        QFETCH(QString, format);
        QFETCH(QString, error);
        const QString path = file(content, ".txt");
        const QString message = importError(path, format.toStdString());
        QVERIFY2(message.startsWith(path + error), qPrintable(message));
    }

    void sniperNotADatabase() {
        // A workspace is SQLite too, but not Sniper's: refused with the file named.
        const QString path = dir_.path() + "/other.sqlite";
        Workspace::open(path.toStdString());
        const QString message = importError(path, "sniper-stats");
        QVERIFY2(message.startsWith(path + ": byte 0: not a readable Sniper stats database"),
                 qPrintable(message));
    }

    void failedImportRollsBack() {
        const QString good = file("kernel,source,category,cycles\nk,hw,wait,10\n", ".csv");
        const QString bad = file("kernel,source,category,cycles\nk,hw,wait,x\n", ".csv");
        Progress progress;
        QVERIFY_THROWS_EXCEPTION(
            InputError,
            importFiles(*ws_, {{good.toStdString(), bad.toStdString()}, "", ""}, progress));
        QCOMPARE(ws_->profiles().size(), size_t(0));
        QCOMPARE(count("cpi_stacks", -1), 0);
    }

    void cancellationRollsBack() {
        QByteArray csv = "kernel,source,category,cycles\n";
        for (int i = 0; i < 40000; ++i) csv += "k" + QByteArray::number(i) + ",hw,wait,1\n";
        const QString path = file(csv, ".csv");
        Progress progress;
        progress.cancelAtReport(1);
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 importFiles(*ws_, {{path.toStdString()}, "", ""}, progress));
        QCOMPARE(count("cpi_stacks", -1), 0);
    }
};

QTEST_GUILESS_MAIN(TestCpiImporters)
#include "test_cpi_importers.moc"
