#pragma once

#include <cstdint>
#include <memory>
#include <vector>

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

// A flow as added, its ends' times replaced by where they attach once their track is written
// (depth -1: not bound). 56 bytes instead of two FlowEnds and the results (96): Chakra adds one
// per dependency.
struct FlowRecord {
    int64_t fromTs, toTs;
    uint64_t fromArgs, toArgs;
    uint32_t fromTrack, toTrack;
    uint32_t name;
    int32_t fromDepth = -1, toDepth = -1;
    FlowBinding fromBinding, toBinding;
};

// The flows of a trace in blocks of 2^16 (no copy and no doubled peak as they grow), with their
// ends grouped by track once all are added, so that binding a track visits its own ends instead
// of every flow.
class FlowTable {
  public:
    void add(const FlowEnd& from, const FlowEnd& to, uint32_t name);
    size_t size() const { return count_; }
    FlowRecord& operator[](size_t i) { return blocks_[i >> kBlockBits][i & kBlockMask]; }
    const FlowRecord& operator[](size_t i) const {
        return blocks_[i >> kBlockBits][i & kBlockMask];
    }
    // Groups the ends by track (a counting sort, flow order kept within a track). Call after the
    // last add, before binding; tracks: how many there are.
    void indexEnds(size_t tracks);
    // Flows with an end that found no slice to attach to.
    uint64_t unbound() const;

  private:
    friend class TrackFlowBinder;
    static constexpr size_t kBlockBits = 16;
    static constexpr size_t kBlockMask = (size_t(1) << kBlockBits) - 1;
    std::vector<std::unique_ptr<FlowRecord[]>> blocks_;
    size_t count_ = 0;
    // Ends by track (flow index << 1 | 1 for a source), from endsBegin_[track].
    std::vector<uint32_t> ends_;
    std::vector<size_t> endsBegin_;
};

// Binds the flow ends on one track while its items go by in the order they are nested (by
// start, longer first):
//  - Enclosing: the deepest slice open at the end's time. A slice ending exactly then does not
//    enclose it, unless it is a zero-length slice at that very time (Kineto's "Stream Wait
//    Event", where its launch's flow ends).
//  - NextSlice: the first slice starting at or after the end's time.
//  - Slice: the first slice, in order, starting at the end's time with the end's args id.
// A source attaches at its slice's end (rounded up to whole ns), a destination at its start; an
// end that finds no slice keeps its time and depth -1.
class TrackFlowBinder {
  public:
    TrackFlowBinder(FlowTable& flows, uint32_t track);
    // Whether the track has ends to bind; when not, the calls below need not be made.
    bool active() const { return !enclosing_.empty() || !next_.empty() || !exact_.empty(); }
    // Before each item (slice or instant), with its exact start.
    void before(PreciseTime start) {
        if (enclosing_.empty()) return;
        bindEnclosingBefore(start.ns, false);
        while (!open_.empty() && open_.back().end <= start) open_.pop_back();
    }
    // Each slice (not instants), at its depth.
    void slice(const SliceItem& item);
    // After the last item.
    void finish() { bindEnclosingBefore(INT64_MAX, true); }

  private:
    struct EndRef {
        int64_t ts;
        uint64_t args;
        uint32_t flow;
        bool source;
    };
    struct Open {
        int64_t start;
        PreciseTime end;
    };
    void bind(const EndRef& e, int64_t start, int64_t end, int32_t depth);
    void bindEnclosingBefore(int64_t limit, bool inclusive);

    FlowTable& flows_;
    std::vector<EndRef> enclosing_, next_, exact_;  // by time
    size_t nextEnclosing_ = 0, nextNext_ = 0, nextExact_ = 0;
    std::vector<bool> exactBound_;
    // Exact ends grouped by args id when the ids are dense: the ends of id exactMin_ + g are
    // exactByArgs_[exactBegin_[g]] to [exactBegin_[g + 1]].
    bool exactGrouped_ = false;
    uint64_t exactMin_ = 0, exactMax_ = 0;
    std::vector<uint32_t> exactBegin_, exactByArgs_;
    std::vector<Open> open_;  // slices open at the current item (kept for enclosing ends only)
};

}  // namespace stallscope::trace
