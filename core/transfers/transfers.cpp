// Transfers: dispatch by profile, JSON reports, storage with the profile.
#include "core/transfers/transfers.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>

#include "core/errors.h"
#include "core/json_escape.h"
#include "core/trace/trace_format.h"
#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"
#include "core/workspace.h"

namespace stallscope::transfers {

namespace detail {

std::optional<std::string> jsonMember(std::string_view json, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\":";
    const size_t at = json.find(needle);
    if (at == std::string_view::npos) return std::nullopt;
    size_t p = at + needle.size();
    while (p < json.size() && json[p] == ' ') ++p;
    if (p >= json.size()) return std::nullopt;
    std::string out;
    if (json[p] != '"') {
        // A number, true/false/null: up to the next delimiter.
        while (p < json.size() && json[p] != ',' && json[p] != '}') out.push_back(json[p++]);
        return out;
    }
    for (++p; p < json.size(); ++p) {
        char c = json[p];
        if (c == '"') return out;
        if (c != '\\' || p + 1 >= json.size()) {
            out.push_back(c);
            continue;
        }
        c = json[++p];
        switch (c) {
            case 'n':
                out.push_back('\n');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case 'b':
                out.push_back('\b');
                break;
            case 'f':
                out.push_back('\f');
                break;
            case 'u': {
                // HLO text is ASCII; other code points keep their escape.
                if (p + 4 < json.size()) {
                    const std::string hex(json.substr(p + 1, 4));
                    const unsigned long v = std::stoul(hex, nullptr, 16);
                    if (v < 0x80) {
                        out.push_back(char(v));
                    } else {
                        out += "\\u" + hex;
                    }
                    p += 4;
                }
                break;
            }
            default:
                out.push_back(c);
        }
    }
    return std::nullopt;
}

uint32_t LinkTable::get(const std::string& device, const std::string& name,
                        const std::string& source, const std::string& destination) {
    const auto [it, fresh] = index_.try_emplace({device, name}, uint32_t(links_.size()));
    if (fresh) {
        Link link;
        link.name = name;
        link.device = device;
        link.source = source;
        link.destination = destination;
        links_.push_back(std::move(link));
    }
    return it->second;
}

}  // namespace detail

Analysis derive(const trace::TraceStore& store) {
    const std::string format = store.metadata().value("format").toString().toStdString();
    if (format == "xprof-xspace") return detail::deriveXprof(store);
    if (format.starts_with("chrome")) return detail::deriveKineto(store);
    return {};
}

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QJsonObject linkJson(const Link& link) {
    return QJsonObject{{"name", qs(link.name)},
                       {"device", qs(link.device)},
                       {"source", qs(link.source)},
                       {"destination", qs(link.destination)},
                       {"transfers", qint64(link.transfers)},
                       {"bytes", qint64(link.bytes)},
                       {"busy_ns", qint64(link.busyNs)},
                       {"achieved_gbps", link.achievedBytesPerNs()},
                       {"fitted_gbps", link.bytesPerNs},
                       {"bandwidth_lower_bound", link.bandwidthLowerBound},
                       {"base_latency_ns", qint64(link.baseLatencyNs)},
                       {"fit_observations", qint64(link.fitObservations)},
                       {"peak_gbps", link.peakBytesPerNs},
                       {"peak_source", qs(link.peakSource)},
                       {"peak_pct", 100.0 * link.peakFraction()}};
}

QJsonObject moduleJson(const ModuleRun& run) {
    QJsonArray ids;
    for (uint32_t id : run.transfers) ids.append(qint64(id));
    return QJsonObject{{"name", qs(run.name)},
                       {"device", qs(run.device)},
                       {"start", qint64(run.start)},
                       {"end", qint64(run.end)},
                       {"measured_ns", qint64(run.measuredNs())},
                       {"simulated_ns", qint64(run.simulatedNs)},
                       {"error_pct", run.errorPct()},
                       {"stall_ns", qint64(run.stallNs)},
                       {"base_stall_ns", qint64(run.baseStallNs)},
                       {"transfer_stall_ns", qint64(run.transferStallNs)},
                       {"compute_ns", qint64(run.computeNs)},
                       {"dmas", ids}};
}

QJsonObject suggestionJson(const Analysis& a, const Suggestion& s) {
    QJsonArray ids;
    for (uint32_t id : s.transfers) ids.append(qint64(id));
    QJsonObject o{{"kind", qs(s.kind)},
                  {"dmas", ids},
                  {"to_instr", s.toOp.empty() && s.kind == "hoist" ? QJsonValue(qs("module start"))
                               : s.toOp.empty()                    ? QJsonValue()
                                                                   : QJsonValue(qs(s.toOp))},
                  {"saving_cycles", qint64(s.savingNs)},
                  {"saving_ns", qint64(s.savingNs)},
                  {"saving_per_run_ns", qint64(s.savingPerRunNs)},
                  {"program", qs(s.program)},
                  {"runs", qint64(s.runs)},
                  {"evidence", s.evidence},
                  {"text", qs(s.text)}};
    (void)a;
    return o;
}

}  // namespace

QJsonObject dmaJson(const Analysis& a) {
    QJsonObject root;
    root["time_unit"] = "ns";
    root["source"] = qs(a.source);
    root["total_cycles"] = qint64(a.totalNs);
    root["stall_cycles"] = qint64(a.stallNs);
    root["base_stall_cycles"] = qint64(a.baseStallNs);
    root["transfer_stall_cycles"] = qint64(a.transferStallNs);
    root["model_error_pct"] = a.modelErrorPct;
    root["median_run_error_pct"] = a.medianRunErrorPct;
    QJsonArray dmas;
    for (const Transfer& t : a.transfers) {
        const ModuleRun& run = a.modules[t.module];
        QJsonObject o;
        o["id"] = qint64(t.id);
        o["name"] = qs(t.name);
        o["wait_name"] = qs(t.waitName);
        o["opcode"] = qs(t.opcode);
        o["link"] = qs(a.links[t.link].name);
        o["device"] = qs(a.links[t.link].device);
        o["module"] = qint64(t.module);
        o["module_name"] = qs(run.name);
        o["bytes"] = qint64(t.bytes);
        o["element_type"] = qs(t.elementType);
        o["issue_instr"] = qint64(t.issueStep);
        o["wait_instr"] = t.waited ? QJsonValue(qint64(t.waitStep)) : QJsonValue();
        o["issue_cycle"] = qint64(t.issue);
        o["ready_cycle"] = qint64(t.ready);
        o["start_cycle"] = qint64(t.transferStart);
        o["complete_cycle"] = qint64(t.complete);
        o["complete_measured"] = t.completeMeasured;
        o["wait_cycle"] = t.waited ? QJsonValue(qint64(t.wait)) : QJsonValue();
        o["wait_end_cycle"] = t.waited ? QJsonValue(qint64(t.waitEnd)) : QJsonValue();
        o["blocked"] = t.blocked;
        o["base_stall"] = qint64(t.baseStall);
        o["transfer_stall"] = qint64(t.transferStall);
        o["queue"] = qint64(t.queueNs);
        o["slack"] = qint64(t.slack);
        o["backtail_instr"] = qint64(t.backtailStep);
        o["backtail_cycle"] = qint64(t.backtail);
        o["backtail_kind"] = backtailName(t.backtailKind);
        o["backtail_op"] = qs(t.backtailOp);
        o["source_operand"] = qs(t.sourceOperand);
        if (t.inFlightTrack >= 0) {
            o["in_flight_start"] = qint64(t.inFlightStart);
            o["in_flight_end"] = qint64(t.inFlightEnd);
        }
        dmas.append(o);
    }
    root["dmas"] = dmas;
    QJsonArray links, modules;
    for (const Link& link : a.links) links.append(linkJson(link));
    for (const ModuleRun& run : a.modules) modules.append(moduleJson(run));
    root["links"] = links;
    root["modules"] = modules;
    QJsonObject unmatched;
    for (const auto& [what, count] : a.unmatched) unmatched[qs(what)] = qint64(count);
    root["unmatched"] = unmatched;
    return root;
}

QJsonObject suggestJson(const Analysis& a) {
    QJsonArray list;
    for (const Suggestion& s : a.suggestions) list.append(suggestionJson(a, s));
    QJsonObject root;
    root["suggestions"] = list;
    root["time_unit"] = "ns";
    root["total_cycles"] = qint64(a.totalNs);
    root["model_error_pct"] = a.modelErrorPct;
    return root;
}

QJsonObject compareJson(const Analysis& before, const Analysis& after) {
    // Runs are matched by program name and their order among that program's runs; transfers
    // by name within matched runs.
    auto runsByProgram = [](const Analysis& a) {
        std::map<std::string, std::vector<uint32_t>> out;
        for (uint32_t i = 0; i < a.modules.size(); ++i) out[a.modules[i].name].push_back(i);
        return out;
    };
    const auto runsA = runsByProgram(before), runsB = runsByProgram(after);
    QJsonArray modules, dmas;
    for (const auto& [program, listA] : runsA) {
        const auto found = runsB.find(program);
        if (found == runsB.end()) continue;
        const auto& listB = found->second;
        for (size_t r = 0; r < std::min(listA.size(), listB.size()); ++r) {
            const ModuleRun& ra = before.modules[listA[r]];
            const ModuleRun& rb = after.modules[listB[r]];
            modules.append(QJsonObject{{"name", qs(program)},
                                       {"run", qint64(r)},
                                       {"a_ns", qint64(ra.measuredNs())},
                                       {"b_ns", qint64(rb.measuredNs())},
                                       {"delta_ns", qint64(rb.measuredNs() - ra.measuredNs())},
                                       {"a_stall_ns", qint64(ra.stallNs)},
                                       {"b_stall_ns", qint64(rb.stallNs)},
                                       {"delta_stall_ns", qint64(rb.stallNs - ra.stallNs)}});
            for (uint32_t ia : ra.transfers) {
                const Transfer& ta = before.transfers[ia];
                for (uint32_t ib : rb.transfers) {
                    const Transfer& tb = after.transfers[ib];
                    if (tb.name != ta.name) continue;
                    dmas.append(QJsonObject{{"module", qs(program)},
                                            {"run", qint64(r)},
                                            {"name", qs(ta.name)},
                                            {"a_bytes", qint64(ta.bytes)},
                                            {"b_bytes", qint64(tb.bytes)},
                                            {"a_stall", qint64(ta.stall())},
                                            {"b_stall", qint64(tb.stall())},
                                            {"delta_stall", qint64(tb.stall() - ta.stall())},
                                            {"a_issue_offset", qint64(ta.issue - ra.start)},
                                            {"b_issue_offset", qint64(tb.issue - rb.start)}});
                    break;
                }
            }
        }
    }
    return QJsonObject{{"a", QJsonObject{{"total", qint64(before.totalNs)},
                                         {"stall", qint64(before.stallNs)},
                                         {"transfers", qint64(before.transfers.size())}}},
                       {"b", QJsonObject{{"total", qint64(after.totalNs)},
                                         {"stall", qint64(after.stallNs)},
                                         {"transfers", qint64(after.transfers.size())}}},
                       {"delta", QJsonObject{{"total", qint64(after.totalNs - before.totalNs)},
                                             {"stall", qint64(after.stallNs - before.stallNs)}}},
                       {"time_unit", "ns"},
                       {"modules", modules},
                       {"dmas", dmas}};
}

// ---- Storage: "SSTX", a format version byte, then zstd of a compact JSON document. JSON
// because the analysis is small next to the trace (a record per transfer, not per op) and a
// view reads it whole; the version lets a later layout refuse or convert old payloads.
namespace {

constexpr char kMagic[4] = {'S', 'S', 'T', 'X'};
constexpr uint8_t kVersion = 1;

QJsonObject storedTransfer(const Transfer& t) {
    return QJsonObject{{"id", qint64(t.id)},
                       {"name", qs(t.name)},
                       {"wait_name", qs(t.waitName)},
                       {"opcode", qs(t.opcode)},
                       {"element_type", qs(t.elementType)},
                       {"link", qint64(t.link)},
                       {"module", qint64(t.module)},
                       {"bytes", qint64(t.bytes)},
                       {"issue_step", t.issueStep},
                       {"wait_step", t.waitStep},
                       {"issue", qint64(t.issue)},
                       {"wait", qint64(t.wait)},
                       {"wait_end", qint64(t.waitEnd)},
                       {"blocked", t.blocked},
                       {"waited", t.waited},
                       {"ready", qint64(t.ready)},
                       {"transfer_start", qint64(t.transferStart)},
                       {"complete", qint64(t.complete)},
                       {"complete_measured", t.completeMeasured},
                       {"base_stall", qint64(t.baseStall)},
                       {"transfer_stall", qint64(t.transferStall)},
                       {"queue", qint64(t.queueNs)},
                       {"slack", qint64(t.slack)},
                       {"source_operand", qs(t.sourceOperand)},
                       {"backtail_kind", int(t.backtailKind)},
                       {"backtail_op", qs(t.backtailOp)},
                       {"backtail_step", t.backtailStep},
                       {"backtail", qint64(t.backtail)},
                       {"issue_track", qint64(t.issueTrack)},
                       {"wait_track", qint64(t.waitTrack)},
                       {"in_flight_track", qint64(t.inFlightTrack)},
                       {"in_flight_start", qint64(t.inFlightStart)},
                       {"in_flight_end", qint64(t.inFlightEnd)}};
}

int64_t i64(const QJsonObject& o, const char* key) {
    return o.value(key).toInteger();
}
std::string str(const QJsonObject& o, const char* key) {
    return o.value(key).toString().toStdString();
}

}  // namespace

std::string encode(const Analysis& a) {
    QJsonArray transfers, links, modules, suggestions;
    for (const Transfer& t : a.transfers) transfers.append(storedTransfer(t));
    for (const Link& link : a.links) links.append(linkJson(link));
    for (const ModuleRun& run : a.modules) {
        QJsonObject o = moduleJson(run);
        o["track"] = qint64(run.track);
        modules.append(o);
    }
    for (const Suggestion& s : a.suggestions) suggestions.append(suggestionJson(a, s));
    QJsonObject unmatched;
    for (const auto& [what, count] : a.unmatched) unmatched[qs(what)] = qint64(count);
    const QJsonObject root{{"source", qs(a.source)},
                           {"transfers", transfers},
                           {"links", links},
                           {"modules", modules},
                           {"suggestions", suggestions},
                           {"unmatched", unmatched},
                           {"total", qint64(a.totalNs)},
                           {"stall", qint64(a.stallNs)},
                           {"base_stall", qint64(a.baseStallNs)},
                           {"transfer_stall", qint64(a.transferStallNs)},
                           {"model_error_pct", a.modelErrorPct},
                           {"median_run_error_pct", a.medianRunErrorPct}};
    const QByteArray json = QJsonDocument(root).toJson(QJsonDocument::Compact);
    std::string packed;
    trace::packChunk(std::string_view(json.constData(), size_t(json.size())), packed);
    std::string out(kMagic, 4);
    out.push_back(char(kVersion));
    return out + packed;
}

Analysis decode(std::string_view bytes) {
    if (bytes.size() < 5 || bytes.substr(0, 4) != std::string_view(kMagic, 4))
        throw Failure("stored transfers: not a transfer analysis");
    if (uint8_t(bytes[4]) != kVersion)
        throw Failure("stored transfers: format version " + std::to_string(uint8_t(bytes[4])) +
                      " is not " + std::to_string(kVersion));
    const std::string json = trace::unpackChunk(bytes.substr(5));
    const QJsonObject root =
        QJsonDocument::fromJson(QByteArray::fromRawData(json.data(), qsizetype(json.size())))
            .object();
    Analysis a;
    a.source = str(root, "source");
    for (const QJsonValue v : root.value("links").toArray()) {
        const QJsonObject o = v.toObject();
        Link link;
        link.name = str(o, "name");
        link.device = str(o, "device");
        link.source = str(o, "source");
        link.destination = str(o, "destination");
        link.transfers = uint64_t(i64(o, "transfers"));
        link.bytes = uint64_t(i64(o, "bytes"));
        link.busyNs = i64(o, "busy_ns");
        link.bytesPerNs = o.value("fitted_gbps").toDouble();
        link.bandwidthLowerBound = o.value("bandwidth_lower_bound").toBool();
        link.baseLatencyNs = i64(o, "base_latency_ns");
        link.fitObservations = uint32_t(i64(o, "fit_observations"));
        link.peakBytesPerNs = o.value("peak_gbps").toDouble();
        link.peakSource = str(o, "peak_source");
        a.links.push_back(std::move(link));
    }
    for (const QJsonValue v : root.value("modules").toArray()) {
        const QJsonObject o = v.toObject();
        ModuleRun run;
        run.name = str(o, "name");
        run.device = str(o, "device");
        run.track = i64(o, "track");
        run.start = i64(o, "start");
        run.end = i64(o, "end");
        run.simulatedNs = i64(o, "simulated_ns");
        run.stallNs = i64(o, "stall_ns");
        run.baseStallNs = i64(o, "base_stall_ns");
        run.transferStallNs = i64(o, "transfer_stall_ns");
        run.computeNs = i64(o, "compute_ns");
        for (const QJsonValue id : o.value("dmas").toArray())
            run.transfers.push_back(uint32_t(id.toInteger()));
        a.modules.push_back(std::move(run));
    }
    for (const QJsonValue v : root.value("transfers").toArray()) {
        const QJsonObject o = v.toObject();
        Transfer t;
        t.id = uint32_t(i64(o, "id"));
        t.name = str(o, "name");
        t.waitName = str(o, "wait_name");
        t.opcode = str(o, "opcode");
        t.elementType = str(o, "element_type");
        t.link = uint32_t(i64(o, "link"));
        t.module = uint32_t(i64(o, "module"));
        t.bytes = uint64_t(i64(o, "bytes"));
        t.issueStep = int32_t(i64(o, "issue_step"));
        t.waitStep = int32_t(i64(o, "wait_step"));
        t.issue = i64(o, "issue");
        t.wait = i64(o, "wait");
        t.waitEnd = i64(o, "wait_end");
        t.blocked = o.value("blocked").toBool();
        t.waited = o.value("waited").toBool();
        t.ready = i64(o, "ready");
        t.transferStart = i64(o, "transfer_start");
        t.complete = i64(o, "complete");
        t.completeMeasured = o.value("complete_measured").toBool();
        t.baseStall = i64(o, "base_stall");
        t.transferStall = i64(o, "transfer_stall");
        t.queueNs = i64(o, "queue");
        t.slack = i64(o, "slack");
        t.sourceOperand = str(o, "source_operand");
        t.backtailKind = Backtail(std::clamp<int64_t>(i64(o, "backtail_kind"), 0, 3));
        t.backtailOp = str(o, "backtail_op");
        t.backtailStep = int32_t(i64(o, "backtail_step"));
        t.backtail = i64(o, "backtail");
        t.issueTrack = i64(o, "issue_track");
        t.waitTrack = i64(o, "wait_track");
        t.inFlightTrack = i64(o, "in_flight_track");
        t.inFlightStart = i64(o, "in_flight_start");
        t.inFlightEnd = i64(o, "in_flight_end");
        if (t.link >= a.links.size() || t.module >= a.modules.size())
            throw Failure("stored transfers: a transfer names a missing link or module");
        a.transfers.push_back(std::move(t));
    }
    for (const QJsonValue v : root.value("suggestions").toArray()) {
        const QJsonObject o = v.toObject();
        Suggestion s;
        s.kind = str(o, "kind");
        s.program = str(o, "program");
        for (const QJsonValue id : o.value("dmas").toArray())
            s.transfers.push_back(uint32_t(id.toInteger()));
        const QJsonValue to = o.value("to_instr");
        s.toOp = to.isString() && to.toString() != "module start" ? to.toString().toStdString()
                                                                  : std::string();
        s.runs = uint32_t(i64(o, "runs"));
        s.savingNs = i64(o, "saving_ns");
        s.savingPerRunNs = i64(o, "saving_per_run_ns");
        s.evidence = o.value("evidence").toObject();
        s.text = str(o, "text");
        a.suggestions.push_back(std::move(s));
    }
    const QJsonObject unmatched = root.value("unmatched").toObject();
    for (auto it = unmatched.begin(); it != unmatched.end(); ++it)
        a.unmatched[it.key().toStdString()] = uint64_t(it.value().toInteger());
    a.totalNs = i64(root, "total");
    a.stallNs = i64(root, "stall");
    a.baseStallNs = i64(root, "base_stall");
    a.transferStallNs = i64(root, "transfer_stall");
    a.modelErrorPct = root.value("model_error_pct").toDouble();
    a.medianRunErrorPct = root.value("median_run_error_pct").toDouble();
    return a;
}

void save(Workspace& workspace, int64_t profileId, const Analysis& analysis) {
    const std::string bytes = encode(analysis);
    workspace.appendBlob(profileId, kTransfersStream, 0, bytes.data(), bytes.size());
}

std::optional<Analysis> load(const Workspace& workspace, int64_t profileId) {
    const std::vector<std::string> blobs = workspace.readBlobs(profileId, kTransfersStream);
    if (blobs.empty()) return std::nullopt;
    return decode(blobs.front());
}

Analysis ofProfile(Workspace& workspace, int64_t profileId) {
    if (auto stored = load(workspace, profileId)) return std::move(*stored);
    const trace::TraceStore store(workspace, profileId);
    Analysis analysis = derive(store);
    if (!workspace.readOnly()) save(workspace, profileId, analysis);
    return analysis;
}

}  // namespace stallscope::transfers
