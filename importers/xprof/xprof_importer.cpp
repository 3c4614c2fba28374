// XProf XSpace (`.xplane.pb`, optionally gzip/zstd): planes become processes (devices, host),
// lines become threads, events become slices nested per line; stats become arguments.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstring>
#include <unordered_map>

#include "errors.h"
#include "import_service.h"
#include "registry.h"
#include "trace_store.h"
#include "trace_writer.h"
#include "xplane.pb.h"

namespace stallscope {

namespace {

using trace::TraceWriter;
using trace::TrackKind;
using trace::TrackSpec;

// Walks the top-level fields of a serialized message without materialising it, so an XSpace's
// planes and lines are parsed one at a time (an XSpace is one message, not a stream).
class WireReader {
  public:
    struct Field {
        uint32_t number;
        uint32_t wireType;
        uint64_t varint;
        std::string_view bytes;
        size_t offset;  // of the field's tag, from the start of the whole buffer
    };
    WireReader(std::string_view data, size_t base, const std::string& path)
        : data_(data), base_(base), path_(path) {}

    bool next(Field& f) {
        if (pos_ >= data_.size()) return false;
        f.offset = base_ + pos_;
        const uint64_t tag = varint();
        f.number = uint32_t(tag >> 3);
        f.wireType = uint32_t(tag & 7);
        f.bytes = {};
        f.varint = 0;
        switch (f.wireType) {
            case 0:
                f.varint = varint();
                break;
            case 1:
                skip(8);
                break;
            case 2: {
                const uint64_t n = varint();
                if (n > data_.size() - pos_)
                    fail(f.offset, "a length-delimited field runs past the end (truncated file?)");
                f.bytes = data_.substr(pos_, size_t(n));
                pos_ += size_t(n);
                break;
            }
            case 5:
                skip(4);
                break;
            default:
                fail(f.offset, "invalid protobuf wire type " + std::to_string(f.wireType));
        }
        return true;
    }
    size_t base() const { return base_; }

  private:
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos_ >= data_.size()) fail(base_ + pos_, "truncated varint (truncated file?)");
            const uint8_t b = uint8_t(data_[pos_++]);
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        fail(base_ + pos_, "varint too long");
    }
    void skip(size_t n) {
        if (n > data_.size() - pos_) fail(base_ + pos_, "a fixed-size field runs past the end");
        pos_ += n;
    }
    [[noreturn]] void fail(size_t offset, const std::string& what) const {
        throw InputError(atOffset(path_, static_cast<long long>(offset), "XSpace: " + what));
    }
    std::string_view data_;
    size_t base_;
    size_t pos_ = 0;
    const std::string& path_;
};

void appendJsonString(std::string& out, std::string_view s) {
    out.push_back('"');
    for (const char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (uint8_t(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out.push_back(c);
                }
        }
    }
    out.push_back('"');
}

class PlaneReader {
  public:
    PlaneReader(TraceWriter& writer, const std::string& path, QJsonArray& aggregated)
        : writer_(writer), path_(path), aggregated_(aggregated) {}

    uint64_t events = 0, lines = 0, timedEvents = 0, aggregatedEvents = 0;

    void read(std::string_view planeBytes, size_t base, int64_t index) {
        eventMeta_.clear();
        statMeta_.clear();
        eventNames_.clear();
        lineTracks_.clear();
        std::vector<std::pair<std::string_view, size_t>> lineBytes;
        std::string name;
        WireReader plane(planeBytes, base, path_);
        WireReader::Field f;
        while (plane.next(f)) {
            if (f.number == 2 && f.wireType == 2) {
                name = std::string(f.bytes);
            } else if (f.number == 3 && f.wireType == 2) {
                lineBytes.emplace_back(f.bytes, size_t(f.bytes.data() - planeBytes.data()) + base);
            } else if ((f.number == 4 || f.number == 5) && f.wireType == 2) {
                readMapEntry(f, size_t(f.bytes.data() - planeBytes.data()) + base);
            }
        }
        TrackSpec spec;
        spec.kind = TrackKind::Process;
        spec.name = name.empty() ? "Plane " + std::to_string(index) : name;
        spec.pid = std::to_string(index);
        spec.sortIndex = index;
        process_ = writer_.addTrack(std::move(spec));
        planeName_ = name;
        for (const auto& [bytes, offset] : lineBytes) readLine(bytes, offset);
    }

  private:
    void readMapEntry(const WireReader::Field& entry, size_t base) {
        WireReader r(entry.bytes, base, path_);
        WireReader::Field f;
        int64_t key = 0;
        std::string_view value;
        while (r.next(f)) {
            if (f.number == 1 && f.wireType == 0) key = int64_t(f.varint);
            if (f.number == 2 && f.wireType == 2) value = f.bytes;
        }
        if (entry.number == 4) {
            xprof::XEventMetadata m;
            if (!m.ParseFromArray(value.data(), int(value.size())))
                throw InputError(atOffset(path_, static_cast<long long>(entry.offset),
                                          "XSpace: malformed event metadata"));
            eventMeta_[key] = std::move(m);
        } else {
            xprof::XStatMetadata m;
            if (!m.ParseFromArray(value.data(), int(value.size())))
                throw InputError(atOffset(path_, static_cast<long long>(entry.offset),
                                          "XSpace: malformed stat metadata"));
            statMeta_[key] = std::move(m);
        }
    }

    uint32_t eventName(int64_t metadataId) {
        auto it = eventNames_.find(metadataId);
        if (it != eventNames_.end()) return it->second;
        auto meta = eventMeta_.find(metadataId);
        std::string name = meta == eventMeta_.end() ? "metadata " + std::to_string(metadataId)
                                                    : (meta->second.display_name().empty()
                                                           ? meta->second.name()
                                                           : meta->second.display_name());
        const uint32_t id = writer_.intern(name);
        eventNames_.emplace(metadataId, id);
        return id;
    }

    std::string statName(int64_t id) const {
        auto it = statMeta_.find(id);
        return it == statMeta_.end() ? "stat " + std::to_string(id) : it->second.name();
    }

    // The event's stats as a JSON object; ref_value resolves to the referenced stat's name.
    uint64_t statsArgs(const google::protobuf::RepeatedPtrField<xprof::XStat>& stats) {
        if (stats.empty()) return 0;
        args_.assign("{");
        bool first = true;
        for (const xprof::XStat& s : stats) {
            if (!first) args_.push_back(',');
            first = false;
            appendJsonString(args_, statName(s.metadata_id()));
            args_.push_back(':');
            switch (s.value_case()) {
                case xprof::XStat::kDoubleValue: {
                    char buf[32];
                    std::snprintf(buf, sizeof buf, "%.17g", s.double_value());
                    args_ += std::isfinite(s.double_value()) ? buf : "null";
                    break;
                }
                case xprof::XStat::kUint64Value:
                    args_ += std::to_string(s.uint64_value());
                    break;
                case xprof::XStat::kInt64Value:
                    args_ += std::to_string(s.int64_value());
                    break;
                case xprof::XStat::kStrValue:
                    appendJsonString(args_, s.str_value());
                    break;
                case xprof::XStat::kBytesValue:
                    appendJsonString(args_,
                                     "<" + std::to_string(s.bytes_value().size()) + " bytes>");
                    break;
                case xprof::XStat::kRefValue:
                    appendJsonString(args_, statName(int64_t(s.ref_value())));
                    break;
                default:
                    args_ += "null";
            }
        }
        args_.push_back('}');
        return writer_.addArgs(args_);
    }

    void readLine(std::string_view bytes, size_t offset) {
        xprof::XLine line;
        if (!line.ParseFromArray(bytes.data(), int(bytes.size())))
            throw InputError(
                atOffset(path_, static_cast<long long>(offset), "XSpace: malformed XLine"));
        ++lines;
        auto found = lineTracks_.find(line.id());
        uint32_t track;
        if (found != lineTracks_.end()) {
            track = found->second;
        } else {
            TrackSpec spec;
            spec.kind = TrackKind::Thread;
            spec.parent = process_;
            spec.name = line.display_name().empty() ? line.name() : line.display_name();
            if (spec.name.empty()) spec.name = "Line " + std::to_string(line.id());
            spec.tid = std::to_string(line.id());
            spec.sortIndex = int64_t(lineTracks_.size());
            track = writer_.addTrack(std::move(spec));
            lineTracks_.emplace(line.id(), track);
        }
        for (const xprof::XEvent& e : line.events()) {
            ++events;
            const uint32_t name = eventName(e.metadata_id());
            if (e.data_case() == xprof::XEvent::kNumOccurrences) {
                ++aggregatedEvents;
                aggregated_.append(QJsonObject{
                    {"plane", QString::fromStdString(planeName_)},
                    {"line", QString::fromStdString(
                                 line.display_name().empty() ? line.name() : line.display_name())},
                    {"name", QString::fromStdString(eventMeta_.count(e.metadata_id())
                                                        ? eventMeta_[e.metadata_id()].name()
                                                        : "")},
                    {"occurrences", qint64(e.num_occurrences())},
                    {"duration_ps", qint64(e.duration_ps())}});
                continue;
            }
            ++timedEvents;
            // ps offsets are added before converting so nesting survives the rounding.
            const int64_t start = line.timestamp_ns() + e.offset_ps() / 1000;
            const int64_t end = line.timestamp_ns() + (e.offset_ps() + e.duration_ps()) / 1000;
            writer_.addSlice(track, start, end - start, name, statsArgs(e.stats()));
        }
    }

    TraceWriter& writer_;
    const std::string& path_;
    QJsonArray& aggregated_;
    uint32_t process_ = 0;
    std::string planeName_;
    std::unordered_map<int64_t, xprof::XEventMetadata> eventMeta_;
    std::unordered_map<int64_t, xprof::XStatMetadata> statMeta_;
    std::unordered_map<int64_t, uint32_t> eventNames_;
    std::unordered_map<int64_t, uint32_t> lineTracks_;
    std::string args_;
};

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
        return named ? 30 : 0;
    }

    void run(ImportContext& ctx) const override {
        ctx.progress.report(0.0, "reading XSpace");
        // An XSpace is a single message; planes are parsed one at a time from this buffer.
        const std::string data = readAll(ctx.input);
        TraceWriter writer(ctx.workspace, ctx.profileId);
        QJsonArray aggregated;
        PlaneReader planes(writer, ctx.input.path(), aggregated);
        WireReader space(data, 0, ctx.input.path());
        WireReader::Field f;
        QJsonArray planeNames, hostnames, errors, warnings;
        int64_t index = 0;
        while (space.next(f)) {
            if (f.wireType != 2) continue;
            if (f.number == 1) {
                planes.read(f.bytes, size_t(f.bytes.data() - data.data()), index++);
                ctx.progress.report(0.6 * double(f.bytes.data() - data.data() + f.bytes.size()) /
                                        double(data.size() + 1),
                                    "reading planes");
            } else if (f.number == 2) {
                errors.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 3) {
                warnings.append(QString::fromStdString(std::string(f.bytes)));
            } else if (f.number == 4) {
                hostnames.append(QString::fromStdString(std::string(f.bytes)));
            }
        }
        if (index == 0) throw InputError(ctx.input.path() + ": XSpace without planes");
        const trace::TraceSummary summary = writer.finish(
            [&](double fr) { ctx.progress.report(0.6 + 0.4 * fr, "building timeline"); });
        QJsonObject meta;
        meta.insert("planes", qint64(index));
        meta.insert("lines", qint64(planes.lines));
        meta.insert("events", qint64(planes.events));
        meta.insert("aggregated_events", aggregated);
        if (!hostnames.isEmpty()) meta.insert("hostnames", hostnames);
        if (!errors.isEmpty()) meta.insert("xspace_errors", errors);
        if (!warnings.isEmpty()) meta.insert("xspace_warnings", warnings);
        meta.insert("trace", trace::summaryJson(summary));
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& xspaceImporter() {
    static const XSpaceImporter importer;
    return importer;
}

}  // namespace stallscope
