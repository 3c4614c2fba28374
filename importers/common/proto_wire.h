// The protobuf wire format read without generated classes: building message objects for
// millions of events (XProf) or nodes (Chakra) cost more than the rest of an import. One varint
// decoder and one field reader serve every importer; what differs between them is spelled out
// as Rules, so each format keeps accepting exactly the files it always accepted.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace stallscope::proto_wire {

enum WireType : uint32_t {
    kVarint = 0,
    kFixed64 = 1,
    kLength = 2,
    kStartGroup = 3,
    kEndGroup = 4,
    kFixed32 = 5,
};

// protobuf's default recursion limit: messages and groups nested deeper are refused.
constexpr int kMaxDepth = 100;
// A varint is at most ten bytes (64 bits in groups of 7).
constexpr int kMaxVarintBytes = 10;

enum class VarintRead : uint8_t { Ok, Truncated, TooLong };

// The varint at `p` of at most MaxBytes bytes, `p` moved past it. Bits past 64 are dropped (the
// tenth byte counts for its lowest bit only), as protobuf does. Truncated: the data ends inside
// it, `p` at the end; TooLong: MaxBytes bytes all continue, `p` after them.
template <int MaxBytes = kMaxVarintBytes>
inline VarintRead readVarint(const char*& p, const char* end, uint64_t& v) {
    static_assert(MaxBytes >= 1 && MaxBytes <= kMaxVarintBytes);
    // Tags and small values are one byte: most varints of a trace.
    if (p < end && !(uint8_t(*p) & 0x80)) {
        v = uint8_t(*p++);
        return VarintRead::Ok;
    }
    v = 0;
    for (int i = 0; i < MaxBytes; ++i) {
        if (p == end) return VarintRead::Truncated;
        const uint8_t b = uint8_t(*p++);
        v |= uint64_t(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) return VarintRead::Ok;
    }
    return VarintRead::TooLong;
}

inline int64_t zigzag64(uint64_t v) {
    return int64_t((v >> 1) ^ (~(v & 1) + 1));
}
// sint32: the low 32 bits of the varint, zigzag-decoded.
inline int32_t zigzag32(uint64_t v) {
    const auto u = uint32_t(v);
    return int32_t((u >> 1) ^ (~(u & 1) + 1));
}

// UTF-8 as protobuf verifies proto3 string fields: no overlong forms, surrogates or code
// points past U+10FFFF.
bool validUtf8(std::string_view s);

// What a reader found wrong, and where: the offset counts from the start of the outermost
// buffer (a Reader's `base` plus its position).
enum class Problem : uint8_t {
    TruncatedVarint,    // the data ends inside a varint
    VarintTooLong,      // more bytes than the rules allow it
    FixedPastEnd,       // a fixed32/fixed64 value runs past the end
    LengthPastEnd,      // a length-delimited field runs past the end
    LengthTooLarge,     // a length of 2^31 or more (Rules::Protobuf)
    InvalidWireType,    // wire type 6 or 7, or a group where the rules refuse them
    FieldNumberZero,    // (Rules::Protobuf)
    UnmatchedEndGroup,  // an end-group tag without its start, or ending another group
    UnendedGroup,       // the data ends inside a group
    TooDeep,            // nested past kMaxDepth
    InvalidUtf8,        // in a string field (checked by whoever knows the field is one)
};
struct Malformed {
    Problem problem;
    size_t offset;
    uint32_t wireType = 0;  // InvalidWireType: the one found
};
// What went wrong, in words (without the offset).
std::string describe(const Malformed& error);

// The rules a reader applies; each format keeps the ones its files were always read with.
enum class Rules {
    // Exactly what protobuf's generated parser accepts (Chakra: files import or fail as they
    // did through it): a tag is at most 5 bytes (bits past 32 dropped) and names a field above
    // 0; a length is at most 5 bytes and below 2^31; groups are skipped as unknown fields,
    // nested at most kMaxDepth deep with their end tags matched; values are varints of up to 10
    // bytes.
    Protobuf,
    // XSpace's: tags and lengths are plain varints of up to 10 bytes, the field number is bits
    // 3..34 of the tag (0 allowed: an unknown field); groups are refused as invalid wire types.
    Plain,
};

// One field: its number and wire type; a varint's value or a fixed value's bits
// (little-endian) in `value`, a length-delimited payload (or a group's contents) in `bytes`.
struct Field {
    uint32_t number = 0;
    uint32_t wireType = 0;
    uint64_t value = 0;
    std::string_view bytes;
    size_t offset = 0;  // of the tag, from the start of the outermost buffer
};

// Walks the fields of one serialized message. Throws Malformed.
template <Rules R>
class Reader {
  public:
    // base: offset of `data` in the outermost buffer (for errors); depth: how deep this
    // message is nested (groups inside it count on from there).
    explicit Reader(std::string_view data, size_t base = 0, int depth = 0)
        : begin_(data.data()),
          p_(data.data()),
          end_(data.data() + data.size()),
          base_(base),
          depth_(depth) {}

    bool done() const { return p_ == end_; }
    size_t offset() const { return base_ + size_t(p_ - begin_); }
    // Bytes read so far.
    size_t consumed() const { return size_t(p_ - begin_); }

    // The next field, its value or payload read (and a group skipped); false at the end.
    // Always inlined, one dispatch on the wire type: Chakra's node parsing runs this per field.
    [[gnu::always_inline]] bool next(Field& f) {
        if (p_ == end_) return false;
        f.offset = offset();
        tag(f);
        switch (f.wireType) {
            case kVarint:
                f.value = varint();
                f.bytes = {};
                break;
            case kLength: {
                const uint64_t n = length();
                if (n > uint64_t(end_ - p_)) fail(Problem::LengthPastEnd, f.offset);
                f.value = n;
                f.bytes = std::string_view(p_, size_t(n));
                p_ += n;
                break;
            }
            case kFixed64:
                f.value = fixed(8, f.offset);
                f.bytes = {};
                break;
            case kFixed32:
                f.value = fixed(4, f.offset);
                f.bytes = {};
                break;
            default: {
                refuseGroupsOrInvalid(f);
                const char* const from = p_;
                const char* const to = skipGroup(f.number, depth_ + 1);
                f.value = 0;
                f.bytes = std::string_view(from, size_t(to - from));
            }
        }
        return true;
    }

    // The next field's tag, and a varint's value or a length-delimited field's length in
    // `value`; the payload (fixed bytes, length-delimited bytes, a group) is left unread for
    // whoever holds it (a stream). False at the end.
    bool header(Field& f) {
        if (p_ == end_) return false;
        f.offset = offset();
        f.bytes = {};
        f.value = 0;
        tag(f);
        switch (f.wireType) {
            case kVarint:
                f.value = varint();
                break;
            case kLength:
                f.value = length();
                break;
            case kFixed64:
            case kFixed32:
                break;
            default:
                refuseGroupsOrInvalid(f);
        }
        return true;
    }

    // Values of a packed repeated field, one after another.
    uint64_t varint() {
        uint64_t v;
        const VarintRead read = readVarint(p_, end_, v);
        if (read != VarintRead::Ok) failVarint(read);
        return v;
    }
    uint64_t fixed64() { return fixed(8, offset()); }
    uint32_t fixed32() { return uint32_t(fixed(4, offset())); }

  private:
    void tag(Field& f) {
        uint64_t v;
        if constexpr (R == Rules::Protobuf) {
            const VarintRead read = readVarint<5>(p_, end_, v);
            if (read != VarintRead::Ok) failVarint(read);
            const auto t = uint32_t(v);  // bits past 32 are dropped, as protobuf does
            f.number = t >> 3;
            f.wireType = t & 7;
            if (f.number == 0) fail(Problem::FieldNumberZero, f.offset);
        } else {
            v = varint();
            f.number = uint32_t(v >> 3);
            f.wireType = uint32_t(v & 7);
        }
    }
    uint64_t length() {
        if constexpr (R == Rules::Protobuf) {
            const size_t at = offset();
            uint64_t n;
            const VarintRead read = readVarint<5>(p_, end_, n);
            if (read != VarintRead::Ok) failVarint(read);
            if (n >= (uint64_t(1) << 31)) fail(Problem::LengthTooLarge, at);
            return n;
        } else {
            return varint();
        }
    }
    uint64_t fixed(size_t bytes, size_t fieldOffset) {
        if (bytes > size_t(end_ - p_)) fail(Problem::FixedPastEnd, fieldOffset);
        uint64_t v = 0;
        std::memcpy(&v, p_, bytes);  // little-endian host
        p_ += bytes;
        return v;
    }
    // Returns for a group's start (the rules skip groups); throws for anything else: an end
    // group with no start, wire types 6 and 7, or any group where the rules refuse them.
    void refuseGroupsOrInvalid(const Field& f) const {
        if constexpr (R == Rules::Protobuf) {
            if (f.wireType == kStartGroup) return;
            if (f.wireType == kEndGroup) fail(Problem::UnmatchedEndGroup, f.offset);
        }
        fail(Problem::InvalidWireType, f.offset, f.wireType);
    }
    // Past the group `number` opened at nesting `depth`; returns where its end tag starts.
    const char* skipGroup(uint32_t number, int depth);
    [[noreturn]] void failVarint(VarintRead read) const {
        fail(read == VarintRead::Truncated ? Problem::TruncatedVarint : Problem::VarintTooLong,
             offset());
    }
    [[noreturn]] static void fail(Problem problem, size_t offset, uint32_t wireType = 0) {
        throw Malformed{problem, offset, wireType};
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    size_t base_;
    int depth_;
};

template <Rules R>
const char* Reader<R>::skipGroup(uint32_t number, int depth) {
    if (depth > kMaxDepth) fail(Problem::TooDeep, offset());
    for (;;) {
        if (p_ == end_) fail(Problem::UnendedGroup, offset());
        const char* const at = p_;
        Field f;
        f.offset = offset();
        tag(f);
        if (f.wireType == kEndGroup) {
            if (f.number != number) fail(Problem::UnmatchedEndGroup, f.offset);
            return at;
        }
        switch (f.wireType) {
            case kVarint:
                varint();
                break;
            case kFixed64:
                fixed(8, f.offset);
                break;
            case kFixed32:
                fixed(4, f.offset);
                break;
            case kLength: {
                const uint64_t n = length();
                if (n > uint64_t(end_ - p_)) fail(Problem::LengthPastEnd, f.offset);
                p_ += n;
                break;
            }
            case kStartGroup:
                skipGroup(f.number, depth + 1);
                break;
            default:
                fail(Problem::InvalidWireType, f.offset, f.wireType);
        }
    }
}

}  // namespace stallscope::proto_wire
