#pragma once

// Varints, zigzag varints and raw doubles packed into bytes: the encoding of the packed rows and
// chunks the workspace stores (trace chunks, transfer analyses, kernel metric sets). Kind-neutral,
// so the workspace schema and every kind can use it.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

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

}  // namespace stallscope
