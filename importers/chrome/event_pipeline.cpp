#include "importers/chrome/event_pipeline.h"

#include <cstring>
#include <utility>

namespace stallscope::chrome {

namespace {

// Batches parsed ahead of the caller: enough to keep both threads busy through an uneven
// window, few enough to bound memory (a 4 MiB window holds about 40,000 events).
constexpr size_t kBatchesAhead = 2;

}  // namespace

bool EventReader::nextBatch(EventBatch& batch) {
    batch.events.clear();
    batchMode_ = true;
    scratchUsed_ = 0;
    bool more = true;
    for (;;) {
        RawEvent event;
        // The window may move only while the batch holds nothing that points into it.
        const Step got = step(event, batch.events.empty());
        if (got == Step::Event) {
            batch.events.push_back(event);
            continue;
        }
        more = got == Step::NeedInput;
        break;
    }
    // The batch keeps the window and the unescaped strings its events point into; the reader
    // goes on in the batch's previous buffer with the unread rest of this window.
    std::vector<char> next = std::move(batch.bytes);
    next.resize(std::max(next.size(), buf_.size()));
    std::memcpy(next.data(), buf_.data() + pos_, end_ - pos_);
    batch.bytes = std::exchange(buf_, std::move(next));
    base_ += pos_;
    end_ -= pos_;
    pos_ = 0;
    batch.scratch.swap(scratch_);
    scratchUsed_ = 0;
    batch.fraction = input_.fraction();
    return more || !batch.events.empty();
}

EventPipeline::EventPipeline(EventReader& reader) : reader_(reader) {
    worker_ = std::thread([this] { parse(); });
}

EventPipeline::~EventPipeline() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    worker_.join();
}

void EventPipeline::parse() {
    try {
        for (;;) {
            std::unique_ptr<EventBatch> batch;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [this] { return stop_ || ready_.size() < kBatchesAhead; });
                if (stop_) break;
                if (!spare_.empty()) {
                    batch = std::move(spare_.back());
                    spare_.pop_back();
                }
            }
            if (!batch) batch = std::make_unique<EventBatch>();
            const bool more = reader_.nextBatch(*batch);
            std::lock_guard lock(mutex_);
            if (!more) break;
            ready_.push_back(std::move(batch));
            changed_.notify_all();
        }
    } catch (...) {
        std::lock_guard lock(mutex_);
        error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    finished_ = true;
    changed_.notify_all();
}

const EventBatch* EventPipeline::next() {
    std::unique_lock lock(mutex_);
    if (current_) spare_.push_back(std::move(current_));
    changed_.notify_all();
    changed_.wait(lock, [this] { return !ready_.empty() || finished_; });
    if (ready_.empty()) {
        if (error_) std::rethrow_exception(error_);
        return nullptr;
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    changed_.notify_all();
    return current_.get();
}

}  // namespace stallscope::chrome
