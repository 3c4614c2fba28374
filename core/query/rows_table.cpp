// Tables whose rows a profile's stored data gives whole: `step` and `step_breakdown` (the step
// analysis), `critical_path` (when that analysis is stored), `args` (one arg set at a time)
// and `flow` (with the slice ids of both ends). Rows are built one profile at a time; a
// profile_id constraint builds only that profile's.

#include <sqlite3.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "core/analysis/cache.h"
#include "core/errors.h"
#include "core/graph/critical_path.h"
#include "core/json_escape.h"
#include "core/kernel_metric_sets.h"
#include "core/kinds.h"
#include "core/noise/absorption.h"
#include "core/query/tables.h"
#include "core/replay/codec.h"
#include "core/replay/simulate.h"
#include "core/sqlite.h"
#include "core/trace/hosts_registration.h"
#include "core/trace/step_registration.h"
#include "core/trace/trace_store.h"
#include "core/transfers/transfers_registration.h"

namespace stallscope::query {

namespace {

using Row = std::vector<Value>;
using Rows = std::vector<Row>;

Value integer(int64_t v) {
    Value out;
    out.type = Value::Type::Integer;
    out.integer = v;
    return out;
}
Value real(double v) {
    Value out;
    out.type = Value::Type::Real;
    out.real = v;
    return out;
}
Value text(std::string v) {
    Value out;
    out.type = Value::Type::Text;
    out.text = std::move(v);
    return out;
}

struct RowTable {
    const char* name;
    const char* schema;       // columns; the first is profile_id
    int keyColumn = -1;       // a column whose `=` value the rows need (args: arg_set_id)
    const char* keyNeeded{};  // the error when it is missing
    std::function<void(Workspace&, int64_t profile, std::optional<int64_t> key, Rows&)> rows;
    std::string_view kind = kinds::kTrace;  // the profiles it has rows for
    // Without the key: the rows a page at a time (page 0, 1, ...); returns whether more follow.
    std::function<bool(Workspace&, int64_t profile, int64_t page, Rows&)> pages;
};

void stepRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto steps = analysis::read(ws, profile, trace::stepsAnalysis());
    if (!steps) return;
    for (const trace::Step& s : steps->steps)
        out.push_back({integer(profile), integer(s.index), text(s.name), integer(s.start),
                       integer(s.duration()), integer(steps->stepTime(s.index))});
}

void breakdownRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto steps = analysis::read(ws, profile, trace::stepsAnalysis());
    if (!steps) return;
    for (const trace::DeviceStepBreakdown& b : steps->breakdown)
        for (size_t k = 0; k < b.ns.size(); ++k)
            out.push_back({integer(profile), integer(b.step),
                           text(steps->devices[size_t(b.device)].name),
                           text(trace::kCategoryNames[k]), integer(b.ns[k])});
}

void pathRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto stored = analysis::stored(ws, profile, graph::criticalPathAnalysis());
    const auto path = graph::CriticalPathAnalysis::cast(stored);
    if (!path) return;
    for (size_t s = 0; s < path->steps.size(); ++s) {
        const graph::StepPath& step = path->steps[s];
        for (size_t i = 0; i < step.segments.size(); ++i) {
            const graph::PathSegment& g = step.segments[i];
            out.push_back({integer(profile), integer(int64_t(s)), text(step.name),
                           integer(int64_t(i)), text(g.kind), text(g.name), integer(g.start),
                           integer(g.dur), g.track >= 0 ? integer(g.track) : Value{}});
        }
    }
}

// A top-level member's integer as written, when `parsed` (QJsonDocument reads every number as a
// double) is an integer too large for a double to hold exactly and the digits fit int64:
// 64-bit ids would otherwise come out rounded.
std::optional<int64_t> exactInteger(std::string_view json, const std::string& key, double parsed) {
    std::string quoted;
    json::appendString(quoted, key);
    quoted.push_back(':');
    for (size_t at = json.find(quoted); at != std::string_view::npos;
         at = json.find(quoted, at + 1)) {
        const char* p = json.data() + at + quoted.size();
        const char* const end = json.data() + json.size();
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
        int64_t value = 0;
        const auto [next, error] = std::from_chars(p, end, value);
        // The digits end the number (no fraction or exponent) and are the member's value.
        if (error == std::errc() &&
            (next == end || (*next != '.' && *next != 'e' && *next != 'E')) &&
            double(value) == parsed)
            return value;
    }
    return std::nullopt;
}

// One arg set flattened: nested objects as "a.b", arrays as "a[0]" (Perfetto's keys). `json`:
// the set's text, for integers a double cannot hold (top-level members).
void flattenArgs(int64_t profile, int64_t set, const std::string& key, const QJsonValue& v,
                 Rows& out, std::string_view json = {}) {
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            flattenArgs(profile, set,
                        key.empty() ? it.key().toStdString() : key + "." + it.key().toStdString(),
                        it.value(), out, key.empty() ? json : std::string_view());
        return;
    }
    if (v.isArray()) {
        const QJsonArray a = v.toArray();
        for (qsizetype i = 0; i < a.size(); ++i)
            flattenArgs(profile, set, key + "[" + std::to_string(i) + "]", a[i], out);
        return;
    }
    Row row{integer(profile), integer(set), text(key), Value{}, Value{}, Value{}};
    if (v.isDouble()) {
        const double d = v.toDouble();
        const bool whole = std::abs(d) < 9.2e18 && d == std::floor(d);
        if (whole && std::abs(d) < 9e15) {
            row[3] = integer(int64_t(d));
        } else if (const auto exact =
                       whole && !json.empty() ? exactInteger(json, key, d) : std::nullopt) {
            row[3] = integer(*exact);
        } else {
            row[5] = real(d);
        }
    } else if (v.isBool()) {
        row[3] = integer(v.toBool() ? 1 : 0);
    } else if (v.isString()) {
        row[4] = text(v.toString().toStdString());
    }
    out.push_back(std::move(row));
}

void argRows(Workspace& ws, int64_t profile, std::optional<int64_t> set, Rows& out) {
    if (!set || *set <= 0) return;
    const trace::TraceStore store(ws, profile);
    const std::string json = store.args(uint64_t(*set));
    if (json.empty()) return;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json));
    flattenArgs(profile, *set, {}, doc.object(), out, json);
}

// Every arg set of a profile, kArgPage ids at a time (ids are dense from 1; an id past the
// last has no text).
constexpr int64_t kArgPage = 16384;
bool argPages(Workspace& ws, int64_t profile, int64_t page, Rows& out) {
    const trace::TraceStore store(ws, profile);
    for (int64_t id = page * kArgPage + 1; id <= (page + 1) * kArgPage; ++id) {
        const std::string json = store.args(uint64_t(id));
        if (json.empty()) return false;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json));
        flattenArgs(profile, id, {}, doc.object(), out, json);
    }
    return true;
}

// The flows with the slice ids of their ends (the slice of the end's depth holding its
// time): each track holding an end is read once.
void flowRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const trace::TraceStore store(ws, profile);
    const std::vector<trace::FlowRow>& flows = store.flows();
    struct End {
        int64_t ts;
        int32_t depth;
        size_t row;
        int column;
    };
    std::map<int64_t, std::vector<End>> ends;  // by track
    for (const trace::FlowRow& f : flows) {
        const size_t row = out.size();
        out.push_back({integer(profile), integer(f.id), text(store.text(f.name)), Value{}, Value{},
                       integer(f.fromTrack), integer(f.fromTs), integer(f.toTrack),
                       integer(f.toTs)});
        if (f.fromDepth >= 0) ends[f.fromTrack].push_back({f.fromTs, f.fromDepth, row, 3});
        if (f.toDepth >= 0) ends[f.toTrack].push_back({f.toTs, f.toDepth, row, 4});
    }
    for (auto& [track, wanted] : ends) {
        std::sort(wanted.begin(), wanted.end(),
                  [](const End& a, const End& b) { return a.ts < b.ts; });
        sql::Statement st(ws.db(),
                          "SELECT seq, data FROM trace_chunks WHERE profile_id = ? AND "
                          "track_id = ? AND level = 0 ORDER BY seq");
        st.bind(1, profile).bind(2, track);
        std::vector<trace::SliceItem> items;
        while (st.step()) {
            items.clear();
            trace::decodeSlices(st.blob(1), items);
            for (size_t i = 0; i < items.size(); ++i) {
                auto it = std::lower_bound(wanted.begin(), wanted.end(), items[i].start,
                                           [](const End& e, int64_t ts) { return e.ts < ts; });
                // An end sits on its slice (at its start, its end or inside): slices of one
                // depth do not overlap, so each end has one.
                for (; it != wanted.end() && it->ts <= items[i].end(); ++it)
                    if (uint32_t(it->depth) == items[i].depth)
                        out[it->row][size_t(it->column)] =
                            integer(itemId({profile, track, st.int64(0), int64_t(i)}));
            }
        }
    }
}

// Transfers (async copies, collectives, memcpys) with their measured times, the link model's
// and the stall split (core/transfers/transfers.h), and the links they ran on.
void transferRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto a = analysis::read(ws, profile, transfers::transfersAnalysis());
    if (!a) return;
    for (const transfers::Transfer& t : a->transfers)
        out.push_back({integer(profile), integer(t.id), text(t.name), text(t.waitName),
                       text(t.opcode), integer(t.link), integer(int64_t(t.bytes)), integer(t.issue),
                       integer(t.wait), integer(t.waitEnd), integer(t.ready),
                       integer(t.transferStart), integer(t.complete), integer(t.baseStall),
                       integer(t.transferStall), integer(t.queueNs), integer(t.slack),
                       integer(t.backtail)});
}

void linkRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto a = analysis::read(ws, profile, transfers::transfersAnalysis());
    if (!a) return;
    for (size_t i = 0; i < a->links.size(); ++i) {
        const transfers::Link& l = a->links[i];
        out.push_back({integer(profile), integer(int64_t(i)), text(l.name), text(l.device),
                       text(l.source), text(l.destination), real(l.peakBytesPerNs),
                       real(l.bytesPerNs), integer(l.baseLatencyNs), integer(int64_t(l.transfers)),
                       integer(int64_t(l.bytes)), integer(l.busyNs)});
    }
}

// The hosts of a multi-host run and their steps (core/trace/hosts.h).
// The hosts analysis of a run profile; none for a single-host trace.
std::shared_ptr<const trace::HostsAnalysis> hostsOf(Workspace& ws, int64_t profile) {
    if (!trace::hostsAnalysis().appliesTo(trace::TraceStore(ws, profile))) return nullptr;
    return analysis::read(ws, profile, trace::hostsAnalysis());
}

void hostRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto a = hostsOf(ws, profile);
    if (!a) return;
    for (const trace::HostSummary& h : a->hosts)
        out.push_back({integer(profile), integer(h.host.index), text(h.host.name),
                       text(h.host.path), integer(h.host.offsetNs), integer(int64_t(h.slices)),
                       integer(h.devices), integer(h.stepTimeMedian())});
}

void hostStepRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const auto a = hostsOf(ws, profile);
    if (!a) return;
    for (const trace::HostSummary& h : a->hosts)
        for (size_t s = 0; s < h.steps.size(); ++s)
            out.push_back({integer(profile), integer(h.host.index), integer(int64_t(s)),
                           text(h.steps[s].name), integer(h.steps[s].start),
                           integer(h.steps[s].duration)});
}

// Noise-injection curves and their fitted absorption (core/noise/absorption.h).
void absorptionRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const noise::AbsorptionReport report = noise::analyzeProfile(ws, profile);
    const auto optional = [](const std::optional<double>& v) { return v ? real(*v) : Value{}; };
    for (const noise::Curve& c : report.curves)
        out.push_back({integer(profile), text(c.machine), text(c.region), text(c.mode),
                       real(c.fit.k1), integer(c.fit.degraded ? 1 : 0), real(c.fit.k1Low),
                       optional(c.fit.k1High), optional(c.fit.k2), real(c.fit.t0),
                       real(c.fit.slope), real(c.fit.intercept), optional(c.absRel()),
                       text(c.timeUnit)});
}

// A replay's DMAs re-simulated (core/replay/simulate.h): times in cycles, the wait's stall
// split into base latency and transfer, and the slack (`dma --json` per DMA).
void dmaRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    const replay::InstructionStream trace = replay::loadInstructionStream(ws, profile);
    const replay::Simulation sim = replay::simulate(trace);
    const auto cycle = [](uint64_t c) {
        return c == replay::kNoCycle ? Value{} : integer(int64_t(c));
    };
    const auto instr = [](uint32_t i) { return i == replay::kNone ? Value{} : integer(i); };
    for (size_t d = 0; d < trace.dmas.size(); ++d) {
        const replay::Dma& dma = trace.dmas[d];
        const replay::DmaTiming& t = sim.dmas[d];
        out.push_back({integer(profile), integer(dma.id), text(trace.machine.linkName(dma.link)),
                       integer(int64_t(dma.bytes())), instr(dma.issueInstr), instr(dma.waitInstr),
                       integer(int64_t(t.issueCycle)), integer(int64_t(t.readyCycle)),
                       integer(int64_t(t.startCycle)), integer(int64_t(t.completeCycle)),
                       cycle(t.waitCycle), integer(int64_t(t.baseStall)),
                       integer(int64_t(t.transferStall)), integer(int64_t(t.slack))});
    }
}

// Nsight Compute and simulator metrics: a kernel is a (kernel, source) pair, numbered in
// import order.
void kernelMetricRows(Workspace& ws, int64_t profile, std::optional<int64_t>, Rows& out) {
    std::map<std::pair<std::string, std::string>, int64_t> kernels;
    forEachKernelMetric(ws.db(), profile, [&](const StoredMetric& m) {
        const auto [it, fresh] = kernels.try_emplace({m.kernel, m.source}, int64_t(kernels.size()));
        out.push_back({integer(profile), integer(it->second), text(m.kernel), text(m.source),
                       text(m.name), m.value ? real(*m.value) : Value{}, text(m.unit),
                       m.text.empty() ? Value{} : text(std::string(m.text))});
    });
}

const std::vector<RowTable>& rowTables() {
    static const std::vector<RowTable> tables{
        {"step",
         "CREATE TABLE x(profile_id INTEGER, id INTEGER, name TEXT, ts INTEGER, dur INTEGER, "
         "step_time INTEGER)",
         -1, nullptr, stepRows},
        {"step_breakdown",
         "CREATE TABLE x(profile_id INTEGER, step INTEGER, device TEXT, category TEXT, "
         "dur INTEGER)",
         -1, nullptr, breakdownRows},
        {"critical_path",
         "CREATE TABLE x(profile_id INTEGER, step INTEGER, step_name TEXT, seq INTEGER, "
         "kind TEXT, name TEXT, ts INTEGER, dur INTEGER, track_id INTEGER)",
         -1, nullptr, pathRows},
        {"args",
         "CREATE TABLE x(profile_id INTEGER, arg_set_id INTEGER, key TEXT, int_value INTEGER, "
         "string_value TEXT, real_value REAL)",
         1, nullptr, argRows, kinds::kTrace, argPages},
        {"flow",
         "CREATE TABLE x(profile_id INTEGER, id INTEGER, name TEXT, slice_out INTEGER, "
         "slice_in INTEGER, track_out INTEGER, ts_out INTEGER, track_in INTEGER, ts_in INTEGER)",
         -1, nullptr, flowRows},
        {"transfer",
         "CREATE TABLE x(profile_id INTEGER, id INTEGER, name TEXT, wait_name TEXT, opcode TEXT, "
         "link_id INTEGER, bytes INTEGER, issue_ts INTEGER, wait_ts INTEGER, wait_end_ts INTEGER, "
         "ready_ts INTEGER, transfer_start_ts INTEGER, complete_ts INTEGER, base_stall INTEGER, "
         "transfer_stall INTEGER, queue INTEGER, slack INTEGER, backtail_ts INTEGER)",
         -1, nullptr, transferRows},
        {"link",
         "CREATE TABLE x(profile_id INTEGER, id INTEGER, name TEXT, device TEXT, source TEXT, "
         "destination TEXT, peak_bytes_per_ns REAL, bytes_per_ns REAL, base_latency_ns INTEGER, "
         "transfers INTEGER, bytes INTEGER, busy_ns INTEGER)",
         -1, nullptr, linkRows},
        {"host",
         "CREATE TABLE x(profile_id INTEGER, id INTEGER, name TEXT, path TEXT, offset_ns INTEGER, "
         "slices INTEGER, devices INTEGER, step_time_median INTEGER)",
         -1, nullptr, hostRows},
        {"host_step",
         "CREATE TABLE x(profile_id INTEGER, host INTEGER, step INTEGER, name TEXT, ts INTEGER, "
         "dur INTEGER)",
         -1, nullptr, hostStepRows},
        {"absorption",
         "CREATE TABLE x(profile_id INTEGER, machine TEXT, region TEXT, mode TEXT, abs_raw REAL, "
         "degraded INTEGER, abs_raw_low REAL, abs_raw_high REAL, k2 REAL, t0 REAL, slope REAL, "
         "intercept REAL, abs_rel REAL, time_unit TEXT)",
         -1, nullptr, absorptionRows, kinds::kNoise},
        {"dma",
         "CREATE TABLE x(profile_id INTEGER, id INTEGER, link TEXT, bytes INTEGER, "
         "issue_instr INTEGER, wait_instr INTEGER, issue_cycle INTEGER, ready_cycle INTEGER, "
         "start_cycle INTEGER, complete_cycle INTEGER, wait_cycle INTEGER, base_stall INTEGER, "
         "transfer_stall INTEGER, slack INTEGER)",
         -1, nullptr, dmaRows, kinds::kReplay},
        {"kernel_metric",
         "CREATE TABLE x(profile_id INTEGER, kernel_id INTEGER, kernel_name TEXT, source TEXT, "
         "name TEXT, value REAL, unit TEXT, text TEXT)",
         -1, nullptr, kernelMetricRows, kinds::kCpi},
    };
    return tables;
}

struct Table : sqlite3_vtab {
    Workspace* workspace = nullptr;
    const RowTable* def = nullptr;
};

struct Cursor : sqlite3_vtab_cursor {
    std::vector<int64_t> profiles;
    size_t nextProfile = 0;
    std::optional<int64_t> key;
    int64_t page = 0;        // the next page of the current profile (tables with pages)
    bool morePages = false;  // whether it has one
    Rows rows;
    size_t at = 0;
    int64_t rowid = 0;
};

int connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
    auto* pair = static_cast<std::pair<Workspace*, const RowTable*>*>(aux);
    const int rc = sqlite3_declare_vtab(db, pair->second->schema);
    if (rc != SQLITE_OK) return rc;
    auto* table = new Table;
    table->workspace = pair->first;
    table->def = pair->second;
    *out = table;
    return SQLITE_OK;
}

int disconnect(sqlite3_vtab* table) {
    delete static_cast<Table*>(table);
    return SQLITE_OK;
}

int bestIndex(sqlite3_vtab* vtab, sqlite3_index_info* info) {
    const RowTable& def = *static_cast<Table*>(vtab)->def;
    int profile = -1, key = -1;
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& c = info->aConstraint[i];
        if (!c.usable || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
        if (c.iColumn == 0 && profile < 0) profile = i;
        if (def.keyColumn >= 0 && c.iColumn == def.keyColumn && key < 0) key = i;
    }
    int argv = 1;
    double cost = 1e6;
    if (profile >= 0) {
        info->aConstraintUsage[profile].argvIndex = argv++;
        info->idxNum |= 1;
        cost /= 100;
    }
    if (key >= 0) {
        info->aConstraintUsage[key].argvIndex = argv++;
        info->idxNum |= 2;
        cost /= 1000;
    } else if (def.keyColumn >= 0) {
        cost = 1e12;  // every key of every profile: only when nothing narrows it
    }
    info->estimatedCost = cost;
    return SQLITE_OK;
}

int openCursor(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
    *out = new Cursor;
    return SQLITE_OK;
}

int closeCursor(sqlite3_vtab_cursor* c) {
    delete static_cast<Cursor*>(c);
    return SQLITE_OK;
}

// Builds rows (a profile's, or its next page) until some exist or none are left.
void fill(Cursor& c, Table& table) {
    const RowTable& def = *table.def;
    const bool paging = !c.key && def.pages;
    while (c.at >= c.rows.size()) {
        c.rows.clear();
        c.at = 0;
        if (paging && c.morePages) {
            c.morePages =
                def.pages(*table.workspace, c.profiles[c.nextProfile - 1], c.page++, c.rows);
            continue;
        }
        if (c.nextProfile >= c.profiles.size()) return;
        const int64_t profile = c.profiles[c.nextProfile++];
        if (paging) {
            c.page = 0;
            c.morePages = def.pages(*table.workspace, profile, c.page++, c.rows);
        } else {
            def.rows(*table.workspace, profile, c.key, c.rows);
        }
    }
}

int filter(sqlite3_vtab_cursor* base, int plan, const char*, int argc, sqlite3_value** argv) {
    auto* c = static_cast<Cursor*>(base);
    auto& table = *static_cast<Table*>(base->pVtab);
    try {
        int arg = 0;
        std::optional<int64_t> profile;
        if (plan & 1) profile = sqlite3_value_int64(argv[arg++]);
        c->key.reset();
        if (plan & 2) c->key = sqlite3_value_int64(argv[arg++]);
        if (table.def->keyColumn >= 0 && !c->key && !table.def->pages)
            throw InputError(table.def->keyNeeded);
        c->morePages = false;
        (void)argc;
        c->profiles = profilesOfKind(*table.workspace, table.def->kind, profile);
        c->nextProfile = 0;
        c->rows.clear();
        c->at = 0;
        c->rowid = 0;
        fill(*c, table);
        return SQLITE_OK;
    } catch (const std::exception& e) {
        return failWith(base->pVtab, e);
    }
}

int next(sqlite3_vtab_cursor* base) {
    auto* c = static_cast<Cursor*>(base);
    try {
        ++c->at;
        ++c->rowid;
        fill(*c, *static_cast<Table*>(base->pVtab));
        return SQLITE_OK;
    } catch (const std::exception& e) {
        return failWith(base->pVtab, e);
    }
}

int eof(sqlite3_vtab_cursor* base) {
    const auto* c = static_cast<Cursor*>(base);
    return c->at >= c->rows.size() ? 1 : 0;
}

int column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
    const auto* c = static_cast<Cursor*>(base);
    const Value& v = c->rows[c->at][size_t(column)];
    switch (v.type) {
        case Value::Type::Integer:
            sqlite3_result_int64(ctx, v.integer);
            break;
        case Value::Type::Real:
            sqlite3_result_double(ctx, v.real);
            break;
        case Value::Type::Text:
            sqlite3_result_text(ctx, v.text.data(), int(v.text.size()), SQLITE_TRANSIENT);
            break;
        default:
            sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
    *out = static_cast<Cursor*>(base)->rowid;
    return SQLITE_OK;
}

const sqlite3_module& rowModule() {
    static const sqlite3_module m = [] {
        sqlite3_module out{};
        out.xConnect = connect;  // eponymous-only: nothing in the workspace's schema
        out.xBestIndex = bestIndex;
        out.xDisconnect = disconnect;
        out.xOpen = openCursor;
        out.xClose = closeCursor;
        out.xFilter = filter;
        out.xNext = next;
        out.xEof = eof;
        out.xColumn = column;
        out.xRowid = rowid;
        return out;
    }();
    return m;
}

}  // namespace

std::vector<std::string> rowTableNames() {
    std::vector<std::string> names;
    for (const RowTable& def : rowTables()) names.emplace_back(def.name);
    return names;
}

void registerRowModules(Workspace& workspace) {
    for (const RowTable& def : rowTables()) {
        // Freed by SQLite when the connection closes.
        auto* aux = new std::pair<Workspace*, const RowTable*>(&workspace, &def);
        const int rc = sqlite3_create_module_v2(
            workspace.db(), def.name, &rowModule(), aux,
            [](void* p) { delete static_cast<std::pair<Workspace*, const RowTable*>*>(p); });
        if (rc != SQLITE_OK)
            throw Failure(std::string("cannot register the ") + def.name +
                          " table: " + sqlite3_errmsg(workspace.db()));
    }
}

}  // namespace stallscope::query
