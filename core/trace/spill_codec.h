#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "core/byte_codec.h"
#include "core/errors.h"

namespace stallscope::trace::spill_codec {

// A spilled block of sorted records: each 8-byte word of a record as the zigzag varint of its
// difference from the same word of the record before (from zero in a block's first record).
// Sorted records differ little from one another (times a few µs apart, the same track and
// name, zero padding), so a 48-byte slice takes about 15 bytes: writing a spill into fresh
// page-cache pages cost about 1 ns a byte here, several times decoding it.
template <class T>
constexpr size_t kWords = sizeof(T) / 8;

// Bytes a block of n records can take at most.
template <class T>
constexpr size_t maxBytes(size_t n) {
    return n * kWords<T> * 10;
}

// Writes the encoding of records[0, n) to out, which has room for maxBytes<T>(n); returns the
// bytes written.
template <class T>
size_t encode(const T* records, size_t n, char* out) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0);
    constexpr size_t W = kWords<T>;
    char* p = out;
    uint64_t previous[W] = {};
    for (size_t i = 0; i < n; ++i) {
        uint64_t words[W];
        std::memcpy(words, &records[i], sizeof(T));
        for (size_t w = 0; w < W; ++w) {
            p = putZigzag(p, int64_t(words[w] - previous[w]));  // wraps: any word fits
            previous[w] = words[w];
        }
    }
    return size_t(p - out);
}

// A block's records read one at a time (the bytes come from a file: read with bounds checks).
template <class T>
class BlockReader {
  public:
    explicit BlockReader(std::string_view block) : in_(block) {}
    // The next record; throws Failure when the block holds no more whole records.
    void next(T& out) {
        for (uint64_t& word : words_) word += uint64_t(in_.zigzag());
        std::memcpy(&out, words_, sizeof(T));
    }
    bool atEnd() const { return in_.atEnd(); }

  private:
    ByteReader in_;
    uint64_t words_[kWords<T>] = {};
};

// Decodes n records from data[0, bytes) into out; false when the block is not n records'
// encoding (cut short, or with bytes left over).
template <class T>
bool decode(const char* data, size_t bytes, T* out, size_t n) {
    BlockReader<T> reader(std::string_view(data, bytes));
    try {
        for (size_t i = 0; i < n; ++i) reader.next(out[i]);
    } catch (const Failure&) {
        return false;
    }
    return reader.atEnd();
}

}  // namespace stallscope::trace::spill_codec
