#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/sqlite.h"
#include "core/trace/args_store.h"
#include "core/trace/flow_binder.h"
#include "core/trace/op_statistics.h"
#include "core/trace/spill_sorter.h"
#include "core/trace/string_interner.h"
#include "core/trace/trace_format.h"
#include "core/trace/trace_sink.h"
#include "core/workspace.h"

namespace stallscope::trace {

struct TraceSummary {
    uint64_t tracks = 0;  // tracks written (those holding data, and their parents)
    uint64_t slices = 0;
    uint64_t instants = 0;
    uint64_t counterSamples = 0;
    uint64_t counterSeries = 0;
    uint64_t flows = 0;
    uint64_t overlapping = 0;   // slices that end after their parent (not properly nested)
    uint64_t unended = 0;       // slices that never ended (drawn to the trace's end, no statistics)
    uint64_t unboundFlows = 0;  // flows with an end that found no slice to attach to
    uint32_t maxDepth = 0;
    int64_t start = 0, end = 0;
    bool percentilesExact = true;
};

// Collects a trace as importers read it and writes it into the workspace (inside the import's
// transaction). Memory stays bounded: slices and counter samples are kept in a fixed-size
// buffer that is sorted and spilled to an anonymous temporary file as sorted runs, merged per
// track at finish(); flow ends are spilled the same way (FlowTable). Strings and per-name
// statistics stay in memory (they grow with the number of distinct names, not of slices).
//
// The writer orchestrates its parts: StringInterner (names), ArgsStore (argument objects),
// SpillSorter (slices and samples per track), FlowTable/TrackFlowBinder (flow ends),
// OpStatistics (per-op figures) and the level-of-detail folders (lod_builder.h). Itself it nests
// each track's slices and writes the chunks and rows.
class TraceWriter final : public TraceSink {
  public:
    // recordBudget: slices + samples held in memory before a run is spilled (0: the process's
    // default, importBuffers().traceRecords).
    TraceWriter(Workspace& workspace, int64_t profileId, size_t recordBudget = 0);
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    uint32_t intern(std::string_view text) override { return strings_.intern(text); }
    std::string_view text(uint32_t id) const override { return strings_.text(id); }
    uint32_t addTrack(TrackSpec spec) override;
    TrackSpec& track(uint32_t id) override { return tracks_[id].spec; }
    size_t trackCount() const override { return tracks_.size(); }

    // Stores an argument object (JSON text); returns its 1-based id for addSlice/addInstant.
    // Several slices may share one id.
    uint64_t addArgs(std::string_view json) override { return args_.add(json); }
    // Stores `own` (a JSON object) as an overlay on the stored object `base`: it reads back as
    // own's members followed by base's members own does not have. Per-event stats over shared
    // per-op stats (XProf event metadata) cost only the event's own bytes.
    uint64_t addArgsOver(uint64_t base, std::string_view own) override {
        return args_.addOver(base, own);
    }
    uint64_t addArgsPacked(uint64_t base, uint32_t layout, const ArgValue* values,
                           size_t count) override {
        return args_.addPacked(base, layout, values, count);
    }
    // startPs/durPs: sub-ns remainders (0..999 ps) of the start and the duration. A slice that
    // never ended (ended = false) is drawn over `dur` (to the trace's end) but its unknown
    // duration stays out of the statistics.
    void addSlice(uint32_t track, int64_t start, int64_t dur, uint32_t name, uint64_t args = 0,
                  uint16_t startPs = 0, uint16_t durPs = 0, bool ended = true,
                  uint64_t order = kOrderOfAdding) override;
    uint64_t reserveSliceOrder() override { return nextOrder_++; }
    // `count` places at once (a host's recording replayed): the first of them.
    uint64_t reserveSliceOrders(uint64_t count) {
        const uint64_t first = nextOrder_;
        nextOrder_ += count;
        return first;
    }
    void addInstant(uint32_t track, int64_t ts, uint32_t name, uint64_t args = 0) override;
    void addCounter(uint32_t track, int64_t ts, double value) override;
    // Occurrences of an op known only in aggregate (XProf num_occurrences): they add to the op's
    // count, total and self time but have no place on the timeline and no percentiles.
    void addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                      int64_t selfNs) override;
    void addFlow(FlowEnd from, FlowEnd to, uint32_t name) override;

    uint64_t slicesAdded() const { return slicesAdded_; }
    uint64_t argsCount() const { return args_.count(); }

    // Shifts everything on `track` (slices, instants, counter samples, flow ends) by `ns` when
    // it is written: the hosts of a multi-host run are read on their own clocks and aligned
    // once every host is read. Throws Failure when the track was already written
    // (finishTracksBefore).
    void setTimeOffset(uint32_t track, int64_t ns);
    // Called with every slice as it is added (before any offset), e.g. to find step markers
    // while a host is read; an empty function stops it.
    using SliceObserver = std::function<void(uint32_t track, int64_t start, uint32_t name)>;
    void setSliceObserver(SliceObserver observer) { observer_ = std::move(observer); }

    // Writes the slice tracks below `end` on a worker thread while the importer goes on, for
    // an importer that adds nothing more to them (XProf: a plane's lines once the plane is
    // read); the buffer and the spill file start over for the next tracks. Does nothing when
    // flows were added (their ends bind while their tracks are written) or records of later
    // tracks are held. A flow added afterwards must not end on these tracks.
    void finishTracksBefore(uint32_t end) override;

    // Direct tracks, for an importer that adds each track's slices in their final order (by
    // start, longer first, then in file order) and says when a track is complete
    // (finishTracks): a track's slices are held as added, not sorted or spilled, and written on
    // a worker once it is complete while the importer goes on (XProf: a line's lanes). A track
    // whose slices come out of order, or an instant, goes to the sorter as before, as do all
    // of them once more than the record budget are held. Call before the first slice.
    void setDirectTracks(bool direct) { direct_ = direct; }
    void finishTracks(const std::vector<uint32_t>& tracks) override;
    void reserveSlices(uint32_t track, size_t count) override;

    // Threads finish() writes slice tracks on (the calling one among them; default 1). The
    // profile is the same whatever the count.
    void setWriteThreads(size_t threads) { writeThreads_ = std::max<size_t>(threads, 1); }

    // Sorts and nests slices per track, resolves flow ends, builds the level-of-detail chunks
    // and op statistics and writes them. progress(fraction) may throw Cancelled.
    TraceSummary finish(const std::function<void(double)>& progress);

  private:
    struct RawSlice {
        int64_t start;
        int64_t dur;  // -1: instant
        uint64_t args;
        uint64_t order;  // the place in the file: equal spans nest in it
        uint32_t name;
        uint32_t track;
        uint16_t startPs, durPs;  // sub-ns remainders
        bool unended;
    };
    struct RawSample {
        int64_t ts;
        double value;
        uint64_t seq;
        uint32_t track;
    };
    struct SliceOrder {
        bool operator()(const RawSlice& a, const RawSlice& b) const {
            if (a.track != b.track) return a.track < b.track;
            if (a.start != b.start) return a.start < b.start;
            if (a.startPs != b.startPs) return a.startPs < b.startPs;
            if (a.dur != b.dur) return a.dur > b.dur;  // parents first, instants last
            if (a.durPs != b.durPs) return a.durPs > b.durPs;
            return a.order < b.order;  // file order: the first is the parent
        }
    };
    struct SampleOrder {
        bool operator()(const RawSample& a, const RawSample& b) const {
            if (a.track != b.track) return a.track < b.track;
            if (a.ts != b.ts) return a.ts < b.ts;
            return a.seq < b.seq;
        }
    };
    using SliceSorter = SpillSorter<RawSlice, SliceOrder>;
    using SampleSorter = SpillSorter<RawSample, SampleOrder>;
    struct TrackState {
        TrackSpec spec;
        uint64_t slices = 0, instants = 0, samples = 0;
        uint32_t maxDepth = 0;
        int64_t start = INT64_MAX, end = INT64_MIN;
        int64_t offset = 0;  // setTimeOffset: added to every time when written
        std::vector<int> levels;
        bool slicesWritten = false;  // by finishTracksBefore or finishTracks
        bool direct = false;         // its slices are in heldSlices_, not the sorter
        bool hasData() const { return slices + instants + samples > 0; }
    };
    struct PendingTracks;
    class DirectWriter;
    // Where a track's slices are read from when it is written: the sorter, or the direct
    // track's own vector.
    struct SliceSource {
        SliceSorter* sorter = nullptr;
        std::vector<RawSlice>* held = nullptr;  // written to: see writeSliceTrack
        template <class Visit>
        void forEach(uint32_t track, Visit&& visit) const {
            if (held)
                for (const RawSlice& r : *held) visit(r);
            else
                sorter->forEach(track, visit);
        }
    };

    void storeArgsChunk(int64_t seq, const std::string& packed);
    // ops and overlapping: the statistics of the thread writing the track.
    void writeSliceTrack(uint32_t trackId, TrackState& track, const SliceSource& slices,
                         const std::function<void(double)>& step, OpStatistics& ops,
                         uint64_t& overlapping);
    void writeSliceTracks(const std::vector<uint32_t>& order,
                          const std::function<void(double)>& progress, double totalRecords);
    void waitPendingTracks();
    // Waits for the direct tracks handed to the worker; their statistics join ops_.
    void waitDirectTracks();
    // Moves a direct track's held slices into the sorter: from now on it is sorted.
    void sortTrack(uint32_t track);
    void sortEveryTrack();
    // Held vectors of tracks written, kept with their pages for the next tracks (a vector grown
    // from empty for each line was a tenth of the importer's thread in copies and page faults).
    void spareHeld(std::vector<RawSlice>&& held);
    void writeCounterTrack(uint32_t track);
    // A slice or instant as stored at level 0 (its start already moved by its track's offset).
    static SliceItem itemOf(const RawSlice& r, uint32_t depth);
    std::vector<bool> keptTracks() const;
    void writeRows(const std::vector<bool>& kept);

    Workspace& workspace_;
    int64_t profileId_;
    StringInterner strings_;
    std::vector<TrackState> tracks_;
    size_t recordBudget_;
    std::unique_ptr<SliceSorter> slices_;
    std::unique_ptr<SliceSorter> spareSlices_;  // cleared, for reuse
    std::unique_ptr<SampleSorter> samples_;
    uint64_t slicesHandedOff_ = 0;  // records of tracks written by finishTracksBefore
    // Tracks being written on a worker; until it is joined, it alone touches the statistics.
    std::unique_ptr<PendingTracks> pending_;
    bool direct_ = false;
    std::vector<std::vector<RawSlice>> heldSlices_;  // of direct tracks, by track id
    uint64_t heldRecords_ = 0;
    std::mutex spareHeldMutex_;
    std::vector<std::vector<RawSlice>> spareHeld_;
    struct DirectWriterStop {
        void operator()(DirectWriter* writer) const;  // joins its threads
    };
    // Started with the first complete track.
    std::unique_ptr<DirectWriter, DirectWriterStop> directWriter_;
    // The connection is opened without SQLite's mutex: the worker writing tracks and the
    // importer storing args chunks take turns through this one.
    std::mutex dbMutex_;
    FlowTable flows_;
    OpStatistics ops_;
    std::unique_ptr<sql::Statement> argsInsert_;
    ArgsStore args_;
    uint64_t slicesAdded_ = 0, samplesAdded_ = 0;
    uint64_t nextOrder_ = 0;  // the next slice's place in the file
    uint64_t overlapping_ = 0;
    size_t writeThreads_ = 1;
    SliceObserver observer_;
};

}  // namespace stallscope::trace
