#pragma once

#include <QJsonObject>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/trace/trace_format.h"
#include "core/trace/trace_writer.h"
#include "core/workspace.h"

struct ZSTD_DCtx_s;

namespace stallscope::trace {

struct TrackRow {
    int64_t id = 0;
    int64_t parent = -1;
    TrackKind kind = TrackKind::Thread;
    std::string name;
    int64_t sortIndex = 0;
    std::string pid, tid;
    uint64_t slices = 0, instants = 0, samples = 0;
    uint32_t maxDepth = 0;
    int64_t start = 0, end = 0;
    std::vector<int> levels;  // stored LOD levels, ascending, always starting with 0
};

struct FlowRow {
    int64_t id = 0;
    uint32_t name = 0;
    int64_t fromTrack = 0, fromTs = 0;
    int32_t fromDepth = -1;  // -1: no slice at that end
    int64_t toTrack = 0, toTs = 0;
    int32_t toDepth = -1;
};

struct OpStat {
    std::string name;
    uint64_t count = 0;       // every occurrence, aggregated ones included
    uint64_t aggregated = 0;  // of which known only in aggregate (XProf num_occurrences)
    // Slices that never ended: on the timeline, but not in count, total, self or percentiles.
    uint64_t unended = 0;
    int64_t total = 0, self = 0, min = 0, max = 0, p50 = 0, p95 = 0;
    double mean() const { return count ? double(total) / double(count) : 0.0; }
};

struct FoundSlice {
    int64_t track = 0;
    SliceItem slice;
};

// Read access to one trace profile. Opening loads the track list and string table only; slices
// and counters are read per (track, range, resolution) from the level-of-detail chunks, so any
// zoom level costs O(pixels) items whatever the profile's size. Not thread-safe: one per thread.
class TraceStore {
  public:
    TraceStore(const Workspace& workspace, int64_t profileId);

    int64_t profileId() const { return profileId_; }
    const Workspace& workspace() const { return workspace_; }
    const std::vector<TrackRow>& tracks() const { return tracks_; }
    const TrackRow* track(int64_t id) const;
    // Children of `parent` (-1: the top) in display order (sort index, then id).
    std::vector<const TrackRow*> children(int64_t parent) const;
    const std::string& text(uint32_t id) const;
    int64_t start() const { return start_; }
    int64_t end() const { return end_; }

    // The LOD level a query at `resolution` ns per pixel uses on this track: the coarsest whose
    // folded items stay within two pixels (Tracy folds below a few pixels).
    int levelFor(const TrackRow& track, double resolution) const;

    // Items overlapping [from, to] at a resolution of `resolution` ns (what one pixel covers):
    // slices shorter than the level's width come folded into counted items. Sorted by start.
    std::vector<SliceItem> slices(int64_t track, int64_t from, int64_t to, double resolution) const;
    // Every level-0 item of a track, one stored chunk at a time (chunks in time order, items in
    // a chunk as stored: not sorted across chunks), for passes over a whole profile: `slices`
    // would collect and sort them all first.
    void forEachChunk(int64_t track,
                      const std::function<void(const std::vector<SliceItem>&)>& visit) const;
    // Level-0 items of a track overlapping [from, to], a stored chunk at a time (as
    // forEachChunk): a pass over a window of a profile, without `slices` gathering it first.
    void forEachChunkIn(int64_t track, int64_t from, int64_t to,
                        const std::function<void(const std::vector<SliceItem>&)>& visit) const;
    // The same for threads sharing this store: `reading` is held while SQLite reads a chunk
    // and released while it is decoded and visited, so that the threads decode at once.
    void forEachChunk(int64_t track, std::mutex& reading,
                      const std::function<void(const std::vector<SliceItem>&)>& visit) const;
    size_t textCount() const { return strings_.size(); }
    // Counter samples (or per-bucket summaries) in [from, to], plus the sample before `from`.
    std::vector<CounterItem> counters(int64_t track, int64_t from, int64_t to,
                                      double resolution) const;
    const std::vector<FlowRow>& flows() const;  // read once, kept
    // Every flow in id order without keeping them (passes over a whole profile).
    void forEachFlow(const std::function<void(const FlowRow&)>& visit) const;
    // The stored flow chunks as they are (packed, in flow id order), one at a time; false when
    // the profile keeps its flows in the older table (forEachFlow reads both).
    bool forEachFlowChunk(const std::function<void(std::string_view packed)>& visit) const;
    // A packed flow chunk's flows, ids from `firstId` on, appended to `out`.
    static void decodeFlowChunk(std::string_view packed, int64_t firstId,
                                std::vector<FlowRow>& out);

    std::vector<OpStat> opStats() const;  // by total, descending
    // The profile's metadata object (what the importer recorded), read once.
    const QJsonObject& metadata() const;
    // Next slice (forward) starting after `after`, or previous one starting before it, whose
    // name contains `needle` (case-insensitive), over all tracks.
    std::optional<FoundSlice> find(const std::string& needle, int64_t after, bool forward) const;
    std::string args(uint64_t argsId) const;  // JSON text, "" when none
    // One member of the args ("\"key\":value", as stored), its own before an overlay's base,
    // without building the merged object; nullopt when absent. `holder`: the args id the member
    // was found in (a shared base for most XProf events), so callers can cache by it.
    std::optional<std::string> argsMember(uint64_t argsId, std::string_view key,
                                          uint64_t* holder = nullptr) const;
    // The same member's text without a copy when it is in a slice's own args (read for
    // millions of launches: the copy was most of a lookup), else in `scratch`; valid until the
    // next args lookup on this store.
    std::optional<std::string_view> argsMemberView(uint64_t argsId, std::string_view key,
                                                   std::string& scratch) const;

    // CONTRACT §5 `info` keys (id, kind, tracks, slices, counters, flows, start, end, time_unit,
    // top_ops) plus instants, counter_series and max_depth.
    QJsonObject infoJson(int topOps = 10) const;

  private:
    std::string args(uint64_t argsId, int depth) const;
    // A decompressed args chunk: its text and each entry's (offset, length) in it.
    struct ArgsChunk {
        int64_t seq = 0;
        std::string raw;
        std::vector<std::pair<uint32_t, uint32_t>> entries;
    };
    const ArgsChunk* argsChunk(int64_t seq) const;
    // An args entry as stored (plain, overlay or packed); valid until the next chunk is read.
    std::optional<std::string_view> argsEntry(uint64_t argsId) const;
    // The layouts of packed args entries, read when the first is met.
    const ArgsLayouts& argsLayouts() const;
    // An overlay entry (plain or packed) as its base's id and its own members' JSON text.
    std::string_view overlayOwn(std::string_view entry, uint64_t& base, std::string& text) const;
    // The seqs [first, last] of the chunks of a track's level that may hold items between
    // `from` and `to` (first > last: none). A level's rows are a few per b-tree page with their
    // data in overflow pages: filtering every row of a 10^7-slice track on its times read
    // ~800 pages per query, so each (track, level)'s times are read once and kept.
    std::pair<int64_t, int64_t> chunkSeqs(int64_t track, int level, int64_t from, int64_t to) const;
    // A level's items overlapping [from, to], a chunk at a time (chunks with none are skipped).
    void forEachChunkAt(int64_t track, int level, int64_t from, int64_t to,
                        const std::function<void(const std::vector<SliceItem>&)>& visit) const;
    struct ChunkDirectory {
        std::vector<int64_t> seqs;
        std::vector<int64_t> endsBefore;   // the latest end_ns of the chunks up to each one
        std::vector<int64_t> firstsAfter;  // the earliest first_ns of the chunks from each one
    };
    const Workspace& workspace_;
    int64_t profileId_;
    std::vector<TrackRow> tracks_;
    std::vector<std::string> strings_;
    int64_t start_ = 0, end_ = 0;
    mutable std::optional<std::vector<FlowRow>> flows_;
    mutable std::optional<QJsonObject> metadata_;
    mutable std::vector<ArgsChunk> argsCache_;  // most recently used first
    mutable std::optional<ArgsLayouts> argsLayouts_;
    mutable std::unique_ptr<sql::Statement> argsSelect_;  // reads one chunk
    struct FreeDecompressor {
        void operator()(ZSTD_DCtx_s* context) const;
    };
    // Kept: ZSTD_decompress made (and freed) a context of its own for every chunk.
    mutable std::unique_ptr<ZSTD_DCtx_s, FreeDecompressor> decompressor_;
    mutable std::mutex directoriesMutex_;  // readers on several threads share the store
    mutable std::map<std::pair<int64_t, int>, ChunkDirectory> directories_;
    // Members of shared (base) args looked up so far, by args id.
    mutable std::unordered_map<uint64_t,
                               std::vector<std::pair<std::string, std::optional<std::string>>>>
        memberMemo_;
};

// What an import wrote, for the profile's metadata.
QJsonObject summaryJson(const TraceSummary& summary);

}  // namespace stallscope::trace
