// Noise-injection figures: import and fitting time for N runs (CONTRACT §2 CSV).
//
//   bench_noise [ROWS] DIR     (default 100000 rows: regions x 4 modes x 25 k x 5 repeats)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/noise/absorption.h"
#include "core/workspace.h"
#include "importers/import_service.h"

using namespace stallscope;
using Clock = std::chrono::steady_clock;

namespace {
double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_noise [ROWS] DIR\n");
        return 2;
    }
    const long rows = argc > 2 ? std::stol(argv[1]) : 100000;
    const std::filesystem::path dir = argv[argc - 1];
    std::filesystem::create_directories(dir);
    const std::string csv = (dir / "noise.csv").string();
    const std::string store = (dir / "noise.sqlite").string();
    std::filesystem::remove(store);

    const char* modes[] = {"fp_add64", "int64_add", "l1_ld64", "memory_ld64"};
    const int ks = 25, reps = 5;
    const long regions = std::max(1L, rows / (4 * ks * reps));
    std::mt19937 random(1);
    std::normal_distribution<double> noise(0, 0.01);
    {
        std::ofstream out(csv);
        out << "machine,region,mode,k,rep,time_ns,body_instr,param.q\n";
        for (long r = 0; r < regions; ++r)
            for (int m = 0; m < 4; ++m) {
                const double k1 = double((r * 7 + m * 3) % 40);
                for (int i = 0; i < ks; ++i)
                    for (int rep = 0; rep < reps; ++rep) {
                        const double k = i * 2.0;
                        const double t = 100 * (1 + noise(random)) + (k > k1 ? 3 * (k - k1) : 0);
                        out << "m" << r % 3 << ",region" << r << ',' << modes[m] << ',' << k << ','
                            << rep << ',' << t << ",20," << (r % 4) * 0.25 << '\n';
                    }
            }
    }
    const long written = regions * 4 * ks * reps;
    auto workspace = Workspace::open(store);
    Progress progress;
    auto t = Clock::now();
    const auto imported = importFiles(*workspace, {{csv}, "", ""}, progress);
    const double importSeconds = secondsSince(t);
    t = Clock::now();
    const auto runs = noise::loadRuns(*workspace, imported.at(0).id);
    const double loadSeconds = secondsSince(t);
    t = Clock::now();
    const auto report = noise::analyzeRuns(runs);
    const double fitSeconds = secondsSince(t);
    t = Clock::now();
    const auto json = noise::absorptionJson(report);
    const double jsonSeconds = secondsSince(t);
    std::printf("rows %ld, curves %zu, classified %zu\n", written, report.curves.size(),
                report.classifications.size());
    std::printf("import %.3f s (%.0f rows/s), load %.3f s, fit+classify %.3f s, json %.3f s\n",
                importSeconds, double(written) / importSeconds, loadSeconds, fitSeconds,
                jsonSeconds);
    return 0;
}
