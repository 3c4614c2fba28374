// Replay traces: the JSON Lines form (CONTRACT §1) and the binary form (replay.proto).
#include <simdjson.h>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "core/checked_number.h"
#include "core/errors.h"
#include "core/replay/codec.h"
#include "core/replay/instruction_stream.h"
#include "importers/import_service.h"
#include "importers/registry.h"
#include "importers/replay/replay_reader.h"

namespace stallscope {

namespace {

using replay::InstrRecord;
using replay::InstructionStreamBuilder;
using replay::InstructionStreamError;

// Machine and hlo records are rare: parse them with QJson for clear code; instructions go
// through simdjson.
replay::Machine parseMachine(const QJsonObject& o) {
    replay::Machine m;
    m.name = o.value("name").toString().toStdString();
    m.clockGhz = o.value("clock_ghz").toDouble(1.0);
    if (m.clockGhz <= 0) throw InstructionStreamError("clock_ghz must be positive");
    for (const auto& v : o.value("spaces").toArray()) {
        const QJsonObject s = v.toObject();
        if (!s.value("name").isString()) throw InstructionStreamError("a space without a name");
        const auto bytes = integralIfInRange<uint64_t>(s.value("bytes").toDouble(0));
        if (!bytes)
            throw InstructionStreamError("space bytes must be a whole number from 0 to 2^64");
        m.spaces.push_back({s.value("name").toString().toStdString(), *bytes});
    }
    for (const auto& v : o.value("links").toArray()) {
        const QJsonObject l = v.toObject();
        replay::Link link;
        const std::string src = l.value("src").toString().toStdString();
        const std::string dst = l.value("dst").toString().toStdString();
        link.src = m.findSpace(src);
        link.dst = m.findSpace(dst);
        if (link.src == replay::kNone || link.dst == replay::kNone)
            throw InstructionStreamError("link " + src + "->" + dst + " names an undeclared space");
        const auto latency = integralIfInRange<uint32_t>(l.value("base_latency").toDouble(0));
        if (!latency)
            throw InstructionStreamError("link " + src + "->" + dst +
                                         " needs a base_latency from 0 to 2^32 cycles");
        link.baseLatency = *latency;
        link.bytesPerCycle = l.value("bytes_per_cycle").toDouble(0);
        if (link.bytesPerCycle <= 0)
            throw InstructionStreamError("link " + src + "->" + dst +
                                         " needs a positive bytes_per_cycle");
        m.links.push_back(link);
    }
    if (o.contains("dcache")) {
        const QJsonObject d = o.value("dcache").toObject();
        replay::DcacheGeometry g;
        const std::string space = d.value("space").toString().toStdString();
        g.space = m.findSpace(space);
        if (g.space == replay::kNone)
            throw InstructionStreamError("dcache space '" + space + "' is undeclared");
        const auto pageBytes = integralIfInRange<uint32_t>(d.value("page_bytes").toDouble(512));
        const auto bucketPages = integralIfInRange<uint32_t>(d.value("bucket_pages").toDouble(256));
        g.pageBytes = pageBytes.value_or(0);
        g.bucketPages = bucketPages.value_or(0);
        if (g.pageBytes == 0 || g.bucketPages == 0)
            throw InstructionStreamError(
                "dcache page_bytes and bucket_pages must be positive whole numbers "
                "below 2^32");
        m.dcache = g;
    }
    for (const auto& v : o.value("lightweight").toArray())
        m.lightweight.push_back(v.toString().toStdString());
    return m;
}

// simdjson's DOM parser picks the best SIMD kernel at run time (its on-demand API would be fixed
// to the baseline x86-64 kernel by our compile flags).
InstrRecord::RegionRecord parseRegion(simdjson::dom::element value) {
    simdjson::dom::array array = value.get_array();
    if (array.size() != 3) throw InstructionStreamError("a region is [space, address, bytes]");
    InstrRecord::RegionRecord r;
    r.space = array.at(0).get_string();
    r.address = array.at(1).get_int64();
    r.bytes = array.at(2).get_int64();
    return r;
}

void parseStrings(simdjson::dom::element value, std::vector<std::string_view>& out) {
    for (auto element : value.get_array()) out.push_back(element.get_string());
}

void parseRegions(simdjson::dom::element value, std::vector<InstrRecord::RegionRecord>& out) {
    for (auto element : value.get_array()) out.push_back(parseRegion(element));
}

void parseInstr(simdjson::dom::object object, InstrRecord& rec) {
    for (auto [key, value] : object) {
        if (key == "i")
            rec.index = value.get_int64();
        else if (key == "op")
            rec.op = value.get_string();
        else if (key == "unit")
            rec.unit = value.get_string();
        else if (key == "cost")
            rec.cost = value.get_int64();
        else if (key == "busy")
            rec.busy = value.get_int64();
        else if (key == "hlo")
            rec.hlo = value.get_int64();
        else if (key == "rd")
            parseStrings(value, rec.rd);
        else if (key == "wr")
            parseStrings(value, rec.wr);
        else if (key == "mrd")
            parseRegions(value, rec.mrd);
        else if (key == "mwr")
            parseRegions(value, rec.mwr);
        else if (key == "wait")
            rec.wait = value.get_int64();
        else if (key == "cycle")
            rec.cycle = value.get_int64();
        else if (key == "stall")
            rec.stall = value.get_int64();
        else if (key == "dma") {
            rec.hasDma = true;
            simdjson::dom::object dma = value.get_object();
            simdjson::dom::element id, src, dst;
            if (dma["id"].get(id) || dma["src"].get(src) || dma["dst"].get(dst))
                throw InstructionStreamError("'dma' needs id, src and dst");
            rec.dmaId = id.get_int64();
            rec.dmaSrc = parseRegion(src);
            rec.dmaDst = parseRegion(dst);
        }
        // "record", "orig_i" and unknown keys are ignored.
    }
}

}  // namespace

replay::InstructionStream readReplayJsonl(InputFile& input, Progress* progress) {
    const std::string& path = input.path();
    LineReader lines(input);
    simdjson::dom::parser parser;
    InstructionStreamBuilder builder;
    InstrRecord rec;
    std::string_view line;
    while (lines.next(line)) {
        const long long lineNo = lines.lineNumber();
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        try {
            // The line reader leaves padding after each line, so no copy is needed.
            simdjson::dom::object object =
                parser.parse(line.data(), line.size(), false).get_object();
            std::string_view record = object["record"].get_string();
            if (record == "instr") {
                rec.clear();
                parseInstr(object, rec);
                if (rec.index < 0) throw InstructionStreamError("instr record without 'i'");
                builder.addInstr(rec);
            } else if (record == "machine" || record == "hlo") {
                QJsonParseError error{};
                const QJsonObject o =
                    QJsonDocument::fromJson(
                        QByteArray(line.data(), static_cast<qsizetype>(line.size())), &error)
                        .object();
                if (record == "machine") {
                    builder.setMachine(parseMachine(o));
                } else {
                    const auto id = integralIfInRange<int64_t>(o.value("id").toDouble(-1));
                    if (!o.value("id").isDouble() || !id)
                        throw InstructionStreamError("hlo record without a whole-number 'id'");
                    builder.addHlo({*id, o.value("name").toString().toStdString(),
                                    o.value("category").toString().toStdString()});
                }
            } else {
                throw InstructionStreamError("unknown record type '" + std::string(record) + "'");
            }
        } catch (const simdjson::simdjson_error& e) {
            throw InputError(atLine(path, lineNo, std::string("malformed JSON: ") + e.what()));
        } catch (const InstructionStreamError& e) {
            throw InputError(atLine(path, lineNo, e.what()));
        }
        if (progress && (lineNo & 0xFFFF) == 0) progress->report(input.fraction(), "parsing trace");
    }
    try {
        return builder.finish();
    } catch (const InstructionStreamError& e) {
        throw InputError(atLine(path, lines.lineNumber(), e.what()));
    }
}

namespace {

class ReplayJsonlImporter final : public Importer {
  public:
    std::string format() const override { return "replay-jsonl"; }
    std::string kind() const override { return "replay"; }
    std::string description() const override {
        return "Replay trace, JSON Lines (.jsonl, .jsonl.zst, .jsonl.gz)";
    }
    int detect(const Sniff& sniff) const override {
        const auto firstLine = sniff.head.substr(0, sniff.head.find('\n'));
        const bool content = firstLine.starts_with("{") &&
                             firstLine.find("\"record\"") != std::string_view::npos &&
                             firstLine.find("\"machine\"") != std::string_view::npos;
        if (content) return 90;
        return sniff.path.find(".jsonl") != std::string::npos ? 20 : 0;
    }
    void run(ImportContext& ctx) const override {
        Progress parsing = phaseOf(ctx.progress, 0.0, kParseShare);
        finishReplayImport(ctx, readReplayJsonl(ctx.input, &parsing));
    }

    // Parsing takes most of an import; storing (encode and compress chunks) the rest. Phases
    // map into one 0..1 range so a progress bar never runs backwards.
    static constexpr double kParseShare = 0.75;
    static Progress phaseOf(Progress& whole, double from, double to) {
        return Progress([&whole, from, to](double fraction, const std::string& stage) {
            whole.report(from + (to - from) * fraction, stage);
        });
    }

    static void finishReplayImport(ImportContext& ctx, const replay::InstructionStream& trace) {
        Progress storing = phaseOf(ctx.progress, kParseShare, 1.0);
        replay::storeInstructionStream(ctx.workspace, ctx.profileId, trace, &storing);
        QJsonObject meta;
        meta.insert("machine", QString::fromStdString(trace.machine.name));
        meta.insert("instructions", static_cast<qint64>(trace.instrs.size()));
        meta.insert("dmas", static_cast<qint64>(trace.dmas.size()));
        meta.insert("hlo_ops", static_cast<qint64>(trace.hlos.size()));
        meta.insert("measured", trace.hasMeasurements());
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

class ReplayBinaryImporter final : public Importer {
  public:
    std::string format() const override { return "replay-binary"; }
    std::string kind() const override { return "replay"; }
    std::string description() const override {
        return "Replay trace, Stallscope binary (protobuf records in zstd, .ssrp)";
    }
    int detect(const Sniff& sniff) const override {
        return sniff.head.starts_with(
                   std::string_view(replay::kBinaryMagic, replay::kBinaryMagicSize))
                   ? 100
                   : 0;
    }
    void run(ImportContext& ctx) const override {
        Progress reading =
            ReplayJsonlImporter::phaseOf(ctx.progress, 0.0, ReplayJsonlImporter::kParseShare);
        const replay::InstructionStream trace = replay::readBinary(ctx.input, &reading);
        ReplayJsonlImporter::finishReplayImport(ctx, trace);
    }
};

}  // namespace

std::string jsonParserVersion() {
    return std::to_string(simdjson::SIMDJSON_VERSION_MAJOR) + "." +
           std::to_string(simdjson::SIMDJSON_VERSION_MINOR) + "." +
           std::to_string(simdjson::SIMDJSON_VERSION_REVISION);
}

replay::InstructionStream readReplayFile(const std::string& path, Progress* progress) {
    InputFile input(path);
    if (input.peek(replay::kBinaryMagicSize) ==
        std::string_view(replay::kBinaryMagic, replay::kBinaryMagicSize))
        return replay::readBinary(input, progress);
    return readReplayJsonl(input, progress);
}

const Importer& replayJsonlImporter() {
    static const ReplayJsonlImporter instance;
    return instance;
}

const Importer& replayBinaryImporter() {
    static const ReplayBinaryImporter instance;
    return instance;
}

}  // namespace stallscope
