// Chakra execution traces (`name.<rank>.et`, optionally gzip): varint-length-framed protobuf,
// one GlobalMetadata then Nodes. Given the rank-0 file of a set, its sibling ranks (same stem,
// ranks 1, 2, ... while they exist) join the same profile, one track per rank. Dependencies
// become flows; nodes without start times are placed by an as-soon-as-possible schedule.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <unordered_map>

#include "core/errors.h"
#include "core/json_escape.h"
#include "core/release_memory.h"
#include "core/trace/dialect.h"
#include "core/trace/rendezvous.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "et_def.pb.h"
#include "importers/chakra/chakra_schedule.h"
#include "importers/chakra/chakra_wire.h"
#include "importers/common/proto_wire.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

using chakra_schedule::NodeRecord;
using chakra_schedule::Position;
using chakra_wire::appendAttributeJson;
using json::appendString;
using trace::FlowBinding;
using trace::FlowEnd;
using trace::TraceWriter;
using trace::TrackKind;
using trace::TrackSpec;

struct RankName {
    std::string stem;       // "/dir/all_gather"
    int rank = -1;          // -1 when the name carries no rank
    std::string extension;  // ".et", ".et.gz", ".et.zst"
};

// "/dir/all_gather.0.et" -> ("/dir/all_gather", 0, ".et").
RankName splitRank(const std::string& path) {
    static const std::regex pattern(R"(^(.*)\.(\d+)(\.et(\.gz|\.zst)?)$)");
    std::smatch m;
    if (std::regex_match(path, m, pattern)) return {m[1].str(), std::stoi(m[2].str()), m[3].str()};
    return {path, -1, ""};
}

// A message's length prefix is a varint of at most 6 bytes (and a length above 2^30 is refused
// as implausible).
constexpr int kMaxLengthPrefix = 6;

// Reads the varint-length-framed messages of a file through a buffer (a byte-at-a-time read
// through the decompressing stream would cost more than the parsing).
class FrameReader {
  public:
    explicit FrameReader(InputFile& in) : in_(in), buf_(size_t(1) << 20) {}
    uint64_t offset() const { return offset_; }

    // One message; false at a clean end of input.
    bool next(std::string_view& out) {
        const uint64_t at = offset_;
        // The whole prefix in the buffer, unless the file ends first.
        if (end_ - pos_ < size_t(kMaxLengthPrefix)) fill(size_t(kMaxLengthPrefix));
        if (pos_ == end_) return false;
        const char* p = buf_.data() + pos_;
        uint64_t length = 0;
        const proto_wire::VarintRead read =
            proto_wire::readVarint<kMaxLengthPrefix>(p, buf_.data() + end_, length);
        if (read == proto_wire::VarintRead::Truncated)
            fail(at, "the file ends inside a length prefix");
        offset_ += uint64_t(p - (buf_.data() + pos_));
        pos_ = size_t(p - buf_.data());
        if (read == proto_wire::VarintRead::TooLong) fail(offset_, "invalid length prefix");
        if (length > (uint64_t(1) << 30))
            fail(offset_, "message length " + std::to_string(length) +
                              " is implausible (not a Chakra trace?)");
        if (end_ - pos_ < length && !fill(size_t(length)))
            fail(offset_ + (end_ - pos_), "the file ends inside a message of " +
                                              std::to_string(length) + " bytes (truncated file?)");
        out = std::string_view(buf_.data() + pos_, size_t(length));
        pos_ += size_t(length);
        offset_ += length;
        return true;
    }

  private:
    // Makes at least `need` bytes available after pos_; false if the input ends first.
    bool fill(size_t need) {
        if (pos_ > 0) {
            std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
            end_ -= pos_;
            pos_ = 0;
        }
        while (end_ < need) {
            // Grown as bytes arrive (at most doubling): a length prefix alone never allocates
            // what the file does not hold.
            if (end_ == buf_.size()) buf_.resize(std::min(need, buf_.size() * 2));
            const size_t got = in_.read(buf_.data() + end_, buf_.size() - end_);
            if (got == 0) return false;
            end_ += got;
        }
        return true;
    }
    [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
        throw InputError(
            atOffset(in_.path(), static_cast<long long>(offset), "Chakra ET: " + what));
    }
    InputFile& in_;
    std::vector<char> buf_;
    size_t pos_ = 0, end_ = 0;
    uint64_t offset_ = 0;
};

// Node id -> position of its first occurrence. Ids are dense in practice (0..n-1): a vector
// then, a hash map otherwise.
class NodeIndex {
  public:
    static constexpr Position kNone = chakra_schedule::kMissingNode;
    explicit NodeIndex(const std::vector<uint64_t>& ids) {
        uint64_t maxId = 0;
        for (uint64_t id : ids) maxId = std::max(maxId, id);
        dense_ = maxId < 4 * uint64_t(ids.size()) + 1024;
        if (dense_) positions_.assign(size_t(maxId) + 1, kNone);
        for (size_t i = 0; i < ids.size(); ++i) {
            if (!dense_)
                sparse_.emplace(ids[i], Position(i));
            else if (positions_[size_t(ids[i])] == kNone)
                positions_[size_t(ids[i])] = Position(i);
        }
    }
    Position find(uint64_t id) const {
        if (dense_) return id < positions_.size() ? positions_[size_t(id)] : kNone;
        const auto it = sparse_.find(id);
        return it == sparse_.end() ? kNone : it->second;
    }

  private:
    bool dense_ = false;
    std::vector<Position> positions_;
    std::unordered_map<uint64_t, Position> sparse_;
};

struct RankResult {
    uint64_t nodes = 0, dependencies = 0, missingDependencies = 0;
    uint64_t timedNodes = 0;  // with a duration (generators may state only sizes and op counts)
    // Collectives without a duration (ASTRA-sim inputs leave communication to the simulator),
    // and the bytes they state.
    uint64_t untimedCollectives = 0, untimedCollectiveBytes = 0;
    // Scheduling only: nodes on a dependency cycle, started once every node outside it that
    // could go had gone (the cycle broken at its first node in file order).
    uint64_t cycleBreaks = 0;
    bool scheduled = false;
    bool hasGlobalMetadata = true;
    std::string version, schema;
    QJsonObject globalAttributes;
    std::map<std::string, uint64_t> types;
    QJsonArray collectives;
};

// "1.0.2-chakra.0.0.4" (the schema attribute of traces without a version) -> "0.0.4"; a schema
// that names no Chakra version ("symbolic_tensor_network") gives none.
std::string versionFromSchema(const std::string& schema) {
    const auto at = schema.find("chakra.");
    return at == std::string::npos ? std::string() : schema.substr(at + 7);
}

// The GlobalMetadata message: the trace's version (from its schema attribute when it has none)
// and its attributes.
void readGlobalMetadata(std::string_view frame, const std::string& path, RankResult& result) {
    std::string_view version;
    std::vector<chakra_wire::Attribute> attributes;
    try {
        chakra_wire::parseGlobalMetadata(frame, version, attributes);
    } catch (const chakra_wire::Malformed&) {
        throw InputError(atOffset(path, 0, "Chakra ET: malformed GlobalMetadata"));
    }
    result.version = std::string(version);
    for (const chakra_wire::Attribute& a : attributes) {
        if (a.name == "schema" && a.value == chakra_wire::kStringVal)
            result.schema = std::string(a.bytes);
        std::string value;
        appendAttributeJson(value, a);
        // Long attributes (e.g. the input file a trace was converted from) are only sized.
        if (value.size() > 512) value = "\"<" + std::to_string(value.size()) + " characters>\"";
        result.globalAttributes.insert(
            QString::fromUtf8(a.name.data(), qsizetype(a.name.size())),
            QJsonDocument::fromJson(QByteArray::fromStdString("[" + value + "]")).array().at(0));
    }
    if (result.version.empty() && !result.schema.empty())
        result.version = versionFromSchema(result.schema);
}

// Node type names by type value, each looked up once (NodeType_Name is a descriptor lookup).
class TypeNames {
  public:
    const std::string& of(int32_t type) {
        if (type < 0 || size_t(type) >= names_.size())
            return chakra::NodeType_Name(chakra::NodeType(type));
        if (!names_[size_t(type)])
            names_[size_t(type)] = &chakra::NodeType_Name(chakra::NodeType(type));
        return *names_[size_t(type)];
    }

  private:
    std::vector<const std::string*> names_ = std::vector<const std::string*>(16, nullptr);
};

// Where comm_type's and comm_size's values sit in a node's args (the last of each wins).
struct CommValues {
    size_t typeAt = 0, typeEnd = 0, sizeAt = 0, sizeEnd = 0;
};

// `,"key":[id,...]`, nothing when `ids` is empty.
void appendIds(std::string& args, const char* key, const std::vector<uint64_t>& ids) {
    if (ids.empty()) return;
    args += ",\"";
    args += key;
    args += "\":[";
    char digits[24];
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) args.push_back(',');
        args.append(digits, std::to_chars(digits, digits + sizeof digits, ids[i]).ptr);
    }
    args.push_back(']');
}

// A node's args as a JSON object: its type, id, attributes and dependencies.
CommValues nodeArgs(const chakra_wire::Node& node, const std::string& typeName, bool collective,
                    std::string& args) {
    CommValues comm;
    args.assign("{\"type\":");
    appendString(args, typeName);
    args += ",\"id\":";
    char digits[24];
    args.append(digits, std::to_chars(digits, digits + sizeof digits, node.id).ptr);
    for (const chakra_wire::Attribute& a : node.attributes) {
        args.push_back(',');
        appendString(args, a.name);
        args.push_back(':');
        const size_t valueAt = args.size();
        int64_t number = 0;
        // Only collectives have a collective type; send/recv nodes carry their own
        // number in comm_type, kept as it is.
        if (collective && a.name == "comm_type" && a.integer(number) &&
            chakra::CollectiveCommType_IsValid(int(number)))
            appendString(args, chakra::CollectiveCommType_Name(chakra::CollectiveCommType(number)));
        else
            appendAttributeJson(args, a);
        if (a.name == "comm_type") {
            comm.typeAt = valueAt;
            comm.typeEnd = args.size();
        } else if (a.name == "comm_size") {
            comm.sizeAt = valueAt;
            comm.sizeEnd = args.size();
        }
    }
    // The dependencies by node id: flows bind by time and depth, which cannot tell apart two
    // zero-length nodes starting together; the step graph (core/graph) follows these.
    appendIds(args, "data_deps", node.dataDeps);
    appendIds(args, "ctrl_deps", node.ctrlDeps);
    args.push_back('}');
    return comm;
}

// A collective node as the profile metadata lists it.
QJsonObject collectiveJson(const chakra_wire::Node& node, int rank, const std::string& args,
                           const CommValues& comm) {
    const auto json = [&](size_t from, size_t to) {
        return from == to ? QJsonValue()
                          : QJsonDocument::fromJson(
                                QByteArray::fromStdString("[" + args.substr(from, to - from) + "]"))
                                .array()
                                .at(0);
    };
    return QJsonObject{{"rank", rank},
                       {"node", qint64(node.id)},
                       {"name", QString::fromUtf8(node.name.data(), qsizetype(node.name.size()))},
                       {"comm_type", json(comm.typeAt, comm.typeEnd)},
                       {"comm_size", json(comm.sizeAt, comm.sizeEnd)}};
}

// A rank's nodes as read, with their dependency ids as one flat list.
struct RankNodes {
    std::vector<NodeRecord> nodes;
    std::vector<uint64_t> ids;  // each node's, until its dependencies are resolved
    std::vector<uint64_t> depIds;
    bool anyStart = false;  // whether any node has a start time
    // Its collectives, sends and receives in file order, and where each is in `nodes`.
    std::vector<trace::CommNode> comms;
    std::vector<Position> commPositions;
};

// What a collective, send or receive says about whom it meets.
trace::CommNode commNode(const chakra_wire::Node& node) {
    trace::CommNode comm;
    comm.kind = node.type == chakra::COMM_SEND_NODE   ? trace::CommNode::Kind::Send
                : node.type == chakra::COMM_RECV_NODE ? trace::CommNode::Kind::Receive
                                                      : trace::CommNode::Kind::Collective;
    const char* peerKey = comm.kind == trace::CommNode::Kind::Send ? "comm_dst" : "comm_src";
    for (const chakra_wire::Attribute& a : node.attributes) {
        int64_t number = 0;
        if (a.name == peerKey && a.integer(number))
            comm.peer = number;
        else if (a.name == "comm_tag" && a.integer(number))
            comm.tag = number;
        else if (a.name == "pg_name" && a.value == chakra_wire::kStringVal)
            comm.group = std::string(a.bytes);
        else if (a.name == "comm_type" && a.integer(number))
            comm.commType =
                chakra::CollectiveCommType_IsValid(int(number))
                    ? chakra::CollectiveCommType_Name(chakra::CollectiveCommType(number))
                    : std::to_string(number);
    }
    return comm;
}

// Adds the node (read at `at`, its name and args stored in `writer`) to `rank`.
void addNode(const chakra_wire::Node& node, const std::string& typeName, const std::string& args,
             TraceWriter& writer, const std::string& path, uint64_t at, RankNodes& rank) {
    // Positions are 32-bit: a rank of 2^32 nodes or dependencies (over 8 GB of file) is refused.
    if (rank.nodes.size() >= chakra_schedule::kMissingNode ||
        rank.depIds.size() + node.dataDeps.size() + node.ctrlDeps.size() >=
            chakra_schedule::kMissingNode)
        throw InputError(atOffset(path, static_cast<long long>(at),
                                  "Chakra ET: more than 4,294,967,294 nodes or dependencies in "
                                  "one rank"));
    NodeRecord r;
    r.name = writer.intern(node.name.empty() ? std::string_view(typeName) : node.name);
    r.args = writer.addArgs(args);
    // Microseconds to ns within int64 (±292 years): a larger time is no time a trace holds.
    constexpr uint64_t kMaxMicros = uint64_t(INT64_MAX / 1000 / 2);
    if (node.startMicros > kMaxMicros || node.durationMicros > kMaxMicros)
        throw InputError(atOffset(path, static_cast<long long>(at),
                                  "Chakra ET: node " + std::to_string(node.id) +
                                      " has a start or duration beyond 146 years"));
    r.start = int64_t(node.startMicros) * 1000;
    r.dur = int64_t(node.durationMicros) * 1000;
    rank.anyStart = rank.anyStart || node.startMicros != 0;
    std::vector<uint64_t>& depIds = rank.depIds;
    r.firstDep = uint32_t(depIds.size());
    depIds.insert(depIds.end(), node.dataDeps.begin(), node.dataDeps.end());
    r.dataDeps = uint32_t(depIds.size() - r.firstDep);
    depIds.insert(depIds.end(), node.ctrlDeps.begin(), node.ctrlDeps.end());
    r.deps = uint32_t(depIds.size() - r.firstDep);
    rank.nodes.push_back(r);
    rank.ids.push_back(node.id);
}

// Reads the rank's Nodes, `frame` the first of them when firstIsNode; counts them by type and
// lists the collectives in `result`.
RankNodes readNodes(FrameReader& frames, std::string_view frame, bool firstIsNode, InputFile& in,
                    TraceWriter& writer, Progress* progress, int rank, RankResult& result) {
    RankNodes read;
    chakra_wire::Node node;
    std::string args;
    TypeNames typeNames;
    std::map<int32_t, uint64_t> typeCounts;
    bool pendingFirst = firstIsNode;  // the first frame, already read, is a Node
    for (;;) {
        const uint64_t at = pendingFirst ? 0 : frames.offset();
        if (!pendingFirst && !frames.next(frame)) break;
        pendingFirst = false;
        try {
            chakra_wire::parseNode(frame, node);
        } catch (const chakra_wire::Malformed&) {
            throw InputError(atOffset(in.path(), static_cast<long long>(at),
                                      "Chakra ET: malformed Node message"));
        }
        const std::string& typeName = typeNames.of(node.type);
        const bool collective = node.type == chakra::COMM_COLL_NODE;
        const CommValues comm = nodeArgs(node, typeName, collective, args);
        ++typeCounts[node.type];
        if (collective) {
            const QJsonObject entry = collectiveJson(node, rank, args, comm);
            if (node.durationMicros == 0) {
                ++result.untimedCollectives;
                result.untimedCollectiveBytes +=
                    uint64_t(std::max<qint64>(0, entry.value("comm_size").toInteger()));
            }
            result.collectives.append(entry);
        }
        if (collective || node.type == chakra::COMM_SEND_NODE ||
            node.type == chakra::COMM_RECV_NODE) {
            read.comms.push_back(commNode(node));
            read.commPositions.push_back(Position(read.nodes.size()));
        }
        addNode(node, typeName, args, writer, in.path(), at, read);
        if (progress && (read.nodes.size() & 0xffff) == 0)
            progress->report(in.fraction(), "reading nodes");
    }
    for (const auto& [type, count] : typeCounts) result.types[typeNames.of(type)] += count;
    return read;
}

// A rank read from its file, before its nodes are placed and written.
struct RankRead {
    RankResult result;
    RankNodes read;
    std::vector<Position> depPositions;  // of each dependency id, NodeIndex::kNone when missing
};

// The nodes as slices on `track`, their dependencies as flows; counts the dependencies found
// and missing in `result`.
void writeNodes(const std::vector<NodeRecord>& nodes, const std::vector<Position>& depPositions,
                TraceWriter& writer, uint32_t track, RankResult& result) {
    for (const NodeRecord& r : nodes) writer.addSlice(track, r.start, r.dur, r.name, r.args);
    const uint32_t dataName = writer.intern("data dependency");
    const uint32_t ctrlName = writer.intern("control dependency");
    for (const NodeRecord& r : nodes) {
        for (uint32_t k = 0; k < r.deps; ++k) {
            const Position d = depPositions[r.firstDep + k];
            if (d == NodeIndex::kNone) {
                ++result.missingDependencies;
                continue;
            }
            ++result.dependencies;
            // Each end binds to its own node's slice (several nodes may start together).
            const NodeRecord& from = nodes[d];
            writer.addFlow(FlowEnd{track, from.start, FlowBinding::Slice, from.args},
                           FlowEnd{track, r.start, FlowBinding::Slice, r.args},
                           k < r.dataDeps ? dataName : ctrlName);
        }
    }
}

// Reads one rank's file: its nodes (their names and args stored in `writer`), placed later.
RankRead readRank(InputFile& in, TraceWriter& writer, Progress* progress, int rank) {
    RankRead out;
    RankResult& result = out.result;
    FrameReader frames(in);
    std::string_view frame;
    if (!frames.next(frame)) throw InputError(in.path() + ": empty Chakra ET file");
    // Traces from before GlobalMetadata (2023) start with their first Node.
    const bool firstIsNode = !chakra_wire::isGlobalMetadata(frame);
    if (!firstIsNode) readGlobalMetadata(frame, in.path(), result);
    result.hasGlobalMetadata = !firstIsNode;

    out.read = readNodes(frames, frame, firstIsNode, in, writer, progress, rank, result);
    const std::vector<NodeRecord>& nodes = out.read.nodes;
    result.nodes = nodes.size();
    for (const NodeRecord& r : nodes) result.timedNodes += r.dur > 0 ? 1 : 0;
    const NodeIndex index(out.read.ids);
    releaseMemory(out.read.ids);
    const std::vector<uint64_t>& depIds = out.read.depIds;
    out.depPositions.resize(depIds.size());
    for (size_t k = 0; k < depIds.size(); ++k) out.depPositions[k] = index.find(depIds[k]);
    releaseMemory(out.read.depIds);
    return out;
}

// What the ranks' rendezvous came to.
struct Meetings {
    trace::Rendezvous matched;
    uint64_t releasedEarly = 0;
    bool joint = false;  // two or more ranks were placed together
};

// Places the ranks without start times ASAP, together: their collectives and send/receive pairs
// meet across them.
Meetings placeRanks(std::vector<RankRead>& ranks, const std::vector<int>& rankNumbers) {
    std::vector<chakra_schedule::RankSchedule> asap;
    std::vector<RankRead*> placed;
    std::vector<std::vector<trace::CommNode>> comms;
    std::vector<int64_t> numbers;
    for (size_t r = 0; r < ranks.size(); ++r) {
        RankRead& rank = ranks[r];
        if (rank.read.anyStart) continue;
        rank.result.scheduled = true;
        asap.push_back({&rank.read.nodes, &rank.depPositions, &rank.read.commPositions});
        placed.push_back(&rank);
        comms.push_back(rank.read.comms);
        numbers.push_back(rankNumbers[r]);
    }
    Meetings out;
    out.joint = asap.size() > 1;
    if (out.joint) out.matched = trace::matchRendezvous(comms, numbers);
    out.releasedEarly = chakra_schedule::scheduleRanks(asap, out.matched);
    for (size_t r = 0; r < asap.size(); ++r) placed[r]->result.cycleBreaks = asap[r].cycleBreaks;
    return out;
}

// The ranks' counts summed, and the profile's metadata from them.
struct Totals {
    QJsonArray ranks, collectives;
    std::map<std::string, uint64_t> typeCounts;
    uint64_t nodes = 0, dependencies = 0, missing = 0, withoutMetadata = 0, cycleBreaks = 0;
    uint64_t timed = 0, untimedCollectives = 0, untimedCollectiveBytes = 0;
    bool scheduled = false;
    std::string version, schema;
    QJsonObject globalAttributes;

    void add(const RankResult& result, int rank, const std::string& file, bool first) {
        nodes += result.nodes;
        timed += result.timedNodes;
        untimedCollectives += result.untimedCollectives;
        untimedCollectiveBytes += result.untimedCollectiveBytes;
        dependencies += result.dependencies;
        missing += result.missingDependencies;
        cycleBreaks += result.cycleBreaks;
        scheduled = scheduled || result.scheduled;
        if (!result.hasGlobalMetadata) ++withoutMetadata;
        if (version.empty()) version = result.version;
        if (schema.empty()) schema = result.schema;
        if (first) globalAttributes = result.globalAttributes;
        for (const auto& [t, n] : result.types) typeCounts[t] += n;
        for (const auto& c : result.collectives) collectives.append(c);
        ranks.append(QJsonObject{{"rank", rank},
                                 {"file", QString::fromStdString(file)},
                                 {"nodes", qint64(result.nodes)},
                                 {"scheduled_asap", result.scheduled},
                                 {"global_metadata_record", result.hasGlobalMetadata}});
    }

    QJsonObject describe(const Meetings& meetings, size_t files) const {
        QJsonObject types;
        for (const auto& [t, n] : typeCounts) types.insert(QString::fromStdString(t), qint64(n));
        QJsonObject meta;
        // Durations are evidence of their own: without them the timeline has no length.
        trace::EvidenceSet evidence = trace::defaultEvidence(trace::Dialect::Chakra);
        if (timed == 0) evidence.remove(trace::Evidence::Durations);
        trace::recordDialect(meta, trace::Dialect::Chakra, evidence);
        meta.insert("timed_nodes", qint64(timed));
        meta.insert("untimed", QJsonObject{{"nodes", qint64(nodes - timed)},
                                           {"collectives", qint64(untimedCollectives)},
                                           {"collective_bytes", qint64(untimedCollectiveBytes)}});
        if (!version.empty()) meta.insert("chakra_version", QString::fromStdString(version));
        if (!schema.empty()) meta.insert("chakra_schema", QString::fromStdString(schema));
        if (!globalAttributes.isEmpty()) meta.insert("global_metadata", globalAttributes);
        meta.insert("ranks", ranks);
        meta.insert("nodes", qint64(nodes));
        meta.insert("node_types", types);
        meta.insert("dependencies", qint64(dependencies));
        meta.insert("missing_dependencies", qint64(missing));
        if (scheduled) meta.insert("cycle_breaks", qint64(cycleBreaks));
        meta.insert("collectives", collectives);
        const trace::Rendezvous& matched = meetings.matched;
        if (meetings.joint)
            meta.insert("rendezvous",
                        QJsonObject{{"collectives", qint64(matched.collectives)},
                                    {"send_receive", qint64(matched.sendReceives)},
                                    {"unmatched", qint64(matched.unmatched)},
                                    {"released_early", qint64(meetings.releasedEarly)}});
        meta.insert("schedule",
                    !scheduled ? "start times from the trace"
                    : meetings.joint
                        ? "nodes carry no start times: placed as soon as their dependencies "
                          "allow (ASAP), using their durations; a collective, and a send with its "
                          "receive, ends its duration after the last of its ranks arrived"
                        : "nodes carry no start times: placed as soon as their dependencies "
                          "allow (ASAP), using their durations");
        meta.insert("ranks_without_global_metadata", qint64(withoutMetadata));
        meta.insert("warnings", warnings(meetings, files));
        return meta;
    }

    QJsonArray warnings(const Meetings& meetings, size_t files) const {
        QJsonArray out;
        if (timed == 0 && nodes > 0)
            out.append(QString("no durations: none of the %1 nodes states a duration (only "
                               "what it computes or moves: op counts, tensor and message "
                               "sizes), so the timeline has no length and steps, transfers "
                               "and what-ifs have no times")
                           .arg(qint64(nodes)));
        if (timed > 0 && untimedCollectives > 0)
            out.append(QString("no durations for %1 collectives (%2 bytes in all): they "
                               "take no time on the timeline, and communication is not in "
                               "the steps' breakdown")
                           .arg(qint64(untimedCollectives))
                           .arg(qint64(untimedCollectiveBytes)));
        if (meetings.matched.unmatched > 0)
            out.append(QString("%1 collectives, sends or receives meet no other rank (no peer "
                               "stated, no matching send or receive, or a rank has fewer "
                               "collectives in their process group): they wait for no one")
                           .arg(qint64(meetings.matched.unmatched)));
        if (meetings.releasedEarly > 0)
            out.append(QString("%1 collectives or send/receive pairs went before all their ranks "
                               "arrived: the ranks reach them in orders that wait for each "
                               "other")
                           .arg(qint64(meetings.releasedEarly)));
        if (withoutMetadata > 0)
            out.append(QString("%1 of %2 rank files have no GlobalMetadata record (written "
                               "before Chakra had one); their first message is a node")
                           .arg(qint64(withoutMetadata))
                           .arg(qint64(files)));
        if (missing > 0)
            out.append(
                QString("%1 dependencies name nodes that are not in the trace; no arrow is drawn")
                    .arg(qint64(missing)));
        if (cycleBreaks > 0)
            out.append(QString("the dependencies form cycles: %1 nodes were placed after "
                               "only the dependencies placed before them (each cycle "
                               "broken at its first node in file order)")
                           .arg(qint64(cycleBreaks)));
        return out;
    }
};

class ChakraImporter : public Importer {
  public:
    std::string format() const override { return "chakra-et"; }
    std::string kind() const override { return "trace"; }
    std::string description() const override {
        return "Chakra execution trace (.et, one file per rank; the rank-0 file brings its "
               "siblings)";
    }
    int detect(const Sniff& sniff) const override {
        const bool named = splitRank(sniff.path).rank >= 0 || sniff.path.ends_with(".et") ||
                           sniff.path.ends_with(".et.gz");
        if (!named || sniff.head.size() < 3) return 0;
        // A varint length, then GlobalMetadata starting with its version (field 1) or its
        // attributes (field 2), both length-delimited.
        const char* p = sniff.head.data();
        const char* const end = p + sniff.head.size();
        uint64_t length = 0;
        if (proto_wire::readVarint<kMaxLengthPrefix>(p, end, length) ==
                proto_wire::VarintRead::Truncated ||
            p == end)
            return 0;
        const char first = *p;
        // Traces older than GlobalMetadata start with a Node: its id (field 1, a varint).
        return first == 0x0a || first == 0x12 ? 85 : first == 0x08 ? 80 : 0;
    }

    // The rank-0 file of a set brings its siblings (same stem, ranks 1, 2, ... while they exist).
    std::vector<std::string> companions(const std::string& path) const override {
        const RankName name = splitRank(path);
        std::vector<std::string> out;
        if (name.rank != 0) return out;
        for (int r = 1;; ++r) {
            const std::string sibling = name.stem + "." + std::to_string(r) + name.extension;
            if (!std::filesystem::exists(sibling)) break;
            out.push_back(sibling);
        }
        return out;
    }

    void run(ImportContext& ctx) const override {
        const RankName name = splitRank(ctx.input.path());
        TraceWriter writer(ctx.workspace, ctx.profileId);
        std::vector<std::string> files{ctx.input.path()};
        for (const std::string& sibling : companions(ctx.input.path())) files.push_back(sibling);
        std::vector<RankRead> reads;
        std::vector<int> rankNumbers;
        for (size_t i = 0; i < files.size(); ++i) {
            const int thisRank = name.rank < 0 ? 0 : name.rank + int(i);
            rankNumbers.push_back(thisRank);
            if (i == 0) {
                reads.push_back(readRank(ctx.input, writer, &ctx.progress, thisRank));
            } else {
                InputFile sibling(files[i]);
                reads.push_back(readRank(sibling, writer, nullptr, thisRank));
                ctx.progress.report(0.5 * double(i + 1) / double(files.size()), "reading ranks");
            }
        }
        const Meetings meetings = placeRanks(reads, rankNumbers);

        TrackSpec group;
        group.kind = TrackKind::Process;
        group.name = std::filesystem::path(name.stem).filename().string();
        const uint32_t groupTrack = writer.addTrack(group);
        Totals totals;
        for (size_t i = 0; i < reads.size(); ++i) {
            TrackSpec spec;
            spec.kind = TrackKind::Thread;
            spec.parent = groupTrack;
            spec.name = "rank " + std::to_string(rankNumbers[i]);
            spec.tid = std::to_string(rankNumbers[i]);
            spec.sortIndex = rankNumbers[i];
            const uint32_t track = writer.addTrack(spec);
            RankRead& rank = reads[i];
            writeNodes(rank.read.nodes, rank.depPositions, writer, track, rank.result);
            releaseMemory(rank.read.nodes);
            releaseMemory(rank.depPositions);
            totals.add(rank.result, rankNumbers[i], files[i], i == 0);
            ctx.progress.report(0.5 + 0.1 * double(i + 1) / double(reads.size()), "placing ranks");
        }
        const trace::TraceSummary summary = writer.finish(
            [&](double f) { ctx.progress.report(0.6 + 0.4 * f, "building timeline"); });
        QJsonObject meta = totals.describe(meetings, files.size());
        meta.insert("trace", trace::summaryJson(summary));
        if (summary.unboundFlows > 0) {
            QJsonArray warnings = meta.value("warnings").toArray();
            warnings.append(QString("%1 dependency arrows found no node slice to attach to")
                                .arg(qint64(summary.unboundFlows)));
            meta.insert("warnings", warnings);
        }
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& chakraImporter() {
    static const ChakraImporter importer;
    return importer;
}

}  // namespace stallscope
