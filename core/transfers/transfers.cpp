// Transfers: dispatch by profile, JSON reports, storage with the profile.
#include "core/transfers/transfers.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <unordered_set>

#include "core/beside_thread.h"
#include "core/errors.h"
#include "core/json_escape.h"
#include "core/sqlite.h"
#include "core/trace/dialect.h"
#include "core/trace/hosts.h"
#include "core/trace/trace_format.h"
#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"
#include "core/workspace.h"

namespace stallscope::transfers {

namespace {
// Texts interned by Name: never freed (their number is the number of distinct names).
struct NamePool {
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const {
            return std::hash<std::string_view>()(text);
        }
    };
    std::mutex lock;
    std::unordered_set<std::string, Hash, std::equal_to<>> texts;
};
NamePool& namePool() {
    static NamePool* pool = new NamePool;  // outlives every static Name
    return *pool;
}
}  // namespace

Name::Name(std::string_view text) {
    if (text.empty()) {
        text_ = &emptyText();
        return;
    }
    NamePool& pool = namePool();
    const std::lock_guard guard(pool.lock);
    auto found = pool.texts.find(text);
    if (found == pool.texts.end()) found = pool.texts.emplace(text).first;
    text_ = &*found;
}

const std::string& Name::emptyText() {
    static const std::string* empty = new std::string;
    return *empty;
}

namespace detail {

TrackHosts::TrackHosts(const trace::TraceStore& store) {
    const std::vector<trace::RunHost> hosts = trace::runHosts(store.metadata());
    if (hosts.empty()) return;
    int64_t maxId = 0;
    for (const trace::TrackRow& t : store.tracks()) maxId = std::max(maxId, t.id);
    byTrack_.assign(size_t(maxId + 1), -1);
    std::map<int64_t, int> hostOfTrack;
    for (const trace::RunHost& h : hosts) {
        hostOfTrack[h.track] = int(names_.size());
        names_.push_back(h.name);
    }
    for (const trace::TrackRow& t : store.tracks()) {
        // The root of the track's tree is its host track (a track's parent comes first).
        const trace::TrackRow* root = &t;
        while (root->parent >= 0) {
            const trace::TrackRow* up = store.track(root->parent);
            if (!up) break;
            root = up;
        }
        const auto host = hostOfTrack.find(root->id);
        if (host != hostOfTrack.end()) byTrack_[size_t(t.id)] = host->second;
    }
}

int TrackHosts::of(int64_t track) const {
    return track >= 0 && size_t(track) < byTrack_.size() ? byTrack_[size_t(track)] : -1;
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

namespace {

// Which derivation reads the trace: XLA op lines (XProf), or Chrome-style threads with runtime
// calls and device copies (Kineto); none for other evidence.
enum class Path { Xla, ChromeThreads, None };
Path pathOf(const trace::TraceStore& store) {
    const trace::EvidenceSet evidence = trace::evidenceOf(store);
    if (evidence.has(trace::Evidence::XlaOpLines)) return Path::Xla;
    if (evidence.has(trace::Evidence::ChromeThreads)) return Path::ChromeThreads;
    return Path::None;
}

}  // namespace

uint64_t derivationSlices(const trace::TraceStore& store) {
    const Path path = pathOf(store);
    if (path == Path::Xla) return detail::xprofDerivationSlices(store);
    uint64_t slices = 0;
    if (path == Path::ChromeThreads)
        for (const trace::TrackRow& track : store.tracks()) slices += track.slices;
    return slices;
}

bool deriveAtImport(const trace::TraceStore& store, uint64_t maxSlices) {
    if (pathOf(store) == Path::ChromeThreads) return true;
    if (derivationSlices(store) <= maxSlices) return true;
    uint64_t all = 0;
    for (const trace::TrackRow& track : store.tracks()) all += track.slices;
    return 2 * detail::xprofXlaSlices(store) <= all;
}

Analysis derive(const trace::TraceStore& store) {
    switch (pathOf(store)) {
        case Path::Xla:
            return detail::deriveXprof(store);
        case Path::ChromeThreads:
            return detail::deriveKineto(store);
        case Path::None:
            break;
    }
    // Say why there are none rather than print an empty analysis.
    Analysis none;
    const trace::EvidenceSet evidence = trace::evidenceOf(store);
    if (!evidence.has(trace::Evidence::Durations))
        none.note =
            "no durations: the trace states what ran (sizes, op counts) but not when or "
            "how long; there are no transfer times";
    else if (evidence.has(trace::Evidence::NodeGraph))
        none.note =
            "Chakra traces hold collectives as nodes with sizes, not as issued and "
            "awaited transfers: none are derived";
    else
        none.note = "the trace has neither XLA async op pairs nor runtime copy calls";
    return none;
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

namespace {

QJsonObject transferJson(const Analysis& a, const Transfer& t) {
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
    return o;
}

// dmaJson without its arrays of transfers and runs (the streamed writer's head).
QJsonObject dmaSummaryJson(const Analysis& a) {
    QJsonObject root;
    root["time_unit"] = "ns";
    root["source"] = qs(a.source);
    root["total_cycles"] = qint64(a.totalNs);
    root["stall_cycles"] = qint64(a.stallNs);
    root["base_stall_cycles"] = qint64(a.baseStallNs);
    root["transfer_stall_cycles"] = qint64(a.transferStallNs);
    root["model_error_pct"] = a.modelErrorPct;
    root["median_run_error_pct"] = a.medianRunErrorPct;
    if (!a.note.empty()) root["note"] = qs(a.note);
    QJsonArray links;
    for (const Link& link : a.links) links.append(linkJson(link));
    root["links"] = links;
    QJsonObject unmatched;
    for (const auto& [what, count] : a.unmatched) unmatched[qs(what)] = qint64(count);
    root["unmatched"] = unmatched;
    return root;
}

// `value` as QJsonDocument indents it at `depth` levels (4 spaces each), without a newline
// after it; the first line not indented (it follows its key).
std::string indentedJson(const QJsonValue& value, int depth) {
    // The document of an array holding the value: its lines but the first and last are the
    // value's, one level deep.
    const QByteArray doc = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Indented);
    std::string text(doc.constData() + 2, size_t(doc.size()) - 2);  // after "[\n"
    text.resize(text.rfind("\n]"));
    const std::string pad(size_t(4 * (depth - 1)), ' ');
    std::string out;
    size_t from = 4;  // the first line's own indent
    while (from <= text.size()) {
        const size_t nl = text.find('\n', from);
        const size_t end = nl == std::string::npos ? text.size() : nl;
        if (!out.empty()) out += "\n" + pad + "    ";
        out.append(text, from, end - from);
        if (nl == std::string::npos) break;
        from = nl + 1 + 4;  // each line carries the array's level
    }
    return out;
}

}  // namespace

QJsonObject dmaJson(const Analysis& a) {
    QJsonObject root = dmaSummaryJson(a);
    QJsonArray dmas, modules;
    for (const Transfer& t : a.transfers) dmas.append(transferJson(a, t));
    for (const ModuleRun& run : a.modules) modules.append(moduleJson(run));
    root["dmas"] = dmas;
    root["modules"] = modules;
    return root;
}

void writeDmaJson(const Analysis& a, std::ostream& out) {
    const QJsonObject head = dmaSummaryJson(a);
    // QJsonDocument's member order (sorted keys) with the two long arrays among them.
    std::map<std::string, std::function<void()>> members;
    for (auto it = head.begin(); it != head.end(); ++it) {
        const QJsonValue value = it.value();
        members[it.key().toStdString()] = [&out, value] { out << indentedJson(value, 1); };
    }
    auto array = [&out](size_t count, const std::function<QJsonObject(size_t)>& element) {
        out << "[\n";
        for (size_t i = 0; i < count; ++i)
            out << "        " << indentedJson(element(i), 2) << (i + 1 < count ? ",\n" : "\n");
        out << "    ]";
    };
    members["dmas"] = [&] {
        array(a.transfers.size(), [&a](size_t i) { return transferJson(a, a.transfers[i]); });
    };
    members["modules"] = [&] {
        array(a.modules.size(), [&a](size_t i) { return moduleJson(a.modules[i]); });
    };
    out << "{\n";
    size_t left = members.size();
    for (const auto& [key, write] : members) {
        out << "    \"" << key << "\": ";
        write();
        out << (--left ? ",\n" : "\n");
    }
    out << "}\n";
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

// Kineto runs are named by their host thread ("thread 3113936 (python3.8)"), whose id changes
// from one run of a script to the next, so the id is left out ("thread (python3.8)").
std::string programOf(const std::string& runName) {
    if (!runName.starts_with("thread ")) return runName;
    size_t digits = 7;
    while (digits < runName.size() && std::isdigit(static_cast<unsigned char>(runName[digits])))
        ++digits;
    return digits == 7 ? runName : "thread" + runName.substr(digits);
}

// ---- Storage: "SSTX", a format version byte, then one zstd frame of varint-packed records
// (links, runs, transfers, suggestions, unmatched counts, totals). A view reads it whole; the
// version lets a later layout refuse or convert old payloads.
namespace {

constexpr char kMagic[4] = {'S', 'S', 'T', 'X'};
// 2: the same layout, derived anew (stop 26: Kineto waits, link fits, collectives without a
// size): an older analysis is derived again on its first request instead of shown stale.
// 3: the same layout (stop 27: multi-host runs' correlations per host, XProf GPU runtime
// copies, per-copy-cost link fits).
// 4: the analysis's note at the end (why a trace has no transfers, when it is known).
constexpr uint8_t kVersion = uint8_t(kEncodingVersion);

using trace::ByteReader;
using trace::ByteWriter;

void putString(ByteWriter& w, const std::string& s) {
    w.varint(s.size());
    w.bytesAppend(s);
}
// A record count: each record takes at least a byte, so more than the bytes left is corrupt
// (and must not size an allocation).
size_t countOf(ByteReader& r) {
    const uint64_t n = r.varint();
    if (n > r.remaining()) throw Failure("stored transfers: corrupt record count");
    return size_t(n);
}
std::string getString(ByteReader& r) {
    const uint64_t n = r.varint();
    return std::string(r.take(n));
}

}  // namespace

// Transfers from which encode() writes on two threads.
constexpr size_t kParallelEncodeTransfers = 200000;

// Distinct names in first-seen order and their indices, keyed by the interned text's address.
// Consecutive transfers repeat a handful of names: a small cache answers most lookups.
struct NameTable {
    std::unordered_map<const std::string*, uint32_t> index;
    std::vector<const std::string*> texts;
    void add(const Name& name) {
        const std::string*& seen = seen_[(uintptr_t(name.key()) >> 4) % seen_.size()];
        if (seen == name.key()) return;
        seen = name.key();
        if (index.try_emplace(name.key(), uint32_t(texts.size())).second)
            texts.push_back(name.key());
    }
    // Lookups from one thread (the table itself is only read).
    class Reader {
      public:
        explicit Reader(const NameTable& table) : table_(table) {}
        uint32_t of(const Name& name) {
            Slot& slot = slots_[(uintptr_t(name.key()) >> 4) % slots_.size()];
            if (slot.key != name.key()) slot = {name.key(), table_.index.at(name.key())};
            return slot.value;
        }

      private:
        struct Slot {
            const std::string* key = nullptr;
            uint32_t value = 0;
        };
        const NameTable& table_;
        std::array<Slot, 64> slots_{};
    };

  private:
    std::array<const std::string*, 64> seen_{};
};

// Records compressed a piece at a time: each kPieceBytes of them become a zstd frame of their
// own, appended to `packed` (a payload is its frames in order). An import's millions of
// transfers never sit in one buffer of hundreds of MB (written, grown and compressed: most of
// encoding 3M transfers was faulting in fresh pages).
class FrameSink {
  public:
    static constexpr size_t kPieceBytes = size_t(8) << 20;
    FrameSink() { writer.reserve(kPieceBytes + (size_t(64) << 10)); }
    ByteWriter writer;
    // After each record: a full piece becomes a frame.
    void record() {
        if (writer.size() >= kPieceBytes) flush();
    }
    void flush() {
        if (writer.size() == 0) return;
        trace::packChunk(writer.bytes(), frame_);
        packed += frame_;
        writer.clear();
    }
    std::string packed;

  private:
    std::string frame_;
};

// The records after the transfers: suggestions, unmatched counts, totals.
void writeSummary(const Analysis& a, ByteWriter& w) {
    w.varint(a.suggestions.size());
    for (const Suggestion& s : a.suggestions) {
        putString(w, s.kind);
        putString(w, s.program);
        w.varint(s.transfers.size());
        for (uint32_t id : s.transfers) w.varint(id);
        putString(w, s.toOp);
        w.varint(s.runs);
        w.zigzag(s.savingNs);
        w.zigzag(s.savingPerRunNs);
        putString(w, QJsonDocument(s.evidence).toJson(QJsonDocument::Compact).toStdString());
        putString(w, s.text);
    }
    w.varint(a.unmatched.size());
    for (const auto& [what, count] : a.unmatched) {
        putString(w, what);
        w.varint(count);
    }
    for (int64_t v : {a.totalNs, a.stallNs, a.baseStallNs, a.transferStallNs}) w.zigzag(v);
    w.real(a.modelErrorPct);
    w.real(a.medianRunErrorPct);
    putString(w, a.note);
}

// Transfers to encode where they are: a run of them, and what their link and run indices
// take in the analysis written (a part of a merge not yet made).
struct TransferRange {
    const std::vector<Transfer>* transfers;
    uint32_t linkBase = 0, moduleBase = 0;
};

// The analysis `a` (its transfers aside) with the transfers of `ranges`, in order.
std::string encodeWith(const Analysis& a, const std::vector<TransferRange>& ranges) {
    size_t count = 0;
    for (const TransferRange& range : ranges) count += range.transfers->size();
    // Visits the transfers [from, to) of all the ranges with their range.
    auto each = [&ranges](size_t from, size_t to, const auto& visit) {
        size_t at = 0;
        for (const TransferRange& range : ranges) {
            const size_t size = range.transfers->size();
            for (size_t i = std::max(from, at); i < std::min(to, at + size); ++i)
                visit((*range.transfers)[i - at], range);
            at += size;
        }
    };
    FrameSink head;
    ByteWriter& w = head.writer;
    putString(w, a.source);
    w.varint(a.links.size());
    for (const Link& l : a.links) {
        putString(w, l.name);
        putString(w, l.device);
        putString(w, l.source);
        putString(w, l.destination);
        w.real(l.peakBytesPerNs);
        putString(w, l.peakSource);
        w.real(l.bytesPerNs);
        w.zigzag(l.baseLatencyNs);
        w.varint(l.fitObservations);
        w.varint(l.bandwidthLowerBound ? 1 : 0);
        w.varint(l.transfers);
        w.varint(l.bytes);
        w.zigzag(l.busyNs);
    }
    w.varint(a.modules.size());
    for (const ModuleRun& m : a.modules) {
        putString(w, m.name);
        putString(w, m.device);
        w.zigzag(m.track);
        w.zigzag(m.start);
        w.zigzag(m.end - m.start);
        w.varint(m.transfers.size());
        for (uint32_t id : m.transfers) w.varint(id);
        w.zigzag(m.stallNs);
        w.zigzag(m.baseStallNs);
        w.zigzag(m.transferStallNs);
        w.zigzag(m.computeNs);
        w.zigzag(m.simulatedNs);
        head.record();
    }
    // The transfers' names, each written once; records carry their index.
    NameTable names;
    each(0, count, [&names](const Transfer& t, const TransferRange&) {
        for (const Name* n :
             {&t.name, &t.waitName, &t.opcode, &t.elementType, &t.sourceOperand, &t.backtailOp})
            names.add(*n);
    });
    w.varint(names.texts.size());
    for (const std::string* text : names.texts) {
        putString(w, *text);
        head.record();
    }
    w.varint(count);
    head.flush();
    // The transfers' records are independent: millions of them (an import's) are written in
    // two halves on two threads, each compressing its own frames, the second's after the first.
    auto writeTransfers = [&each, &names](size_t from, size_t to, FrameSink& sink) {
        ByteWriter& out = sink.writer;
        NameTable::Reader index(names);
        each(from, to, [&](const Transfer& t, const TransferRange& range) {
            sink.record();
            out.varint(index.of(t.name));
            out.varint(index.of(t.waitName));
            out.varint(index.of(t.opcode));
            out.varint(index.of(t.elementType));
            out.varint(t.link + range.linkBase);
            out.varint(t.module + range.moduleBase);
            out.varint(t.bytes);
            out.zigzag(t.issueStep);
            out.zigzag(t.waitStep);
            // Times as offsets from the issue: small varints.
            out.zigzag(t.issue);
            for (int64_t v : {t.wait, t.waitEnd, t.ready, t.transferStart, t.complete, t.backtail,
                              t.inFlightStart, t.inFlightEnd})
                out.zigzag(v - t.issue);
            out.varint((t.blocked ? 1u : 0u) | (t.waited ? 2u : 0u) |
                       (t.completeMeasured ? 4u : 0u));
            out.zigzag(t.baseStall);
            out.zigzag(t.transferStall);
            out.zigzag(t.queueNs);
            out.zigzag(t.slack);
            out.varint(index.of(t.sourceOperand));
            out.varint(uint64_t(t.backtailKind));
            out.varint(index.of(t.backtailOp));
            out.zigzag(t.backtailStep);
            out.zigzag(t.issueTrack);
            out.zigzag(t.waitTrack);
            out.zigzag(t.inFlightTrack);
        });
        sink.flush();
    };
    FrameSink first, second;
    if (count < kParallelEncodeTransfers) {
        writeTransfers(0, count, first);
    } else {
        const size_t half = count / 2;
        BesideThread helper;
        helper.start([&] { writeTransfers(half, count, second); });
        writeTransfers(0, half, first);
        helper.join();
    }
    FrameSink tail;
    writeSummary(a, tail.writer);
    tail.flush();
    std::string out(kMagic, 4);
    out.push_back(char(kVersion));
    out.reserve(5 + head.packed.size() + first.packed.size() + second.packed.size() +
                tail.packed.size());
    for (const FrameSink* sink : {&head, &first, &second, &tail}) out += sink->packed;
    return out;
}

std::string encode(const Analysis& a) {
    return encodeWith(a, {TransferRange{&a.transfers, 0, 0}});
}

namespace detail {
std::string encodeParts(const MergedParts& merged) {
    std::vector<TransferRange> ranges;
    for (const TransferPart& part : merged.transfers)
        ranges.push_back({&part.transfers, part.linkBase, part.moduleBase});
    return encodeWith(merged.shell, ranges);
}
}  // namespace detail

Analysis decode(std::string_view bytes) {
    if (bytes.size() < 5 || bytes.substr(0, 4) != std::string_view(kMagic, 4))
        throw Failure("stored transfers: not a transfer analysis");
    if (uint8_t(bytes[4]) != kVersion)
        throw Failure("stored transfers: format version " + std::to_string(uint8_t(bytes[4])) +
                      " is not " + std::to_string(kVersion));
    const std::string raw = trace::unpackChunk(bytes.substr(5));
    ByteReader r(raw);
    Analysis a;
    a.source = getString(r);
    a.links.resize(countOf(r));
    for (Link& l : a.links) {
        l.name = getString(r);
        l.device = getString(r);
        l.source = getString(r);
        l.destination = getString(r);
        l.peakBytesPerNs = r.real();
        l.peakSource = getString(r);
        l.bytesPerNs = r.real();
        l.baseLatencyNs = r.zigzag();
        l.fitObservations = uint32_t(r.varint());
        l.bandwidthLowerBound = r.varint() != 0;
        l.transfers = r.varint();
        l.bytes = r.varint();
        l.busyNs = r.zigzag();
    }
    a.modules.resize(countOf(r));
    for (ModuleRun& m : a.modules) {
        m.name = getString(r);
        m.device = getString(r);
        m.track = r.zigzag();
        m.start = r.zigzag();
        m.end = m.start + r.zigzag();
        m.transfers.resize(countOf(r));
        for (uint32_t& id : m.transfers) id = uint32_t(r.varint());
        m.stallNs = r.zigzag();
        m.baseStallNs = r.zigzag();
        m.transferStallNs = r.zigzag();
        m.computeNs = r.zigzag();
        m.simulatedNs = r.zigzag();
    }
    std::vector<Name> names(countOf(r));
    for (Name& name : names) name = Name(getString(r));
    auto name = [&r, &names] {
        const uint64_t at = r.varint();
        if (at >= names.size()) throw Failure("stored transfers: a name index out of range");
        return names[size_t(at)];
    };
    a.transfers.resize(countOf(r));
    for (size_t i = 0; i < a.transfers.size(); ++i) {
        Transfer& t = a.transfers[i];
        t.id = uint32_t(i);
        t.name = name();
        t.waitName = name();
        t.opcode = name();
        t.elementType = name();
        t.link = uint32_t(r.varint());
        t.module = uint32_t(r.varint());
        t.bytes = r.varint();
        t.issueStep = int32_t(r.zigzag());
        t.waitStep = int32_t(r.zigzag());
        t.issue = r.zigzag();
        for (int64_t* v : {&t.wait, &t.waitEnd, &t.ready, &t.transferStart, &t.complete,
                           &t.backtail, &t.inFlightStart, &t.inFlightEnd})
            *v = t.issue + r.zigzag();
        const uint64_t flags = r.varint();
        t.blocked = flags & 1;
        t.waited = flags & 2;
        t.completeMeasured = flags & 4;
        t.baseStall = r.zigzag();
        t.transferStall = r.zigzag();
        t.queueNs = r.zigzag();
        t.slack = r.zigzag();
        t.sourceOperand = name();
        t.backtailKind = Backtail(std::min<uint64_t>(r.varint(), uint64_t(Backtail::Unknown)));
        t.backtailOp = name();
        t.backtailStep = int32_t(r.zigzag());
        t.issueTrack = r.zigzag();
        t.waitTrack = r.zigzag();
        t.inFlightTrack = r.zigzag();
        if (t.link >= a.links.size() || t.module >= a.modules.size())
            throw Failure("stored transfers: a transfer names a missing link or module");
    }
    a.suggestions.resize(countOf(r));
    for (Suggestion& s : a.suggestions) {
        s.kind = getString(r);
        s.program = getString(r);
        s.transfers.resize(countOf(r));
        for (uint32_t& id : s.transfers) id = uint32_t(r.varint());
        s.toOp = getString(r);
        s.runs = uint32_t(r.varint());
        s.savingNs = r.zigzag();
        s.savingPerRunNs = r.zigzag();
        s.evidence = QJsonDocument::fromJson(QByteArray::fromStdString(getString(r))).object();
        s.text = getString(r);
    }
    for (size_t n = countOf(r); n > 0; --n) {
        std::string what = getString(r);
        a.unmatched[what] = r.varint();
    }
    for (int64_t* v : {&a.totalNs, &a.stallNs, &a.baseStallNs, &a.transferStallNs}) *v = r.zigzag();
    a.modelErrorPct = r.real();
    a.medianRunErrorPct = r.real();
    a.note = getString(r);
    return a;
}

StoredDerivation deriveForStorage(const trace::TraceStore& store) {
    StoredDerivation out;
    if (pathOf(store) == Path::Xla) {
        // A device per part: encoded as merged, never merged (3M transfers: half a second).
        const detail::MergedParts merged = detail::deriveXprofParts(store);
        out.bytes = detail::encodeParts(merged);
        for (const detail::TransferPart& part : merged.transfers)
            out.transfers += part.transfers.size();
        out.modelErrorPct = merged.shell.modelErrorPct;
        out.stallNs = merged.shell.stallNs;
        out.totalNs = merged.shell.totalNs;
        return out;
    }
    const Analysis analysis = derive(store);
    out.bytes = encode(analysis);
    out.transfers = analysis.transfers.size();
    out.modelErrorPct = analysis.modelErrorPct;
    out.stallNs = analysis.stallNs;
    out.totalNs = analysis.totalNs;
    return out;
}

}  // namespace stallscope::transfers
