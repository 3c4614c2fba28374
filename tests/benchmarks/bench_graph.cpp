// Step-graph cost on an imported trace profile (issue 30): building the graph, simulating it
// unchanged, walking the critical paths, and re-simulating with an edit (the graph and its
// dependency order reused), each timed apart, with the peak memory of the process.
//
//   bench_graph WORKSPACE PROFILE_ID [KERNEL_GLOB]
#include <QElapsedTimer>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/graph/critical_path.h"
#include "core/graph/edits.h"
#include "core/graph/simulate.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "tests/benchmarks/bench_usage.h"

using namespace stallscope;
using bench::cpuSeconds;
using bench::peakRssMb;

namespace {

// Wall seconds since `timer` started, and restarts it.
double lap(QElapsedTimer& timer) {
    const double s = double(timer.nsecsElapsed()) / 1e9;
    timer.restart();
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_graph WORKSPACE PROFILE_ID [KERNEL_GLOB]\n");
        return 2;
    }
    const std::string glob = argc > 3 ? argv[3] : "*gemm*";
    const auto workspace = Workspace::open(argv[1], Workspace::Mode::ReadOnly);
    const trace::TraceStore store(*workspace, std::atoll(argv[2]));
    const long baseMb = peakRssMb();
    QElapsedTimer timer;
    timer.start();
    const double cpu = cpuSeconds();
    const graph::Graph g = graph::buildGraph(store);
    const double build = lap(timer);
    if (!g.why.empty()) {
        std::printf("no graph: %s\n", g.why.c_str());
        return 1;
    }
    const graph::Simulator sim(g);
    const double order = lap(timer);
    const std::vector<graph::Timed> unchanged = sim.run();
    const double run = lap(timer);
    const graph::CriticalPath path = graph::criticalPath(g, store, unchanged);
    const double walk = lap(timer);
    std::printf(
        "%zu nodes, %zu lanes, %zu steps: build %.3f s, order %.3f s, simulate %.3f s, critical "
        "path %.3f s (%.3f s cpu in all); peak RSS %ld MB (store open: %ld MB)\n",
        g.nodes.size(), g.lanes.size(), g.steps.size(), build, order, run, walk, cpuSeconds() - cpu,
        peakRssMb(), baseMb);
    graph::Edits edits;
    edits.kernelSpeedups.push_back({glob, 2.0});
    edits.noInputWait = true;
    const graph::Lengths lengths = graph::applyEdits(g, store, edits);
    const double apply = lap(timer);
    const std::vector<graph::Timed> predicted = sim.run(lengths);
    const double rerun = lap(timer);
    std::printf(
        "edit (%s 2x, no input wait): apply %.3f s, re-simulate %.3f s; %zu segments on "
        "the paths; last step %lld -> %lld ns\n",
        glob.c_str(), apply, rerun,
        path.steps.empty() ? size_t(0) : path.steps.back().segments.size(),
        static_cast<long long>(graph::stepLength(g.steps.back(), unchanged)),
        static_cast<long long>(graph::stepLength(g.steps.back(), predicted)));
    return 0;
}
