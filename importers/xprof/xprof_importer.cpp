// XProf XSpace (`.xplane.pb`, optionally gzip/zstd): planes become processes (devices, host) with
// their stats in the profile metadata, lines become threads (events that overlap without nesting
// get extra lanes), events become slices nested per line with picosecond starts and durations;
// event and event-metadata stats become arguments (the event's own win), aggregated events
// (num_occurrences) count in the op statistics.
// This file: detection, the import of one file or one host of a run, and the profile metadata;
// the reading itself is in xspace_wire.cpp, xspace_planes.cpp and xspace_stats.cpp.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <optional>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/trace/dialect.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "importers/import_service.h"
#include "importers/registry.h"
#include "importers/xprof/xspace_internal.h"

namespace stallscope {

namespace {

using trace::TraceSink;
using trace::TraceWriter;
using trace::TrackSpec;
using xspace::Field;
using xspace::PlaneReader;
using xspace::SpaceReader;

class XSpaceImporter : public Importer {
  public:
    std::string format() const override { return "xprof-xspace"; }
    std::string kind() const override { return "trace"; }
    std::string description() const override {
        return "XProf XSpace (.xplane.pb) from JAX/TensorFlow/XLA profilers";
    }
    int detect(const Sniff& sniff) const override {
        // No magic number: a protobuf whose first field is a plane (field 1, length-delimited)
        // named like one.
        const bool named = sniff.path.find(".xplane.pb") != std::string::npos;
        const bool plane = !sniff.head.empty() && uint8_t(sniff.head[0]) == 0x0a;
        if (named && plane) return 90;
        if (named) return 30;
        // Under another name ("host.xspace.pb", "profile.pb"): a first plane named like
        // XProf's, near the start.
        const std::string_view head = std::string_view(sniff.head).substr(0, 64);
        if (plane && (head.find("/device:") != std::string_view::npos ||
                      head.find("/host:") != std::string_view::npos))
            return 60;
        return 0;
    }

    void run(ImportContext& ctx) const override {
        // Room for a large plane's events: its tracks are then written without a spill file.
        TraceWriter writer(ctx.workspace, ctx.profileId, importBuffers().xprofTraceRecords);
        // A line's events are read whole and sorted: its lanes need no sorter, and are written
        // on a worker as soon as the line is read.
        writer.setDirectTracks(true);
        SpaceResult space = readSpace(writer, ctx.input, ctx.progress, {});
        const trace::TraceSummary summary = writer.finish(
            [&](double fr) { ctx.progress.report(0.6 + 0.4 * fr, "building timeline"); });
        space.meta.insert("trace", trace::summaryJson(summary));
        ctx.metadataJson = QJsonDocument(space.meta).toJson(QJsonDocument::Compact).toStdString();
    }

    bool readsHosts() const override { return true; }
    void readHost(HostImportContext& ctx) const override {
        SpaceOptions options;
        options.parentTrack = ctx.hostTrack;
        options.firstPlaneIndex = ctx.firstPid;
        // The host's clock offset is known only once its file is read: its tracks are written
        // after that, so they are not handed to the writer's worker plane by plane.
        options.writePlanesEarly = false;
        SpaceResult space = readSpace(ctx.sink, ctx.input, ctx.progress, options);
        ctx.pidsUsed = space.planes;
        if (!space.hostnames.empty()) ctx.hostName = space.hostnames.front();
        if (space.profileStartTime) {
            ctx.clockBaseNs = space.profileStartTime;
            ctx.clockSource = "xprof profile_start_time";
        }
        ctx.metadata = std::move(space.meta);
        // Plane indices are the host's process ids: its process tracks and plane details move
        // to where the run places the host.
        ctx.renumberPids = [planes = std::move(space.planeTracks), read = ctx.firstPid](
                               trace::TraceSink& sink, QJsonObject& metadata, int64_t firstPid) {
            const int64_t shift = firstPid - read;
            for (const auto& [track, unnamed] : planes) {
                TrackSpec& spec = sink.track(track);
                spec.sortIndex += shift;
                spec.pid = std::to_string(spec.sortIndex);
                if (unnamed) spec.name = "Plane " + spec.pid;
            }
            QJsonArray details = metadata.value("plane_details").toArray();
            for (QJsonValueRef plane : details) {
                QJsonObject o = plane.toObject();
                o.insert("index", o.value("index").toInteger() + shift);
                plane = o;
            }
            metadata.insert("plane_details", details);
        };
    }

  private:
    struct SpaceOptions {
        int64_t parentTrack = -1;
        int64_t firstPlaneIndex = 0;
        bool writePlanesEarly = true;
    };
    struct SpaceResult {
        QJsonObject meta;  // without "trace" (the writer's summary)
        int64_t planes = 0;
        std::vector<std::string> hostnames;
        std::optional<int64_t> profileStartTime;
        std::vector<std::pair<uint32_t, bool>> planeTracks;  // process track, named by index
    };

    // Reads an XSpace's planes into `writer` (progress up to 0.6).
    static SpaceResult readSpace(TraceSink& writer, InputFile& input, Progress& progress,
                                 const SpaceOptions& options) {
        progress.report(0.0, "reading XSpace");
        PlaneReader planes(writer, input.path(), options.parentTrack);
        SpaceReader space(input);
        Field f;
        QJsonArray planeInfo, hostnames, errors, warnings;
        SpaceResult result;
        int64_t index = options.firstPlaneIndex;
        while (space.next(f)) {
            if (f.wireType != 2) continue;
            if (f.number == 1) {
                planeInfo.append(planes.read(f.bytes, space.bytesOffset(), index++));
                // A plane's lines are complete: written now, their records need not be spilled.
                if (options.writePlanesEarly)
                    writer.finishTracksBefore(uint32_t(writer.trackCount()));
                progress.report(0.6 * input.fraction(), "reading planes");
            } else if (f.number == 2) {
                errors.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 3) {
                warnings.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 4) {
                hostnames.append(QString::fromStdString(std::string(f.bytes)));
                result.hostnames.emplace_back(f.bytes);
            }
        }
        result.planes = index - options.firstPlaneIndex;
        if (result.planes == 0) throw InputError(input.path() + ": XSpace without planes");
        result.profileStartTime = planes.profileStartTime;
        result.planeTracks = std::move(planes.planeTracks);
        // Aggregated events count in the op statistics: occurrences and summed durations.
        QJsonArray aggregated;
        for (const auto& [name, a] : planes.aggregates) {
            const int64_t totalNs = (a.durationPs + 500) / 1000;
            writer.addAggregate(writer.intern(name), a.occurrences, totalNs,
                                a.haveSelf ? (a.selfPs + 500) / 1000 : totalNs);
            QJsonObject o{{"name", QString::fromStdString(name)},
                          {"occurrences", qint64(a.occurrences)},
                          {"duration_ps", qint64(a.durationPs)},
                          {"events", qint64(a.events)}};
            if (a.haveSelf) o.insert("self_duration_ps", qint64(a.selfPs));
            aggregated.append(o);
        }
        QJsonObject& meta = result.meta;
        trace::recordDialect(meta, trace::Dialect::Xla,
                             trace::defaultEvidence(trace::Dialect::Xla));
        meta.insert("planes", qint64(result.planes));
        meta.insert("plane_details", planeInfo);
        meta.insert("lines", qint64(planes.lines));
        meta.insert("events", qint64(planes.events));
        meta.insert("aggregated_events", qint64(planes.aggregatedEvents));
        if (!aggregated.isEmpty()) meta.insert("aggregated_ops", aggregated);
        meta.insert("compressed_stats", qint64(planes.compressedStats));
        meta.insert("time_precision",
                    "picoseconds: slices keep XProf's sub-ns start and duration; op statistics "
                    "are whole ns");
        if (!hostnames.isEmpty()) meta.insert("hostnames", hostnames);
        if (!errors.isEmpty()) meta.insert("xspace_errors", errors);
        if (!warnings.isEmpty()) meta.insert("xspace_warnings", warnings);
        QJsonArray notes;
        if (planes.laneTracks > 0)
            notes.append(QString("%1 extra lanes hold events that overlap others on their line "
                                 "without nesting")
                             .arg(qint64(planes.laneTracks)));
        if (planes.corruptCompressedStats > 0)
            notes.append(QString("%1 compressed stats do not decompress; kept as a byte count")
                             .arg(qint64(planes.corruptCompressedStats)));
        meta.insert("warnings", notes);
        return result;
    }
};

}  // namespace

const Importer& xspaceImporter() {
    static const XSpaceImporter importer;
    return importer;
}

}  // namespace stallscope
