// Chakra ET messages read straight from the protobuf wire format (field numbers from
// et_def.proto): generated message objects cost more per node than the rest of the import.
// What the generated parser refuses is refused here too (truncated or overlong varints, lengths
// past the end, invalid wire types, unbalanced groups, invalid UTF-8 in string fields), so a
// file imports, or fails, as it did through protobuf.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "importers/common/proto_wire.h"

namespace stallscope::chakra_wire {

// Thrown for bytes the generated parser would refuse; the caller names the file and offset.
using Malformed = proto_wire::Malformed;

// AttributeProto's value fields (the oneof), by field number.
enum AttributeValue : uint32_t {
    kNoValue = 0,
    kDoubleVal = 3,
    kDoubleList = 4,
    kFloatVal = 5,
    kFloatList = 6,
    kInt32Val = 7,
    kInt32List = 8,
    kInt64Val = 9,
    kInt64List = 10,
    kUint32Val = 11,
    kUint32List = 12,
    kUint64Val = 13,
    kUint64List = 14,
    kSint32Val = 15,
    kSint64Val = 17,
    kFixed32Val = 19,
    kFixed64Val = 21,
    kSfixed32Val = 23,
    kSfixed64Val = 25,
    kBoolVal = 27,
    kBoolList = 28,
    kStringVal = 29,
    kStringList = 30,
    kBytesVal = 31,
};

// One AttributeProto, views into the message's bytes.
struct Attribute {
    std::string_view name;
    AttributeValue value = kNoValue;  // the oneof member set last
    uint64_t bits = 0;                // scalar members: the varint or the fixed-size bits
    std::string_view bytes;           // string_val, bytes_val
    std::string_view message;         // the whole attribute, re-read for list members
    // The value's integer when it is an int32, int64, uint32 or uint64 member (comm_type,
    // comm_src) that fits.
    bool integer(int64_t& out) const;
};

struct Node {
    uint64_t id = 0;
    std::string_view name;
    int32_t type = 0;
    uint64_t startMicros = 0, durationMicros = 0;
    std::vector<uint64_t> dataDeps, ctrlDeps;
    std::vector<Attribute> attributes;
};

// Both throw Malformed. The views stay valid as long as `bytes` does.
void parseNode(std::string_view bytes, Node& out);
void parseGlobalMetadata(std::string_view bytes, std::string_view& version,
                         std::vector<Attribute>& attributes);

// Whether the first message of a file is a GlobalMetadata (version, attributes) rather than a
// Node: traces written before GlobalMetadata existed (astra-sim's of 2023) start with a Node.
// GlobalMetadata has only length-delimited fields 1 and 2, each 2 an AttributeProto; a Node
// has its id (field 1) as a varint and its type, dependencies and times in fields 3 and up.
bool isGlobalMetadata(std::string_view bytes);

// An attribute's value as JSON text; the same text the importer made from protobuf objects.
void appendAttributeJson(std::string& out, const Attribute& attribute);

}  // namespace stallscope::chakra_wire
