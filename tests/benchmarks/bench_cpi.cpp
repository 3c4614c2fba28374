// CPI figures: import speed of a generated Nsight Compute `--page raw` CSV, and the time to
// draw the stacked-bar chart for many kernels.
//
//   bench_cpi import MEGABYTES DIR     generate DIR/ncu_raw.csv (~MEGABYTES MB) and import it
//   bench_cpi render KERNELS [SOURCES] paint the CPI chart of KERNELS kernels x SOURCES sources
//
// Run each in its own process so the peak RSS belongs to it alone.
#include <sys/resource.h>

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/sqlite.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/benchmarks/bench_usage.h"
#include "views/cpi/cpi_charts.h"

using namespace stallscope;
using bench::peakRssMb;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

const char* const kReasons[] = {
    "selected",    "wait",         "long_scoreboard",  "short_scoreboard", "math_pipe_throttle",
    "lg_throttle", "mio_throttle", "tex_throttle",     "no_instruction",   "imc_miss",
    "barrier",     "membar",       "branch_resolving", "sleeping",         "dispatch_stall",
    "drain",       "misc",         "not_selected"};

// A raw-page export like ncu writes it: 18 warp-state ratios, elapsed cycles and 80 other
// metrics per kernel, values with thousands separators and some n/a.
void writeRawCsv(const std::string& path, size_t targetBytes) {
    std::ofstream out(path, std::ios::binary);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> unit(0, 1);
    out << "==PROF== Connected to process 1 (/usr/bin/bench)\n";
    std::string header =
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
        "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
        "\"gpc__cycles_elapsed.max\"";
    std::string units = "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"cycle\"";
    for (const char* r : kReasons) {
        header +=
            std::string(",\"smsp__average_warps_issue_stalled_") + r + "_per_issue_active.ratio\"";
        units += ",\"\"";
    }
    for (int m = 0; m < 80; ++m) {
        header += ",\"metric_" + std::to_string(m) + "__bytes.sum\"";
        units += ",\"byte\"";
    }
    out << header << ",\n" << units << ",\n";
    size_t written = header.size() + units.size();
    char buffer[64];
    for (long id = 0; written < targetBytes; ++id) {
        std::string row =
            "\"" + std::to_string(id) + "\",\"1\",\"bench\",\"127.0.0.1\",\"kernel_" +
            std::to_string(id % 500) +
            "(float*, int)\",\"1\",\"7\",\"(256, 1, 1)\",\"(80, 1, 1)\",\"0\",\"9.0\"";
        std::snprintf(buffer, sizeof buffer, ",\"%ld,%03ld\"", 10 + id % 90, id % 1000);
        row += buffer;
        for (size_t r = 0; r < std::size(kReasons); ++r) {
            std::snprintf(buffer, sizeof buffer, ",\"%.2f\"", unit(rng) * 4);
            row += buffer;
        }
        for (int m = 0; m < 80; ++m) {
            if (m % 17 == 0) {
                row += ",\"n/a\"";
            } else {
                std::snprintf(buffer, sizeof buffer, ",\"%.2f\"", unit(rng) * 1e4);
                row += buffer;
            }
        }
        row += ",\n";
        out << row;
        written += row.size();
    }
}

int benchImport(double megabytes, const std::string& dir) {
    std::filesystem::create_directories(dir);
    const std::string csv = dir + "/ncu_raw.csv";
    const std::string store = dir + "/bench_cpi.sqlite";
    std::filesystem::remove(store);
    std::filesystem::remove(store + "-wal");
    auto t = Clock::now();
    writeRawCsv(csv, static_cast<size_t>(megabytes * 1e6));
    const double generate = secondsSince(t);
    const double size = static_cast<double>(std::filesystem::file_size(csv)) / 1e6;
    auto ws = Workspace::open(store);
    Progress progress;
    t = Clock::now();
    const auto imported = importFiles(*ws, {{csv}, "", "ncu-csv"}, progress);
    const double seconds = secondsSince(t);
    sql::Statement metrics(ws->db(), "SELECT COALESCE(SUM(metrics), 0) FROM kernel_metric_sets");
    metrics.step();
    sql::Statement stacks(ws->db(), "SELECT COUNT(DISTINCT kernel) FROM cpi_stacks");
    stacks.step();
    std::printf(
        "ncu raw CSV %.1f MB (generated in %.1f s): imported in %.2f s = %.1f MB/s, "
        "%lld kernels with stacks, %lld metric rows, workspace %.1f MB, peak RSS %ld MB\n",
        size, generate, seconds, size / seconds, static_cast<long long>(stacks.int64(0)),
        static_cast<long long>(metrics.int64(0)),
        static_cast<double>(std::filesystem::file_size(store)) / 1e6, peakRssMb());
    return imported.empty() ? 1 : 0;
}

int benchRender(int kernels, int sources) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> unit(0, 1);
    std::vector<cpi::KernelStack> stacks;
    const char* names[] = {"hw", "AMALI", "GCoM", "MDM"};
    for (int k = 0; k < kernels; ++k)
        for (int s = 0; s < sources; ++s) {
            cpi::KernelStack stack{"kernel_" + std::to_string(k), names[s % 4], "", {}};
            for (const char* r : kReasons) stack.cycles[r] = unit(rng) * 1e4;
            stacks.push_back(std::move(stack));
        }
    const cpi::CpiData data = cpi::buildCpiData(std::move(stacks));
    QImage image(1600, 900, QImage::Format_ARGB32_Premultiplied);
    const int frames = 20;
    double best = 1e9, total = 0;
    size_t segmentCount = 0;
    for (int f = 0; f < frames; ++f) {
        std::vector<charts::StackSegment> segments;
        const auto t = Clock::now();
        QPainter painter(&image);
        charts::paintStackChart(painter, QRectF(0, 0, 1600, 900), data, {}, &segments);
        painter.end();
        const double s = secondsSince(t);
        best = std::min(best, s);
        total += s;
        segmentCount = segments.size();
    }
    std::printf(
        "CPI chart %d kernels x %d sources (%zu segments) at 1600x900: best %.1f ms, mean "
        "%.1f ms over %d frames\n",
        kernels, sources, segmentCount, best * 1e3, total / frames * 1e3, frames);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::string(argv[1]) == "import")
        return benchImport(std::atof(argv[2]), argv[3]);
    if (argc >= 3 && std::string(argv[1]) == "render") {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication app(argc, argv);
        return benchRender(std::atoi(argv[2]), argc >= 4 ? std::atoi(argv[3]) : 3);
    }
    std::fprintf(stderr,
                 "usage: bench_cpi import MEGABYTES DIR | bench_cpi render KERNELS [SOURCES]\n");
    return 2;
}
