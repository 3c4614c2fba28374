// Time and memory to open a before/after comparison of two trace profiles (issue 8 figure):
// what the GUI does when Compare is clicked, phase by phase, on the calling thread.
//
//   bench_compare A.json B.json [--keep WORKSPACE]   import both, then open the comparison
//   bench_compare --store WORKSPACE A B              open the comparison of two stored profiles
//
// Phases: open both profiles (TraceSource) and read every slice duration (collectDurations),
// compare (per-op statistics, CDFs), fill the view (tracks, op table, CDF), and prepare and paint
// the first frames of both timelines at 1600 px. Memory: resident set before and after opening,
// and the peak. Run with QT_QPA_PLATFORM=offscreen where there is no display.
#include <sys/resource.h>
#include <unistd.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QTemporaryDir>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/compare/trace_compare.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "views/common/timeline_view.h"
#include "views/trace/trace_compare_view.h"
#include "views/trace/trace_tracks.h"

using namespace stallscope;

namespace {

double peakRssMb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

double currentRssMb() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

double seconds(QElapsedTimer& timer) {
    const double s = double(timer.nsecsElapsed()) / 1e9;
    timer.restart();
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    std::string store, keep;
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--store" && i + 1 < argc)
            store = argv[++i];
        else if (a == "--keep" && i + 1 < argc)
            keep = argv[++i];
        else
            positional.push_back(a);
    }
    if (positional.size() != 2) {
        std::fprintf(stderr,
                     "usage: bench_compare A.json B.json [--keep WORKSPACE]\n"
                     "       bench_compare --store WORKSPACE A B\n");
        return 2;
    }
    QTemporaryDir dir;
    int64_t ida = 0, idb = 0;
    if (store.empty()) {
        store = keep.empty() ? dir.filePath("bench.sqlite").toStdString() : keep;
        std::filesystem::remove(store);
        auto ws = Workspace::open(store);
        for (int side = 0; side < 2; ++side) {
            Progress progress;
            QElapsedTimer timer;
            timer.start();
            const auto imported =
                importFiles(*ws, ImportRequest{{positional[size_t(side)]}, {}, {}}, progress);
            const double s = seconds(timer);
            (side == 0 ? ida : idb) = imported.at(0).id;
            std::printf("import %s: %.2f s (%.1f MB)\n", positional[size_t(side)].c_str(), s,
                        double(std::filesystem::file_size(positional[size_t(side)])) / 1e6);
        }
    } else {
        auto ws = Workspace::openExisting(store);
        ida = ws->resolveProfile(positional[0]).id;
        idb = ws->resolveProfile(positional[1]).id;
    }
    const double rssBefore = currentRssMb();
    QElapsedTimer total, timer;
    total.start();
    timer.start();

    // 1. Open both profiles and read every slice duration (the worker's part).
    TraceComparisonData data;
    data.a = std::make_shared<TraceSource>(store, ida);
    data.b = std::make_shared<TraceSource>(store, idb);
    auto durations = [](const TraceSourcePtr& s) {
        return s->query([](const trace::TraceStore& st) { return trace::collectDurations(st); });
    };
    trace::TraceDurations da = durations(data.a);
    trace::TraceDurations db = durations(data.b);
    const double read = seconds(timer);
    const uint64_t slicesA = da.slices, slicesB = db.slices;
    // 2. Compare.
    data.comparison = trace::compareTraces(std::move(da), std::move(db));
    const double compare = seconds(timer);
    const size_t ops = data.comparison.ops.size();
    const QString summary = data.comparison.summary;
    // 3. Fill the view.
    CompareView view;
    view.setAsynchronous(false);
    view.resize(1600, 1000);
    view.setData(std::move(data));
    const double fill = seconds(timer);
    // 4. First frames of both timelines, painted.
    const QSize size(1600, 420);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    for (TimelineView* t : {view.timelineA(), view.timelineB()}) {
        t->prepareNow(size);
        QPainter painter(&image);
        t->paintContent(painter, size);
    }
    const double paint = seconds(timer);
    const double all = double(total.nsecsElapsed()) / 1e9;
    const double rssAfter = currentRssMb();

    std::printf("slices: A %llu, B %llu; %zu ops\n", static_cast<unsigned long long>(slicesA),
                static_cast<unsigned long long>(slicesB), ops);
    std::printf("%s\n", summary.toUtf8().constData());
    std::printf(
        "open comparison: %.2f s (read durations %.2f, compare %.2f, fill view %.2f, "
        "first frames %.2f)\n",
        all, read, compare, fill, paint);
    std::printf("memory: resident %.0f MB before opening, %.0f MB after (+%.0f MB), peak %.0f MB\n",
                rssBefore, rssAfter, rssAfter - rssBefore, peakRssMb());
    return 0;
}
