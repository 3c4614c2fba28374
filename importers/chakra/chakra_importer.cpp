// Chakra execution traces (`name.<rank>.et`, optionally gzip): varint-length-framed protobuf,
// one GlobalMetadata then Nodes. Given the rank-0 file of a set, its sibling ranks (same stem,
// ranks 1, 2, ... while they exist) join the same profile, one track per rank. Dependencies
// become flows; nodes without start times are placed by an as-soon-as-possible schedule.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <filesystem>
#include <regex>
#include <unordered_map>

#include "errors.h"
#include "et_def.pb.h"
#include "import_service.h"
#include "registry.h"
#include "trace_store.h"
#include "trace_writer.h"

namespace stallscope {

namespace {

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

// Reads one varint-prefixed message; false at a clean end of input.
bool readFrame(InputFile& in, std::string& out, uint64_t& offset) {
    uint64_t length = 0;
    int shift = 0;
    for (;;) {
        char c;
        if (in.read(&c, 1) == 0) {
            if (shift == 0) return false;
            throw InputError(atOffset(in.path(), static_cast<long long>(offset),
                                      "Chakra ET: the file ends inside a length prefix"));
        }
        ++offset;
        length |= uint64_t(uint8_t(c) & 0x7f) << shift;
        if (!(uint8_t(c) & 0x80)) break;
        shift += 7;
        if (shift > 35)
            throw InputError(atOffset(in.path(), static_cast<long long>(offset),
                                      "Chakra ET: invalid length prefix"));
    }
    if (length > (uint64_t(1) << 30))
        throw InputError(atOffset(in.path(), static_cast<long long>(offset),
                                  "Chakra ET: message length " + std::to_string(length) +
                                      " is implausible (not a Chakra trace?)"));
    out.resize(size_t(length));
    size_t done = 0;
    while (done < length) {
        const size_t got = in.read(out.data() + done, size_t(length) - done);
        if (got == 0)
            throw InputError(atOffset(in.path(), static_cast<long long>(offset + done),
                                      "Chakra ET: the file ends inside a message of " +
                                          std::to_string(length) + " bytes (truncated file?)"));
        done += got;
    }
    offset += length;
    return true;
}

QJsonValue attributeJson(const chakra::AttributeProto& a) {
    using A = chakra::AttributeProto;
    switch (a.value_case()) {
        case A::kDoubleVal:
            return a.double_val();
        case A::kFloatVal:
            return double(a.float_val());
        case A::kInt32Val:
            return a.int32_val();
        case A::kInt64Val:
            return qint64(a.int64_val());
        case A::kUint32Val:
            return qint64(a.uint32_val());
        case A::kUint64Val:
            return qint64(a.uint64_val());
        case A::kSint32Val:
            return a.sint32_val();
        case A::kSint64Val:
            return qint64(a.sint64_val());
        case A::kFixed32Val:
            return qint64(a.fixed32_val());
        case A::kFixed64Val:
            return qint64(a.fixed64_val());
        case A::kSfixed32Val:
            return a.sfixed32_val();
        case A::kSfixed64Val:
            return qint64(a.sfixed64_val());
        case A::kBoolVal:
            return a.bool_val();
        case A::kStringVal:
            return QString::fromStdString(a.string_val());
        case A::kBytesVal:
            return QString("<%1 bytes>").arg(a.bytes_val().size());
        case A::kInt64List: {
            QJsonArray arr;
            for (auto v : a.int64_list().values()) arr.append(qint64(v));
            return arr;
        }
        case A::kUint64List: {
            QJsonArray arr;
            for (auto v : a.uint64_list().values()) arr.append(qint64(v));
            return arr;
        }
        case A::kInt32List: {
            QJsonArray arr;
            for (auto v : a.int32_list().values()) arr.append(v);
            return arr;
        }
        case A::kStringList: {
            QJsonArray arr;
            for (const auto& v : a.string_list().values()) arr.append(QString::fromStdString(v));
            return arr;
        }
        default:
            return QJsonValue();
    }
}

struct NodeRecord {
    uint64_t id;
    uint32_t name;
    uint64_t args;
    int64_t start;               // ns; -1 until scheduled
    int64_t dur;                 // ns
    std::vector<uint64_t> deps;  // data then control
    size_t dataDeps;
};

struct RankResult {
    uint64_t nodes = 0, dependencies = 0, missingDependencies = 0;
    bool scheduled = false;
    std::string version;
    std::map<std::string, uint64_t> types;
    QJsonArray collectives;
};

// Reads one rank's file onto `track`.
RankResult readRank(InputFile& in, TraceWriter& writer, uint32_t track, Progress* progress,
                    int rank) {
    RankResult result;
    std::string frame;
    uint64_t offset = 0;
    if (!readFrame(in, frame, offset)) throw InputError(in.path() + ": empty Chakra ET file");
    chakra::GlobalMetadata meta;
    if (!meta.ParseFromString(frame))
        throw InputError(atOffset(in.path(), 0, "Chakra ET: malformed GlobalMetadata"));
    result.version = meta.version();

    std::vector<NodeRecord> nodes;
    std::unordered_map<uint64_t, size_t> index;
    bool anyStart = false;
    chakra::Node node;
    for (;;) {
        const uint64_t at = offset;
        if (!readFrame(in, frame, offset)) break;
        if (!node.ParseFromString(frame))
            throw InputError(atOffset(in.path(), static_cast<long long>(at),
                                      "Chakra ET: malformed Node message"));
        QJsonObject args;
        const std::string typeName = chakra::NodeType_Name(node.type());
        args.insert("type", QString::fromStdString(typeName));
        args.insert("id", qint64(node.id()));
        for (const auto& a : node.attr()) {
            QJsonValue v = attributeJson(a);
            if (a.name() == "comm_type" && v.isDouble() &&
                chakra::CollectiveCommType_IsValid(int(v.toInteger())))
                v = QString::fromStdString(
                    chakra::CollectiveCommType_Name(chakra::CollectiveCommType(v.toInteger())));
            args.insert(QString::fromStdString(a.name()), v);
        }
        ++result.types[typeName];
        if (node.type() == chakra::COMM_COLL_NODE)
            result.collectives.append(QJsonObject{{"rank", rank},
                                                  {"node", qint64(node.id())},
                                                  {"name", QString::fromStdString(node.name())},
                                                  {"comm_type", args.value("comm_type")},
                                                  {"comm_size", args.value("comm_size")}});
        NodeRecord r;
        r.id = node.id();
        r.name = writer.intern(node.name().empty() ? typeName : node.name());
        r.args = writer.addArgs(QJsonDocument(args).toJson(QJsonDocument::Compact).toStdString());
        r.start = int64_t(node.start_time_micros()) * 1000;
        r.dur = int64_t(node.duration_micros()) * 1000;
        anyStart = anyStart || node.start_time_micros() != 0;
        r.deps.assign(node.data_deps().begin(), node.data_deps().end());
        r.dataDeps = r.deps.size();
        r.deps.insert(r.deps.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
        index.emplace(r.id, nodes.size());
        nodes.push_back(std::move(r));
        if (progress && (nodes.size() & 0xfff) == 0)
            progress->report(in.fraction(), "reading nodes");
    }
    result.nodes = nodes.size();

    if (!anyStart) {
        // ASAP: a node starts when the last of its dependencies ends (iterative, in dependency
        // order; nodes in a cycle or with missing dependencies start at their ready ones).
        result.scheduled = true;
        std::vector<int> pending(nodes.size(), 0);
        std::vector<std::vector<size_t>> dependents(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i) {
            nodes[i].start = 0;
            for (uint64_t d : nodes[i].deps) {
                auto it = index.find(d);
                if (it == index.end()) continue;
                ++pending[i];
                dependents[it->second].push_back(i);
            }
        }
        std::vector<size_t> ready;
        for (size_t i = 0; i < nodes.size(); ++i)
            if (pending[i] == 0) ready.push_back(i);
        while (!ready.empty()) {
            const size_t i = ready.back();
            ready.pop_back();
            const int64_t end = nodes[i].start + nodes[i].dur;
            for (size_t j : dependents[i]) {
                nodes[j].start = std::max(nodes[j].start, end);
                if (--pending[j] == 0) ready.push_back(j);
            }
        }
    }
    for (const NodeRecord& r : nodes) writer.addSlice(track, r.start, r.dur, r.name, r.args);
    const uint32_t dataName = writer.intern("data dependency");
    const uint32_t ctrlName = writer.intern("control dependency");
    for (const NodeRecord& r : nodes) {
        for (size_t k = 0; k < r.deps.size(); ++k) {
            auto it = index.find(r.deps[k]);
            if (it == index.end()) {
                ++result.missingDependencies;
                continue;
            }
            ++result.dependencies;
            const NodeRecord& from = nodes[it->second];
            writer.addFlow(FlowEnd{track, from.start, FlowBinding::Enclosing},
                           FlowEnd{track, r.start, FlowBinding::Enclosing},
                           k < r.dataDeps ? dataName : ctrlName);
        }
    }
    return result;
}

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
        size_t i = 0;
        while (i < 5 && i < sniff.head.size() && (uint8_t(sniff.head[i]) & 0x80)) ++i;
        if (i + 1 >= sniff.head.size()) return 0;
        const char first = sniff.head[i + 1];
        return first == 0x0a || first == 0x12 ? 85 : 0;
    }

    void run(ImportContext& ctx) const override {
        const RankName name = splitRank(ctx.input.path());
        const std::string& stem = name.stem;
        const int rank = name.rank;
        TraceWriter writer(ctx.workspace, ctx.profileId);
        TrackSpec group;
        group.kind = TrackKind::Process;
        group.name = std::filesystem::path(stem).filename().string();
        const uint32_t groupTrack = writer.addTrack(group);

        std::vector<std::string> files{ctx.input.path()};
        if (rank == 0) {
            for (int r = 1;; ++r) {
                const std::string sibling = stem + "." + std::to_string(r) + name.extension;
                if (!std::filesystem::exists(sibling)) break;
                files.push_back(sibling);
            }
        }
        QJsonArray ranks, collectives;
        QJsonObject types;
        std::map<std::string, uint64_t> typeCounts;
        uint64_t nodes = 0, dependencies = 0, missing = 0;
        bool scheduled = false;
        std::string version;
        for (size_t i = 0; i < files.size(); ++i) {
            const int thisRank = rank < 0 ? 0 : rank + int(i);
            TrackSpec spec;
            spec.kind = TrackKind::Thread;
            spec.parent = groupTrack;
            spec.name = "rank " + std::to_string(thisRank);
            spec.tid = std::to_string(thisRank);
            spec.sortIndex = thisRank;
            const uint32_t track = writer.addTrack(spec);
            RankResult result;
            if (i == 0) {
                result = readRank(ctx.input, writer, track, &ctx.progress, thisRank);
            } else {
                InputFile sibling(files[i]);
                result = readRank(sibling, writer, track, nullptr, thisRank);
                ctx.progress.report(0.6 * double(i + 1) / double(files.size()), "reading ranks");
            }
            nodes += result.nodes;
            dependencies += result.dependencies;
            missing += result.missingDependencies;
            scheduled = scheduled || result.scheduled;
            version = result.version;
            for (const auto& [t, n] : result.types) typeCounts[t] += n;
            for (const auto& c : result.collectives) collectives.append(c);
            ranks.append(QJsonObject{{"rank", thisRank},
                                     {"file", QString::fromStdString(files[i])},
                                     {"nodes", qint64(result.nodes)},
                                     {"scheduled_asap", result.scheduled}});
        }
        const trace::TraceSummary summary = writer.finish(
            [&](double f) { ctx.progress.report(0.6 + 0.4 * f, "building timeline"); });
        for (const auto& [t, n] : typeCounts) types.insert(QString::fromStdString(t), qint64(n));
        QJsonObject meta;
        meta.insert("chakra_version", QString::fromStdString(version));
        meta.insert("ranks", ranks);
        meta.insert("nodes", qint64(nodes));
        meta.insert("node_types", types);
        meta.insert("dependencies", qint64(dependencies));
        meta.insert("missing_dependencies", qint64(missing));
        meta.insert("collectives", collectives);
        meta.insert("schedule",
                    scheduled ? "nodes carry no start times: placed as soon as their dependencies "
                                "allow (ASAP), using their durations"
                              : "start times from the trace");
        meta.insert("trace", trace::summaryJson(summary));
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& chakraImporter() {
    static const ChakraImporter importer;
    return importer;
}

}  // namespace stallscope
