// Replay pipeline figures on `generate scale` traces: import throughput (JSONL and binary),
// full analysis time, workspace bytes per instruction, one what-if re-simulation, peak memory.
//
//   bench_replay N jsonl|binary DIR [analyze]
//
// Run each configuration in its own process so the peak RSS belongs to it alone.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/replay/codec.h"
#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/suggest.h"
#include "core/replay/whatif.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/benchmarks/bench_usage.h"

using namespace stallscope;
using bench::peakRssMb;
using Clock = std::chrono::steady_clock;

namespace {
double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: bench_replay N jsonl|binary DIR\n");
        return 2;
    }
    const uint64_t n = std::stoull(argv[1]);
    const std::string format = argv[2];
    const std::filesystem::path dir = argv[3];
    std::filesystem::create_directories(dir);
    const std::string trace =
        (dir / ("scale-" + std::to_string(n) + (format == "binary" ? ".ssrp" : ".jsonl"))).string();
    if (!std::filesystem::exists(trace)) {
        replay::GenerateOptions options;
        options.instructions = n;
        const auto generated = replay::generateWorkload("scale", options);
        std::ofstream out(trace, std::ios::binary);
        if (format == "binary")
            replay::writeBinary(generated, out);
        else
            replay::writeJsonl(generated, out);
        std::printf("generated %s (%llu bytes); rerun to measure\n", trace.c_str(),
                    static_cast<unsigned long long>(std::filesystem::file_size(trace)));
        return 0;
    }
    const std::string store = (dir / ("bench-" + format + ".sqlite")).string();
    std::filesystem::remove(store);
    std::filesystem::remove(store + "-wal");
    std::filesystem::remove(store + "-shm");
    auto ws = Workspace::open(store);

    auto t0 = Clock::now();
    Progress progress;
    const auto imported = importFiles(*ws, ImportRequest{{trace}, "bench", ""}, progress);
    const double importSeconds = secondsSince(t0);

    t0 = Clock::now();
    const replay::InstructionStream loaded = replay::loadInstructionStream(*ws, imported[0].id);
    const double loadSeconds = secondsSince(t0);

    t0 = Clock::now();
    const replay::Analysis analysis = replay::analyze(loaded);
    const double analyzeSeconds = secondsSince(t0);
    const long analysisPeakMb = peakRssMb();  // before the what-if's edited copy of the trace

    // One what-if: materialize and fully re-simulate the best suggestion's edit.
    double whatifSeconds = 0;
    if (!analysis.suggestions.empty()) {
        t0 = Clock::now();
        const auto edited = replay::applyPlan(loaded, analysis.suggestions.front().plan);
        const auto resim = replay::simulate(edited.trace);
        whatifSeconds = secondsSince(t0);
        if (resim.totalCycles == 0) std::printf("empty re-simulation\n");
    }
    t0 = Clock::now();
    const auto fullSim = replay::simulate(loaded);
    const double simulateSeconds = secondsSince(t0);

    const double fileMb = double(std::filesystem::file_size(trace)) / 1e6;
    const int64_t stored = replay::storedInstructionStreamBytes(*ws, imported[0].id);
    std::printf(
        "instructions=%llu format=%s file_mb=%.1f import_s=%.2f import_instr_per_s=%.0f "
        "import_mb_per_s=%.1f load_s=%.2f analyze_s=%.2f (suggestions=%zu dmas=%zu) "
        "simulate_s=%.3f whatif_s=%.3f import_plus_analysis_instr_per_s=%.0f "
        "stored_bytes_per_instr=%.2f peak_rss_after_analysis_mb=%ld peak_rss_mb=%ld "
        "total_cycles=%llu\n",
        static_cast<unsigned long long>(n), format.c_str(), fileMb, importSeconds,
        double(n) / importSeconds, fileMb / importSeconds, loadSeconds, analyzeSeconds,
        analysis.suggestions.size(), loaded.dmas.size(), simulateSeconds, whatifSeconds,
        double(n) / (importSeconds + analyzeSeconds), double(stored) / double(n), analysisPeakMb,
        peakRssMb(), static_cast<unsigned long long>(fullSim.totalCycles));
    return 0;
}
