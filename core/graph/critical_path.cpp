#include "core/graph/critical_path.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "core/analysis/cache.h"
#include "core/graph/simulate.h"
#include "core/graph/whatif.h"
#include "core/trace/step_registration.h"
#include "core/trace/trace_store.h"

namespace stallscope::graph {

namespace {

const char* segmentKind(NodeKind kind) {
    switch (kind) {
        case NodeKind::Host:
        case NodeKind::Runtime:
        case NodeKind::Woken:
            return "host";
        case NodeKind::Input:
            return "input";
        case NodeKind::Launch:
            return "launch";
        case NodeKind::Sync:
        case NodeKind::Wait:
            return "sync";
        case NodeKind::Kernel:
            return "kernel";
        case NodeKind::Copy:
            return "copy";
        case NodeKind::Collective:
            return "collective";
    }
    return "host";
}

size_t kindIndex(const std::string& kind) {
    for (size_t k = 0; k < kPathKinds.size(); ++k)
        if (kind == kPathKinds[k]) return k;
    return kPathKinds.size() - 1;
}

// Walks one step back from its end; segments are clipped to the step and never overlap.
class PathWalker {
  public:
    PathWalker(const Graph& g, const trace::TraceStore& store, const std::vector<Timed>& t,
               const StepWindow& step)
        : g_(g),
          store_(store),
          t_(t),
          stepStart_(t[step.first].start - step.lead),
          cursor_(t[step.last].end + step.tail) {
        path_.name = step.name;
        path_.host = step.host;
        path_.duration = cursor_ - stepStart_;
        if (step.tail > 0)
            add("idle", "after the step's last host work", t[step.last].end, cursor_,
                g.lanes[step.lane]);
        walk(step.last);
        if (cursor_ > stepStart_) add("idle", "", stepStart_, cursor_, g.lanes[step.lane]);
        std::reverse(path_.segments.begin(), path_.segments.end());
    }
    StepPath take() { return std::move(path_); }

  private:
    std::string nameOf(uint32_t node) const {
        return g_.nodes[node].name == kNone ? std::string() : store_.text(g_.nodes[node].name);
    }
    const Lane& laneOf(uint32_t node) const { return g_.lanes[g_.nodes[node].lane]; }

    // The segment [from, to) clipped to what is left of the step; the cursor moves back to it.
    void add(const char* kind, std::string name, int64_t from, int64_t to, const Lane& lane) {
        to = std::min(to, cursor_);
        from = std::max(from, stepStart_);
        if (to <= from) return;
        path_.segments.push_back({kind, std::move(name), from, to - from, lane.track, lane.host});
        cursor_ = from;
    }

    void walk(uint32_t node) {
        bool atEnd = true;
        while (cursor_ > stepStart_) {
            const Timed& me = t_[node];
            if (atEnd) {
                if (me.endBy == Bound::Waited && g_.nodes[node].kind == NodeKind::Woken) {
                    add("host", "woken after " + laneOf(me.by).name, t_[me.by].end, me.end,
                        laneOf(node));
                    node = me.by;
                    continue;
                }
                if (me.endBy == Bound::Waited) {
                    add("sync", "returns after " + nameOf(me.by), t_[me.by].end, me.end,
                        laneOf(node));
                    node = me.by;
                    continue;
                }
                if (me.endBy == Bound::Partner) {
                    const std::string rank = g_.hosts > 1
                                                 ? "rank " + std::to_string(laneOf(me.by).host)
                                                 : std::string("another rank");
                    add("collective", nameOf(node) + ": waited for " + rank, t_[me.by].start,
                        me.end, laneOf(node));
                    node = me.by;
                    atEnd = false;
                    continue;
                }
                add(segmentKind(g_.nodes[node].kind), nameOf(node), me.start, me.end, laneOf(node));
                atEnd = false;
                continue;
            }
            if (me.startBy == Bound::Lane) {
                const uint32_t prev = node - 1;
                add(laneOf(node).device ? "idle" : "host", "", t_[prev].end, me.start,
                    laneOf(node));
                node = prev;
                atEnd = true;
            } else if (me.startBy == Bound::Trigger && g_.nodes[node].afterTrigger) {
                // A Chakra node: after the wait for its dependencies, which names the last.
                const uint32_t trigger = g_.nodes[node].trigger;
                add("idle", "", t_[trigger].end, me.start, laneOf(node));
                node = trigger;
                atEnd = true;
            } else if (me.startBy == Bound::Trigger) {
                const uint32_t trigger = g_.nodes[node].trigger;
                // A device activity anchored to another stream's: that one was running.
                if (laneOf(trigger).device)
                    add(segmentKind(g_.nodes[trigger].kind), nameOf(trigger), t_[trigger].start,
                        me.start, laneOf(trigger));
                else
                    add("launch", "launch of " + nameOf(node), t_[trigger].start, me.start,
                        laneOf(node));
                node = trigger;
            } else {
                add("idle", "", stepStart_, me.start, laneOf(node));
                return;
            }
        }
    }

    const Graph& g_;
    const trace::TraceStore& store_;
    const std::vector<Timed>& t_;
    const int64_t stepStart_;
    int64_t cursor_;
    StepPath path_;
};

}  // namespace

CriticalPath criticalPath(const Graph& g, const trace::TraceStore& store,
                          const std::vector<Timed>& t) {
    CriticalPath out;
    out.why = g.why;
    out.note = g.note;
    // In a run, each step's path starts at the host slowest in it.
    std::map<std::string, size_t> slowest;
    std::vector<std::string> order;
    for (size_t i = 0; i < g.steps.size(); ++i) {
        const auto [it, fresh] = slowest.try_emplace(g.steps[i].name, i);
        if (fresh)
            order.push_back(g.steps[i].name);
        else if (stepLength(g.steps[i], t) > stepLength(g.steps[it->second], t))
            it->second = i;
    }
    for (const std::string& name : order) {
        StepPath path = PathWalker(g, store, t, g.steps[slowest[name]]).take();
        for (const PathSegment& s : path.segments) out.byKind[kindIndex(s.kind)] += s.dur;
        out.steps.push_back(std::move(path));
    }
    return out;
}

namespace {

// Runs of segments of one kind on one track as one segment ("<first> and N more"): a step of a
// trace too large for one graph has a segment for every kernel it waited for (33 M at 10^8
// slices, 3.3 GB as segments); merged, a few per step. Returns how many were merged away.
size_t mergeRuns(StepPath& path) {
    std::vector<PathSegment> merged;
    size_t run = 1, away = 0;
    const auto closeRun = [&] {
        // (Unnamed runs, host work under no op, stay unnamed.)
        if (run > 1 && !merged.back().name.empty())
            merged.back().name += " and " + std::to_string(run - 1) + " more";
        run = 1;
    };
    for (PathSegment& s : path.segments) {
        if (!merged.empty() && merged.back().kind == s.kind && merged.back().track == s.track &&
            merged.back().host == s.host) {
            merged.back().dur = s.start + s.dur - merged.back().start;
            ++run;
            ++away;
            continue;
        }
        closeRun();
        merged.push_back(std::move(s));
    }
    closeRun();
    path.segments = std::move(merged);
    return away;
}

// A trace too large for one graph (graphSizeRefusal) is walked a batch of steps at a time
// (forEachStepWindow); each step's path comes from the batch holding it whole, and so do its
// figures for each recommendation's edits re-simulated (the savings: medians over all steps).
// Nothing when the trace cannot be walked so (no step markers, XLA op lines).
std::optional<CriticalPath> criticalPathByWindows(const trace::TraceStore& store,
                                                  const std::string& refusal) {
    CriticalPath out;
    const std::shared_ptr<const trace::StepAnalysis> analysed =
        analysis::read(store.workspace(), store.profileId(), trace::stepsAnalysis());
    const std::vector<std::pair<std::string, Edits>> recommended =
        analysed ? recommendationEdits(*analysed) : std::vector<std::pair<std::string, Edits>>{};
    // Each window's steps, merged, in the walk's order (windows finish out of order).
    struct Part {
        std::vector<StepPath> steps;
        std::string note;
        std::array<int64_t, kPathKinds.size()> byKind{};
        size_t segments = 0, merged = 0;
        std::vector<std::vector<WhatifStep>> resimulated;  // per recommendation
    };
    std::map<size_t, Part> parts;
    std::mutex keeping;
    const StepWindows walked = forEachStepWindow(
        store,
        [&](const WindowPart& window, const Graph& g, const trace::TraceStore& reader) {
            const Simulator sim(g);
            const std::vector<Timed> unchanged = sim.run();
            CriticalPath whole = criticalPath(g, reader, unchanged);
            Part part;
            part.note = std::move(whole.note);
            for (StepPath& path : whole.steps) {
                if (!window.holds(path.name)) continue;
                for (const PathSegment& seg : path.segments)
                    part.byKind[kindIndex(seg.kind)] += seg.dur;
                part.segments += path.segments.size();
                part.merged += mergeRuns(path);
                part.steps.push_back(std::move(path));
            }
            for (const auto& [kind, edits] : recommended) {
                WhatifResult r =
                    compareSchedules(g, unchanged, sim.run(applyEdits(g, reader, edits)), edits);
                std::erase_if(r.steps, [&](const WhatifStep& s) { return !window.holds(s.name); });
                part.resimulated.push_back(std::move(r.steps));
            }
            const std::lock_guard lock(keeping);
            parts.emplace(window.index, std::move(part));
        },
        {}, analysed);
    size_t segments = 0, merged = 0;
    std::vector<WhatifResult> resimulated(recommended.size());
    for (auto& [index, part] : parts) {
        if (out.note.empty()) out.note = part.note;
        segments += part.segments;
        merged += part.merged;
        for (size_t k = 0; k < kPathKinds.size(); ++k) out.byKind[k] += part.byKind[k];
        for (StepPath& path : part.steps) out.steps.push_back(std::move(path));
        for (size_t r = 0; r < recommended.size(); ++r)
            resimulated[r].steps.insert(resimulated[r].steps.end(), part.resimulated[r].begin(),
                                        part.resimulated[r].end());
    }
    if (!walked.walkable) return std::nullopt;
    for (size_t r = 0; r < recommended.size(); ++r)
        out.savings.push_back(
            savingOf(recommended[r].first, recommended[r].second, std::move(resimulated[r])));
    const std::string how = "walked a batch of steps at a time " + walked.describe() +
                            "; runs of one kind on one track are one segment (" +
                            std::to_string(segments) + " segments as " +
                            std::to_string(segments - merged) +
                            "); recommendations re-simulated by the same batches (an edit's "
                            "effect stays within its batch); one graph is " +
                            refusal;
    out.note = out.note.empty() ? how : how + "; " + out.note;
    return out;
}

}  // namespace

CriticalPath criticalPathOf(const trace::TraceStore& store) {
    if (std::string refusal = graphSizeRefusal(store, GraphUse::Analysis); !refusal.empty())
        if (std::optional<CriticalPath> walked = criticalPathByWindows(store, refusal))
            return std::move(*walked);
    // One graph: within an analysis's budget, or a trace that cannot be walked by windows
    // within half the machine's (buildGraph says "too large" past it).
    // The step analysis (for its recommendations' savings) before the graph: derived beside the
    // graph, its own peak added to the graph's.
    const std::shared_ptr<const trace::StepAnalysis> steps =
        analysis::read(store.workspace(), store.profileId(), trace::stepsAnalysis());
    const Graph g = buildGraph(store, GraphUse::WholeSchedule);
    if (!g.why.empty()) {
        CriticalPath none;
        none.why = g.why;
        return none;
    }
    const Simulator sim(g);
    const std::vector<Timed> unchanged = sim.run();
    CriticalPath path = criticalPath(g, store, unchanged);
    if (steps) path.savings = simulateRecommendations(g, sim, store, unchanged, *steps);
    return path;
}

std::string_view CriticalPathAnalysis::reads() const {
    return "the step graph: host threads' ops and runtime calls, device streams' activities "
           "bound to their launches, syncs, collectives across ranks (or XLA ops and their "
           "transfers), and the steps";
}

bool CriticalPathAnalysis::appliesTo(const trace::TraceStore&) const {
    return true;  // a trace without a graph gets an empty path that says why
}

std::string CriticalPathAnalysis::encodeResult(const CriticalPath& result) const {
    return encodeCriticalPath(result);
}

CriticalPath CriticalPathAnalysis::decodeResult(std::string_view payload) const {
    return decodeCriticalPath(payload);
}

const CriticalPathAnalysis& criticalPathAnalysis() {
    static const CriticalPathAnalysis instance;
    return instance;
}

}  // namespace stallscope::graph
