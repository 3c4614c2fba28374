#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <queue>
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
    // budget: records held in memory before a run is written.
    explicit ExternalSorter(size_t budget) : budget_(std::max<size_t>(budget, kMinBudget)) {}
    ~ExternalSorter() {
        if (file_) std::fclose(file_);
    }
    ExternalSorter(const ExternalSorter&) = delete;
    ExternalSorter& operator=(const ExternalSorter&) = delete;

    static constexpr size_t kMinBudget = 1024;

    void push(const T& record) {
        buffer_.push_back(record);
        if (buffer_.size() >= budget_) spill();
    }
    uint64_t size() const { return total_ + buffer_.size(); }
    size_t runs() const { return runs_.size(); }

    // After the last push: sorts what is in memory and readies the merge.
    void seal() {
        std::sort(buffer_.begin(), buffer_.end(), less_);
        for (const Run& run : runs_) cursors_.emplace_back(file_, run.offset, run.count);
        if (!buffer_.empty()) cursors_.emplace_back(buffer_.data(), buffer_.size());
        for (size_t i = 0; i < cursors_.size(); ++i) heap_.push(i);
    }

    // The next record in order (after seal()); false after the last.
    bool next(T& out) {
        if (heap_.empty()) return false;
        const size_t i = heap_.top();
        heap_.pop();
        out = *cursors_[i].peek();
        cursors_[i].pop();
        if (cursors_[i].peek()) heap_.push(i);
        return true;
    }

  private:
    struct Run {
        uint64_t offset, count;
    };
    using Cursor = SortedRunCursor<T>;
    // The heap's top is the cursor with the smallest record.
    struct CursorAfter {
        ExternalSorter* owner;
        bool operator()(size_t a, size_t b) const {
            return owner->less_(*owner->cursors_[b].peek(), *owner->cursors_[a].peek());
        }
    };

    void spill() {
        if (!file_) file_ = spill_file::create();
        std::sort(buffer_.begin(), buffer_.end(), less_);
        const size_t bytes = buffer_.size() * sizeof(T);
        spill_file::write(file_, fileEnd_, buffer_.data(), bytes);
        runs_.push_back({fileEnd_, buffer_.size()});
        fileEnd_ += bytes;
        total_ += buffer_.size();
        buffer_.clear();
    }

    size_t budget_;
    Less less_;
    std::vector<T> buffer_;
    std::vector<Run> runs_;
    std::vector<Cursor> cursors_;
    std::priority_queue<size_t, std::vector<size_t>, CursorAfter> heap_{CursorAfter{this}};
    FILE* file_ = nullptr;
    uint64_t fileEnd_ = 0;
    uint64_t total_ = 0;
};

}  // namespace stallscope::trace
