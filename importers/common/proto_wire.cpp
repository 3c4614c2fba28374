#include "importers/common/proto_wire.h"

namespace stallscope::proto_wire {

bool validUtf8(std::string_view s) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    const auto* end = p + s.size();
    while (p < end) {
        // Eight ASCII bytes at a time: the common case.
        if (end - p >= 8) {
            uint64_t word;
            std::memcpy(&word, p, 8);
            if ((word & 0x8080808080808080ull) == 0) {
                p += 8;
                continue;
            }
        }
        const uint8_t c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        size_t n;
        uint8_t lo = 0x80, hi = 0xbf;  // allowed range of the second byte
        if (c >= 0xc2 && c <= 0xdf) {
            n = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 3;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 4;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
        } else {
            return false;
        }
        if (size_t(end - p) < n) return false;
        if (p[1] < lo || p[1] > hi) return false;
        for (size_t k = 2; k < n; ++k)
            if ((p[k] & 0xc0) != 0x80) return false;
        p += n;
    }
    return true;
}

std::string describe(const Malformed& error) {
    switch (error.problem) {
        case Problem::TruncatedVarint:
            return "truncated varint (truncated file?)";
        case Problem::VarintTooLong:
            return "varint too long";
        case Problem::FixedPastEnd:
            return "a fixed-size field runs past the end";
        case Problem::LengthPastEnd:
            return "a length-delimited field runs past the end (truncated file?)";
        case Problem::LengthTooLarge:
            return "a length of 2 GiB or more";
        case Problem::InvalidWireType:
            return "invalid protobuf wire type " + std::to_string(error.wireType);
        case Problem::FieldNumberZero:
            return "field number 0";
        case Problem::UnmatchedEndGroup:
            return "an end-group tag that closes no open group";
        case Problem::UnendedGroup:
            return "a group without its end tag";
        case Problem::TooDeep:
            return "messages nested more than " + std::to_string(kMaxDepth) + " deep";
        case Problem::InvalidUtf8:
            return "invalid UTF-8 in a string field";
    }
    return "malformed protobuf";
}

}  // namespace stallscope::proto_wire
