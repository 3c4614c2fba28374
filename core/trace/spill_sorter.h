#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/byte_codec.h"
#include "core/errors.h"
#include "core/trace/spill_codec.h"

namespace stallscope::trace {

// The temporary file behind a SpillSorter; every failure throws Failure naming what to do.
namespace spill_file {
FILE* create();
void write(FILE* file, uint64_t offset, const void* data, size_t bytes);
void read(FILE* file, uint64_t offset, void* data, size_t bytes);
[[noreturn]] void damaged();
}  // namespace spill_file

// One spill at a time, sorted and written on a thread of its own while the importer fills the
// other buffer (written on the importer's thread, a spill stalled it and the parse behind it:
// a fifth of a 10^7-slice import went to copying runs into the page cache).
class BackgroundSpill {
  public:
    BackgroundSpill() = default;
    ~BackgroundSpill() { join(); }
    BackgroundSpill(const BackgroundSpill&) = delete;
    BackgroundSpill& operator=(const BackgroundSpill&) = delete;

    // Runs `job` once the one before is done (rethrowing what that one threw).
    template <class Job>
    void start(Job&& job) {
        wait();
        thread_ = std::thread([this, job = std::forward<Job>(job)]() mutable {
            try {
                job();
            } catch (...) {
                error_ = std::current_exception();
            }
        });
    }
    // Waits for the job running; rethrows what it threw.
    void wait() {
        join();
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }
    void join() noexcept {
        if (thread_.joinable()) thread_.join();
    }

  private:
    std::thread thread_;
    std::exception_ptr error_;
};

// Where a block of encoded records lies in a spill file.
struct SpillBlock {
    uint64_t offset;
    uint32_t bytes;
    uint32_t count;
};

// Appends encoded blocks of records to a spill file through a buffer: one write a megabyte,
// not one a block.
class SpillAppender {
  public:
    SpillAppender(FILE* file, uint64_t& fileEnd) : file_(file), fileEnd_(fileEnd) {}
    ~SpillAppender() = default;  // flush() first: a write may fail
    SpillAppender(const SpillAppender&) = delete;
    SpillAppender& operator=(const SpillAppender&) = delete;

    template <class T>
    SpillBlock append(const T* records, size_t n) {
        char* room = buffer_.tail(spill_codec::maxBytes<T>(n));
        const size_t bytes = spill_codec::encode(records, n, room);
        const SpillBlock block{fileEnd_ + buffer_.size(), uint32_t(bytes), uint32_t(n)};
        buffer_.advance(room + bytes);
        if (buffer_.size() >= kFlushBytes) flush();
        return block;
    }
    void flush() {
        spill_file::write(file_, fileEnd_, buffer_.data(), buffer_.size());
        fileEnd_ += buffer_.size();
        buffer_.clear();
    }

  private:
    static constexpr size_t kFlushBytes = size_t(1) << 20;
    FILE* file_;
    uint64_t& fileEnd_;
    ByteSpool buffer_;
};

// Reads a sorted run of records either from memory or from encoded blocks of a spill file, a
// block read at a time and decoded a record at a time.
template <class T>
class SortedRunCursor {
  public:
    SortedRunCursor(const T* memory, size_t count) : memory_(memory), left_(count) {}
    // blocks: the run's blocks in order; they outlive the cursor.
    SortedRunCursor(FILE* file, const SpillBlock* blocks, size_t blockCount)
        : file_(file), blocks_(blocks), left_(0) {
        for (size_t i = 0; i < blockCount; ++i) left_ += blocks[i].count;
    }
    const T* peek() {
        if (left_ == 0) return nullptr;
        if (memory_) return memory_;
        if (!decoded_) decodeNext();
        return &current_;
    }
    void pop() {
        --left_;
        if (memory_)
            ++memory_;
        else
            decoded_ = false;
    }

  private:
    void decodeNext() {
        if (leftInBlock_ == 0) {
            const SpillBlock& block = *blocks_++;
            encoded_.clear();
            char* into = encoded_.tail(block.bytes);
            spill_file::read(file_, block.offset, into, block.bytes);
            encoded_.advance(into + block.bytes);
            reader_.emplace(std::string_view(encoded_.data(), block.bytes));
            leftInBlock_ = block.count;
        }
        try {
            reader_->next(current_);
        } catch (const Failure&) {
            spill_file::damaged();
        }
        if (--leftInBlock_ == 0 && !reader_->atEnd()) spill_file::damaged();
        decoded_ = true;
    }
    const T* memory_ = nullptr;
    FILE* file_ = nullptr;
    const SpillBlock* blocks_ = nullptr;
    uint64_t left_;
    ByteSpool encoded_;
    std::optional<spill_codec::BlockReader<T>> reader_;  // over encoded_
    uint64_t leftInBlock_ = 0;
    T current_;
    bool decoded_ = false;
};

// Sorts records of many tracks in a fixed memory budget: two buffers of half the budget each; when
// one is full it is sorted and appended to a temporary file as a run (in the background, while
// the other fills). At the end each track's records come back in order by
// merging its segments of every run with what is left in memory.
//
// T is a trivially copyable record with a `uint32_t track` member; Less orders records by track
// first. Records comparing equal must be identical (the order of equal records is not kept).
template <class T, class Less>
class SpillSorter {
  public:
    // budget: records held in memory, in two buffers of half. A buffer is reserved whole (the
    // second at the first spill): pages are only committed as records arrive, and growing by
    // doubling copied the buffer several times on its way there.
    explicit SpillSorter(size_t budget) : half_(std::max<size_t>(budget, kMinBudget) / 2) {
        buffer_.reserve(half_);
    }
    ~SpillSorter() {
        spilling_.join();
        if (file_) std::fclose(file_);
    }
    SpillSorter(const SpillSorter&) = delete;
    SpillSorter& operator=(const SpillSorter&) = delete;

    static constexpr size_t kMinBudget = 1024;

    void push(const T& record) {
        // Each track's records mostly come in order (lines and ranks are added in time order,
        // tracks interleaved; a parent slice written after its children): those stay in the
        // buffer, in order per track, and the few out of order are set aside. A run is then
        // the buffer grouped by track with the set-aside records, sorted, merged in: no sort
        // of the whole buffer (a tenth of a Kineto import's time).
        if (record.track >= lastOfTrack_.size()) {
            lastOfTrack_.resize(size_t(record.track) + 1, kNone);
            countOfTrack_.resize(size_t(record.track) + 1, 0);
        }
        size_t& last = lastOfTrack_[record.track];
        ++countOfTrack_[record.track];
        if (last != kNone && less_(record, buffer_[last])) {
            setAside_.push_back(record);
        } else {
            last = buffer_.size();
            buffer_.push_back(record);
        }
        if (buffer_.size() + setAside_.size() >= half_) spill();
    }
    uint64_t records() const { return total_ + buffer_.size() + setAside_.size(); }
    // Sorted runs written to the spill file so far.
    size_t runs() const {
        spilling_.wait();
        return runs_.size();
    }

    // Forgets every record, keeping the buffers' pages and the spill file for the next ones.
    void clear() {
        spilling_.wait();
        // The buffer filled first in each batch starts the next one, so that a batch smaller
        // than the budget touches no more pages of the two than it holds records.
        buffer_.clear();
        spare_.clear();
        setAside_.clear();
        spareSetAside_.clear();
        if (spillsSinceClear_ % 2 == 1) std::swap(buffer_, spare_);
        spillsSinceClear_ = 0;
        std::fill(lastOfTrack_.begin(), lastOfTrack_.end(), kNone);
        std::fill(countOfTrack_.begin(), countOfTrack_.end(), 0);
        runs_.clear();
        fileEnd_ = 0;
        total_ = 0;
    }

    // Whether every record held, in memory or spilled, belongs to a track below `end`.
    bool onlyBefore(uint32_t end) const {
        spilling_.wait();
        for (size_t t = end; t < countOfTrack_.size(); ++t)
            if (countOfTrack_[t] > 0) return false;
        for (const Run& run : runs_)
            if (!run.segments.empty() && run.segments.rbegin()->first >= end) return false;
        return true;
    }

    // Call once, after the last push: sorts what is still in memory (spilling it grouped
    // instead was slower: one more run to write, read and merge).
    void seal() {
        spilling_.wait();
        if (!std::is_sorted(setAside_.begin(), setAside_.end(), less_))
            std::sort(setAside_.begin(), setAside_.end(), less_);
        const size_t n = buffer_.size() + setAside_.size();
        if (setAside_.empty() && std::is_sorted(buffer_.begin(), buffer_.end(), less_)) return;
        if (spare_.capacity() < n) {
            // No spill came before: no second buffer to group into (it is not made for this).
            buffer_.insert(buffer_.end(), setAside_.begin(), setAside_.end());
            setAside_.clear();
            sortRecords(buffer_);
            return;
        }
        std::vector<uint64_t> next(countOfTrack_.size());  // each track's next place
        for (size_t t = 0, first = 0; t < next.size(); ++t) {
            next[t] = first;
            first += countOfTrack_[t];
        }
        spare_.resize(n);
        mergeSetAside(buffer_, setAside_, next.size(),
                      [&](const T& r) { spare_[next[r.track]++] = r; });
        std::swap(buffer_, spare_);
        spare_.clear();
        setAside_.clear();
    }

    class Reader;

    // Visits the records of one track in order (after seal()).
    template <class Visit>
    void forEach(uint32_t track, Visit&& visit) {
        Reader reader(*this, track);
        while (const T* r = reader.peek()) {
            visit(*r);
            reader.pop();
        }
    }

  private:
    struct ByTrack {
        bool operator()(const T& r, uint32_t track) const { return r.track < track; }
        bool operator()(uint32_t track, const T& r) const { return track < r.track; }
    };
    struct Run {
        std::map<uint32_t, std::vector<SpillBlock>> segments;  // track -> its blocks in order
    };
    using Cursor = SortedRunCursor<T>;

  public:
    // The records of one track in order (after seal()), one at a time: several tracks, or
    // several parts of one, can be read side by side. Readers of one sorter may run on
    // different threads.
    class Reader {
      public:
        Reader(SpillSorter& owner, uint32_t track) : less_(&owner.less_) {
            for (const Run& run : owner.runs_) {
                auto it = run.segments.find(track);
                if (it != run.segments.end())
                    cursors_.push_back(Cursor(owner.file_, it->second.data(), it->second.size()));
            }
            auto [lo, hi] =
                std::equal_range(owner.buffer_.begin(), owner.buffer_.end(), track, ByTrack{});
            if (lo != hi) cursors_.push_back(Cursor(&*lo, size_t(hi - lo)));
            for (size_t i = 0; i < cursors_.size(); ++i) {
                if (!cursors_[i].peek()) continue;
                heap_.push_back(i);
                std::push_heap(heap_.begin(), heap_.end(), after());
            }
            current_ = takeSmallest();
        }
        // The next record; null after the last.
        const T* peek() { return current_ == kNone ? nullptr : cursors_[current_].peek(); }
        void pop() {
            Cursor& cursor = cursors_[current_];
            cursor.pop();
            const T* next = cursor.peek();
            if (!next) {
                current_ = takeSmallest();
                return;
            }
            // Runs often hold long stretches of a track (importers add a line or a rank at a
            // time): a cursor keeps going without heap operations while it stays the smallest.
            if (!heap_.empty() && (*less_)(*cursors_[heap_.front()].peek(), *next)) {
                heap_.push_back(current_);
                std::push_heap(heap_.begin(), heap_.end(), after());
                current_ = takeSmallest();
            }
        }

      private:
        // Heap order: the cursor with the smallest record on top.
        auto after() {
            return [this](size_t a, size_t b) {
                return (*less_)(*cursors_[b].peek(), *cursors_[a].peek());
            };
        }
        size_t takeSmallest() {
            if (heap_.empty()) return kNone;
            std::pop_heap(heap_.begin(), heap_.end(), after());
            const size_t i = heap_.back();
            heap_.pop_back();
            return i;
        }
        const Less* less_;
        std::vector<Cursor> cursors_;
        std::vector<size_t> heap_;
        size_t current_ = kNone;
    };

  private:
    // Importers often add records in order already (a track at a time, by time).
    // Often all but a stretch is (XProf: a line's lanes interleaved, the other lines in order):
    // only the part that is out of place is sorted. Records comparing equal are identical, so
    // the result is the full sort's.
    void sortRecords(std::vector<T>& records) const {
        const auto begin = records.begin(), end = records.end();
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
    // Hands the full buffer to the background spill and goes on with the other.
    void spill() {
        spilling_.wait();  // the other buffer is free again
        if (!file_) file_ = spill_file::create();
        spare_.reserve(half_);
        std::swap(buffer_, spare_);
        std::swap(setAside_, spareSetAside_);
        ++spillsSinceClear_;
        total_ += spare_.size() + spareSetAside_.size();
        spilling_.start([this, counts = countOfTrack_] {
            if (!std::is_sorted(spareSetAside_.begin(), spareSetAside_.end(), less_))
                std::sort(spareSetAside_.begin(), spareSetAside_.end(), less_);
            runs_.push_back(writeGrouped(spare_, spareSetAside_, counts));
            spare_.clear();
            spareSetAside_.clear();
        });
        std::fill(lastOfTrack_.begin(), lastOfTrack_.end(), kNone);
        std::fill(countOfTrack_.begin(), countOfTrack_.end(), 0);
    }
    // Visits `inOrder` (each track's records in order) with the sorted `setAside` merged in:
    // each track's records in order, tracks interleaved as in `inOrder`. Every record's track
    // is below `tracks`.
    template <class Visit>
    void mergeSetAside(const std::vector<T>& inOrder, const std::vector<T>& setAside, size_t tracks,
                       Visit&& visit) const {
        // Each track's set-aside records lie together (the order is by track first).
        std::vector<size_t> next(tracks, 0), end(tracks, 0);
        for (size_t i = setAside.size(); i-- > 0;) next[setAside[i].track] = i;
        for (size_t i = 0; i < setAside.size(); ++i) end[setAside[i].track] = i + 1;
        for (const T& r : inOrder) {
            size_t& a = next[r.track];
            while (a < end[r.track] && less_(setAside[a], r)) visit(setAside[a++]);
            visit(r);
        }
        for (size_t t = 0; t < next.size(); ++t)
            for (size_t a = next[t]; a < end[t]; ++a) visit(setAside[a]);
    }
    // Each track's records in order (with the set-aside ones merged in) go to their track's
    // segment of the run through a small buffer per track, in one pass.
    Run writeGrouped(const std::vector<T>& records, const std::vector<T>& setAside,
                     const std::vector<uint64_t>& counts) {
        Run run;
        SpillAppender out(file_, fileEnd_);
        constexpr size_t kScatter = 1024;
        std::vector<std::vector<T>> pending(counts.size());
        auto flush = [&](uint32_t t) {
            std::vector<T>& p = pending[t];
            run.segments[t].push_back(out.append(p.data(), p.size()));
            p.clear();
        };
        mergeSetAside(records, setAside, counts.size(), [&](const T& r) {
            std::vector<T>& p = pending[r.track];
            if (p.capacity() == 0) p.reserve(kScatter);
            p.push_back(r);
            if (p.size() == kScatter) flush(r.track);
        });
        for (uint32_t t = 0; t < pending.size(); ++t)
            if (!pending[t].empty()) flush(t);
        out.flush();
        return run;
    }
    static constexpr size_t kNone = SIZE_MAX;
    size_t half_;  // records a buffer holds
    Less less_;
    std::vector<T> buffer_;
    std::vector<T> spare_;                // the buffer being spilled, or free
    std::vector<T> setAside_;             // out of order in their track (see push)
    std::vector<T> spareSetAside_;        // of the buffer being spilled
    uint64_t spillsSinceClear_ = 0;       // buffers handed over since clear()
    std::vector<size_t> lastOfTrack_;     // index in buffer_ of each track's last record
    std::vector<uint64_t> countOfTrack_;  // records of each track in buffer_ and setAside_
    std::vector<Run> runs_;               // appended to by the background spill
    FILE* file_ = nullptr;
    uint64_t fileEnd_ = 0;              // the background spill's, between clear()s
    uint64_t total_ = 0;                // spilled or being spilled
    mutable BackgroundSpill spilling_;  // last: joined before the buffers go
};

}  // namespace stallscope::trace
