// Timeline figures on a large `generate scale` profile stored in a workspace: time from opening
// the profile to the first frame, frame preparation (worker side) and paint time (GUI side) per
// frame at 1920x1080 at five zoom levels (median, p95), and memory while browsing.
//
//   bench_timeline STORE PROFILE [frames-per-level]
//
// Make the profile with e.g.
//   stallscope generate scale --instructions 10000000 --out /tmp/scale.ssrp
//   stallscope --store /tmp/bench.sqlite import --name scale1e7 /tmp/scale.ssrp
#include <sys/resource.h>

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/workspace.h"
#include "tests/benchmarks/bench_usage.h"
#include "views/common/timeline_view.h"
#include "views/replay/replay_document.h"
#include "views/replay/replay_tracks.h"

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

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_timeline STORE PROFILE [frames-per-level]\n");
        return 2;
    }
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const QString store = QString::fromLocal8Bit(argv[1]);
    const int frames = argc > 3 ? std::atoi(argv[3]) : 30;
    const QSize size(1920, 1080);

    ProfileInfo profile;
    {
        // Writable once, so a workspace of an older schema is migrated before timing.
        auto workspace = Workspace::open(store.toStdString(), Workspace::Mode::ReadWrite);
        profile = workspace->resolveProfile(argv[2]);
    }
    const auto open = Clock::now();
    const ReplayDocumentPtr doc = loadReplayDocument(store, profile);
    const double loadMs = msSince(open);
    TimelineView view;
    view.setAsynchronous(false);
    view.resize(size);
    installReplayTracks(view, doc);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    {
        view.prepareNow(size);
        QPainter painter(&image);
        view.paintContent(painter, size);
    }
    const double firstFrameMs = msSince(open);
    std::printf("profile %s: %zu instructions, %zu DMAs, %.0f cycles, %zu lanes\n",
                profile.name.c_str(), doc->trace.instrs.size(), doc->trace.dmas.size(),
                doc->totalCycles(), doc->lanes.size());
    std::printf("open -> analysed document: %.0f ms; open -> first frame: %.0f ms\n", loadMs,
                firstFrameMs);
    std::printf("document (trace, analysis, LOD) ~%zu MB; RSS after first frame %ld MB\n",
                doc->memoryBytes() >> 20, rssMb());

    // Five zoom levels: whole trace down to ~2000 cycles (about one cycle per pixel), each
    // panned across the trace so every frame shows different data.
    const double total = doc->totalCycles();
    const std::vector<double> windows{total, total / 100, total / 10000, total / 1e5, 2000};
    std::printf("%-14s %12s %12s %12s %12s %10s\n", "window", "prep med", "prep p95", "paint med",
                "paint p95", "RSS MB");
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
        std::printf("%-14.0f %10.2fms %10.2fms %10.2fms %10.2fms %10ld\n", length,
                    percentile(prep, 0.5), percentile(prep, 0.95), percentile(paint, 0.5),
                    percentile(paint, 0.95), rssMb());
    }
    std::printf("peak RSS %ld MB\n", peakRssMb());
    return 0;
}
