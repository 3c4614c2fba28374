#include "core/trace/trace_writer.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/sqlite.h"

namespace stallscope::trace {

const char* trackKindName(TrackKind kind) {
    switch (kind) {
        case TrackKind::Process:
            return "process";
        case TrackKind::Thread:
            return "thread";
        case TrackKind::Async:
            return "async";
        case TrackKind::Counter:
            return "counter";
        case TrackKind::Global:
            return "global";
    }
    return "thread";
}

TrackKind trackKindFromName(std::string_view name) {
    if (name == "process") return TrackKind::Process;
    if (name == "async") return TrackKind::Async;
    if (name == "counter") return TrackKind::Counter;
    if (name == "global") return TrackKind::Global;
    return TrackKind::Thread;
}

namespace {

// Percentiles stay exact until this many durations are held; past it every name switches to
// a log histogram with 64 buckets per octave (about 1 % error).
constexpr uint64_t kExactDurationBudget = uint64_t(8) << 20;
constexpr int64_t kLinearBuckets = 1024;

int64_t histogramKey(int64_t d) {
    if (d < kLinearBuckets) return d;
    return kLinearBuckets + int64_t(std::floor(std::log2(double(d)) * 64.0));
}
int64_t histogramValue(int64_t key) {
    if (key < kLinearBuckets) return key;
    return int64_t(std::llround(std::exp2((double(key - kLinearBuckets) + 0.5) / 64.0)));
}

// Writes the items of one (track, level) as chunks of kChunkItems.
class ChunkSink {
  public:
    ChunkSink(sql::Statement& insert, std::mutex& db, int64_t profile, uint32_t track, int level)
        : insert_(insert), db_(db), profile_(profile), track_(track), level_(level) {}
    void add(const SliceItem& item) {
        slices_.push_back(item);
        note(item.start, item.end());
        if (slices_.size() >= kChunkItems) flush();
    }
    void add(const CounterItem& item) {
        samples_.push_back(item);
        note(item.ts, item.ts);
        if (samples_.size() >= kChunkItems) flush();
    }
    void flush() {
        const size_t n = slices_.size() + samples_.size();
        if (n == 0) return;
        bytes_.clear();
        if (!slices_.empty()) encodeSlices(slices_, bytes_);
        if (!samples_.empty()) encodeCounters(samples_, bytes_);
        std::lock_guard lock(db_);
        insert_.bind(1, profile_).bind(2, int64_t(track_)).bind(3, level_).bind(4, seq_++);
        insert_.bind(5, first_).bind(6, last_).bind(7, int64_t(n));
        insert_.bindBlob(8, bytes_.bytes().data(), bytes_.size());
        insert_.exec();
        slices_.clear();
        samples_.clear();
        first_ = INT64_MAX;
        last_ = INT64_MIN;
    }
    int64_t written() const { return seq_; }

  private:
    void note(int64_t start, int64_t end) {
        first_ = std::min(first_, start);
        last_ = std::max(last_, end);
    }
    sql::Statement& insert_;
    std::mutex& db_;
    int64_t profile_;
    uint32_t track_;
    int level_;
    int64_t seq_ = 0;
    int64_t first_ = INT64_MAX, last_ = INT64_MIN;
    std::vector<SliceItem> slices_;
    std::vector<CounterItem> samples_;
    ByteWriter bytes_;
};

// Folds slices narrower than the level's width: per depth (instants apart), consecutive narrow
// items starting in the same bucket become one counted item named after the longest of them.
// A slice at least `width` long is emitted as itself and ends the run at its depth.
//
// Buckets of a level nest in those of the level below (widths are powers of four), so folding
// the output of a finer level gives the same items as folding level 0: levels are built as a
// cascade, each from the one below, and the work per slice shrinks with the level's size.
// Folded runs of instants carry kFoldedInstants in `args` (in memory only; folded items store
// no args) so the next level keeps them apart from slices.
constexpr uint64_t kFoldedInstants = 1;

class SliceFolder {
  public:
    // Widths are powers of two (lodWidth), so buckets are a shift away: this runs for every
    // slice at every level while levels are counted.
    explicit SliceFolder(int64_t width)
        : width_(width), shift_(std::countr_zero(uint64_t(width))) {}

    template <class Emit>
    void add(const SliceItem& item, Emit&& emit) {
        const bool instant = item.kind == ItemKind::Instant ||
                             (item.kind == ItemKind::Folded && item.args == kFoldedInstants);
        const size_t slot = size_t(item.depth) * 2 + (instant ? 1 : 0);
        if (slot >= open_.size()) open_.resize(slot + 1);
        Run& run = open_[slot];
        if (item.kind == ItemKind::Slice && item.dur >= width_) {
            close(run, emit, instant);
            emit(item);
            return;
        }
        const int64_t bucket =
            item.start >> shift_;  // floor division (C++20 shifts are arithmetic)
        if (run.count > 0 && run.bucket == bucket) {
            run.count += item.count;
            run.end = std::max(run.end, item.end());
            if (item.dur > run.longest.dur) run.longest = item;
            return;
        }
        close(run, emit, instant);
        run.bucket = bucket;
        run.count = item.count;
        run.first = run.longest = item;
        run.end = item.end();
    }
    template <class Emit>
    void finish(Emit&& emit) {
        for (size_t slot = 0; slot < open_.size(); ++slot) close(open_[slot], emit, slot % 2 == 1);
    }

  private:
    struct Run {
        int64_t bucket = 0;
        uint64_t count = 0;
        int64_t end = 0;
        SliceItem first, longest;
    };
    template <class Emit>
    void close(Run& run, Emit& emit, bool instants) {
        if (run.count == 0) return;
        if (run.count == 1) {
            emit(run.first);
        } else {
            SliceItem folded;
            folded.start = run.first.start;
            folded.dur = run.end - run.first.start;
            folded.name = run.longest.name;
            folded.depth = run.first.depth;
            folded.kind = ItemKind::Folded;
            folded.count = run.count;
            folded.args = instants ? kFoldedInstants : 0;
            emit(folded);
        }
        run.count = 0;
    }
    int64_t width_;
    int shift_;
    std::vector<Run> open_;
};

// Counter buckets: first timestamp, last value, min, max and count of the samples in each.
class CounterFolder {
  public:
    explicit CounterFolder(int64_t width) : shift_(std::countr_zero(uint64_t(width))) {}
    template <class Emit>
    void add(const CounterItem& s, Emit&& emit) {
        const int64_t bucket = s.ts >> shift_;
        if (open_ && bucket == bucket_) {
            item_.value = s.value;
            item_.min = std::min(item_.min, s.min);
            item_.max = std::max(item_.max, s.max);
            item_.count += s.count;
            return;
        }
        finish(emit);
        open_ = true;
        bucket_ = bucket;
        item_ = s;
    }
    template <class Emit>
    void finish(Emit&& emit) {
        if (open_) emit(item_);
        open_ = false;
    }

  private:
    int shift_;
    bool open_ = false;
    int64_t bucket_ = 0;
    CounterItem item_;
};

// Collects packed entries of one blob stream (strings, flows, op statistics) and stores them
// kPackedRows to a zstd-compressed blob: a row per entry cost about a microsecond each.
class PackedSink {
  public:
    PackedSink(Workspace& workspace, int64_t profile, std::string stream)
        : workspace_(workspace), profile_(profile), stream_(std::move(stream)) {}
    ByteWriter& buffer() { return raw_; }
    bool startsChunk() const { return entries_ == 0; }
    void endEntry() {
        if (++entries_ == kPackedRows) flush();
    }
    void finish() { flush(); }

  private:
    void flush() {
        if (entries_ == 0) return;
        packChunk(raw_.bytes(), packed_);
        workspace_.appendBlob(profile_, stream_, seq_++, packed_.data(), packed_.size());
        raw_.clear();
        entries_ = 0;
    }
    Workspace& workspace_;
    int64_t profile_;
    std::string stream_;
    ByteWriter raw_;
    std::string packed_;
    size_t entries_ = 0;
    int64_t seq_ = 0;
};

// Chains folders: what folder k emits goes to `visit(k, item)` and on into folder k + 1.
template <class Folder, class Item>
class Cascade {
  public:
    using Visit = std::function<void(size_t, const Item&)>;
    Cascade(std::vector<Folder>& folders, Visit visit)
        : folders_(folders), visit_(std::move(visit)) {
        for (size_t k = 0; k < folders.size(); ++k) emits_.push_back(Emit{this, k});
    }
    struct Emit {
        Cascade* cascade;
        size_t k;
        void operator()(const Item& item) const {
            cascade->visit_(k, item);
            if (k + 1 < cascade->folders_.size())
                cascade->folders_[k + 1].add(item, cascade->emits_[k + 1]);
        }
    };
    // What folder k's add() and finish() emit into.
    Emit& at(size_t k) { return emits_[k]; }

  private:
    std::vector<Folder>& folders_;
    Visit visit_;
    std::vector<Emit> emits_;
};

// Levels worth storing: a level is kept when it holds at most half the items of the last kept
// one, so a query at any resolution reads at most about twice the items of the ideal level.
std::vector<int> chooseLevels(uint64_t levelZeroItems, const std::vector<uint64_t>& counts) {
    std::vector<int> levels{0};
    uint64_t last = levelZeroItems;
    for (size_t k = 1; k < counts.size(); ++k) {
        if (counts[k] * 2 <= last) {
            levels.push_back(int(k));
            last = counts[k];
        }
    }
    return levels;
}

// Tracks with at most this many slices keep level 0 in memory (48 bytes an item) while their
// higher levels are built.
constexpr uint64_t kLevelZeroInMemory = uint64_t(1) << 20;

int topLevelFor(int64_t span) {
    int k = 1;
    while (k < kMaxLevel && lodWidth(k) < span) ++k;
    return k;
}

}  // namespace

// Fixed-budget buffer of records; when full, sorted and appended to a temporary file as a run.
// At the end, each track's records come back sorted by merging its segments of every run.
template <class T, class Less>
class TraceWriter::SpillSorter {
  public:
    // The whole budget is reserved at once: pages are only committed as records arrive, and
    // growing by doubling copied the buffer several times on its way to the budget.
    explicit SpillSorter(size_t budget) : budget_(std::max<size_t>(budget, 1024)) {
        buffer_.reserve(budget_);
    }
    ~SpillSorter() {
        if (file_) std::fclose(file_);
    }
    void push(const T& record) {
        // Whether each track's records still come in order (lines and ranks are usually added
        // in time order, tracks interleaved): then a run needs grouping by track, not a sort.
        if (record.track >= lastOfTrack_.size()) {
            lastOfTrack_.resize(size_t(record.track) + 1, kNone);
            countOfTrack_.resize(size_t(record.track) + 1, 0);
        }
        size_t& last = lastOfTrack_[record.track];
        if (last != kNone && less_(record, buffer_[last])) tracksInOrder_ = false;
        last = buffer_.size();
        ++countOfTrack_[record.track];
        buffer_.push_back(record);
        if (buffer_.size() >= budget_) spill();
    }
    uint64_t records() const { return total_ + buffer_.size(); }

    // Forgets every record, keeping the buffer's pages and the spill file for the next ones.
    void clear() {
        buffer_.clear();
        std::fill(lastOfTrack_.begin(), lastOfTrack_.end(), kNone);
        std::fill(countOfTrack_.begin(), countOfTrack_.end(), 0);
        tracksInOrder_ = true;
        runs_.clear();
        fileEnd_ = 0;
        total_ = 0;
    }

    // Whether every record held, in memory or spilled, belongs to a track below `end`.
    bool onlyBefore(uint32_t end) const {
        for (size_t t = end; t < countOfTrack_.size(); ++t)
            if (countOfTrack_[t] > 0) return false;
        for (const Run& run : runs_)
            if (!run.segments.empty() && run.segments.rbegin()->first >= end) return false;
        return true;
    }

    // Call once, after the last push: sorts what is still in memory (spilling it grouped
    // instead was slower: one more run to write, read and merge).
    void seal() { sortBuffer(); }

    // Visits the records of one track in order.
    template <class Visit>
    void forEach(uint32_t track, Visit&& visit) {
        std::vector<Cursor> cursors;
        for (const Run& run : runs_) {
            auto it = run.segments.find(track);
            if (it != run.segments.end())
                cursors.push_back(
                    Cursor(this, run.offset + it->second.first * sizeof(T), it->second.second));
        }
        auto [lo, hi] = std::equal_range(buffer_.begin(), buffer_.end(), track, Compare{});
        if (lo != hi) cursors.push_back(Cursor(&*lo, size_t(hi - lo)));
        if (cursors.size() == 1) {
            while (const T* r = cursors[0].peek()) {
                visit(*r);
                cursors[0].pop();
            }
            return;
        }
        auto greater = [this, &cursors](size_t a, size_t b) {
            return less_(*cursors[b].peek(), *cursors[a].peek());
        };
        std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
        for (size_t i = 0; i < cursors.size(); ++i)
            if (cursors[i].peek()) heap.push(i);
        // Runs often hold long stretches of a track (importers add a line or a rank at a
        // time): a cursor keeps going without heap operations while it stays the smallest.
        while (!heap.empty()) {
            const size_t i = heap.top();
            heap.pop();
            for (;;) {
                visit(*cursors[i].peek());
                cursors[i].pop();
                const T* next = cursors[i].peek();
                if (!next) break;
                if (!heap.empty() && less_(*cursors[heap.top()].peek(), *next)) {
                    heap.push(i);
                    break;
                }
            }
        }
    }

  private:
    struct Compare {
        bool operator()(const T& r, uint32_t track) const { return r.track < track; }
        bool operator()(uint32_t track, const T& r) const { return track < r.track; }
    };
    struct Run {
        uint64_t offset;
        std::map<uint32_t, std::pair<uint64_t, uint64_t>> segments;  // track -> (first, count)
    };
    // Reads a sorted segment either from memory or from the spill file, a block at a time.
    class Cursor {
      public:
        Cursor(const T* memory, size_t count) : memory_(memory), left_(count) {}
        Cursor(SpillSorter* owner, uint64_t offset, uint64_t count)
            : owner_(owner), offset_(offset), left_(count) {}
        const T* peek() {
            if (left_ == 0) return nullptr;
            if (memory_) return memory_;
            if (pos_ == block_.size()) refill();
            return &block_[pos_];
        }
        void pop() {
            --left_;
            if (memory_)
                ++memory_;
            else
                ++pos_;
        }

      private:
        void refill() {
            const size_t n = size_t(std::min<uint64_t>(left_, kBlock));
            block_.resize(n);
            const size_t bytes = n * sizeof(T);
            size_t done = 0;
            while (done < bytes) {
                const ssize_t got =
                    ::pread(fileno(owner_->file_), reinterpret_cast<char*>(block_.data()) + done,
                            bytes - done, off_t(offset_ + done));
                if (got <= 0) throw Failure("trace import: cannot read the temporary spill file");
                done += size_t(got);
            }
            offset_ += bytes;
            pos_ = 0;
        }
        static constexpr size_t kBlock = 4096;
        const T* memory_ = nullptr;
        SpillSorter* owner_ = nullptr;
        uint64_t offset_ = 0;
        uint64_t left_;
        std::vector<T> block_;
        size_t pos_ = 0;
    };

    // Importers often add records in order already (a track at a time, by time).
    // Often all but a stretch is (XProf: a line's lanes interleaved, the other lines in order):
    // only the part that is out of place is sorted. Records comparing equal are identical, so
    // the result is the full sort's.
    void sortBuffer() {
        const auto begin = buffer_.begin(), end = buffer_.end();
        const auto first = std::is_sorted_until(begin, end, less_);  // the first descent
        if (first == end) return;
        auto last = end - 1;  // the last descent
        while (!less_(*last, *(last - 1))) --last;
        // Sorted before `first` and from `last` on; what lies between, and what of either side
        // it overlaps, is sorted.
        const T& low = *std::min_element(first, last + 1, less_);
        const T& high = *std::max_element(first - 1, last, less_);
        const auto from = std::upper_bound(begin, first, low, less_);
        const auto to = std::lower_bound(last, end, high, less_);
        std::sort(from, to, less_);
    }
    void spill() {
        if (!file_) {
            file_ = std::tmpfile();
            if (!file_)
                throw Failure(
                    std::string("trace import: cannot create a temporary spill file in " P_tmpdir
                                ": ") +
                    std::strerror(errno) + "; nothing was stored");
        }
        if (tracksInOrder_ && !std::is_sorted(buffer_.begin(), buffer_.end(), less_))
            spillGrouped();
        else
            spillSorted();
        buffer_.clear();
        std::fill(lastOfTrack_.begin(), lastOfTrack_.end(), kNone);
        std::fill(countOfTrack_.begin(), countOfTrack_.end(), 0);
        tracksInOrder_ = true;
    }
    // Each track's records are in order: they go to their track's segment of the run through
    // a small buffer per track, in one pass (sorting a million records cost more).
    void spillGrouped() {
        Run run;
        run.offset = fileEnd_;
        std::vector<uint64_t> next(countOfTrack_.size(), 0);  // next record's place in the run
        uint64_t first = 0;
        for (uint32_t t = 0; t < countOfTrack_.size(); ++t) {
            if (countOfTrack_[t] == 0) continue;
            run.segments[t] = {first, countOfTrack_[t]};
            next[t] = first;
            first += countOfTrack_[t];
        }
        constexpr size_t kScatter = 1024;
        std::vector<std::vector<T>> pending(countOfTrack_.size());
        auto flush = [&](uint32_t t) {
            std::vector<T>& p = pending[t];
            writeAt(run.offset + next[t] * sizeof(T), p.data(), p.size() * sizeof(T));
            next[t] += p.size();
            p.clear();
        };
        for (const T& r : buffer_) {
            std::vector<T>& p = pending[r.track];
            if (p.capacity() == 0) p.reserve(kScatter);
            p.push_back(r);
            if (p.size() == kScatter) flush(r.track);
        }
        for (uint32_t t = 0; t < pending.size(); ++t)
            if (!pending[t].empty()) flush(t);
        fileEnd_ += buffer_.size() * sizeof(T);
        total_ += buffer_.size();
        runs_.push_back(std::move(run));
    }
    void writeAt(uint64_t offset, const T* data, size_t bytes) {
        size_t done = 0;
        while (done < bytes) {
            const ssize_t n = ::pwrite(fileno(file_), reinterpret_cast<const char*>(data) + done,
                                       bytes - done, off_t(offset + done));
            if (n <= 0)
                throw Failure(std::string("trace import: cannot write its temporary spill file "
                                          "in " P_tmpdir " (") +
                              std::strerror(errno) +
                              ": the disk holding it is full, or a file size limit was reached); "
                              "nothing was stored. Free space there and import again");
            done += size_t(n);
        }
    }
    void spillSorted() {
        sortBuffer();
        Run run;
        run.offset = fileEnd_;
        for (size_t i = 0; i < buffer_.size();) {
            size_t j = i;
            while (j < buffer_.size() && buffer_[j].track == buffer_[i].track) ++j;
            run.segments[buffer_[i].track] = {i, j - i};
            i = j;
        }
        const size_t bytes = buffer_.size() * sizeof(T);
        writeAt(fileEnd_, buffer_.data(), bytes);
        fileEnd_ += bytes;
        total_ += buffer_.size();
        runs_.push_back(std::move(run));
    }

    static constexpr size_t kNone = SIZE_MAX;
    size_t budget_;
    Less less_;
    std::vector<T> buffer_;
    std::vector<size_t> lastOfTrack_;     // index in buffer_ of each track's last record
    std::vector<uint64_t> countOfTrack_;  // records of each track in buffer_
    bool tracksInOrder_ = true;
    std::vector<Run> runs_;
    FILE* file_ = nullptr;
    uint64_t fileEnd_ = 0;
    uint64_t total_ = 0;
};

// Compresses args chunks on a worker thread while the importer goes on parsing (compression
// was an eighth of an XProf import); chunks are stored in order on the importer's thread, which
// owns the SQLite connection.
class TraceWriter::ArgsCompressor {
  public:
    explicit ArgsCompressor(std::function<void(int64_t, const std::string&)> store)
        : store_(std::move(store)), worker_([this] { work(); }) {}
    ~ArgsCompressor() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        worker_.join();
    }
    void submit(int64_t seq, std::string raw) {
        auto job = std::make_unique<Job>();
        job->seq = seq;
        job->raw = std::move(raw);
        {
            std::lock_guard lock(mutex_);
            jobs_.push_back(std::move(job));
        }
        changed_.notify_all();
        storeDone(kMaxPending);
    }
    // Stores every chunk submitted so far.
    void finish() { storeDone(0); }

  private:
    static constexpr size_t kMaxPending = 4;
    struct Job {
        int64_t seq = 0;
        std::string raw, packed, error;
        bool started = false, done = false;
    };
    // Stores finished chunks from the front, waiting while more than `pending` are queued.
    void storeDone(size_t pending) {
        for (;;) {
            std::unique_ptr<Job> job;
            {
                std::unique_lock lock(mutex_);
                if (jobs_.empty()) return;
                if (!jobs_.front()->done) {
                    if (jobs_.size() <= pending) return;
                    changed_.wait(lock, [this] { return jobs_.front()->done; });
                }
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            if (!job->error.empty()) throw Failure("zstd: " + job->error);
            store_(job->seq, job->packed);
        }
    }
    void work() {
        std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
        std::unique_lock lock(mutex_);
        for (;;) {
            Job* job = nullptr;
            changed_.wait(lock, [&] {
                for (auto& j : jobs_)
                    if (!j->started) {
                        job = j.get();
                        return true;
                    }
                return stop_;
            });
            if (!job) return;
            job->started = true;
            lock.unlock();
            job->packed.resize(ZSTD_compressBound(job->raw.size()));
            const size_t n = ZSTD_compressCCtx(cctx.get(), job->packed.data(), job->packed.size(),
                                               job->raw.data(), job->raw.size(), 1);
            if (ZSTD_isError(n))
                job->error = ZSTD_getErrorName(n);
            else
                job->packed.resize(n);
            lock.lock();
            job->done = true;
            changed_.notify_all();
        }
    }
    std::function<void(int64_t, const std::string&)> store_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::unique_ptr<Job>> jobs_;
    bool stop_ = false;
    std::thread worker_;
};

struct TraceWriter::NameStats {
    uint64_t count = 0;
    int64_t total = 0, self = 0;
    uint64_t totalPs = 0;  // sum of the sub-ns remainders, added to total (rounded) at the end
    uint64_t timed = 0;    // slices on the timeline (count minus aggregated occurrences)
    uint64_t unended = 0;  // slices that never ended: not in count, total or percentiles
    int64_t min = INT64_MAX, max = INT64_MIN;
    std::vector<int64_t> durations;         // exact, while the budget lasts
    std::map<int64_t, uint64_t> histogram;  // after it
};

// Tracks written on a worker while the importer goes on (finishTracksBefore).
struct TraceWriter::PendingTracks {
    std::unique_ptr<SpillSorter<RawSlice, SliceOrder>> slices;
    std::vector<std::pair<uint32_t, TrackState>> tracks;  // copies: tracks_ may grow meanwhile
    std::exception_ptr error;
    std::atomic<bool> abandon = false;
    std::thread worker;
};

TraceWriter::TraceWriter(Workspace& workspace, int64_t profileId, size_t recordBudget)
    : workspace_(workspace),
      profileId_(profileId),
      recordBudget_(recordBudget ? recordBudget : importBuffers().traceRecords),
      slices_(std::make_unique<SpillSorter<RawSlice, SliceOrder>>(recordBudget_)),
      samples_(std::make_unique<SpillSorter<RawSample, SampleOrder>>(recordBudget_ / 4)),
      nameStats_(std::make_unique<std::vector<NameStats>>()) {
    intern("");  // id 0: no name
}

TraceWriter::~TraceWriter() {
    if (pending_) {
        pending_->abandon = true;
        pending_->worker.join();
    }
}

// Statistics by name id (ids are dense: the string table's).
TraceWriter::NameStats& TraceWriter::statsOf(uint32_t name) {
    // Sized by the names known when the tracks were handed over, not by strings_: a worker
    // writing tracks may call this while the importer interns more.
    if (name >= nameStats_->size()) nameStats_->resize(std::max<size_t>(name + 1, namesKnown_));
    return (*nameStats_)[name];
}

uint32_t TraceWriter::intern(std::string_view text) {
    if (stringSlots_.empty()) stringSlots_.assign(1024, 0);
    const uint64_t hash = std::hash<std::string_view>{}(text);
    const uint64_t tag = hash >> 32 << 32;
    const size_t mask = stringSlots_.size() - 1;
    size_t slot = size_t(hash) & mask;
    while (const uint64_t entry = stringSlots_[slot]) {
        const uint32_t id = uint32_t(entry) - 1;
        if ((entry >> 32 << 32) == tag && strings_[id] == text) return id;
        slot = (slot + 1) & mask;
    }
    const uint32_t id = uint32_t(strings_.size());
    strings_.push_back(storeString(text));
    stringHashes_.push_back(hash);
    stringSlots_[slot] = tag | (uint64_t(id) + 1);
    if (strings_.size() * 2 > stringSlots_.size()) growStringSlots();
    return id;
}

std::string_view TraceWriter::storeString(std::string_view text) {
    if (text.empty()) return {};
    if (text.size() > arenaLeft_) {
        const size_t block = std::max<size_t>(text.size(), size_t(1) << 20);
        stringArena_.push_back(std::make_unique_for_overwrite<char[]>(block));
        arenaNext_ = stringArena_.back().get();
        arenaLeft_ = block;
    }
    std::memcpy(arenaNext_, text.data(), text.size());
    const std::string_view stored(arenaNext_, text.size());
    arenaNext_ += text.size();
    arenaLeft_ -= text.size();
    return stored;
}

void TraceWriter::growStringSlots() {
    std::vector<uint64_t> slots(stringSlots_.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t id = 0; id < strings_.size(); ++id) {
        size_t slot = size_t(stringHashes_[id]) & mask;
        while (slots[slot]) slot = (slot + 1) & mask;
        slots[slot] = (stringHashes_[id] >> 32 << 32) | (uint64_t(id) + 1);
    }
    stringSlots_.swap(slots);
}

uint32_t TraceWriter::addTrack(TrackSpec spec) {
    TrackState state;
    state.spec = std::move(spec);
    tracks_.push_back(std::move(state));
    return uint32_t(tracks_.size() - 1);
}

uint64_t TraceWriter::addArgs(std::string_view json) {
    argsChunk_.varint(json.size());
    argsChunk_.bytesAppend(json);
    ++argsCount_;
    if (argsCount_ % kArgsPerChunk == 0) flushArgs();
    return argsCount_;
}

uint64_t TraceWriter::addArgsOver(uint64_t base, std::string_view own) {
    if (base == 0) return addArgs(own);
    // An overlay entry: kArgsOverlay, the base id, then own's JSON (JSON text never starts with
    // that byte, so plain entries read as before).
    ByteWriter head;
    head.bytesAppend(std::string_view(&kArgsOverlay, 1));
    head.varint(base);
    argsChunk_.varint(head.size() + own.size());
    argsChunk_.bytesAppend(head.bytes());
    argsChunk_.bytesAppend(own);
    ++argsCount_;
    if (argsCount_ % kArgsPerChunk == 0) flushArgs();
    return argsCount_;
}

void TraceWriter::flushArgs() {
    if (argsChunk_.size() == 0) return;
    if (!argsCompressor_)
        argsCompressor_ = std::make_unique<ArgsCompressor>(
            [this](int64_t seq, const std::string& packed) { insertArgsChunk(seq, packed); });
    argsCompressor_->submit(int64_t((argsCount_ - 1) / kArgsPerChunk), argsChunk_.release());
}

void TraceWriter::insertArgsChunk(int64_t seq, const std::string& packed) {
    std::lock_guard lock(dbMutex_);
    if (!argsInsert_)
        argsInsert_ = std::make_unique<sql::Statement>(
            workspace_.db(), "INSERT INTO trace_args(profile_id, seq, data) VALUES(?,?,?)");
    argsInsert_->bind(1, profileId_).bind(2, seq);
    argsInsert_->bindBlob(3, packed.data(), packed.size());
    argsInsert_->exec();
}

void TraceWriter::addSlice(uint32_t track, int64_t start, int64_t dur, uint32_t name, uint64_t args,
                           uint16_t startPs, uint16_t durPs, bool ended) {
    if (dur < 0) dur = durPs = 0;
    // Every end must fit int64 ns (with room for the ps rounding): a slice may not run past it.
    // (When INT64_MAX - 2 - start overflows, start is negative and every duration fits.)
    if (int64_t room = 0; !__builtin_sub_overflow(INT64_MAX - 2, start, &room) && dur > room) {
        dur = room;
        durPs = 0;
    }
    // A track finishTracksBefore wrote is closed: a slice added now would be dropped silently.
    if (tracks_[track].slicesWritten)
        throw Failure("trace writer: slice added to track " + std::to_string(track) +
                      " after it was written");
    startPs = std::min<uint16_t>(startPs, 999);
    durPs = std::min<uint16_t>(durPs, 999);
    slices_->push({start, dur, args, name, track, startPs, durPs, !ended});
    ++slicesAdded_;
    TrackState& t = tracks_[track];
    ++t.slices;
    t.start = std::min(t.start, start);
    SliceItem probe;
    probe.start = start;
    probe.dur = dur;
    probe.startPs = startPs;
    probe.durPs = durPs;
    t.end = std::max(t.end, probe.end());
}

void TraceWriter::addInstant(uint32_t track, int64_t ts, uint32_t name, uint64_t args) {
    if (tracks_[track].slicesWritten)
        throw Failure("trace writer: instant added to track " + std::to_string(track) +
                      " after it was written");
    slices_->push({ts, -1, args, name, track, 0, 0, false});
    TrackState& t = tracks_[track];
    ++t.instants;
    t.start = std::min(t.start, ts);
    t.end = std::max(t.end, ts);
}

void TraceWriter::addCounter(uint32_t track, int64_t ts, double value) {
    samples_->push({ts, value, samplesAdded_++, track});
    TrackState& t = tracks_[track];
    ++t.samples;
    t.start = std::min(t.start, ts);
    t.end = std::max(t.end, ts);
}

void TraceWriter::addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                               int64_t selfNs) {
    waitPendingTracks();  // the worker owns the statistics until then
    namesKnown_ = strings_.size();
    NameStats& s = statsOf(name);
    s.count += occurrences;
    s.total += totalNs;
    s.self += selfNs;
}

void TraceWriter::addFlow(FlowEnd from, FlowEnd to, uint32_t name) {
    waitPendingTracks();
    if ((from.track < tracks_.size() && tracks_[from.track].slicesWritten) ||
        (to.track < tracks_.size() && tracks_[to.track].slicesWritten))
        throw Failure("trace import: a flow ends on a track already written");
    if ((flowCount_ >> kFlowBlockBits) == flowBlocks_.size())
        flowBlocks_.push_back(
            std::make_unique_for_overwrite<FlowRecord[]>(size_t(1) << kFlowBlockBits));
    FlowRecord& f = flow(flowCount_++);
    f.fromTs = from.ts;
    f.toTs = to.ts;
    f.fromArgs = from.args;
    f.toArgs = to.args;
    f.fromTrack = from.track;
    f.toTrack = to.track;
    f.name = name;
    f.fromDepth = f.toDepth = -1;
    f.fromBinding = from.binding;
    f.toBinding = to.binding;
}

// A statement prepared and finalized under the writer's connection lock.
class LockedStatement {
  public:
    LockedStatement(std::mutex& db, sqlite3* connection, std::string_view sql) : db_(db) {
        std::lock_guard lock(db_);
        statement_.emplace(connection, sql);
    }
    ~LockedStatement() {
        std::lock_guard lock(db_);
        statement_.reset();
    }
    LockedStatement(const LockedStatement&) = delete;
    LockedStatement& operator=(const LockedStatement&) = delete;
    sql::Statement& operator*() { return *statement_; }
    sql::Statement* operator->() { return &*statement_; }

  private:
    std::mutex& db_;
    std::optional<sql::Statement> statement_;
};

void TraceWriter::writeSliceTrack(uint32_t trackId, TrackState& track,
                                  SpillSorter<RawSlice, SliceOrder>& slices,
                                  const std::function<void(double)>& step) {
    LockedStatement insert(dbMutex_, workspace_.db(),
                           "INSERT INTO trace_chunks(profile_id, track_id, level, seq, first_ns, "
                           "end_ns, count, data) VALUES(?,?,?,?,?,?,?,?)");

    // Flow ends on this track, by time: enclosing ones, next-slice ones and exact ones. Their
    // times are still the ones added: ends are bound only while their own track is written.
    struct EndRef {
        int64_t ts;
        uint64_t args;
        uint32_t flow;
        bool source;
    };
    std::vector<EndRef> enclosing, next, exact;
    auto listFor = [&](FlowBinding b) -> std::vector<EndRef>& {
        return b == FlowBinding::Enclosing ? enclosing : b == FlowBinding::NextSlice ? next : exact;
    };
    // Without flows (tracks written early) the ends are not indexed.
    const size_t endsFrom = trackId + 1 < flowEndsBegin_.size() ? flowEndsBegin_[trackId] : 0;
    const size_t endsTo = trackId + 1 < flowEndsBegin_.size() ? flowEndsBegin_[trackId + 1] : 0;
    for (size_t k = endsFrom; k < endsTo; ++k) {
        const uint32_t i = flowEnds_[k] >> 1;
        const FlowRecord& f = flow(i);
        if (flowEnds_[k] & 1)
            listFor(f.fromBinding).push_back({f.fromTs, f.fromArgs, i, true});
        else
            listFor(f.toBinding).push_back({f.toTs, f.toArgs, i, false});
    }
    // By time, ties in the order the ends were listed (flow, then source before destination):
    // the order a stable sort by time gives, but the keys are unique, so a plain sort does.
    // Ends often come in time order already (Chakra's dependencies by node).
    auto byTs = [](const EndRef& a, const EndRef& b) {
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.flow != b.flow) return a.flow < b.flow;
        return a.source && !b.source;
    };
    // Exact ends bind to the first slice, in order, that carries their args id and starts at
    // their time. When the ids are dense (Chakra: one per node), they are grouped by id with a
    // counting sort instead of sorted by time: a slice looks up its own id's ends.
    uint64_t minArgs = UINT64_MAX, maxArgs = 0;
    for (const EndRef& e : exact) {
        minArgs = std::min(minArgs, e.args);
        maxArgs = std::max(maxArgs, e.args);
    }
    const bool exactByArgs = !exact.empty() && maxArgs - minArgs < 4 * uint64_t(exact.size());
    std::vector<uint32_t> exactBegin, exactByArgsOrder;  // ends of id minArgs + g: [g], [g + 1]
    if (exactByArgs) {
        exactBegin.assign(size_t(maxArgs - minArgs) + 2, 0);
        for (const EndRef& e : exact) ++exactBegin[size_t(e.args - minArgs) + 1];
        for (size_t g = 1; g < exactBegin.size(); ++g) exactBegin[g] += exactBegin[g - 1];
        exactByArgsOrder.resize(exact.size());
        std::vector<uint32_t> fill(exactBegin.begin(), exactBegin.end() - 1);
        for (size_t k = 0; k < exact.size(); ++k)
            exactByArgsOrder[fill[size_t(exact[k].args - minArgs)]++] = uint32_t(k);
    }
    for (std::vector<EndRef>* ends : {&enclosing, &next, &exact})
        if ((ends != &exact || !exactByArgs) && !std::is_sorted(ends->begin(), ends->end(), byTs))
            std::sort(ends->begin(), ends->end(), byTs);
    std::vector<bool> exactBound(exact.size(), false);
    size_t nextEnclosing = 0, nextNext = 0, nextExact = 0;
    // A source attaches at its slice's end, a destination at its slice's start.
    auto bind = [this](const EndRef& e, int64_t start, int64_t end, int32_t depth) {
        FlowRecord& f = flow(e.flow);
        if (e.source) {
            f.fromTs = end;
            f.fromDepth = depth;
        } else {
            f.toTs = start;
            f.toDepth = depth;
        }
    };

    // Open slices nest by their exact (ps) times; statistics use durations rounded to ns.
    struct Open {
        PreciseTime end;
        int64_t start, roundedEnd;
        uint32_t name;
        int64_t children;
        bool unended;
    };
    std::vector<Open> stack;
    auto pop = [&]() {
        const Open& o = stack.back();
        const int64_t dur = o.roundedEnd - o.start;
        if (!o.unended) {
            NameStats& s = statsOf(o.name);
            s.self += std::max<int64_t>(0, dur - o.children);
        }
        stack.pop_back();
    };
    auto popUntil = [&](PreciseTime ts) {
        while (!stack.empty() && stack.back().end <= ts) pop();
    };
    // Enclosing ends strictly before `limit` see the stack as it is at their time.
    auto resolveEnclosingBefore = [&](int64_t limit, bool inclusive) {
        while (nextEnclosing < enclosing.size() &&
               (enclosing[nextEnclosing].ts < limit ||
                (inclusive && enclosing[nextEnclosing].ts == limit))) {
            const EndRef& e = enclosing[nextEnclosing++];
            // A slice ending exactly at ts does not enclose it, unless it is a zero-length one
            // at ts (Kineto's "Stream Wait Event", the destination of its launch's flow).
            const PreciseTime at{e.ts, 0};
            while (!stack.empty() && (stack.back().end < at ||
                                      (stack.back().end == at && stack.back().start != e.ts)))
                pop();
            if (stack.empty())
                bind(e, e.ts, e.ts, -1);
            else
                bind(e, stack.back().start, stack.back().end.ns + (stack.back().end.ps > 0 ? 1 : 0),
                     int32_t(stack.size() - 1));
        }
    };

    const int top = topLevelFor(std::max<int64_t>(1, track.end - track.start));
    std::vector<SliceFolder> counters;
    std::vector<uint64_t> levelCounts(size_t(top) + 1, 0);
    for (int k = 1; k <= top; ++k) counters.emplace_back(lodWidth(k));
    // counters[k] counts level k + 1 and feeds its items to the next level up.
    Cascade<SliceFolder, SliceItem> count(
        counters, [&](size_t k, const SliceItem&) { ++levelCounts[k + 1]; });

    ChunkSink levelZero(*insert, dbMutex_, profileId_, trackId, 0);
    // Level 0 stays in memory for building the higher levels when the track is not too large
    // (reading it back from SQLite and decoding it was a tenth of writing a track).
    const bool levelZeroInMemory =
        !counters.empty() && track.slices + track.instants <= kLevelZeroInMemory;
    std::vector<SliceItem> levelZeroItems;
    if (levelZeroInMemory) levelZeroItems.reserve(size_t(track.slices + track.instants));
    uint64_t seen = 0;
    slices.forEach(trackId, [&](const RawSlice& r) {
        resolveEnclosingBefore(r.start, false);
        popUntil(PreciseTime{r.start, r.startPs});
        SliceItem item;
        item.start = r.start;
        item.name = r.name;
        item.args = r.args;
        item.depth = uint32_t(stack.size());
        if (r.dur < 0) {
            item.kind = ItemKind::Instant;
            item.dur = 0;
        } else {
            item.dur = r.dur;
            item.startPs = r.startPs;
            item.durPs = r.durPs;
            // Whole-ns duration for the statistics: the exact one rounded to the nearest ns.
            const int64_t dur = r.dur + (r.durPs >= 500 ? 1 : 0);
            const PreciseTime end = item.preciseEnd();
            // A slice that never ended has no known length: it neither overlaps its parent
            // nor takes from the parent's self time.
            if (!stack.empty() && !r.unended) {
                Open& parent = stack.back();
                if (end > parent.end) ++overlapping_;
                parent.children += std::min(dur, parent.roundedEnd - r.start);
            }
            stack.push_back({end, r.start, r.start + dur, r.name, 0, r.unended});
            item.unended = r.unended;
            NameStats& s = statsOf(r.name);
            if (r.unended) {
                // Its duration is unknown: counted apart, out of totals and percentiles.
                ++s.unended;
                ++unended_;
            } else {
                ++s.count;
                ++s.timed;
                s.total += r.dur;
                s.totalPs += r.durPs;
                s.min = std::min(s.min, dur);
                s.max = std::max(s.max, dur);
                if (percentilesExact_) {
                    s.durations.push_back(dur);
                    if (++exactDurations_ > kExactDurationBudget) {
                        percentilesExact_ = false;
                        for (NameStats& st : *nameStats_) {
                            for (int64_t d : st.durations) ++st.histogram[histogramKey(d)];
                            std::vector<int64_t>().swap(st.durations);
                        }
                    }
                } else {
                    ++s.histogram[histogramKey(dur)];
                }
            }
            while (nextNext < next.size() && next[nextNext].ts <= r.start)
                bind(next[nextNext++], r.start, item.end(), int32_t(item.depth));
            // Exact ends: the slice starting at their time with their args id.
            if (exactByArgs) {
                if (r.args >= minArgs && r.args <= maxArgs) {
                    const size_t g = size_t(r.args - minArgs);
                    for (size_t k = exactBegin[g]; k < exactBegin[g + 1]; ++k) {
                        const uint32_t e = exactByArgsOrder[k];
                        if (exactBound[e] || exact[e].ts != r.start) continue;
                        exactBound[e] = true;
                        bind(exact[e], r.start, item.end(), int32_t(item.depth));
                    }
                }
            } else {
                while (nextExact < exact.size() && exact[nextExact].ts < r.start) ++nextExact;
                for (size_t k = nextExact; k < exact.size() && exact[k].ts == r.start; ++k) {
                    if (exactBound[k] || exact[k].args != r.args) continue;
                    exactBound[k] = true;
                    bind(exact[k], r.start, item.end(), int32_t(item.depth));
                }
            }
        }
        track.maxDepth = std::max(track.maxDepth, item.depth);
        levelZero.add(item);
        if (levelZeroInMemory) levelZeroItems.push_back(item);
        if (!counters.empty()) counters[0].add(item, count.at(0));
        if ((++seen & 0xffff) == 0) step(double(seen));
    });
    resolveEnclosingBefore(INT64_MAX, true);
    while (!stack.empty()) pop();
    levelZero.flush();
    for (size_t k = 0; k < counters.size(); ++k) counters[k].finish(count.at(k));

    track.levels = chooseLevels(track.slices + track.instants, levelCounts);
    if (track.levels.size() <= 1) return;

    // Second pass over level 0 (in memory, or as stored) builds the kept levels.
    std::vector<SliceFolder> folders;
    std::vector<std::unique_ptr<ChunkSink>> sinks;
    for (size_t i = 1; i < track.levels.size(); ++i) {
        folders.emplace_back(lodWidth(track.levels[i]));
        sinks.push_back(
            std::make_unique<ChunkSink>(*insert, dbMutex_, profileId_, trackId, track.levels[i]));
    }
    Cascade<SliceFolder, SliceItem> build(
        folders, [&](size_t i, const SliceItem& out) { sinks[i]->add(out); });
    if (levelZeroInMemory) {
        for (const SliceItem& item : levelZeroItems) folders[0].add(item, build.at(0));
    } else {
        LockedStatement read(dbMutex_, workspace_.db(),
                             "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? "
                             "AND level = 0 ORDER BY seq");
        std::unique_lock lock(dbMutex_);
        read->bind(1, profileId_).bind(2, int64_t(trackId));
        std::vector<SliceItem> items;
        while (read->step()) {
            items.clear();
            decodeSlices(read->blob(0), items);
            lock.unlock();  // the sinks take it to write
            for (const SliceItem& item : items) folders[0].add(item, build.at(0));
            lock.lock();
        }
        read->reset();
    }
    for (size_t i = 0; i < folders.size(); ++i) {
        folders[i].finish(build.at(i));
        sinks[i]->flush();
    }
}

void TraceWriter::writeCounterTrack(uint32_t trackId) {
    TrackState& track = tracks_[trackId];
    sql::Statement insert(workspace_.db(),
                          "INSERT INTO trace_chunks(profile_id, track_id, level, seq, first_ns, "
                          "end_ns, count, data) VALUES(?,?,?,?,?,?,?,?)");
    const int top = topLevelFor(std::max<int64_t>(1, track.end - track.start));
    std::vector<CounterFolder> counting;
    std::vector<uint64_t> levelCounts(size_t(top) + 1, 0);
    for (int k = 1; k <= top; ++k) counting.emplace_back(lodWidth(k));
    ChunkSink levelZero(insert, dbMutex_, profileId_, trackId, 0);
    samples_->forEach(trackId, [&](const RawSample& r) {
        CounterItem item;
        item.ts = r.ts;
        item.value = item.min = item.max = r.value;
        levelZero.add(item);
        for (size_t k = 0; k < counting.size(); ++k)
            counting[k].add(item, [&](const CounterItem&) { ++levelCounts[k + 1]; });
    });
    levelZero.flush();
    for (size_t k = 0; k < counting.size(); ++k)
        counting[k].finish([&](const CounterItem&) { ++levelCounts[k + 1]; });
    track.levels = chooseLevels(track.samples, levelCounts);
    if (track.levels.size() <= 1) return;
    std::vector<CounterFolder> folders;
    std::vector<std::unique_ptr<ChunkSink>> sinks;
    for (size_t i = 1; i < track.levels.size(); ++i) {
        folders.emplace_back(lodWidth(track.levels[i]));
        sinks.push_back(
            std::make_unique<ChunkSink>(insert, dbMutex_, profileId_, trackId, track.levels[i]));
    }
    sql::Statement read(workspace_.db(),
                        "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND "
                        "level = 0 ORDER BY seq");
    read.bind(1, profileId_).bind(2, int64_t(trackId));
    std::vector<CounterItem> items;
    while (read.step()) {
        items.clear();
        decodeCounters(read.blob(0), items);
        for (const CounterItem& item : items)
            for (size_t i = 0; i < folders.size(); ++i)
                folders[i].add(item, [&](const CounterItem& out) { sinks[i]->add(out); });
    }
    for (size_t i = 0; i < folders.size(); ++i) {
        folders[i].finish([&](const CounterItem& out) { sinks[i]->add(out); });
        sinks[i]->flush();
    }
}

void TraceWriter::finishTracksBefore(uint32_t end) {
    end = std::min<uint32_t>(end, uint32_t(tracks_.size()));
    if (flowCount_ > 0 || !slices_->onlyBefore(end)) return;
    // One batch at a time: at most two record buffers are held.
    waitPendingTracks();
    auto job = std::make_unique<PendingTracks>();
    uint64_t records = 0;
    for (uint32_t t = 0; t < end; ++t) {
        TrackState& track = tracks_[t];
        if (track.slicesWritten || track.slices + track.instants == 0) continue;
        job->tracks.emplace_back(t, track);
        track.slicesWritten = true;
        records += track.slices + track.instants;
    }
    if (job->tracks.empty()) return;
    slicesHandedOff_ += records;
    namesKnown_ = strings_.size();
    // The buffer the worker before used, when there is one: its pages are already mapped.
    job->slices = std::exchange(
        slices_, spareSlices_ ? std::move(spareSlices_)
                              : std::make_unique<SpillSorter<RawSlice, SliceOrder>>(recordBudget_));
    PendingTracks* j = job.get();
    job->worker = std::thread([this, j] {
        try {
            j->slices->seal();
            for (auto& [id, state] : j->tracks) {
                // Between tracks too: a plane of many small tracks never reaches the per-chunk
                // progress check, and a cancelled import waits for this worker.
                if (j->abandon) throw Failure("trace import: abandoned");
                writeSliceTrack(id, state, *j->slices, [j](double) {
                    if (j->abandon) throw Failure("trace import: abandoned");
                });
            }
        } catch (...) {
            j->error = std::current_exception();
        }
        j->slices->clear();
    });
    pending_ = std::move(job);
}

void TraceWriter::waitPendingTracks() {
    if (!pending_) return;
    pending_->worker.join();
    const std::unique_ptr<PendingTracks> job = std::move(pending_);
    if (job->error) std::rethrow_exception(job->error);
    spareSlices_ = std::move(job->slices);
    for (const auto& [id, state] : job->tracks) {
        tracks_[id].levels = state.levels;
        tracks_[id].maxDepth = state.maxDepth;
    }
}

TraceSummary TraceWriter::finish(const std::function<void(double)>& progress) {
    waitPendingTracks();
    namesKnown_ = strings_.size();
    flushArgs();
    if (argsCompressor_) argsCompressor_->finish();
    slices_->seal();
    samples_->seal();

    indexFlowEnds();
    const double totalRecords =
        double(slicesHandedOff_ + slices_->records() + samples_->records()) + 1.0;
    double done = 0;
    TraceSummary summary;

    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        TrackState& track = tracks_[t];
        if (track.slices + track.instants > 0) {
            const double base = done;
            if (!track.slicesWritten)
                writeSliceTrack(t, track, *slices_, [&](double seen) {
                    progress(0.95 * (base + seen) / totalRecords);
                });
            done += double(track.slices + track.instants);
        }
        if (track.samples > 0) {
            writeCounterTrack(t);
            done += double(track.samples);
        }
        summary.slices += track.slices;
        summary.instants += track.instants;
        summary.counterSamples += track.samples;
        if (track.samples > 0) ++summary.counterSeries;
        summary.maxDepth = std::max(summary.maxDepth, track.maxDepth);
        progress(0.95 * done / totalRecords);
    }
    summary.overlapping = overlapping_;
    summary.unended = unended_;
    summary.percentilesExact = percentilesExact_;
    const std::vector<bool> kept = keptTracks();
    writeRows(kept);
    int64_t start = INT64_MAX, end = INT64_MIN;
    for (const TrackState& t : tracks_) {
        if (!t.hasData()) continue;
        start = std::min(start, t.start);
        end = std::max(end, t.end);
    }
    summary.start = start == INT64_MAX ? 0 : start;
    summary.end = end == INT64_MIN ? 0 : end;
    summary.tracks = uint64_t(std::count(kept.begin(), kept.end(), true));
    summary.flows = flowCount_;
    summary.unboundFlows = unboundFlows_;
    progress(1.0);
    return summary;
}

// Flow ends grouped by track (a counting sort, flow order kept within a track), so writing a
// track visits its own ends instead of every flow.
void TraceWriter::indexFlowEnds() {
    if (flowCount_ >= (size_t(1) << 31))
        throw Failure("trace import: more than 2^31 flows are not supported");
    flowEndsBegin_.assign(tracks_.size() + 1, 0);
    for (size_t i = 0; i < flowCount_; ++i) {
        const FlowRecord& f = flow(i);
        ++flowEndsBegin_[f.fromTrack + 1];
        ++flowEndsBegin_[f.toTrack + 1];
    }
    for (size_t t = 0; t < tracks_.size(); ++t) flowEndsBegin_[t + 1] += flowEndsBegin_[t];
    flowEnds_.resize(flowEndsBegin_.back());
    std::vector<size_t> fill(flowEndsBegin_.begin(), flowEndsBegin_.end() - 1);
    for (size_t i = 0; i < flowCount_; ++i) {
        const FlowRecord& f = flow(i);
        flowEnds_[fill[f.fromTrack]++] = uint32_t(i) << 1 | 1;  // low bit: the source end
        flowEnds_[fill[f.toTrack]++] = uint32_t(i) << 1;
    }
}

// Tracks holding data, and the tracks enclosing them; empty ones (metadata only) are dropped.
std::vector<bool> TraceWriter::keptTracks() const {
    std::vector<bool> kept(tracks_.size(), false);
    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        if (!tracks_[t].hasData()) continue;
        for (int64_t p = t; p >= 0 && !kept[size_t(p)]; p = tracks_[size_t(p)].spec.parent)
            kept[size_t(p)] = true;
    }
    return kept;
}

void TraceWriter::writeRows(const std::vector<bool>& kept) {
    sqlite3* db = workspace_.db();
    sql::Statement track(db,
                         "INSERT INTO trace_tracks(profile_id, id, parent_id, kind, name, "
                         "sort_index, pid, tid, slices, instants, samples, max_depth, start_ns, "
                         "end_ns, levels) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        if (!kept[t]) continue;
        const TrackState& s = tracks_[t];
        std::string levels;
        for (int l : s.levels) levels += (levels.empty() ? "" : ",") + std::to_string(l);
        track.bind(1, profileId_).bind(2, int64_t(t));
        if (s.spec.parent >= 0)
            track.bind(3, s.spec.parent);
        else
            track.bindNull(3);
        track.bind(4, std::string_view(trackKindName(s.spec.kind))).bind(5, s.spec.name);
        track.bind(6, s.spec.sortIndex).bind(7, s.spec.pid).bind(8, s.spec.tid);
        track.bind(9, int64_t(s.slices)).bind(10, int64_t(s.instants)).bind(11, int64_t(s.samples));
        track.bind(12, int64_t(s.maxDepth));
        if (s.hasData())
            track.bind(13, s.start).bind(14, s.end);
        else
            track.bindNull(13).bindNull(14);
        track.bind(15, levels);
        track.exec();
    }

    PackedSink strings(workspace_, profileId_, kStringsStream);
    for (std::string_view text : strings_) {
        encodeString(text, strings.buffer());
        strings.endEntry();
    }
    strings.finish();

    PackedSink flows(workspace_, profileId_, kFlowsStream);
    PackedFlow previous;
    for (size_t i = 0; i < flowCount_; ++i) {
        const FlowRecord& f = flow(i);
        PackedFlow packed;
        packed.name = f.name;
        packed.fromTrack = int64_t(f.fromTrack);
        packed.fromTs = f.fromTs;
        packed.fromDepth = f.fromDepth;
        packed.toTrack = int64_t(f.toTrack);
        packed.toTs = f.toTs;
        packed.toDepth = f.toDepth;
        if (f.fromDepth < 0 || f.toDepth < 0) ++unboundFlows_;
        // Each chunk decodes on its own: deltas restart from zero.
        if (flows.startsChunk()) previous = PackedFlow{};
        encodeFlow(packed, previous, flows.buffer());
        flows.endEntry();
        previous = packed;
    }
    flows.finish();

    PackedSink ops(workspace_, profileId_, kOpsStream);
    for (uint32_t name = 0; name < nameStats_->size(); ++name) {
        NameStats& s = (*nameStats_)[name];
        if (s.count == 0) continue;
        // Nearest-rank percentiles of the slices on the timeline.
        auto rank = [&](double p) { return uint64_t(std::ceil(p * double(s.timed))) - 1; };
        int64_t p50 = 0, p95 = 0;
        if (s.timed == 0) {
            s.min = s.max = 0;
        } else if (percentilesExact_) {
            std::vector<int64_t>& d = s.durations;
            std::nth_element(d.begin(), d.begin() + long(rank(0.5)), d.end());
            p50 = d[rank(0.5)];
            std::nth_element(d.begin(), d.begin() + long(rank(0.95)), d.end());
            p95 = d[rank(0.95)];
        } else {
            uint64_t seen = 0;
            bool have50 = false;
            for (const auto& [key, n] : s.histogram) {
                seen += n;
                if (!have50 && seen > rank(0.5)) {
                    p50 = histogramValue(key);
                    have50 = true;
                }
                if (seen > rank(0.95)) {
                    p95 = histogramValue(key);
                    break;
                }
            }
        }
        const int64_t total = s.total + int64_t((s.totalPs + 500) / 1000);
        encodeOp({name, s.count, total, s.self, s.min, s.max, p50, p95}, ops.buffer());
        ops.endEntry();
    }
    ops.finish();
    if (unended_ > 0) {
        PackedSink unended(workspace_, profileId_, kOpsUnendedStream);
        for (uint32_t name = 0; name < nameStats_->size(); ++name) {
            const NameStats& s = (*nameStats_)[name];
            if (s.unended == 0) continue;
            encodeOpUnended(name, s.unended, unended.buffer());
            unended.endEntry();
        }
        unended.finish();
    }
}

}  // namespace stallscope::trace
