#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/analysis/cache.h"
#include "core/graph/build_internal.h"
#include "core/trace/dialect.h"
#include "core/trace/step_registration.h"

namespace stallscope::graph {

const char* kindName(NodeKind kind) {
    switch (kind) {
        case NodeKind::Host:
            return "host";
        case NodeKind::Input:
            return "input";
        case NodeKind::Launch:
            return "launch";
        case NodeKind::Runtime:
            return "runtime";
        case NodeKind::Sync:
            return "sync";
        case NodeKind::Kernel:
            return "kernel";
        case NodeKind::Copy:
            return "copy";
        case NodeKind::Collective:
            return "collective";
        case NodeKind::Wait:
            return "wait";
        case NodeKind::Woken:
            return "woken";
    }
    return "host";
}

namespace build {

KinetoBuilder::KinetoBuilder(const trace::TraceStore& store, std::optional<TimeWindow> window)
    : store_(store), window_(window), args_(store), hosts_(store) {}

Graph KinetoBuilder::build() {
    classifyTracks();
    // About two nodes per host slice (a call and the gap after it) and one per device slice:
    // reserved, growing by doubling held the old and the new copy at once (the peak of the
    // whole command). Pages reserved but never reached are not committed.
    uint64_t expected = 16;
    for (const trace::TrackRow* track : hostTracks_) expected += 2 * track->slices;
    for (const trace::TrackRow* track : deviceTracks_) expected += track->slices;
    if (window_) {
        // The window's share of the trace's time (its slices spread evenly), with room to spare.
        const double span = double(std::max<int64_t>(1, store_.end() - store_.start()));
        const double share = double(window_->to - window_->from) / span;
        expected = uint64_t(double(expected) * std::min(1.0, 1.25 * share)) + 1024;
    }
    g_.nodes.reserve(size_t(expected));
    for (const trace::TrackRow* track : hostTracks_) tileHostLane(*track);
    const size_t hostLanes = g_.lanes.size();
    std::vector<std::vector<Activity>> activities(deviceTracks_.size());
    for (size_t l = 0; l < deviceTracks_.size(); ++l)
        readDeviceLane(*deviceTracks_[l], activities[l]);
    if (deviceTracks_.empty()) {
        g_.why =
            "no device activity: a host-only trace has no launches, kernels or syncs to follow";
        return std::move(g_);
    }
    // No host thread made runtime calls (XProf GPU profiles without the CUPTI API plane): the
    // streams alone, each in its order with its measured gaps.
    const bool deviceOnly = hostLanes == 0;
    if (deviceOnly)
        g_.note =
            "no runtime calls on the host: each stream keeps its measured gaps (a kernel "
            "made faster does not bring later launches earlier)";
    else
        bindLaunches(activities);
    size_t bound = 0;
    for (const auto& lane : activities)
        for (const Activity& a : lane) bound += a.call >= 0 ? 1 : 0;
    if (!deviceOnly && bound == 0) {
        g_.why =
            "no correlation ids or launch flows: no kernel or copy can be bound to the call "
            "that launched it";
        return std::move(g_);
    }
    addDeviceLanes(activities);
    g_.laneBegin.assign(g_.lanes.size() + 1, uint32_t(g_.nodes.size()));
    for (uint32_t i = uint32_t(g_.nodes.size()); i-- > 0;) g_.laneBegin[g_.nodes[i].lane] = i;
    bindStreamWaits();
    anchorUnbound();
    for (uint32_t l = 0; l < g_.lanes.size(); ++l) {
        g_.hosts = std::max(g_.hosts, g_.lanes[l].host + 1);
        if (g_.lanes[l].device) setLatencies(l);
    }
    addSyncWaits();
    addQueueWaits();
    linkHandoffs();
    matchCollectives();
    findSteps();
    if (g_.steps.empty()) g_.why = "no step to simulate: no lane holds a whole step";
    return std::move(g_);
}

}  // namespace build

namespace {

// What building, simulating and walking a graph costs per slice of the trace, measured at
// 10^6 and 10^7 Kineto slices (232 MB and 2.10 GB peaks, the steps stored).
constexpr double kGraphBytesPerSlice = 215;

// The memory a graph may take: for an analysis 1 GB, or half the machine's when that is less
// (a trace past it is walked by windows of steps, which hold no more and, two windows at a
// time, take about half as long as one graph of 10^7 slices, 2.1 GB); for a whole schedule (a
// preview's lanes, a trace that cannot be walked) half the machine's.
// STALLSCOPE_GRAPH_MEMORY_MB sets both, STALLSCOPE_SCHEDULE_MEMORY_MB the second alone.
double graphMemoryBudget(GraphUse use) {
    if (const char* mb = std::getenv("STALLSCOPE_SCHEDULE_MEMORY_MB");
        mb && use == GraphUse::WholeSchedule)
        return std::atof(mb) * 1e6;
    if (const char* mb = std::getenv("STALLSCOPE_GRAPH_MEMORY_MB")) return std::atof(mb) * 1e6;
    constexpr double kAnalysisBytes = 1e9, kUnknownMachine = 8e9;
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    const double half =
        pages > 0 && pageSize > 0 ? 0.5 * double(pages) * double(pageSize) : kUnknownMachine;
    return use == GraphUse::Analysis ? std::min(kAnalysisBytes, half) : half;
}

}  // namespace

std::string graphSizeRefusal(const trace::TraceStore& store, GraphUse use) {
    uint64_t slices = 0;
    for (const trace::TrackRow& t : store.tracks()) slices += t.slices;
    const double needed = double(slices) * kGraphBytesPerSlice, budget = graphMemoryBudget(use);
    if (needed <= budget) return std::string();
    char text[256];
    std::snprintf(text, sizeof text,
                  "too large: the step graph of %llu slices needs about %.1f GB, more than "
                  "the %.1f GB it may use here (%s; STALLSCOPE_GRAPH_MEMORY_MB sets it)",
                  static_cast<unsigned long long>(slices), needed / 1e9, budget / 1e9,
                  use == GraphUse::Analysis ? "1 GB or half the memory" : "half the memory");
    return text;
}

uint64_t windowSlices(size_t threads) {
    constexpr uint64_t kMostSlices = 2'000'000;
    const double perWindow =
        graphMemoryBudget(GraphUse::Analysis) / double(std::max<size_t>(1, threads));
    return std::max<uint64_t>(10'000,
                              std::min(kMostSlices, uint64_t(perWindow / kGraphBytesPerSlice)));
}

size_t windowThreads() {
    return std::thread::hardware_concurrency() >= 2 ? 2 : 1;
}

Graph buildGraphInWindow(const trace::TraceStore& store, TimeWindow window) {
    return build::KinetoBuilder(store, window).build();
}

Graph buildGraph(const trace::TraceStore& store, GraphUse use) {
    if (std::string why = graphSizeRefusal(store, use); !why.empty()) {
        Graph g;
        g.why = std::move(why);
        return g;
    }
    const trace::EvidenceSet evidence = trace::evidenceOf(store);
    if (!evidence.has(trace::Evidence::Durations)) {
        Graph g;
        g.why =
            "no durations: the trace states what ran but not how long; there is no time to "
            "follow";
        return g;
    }
    if (evidence.has(trace::Evidence::XlaOpLines)) return buildXlaGraph(store);
    if (evidence.has(trace::Evidence::ChromeThreads)) return build::KinetoBuilder(store).build();
    if (evidence.has(trace::Evidence::NodeGraph)) return buildChakraGraph(store);
    Graph g;
    g.why = "the trace has neither Chrome-style threads, XLA op lines nor a Chakra node graph";
    return g;
}

}  // namespace stallscope::graph
