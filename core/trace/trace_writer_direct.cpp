// TraceWriter's direct tracks (setDirectTracks): slices held per track as the importer adds them
// in their final order, handed to writer threads once a track is complete, or to the sorter
// when they come out of order.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "core/trace/trace_writer.h"

namespace stallscope::trace {

// Writes complete direct tracks on threads of its own (two: a line's lanes while the next line's
// are, the importer's thread parsing beside them), in the order they are handed over, each
// thread with statistics of its own (joined to the writer's when it is waited for). At most the
// record budget waits in the queue or is being written: beyond that the importer waits.
class TraceWriter::DirectWriter {
  public:
    struct Job {
        uint32_t id;
        TrackState state;
        std::vector<RawSlice> slices;
        size_t names;  // names interned when it was handed over
    };
    struct Written {
        uint32_t id;
        std::vector<int> levels;
        uint32_t maxDepth;
    };
    struct Statistics {
        OpStatistics ops;
        uint64_t overlapping = 0;
    };
    DirectWriter(TraceWriter& writer, uint64_t budget) : writer_(writer), budget_(budget) {
        for (size_t i = 0; i < kThreads; ++i)
            statistics_.push_back(std::make_unique<Statistics>(
                Statistics{OpStatistics(writer.ops_.exactBudget()), 0}));
        for (size_t i = 0; i < kThreads; ++i)
            threads_.emplace_back([this, s = statistics_[i].get()] { work(*s); });
    }
    ~DirectWriter() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (std::thread& thread : threads_) thread.join();
    }
    void submit(Job job) {
        std::unique_lock lock(mutex_);
        changed_.wait(
            lock, [&] { return queued_ == 0 || queued_ + job.slices.size() <= budget_ || error_; });
        if (error_) std::rethrow_exception(error_);
        queued_ += job.slices.size();
        jobs_.push_back(std::move(job));
        changed_.notify_all();
    }
    // Waits until every track handed over is written; what each got, or what one threw.
    std::vector<Written> wait() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return (jobs_.empty() && busy_ == 0) || error_; });
        if (error_) std::rethrow_exception(error_);
        return std::exchange(written_, {});
    }
    // The threads' statistics, theirs alone until wait() returns.
    template <class Visit>
    void forEachStatistics(Visit&& visit) {
        for (const auto& s : statistics_) visit(*s);
    }

  private:
    static constexpr size_t kThreads = 2;
    void work(Statistics& statistics) {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
                if (stop_ || error_) return;
                job = std::move(jobs_.front());
                jobs_.pop_front();
                ++busy_;
            }
            std::exception_ptr error;
            try {
                statistics.ops.reserveNames(job.names);
                writer_.writeSliceTrack(
                    job.id, job.state, SliceSource{nullptr, &job.slices},
                    [this](double) {
                        if (stop_) throw Failure("trace import: abandoned");
                    },
                    statistics.ops, statistics.overlapping);
            } catch (...) {
                error = std::current_exception();
            }
            const size_t records = job.slices.size();
            writer_.spareHeld(std::move(job.slices));
            std::lock_guard lock(mutex_);
            queued_ -= records;
            --busy_;
            if (error) error_ = error;
            written_.push_back({job.id, std::move(job.state.levels), job.state.maxDepth});
            changed_.notify_all();
        }
    }
    TraceWriter& writer_;
    const uint64_t budget_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Job> jobs_;
    std::vector<Written> written_;
    uint64_t queued_ = 0;
    size_t busy_ = 0;  // threads writing a track
    std::atomic<bool> stop_ = false;
    std::exception_ptr error_;
    std::vector<std::unique_ptr<Statistics>> statistics_;
    std::vector<std::thread> threads_;
};

void TraceWriter::DirectWriterStop::operator()(DirectWriter* writer) const {
    delete writer;
}

void TraceWriter::sortTrack(uint32_t track) {
    std::vector<RawSlice>& held = heldSlices_[track];
    for (const RawSlice& r : held) slices_->push(r);
    heldRecords_ -= held.size();
    held = {};
    tracks_[track].direct = false;
}

void TraceWriter::spareHeld(std::vector<RawSlice>&& held) {
    held.clear();
    std::lock_guard lock(spareHeldMutex_);
    spareHeld_.push_back(std::move(held));
    // The largest is kept: a line's lanes are one large track and a few small ones.
    std::sort(spareHeld_.begin(), spareHeld_.end(),
              [](const auto& a, const auto& b) { return a.capacity() > b.capacity(); });
    if (spareHeld_.size() > 1) spareHeld_.resize(1);
}

void TraceWriter::reserveSlices(uint32_t track, size_t count) {
    if (track >= tracks_.size() || !tracks_[track].direct) return;
    std::vector<RawSlice>& held = heldSlices_[track];
    // More than the budget would go to the sorter part way, after holding the budget (and
    // then copying it there): it goes there at once.
    if (held.size() + count > recordBudget_) {
        sortTrack(track);
        return;
    }
    if (held.capacity() >= held.size() + count) return;
    {
        // The smallest spare that fits (they are largest first).
        std::lock_guard lock(spareHeldMutex_);
        for (size_t i = spareHeld_.size(); i-- > 0;) {
            if (spareHeld_[i].capacity() < held.size() + count) continue;
            spareHeld_[i].assign(held.begin(), held.end());
            held.swap(spareHeld_[i]);
            spareHeld_.erase(spareHeld_.begin() + long(i));
            return;
        }
    }
    held.reserve(held.size() + count);
}

void TraceWriter::sortEveryTrack() {
    for (uint32_t t = 0; t < tracks_.size(); ++t)
        if (tracks_[t].direct && !heldSlices_[t].empty()) sortTrack(t);
}

void TraceWriter::finishTracks(const std::vector<uint32_t>& tracks) {
    // Flow ends bind while their own track is written: with flows, tracks wait for finish().
    if (!direct_ || flows_.size() > 0) return;
    for (const uint32_t id : tracks) {
        if (id >= tracks_.size()) continue;
        TrackState& track = tracks_[id];
        if (!track.direct || track.slicesWritten || heldSlices_[id].empty()) continue;
        if (!directWriter_) directWriter_.reset(new DirectWriter(*this, recordBudget_));
        track.slicesWritten = true;
        const uint64_t records = heldSlices_[id].size();
        heldRecords_ -= records;
        slicesHandedOff_ += records;
        directWriter_->submit({id, track, std::exchange(heldSlices_[id], {}), strings_.size()});
    }
}

void TraceWriter::waitDirectTracks() {
    if (!directWriter_) return;
    for (DirectWriter::Written& written : directWriter_->wait()) {
        tracks_[written.id].levels = std::move(written.levels);
        tracks_[written.id].maxDepth = written.maxDepth;
    }
    directWriter_->forEachStatistics([this](DirectWriter::Statistics& s) {
        ops_.merge(s.ops);
        overlapping_ += std::exchange(s.overlapping, 0);
    });
}

}  // namespace stallscope::trace
