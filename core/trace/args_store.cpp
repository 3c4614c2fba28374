#include "core/trace/args_store.h"

#include <zstd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/errors.h"

namespace stallscope::trace {

// Compresses chunks on a worker; they are stored in order by whoever submits or finishes.
class ArgsStore::Compressor {
  public:
    explicit Compressor(const StoreChunk& store) : store_(store), worker_([this] { work(); }) {}
    ~Compressor() {
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
    const StoreChunk& store_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::unique_ptr<Job>> jobs_;
    bool stop_ = false;
    std::thread worker_;
};

ArgsStore::ArgsStore(StoreChunk store) : store_(std::move(store)) {}

ArgsStore::~ArgsStore() = default;

uint64_t ArgsStore::add(std::string_view json) {
    chunk_.varint(json.size());
    chunk_.bytesAppend(json);
    entryAdded();
    return count_;
}

uint64_t ArgsStore::addOver(uint64_t base, std::string_view own) {
    if (base == 0) return add(own);
    // JSON text never starts with kArgsOverlay, so plain entries read as before.
    ByteWriter head;
    head.bytesAppend(std::string_view(&kArgsOverlay, 1));
    head.varint(base);
    chunk_.varint(head.size() + own.size());
    chunk_.bytesAppend(head.bytes());
    chunk_.bytesAppend(own);
    entryAdded();
    return count_;
}

void ArgsStore::entryAdded() {
    ++count_;
    if (count_ % kArgsPerChunk == 0) submitChunk();
}

void ArgsStore::submitChunk() {
    if (chunk_.size() == 0) return;
    if (!compressor_) compressor_ = std::make_unique<Compressor>(store_);
    compressor_->submit(int64_t((count_ - 1) / kArgsPerChunk), chunk_.release());
}

void ArgsStore::finish() {
    submitChunk();
    if (compressor_) compressor_->finish();
}

}  // namespace stallscope::trace
