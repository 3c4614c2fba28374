#include "importers/chakra/chakra_wire.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace stallscope::chakra_wire {

namespace {

enum WireType : uint32_t {
    kVarint = 0,
    kFixed64 = 1,
    kLength = 2,
    kStartGroup = 3,
    kEndGroup = 4,
    kFixed32 = 5
};

// protobuf's default recursion limit: messages and groups nested deeper are refused.
constexpr int kMaxDepth = 100;

// UTF-8 as protobuf verifies string fields: no overlong forms, surrogates or code points past
// U+10FFFF.
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

class Cursor {
  public:
    explicit Cursor(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
    bool done() const { return p_ == end_; }

    uint64_t varint() {
        if (p_ < end_ && !(uint8_t(*p_) & 0x80)) return uint8_t(*p_++);
        uint64_t v = 0;
        for (int i = 0; i < 10; ++i) {
            if (p_ == end_) throw Malformed{};
            const uint8_t b = uint8_t(*p_++);
            v |= uint64_t(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) return v;
        }
        throw Malformed{};  // more than ten bytes
    }
    // A tag: at most five bytes; field number 0 is refused (a tag of 0 ends a message in
    // protobuf, which a whole-message parse refuses).
    void tag(uint32_t& number, uint32_t& wireType) {
        uint32_t v = 0;
        for (int i = 0;; ++i) {
            if (p_ == end_ || i == 5) throw Malformed{};
            const uint8_t b = uint8_t(*p_++);
            v |= uint32_t(b & 0x7f) << (7 * i);  // bits past 32 are dropped, as protobuf does
            if (!(b & 0x80)) break;
        }
        if (v >> 3 == 0) throw Malformed{};  // field number 0
        number = v >> 3;
        wireType = v & 7;
    }
    std::string_view lengthDelimited() {
        // A length is at most five bytes and below 2^31.
        uint32_t n = 0;
        for (int i = 0;; ++i) {
            if (p_ == end_ || i == 5) throw Malformed{};
            const uint8_t b = uint8_t(*p_++);
            if (i == 4 && b >= 0x08) throw Malformed{};
            n |= uint32_t(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) break;
        }
        if (n > size_t(end_ - p_)) throw Malformed{};
        const std::string_view out(p_, n);
        p_ += n;
        return out;
    }
    uint64_t fixed(size_t bytes) {
        if (bytes > size_t(end_ - p_)) throw Malformed{};
        uint64_t v = 0;
        std::memcpy(&v, p_, bytes);  // little-endian host
        p_ += bytes;
        return v;
    }
    // A field the reader does not use (or one with an unexpected wire type: protobuf keeps it
    // as an unknown field).
    void skip(uint32_t number, uint32_t wireType, int depth) {
        switch (wireType) {
            case kVarint:
                varint();
                return;
            case kFixed64:
                fixed(8);
                return;
            case kLength:
                lengthDelimited();
                return;
            case kFixed32:
                fixed(4);
                return;
            case kStartGroup: {
                if (depth + 1 > kMaxDepth) throw Malformed{};
                for (;;) {
                    uint32_t n, w;
                    tag(n, w);
                    if (w == kEndGroup) {
                        if (n != number) throw Malformed{};
                        return;
                    }
                    skip(n, w, depth + 1);
                }
            }
            default:
                throw Malformed{};  // an end group without its start, or wire types 6 and 7
        }
    }

  private:
    const char* p_;
    const char* end_;
};

std::string_view utf8(std::string_view s) {
    if (!validUtf8(s)) throw Malformed{};
    return s;
}

// Walks a repeated scalar field given packed (one length-delimited run) or one value a field;
// `element` is the wire type of an unpacked element.
template <class Visit>
void forEachListValue(std::string_view listMessage, uint32_t element, int depth, Visit&& visit) {
    Cursor c(listMessage);
    while (!c.done()) {
        uint32_t number, wireType;
        c.tag(number, wireType);
        if (number == 1 && wireType == kLength && element != kLength) {
            Cursor packed(c.lengthDelimited());
            if (element != kVarint) {
                const size_t size = element == kFixed64 ? 8 : 4;
                while (!packed.done()) visit(packed.fixed(size), std::string_view());
            } else {
                while (!packed.done()) visit(packed.varint(), std::string_view());
            }
        } else if (number == 1 && wireType == element) {
            if (element == kVarint)
                visit(c.varint(), std::string_view());
            else if (element == kLength)
                visit(0, utf8(c.lengthDelimited()));
            else
                visit(c.fixed(element == kFixed64 ? 8 : 4), std::string_view());
        } else {
            c.skip(number, wireType, depth);
        }
    }
}

// Wire type of one element of a list member's values.
uint32_t listElement(uint32_t value) {
    switch (value) {
        case kDoubleList:
            return kFixed64;
        case kFloatList:
            return kFixed32;
        case kStringList:
            return kLength;
        default:
            return kVarint;
    }
}

bool isList(uint32_t field) {
    return field == kDoubleList || field == kFloatList || field == kInt32List ||
           field == kInt64List || field == kUint32List || field == kUint64List ||
           field == kBoolList || field == kStringList;
}

// Wire type of a scalar value member, 0xff for list members and unknown fields.
uint32_t scalarWireType(uint32_t field) {
    switch (field) {
        case kDoubleVal:
        case kFixed64Val:
        case kSfixed64Val:
            return kFixed64;
        case kFloatVal:
        case kFixed32Val:
        case kSfixed32Val:
            return kFixed32;
        case kInt32Val:
        case kInt64Val:
        case kUint32Val:
        case kUint64Val:
        case kSint32Val:
        case kSint64Val:
        case kBoolVal:
            return kVarint;
        case kStringVal:
        case kBytesVal:
            return kLength;
        default:
            return 0xff;
    }
}

void parseAttribute(std::string_view bytes, Attribute& a, int depth) {
    if (depth > kMaxDepth) throw Malformed{};
    a = Attribute{};
    a.message = bytes;
    Cursor c(bytes);
    while (!c.done()) {
        uint32_t number, wireType;
        c.tag(number, wireType);
        if (number == 1 && wireType == kLength) {
            a.name = utf8(c.lengthDelimited());
        } else if (number == 2 && wireType == kLength) {
            utf8(c.lengthDelimited());  // doc_string: not shown, but verified
        } else if (isList(number) && wireType == kLength) {
            // Validated here; the values are read again when the attribute is shown.
            forEachListValue(c.lengthDelimited(), listElement(number), depth + 1,
                             [](uint64_t, std::string_view) {});
            a.value = AttributeValue(number);
            a.bits = 0;
            a.bytes = {};
        } else if (scalarWireType(number) == wireType) {
            a.value = AttributeValue(number);
            a.bytes = {};
            a.bits = 0;
            if (wireType == kVarint)
                a.bits = c.varint();
            else if (wireType == kFixed64)
                a.bits = c.fixed(8);
            else if (wireType == kFixed32)
                a.bits = c.fixed(4);
            else
                a.bytes = number == kStringVal ? utf8(c.lengthDelimited()) : c.lengthDelimited();
        } else {
            c.skip(number, wireType, depth);
        }
    }
}

// IOInfo: only verified (values, shapes and types are strings).
void verifyIoInfo(std::string_view bytes, int depth) {
    if (depth > kMaxDepth) throw Malformed{};
    Cursor c(bytes);
    while (!c.done()) {
        uint32_t number, wireType;
        c.tag(number, wireType);
        if (number >= 1 && number <= 3 && wireType == kLength)
            utf8(c.lengthDelimited());
        else
            c.skip(number, wireType, depth);
    }
}

void appendDouble(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
}

template <class T>
void appendInteger(std::string& out, T v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

double doubleOf(uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}
float floatOf(uint64_t bits) {
    const auto b = uint32_t(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
int32_t zigzag32(uint64_t v) {
    const auto u = uint32_t(v);
    return int32_t((u >> 1) ^ (~(u & 1) + 1));
}
int64_t zigzag64(uint64_t v) {
    return int64_t((v >> 1) ^ (~(v & 1) + 1));
}

// A list member's values as a JSON array: every occurrence of the member since another value
// member was last set (repeated occurrences of a message member merge, as protobuf does).
void appendList(std::string& out, const Attribute& a) {
    const uint32_t element = listElement(a.value);
    out.push_back('[');
    bool first = true;
    auto visit = [&](uint64_t v, std::string_view s) {
        if (!first) out.push_back(',');
        first = false;
        switch (a.value) {
            case kDoubleList:
                return appendDouble(out, doubleOf(v));
            case kFloatList:
                return appendDouble(out, double(floatOf(v)));
            case kInt64List:
                return appendInteger(out, int64_t(v));
            case kUint64List:
                return appendInteger(out, v);
            case kInt32List:
                return appendInteger(out, int32_t(v));
            case kUint32List:
                return appendInteger(out, uint32_t(v));
            case kBoolList:
                out += v != 0 ? "true" : "false";
                return;
            default:
                return appendJsonString(out, s);
        }
    };
    // Values collected since the member was last (re)started; a JSON text can be cut back.
    const size_t listStart = out.size();
    Cursor c(a.message);
    while (!c.done()) {
        uint32_t number, wireType;
        c.tag(number, wireType);
        const bool member =
            isList(number) ? wireType == kLength : scalarWireType(number) == wireType;
        if (member && number != a.value) {
            // Another member: it clears this one.
            out.resize(listStart);
            first = true;
            c.skip(number, wireType, 0);
        } else if (member) {
            forEachListValue(c.lengthDelimited(), element, 0, visit);
        } else {
            c.skip(number, wireType, 0);
        }
    }
    out.push_back(']');
}

}  // namespace

bool Attribute::integer(int64_t& out) const {
    if (value == kInt64Val) {
        out = int64_t(bits);
        return true;
    }
    if (value == kInt32Val) {
        out = int32_t(bits);
        return true;
    }
    return false;
}

void appendJsonString(std::string& out, std::string_view s) {
    out.push_back('"');
    size_t plain = 0;  // start of the run of characters that need no escape
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c != '"' && c != '\\' && uint8_t(c) >= 0x20) continue;
        out.append(s.data() + plain, i - plain);
        plain = i + 1;
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        }
    }
    out.append(s.data() + plain, s.size() - plain);
    out.push_back('"');
}

void parseNode(std::string_view bytes, Node& out) {
    out.id = 0;
    out.name = {};
    out.type = 0;
    out.startMicros = out.durationMicros = 0;
    out.dataDeps.clear();
    out.ctrlDeps.clear();
    out.attributes.clear();
    Cursor c(bytes);
    while (!c.done()) {
        uint32_t number, wireType;
        c.tag(number, wireType);
        switch (number) {
            case 1:
            case 3:
            case 6:
            case 7:
                if (wireType != kVarint) break;
                {
                    const uint64_t v = c.varint();
                    if (number == 1)
                        out.id = v;
                    else if (number == 3)
                        out.type = int32_t(v);
                    else if (number == 6)
                        out.startMicros = v;
                    else
                        out.durationMicros = v;
                }
                continue;
            case 2:
                if (wireType != kLength) break;
                out.name = utf8(c.lengthDelimited());
                continue;
            case 4:
            case 5: {
                std::vector<uint64_t>& deps = number == 4 ? out.ctrlDeps : out.dataDeps;
                if (wireType == kVarint) {
                    deps.push_back(c.varint());
                } else if (wireType == kLength) {
                    Cursor packed(c.lengthDelimited());
                    while (!packed.done()) deps.push_back(packed.varint());
                } else {
                    break;
                }
                continue;
            }
            case 8:
            case 9:
                if (wireType != kLength) break;
                verifyIoInfo(c.lengthDelimited(), 1);
                continue;
            case 10:
                if (wireType != kLength) break;
                parseAttribute(c.lengthDelimited(), out.attributes.emplace_back(), 1);
                continue;
            default:
                break;
        }
        c.skip(number, wireType, 0);
    }
}

void parseGlobalMetadata(std::string_view bytes, std::string_view& version,
                         std::vector<Attribute>& attributes) {
    version = {};
    attributes.clear();
    Cursor c(bytes);
    while (!c.done()) {
        uint32_t number, wireType;
        c.tag(number, wireType);
        if (number == 1 && wireType == kLength)
            version = utf8(c.lengthDelimited());
        else if (number == 2 && wireType == kLength)
            parseAttribute(c.lengthDelimited(), attributes.emplace_back(), 1);
        else
            c.skip(number, wireType, 0);
    }
}

bool isGlobalMetadata(std::string_view bytes) {
    try {
        Cursor c(bytes);
        while (!c.done()) {
            uint32_t number, wireType;
            c.tag(number, wireType);
            if (wireType != kLength || (number != 1 && number != 2)) return false;
            const std::string_view field = c.lengthDelimited();
            if (number == 2) {
                // A Node's name is text; GlobalMetadata's attribute is a message with a name.
                Attribute attribute;
                parseAttribute(field, attribute, 1);
                if (attribute.name.empty()) return false;
            }
        }
        return true;
    } catch (const Malformed&) {
        return false;
    }
}

void appendAttributeJson(std::string& out, const Attribute& a) {
    switch (a.value) {
        case kDoubleVal:
        case kFixed64Val:
            if (a.value == kDoubleVal) return appendDouble(out, doubleOf(a.bits));
            return appendInteger(out, a.bits);
        case kFloatVal:
            return appendDouble(out, double(floatOf(a.bits)));
        case kInt32Val:
            return appendInteger(out, int32_t(a.bits));
        case kInt64Val:
            return appendInteger(out, int64_t(a.bits));
        case kUint32Val:
            return appendInteger(out, uint32_t(a.bits));
        case kUint64Val:
            return appendInteger(out, a.bits);
        case kSint32Val:
            return appendInteger(out, zigzag32(a.bits));
        case kSint64Val:
            return appendInteger(out, zigzag64(a.bits));
        case kFixed32Val:
            return appendInteger(out, uint32_t(a.bits));
        case kSfixed32Val:
            return appendInteger(out, int32_t(uint32_t(a.bits)));
        case kSfixed64Val:
            return appendInteger(out, int64_t(a.bits));
        case kBoolVal:
            out += a.bits != 0 ? "true" : "false";
            return;
        case kStringVal:
            return appendJsonString(out, a.bytes);
        case kBytesVal:
            return appendJsonString(out, "<" + std::to_string(a.bytes.size()) + " bytes>");
        case kNoValue:
            out += "null";
            return;
        default:
            return appendList(out, a);
    }
}

}  // namespace stallscope::chakra_wire
