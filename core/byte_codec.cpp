#include "core/byte_codec.h"

#include "core/errors.h"

namespace stallscope {

uint64_t ByteReader::longVarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p_ >= end_) throw Failure("trace chunk: truncated varint");
        const uint8_t b = uint8_t(*p_++);
        v |= uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    throw Failure("trace chunk: varint too long");
}

double ByteReader::real() {
    if (end_ - p_ < 8) throw Failure("trace chunk: truncated double");
    double v;
    std::memcpy(&v, p_, 8);
    p_ += 8;
    return v;
}

std::string_view ByteReader::take(uint64_t n) {
    if (uint64_t(end_ - p_) < n) throw Failure("trace chunk: truncated bytes");
    std::string_view v(p_, size_t(n));
    p_ += n;
    return v;
}

}  // namespace stallscope
