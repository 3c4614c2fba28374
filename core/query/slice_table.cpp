// `slice` and `counter`: eponymous virtual tables streaming the level-0 chunks of every trace
// profile (core/trace/trace_store.h). Constraints on profile_id, track_id, ts and (for slices)
// name are pushed down: a time window reads only the chunks overlapping it, a name skips
// every other slice without building its row. A slice's id is its place in the store (track,
// chunk, index: stable for a workspace); parent_id follows the nesting, looking back into
// earlier chunks when a window starts inside a parent.

#include <sqlite3.h>

#include <memory>
#include <optional>
#include <unordered_map>

#include "core/errors.h"
#include "core/kinds.h"
#include "core/query/tables.h"
#include "core/sqlite.h"
#include "core/trace/trace_store.h"

namespace stallscope::query {

namespace {

enum Plan : int { kByProfile = 1, kByTrack = 2, kFrom = 4, kTo = 8, kByName = 16, kById = 32 };
constexpr int kPlanBits[] = {kByProfile, kByTrack, kFrom, kTo, kByName, kById};
constexpr int kPlans = 6;
constexpr int kParentLookBack = 64;  // chunks searched backwards for a window's first parents

struct Columns {
    int profile, ts, track, name, id;  // -1: none
};
constexpr Columns kSliceColumns{0, 2, 4, 6, 1};
constexpr Columns kCounterColumns{0, 2, 3, -1, 1};
constexpr const char* kSliceSchema =
    "CREATE TABLE x(profile_id INTEGER, id INTEGER, ts INTEGER, dur INTEGER, track_id INTEGER, "
    "category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, "
    "instant INTEGER, dur_ps INTEGER)";
constexpr const char* kCounterSchema =
    "CREATE TABLE x(profile_id INTEGER, id INTEGER, ts INTEGER, track_id INTEGER, value REAL)";

struct Table : sqlite3_vtab {
    Workspace* workspace = nullptr;
    bool counters = false;
};

struct Cursor : sqlite3_vtab_cursor {
    Workspace* workspace = nullptr;
    bool counters = false;
    std::optional<int64_t> onlyProfile, onlyTrack;
    std::optional<int64_t> onlySeq, onlyIndex;  // id = x: one item of one chunk
    int64_t from = INT64_MIN, to = INT64_MAX;
    std::optional<std::string> name;

    std::vector<int64_t> profiles;
    size_t nextProfile = 0;
    std::unique_ptr<trace::TraceStore> store;  // kept across filters (a join's probes)
    bool profileOpen = false;
    std::unordered_map<std::string, uint32_t> nameIds;  // of `store`, built on first need
    std::optional<uint32_t> nameId;                     // the name's string id in this profile
    std::vector<int64_t> tracks;
    size_t nextTrack = 0;
    int64_t track = 0;
    std::optional<sql::Statement> chunks;
    int64_t seq = 0;
    std::vector<trace::SliceItem> items;
    std::vector<trace::CounterItem> samples;
    size_t at = 0;
    bool eof = true;
    std::vector<int64_t> open;  // per depth: the id of the slice open there (-1: unknown)
    int64_t parent = -1;

    size_t chunkSize() const { return counters ? samples.size() : items.size(); }
    int64_t id() const { return itemId({store->profileId(), track, seq, int64_t(at)}); }
};

template <bool Counters>
int connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
    const int rc = sqlite3_declare_vtab(db, Counters ? kCounterSchema : kSliceSchema);
    if (rc != SQLITE_OK) return rc;
    auto* table = new Table;
    table->workspace = static_cast<Workspace*>(aux);
    table->counters = Counters;
    *out = table;
    return SQLITE_OK;
}

int disconnect(sqlite3_vtab* table) {
    delete static_cast<Table*>(table);
    return SQLITE_OK;
}

int bestIndex(sqlite3_vtab* vtab, sqlite3_index_info* info) {
    const Columns cols = static_cast<Table*>(vtab)->counters ? kCounterColumns : kSliceColumns;
    int chosen[kPlans] = {-1, -1, -1, -1, -1, -1};  // constraint per plan bit
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& c = info->aConstraint[i];
        if (!c.usable) continue;
        const bool eq = c.op == SQLITE_INDEX_CONSTRAINT_EQ;
        const bool lower = c.op == SQLITE_INDEX_CONSTRAINT_GE || c.op == SQLITE_INDEX_CONSTRAINT_GT;
        const bool upper = c.op == SQLITE_INDEX_CONSTRAINT_LE || c.op == SQLITE_INDEX_CONSTRAINT_LT;
        int bit = -1;
        if (c.iColumn == cols.profile && eq) bit = 0;
        if (c.iColumn == cols.track && eq) bit = 1;
        if (c.iColumn == cols.ts && lower) bit = 2;
        if (c.iColumn == cols.ts && upper) bit = 3;
        if (c.iColumn == cols.name && eq) bit = 4;
        if (c.iColumn == cols.id && eq) bit = 5;
        if (bit >= 0 && chosen[bit] < 0) chosen[bit] = i;
    }
    int plan = 0, argv = 1;
    double cost = 1e8;
    for (int bit = 0; bit < kPlans; ++bit) {
        if (chosen[bit] < 0) continue;
        info->aConstraintUsage[chosen[bit]].argvIndex = argv++;
        plan |= kPlanBits[bit];
        cost /= bit == 5 ? 1e7 : bit <= 1 ? 50 : 10;
    }
    info->idxNum = plan;
    info->estimatedCost = cost;
    info->estimatedRows = sqlite3_int64(cost);
    return SQLITE_OK;
}

int openCursor(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
    auto* table = static_cast<Table*>(vtab);
    auto* cursor = new Cursor;
    cursor->workspace = table->workspace;
    cursor->counters = table->counters;
    *out = cursor;
    return SQLITE_OK;
}

int closeCursor(sqlite3_vtab_cursor* cursor) {
    delete static_cast<Cursor*>(cursor);
    return SQLITE_OK;
}

// The slice at depth `depth - 1` holding `item`, in the chunks before the current one.
int64_t parentBefore(const Cursor& c, const trace::SliceItem& item) {
    sql::Statement st(c.workspace->db(),
                      "SELECT seq, data FROM trace_chunks WHERE profile_id = ? AND track_id = ? "
                      "AND level = 0 AND seq < ? ORDER BY seq DESC LIMIT ?");
    st.bind(1, c.store->profileId()).bind(2, c.track).bind(3, c.seq).bind(4, kParentLookBack);
    std::vector<trace::SliceItem> chunk;
    while (st.step()) {
        chunk.clear();
        trace::decodeSlices(st.blob(1), chunk);
        for (size_t i = chunk.size(); i-- > 0;) {
            const trace::SliceItem& p = chunk[i];
            if (p.depth + 1 == item.depth && p.start <= item.start && p.end() >= item.end())
                return itemId({c.store->profileId(), c.track, st.int64(0), int64_t(i)});
        }
    }
    return -1;
}

// Records the slice at `at` on the nesting stack (every slice read, rows or not).
void push(Cursor& c) {
    const size_t depth = c.items[c.at].depth;
    c.open.resize(depth + 1, -1);  // deeper slices closed; unseen levels unknown
    c.open[depth] = c.id();
}

// The parent of the slice at `at` (after push): the stack's, else looked up before the chunk.
void findParent(Cursor& c) {
    const trace::SliceItem& item = c.items[c.at];
    c.parent = item.depth == 0 ? -1 : c.open[item.depth - 1];
    if (item.depth > 0 && c.parent < 0) c.open[item.depth - 1] = c.parent = parentBefore(c, item);
}

bool startProfile(Cursor& c) {
    while (c.nextProfile < c.profiles.size()) {
        const int64_t profile = c.profiles[c.nextProfile++];
        if (!c.store || c.store->profileId() != profile) {
            c.store = std::make_unique<trace::TraceStore>(*c.workspace, profile);
            c.nameIds.clear();
        }
        c.nameId.reset();
        if (c.name) {
            if (c.nameIds.empty())
                for (uint32_t i = 0; i < c.store->textCount(); ++i)
                    c.nameIds.emplace(c.store->text(i), i);
            const auto it = c.nameIds.find(*c.name);
            if (it == c.nameIds.end()) continue;  // no slice of this profile has it
            c.nameId = it->second;
        }
        c.tracks.clear();
        for (const trace::TrackRow& t : c.store->tracks()) {
            const bool holds = c.counters ? t.samples > 0 : t.slices + t.instants > 0;
            if (holds && (!c.onlyTrack || t.id == *c.onlyTrack)) c.tracks.push_back(t.id);
        }
        c.nextTrack = 0;
        c.profileOpen = true;
        return true;
    }
    return false;
}

bool startTrack(Cursor& c) {
    for (;;) {
        if (c.profileOpen && c.nextTrack < c.tracks.size()) break;
        c.profileOpen = false;
        if (!startProfile(c)) return false;
    }
    c.track = c.tracks[c.nextTrack++];
    c.chunks.reset();
    c.chunks.emplace(c.workspace->db(),
                     "SELECT seq, data FROM trace_chunks WHERE profile_id = ? AND track_id = ? "
                     "AND level = 0 AND end_ns >= ? AND first_ns <= ? AND (?5 IS NULL OR "
                     "seq = ?5) ORDER BY seq");
    c.chunks->bind(1, c.store->profileId()).bind(2, c.track).bind(3, c.from).bind(4, c.to);
    if (c.onlySeq)
        c.chunks->bind(5, *c.onlySeq);
    else
        c.chunks->bindNull(5);
    c.open.clear();
    return true;
}

bool nextChunk(Cursor& c) {
    for (;;) {
        if (c.chunks && c.chunks->step()) {
            c.seq = c.chunks->int64(0);
            c.items.clear();
            c.samples.clear();
            if (c.counters)
                trace::decodeCounters(c.chunks->blob(1), c.samples);
            else
                trace::decodeSlices(c.chunks->blob(1), c.items);
            c.at = 0;
            if (c.chunkSize() > 0) return true;
            continue;
        }
        if (!startTrack(c)) return false;
    }
}

// Whether the item at `at` is a row (after nesting it: rows before a window still nest).
bool isRow(Cursor& c) {
    if (c.onlyIndex && int64_t(c.at) != *c.onlyIndex) {
        if (!c.counters) push(c);
        return false;
    }
    if (c.counters) {
        const int64_t ts = c.samples[c.at].ts;
        return ts >= c.from && ts <= c.to;
    }
    const trace::SliceItem& item = c.items[c.at];
    if (item.kind == trace::ItemKind::Folded) return false;
    push(c);
    if (item.start < c.from || item.start > c.to || (c.nameId && item.name != *c.nameId))
        return false;
    findParent(c);
    return true;
}

// Moves to the first row at or after `at` (`fresh`: `at` itself not yet seen).
int settle(Cursor& c, bool fresh) {
    for (;;) {
        if (!fresh) ++c.at;
        fresh = false;
        if (c.at >= c.chunkSize()) {
            if (!nextChunk(c)) {
                c.eof = true;
                return SQLITE_OK;
            }
        }
        const int64_t start = c.counters ? c.samples[c.at].ts : c.items[c.at].start;
        if (start > c.to) {  // sorted: the rest of the track is after the window
            c.at = c.chunkSize();
            c.chunks.reset();
            continue;
        }
        if (isRow(c)) return SQLITE_OK;
    }
}

int filter(sqlite3_vtab_cursor* base, int plan, const char*, int argc, sqlite3_value** argv) {
    auto* c = static_cast<Cursor*>(base);
    try {
        int arg = 0;
        const auto next = [&]() -> sqlite3_value* { return arg < argc ? argv[arg++] : nullptr; };
        c->onlyProfile.reset();
        c->onlyTrack.reset();
        c->name.reset();
        c->from = INT64_MIN;
        c->to = INT64_MAX;
        if (plan & kByProfile) c->onlyProfile = sqlite3_value_int64(next());
        if (plan & kByTrack) c->onlyTrack = sqlite3_value_int64(next());
        if (plan & kFrom) c->from = int64_t(sqlite3_value_double(next()) - 1);
        if (plan & kTo) c->to = int64_t(sqlite3_value_double(next()) + 1);
        if (plan & kByName) {
            const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(next()));
            c->name = text ? text : "";
        }
        c->onlySeq.reset();
        c->onlyIndex.reset();
        if (plan & kById) {  // the id names its profile, track, chunk and place
            const ItemPlace place = placeOf(sqlite3_value_int64(next()));
            if (c->onlyProfile && *c->onlyProfile != place.profile) c->onlyProfile = -1;
            if (c->onlyTrack && *c->onlyTrack != place.track) c->onlyTrack = -1;  // no row
            if (!c->onlyProfile) c->onlyProfile = place.profile;
            if (!c->onlyTrack) c->onlyTrack = place.track;
            c->onlySeq = place.seq;
            c->onlyIndex = place.index;
        }
        c->profiles = profilesOfKind(*c->workspace, kinds::kTrace, c->onlyProfile);
        c->nextProfile = 0;
        c->profileOpen = false;
        c->tracks.clear();
        c->chunks.reset();
        c->items.clear();
        c->samples.clear();
        c->at = 0;
        c->eof = false;
        return settle(*c, true);
    } catch (const std::exception& e) {
        return failWith(base->pVtab, e);
    }
}

int next(sqlite3_vtab_cursor* base) {
    try {
        return settle(*static_cast<Cursor*>(base), false);
    } catch (const std::exception& e) {
        return failWith(base->pVtab, e);
    }
}

int eof(sqlite3_vtab_cursor* base) {
    return static_cast<Cursor*>(base)->eof ? 1 : 0;
}

void sliceColumn(const Cursor& c, sqlite3_context* ctx, int column) {
    const trace::SliceItem& item = c.items[c.at];
    switch (column) {
        case 0:
            return sqlite3_result_int64(ctx, c.store->profileId());
        case 1:
            return sqlite3_result_int64(ctx, c.id());
        case 2:
            return sqlite3_result_int64(ctx, item.start);
        case 3:
            return sqlite3_result_int64(ctx, item.unended ? -1 : item.dur);
        case 4:
            return sqlite3_result_int64(ctx, c.track);
        case 5:
            return sqlite3_result_null(ctx);  // the importers keep no category
        case 6: {
            const std::string& name = c.store->text(item.name);
            return sqlite3_result_text(ctx, name.data(), int(name.size()), SQLITE_TRANSIENT);
        }
        case 7:
            return sqlite3_result_int64(ctx, item.depth);
        case 8:
            return c.parent < 0 ? sqlite3_result_null(ctx) : sqlite3_result_int64(ctx, c.parent);
        case 9:
            return item.args ? sqlite3_result_int64(ctx, int64_t(item.args))
                             : sqlite3_result_null(ctx);
        case 10:  // an instant event (dur 0), as against a slice that lasted 0 ns
            return sqlite3_result_int(ctx, item.kind == trace::ItemKind::Instant ? 1 : 0);
        default:  // the picoseconds beyond dur's whole ns (Kineto's µs with 6 decimals)
            return sqlite3_result_int(ctx, item.unended ? 0 : item.durPs);
    }
}

int column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
    const auto* c = static_cast<Cursor*>(base);
    if (!c->counters) {
        sliceColumn(*c, ctx, column);
        return SQLITE_OK;
    }
    const trace::CounterItem& s = c->samples[c->at];
    switch (column) {
        case 0:
            sqlite3_result_int64(ctx, c->store->profileId());
            break;
        case 1:
            sqlite3_result_int64(ctx, c->id());
            break;
        case 2:
            sqlite3_result_int64(ctx, s.ts);
            break;
        case 3:
            sqlite3_result_int64(ctx, c->track);
            break;
        default:
            sqlite3_result_double(ctx, s.value);
    }
    return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
    *out = static_cast<Cursor*>(base)->id();
    return SQLITE_OK;
}

template <bool Counters>
sqlite3_module moduleOf() {
    sqlite3_module m{};
    m.xConnect = connect<Counters>;  // xCreate null: eponymous-only, nothing in the schema
    m.xBestIndex = bestIndex;
    m.xDisconnect = disconnect;
    m.xOpen = openCursor;
    m.xClose = closeCursor;
    m.xFilter = filter;
    m.xNext = next;
    m.xEof = eof;
    m.xColumn = column;
    m.xRowid = rowid;
    return m;
}

}  // namespace

void registerSliceModules(Workspace& workspace) {
    static const sqlite3_module slices = moduleOf<false>();
    static const sqlite3_module counters = moduleOf<true>();
    for (const auto& [name, module] : {std::pair{"slice", &slices}, {"counter", &counters}})
        if (sqlite3_create_module(workspace.db(), name, module, &workspace) != SQLITE_OK)
            throw Failure(std::string("cannot register the ") + name +
                          " table: " + sqlite3_errmsg(workspace.db()));
}

}  // namespace stallscope::query
