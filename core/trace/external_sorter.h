#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/trace/spill_sorter.h"

namespace stallscope::trace {

// Sorts any number of records in a fixed memory budget and hands them back one at a time: a
// buffer that, when full, is sorted and written to a temporary file as a run; at the end the
// runs and what is left in memory are merged. Unlike SpillSorter (records grouped by track,
// visited a track at a time), the whole sequence comes back in one order.
//
// T is trivially copyable; Less must be a total order on distinct records (records comparing
// equal come back in no particular order).
template <class T, class Less>
class ExternalSorter {
  public:
    // budget: records held in memory, in two buffers of half; a run is written when one fills.
    // A buffer is reserved whole (pages are committed as records arrive): growing by doubling
    // copied it on its way there, into fresh pages each time.
    explicit ExternalSorter(size_t budget) : half_(std::max<size_t>(budget, kMinBudget) / 2) {
        buffer_.reserve(half_);
    }
    ~ExternalSorter() {
        spilling_.join();
        if (file_) std::fclose(file_);
    }
    ExternalSorter(const ExternalSorter&) = delete;
    ExternalSorter& operator=(const ExternalSorter&) = delete;

    static constexpr size_t kMinBudget = 1024;

    void push(const T& record) {
        // Records mostly come in order (ids growing through a file): those stay in the buffer
        // in order and the rest are set aside, so a run is a merge of the buffer with the few
        // set aside, sorted, instead of a sort of all.
        if (!buffer_.empty() && less_(record, buffer_.back()))
            setAside_.push_back(record);
        else
            buffer_.push_back(record);
        if (buffer_.size() + setAside_.size() >= half_) spill();
    }
    uint64_t size() const { return total_ + buffer_.size() + setAside_.size(); }
    size_t runs() const {
        spilling_.wait();
        return runs_.size();
    }

    // After the last push: sorts what is in memory and readies the merge.
    void seal() {
        spilling_.wait();
        if (!setAside_.empty()) {
            sortSetAside(setAside_);
            spare_.resize(buffer_.size() + setAside_.size());
            std::merge(buffer_.begin(), buffer_.end(), setAside_.begin(), setAside_.end(),
                       spare_.begin(), less_);
            std::swap(buffer_, spare_);
            spare_.clear();
            setAside_.clear();
        }
        for (const Run& run : runs_)
            cursors_.emplace_back(file_, run.blocks.data(), run.blocks.size());
        if (!buffer_.empty()) cursors_.emplace_back(buffer_.data(), buffer_.size());
        for (size_t i = 0; i < cursors_.size(); ++i) {
            heap_.push_back(i);
            std::push_heap(heap_.begin(), heap_.end(), CursorAfter{this});
        }
        current_ = takeSmallest();
    }

    // The next record in order (after seal()); false after the last.
    bool next(T& out) {
        if (current_ == kNone) return false;
        Cursor& cursor = cursors_[current_];
        out = *cursor.peek();
        cursor.pop();
        const T* following = cursor.peek();
        if (!following) {
            current_ = takeSmallest();
        } else if (!heap_.empty() && less_(*cursors_[heap_.front()].peek(), *following)) {
            // Runs often continue one another (ids growing through a file): a cursor goes on
            // without heap operations while it stays the smallest.
            heap_.push_back(current_);
            std::push_heap(heap_.begin(), heap_.end(), CursorAfter{this});
            current_ = takeSmallest();
        }
        return true;
    }

  private:
    struct Run {
        std::vector<SpillBlock> blocks;
    };
    using Cursor = SortedRunCursor<T>;
    static constexpr size_t kNone = SIZE_MAX;
    // The heap's top is the cursor with the smallest record.
    struct CursorAfter {
        ExternalSorter* owner;
        bool operator()(size_t a, size_t b) const {
            return owner->less_(*owner->cursors_[b].peek(), *owner->cursors_[a].peek());
        }
    };

    size_t takeSmallest() {
        if (heap_.empty()) return kNone;
        std::pop_heap(heap_.begin(), heap_.end(), CursorAfter{this});
        const size_t i = heap_.back();
        heap_.pop_back();
        return i;
    }

    // Hands the full buffer to the background spill and goes on with the other.
    void spill() {
        spilling_.wait();  // the other buffer is free again
        if (!file_) file_ = spill_file::create();
        spare_.reserve(half_);
        std::swap(buffer_, spare_);
        std::swap(setAside_, spareSetAside_);
        total_ += spare_.size() + spareSetAside_.size();
        spilling_.start([this] {
            sortSetAside(spareSetAside_);
            Run run;
            SpillAppender out(file_, fileEnd_);
            std::vector<T> block(kBlock);
            T* const into = block.data();
            size_t n = 0, i = 0, a = 0;
            const std::vector<T>& inOrder = spare_;
            const std::vector<T>& aside = spareSetAside_;
            while (i < inOrder.size() || a < aside.size()) {
                const bool takeAside =
                    a < aside.size() && (i == inOrder.size() || less_(aside[a], inOrder[i]));
                into[n++] = takeAside ? aside[a++] : inOrder[i++];
                if (n == kBlock) {
                    run.blocks.push_back(out.append(into, n));
                    n = 0;
                }
            }
            if (n > 0) run.blocks.push_back(out.append(into, n));
            out.flush();
            runs_.push_back(std::move(run));
            spare_.clear();
            spareSetAside_.clear();
        });
    }
    // Often in order already (a file's second half of flow ends, each id after the last).
    void sortSetAside(std::vector<T>& records) const {
        if (!std::is_sorted(records.begin(), records.end(), less_))
            std::sort(records.begin(), records.end(), less_);
    }

    size_t half_;  // records a buffer holds
    Less less_;
    std::vector<T> buffer_;
    std::vector<T> spare_;          // the buffer being spilled, or free
    std::vector<T> setAside_;       // out of order (see push)
    std::vector<T> spareSetAside_;  // of the buffer being spilled
    std::vector<Run> runs_;
    std::vector<Cursor> cursors_;
    std::vector<size_t> heap_;  // cursors other than the current one
    size_t current_ = kNone;
    static constexpr size_t kBlock = 4096;  // records a block of a run holds
    FILE* file_ = nullptr;
    uint64_t fileEnd_ = 0;  // the background spill's
    uint64_t total_ = 0;
    mutable BackgroundSpill spilling_;  // last: joined before the buffers go
};

}  // namespace stallscope::trace
