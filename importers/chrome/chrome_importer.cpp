// Chrome Trace Event JSON (chrome://tracing, Perfetto exports, PyTorch profiler/Kineto): the
// events become trace tracks (process -> thread, async and counter tracks), slices, instants,
// counter samples and flows. Streamed: memory does not grow with the file.
// This file: detection, the import of one file or one host of a run, and the profile metadata;
// the events are interpreted in chrome_builder.cpp, chrome_async.cpp and chrome_flows.cpp.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "core/errors.h"
#include "core/trace/dialect.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "importers/chrome/chrome_builder.h"
#include "importers/chrome/chrome_json.h"
#include "importers/chrome/event_pipeline.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

using chrome::ChromeTraceBuilder;
using chrome::parseInt;
using trace::TraceSink;
using trace::TraceWriter;

// What the start of a JSON document says about its structure.
enum class Structure { TraceEvents, NotTrace, Unknown };

// Walks the members of the top-level object that `doc` starts with (after the '{' at `at`),
// skipping their values, until one is "traceEvents" holding an array (a trace), the object ends
// without it (not a trace), or the text runs out or is not JSON (unknown).
Structure topLevelStructure(std::string_view doc, size_t at) {
    size_t i = at + 1;
    auto ws = [&] {
        while (i < doc.size() &&
               (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n'))
            ++i;
    };
    // Past a string starting at i ('"'); false when it does not end within the text.
    auto skipString = [&] {
        for (++i; i < doc.size(); ++i) {
            if (doc[i] == '\\')
                ++i;
            else if (doc[i] == '"')
                return ++i, true;
        }
        return false;
    };
    auto skipValue = [&] {
        if (i >= doc.size()) return false;
        if (doc[i] == '"') return skipString();
        if (doc[i] != '{' && doc[i] != '[') {
            while (i < doc.size() && doc[i] != ',' && doc[i] != '}' && doc[i] != ']' &&
                   doc[i] != ' ' && doc[i] != '\n' && doc[i] != '\r' && doc[i] != '\t')
                ++i;
            return i < doc.size();
        }
        size_t depth = 0;
        while (i < doc.size()) {
            const char c = doc[i];
            if (c == '"') {
                if (!skipString()) return false;
                continue;
            }
            if (c == '{' || c == '[') ++depth;
            if ((c == '}' || c == ']') && --depth == 0) return ++i, true;
            ++i;
        }
        return false;
    };
    for (;;) {
        ws();
        if (i >= doc.size()) return Structure::Unknown;
        if (doc[i] == '}') return Structure::NotTrace;
        if (doc[i] != '"') return Structure::Unknown;
        const size_t keyStart = i + 1;
        if (!skipString()) return Structure::Unknown;
        const std::string_view key = doc.substr(keyStart, i - 1 - keyStart);
        ws();
        if (i >= doc.size() || doc[i] != ':') return Structure::Unknown;
        ++i;
        ws();
        if (i >= doc.size()) return Structure::Unknown;
        if (key == "traceEvents")
            return doc[i] == '[' ? Structure::TraceEvents : Structure::NotTrace;
        if (!skipValue()) return Structure::Unknown;
        ws();
        if (i >= doc.size()) return Structure::Unknown;
        if (doc[i] == ',') {
            ++i;
            continue;
        }
        return doc[i] == '}' ? Structure::NotTrace : Structure::Unknown;
    }
}

// How far detection reads to find "traceEvents" behind a large leading member (Kineto's
// deviceProperties and metadata run to tens of KB).
constexpr size_t kDetectLimit = size_t(1) << 20;

class ChromeJsonImporter : public Importer {
  public:
    std::string format() const override { return "chrome-json"; }
    std::string kind() const override { return "trace"; }
    std::string description() const override {
        return "Chrome Trace Event JSON (chrome://tracing, Perfetto, PyTorch profiler), "
               "array or object form";
    }
    int detect(const Sniff& sniff) const override {
        std::string_view head = sniff.head;
        if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
        const size_t first = head.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos) return 0;
        const bool hasPhase = head.find("\"ph\"") != std::string_view::npos;
        if (head[first] == '{') {
            // The object's members decide: a "traceEvents" array among them is a trace, however
            // far the members before it run (read up to kDetectLimit bytes).
            Structure structure = topLevelStructure(head, first);
            if (structure == Structure::Unknown && sniff.readAhead) {
                std::string_view more = sniff.readAhead(kDetectLimit);
                const size_t skip = size_t(head.data() + first - sniff.head.data());
                structure = topLevelStructure(more, skip);
            }
            if (structure == Structure::TraceEvents) return 100;
            if (structure == Structure::NotTrace) return 0;
            // Cut short before traceEvents: what the head shows is the best guess.
            const bool kineto = head.find("\"deviceProperties\"") != std::string_view::npos;
            return hasPhase || kineto ? 60 : 0;
        }
        if (head[first] == '[') {
            const size_t second = head.find_first_not_of(" \t\r\n", first + 1);
            if (second != std::string_view::npos && head[second] != '{' && head[second] != ']')
                return 0;
            return hasPhase ? 95 : 40;
        }
        return 0;
    }

    void run(ImportContext& ctx) const override {
        TraceWriter writer(ctx.workspace, ctx.profileId);
        // Parsed on a second thread while this one builds; the timeline is written on both.
        writer.setWriteThreads(2);
        QJsonObject meta = readTrace(writer, ctx.input, ctx.progress, -1, nullptr, true);
        const trace::TraceSummary summary = writer.finish(
            [&](double f) { ctx.progress.report(0.8 + 0.2 * f, "building timeline"); });
        meta.insert("trace", trace::summaryJson(summary));
        QJsonArray warnings = meta.value("warnings").toArray();
        if (summary.unboundFlows > 0)
            warnings.append(QString("%1 flows have an end with no slice to attach to (drawn at "
                                    "the event's time)")
                                .arg(qint64(summary.unboundFlows)));
        if (summary.overlapping > 0)
            warnings.append(QString("%1 slices overlap their parent (not properly nested)")
                                .arg(qint64(summary.overlapping)));
        meta.insert("warnings", warnings);
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }

    bool readsHosts() const override { return true; }
    void readHost(HostImportContext& ctx) const override {
        std::vector<std::pair<std::string, std::string>> topLevel;
        // The hosts of a run are read on the import's workers already: one thread each.
        ctx.metadata =
            readTrace(ctx.sink, ctx.input, ctx.progress, ctx.hostTrack, &topLevel, false);
        for (const auto& [key, value] : topLevel) {
            // Kineto writes its times relative to baseTimeNanoseconds (since the epoch), and
            // the rank in distributedInfo.
            int64_t base = 0;
            if (key == "baseTimeNanoseconds" && parseInt(value, base) && base > 0) {
                ctx.clockBaseNs = base;
                ctx.clockSource = "kineto baseTimeNanoseconds";
            } else if (key == "distributedInfo") {
                const QJsonObject info =
                    QJsonDocument::fromJson(QByteArray::fromStdString(value)).object();
                if (info.contains("rank"))
                    ctx.hostName = "rank " + std::to_string(info.value("rank").toInteger());
            }
        }
    }

  private:
    // Reads the file's events into `writer` below parentTrack (progress up to 0.8); returns its
    // metadata without the writer's summary. topLevel: the top-level members, when wanted.
    // pipelined: parse on a second thread.
    static QJsonObject readTrace(TraceSink& writer, InputFile& input, Progress& progress,
                                 int64_t parentTrack,
                                 std::vector<std::pair<std::string, std::string>>* topLevel,
                                 bool pipelined) {
        ChromeTraceBuilder builder(writer, input.path(), parentTrack);
        chrome::EventReader reader(input);
        uint64_t n = 0;
        if (pipelined) {
            chrome::EventPipeline pipeline(reader);
            while (const chrome::EventBatch* batch = pipeline.next()) {
                for (const chrome::RawEvent& ev : batch->events) builder.add(ev);
                n += batch->events.size();
                progress.report(0.8 * batch->fraction, "reading events");
            }
        } else {
            chrome::RawEvent ev;
            while (reader.next(ev)) {
                builder.add(ev);
                if ((++n & 0x3fff) == 0) progress.report(0.8 * input.fraction(), "reading events");
            }
        }
        if (n == 0) throw InputError(input.path() + ": no trace events (not a Chrome trace?)");
        if (topLevel) *topLevel = reader.topLevel();
        QJsonObject meta = builder.finish();
        // What the trace is: the PyTorch profiler's by its categories or its top-level members.
        bool kineto = builder.sawKinetoCategory();
        for (const auto& [key, value] : reader.topLevel())
            kineto = kineto || key == "schemaVersion" || key == "deviceProperties" ||
                     key == "distributedInfo";
        const trace::Dialect dialect = kineto ? trace::Dialect::Kineto : trace::Dialect::Chrome;
        trace::recordDialect(meta, dialect, trace::defaultEvidence(dialect));

        if (!reader.displayTimeUnit().empty())
            meta.insert("display_time_unit", QString::fromStdString(reader.displayTimeUnit()));
        QJsonObject top;
        for (const auto& [key, value] : reader.topLevel())
            top.insert(QString::fromStdString(key), QString::fromStdString(value));
        if (!top.isEmpty()) meta.insert("trace_metadata", top);
        QJsonArray warnings;
        if (reader.missingClose())
            warnings.append(
                "the JSON ends without its closing bracket; events up to the end were "
                "imported");
        if (meta.value("unmatched_end_events").toInteger() > 0)
            warnings.append(QString("%1 end events without a matching begin were ignored")
                                .arg(meta.value("unmatched_end_events").toInteger()));
        if (meta.value("unterminated_slices").toInteger() > 0)
            warnings.append(QString("%1 slices never ended: drawn to the end of the trace and "
                                    "left out of op totals, means and percentiles")
                                .arg(meta.value("unterminated_slices").toInteger()));
        if (meta.value("flows_ending_before_start").toInteger() > 0)
            warnings.append(QString("%1 flows end before they start (the clocks of their two "
                                    "ends disagree): drawn pointing back in time")
                                .arg(meta.value("flows_ending_before_start").toInteger()));
        if (meta.value("unmatched_flow_starts").toInteger() > 0)
            warnings.append(QString("%1 flow starts have no step or end with their id")
                                .arg(meta.value("unmatched_flow_starts").toInteger()));
        if (meta.value("unmatched_flow_ends").toInteger() > 0)
            warnings.append(QString("%1 flow steps or ends have no start with their id")
                                .arg(meta.value("unmatched_flow_ends").toInteger()));
        if (meta.value("async_closed_by_parent").toInteger() > 0)
            warnings.append(QString("%1 async slices had no end event of their own; they end "
                                    "with the enclosing slice of their id")
                                .arg(meta.value("async_closed_by_parent").toInteger()));
        if (meta.value("repaired_values").toInteger() > 0)
            warnings.append(QString("%1 values in args are not JSON (bare inf or nan, raw control "
                                    "characters in strings): kept as text")
                                .arg(meta.value("repaired_values").toInteger()));
        const QJsonObject ignoredEvents = meta.value("ignored_events").toObject();
        for (auto it = ignoredEvents.begin(); it != ignoredEvents.end(); ++it)
            warnings.append(
                it.key().startsWith("M:")
                    ? QString("%1 metadata events \"%2\" were not used")
                          .arg(it.value().toInteger())
                          .arg(it.key().mid(2))
                    : QString("%1 events of phase \"%2\" were not used (a phase Stallscope does "
                              "not draw)")
                          .arg(it.value().toInteger())
                          .arg(it.key()));
        if (reader.trailingOffset() >= 0) {
            meta.insert("trailing_data_offset", qint64(reader.trailingOffset()));
            warnings.append(QString("byte %1: data after the end of the JSON document was "
                                    "ignored%2")
                                .arg(reader.trailingOffset())
                                .arg(input.compression() != Compression::None
                                         ? " (offset in the decompressed JSON)"
                                         : ""));
        }
        meta.insert("missing_close_bracket", reader.missingClose());
        meta.insert("warnings", warnings);
        return meta;
    }
};

}  // namespace

const Importer& chromeJsonImporter() {
    static const ChromeJsonImporter importer;
    return importer;
}

}  // namespace stallscope
