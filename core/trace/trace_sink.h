#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace/args_store.h"
#include "core/trace/flow_binder.h"

namespace stallscope::trace {

enum class TrackKind { Process, Thread, Async, Counter, Global };
const char* trackKindName(TrackKind kind);
TrackKind trackKindFromName(std::string_view name);

struct TrackSpec {
    int64_t parent = -1;  // id of the enclosing track (a process), -1 at the top
    TrackKind kind = TrackKind::Thread;
    std::string name;
    int64_t sortIndex = 0;
    std::string pid, tid;  // the source's own identifiers, for display
};

// What trace importers write to: the TraceWriter (straight into the workspace), or a
// HostRecording (one host of a multi-host run, parsed on a worker thread and replayed into the
// writer later). Ids (strings, tracks, args) are the sink's own.
class TraceSink {
  public:
    virtual ~TraceSink() = default;

    virtual uint32_t intern(std::string_view text) = 0;
    virtual std::string_view text(uint32_t id) const = 0;
    virtual uint32_t addTrack(TrackSpec spec) = 0;
    virtual TrackSpec& track(uint32_t id) = 0;
    virtual size_t trackCount() const = 0;

    // Stores an argument object (JSON text); returns its 1-based id for addSlice/addInstant.
    // Several slices may share one id.
    virtual uint64_t addArgs(std::string_view json) = 0;
    // Stores `own` (a JSON object) as an overlay on the stored object `base`: it reads back as
    // own's members followed by base's members own does not have. Per-event stats over shared
    // per-op stats (XProf event metadata) cost only the event's own bytes.
    virtual uint64_t addArgsOver(uint64_t base, std::string_view own) = 0;
    // A layout for addArgsPacked: the member keys (each `"name":` as JSON text) of its objects.
    uint32_t addArgsLayout(std::vector<std::string> keys) {
        argsLayouts_.push_back(std::move(keys));
        return uint32_t(argsLayouts_.size() - 1);
    }
    // An overlay on `base` (0: none) whose own members are `values` under the keys of `layout`:
    // reads back as addArgsOver with them as JSON text. By default stored as that text; the
    // TraceWriter stores the values and makes the text when it is read.
    virtual uint64_t addArgsPacked(uint64_t base, uint32_t layout, const ArgValue* values,
                                   size_t count) {
        return addArgsOver(base, packedArgsText(argsLayouts_.at(layout), values, count));
    }
    // startPs/durPs: sub-ns remainders (0..999 ps) of the start and the duration. A slice that
    // never ended (ended = false) is drawn over `dur` (to the trace's end) but its unknown
    // duration stays out of the statistics. Slices with the same start and duration on a track
    // nest in file order (the first is the parent, as Chrome and Perfetto read them): `order`
    // is the slice's place in the file, kOrderOfAdding when it is added in file order; a slice
    // added later than it began (a B/E pair, at its E) passes the order reserved when it began.
    static constexpr uint64_t kOrderOfAdding = UINT64_MAX;
    virtual void addSlice(uint32_t track, int64_t start, int64_t dur, uint32_t name,
                          uint64_t args = 0, uint16_t startPs = 0, uint16_t durPs = 0,
                          bool ended = true, uint64_t order = kOrderOfAdding) = 0;
    // The next place in the file, for a slice that will be added later.
    virtual uint64_t reserveSliceOrder() = 0;
    virtual void addInstant(uint32_t track, int64_t ts, uint32_t name, uint64_t args = 0) = 0;
    virtual void addCounter(uint32_t track, int64_t ts, double value) = 0;
    // Occurrences of an op known only in aggregate (XProf num_occurrences): they add to the op's
    // count, total and self time but have no place on the timeline and no percentiles.
    virtual void addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                              int64_t selfNs) = 0;
    virtual void addFlow(FlowEnd from, FlowEnd to, uint32_t name) = 0;
    // A hint that the importer adds nothing more to the tracks below `end` (see TraceWriter).
    virtual void finishTracksBefore(uint32_t end) = 0;
    // A hint that the importer adds nothing more to these tracks (see TraceWriter's direct
    // tracks); by default nothing is done early.
    virtual void finishTracks(const std::vector<uint32_t>& tracks) { (void)tracks; }
    // A hint that about `count` more slices come for `track` (see TraceWriter's direct tracks).
    virtual void reserveSlices(uint32_t track, size_t count) { (void)track, (void)count; }

  protected:
    ArgsLayouts argsLayouts_;
};

}  // namespace stallscope::trace
