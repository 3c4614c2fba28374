#include "importers/chakra/chakra_wire.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/json_escape.h"

namespace stallscope::chakra_wire {

namespace {

using proto_wire::Field;
using proto_wire::kFixed32;
using proto_wire::kFixed64;
using proto_wire::kLength;
using proto_wire::kMaxDepth;
using proto_wire::kVarint;
using proto_wire::Problem;
// Exactly what the generated parser accepts: a file imports, or fails, as it did through it.
using WireReader = proto_wire::Reader<proto_wire::Rules::Protobuf>;

std::string_view utf8(std::string_view s) {
    if (!proto_wire::validUtf8(s)) throw Malformed{Problem::InvalidUtf8, 0};
    return s;
}

// Walks a repeated scalar field given packed (one length-delimited run) or one value a field;
// `element` is the wire type of an unpacked element.
template <class Visit>
void forEachListValue(std::string_view listMessage, uint32_t element, int depth, Visit&& visit) {
    WireReader c(listMessage, 0, depth);
    Field f;
    while (c.next(f)) {
        if (f.number != 1) continue;  // unknown fields: skipped
        if (f.wireType == kLength && element != kLength) {
            WireReader packed(f.bytes);
            if (element == kFixed64) {
                while (!packed.done()) visit(packed.fixed64(), std::string_view());
            } else if (element == kFixed32) {
                while (!packed.done()) visit(packed.fixed32(), std::string_view());
            } else {
                while (!packed.done()) visit(packed.varint(), std::string_view());
            }
        } else if (f.wireType == element) {
            if (element == kLength)
                visit(0, utf8(f.bytes));
            else
                visit(f.value, std::string_view());
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
    if (depth > kMaxDepth) throw Malformed{Problem::TooDeep, 0};
    a = Attribute{};
    a.message = bytes;
    WireReader c(bytes, 0, depth);
    Field f;
    while (c.next(f)) {
        if (f.number == 1 && f.wireType == kLength) {
            a.name = utf8(f.bytes);
        } else if (f.number == 2 && f.wireType == kLength) {
            utf8(f.bytes);  // doc_string: not shown, but verified
        } else if (isList(f.number) && f.wireType == kLength) {
            // Validated here; the values are read again when the attribute is shown.
            forEachListValue(f.bytes, listElement(f.number), depth + 1,
                             [](uint64_t, std::string_view) {});
            a.value = AttributeValue(f.number);
            a.bits = 0;
            a.bytes = {};
        } else if (scalarWireType(f.number) == f.wireType) {
            a.value = AttributeValue(f.number);
            a.bytes = {};
            a.bits = 0;
            if (f.wireType != kLength)
                a.bits = f.value;
            else
                a.bytes = f.number == kStringVal ? utf8(f.bytes) : f.bytes;
        }
    }
}

// IOInfo: only verified (values, shapes and types are strings).
void verifyIoInfo(std::string_view bytes, int depth) {
    if (depth > kMaxDepth) throw Malformed{Problem::TooDeep, 0};
    WireReader c(bytes, 0, depth);
    Field f;
    while (c.next(f))
        if (f.number >= 1 && f.number <= 3 && f.wireType == kLength) utf8(f.bytes);
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
                return json::appendString(out, s);
        }
    };
    // Values collected since the member was last (re)started; a JSON text can be cut back.
    const size_t listStart = out.size();
    WireReader c(a.message);
    Field f;
    while (c.next(f)) {
        const bool member =
            isList(f.number) ? f.wireType == kLength : scalarWireType(f.number) == f.wireType;
        if (member && f.number != a.value) {
            // Another member: it clears this one.
            out.resize(listStart);
            first = true;
        } else if (member) {
            forEachListValue(f.bytes, element, 0, visit);
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
    if ((value == kUint32Val || value == kUint64Val) && bits <= uint64_t(INT64_MAX)) {
        out = int64_t(bits);
        return true;
    }
    return false;
}

void parseNode(std::string_view bytes, Node& out) {
    out.id = 0;
    out.name = {};
    out.type = 0;
    out.startMicros = out.durationMicros = 0;
    out.dataDeps.clear();
    out.ctrlDeps.clear();
    out.attributes.clear();
    WireReader c(bytes);
    Field f;
    while (c.next(f)) {
        // Fields of another wire type than the schema's are unknown fields: skipped.
        switch (f.number) {
            case 1:
                if (f.wireType == kVarint) out.id = f.value;
                break;
            case 3:
                if (f.wireType == kVarint) out.type = int32_t(f.value);
                break;
            case 6:
                if (f.wireType == kVarint) out.startMicros = f.value;
                break;
            case 7:
                if (f.wireType == kVarint) out.durationMicros = f.value;
                break;
            case 2:
                if (f.wireType == kLength) out.name = utf8(f.bytes);
                break;
            case 4:
            case 5: {
                std::vector<uint64_t>& deps = f.number == 4 ? out.ctrlDeps : out.dataDeps;
                if (f.wireType == kVarint) {
                    deps.push_back(f.value);
                } else if (f.wireType == kLength) {
                    WireReader packed(f.bytes);
                    while (!packed.done()) deps.push_back(packed.varint());
                }
                break;
            }
            case 8:
            case 9:
                if (f.wireType == kLength) verifyIoInfo(f.bytes, 1);
                break;
            case 10:
                if (f.wireType == kLength)
                    parseAttribute(f.bytes, out.attributes.emplace_back(), 1);
                break;
            default:
                break;
        }
    }
}

void parseGlobalMetadata(std::string_view bytes, std::string_view& version,
                         std::vector<Attribute>& attributes) {
    version = {};
    attributes.clear();
    WireReader c(bytes);
    Field f;
    while (c.next(f)) {
        if (f.number == 1 && f.wireType == kLength)
            version = utf8(f.bytes);
        else if (f.number == 2 && f.wireType == kLength)
            parseAttribute(f.bytes, attributes.emplace_back(), 1);
    }
}

bool isGlobalMetadata(std::string_view bytes) {
    try {
        WireReader c(bytes);
        Field f;
        while (c.next(f)) {
            if (f.wireType != kLength || (f.number != 1 && f.number != 2)) return false;
            if (f.number == 2) {
                // A Node's name is text; GlobalMetadata's attribute is a message with a name.
                Attribute attribute;
                parseAttribute(f.bytes, attribute, 1);
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
            return appendInteger(out, proto_wire::zigzag32(a.bits));
        case kSint64Val:
            return appendInteger(out, proto_wire::zigzag64(a.bits));
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
            return json::appendString(out, a.bytes);
        case kBytesVal:
            return json::appendString(out, "<" + std::to_string(a.bytes.size()) + " bytes>");
        case kNoValue:
            out += "null";
            return;
        default:
            return appendList(out, a);
    }
}

}  // namespace stallscope::chakra_wire
