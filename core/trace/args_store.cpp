#include "core/trace/args_store.h"

#include <zstd.h>

#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "core/byte_codec.h"
#include "core/errors.h"
#include "core/json_escape.h"

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
        // Level 1 with a 4 KiB match table: for a chunk of tens of KiB the level's own table
        // (64 KiB) was cleared for every chunk and missed the cache, and made XProf's packed
        // numbers (1.67x) compress at 190 MB/s; this one 250 MB/s for a ratio 0.1-1 % lower.
        ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_hashLog, 10);
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
            const size_t n = ZSTD_compress2(cctx.get(), job->packed.data(), job->packed.size(),
                                            job->raw.data(), job->raw.size());
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

uint64_t ArgsStore::addPacked(uint64_t base, uint32_t layout, const ArgValue* values,
                              size_t count) {
    // Made with plain stores into a buffer sized for the worst case (a byte and a varint or a
    // double per value, a string's bytes): most XProf events add one, and byte-by-byte growth
    // of a string showed in the importer's profile.
    size_t bound = 1 + 2 * 10;
    for (size_t i = 0; i < count; ++i)
        bound += 1 + 10 + (values[i].kind == ArgValue::Kind::String ? values[i].text.size() : 0);
    if (packed_.size() < bound) packed_.resize(bound);
    char* const start = packed_.data();
    char* p = start;
    *p++ = kArgsPacked;
    p = putVarint(p, base);
    p = putVarint(p, layout);
    for (size_t i = 0; i < count; ++i) {
        const ArgValue& v = values[i];
        *p++ = char(v.kind);
        if (v.kind == ArgValue::Kind::Double) {
            std::memcpy(p, &v.number, 8);
            p += 8;
        } else if (v.kind == ArgValue::Kind::String) {
            p = putVarint(p, v.text.size());
            std::memcpy(p, v.text.data(), v.text.size());
            p += v.text.size();
        } else if (v.kind == ArgValue::Kind::Signed) {
            p = putZigzag(p, int64_t(v.number));
        } else {
            p = putVarint(p, v.number);
        }
    }
    chunk_.varint(size_t(p - start));
    chunk_.bytesAppend(std::string_view(start, size_t(p - start)));
    entryAdded();
    return count_;
}

void appendArgValue(std::string& out, const ArgValue& value) {
    char buf[32];
    switch (value.kind) {
        case ArgValue::Kind::Unsigned:
            out.append(buf, std::to_chars(buf, buf + sizeof buf, value.number).ptr);
            break;
        case ArgValue::Kind::Signed:
            out.append(buf, std::to_chars(buf, buf + sizeof buf, int64_t(value.number)).ptr);
            break;
        case ArgValue::Kind::Double: {
            double d;
            std::memcpy(&d, &value.number, 8);
            std::snprintf(buf, sizeof buf, "%.17g", d);
            out += std::isfinite(d) ? buf : "null";
            break;
        }
        case ArgValue::Kind::String:
            json::appendString(out, value.text);
            break;
    }
}

std::string expandPackedArgs(std::string_view entry, const ArgsLayouts& layouts, uint64_t& base) {
    ByteReader in(entry.substr(1));
    base = in.varint();
    const uint64_t layout = in.varint();
    if (layout >= layouts.size()) throw Failure("trace args: packed entry without its layout");
    const std::vector<std::string>& keys = layouts[size_t(layout)];
    std::vector<ArgValue> values(keys.size());
    for (ArgValue& v : values) {
        const uint64_t kind = in.varint();
        v.kind = ArgValue::Kind(kind);
        if (v.kind == ArgValue::Kind::Double) {
            const double d = in.real();
            std::memcpy(&v.number, &d, 8);
        } else if (v.kind == ArgValue::Kind::String) {
            v.text = in.take(in.varint());
        } else if (v.kind == ArgValue::Kind::Signed) {
            v.number = uint64_t(in.zigzag());
        } else if (v.kind == ArgValue::Kind::Unsigned) {
            v.number = in.varint();
        } else {
            throw Failure("trace args: packed value of unknown kind " + std::to_string(kind));
        }
    }
    return packedArgsText(keys, values.data(), values.size());
}

std::string packedArgsText(const std::vector<std::string>& keys, const ArgValue* values,
                           size_t count) {
    std::string out = "{";
    for (size_t i = 0; i < count && i < keys.size(); ++i) {
        if (out.size() > 1) out.push_back(',');
        out += keys[i];
        appendArgValue(out, values[i]);
    }
    return out + "}";
}

void encodeArgsLayout(const std::vector<std::string>& keys, ByteWriter& out) {
    out.varint(keys.size());
    for (const std::string& key : keys) {
        out.varint(key.size());
        out.bytesAppend(key);
    }
}

void decodeArgsLayouts(std::string_view raw, ArgsLayouts& out) {
    ByteReader in(raw);
    while (!in.atEnd()) {
        std::vector<std::string>& keys = out.emplace_back(size_t(in.varint()));
        for (std::string& key : keys) key = std::string(in.take(in.varint()));
    }
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
