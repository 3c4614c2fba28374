#pragma once

// The step analysis's parts, shared by its files (not a public API: step_analysis.h is).
//   classify.cpp   what a slice is, by its name (device classes, host categories)
//   gather.cpp     reading the trace: devices and their activities, host intervals, launches
//   detect.cpp     where the steps are
//   segment.cpp    a device's timeline painted by class, idle split by cause; the host's
//   breakdown.cpp  one host's (or profile's) steps broken down, gaps, kernel figures
//   recommend.cpp  what to change, in words, with evidence
//   join.cpp       a run's hosts joined into one analysis
//   report.cpp     JSON both ways, `suggest` and the text table

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/byte_codec.h"
#include "core/sqlite.h"
#include "core/trace/step_analysis.h"
#include "core/trace/trace_store.h"

namespace stallscope::trace {
struct RunHost;
}

namespace stallscope::trace::steps {

// ---- names (classify.cpp) ----

std::string lower(std::string_view s);
bool has(std::string_view text, std::string_view needle);

// What a device slice is, finest first; the order is the breakdown's priority (lower wins).
enum DeviceClass : uint8_t {
    kGemm,
    kAttention,
    kOtherCompute,
    kCommunication,
    kH2D,
    kD2H,
    kD2D,
    kPeer,
    kOtherCopy,
    kMemset,
    kDeviceClassCount,
    kNotActivity = 255,  // sync markers, annotations
};
// Segment classes past the activities: the causes of idle.
constexpr uint8_t kSegInput = kDeviceClassCount, kSegHostWait = kDeviceClassCount + 1,
                  kSegIdle = kDeviceClassCount + 2;

inline bool isCompute(uint8_t c) {
    return c <= kOtherCompute;
}
inline bool isCopy(uint8_t c) {
    return c >= kH2D && c <= kOtherCopy;
}
StepCategory categoryOf(uint8_t segClass);

uint8_t classifyDeviceName(std::string_view name);
// Host slice classes, HostCategory order, plus slices that take no part (step markers, the
// profiler's own span).
constexpr uint8_t kHostIgnored = 255;
uint8_t classifyHostName(std::string_view name);
// XProf names a GPU stream line by what runs on it ("Stream #9(MemcpyH2D)"): a stream of
// copies only gives its activities' class; kNotActivity otherwise.
uint8_t copyStreamClass(std::string_view trackName);
bool isIterationMarker(std::string_view name);

// ---- intervals and slices (gather.cpp) ----

// Differences and sums of timestamps (or ids), wrapping: any pair round-trips exactly.
inline int64_t difference(int64_t a, int64_t b) {
    return int64_t(uint64_t(a) - uint64_t(b));
}
inline int64_t plus(int64_t a, int64_t b) {
    return int64_t(uint64_t(a) + uint64_t(b));
}

struct Interval {
    int64_t start, end;
};
void mergeIntervals(std::vector<Interval>& v);
// First interval of a merged list ending after t.
size_t firstEndingAfter(const std::vector<Interval>& v, int64_t t);
bool overlapsAny(const std::vector<Interval>& v, int64_t from, int64_t to);

// A merged interval list (sorted, disjoint) packed as varint deltas in blocks of 64: about 3
// bytes an interval where 16 were held (the host's runtime calls alone were 500 MB at 10^8
// slices). Read forward with a cursor.
class PackedIntervals {
  public:
    PackedIntervals() = default;
    explicit PackedIntervals(const std::vector<Interval>& merged);
    PackedIntervals(PackedIntervals&& other) noexcept { swap(other); }
    PackedIntervals& operator=(PackedIntervals&& other) noexcept {
        PackedIntervals(std::move(other)).swap(*this);
        return *this;
    }
    void swap(PackedIntervals& other) noexcept;
    size_t size() const { return size_; }

    class Cursor {
      public:
        bool valid() const { return block_ < list_->blocks_.size(); }
        const Interval& operator*() const { return current_; }
        const Interval* operator->() const { return &current_; }
        void next();

      private:
        friend class PackedIntervals;
        Cursor(const PackedIntervals& list, size_t block);
        void enterBlock();
        void decode();
        const PackedIntervals* list_;
        size_t block_;
        size_t inBlock_ = 0;
        ByteReader reader_{std::string_view()};
        Interval current_{0, 0};
    };
    Cursor begin() const { return Cursor(*this, 0); }
    // The first interval ending after t (invalid: none).
    Cursor firstEndingAfter(int64_t t) const;
    bool overlapsAny(int64_t from, int64_t to) const;

    // Appends an interval starting after the last one's end (the list is built merged).
    void push_back(const Interval& v);
    void shrinkToFit();

  private:
    static constexpr size_t kBlock = 64;
    struct Block {
        int64_t firstStart, lastEnd;
        size_t offset;  // into bytes_
    };
    std::vector<Block> blocks_;
    ByteSpool bytes_;
    size_t size_ = 0;
};

// A runtime call on a host thread, by its end (flows leave a call at its end; a launch counts
// from its start).
struct RuntimeCall {
    int64_t end, start;
    bool operator<(const RuntimeCall& o) const {
        return end != o.end ? end < o.end : start < o.start;
    }
};

// One host thread's runtime calls, sorted by end then start, packed (varints in blocks of 64:
// about 4 bytes a call where 16 were held until the launch flows were bound, a third of the
// step analysis's peak at 10^8 slices). Looked up through a cursor kept between lookups: the
// flows come about in time order, so most lookups step forward a call or two.
class PackedCalls {
  public:
    PackedCalls() = default;
    explicit PackedCalls(const std::vector<RuntimeCall>& sorted);
    size_t size() const { return size_; }
    // The start of the first call (by end, then start) ending at `end`, as std::lower_bound
    // would find it; none when no call ends there.
    std::optional<int64_t> startOfCallEndingAt(int64_t end);

  private:
    static constexpr size_t kBlock = 64;
    struct Block {
        int64_t firstEnd, lastEnd;
        size_t offset;
    };
    void seekBlock(size_t block);  // the cursor on the block's first call
    void step();                   // the cursor on the next call (past the last: at the end)
    std::vector<Block> blocks_;
    ByteSpool bytes_;
    size_t size_ = 0;
    // The cursor: a call, and the end of the one before it (INT64_MIN before the first).
    size_t block_ = SIZE_MAX, inBlock_ = 0;
    const char* at_ = nullptr;
    RuntimeCall current_{0, 0};
    int64_t previousEnd_ = INT64_MIN;
};

// Intervals of one host class as the host tracks are read: each track's run merged as it comes
// (its slices come by start), packed, and all runs merged into one list at the end (held as
// 16-byte intervals until then, they were the analysis's peak: a gigabyte at 10^8 slices).
class IntervalRuns {
  public:
    // An interval of the current run, starting no earlier than the run's previous one.
    void add(int64_t start, int64_t end);
    // The current run is whole; later intervals start another.
    void endRun();
    // Every run merged (empty intervals left out, as mergeIntervals does); empties this.
    PackedIntervals merged();
    void swap(IntervalRuns& other) noexcept {
        runs_.swap(other.runs_);
        bytes_.swap(other.bytes_);
        std::swap(open_, other.open_);
        std::swap(lastEnd_, other.lastEnd_);
    }

  private:
    void write(const Interval& v);
    struct Run {
        size_t offset, count;
        int64_t firstStart;
    };
    std::vector<Run> runs_;
    ByteSpool bytes_;               // each run: (start - previous end, end - start), zigzag varints
    std::optional<Interval> open_;  // the run's last interval, still growing
    int64_t lastEnd_ = 0;           // of the run's last interval written
};

// Level 0 of a track, a stored chunk at a time, in order (TraceStore::slices would gather and
// sort the whole track first: 10^7 slices are 500 MB that way).
template <class Fn>
void forEachChunk(const TraceStore& store, int64_t track, Fn&& fn, bool firstOnly = false) {
    sql::Statement st(store.workspace().db(),
                      "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND "
                      "level = 0 ORDER BY seq");
    st.bind(1, store.profileId()).bind(2, track);
    std::vector<SliceItem> chunk;
    while (st.step()) {
        chunk.clear();
        decodeSlices(st.blob(0), chunk);
        fn(chunk);
        if (firstOnly) return;
    }
}
std::vector<SliceItem> firstChunk(const TraceStore& store, int64_t track);
inline int64_t sliceEnd(const SliceItem& s) {
    return s.preciseEnd().ns;
}

// A device activity as it is read (held packed: PackedActivities).
struct Activity {
    int64_t start, end;
    int64_t launch;       // start of the runtime call that launched it; INT64_MIN: unknown
    int32_t launchTrack;  // its track, -1 unknown
    uint8_t cls;
};

// A device's activities by start, packed as varints in blocks of 64 (about 10 bytes an activity
// where 32 were held: a gigabyte at 10^8 slices, the analysis's largest list). The bytes are
// kept in pieces of a few MB, so growing never copies the list. Read forward with a cursor.
class PackedActivities {
  public:
    PackedActivities() = default;
    PackedActivities(PackedActivities&& other) noexcept { swap(other); }
    PackedActivities& operator=(PackedActivities&& other) noexcept {
        PackedActivities(std::move(other)).swap(*this);
        return *this;
    }
    // Appends `a`, which starts no earlier than the last one (callers merge or sort before).
    void push_back(const Activity& a);
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    int64_t lastStart() const { return lastStart_; }
    void clear();
    void swap(PackedActivities& other) noexcept;
    void shrinkToFit();

    class Cursor {
      public:
        bool valid() const { return index_ < list_->size_; }
        const Activity& operator*() const { return current_; }
        const Activity* operator->() const { return &current_; }
        size_t index() const { return index_; }
        void next();

      private:
        friend class PackedActivities;
        Cursor(const PackedActivities& list, size_t block);
        void decode(bool first);  // the next record; a block's first has no start delta
        const PackedActivities* list_;
        size_t index_;
        const char* at_ = nullptr;  // the next record (written here: read unchecked)
        Activity current_{};
    };
    Cursor begin() const { return Cursor(*this, 0); }
    // The first activity starting at or after t (as std::lower_bound by start).
    Cursor firstStartingFrom(int64_t t) const;

  private:
    static constexpr size_t kBlock = 64;
    static constexpr size_t kPieceBytes = size_t(4) << 20;
    static constexpr size_t kMaxRecordBytes = 1 + 10 + 10 + 10 + 5;
    struct Block {
        int64_t firstStart;
        uint32_t piece, offset;
    };
    std::vector<Block> blocks_;
    std::vector<ByteSpool> pieces_;
    size_t size_ = 0;
    int64_t lastStart_ = INT64_MIN;
};

struct TimedSlice {
    int64_t start, end;
    std::string name;
    int64_t track;
};

// What the analysis reads of a trace.
struct Gathered {
    std::vector<StepDevice> devices;
    std::vector<PackedActivities> activities;              // per device, sorted by start
    std::array<PackedIntervals, kHostCategoryCount> host;  // merged, per host class
    std::vector<TimedSlice> syncCalls;                     // individual, for evidence
    std::vector<int64_t> hostTracks;
    std::vector<int64_t> launchingTracks;  // host tracks that launched device work
    // Step candidates by source.
    std::vector<TimedSlice> profilerSteps, iterationMarkers, stepOps, xlaSteps;
    std::vector<std::pair<int, TimedSlice>> xlaModules;  // (device, execution)
    std::unordered_set<int64_t> withinHost;  // StepOptions::withinTrack: the host's tracks
    bool chrome = false;  // Chrome-style threads: activities bind to calls by correlation
};
// `hostsRead` sees what was gathered once every track but the devices' is read (the host's
// intervals and calls, the step candidates but step ops on device tracks). It runs on a thread
// of its own while the device tracks are read, and is done when gather returns: it may read
// and let go of the host's lists (the gathering reads none of them again), never the devices'
// lists or step ops. (Called again when the gathering starts over: a device track not stored
// by start.)
using HostsRead = std::function<void(Gathered&)>;
Gathered gather(const TraceStore& store, const StepOptions& options,
                const HostsRead& hostsRead = {});

// ---- steps (detect.cpp) ----

void detectSteps(StepAnalysis& result, Gathered& g, const TraceStore& store,
                 const StepOptions& options);

// ---- segments (segment.cpp) ----

struct Segment {
    int64_t start, end;
    uint8_t cls;     // a DeviceClass, or kSegInput/kSegHostWait/kSegIdle
    uint8_t active;  // bit 0 compute, 1 communication, 2 memcpy: running whatever wins
    int32_t gapId;   // idle causes: the gap they belong to; -1 for activity (24 bytes in all)
};
constexpr uint8_t kActiveCompute = 1, kActiveCommunication = 2, kActiveCopy = 4;

struct GapInfo {
    int64_t launchTrack = -1;  // of the activity ending the gap
};

// Paints a device's timeline over [from, to): the winning activity class at every moment,
// idle stretches split by cause; each segment handed to `sink` in time order.
using SegmentSink = std::function<void(const Segment&)>;
void deviceSegments(const PackedActivities& acts, const Gathered& g, int64_t from, int64_t to,
                    std::vector<GapInfo>& gaps, const SegmentSink& sink);

// ---- figures and words (recommend.cpp) ----

// Nearest rank, as the op table does.
template <class Sorted>
int64_t nearestRank(const Sorted& sorted, double q) {
    if (sorted.empty()) return 0;
    const size_t rank = size_t(std::ceil(q * double(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}
std::string percentText(double pct);
std::string usText(int64_t ns);

// What the breakdown found beyond the categories' totals, for the recommendations.
struct Findings {
    std::array<int64_t, 4> longest{0, 0, 0, 0};  // exposed communication, then exposed copy
    int64_t longestCommTrack = -1, longestCopyTrack = -1;
    int64_t syncWait = 0;  // host wait of gaps opening in a synchronisation
    uint64_t computeKernels = 0, shortKernels = 0;
    int64_t shortKernelTime = 0, computeTime = 0;
};
void recommend(StepAnalysis& r, const std::vector<TimedSlice>& syncCalls, const Findings& found);

// ---- one profile or host (breakdown.cpp), a run (join.cpp) ----

// Nanosecond figures, one per activity (launch latencies, kernel lengths), for exact
// percentiles: 4 bytes each below 2^32 ns (4.3 s), the rare others apart (negative ones sort
// before, longer ones after all of those), instead of 8 bytes each (half a gigabyte for the two
// lists at 10^8 slices).
class Figures {
  public:
    void push_back(int64_t ns) {
        if (ns >= 0 && ns <= int64_t(UINT32_MAX))
            short_.push_back(uint32_t(ns));
        else
            (ns < 0 ? negative_ : long_).push_back(ns);
    }
    void append(const Figures& other);
    size_t size() const { return negative_.size() + short_.size() + long_.size(); }
    bool empty() const { return size() == 0; }
    // The k-th smallest, selected (not sorted: 3.3 x 10^7 figures at 10^8 slices took an
    // eighth of the analysis to sort); the figures' order changes.
    int64_t nth(size_t k);
    // The nearest-rank quantile q (as nearestRank above), selected.
    int64_t nearestRank(double q);
    int64_t sum() const;

  private:
    std::vector<int64_t> negative_;
    std::vector<uint32_t> short_;
    std::vector<int64_t> long_;
};

// The per-activity figures behind the percentiles, kept so that a run's hosts join exactly.
struct KernelFigures {
    Figures latencies;  // launch -> start
    Figures computeDurations;
};
// Launch latency and the kernel median from every activity's figures (selected here; negative
// latencies were counted already).
void setKernelFigures(StepAnalysis& r, Figures& latencies, Figures& computeDurations);
StepAnalysis analyzeOne(const TraceStore& store, const StepOptions& options,
                        KernelFigures& figures);
StepAnalysis joinHosts(std::vector<StepAnalysis> hosts, const std::vector<RunHost>& runHosts,
                       std::vector<KernelFigures>& figures);

}  // namespace stallscope::trace::steps
