// Trace import throughput: imports each FILE given on the command line into a fresh workspace
// and prints MB/s, events/s and peak memory, then times the first frame query (all tracks at
// 1600 px over the whole range) on the stored profile.
//
//   bench_trace_import [--format F] [--no-python] [--keep WORKSPACE] FILE...
//
// For Chrome JSON files it also times `python3 -c 'import json; json.load(open(F))'` on the
// same file and prints the ratio.
#include <sys/resource.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "tests/benchmarks/bench_usage.h"

using namespace stallscope;
using bench::cpuSeconds;
using bench::peakRssMb;

namespace {

double pythonJsonLoadSeconds(const std::string& file) {
    QElapsedTimer timer;
    timer.start();
    QProcess python;
    python.start(
        "python3",
        {"-c", QString("import json; json.load(open('%1'))").arg(QString::fromStdString(file))});
    if (!python.waitForFinished(-1) || python.exitCode() != 0) return -1;
    return double(timer.nsecsElapsed()) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    std::string format;
    bool python = true;
    std::string keep;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--format" && i + 1 < argc)
            format = argv[++i];
        else if (a == "--keep" && i + 1 < argc)
            keep = argv[++i];
        else if (a == "--no-python")
            python = false;
        else
            files.push_back(a);
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: bench_trace_import [--format F] [--no-python] FILE...\n");
        return 2;
    }
    QTemporaryDir dir;
    for (const std::string& file : files) {
        const std::string store = keep.empty() ? dir.filePath("bench.sqlite").toStdString() : keep;
        std::filesystem::remove(store);
        auto ws = Workspace::open(store);
        Progress progress;
        QElapsedTimer timer;
        const double cpu0 = cpuSeconds();
        timer.start();
        const auto imported = importFiles(*ws, ImportRequest{{file}, {}, format}, progress);
        const double seconds = double(timer.nsecsElapsed()) / 1e9;
        const double cpu = cpuSeconds() - cpu0;
        const double mb = double(std::filesystem::file_size(file)) / 1e6;
        const ProfileInfo profile = *ws->profile(imported.at(0).id);
        ws.reset();

        // First frame: open the store, then every track at 1600 px over the full range.
        QElapsedTimer frame;
        frame.start();
        auto reader = Workspace::open(store, Workspace::Mode::ReadOnly);
        trace::TraceStore traces(*reader, profile.id);
        size_t items = 0;
        const double resolution = double(traces.end() - traces.start()) / 1600.0;
        for (const auto& t : traces.tracks()) {
            items += traces.slices(t.id, traces.start(), traces.end(), resolution).size();
            items += traces.counters(t.id, traces.start(), traces.end(), resolution).size();
        }
        const double frameMs = double(frame.nsecsElapsed()) / 1e6;
        const QJsonObject info = traces.infoJson();
        const double events =
            double(info.value("slices").toInteger() + info.value("instants").toInteger() +
                   info.value("counters").toInteger());
        std::printf(
            "%s: %.1f MB in %.2f s = %.1f MB/s, %.0f events/s (%.0f slices+instants+samples), "
            "peak RSS %ld MB, workspace %.1f MB; first frame %.1f ms (%zu items)\n",
            file.c_str(), mb, seconds, mb / seconds, events / seconds, events, peakRssMb(),
            double(std::filesystem::file_size(store)) / 1e6, frameMs, items);
        std::printf("  import CPU time %.2f s = %.1f MB/s\n", cpu, mb / cpu);
        if (python && profile.metadataJson.find("chrome-json") != std::string::npos) {
            const double py = pythonJsonLoadSeconds(file);
            std::printf("  python3 json.load: %.2f s; Stallscope import is %.1fx faster\n", py,
                        py / seconds);
        }
        std::fflush(stdout);
    }
    return 0;
}
