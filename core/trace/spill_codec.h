#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

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
    uint8_t* p = reinterpret_cast<uint8_t*>(out);
    uint64_t previous[W] = {};
    for (size_t i = 0; i < n; ++i) {
        uint64_t words[W];
        std::memcpy(words, &records[i], sizeof(T));
        for (size_t w = 0; w < W; ++w) {
            const int64_t delta = int64_t(words[w] - previous[w]);  // wraps: any word fits
            uint64_t v = (uint64_t(delta) << 1) ^ uint64_t(delta >> 63);
            while (v >= 0x80) {
                *p++ = uint8_t(v | 0x80);
                v >>= 7;
            }
            *p++ = uint8_t(v);
            previous[w] = words[w];
        }
    }
    return size_t(reinterpret_cast<char*>(p) - out);
}

// A growable array whose new elements are left unset: a vector's resize zeroes them (a quarter
// of a megabyte for each block's room to encode into).
template <class T>
class UnsetBuffer {
  public:
    // Room for n elements; the first `keep` stay as they were.
    T* room(size_t n, size_t keep = 0) {
        if (n > capacity_) {
            const size_t capacity = std::max(n, capacity_ * 2);
            std::unique_ptr<T[]> grown = std::make_unique_for_overwrite<T[]>(capacity);
            if (keep > 0) std::memcpy(grown.get(), data_.get(), keep * sizeof(T));
            data_ = std::move(grown);
            capacity_ = capacity;
        }
        return data_.get();
    }
    T* data() const { return data_.get(); }

  private:
    std::unique_ptr<T[]> data_;
    size_t capacity_ = 0;
};

// Decodes n records from data[0, bytes) into out. The caller's buffer must hold
// maxBytes<T>(1) readable bytes past `bytes` (a damaged block then stops inside them); returns
// false when the block is not n records' encoding.
template <class T>
bool decode(const char* data, size_t bytes, T* out, size_t n) {
    constexpr size_t W = kWords<T>;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(data);
    const uint8_t* const end = p + bytes;
    uint64_t words[W] = {};
    for (size_t i = 0; i < n; ++i) {
        if (p >= end) return false;
        for (size_t w = 0; w < W; ++w) {
            uint64_t v = *p++;
            if (v >= 0x80) {
                v &= 0x7f;
                for (int shift = 7;; shift += 7) {
                    const uint64_t b = *p++;
                    v |= (b & 0x7f) << shift;
                    if (b < 0x80) break;
                    if (shift >= 63) return false;
                }
            }
            words[w] += (v >> 1) ^ (~(v & 1) + 1);
        }
        std::memcpy(&out[i], words, sizeof(T));
    }
    return p == end;
}

}  // namespace stallscope::trace::spill_codec
