// A trace too large for one step graph, walked a batch of steps at a time, two batches at once.

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/analysis/cache.h"
#include "core/graph/step_graph.h"
#include "core/trace/dialect.h"
#include "core/trace/step_registration.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"

namespace stallscope::graph {

namespace {

struct PlannedWindow {
    TimeWindow span;              // what its graph reads
    std::set<std::string> names;  // the steps it holds whole
    TimeWindow answersFor;        // WindowPart::answersFor
};

// Batches of consecutive steps of about `slicesEach` slices each (the trace's slices spread
// evenly over its time), in time order. Empty when the trace has no step markers to walk by.
std::vector<PlannedWindow> planWindows(const trace::TraceStore& store, uint64_t slicesEach,
                                       std::shared_ptr<const trace::StepAnalysis> analysed) {
    std::vector<PlannedWindow> plan;
    const trace::EvidenceSet evidence = trace::evidenceOf(store);
    if (!evidence.has(trace::Evidence::Durations) ||
        !evidence.has(trace::Evidence::ChromeThreads) || evidence.has(trace::Evidence::XlaOpLines))
        return plan;
    if (!analysed)
        analysed = analysis::read(store.workspace(), store.profileId(), trace::stepsAnalysis());
    if (!analysed || analysed->steps.size() < 2 || analysed->steps.front().markerTrack < 0)
        return plan;
    std::vector<trace::Step> steps = analysed->steps;
    std::sort(steps.begin(), steps.end(),
              [](const trace::Step& a, const trace::Step& b) { return a.start < b.start; });
    uint64_t slices = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const trace::TrackRow& t : store.tracks()) {
        if (t.slices == 0) continue;
        slices += t.slices;
        first = std::min(first, t.start);
        last = std::max(last, t.end);
    }
    const double perNs = double(slices) / double(std::max<int64_t>(1, last - first));
    const double target = double(slicesEach);
    for (size_t i = 0; i < steps.size();) {
        size_t j = i + 1;
        double held = double(steps[i].duration()) * perNs;
        while (j < steps.size() && held + double(steps[j].duration()) * perNs <= target)
            held += double(steps[j++].duration()) * perNs;
        PlannedWindow window;
        for (size_t k = i; k < j; ++k) window.names.insert(steps[k].name);
        // To the next window's first step: what lies between steps (idle time, work outside
        // them) is in one window (WindowPart::answersFor), not lost between two; at most by the
        // window's own length again, so that a long pause between steps (an evaluation) does
        // not take a window far past its budget.
        window.span = {steps[i].start - steps[i].duration() / 10,
                       steps[j - 1].end + steps[j - 1].duration() / 10};
        if (j < steps.size())
            window.span.to = std::max(
                window.span.to,
                std::min(steps[j].start, window.span.to + (window.span.to - window.span.from)));
        window.answersFor = {i == 0 ? INT64_MIN : steps[i].start,
                             j == steps.size() ? INT64_MAX : steps[j].start};
        plan.push_back(std::move(window));
        i = j;
    }
    return plan;
}

// Whether a second thread may read the profile through a connection of its own: the workspace
// is a file, and the profile committed (an uncommitted import is visible to its connection only).
bool secondReaderCanSee(const trace::TraceStore& store) {
    const Workspace& ws = store.workspace();
    return !ws.path().empty() && ws.path() != ":memory:" && sqlite3_get_autocommit(ws.db()) != 0;
}

}  // namespace

std::string StepWindows::describe() const {
    std::string text = "(" + std::to_string(windows) + (windows == 1 ? " window" : " windows") +
                       " of up to " + std::to_string(windowSlices) + " slices";
    if (unbuilt > 0) text += ", " + std::to_string(unbuilt) + " without a graph: " + unbuiltWhy;
    return text + ")";
}

StepWindows forEachStepWindow(const trace::TraceStore& store, const WindowVisit& visit,
                              const std::function<void(size_t)>& unbuilt,
                              std::shared_ptr<const trace::StepAnalysis> steps) {
    StepWindows walked;
    // Windows as large as the threads that will build them allow.
    const size_t threads = windowThreads() > 1 && secondReaderCanSee(store) ? 2 : 1;
    walked.windowSlices = windowSlices(threads);
    const std::vector<PlannedWindow> plan =
        planWindows(store, walked.windowSlices, std::move(steps));
    if (plan.empty()) return walked;
    walked.walkable = true;
    walked.windows = plan.size();
    std::vector<std::string> unbuiltWhy(plan.size());
    std::atomic<size_t> next = 0;
    std::mutex failing;
    std::exception_ptr failure;
    const auto walk = [&](const trace::TraceStore& reader) {
        try {
            for (size_t i = next++; i < plan.size(); i = next++) {
                const Graph g = buildGraphInWindow(reader, plan[i].span);
                if (g.why.empty()) {
                    visit(WindowPart{i, &plan[i].names, plan[i].answersFor}, g, reader);
                } else {
                    unbuiltWhy[i] = g.why;
                    if (unbuilt) unbuilt(i);
                }
            }
        } catch (...) {
            const std::lock_guard lock(failing);
            if (!failure) failure = std::current_exception();
            next = plan.size();
        }
    };
    std::thread helper;
    if (plan.size() > 1 && threads > 1) {
        const std::string path = store.workspace().path();
        helper = std::thread([&walk, &store, path] {
            std::unique_ptr<Workspace> own;
            std::optional<trace::TraceStore> reader;
            try {
                own = Workspace::open(path, Workspace::Mode::ReadOnly);
                reader.emplace(*own, store.profileId());
            } catch (const std::exception&) {
                return;  // the first thread walks every window
            }
            walk(*reader);
        });
    }
    walk(store);
    if (helper.joinable()) helper.join();
    if (failure) std::rethrow_exception(failure);
    for (const std::string& why : unbuiltWhy) {
        if (why.empty()) continue;
        if (walked.unbuilt++ == 0) walked.unbuiltWhy = why;
    }
    return walked;
}

}  // namespace stallscope::graph
