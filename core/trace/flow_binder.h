#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/trace/external_sorter.h"
#include "core/trace/spill_sorter.h"

#include "core/trace/trace_format.h"

namespace stallscope::trace {

// Where a flow arrow attaches: the slice enclosing `ts` on `track`, the first slice starting at
// or after `ts` (Chrome's "next slice" binding of flow ends without bp:"e"), or the slice starting
// at `ts` that carries the args id `args` (importers that know the exact slice, e.g. Chakra
// nodes). As in Perfetto, an arrow leaves its source slice at that slice's end and enters its
// destination slice at its start; an end without a slice stays at `ts`.
enum class FlowBinding : uint8_t { Enclosing, NextSlice, Slice };
struct FlowEnd {
    uint32_t track = 0;
    int64_t ts = 0;
    FlowBinding binding = FlowBinding::Enclosing;
    uint64_t args = 0;  // FlowBinding::Slice: the args id of the slice
};

// One end of a flow as added. Ends wait on disk, grouped by their track and binding, in time
// order: a trace of 10^8 slices has 6.7 * 10^7 of them.
struct FlowEndRecord {
    int64_t ts;      // as added (the track's time offset is applied when read)
    uint64_t args;   // FlowBinding::Slice: the args id of the slice
    uint32_t track;  // the end's track << 2 | its binding: the sorter's groups
    uint32_t flow;
    uint32_t name;  // the flow's name (on the source end)
    bool source;
};
struct FlowEndOrder {
    bool operator()(const FlowEndRecord& a, const FlowEndRecord& b) const {
        if (a.track != b.track) return a.track < b.track;
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.flow != b.flow) return a.flow < b.flow;
        return a.source && !b.source;
    }
};
// Where an end attaches (depth -1: to no slice, at its own time).
struct BoundFlowEnd {
    uint64_t key;  // flow << 1 | 1 for the destination: a flow's source comes first
    int64_t ts;
    uint32_t track;
    uint32_t name;
    int32_t depth;
};
struct BoundFlowEndOrder {
    bool operator()(const BoundFlowEnd& a, const BoundFlowEnd& b) const { return a.key < b.key; }
};
// A flow with both ends where they attach, as stored.
struct BoundFlow {
    uint32_t name;
    uint32_t fromTrack, toTrack;
    int64_t fromTs, toTs;
    int32_t fromDepth, toDepth;
};

// The flows of a trace. Their ends are sorted by track on disk as they are added, bound while
// their own track is written (TrackFlowBinder), and the bound ends sorted back by flow: memory
// stays within the sorters' budgets however many flows there are.
class FlowTable {
  public:
    // budget: ends held in memory by each of the two sorters before a run is spilled.
    explicit FlowTable(size_t budget = size_t(1) << 20) : ends_(budget), budget_(budget) {}
    void add(const FlowEnd& from, const FlowEnd& to, uint32_t name);
    size_t size() const { return count_; }
    // After the last add, before binding.
    void seal() { ends_.seal(); }
    // Ends on tracks never bound (no slices, or tracks not written) keep their time, offset by
    // `offset(track)`, and attach to nothing. Call once every track with slices was bound.
    template <class Offset>
    void leaveUnbound(Offset&& offset);
    // Every flow in the order added, with where its ends attach (after leaveUnbound).
    template <class Visit>
    void forEachFlow(Visit&& visit);
    // Flows with an end that found no slice to attach to (after forEachFlow).
    uint64_t unbound() const { return unbound_; }

  private:
    friend class TrackFlowBinder;
    using EndSorter = SpillSorter<FlowEndRecord, FlowEndOrder>;
    using BoundSorter = ExternalSorter<BoundFlowEnd, BoundFlowEndOrder>;
    // Bound ends arrive in batches from each writer thread (one lock an end was contended),
    // each thread's into a sorter of its own: a thread binds its tracks one after another in
    // time order, so its runs follow one another and merge without a heap operation an end
    // (one sorter for both threads interleaved them: its merge was 0.3 s at 10^7 slices).
    void addBound(const std::vector<BoundFlowEnd>& ends) {
        std::lock_guard lock(boundMutex_);
        BoundSorter& sorter = boundSorterOfThisThread();
        for (const BoundFlowEnd& end : ends) sorter.push(end);
    }
    BoundSorter& boundSorterOfThisThread();
    void markBinding(uint32_t track) {
        std::lock_guard lock(boundMutex_);
        if (track >= trackBound_.size()) trackBound_.resize(size_t(track) + 1, false);
        trackBound_[track] = true;
    }

    EndSorter ends_;
    std::vector<bool> trackHasEnds_, trackBound_;
    size_t budget_;
    std::mutex boundMutex_;  // tracks are bound on the writer's threads
    // Bound ends by the thread that bound them (budget_ shared between the first two).
    std::vector<std::pair<std::thread::id, std::unique_ptr<BoundSorter>>> bound_;
    size_t count_ = 0;
    uint64_t unbound_ = 0;
};

// Binds the flow ends on one track while its items go by in the order they are nested (by
// start, longer first):
//  - Enclosing: the deepest slice open at the end's time. A slice ending exactly then does not
//    enclose it, unless it is a zero-length slice at that very time (Kineto's "Stream Wait
//    Event", where its launch's flow ends).
//  - NextSlice: the first slice starting at or after the end's time.
//  - Slice: the first slice, in order, starting at the end's time with the end's args id.
// A source attaches at its slice's end (rounded up to whole ns), a destination at its start; an
// end that finds no slice keeps its time and depth -1. Enclosing and next-slice ends are read
// from disk as the items go by; exact ends (Chakra's, one per dependency) are held per track.
class TrackFlowBinder {
  public:
    // offset: the track's time offset, added to its ends' times.
    TrackFlowBinder(FlowTable& flows, uint32_t track, int64_t offset = 0);
    // Whether the track has ends to bind; when not, the calls below need not be made.
    bool active() const { return hasEnclosing_ || hasNext_ || !exact_.empty(); }
    // Before each item (slice or instant), with its exact start.
    void before(PreciseTime start) {
        if (!hasEnclosing_) return;
        bindEnclosingBefore(start.ns, false);
        while (!open_.empty() && open_.back().end <= start) open_.pop_back();
    }
    // Each slice (not instants), at its depth.
    void slice(const SliceItem& item);
    // After the last item: what is left attaches to nothing.
    void finish();

  private:
    struct EndRef {
        int64_t ts;
        uint64_t args;
        uint32_t flow;
        uint32_t name;
        bool source;
    };
    struct Open {
        int64_t start;
        PreciseTime end;
    };
    EndRef endRef(const FlowEndRecord& r) const;
    void bind(const EndRef& e, int64_t start, int64_t end, int32_t depth);
    void bindEnclosingBefore(int64_t limit, bool inclusive);

    FlowTable& flows_;
    uint32_t track_;
    int64_t offset_;
    FlowTable::EndSorter::Reader enclosing_, next_;
    bool hasEnclosing_ = false, hasNext_ = false;
    std::vector<EndRef> exact_;  // by time
    size_t nextExact_ = 0;
    std::vector<bool> exactBound_;
    // Exact ends grouped by args id when the ids are dense: the ends of id exactMin_ + g are
    // exactByArgs_[exactBegin_[g]] to [exactBegin_[g + 1]].
    bool exactGrouped_ = false;
    uint64_t exactMin_ = 0, exactMax_ = 0;
    std::vector<uint32_t> exactBegin_, exactByArgs_;
    std::vector<Open> open_;  // slices open at the current item (kept for enclosing ends only)
    std::vector<BoundFlowEnd> bound_;  // bound ends not yet handed to the table
};

template <class Offset>
void FlowTable::leaveUnbound(Offset&& offset) {
    for (uint32_t track = 0; track < trackHasEnds_.size(); ++track) {
        if (!trackHasEnds_[track] || (track < trackBound_.size() && trackBound_[track])) continue;
        const int64_t shift = offset(track);
        std::lock_guard lock(boundMutex_);
        BoundSorter& sorter = boundSorterOfThisThread();
        for (uint32_t binding = 0; binding < 3; ++binding)
            ends_.forEach(track << 2 | binding, [&](const FlowEndRecord& r) {
                const int64_t ts = shift ? shiftedTime(r.ts, shift) : r.ts;
                sorter.push({uint64_t(r.flow) << 1 | (r.source ? 0 : 1), ts, track, r.name, -1});
            });
    }
}

template <class Visit>
void FlowTable::forEachFlow(Visit&& visit) {
    // The threads' sorters merged by their next ends (a few: the smallest found by a scan).
    std::vector<BoundFlowEnd> heads(bound_.size());
    std::vector<size_t> live;
    for (size_t i = 0; i < bound_.size(); ++i) {
        bound_[i].second->seal();
        if (bound_[i].second->next(heads[i])) live.push_back(i);
    }
    auto next = [&](BoundFlowEnd& out) {
        if (live.empty()) return false;
        size_t smallest = 0;
        for (size_t k = 1; k < live.size(); ++k)
            if (heads[live[k]].key < heads[live[smallest]].key) smallest = k;
        const size_t i = live[smallest];
        out = heads[i];
        if (!bound_[i].second->next(heads[i])) live.erase(live.begin() + std::ptrdiff_t(smallest));
        return true;
    };
    unbound_ = 0;
    BoundFlowEnd from, to;
    while (next(from) && next(to)) {
        BoundFlow f{from.name, from.track, to.track, from.ts, to.ts, from.depth, to.depth};
        if (f.fromDepth < 0 || f.toDepth < 0) ++unbound_;
        visit(f);
    }
}

}  // namespace stallscope::trace
