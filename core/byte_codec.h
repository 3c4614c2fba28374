#pragma once

// Varints, zigzag varints and raw doubles packed into bytes: the encoding of the packed rows and
// chunks the workspace stores (trace chunks, transfer analyses, kernel metric sets). Kind-neutral,
// so the workspace schema and every kind can use it.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace stallscope {

class ByteWriter {
  public:
    void varint(uint64_t v) {
        if (v < 0x80) {
            bytes_.push_back(char(v));
            return;
        }
        char b[10];
        size_t n = 0;
        while (v >= 0x80) {
            b[n++] = char(v | 0x80);
            v >>= 7;
        }
        b[n++] = char(v);
        bytes_.append(b, n);
    }
    void zigzag(int64_t v) { varint((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }
    void real(double v) {
        char b[8];
        std::memcpy(b, &v, 8);
        bytes_.append(b, 8);
    }
    void bytesAppend(std::string_view b) { bytes_.append(b.data(), b.size()); }
    void reserve(size_t bytes) { bytes_.reserve(bytes); }
    const std::string& bytes() const { return bytes_; }
    // Hands the bytes over without a copy; the writer starts empty with the same capacity.
    std::string release() {
        std::string out;
        out.reserve(bytes_.capacity());
        out.swap(bytes_);
        return out;
    }
    void clear() { bytes_.clear(); }
    size_t size() const { return bytes_.size(); }

  private:
    std::string bytes_;
};

// Reading past the end throws Failure ("trace chunk: truncated ...": the trace chunks were its
// first readers, and the messages stay as they were).
class ByteReader {
  public:
    explicit ByteReader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
    bool atEnd() const { return p_ >= end_; }
    uint64_t varint() {
        // Most values take one byte (names, depths, tags, deltas): those read inline.
        if (p_ < end_ && uint8_t(*p_) < 0x80) return uint8_t(*p_++);
        return longVarint();
    }
    int64_t zigzag() {
        const uint64_t v = varint();
        return int64_t(v >> 1) ^ -int64_t(v & 1);
    }
    double real();
    // The next n bytes, consumed.
    std::string_view take(uint64_t n);
    uint64_t remaining() const { return uint64_t(end_ - p_); }

  private:
    uint64_t longVarint();

    const char* p_;
    const char* end_;
};

// Varints written straight into memory, and read back without bounds checks (lists packed and
// read by the same process: the step analysis's; a spill file's go through ByteReader).
inline char* putVarint(char* out, uint64_t v) {
    while (v >= 0x80) {
        *out++ = char(uint8_t(v) | 0x80);
        v >>= 7;
    }
    *out++ = char(v);
    return out;
}
inline char* putZigzag(char* out, int64_t v) {
    return putVarint(out, (uint64_t(v) << 1) ^ uint64_t(v >> 63));
}
inline uint64_t readVarint(const char*& in) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        const auto b = uint8_t(*in++);
        v |= uint64_t(b & 0x7f) << shift;
        if (b < 0x80) return v;
    }
}
inline int64_t readZigzag(const char*& in) {
    const uint64_t v = readVarint(in);
    return int64_t(v >> 1) ^ -int64_t(v & 1);
}
// Bytes written a record at a time straight into the buffer (std::string::append of a few
// bytes, a memcpy call each, was a tenth of the step analysis): tail() gives room for a record,
// advance() keeps what was written.
class ByteSpool {
  public:
    ByteSpool() = default;
    ByteSpool(ByteSpool&& other) noexcept { swap(other); }
    ByteSpool& operator=(ByteSpool&& other) noexcept {
        ByteSpool(std::move(other)).swap(*this);
        return *this;
    }
    char* tail(size_t most) {
        if (capacity_ < used_ + most) reallocate(std::max(2 * capacity_, used_ + most));
        return bytes_.get() + used_;
    }
    void advance(const char* end) { used_ = size_t(end - bytes_.get()); }
    void clear() { used_ = 0; }
    size_t size() const { return used_; }
    const char* data() const { return bytes_.get(); }
    void reserve(size_t bytes) {
        if (capacity_ < bytes) reallocate(bytes);
    }
    void shrinkToFit() {
        if (capacity_ > used_) reallocate(used_);
    }
    void swap(ByteSpool& other) noexcept {
        bytes_.swap(other.bytes_);
        std::swap(used_, other.used_);
        std::swap(capacity_, other.capacity_);
    }

  private:
    // Not zeroed: room not yet written takes no memory. Grown with realloc, which moves a large
    // buffer's pages (mremap) rather than copying them into fresh ones: growth by copying was
    // most of the step analysis's page faults.
    void reallocate(size_t capacity) {
        void* bytes = std::realloc(bytes_.get(), std::max<size_t>(capacity, 1));
        if (!bytes) throw std::bad_alloc();
        (void)bytes_.release();
        bytes_.reset(static_cast<char*>(bytes));
        capacity_ = capacity;
    }
    struct Free {
        void operator()(char* bytes) const { std::free(bytes); }
    };
    std::unique_ptr<char, Free> bytes_;
    size_t used_ = 0, capacity_ = 0;
};

}  // namespace stallscope
