// Trace timeline figures on a large trace profile: time from opening the profile to the first
// frame, frame preparation (worker side) and paint time (GUI side) per frame at 1920x1080 at five
// zoom levels (median, p95), and memory.
//
//   bench_trace_timeline [--slices N] [--frames F] [--store STORE --profile P]
//
// Without --store it writes a profile of N slices (default 10,000,000) into a temporary
// workspace first: 16 threads of steps holding ops nested three deep (1 us .. 2 ms), a counter
// and a flow every 1000 slices. With --store it measures an imported profile (e.g. the 1 GB
// gen_chrome_synth.py trace).
#include <sys/resource.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QTemporaryDir>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/sqlite.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "core/workspace.h"
#include "tests/benchmarks/bench_usage.h"
#include "views/common/timeline_view.h"
#include "views/trace/trace_tracks.h"

using namespace stallscope;
using bench::peakRssMb;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

long rssMb() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) / 1024;
    return -1;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * double(v.size() - 1) + 0.5))];
}

// Writes the synthetic profile; returns its id.
int64_t writeProfile(Workspace& ws, uint64_t slices) {
    sql::Transaction tx(ws.db());
    ProfileInfo info;
    info.name = ws.uniqueName("bench");
    info.kind = "trace";
    const int64_t id = ws.insertProfile(info);
    trace::TraceWriter writer(ws, id);
    trace::TrackSpec process;
    process.kind = trace::TrackKind::Process;
    process.name = "bench";
    const uint32_t p = writer.addTrack(process);
    constexpr int kThreads = 16;
    std::vector<uint32_t> threads;
    for (int t = 0; t < kThreads; ++t) {
        trace::TrackSpec spec;
        spec.parent = p;
        spec.name = "worker " + std::to_string(t);
        spec.tid = std::to_string(t);
        spec.sortIndex = t;
        threads.push_back(writer.addTrack(spec));
    }
    trace::TrackSpec counter;
    counter.parent = p;
    counter.kind = trace::TrackKind::Counter;
    counter.name = "queue depth";
    const uint32_t c = writer.addTrack(counter);
    std::vector<uint32_t> names;
    for (int n = 0; n < 200; ++n) names.push_back(writer.intern("op " + std::to_string(n)));
    std::mt19937_64 rng(7);
    const uint64_t perThread = slices / kThreads;
    for (int t = 0; t < kThreads; ++t) {
        int64_t now = 1'000'000 + t * 1000;
        uint64_t written = 0;
        while (written < perThread) {
            // A step of 2 ms with 20 ops of ~90 us, each holding 4 of ~20 us, each holding 2 of
            // ~1..8 us: 1 + 20 * (1 + 4 * (1 + 2)) = 261 slices.
            const int64_t step = now;
            writer.addSlice(threads[t], step, 2'000'000, names[0]);
            ++written;
            for (int o = 0; o < 20 && written < perThread; ++o) {
                const int64_t op = step + o * 100'000;
                writer.addSlice(threads[t], op, 90'000, names[1 + rng() % 50]);
                ++written;
                for (int k = 0; k < 4 && written < perThread; ++k) {
                    const int64_t kernel = op + 1000 + k * 22'000;
                    writer.addSlice(threads[t], kernel, 20'000, names[51 + rng() % 50]);
                    ++written;
                    for (int l = 0; l < 2 && written < perThread; ++l) {
                        writer.addSlice(threads[t], kernel + 500 + l * 9000,
                                        1000 + int64_t(rng() % 7000), names[101 + rng() % 99]);
                        ++written;
                    }
                }
            }
            if (t == 0) writer.addCounter(c, step, double(rng() % 100));
            if (written % 1000 < 261 && t + 1 < kThreads)
                writer.addFlow({threads[t], step + 50'000}, {threads[t + 1], step + 150'000},
                               names[0]);
            now += 2'100'000;
        }
    }
    writer.finish([](double) {});
    tx.commit();
    return id;
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    uint64_t slices = 10'000'000;
    int frames = 20;
    std::string store, profileArg;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--slices")
            slices = std::strtoull(argv[i + 1], nullptr, 10);
        else if (a == "--frames")
            frames = std::max(1, std::atoi(argv[i + 1]));
        else if (a == "--store")
            store = argv[i + 1];
        else if (a == "--profile")
            profileArg = argv[i + 1];
        else {
            std::fprintf(stderr,
                         "usage: bench_trace_timeline [--slices N] [--frames F] "
                         "[--store STORE --profile P]\n");
            return 2;
        }
    }
    QTemporaryDir tmp;
    int64_t profileId = 0;
    if (store.empty() || !std::filesystem::exists(store)) {
        // No store, or a new one: write the synthetic profile (kept when --store names it).
        if (store.empty()) store = tmp.filePath("bench.sqlite").toStdString();
        auto ws = Workspace::open(store);
        const auto t0 = Clock::now();
        profileId = writeProfile(*ws, slices);
        std::printf("wrote %llu slices in %.1f s (workspace %.0f MB)\n",
                    static_cast<unsigned long long>(slices), msSince(t0) / 1000,
                    double(std::filesystem::file_size(store)) / 1e6);
    } else {
        auto ws = Workspace::open(store, Workspace::Mode::ReadWrite);  // migrates an old schema
        profileId = ws->resolveProfile(profileArg.empty() ? "bench" : profileArg).id;
    }
    const QSize size(1920, 1080);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);

    // Open -> first frame: what the trace tab does (open the source, lay out every track with
    // its header, prepare the frames for the whole range, paint).
    const auto open = Clock::now();
    auto source = std::make_shared<TraceSource>(store, profileId);
    const double openMs = msSince(open);
    TimelineView view;
    view.setAsynchronous(false);
    view.resize(size);
    TraceTimelineBinding binding(view, source);
    binding.show(traceTracksInOrder(source->store()));
    view.fitAll();
    {
        view.prepareNow(size);
        QPainter painter(&image);
        view.paintContent(painter, size);
    }
    const double firstFrameMs = msSince(open);
    const long firstFrameRss = rssMb();
    const auto opsStart = Clock::now();
    const size_t ops = source->query([](const trace::TraceStore& s) { return s.opStats(); }).size();
    const double opsMs = msSince(opsStart);
    const QJsonObject info = source->store().infoJson(0);
    std::printf("profile: %lld slices, %lld tracks, %lld flows, %.3f s long\n",
                static_cast<long long>(info.value("slices").toInteger()),
                static_cast<long long>(info.value("tracks").toInteger()),
                static_cast<long long>(info.value("flows").toInteger()),
                double(source->store().end() - source->store().start()) / 1e9);
    std::printf(
        "open (tracks, strings; flows read beside): %.0f ms; open -> first frame: %.0f ms "
        "(RSS %ld MB); op table (%zu ops, on a worker in the GUI): %.0f ms; RSS %ld MB\n",
        openMs, firstFrameMs, firstFrameRss, ops, opsMs, rssMb());

    // Five zoom levels, from the whole profile to ~2 us (a few ns per pixel), each panned
    // across the profile so every frame shows different data.
    const double total = double(source->store().end() - source->store().start());
    const std::vector<double> windows{total, total / 100, total / 10000, total / 1e6, 2000};
    std::printf("%-16s %12s %12s %12s %12s %10s\n", "window (ns)", "prep med", "prep p95",
                "paint med", "paint p95", "RSS MB");
    for (double length : windows) {
        std::vector<double> prep, paint;
        for (int f = 0; f < frames; ++f) {
            const double start = (total - length) * (f + 0.5) / frames;
            view.setWindow({start, start + length});
            auto t0 = Clock::now();
            view.prepareNow(size);  // what the worker does
            prep.push_back(msSince(t0));
            t0 = Clock::now();
            QPainter painter(&image);
            view.paintContent(painter, size);  // what the GUI thread does
            painter.end();
            paint.push_back(msSince(t0));
        }
        std::printf("%-16.0f %10.2fms %10.2fms %10.2fms %10.2fms %10ld\n", length,
                    percentile(prep, 0.5), percentile(prep, 0.95), percentile(paint, 0.5),
                    percentile(paint, 0.95), rssMb());
    }
    std::printf("peak RSS %ld MB\n", peakRssMb());
    return 0;
}
