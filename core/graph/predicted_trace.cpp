// A what-if's predicted schedule as Chrome trace JSON: from one graph, or a batch of steps at a
// time for a trace too large for one (written in time order as the batches finish, so that only
// the batches waiting for an earlier one are held).

#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>

#include "core/graph/whatif.h"
#include "core/json_escape.h"
#include "core/trace/trace_store.h"

namespace stallscope::graph {

namespace {

// Writes events, comma-separated, through a reused buffer; nothing at all until the first
// event or finish().
class EventWriter {
  public:
    explicit EventWriter(std::ostream& out) : out_(out) {}
    void threadName(int pid, uint32_t tid, std::string_view name) {
        begin();
        line_ += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
                 ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
        json::appendString(line_, name);
        line_ += "}}";
        flush();
    }
    void slice(std::string_view name, std::string_view cat, int pid, uint32_t tid, int64_t start,
               int64_t end) {
        begin();
        line_ += "{\"ph\":\"X\",\"name\":";
        json::appendString(line_, name);
        line_ += ",\"cat\":\"";
        line_ += cat;
        char rest[128];
        std::snprintf(rest, sizeof rest, "\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}", pid,
                      tid, double(start) / 1000.0, double(end - start) / 1000.0);
        line_ += rest;
        flush();
    }
    void finish() {
        header();
        out_ << "\n]}\n";
    }

  private:
    void header() {
        if (!started_) out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
        started_ = true;
    }
    void begin() {
        header();
        line_.clear();
        if (!first_) line_ += ",\n";
        first_ = false;
    }
    void flush() { out_.write(line_.data(), std::streamsize(line_.size())); }
    std::ostream& out_;
    std::string line_;
    bool started_ = false, first_ = true;
};

std::string nodeName(const Graph& g, const trace::TraceStore& store, uint32_t node) {
    const Node& n = g.nodes[node];
    return n.name == kNone ? kindName(n.kind) : store.text(n.name);
}

// One batch's share of the predicted trace, held until the batches before it are written.
struct BatchEvents {
    struct Event {
        int64_t start, end;
        uint32_t name;  // the trace's string id (kNone: named by its kind)
        NodeKind kind;
        uint32_t lane;  // the batch graph's
    };
    struct Marker {
        int64_t start, end;
        std::string name;
        uint32_t lane;
    };
    std::vector<Lane> lanes;
    std::vector<Event> events;
    std::vector<Marker> markers;
    // Its last step's predicted end minus its measured end: how much later (or earlier) the
    // batches after it start.
    int64_t drift = 0;
};

BatchEvents batchEvents(const WindowPart& window, const Graph& g, const std::vector<Timed>& t) {
    BatchEvents out;
    out.lanes = g.lanes;
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        // Each node once: from the batch answering for its measured start. A host thread's
        // start (nothing yet, no time) is the trace's, not a batch's.
        const bool threadStart = g.firstInLane(i) && !g.lanes[n.lane].device && n.end == n.start;
        if (g.isDependencyWait(i) || n.start < window.answersFor.from ||
            n.start >= window.answersFor.to || (window.index > 0 && threadStart))
            continue;
        out.events.push_back({t[i].start, t[i].end, n.name, n.kind, n.lane});
    }
    int64_t lastEnd = INT64_MIN;
    for (const StepWindow& s : g.steps) {
        if (!window.holds(s.name)) continue;
        const int64_t end = t[s.last].end + s.tail;
        out.markers.push_back({t[s.first].start - s.lead, end, s.name, s.lane});
        if (s.end > lastEnd) {
            lastEnd = s.end;
            out.drift = end - s.end;
        }
    }
    return out;
}

// Writes batches in the walk's order, each shifted by the drifts of those before it; a thread
// per track (a batch graph's lane numbers are its own).
class BatchedTraceWriter {
  public:
    BatchedTraceWriter(const trace::TraceStore& store, std::ostream& out)
        : store_(store), writer_(out) {}
    void add(size_t index, BatchEvents batch) {
        const std::lock_guard lock(mutex_);
        pending_.emplace(index, std::move(batch));
        for (auto it = pending_.find(next_); it != pending_.end(); it = pending_.find(next_)) {
            write(it->second);
            offset_ += it->second.drift;
            pending_.erase(it);
            ++next_;
        }
    }
    // The batches still waiting (after one without a graph), in order; then the closing.
    void finish() {
        for (auto& [index, batch] : pending_) {
            write(batch);
            offset_ += batch.drift;
        }
        pending_.clear();
        writer_.finish();
    }

  private:
    uint32_t tidOf(const Lane& lane) {
        const auto [it, fresh] = tids_.try_emplace({lane.host, lane.track}, uint32_t(tids_.size()));
        if (fresh) writer_.threadName(lane.host, it->second, lane.name);
        return it->second;
    }
    void write(const BatchEvents& batch) {
        std::vector<uint32_t> tids;
        for (const Lane& lane : batch.lanes) tids.push_back(tidOf(lane));
        for (const BatchEvents::Event& e : batch.events) {
            const std::string& name =
                e.name == kNone ? kinds_[size_t(e.kind)] : store_.text(e.name);
            writer_.slice(name, kindName(e.kind), batch.lanes[e.lane].host, tids[e.lane],
                          e.start + offset_, e.end + offset_);
        }
        for (const BatchEvents::Marker& m : batch.markers)
            writer_.slice(m.name, "user_annotation", batch.lanes[m.lane].host, tids[m.lane],
                          m.start + offset_, m.end + offset_);
    }

    const trace::TraceStore& store_;
    EventWriter writer_;
    std::mutex mutex_;
    std::map<size_t, BatchEvents> pending_;
    size_t next_ = 0;
    int64_t offset_ = 0;
    std::map<std::pair<int, int64_t>, uint32_t> tids_;
    const std::vector<std::string> kinds_ = [] {
        std::vector<std::string> names;
        for (int k = 0; k <= int(NodeKind::Woken); ++k) names.emplace_back(kindName(NodeKind(k)));
        return names;
    }();
};

}  // namespace

void writePredictedTrace(const Graph& g, const trace::TraceStore& store,
                         const std::vector<Timed>& t, std::ostream& out) {
    EventWriter writer(out);
    for (uint32_t l = 0; l < g.lanes.size(); ++l)
        writer.threadName(g.lanes[l].host, l, g.lanes[l].name);
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
        if (g.isDependencyWait(i)) continue;
        const Node& n = g.nodes[i];
        writer.slice(nodeName(g, store, i), kindName(n.kind), g.lanes[n.lane].host, n.lane,
                     t[i].start, t[i].end);
    }
    // The steps' markers (ProfilerStep#N) around their predicted nodes, so that the predicted
    // trace has the same steps as the measured one.
    for (const StepWindow& s : g.steps)
        writer.slice(s.name, "user_annotation", g.lanes[s.lane].host, s.lane,
                     t[s.first].start - s.lead, t[s.last].end + s.tail);
    writer.finish();
}

WhatifResult whatifWithTrace(const trace::TraceStore& store, const Edits& edits,
                             std::ostream& out) {
    // The same graphs as the figures alone (whatif): one when it fits an analysis's budget.
    const auto oneGraph = [&] {
        Graph g;
        std::vector<Timed> predicted;
        WhatifResult r = whatif(store, edits, &g, &predicted);
        if (r.why.empty()) writePredictedTrace(g, store, predicted, out);
        return r;
    };
    const std::string refusal = graphSizeRefusal(store, GraphUse::Analysis);
    if (refusal.empty()) return oneGraph();
    BatchedTraceWriter writer(store, out);
    std::optional<WhatifResult> walked = whatifByWindows(
        store, edits, refusal,
        [&](const WindowPart& window, const Graph& g, const trace::TraceStore&,
            const std::vector<Timed>& predicted) {
            writer.add(window.index, batchEvents(window, g, predicted));
        },
        // A batch without a graph writes nothing; those after it need not wait for it.
        [&](size_t index) { writer.add(index, BatchEvents{}); });
    // Not walkable by windows (nothing written yet): one graph within half the machine.
    if (!walked) return oneGraph();
    if (walked->why.empty()) writer.finish();
    return std::move(*walked);
}

}  // namespace stallscope::graph
