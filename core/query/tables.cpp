#include "core/query/tables.h"

#include <sqlite3.h>

#include <chrono>
#include <set>

#include "core/errors.h"
#include "core/sqlite.h"

namespace stallscope::query {

namespace {

// Views over the stored rows, in the connection's temp schema (the file is not touched).
// Names and columns follow Perfetto where it has the concept (track, thread, process).
constexpr const char* kViews = R"sql(
CREATE TEMP VIEW profile AS SELECT id, name, kind, source_path AS source, source_size,
    imported_at, parent_id, metadata FROM main.profiles;
CREATE TEMP VIEW track AS SELECT profile_id, id, name, kind AS type, parent_id, pid, tid,
    slices AS slice_count, instants AS instant_count, samples AS sample_count, max_depth,
    start_ns AS ts, end_ns - start_ns AS dur FROM main.trace_tracks;
CREATE TEMP VIEW thread AS SELECT profile_id, id AS utid, id AS track_id, tid, name,
    parent_id AS upid FROM main.trace_tracks WHERE kind = 'thread';
CREATE TEMP VIEW process AS SELECT profile_id, id AS upid, id AS track_id, pid, name
    FROM main.trace_tracks WHERE kind = 'process';
CREATE TEMP VIEW noise_run AS SELECT profile_id, line, machine, region, mode, k, time,
    time_unit, rep, body_instr, payload_instr, overhead_instr, cores, perf, params
    FROM main.noise_runs;
CREATE TEMP VIEW cpi_stack AS SELECT profile_id, kernel, source, grp AS "group", category,
    cycles FROM main.cpi_stacks;
CREATE TEMP VIEW estimate AS SELECT profile_id, workload, region, hardware, estimator,
    predicted_us, measured_us, wall_s FROM main.estimates;
)sql";

// PRAGMAs that only report: those taking a table or index name, and settings read without a
// value.
const std::set<std::string, std::less<>> kReportingPragmas = {
    "table_info",  "table_xinfo",      "table_list",      "index_list",  "index_info",
    "index_xinfo", "foreign_key_list", "integrity_check", "quick_check", "foreign_key_check"};
const std::set<std::string, std::less<>> kReadableSettings = {
    "database_list",   "function_list",  "module_list",    "pragma_list",    "collation_list",
    "compile_options", "user_version",   "application_id", "schema_version", "page_count",
    "page_size",       "freelist_count", "encoding",       "journal_mode",   "data_version"};

struct Guard {
    std::string refused;  // why the statement was refused, for the message
};

// Reads pass; anything that writes, attaches, or sets a PRAGMA is refused.
int authorize(void* context, int action, const char* a, const char* b, const char*, const char*) {
    auto* guard = static_cast<Guard*>(context);
    switch (action) {
        case SQLITE_SELECT:
        case SQLITE_READ:
        case SQLITE_FUNCTION:
        case SQLITE_RECURSIVE:
            return SQLITE_OK;
        case SQLITE_PRAGMA:
            if (a && kReportingPragmas.count(std::string_view(a))) return SQLITE_OK;
            if (a && !b && kReadableSettings.count(std::string_view(a))) return SQLITE_OK;
            guard->refused = std::string("PRAGMA ") + (a ? a : "") + (b ? " with a value" : "");
            return SQLITE_DENY;
        case SQLITE_INSERT:
            guard->refused = std::string("INSERT into ") + (a ? a : "");
            return SQLITE_DENY;
        case SQLITE_UPDATE:
            guard->refused = std::string("UPDATE of ") + (a ? a : "");
            return SQLITE_DENY;
        case SQLITE_DELETE:
            guard->refused = std::string("DELETE from ") + (a ? a : "");
            return SQLITE_DENY;
        default:
            guard->refused = "a statement that changes the workspace or the connection";
            return SQLITE_DENY;
    }
}

struct ProgressContext {
    Progress* progress = nullptr;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    int64_t rows = 0;
};

int pollProgress(void* context) {
    auto* c = static_cast<ProgressContext*>(context);
    if (!c->progress) return 0;
    if (c->progress->isCancelled()) return 1;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - c->started).count();
    try {
        c->progress->report(0.0, "query: " + std::to_string(c->rows) + " rows, " +
                                     std::to_string(int(seconds)) + " s");
    } catch (const Cancelled&) {
        return 1;
    }
    return 0;
}

Value valueOf(sqlite3_stmt* st, int column) {
    Value v;
    switch (sqlite3_column_type(st, column)) {
        case SQLITE_INTEGER:
            v.type = Value::Type::Integer;
            v.integer = sqlite3_column_int64(st, column);
            break;
        case SQLITE_FLOAT:
            v.type = Value::Type::Real;
            v.real = sqlite3_column_double(st, column);
            break;
        case SQLITE_TEXT:
        case SQLITE_BLOB: {
            v.type = Value::Type::Text;
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, column));
            v.text.assign(text ? text : "", size_t(sqlite3_column_bytes(st, column)));
            break;
        }
        default:
            break;
    }
    return v;
}

// Prepares `sql` under the guard: one statement, reading only.
sqlite3_stmt* prepareReading(sqlite3* db, const std::string& sql) {
    Guard guard;
    sqlite3_set_authorizer(db, authorize, &guard);
    sqlite3_stmt* st = nullptr;
    const char* tail = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql.c_str(), int(sql.size()), &st, &tail);
    sqlite3_set_authorizer(db, nullptr, nullptr);
    if (rc != SQLITE_OK) {
        if (!guard.refused.empty())
            throw InputError("read-only: " + guard.refused + " is refused (queries only read)");
        const int offset = sqlite3_error_offset(db);
        throw InputError("SQL: " + std::string(sqlite3_errmsg(db)) +
                         (offset >= 0 ? " (at byte " + std::to_string(offset) + ")" : ""));
    }
    if (!st) throw InputError("SQL: no statement given");
    if (tail && std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos) {
        sqlite3_finalize(st);
        throw InputError("SQL: give one statement (more follows at byte " +
                         std::to_string(tail - sql.c_str()) + ")");
    }
    if (!sqlite3_stmt_readonly(st)) {
        sqlite3_finalize(st);
        throw InputError("read-only: the statement would change the workspace; refused");
    }
    return st;
}

}  // namespace

std::vector<int64_t> profilesOfKind(const Workspace& workspace, std::string_view kind,
                                    std::optional<int64_t> only) {
    sql::Statement st(workspace.db(),
                      "SELECT id FROM profiles WHERE kind = ? AND (?2 IS NULL OR id = ?2) "
                      "ORDER BY id");
    st.bind(1, kind);
    if (only)
        st.bind(2, *only);
    else
        st.bindNull(2);
    std::vector<int64_t> ids;
    while (st.step()) ids.push_back(st.int64(0));
    return ids;
}

int failWith(sqlite3_vtab* table, const std::exception& error) {
    sqlite3_free(table->zErrMsg);
    table->zErrMsg = sqlite3_mprintf("%s", error.what());
    return SQLITE_ERROR;
}

int64_t itemId(const ItemPlace& p) {
    if (p.profile < 0 || p.profile >= (1 << 12) || p.track < 0 || p.track >= (1 << 19) ||
        p.seq < 0 || p.seq >= (1 << 21) || p.index < 0 || p.index >= (1 << 11))
        throw Failure(
            "slice ids hold profiles below 4096, tracks below 524288 and 2^21 "
            "chunks a track; profile " +
            std::to_string(p.profile) + " track " + std::to_string(p.track) + " is beyond them");
    return (p.profile << 51) | (p.track << 32) | (p.seq << 11) | p.index;
}

ItemPlace placeOf(int64_t id) {
    return {(id >> 51) & 0xFFF, (id >> 32) & 0x7FFFF, (id >> 11) & 0x1FFFFF, id & 0x7FF};
}

const std::vector<std::string>& tableNames() {
    // The views, the chunk tables and every row table, from their own lists.
    static const std::vector<std::string> names = [] {
        std::vector<std::string> all{
            "profile",   "track",    "thread", "process", "noise_run",
            "cpi_stack", "estimate", "slice",  "counter", "replay_instruction"};
        for (std::string& name : rowTableNames()) all.push_back(std::move(name));
        return all;
    }();
    return names;
}

void registerTables(Workspace& workspace) {
    sqlite3* db = workspace.db();
    sql::Statement known(db, "SELECT count(*) FROM temp.sqlite_master WHERE name = 'profile'");
    if (known.step() && known.int64(0) > 0) return;
    sql::exec(db, kViews);
    registerSliceModules(workspace);
    registerRowModules(workspace);
    registerReplayModule(workspace);
    // Connect each virtual table now: its first use declares its schema, which the guard
    // of a user's statement would take for a write.
    for (const std::string& name : tableNames())
        sql::Statement(db, "SELECT * FROM " + name + " WHERE 0");
}

void run(Workspace& workspace, const std::string& sql,
         const std::function<void(const std::vector<std::string>&)>& columns,
         const std::function<void(const std::vector<Value>&)>& row, Progress* progress) {
    registerTables(workspace);
    sqlite3* db = workspace.db();
    sqlite3_stmt* st = prepareReading(db, sql);
    ProgressContext context{progress};
    sqlite3_progress_handler(db, 20000, pollProgress, &context);
    const auto finish = [&] {
        sqlite3_progress_handler(db, 0, nullptr, nullptr);
        sqlite3_finalize(st);
    };
    try {
        const int count = sqlite3_column_count(st);
        std::vector<std::string> names;
        for (int c = 0; c < count; ++c) names.emplace_back(sqlite3_column_name(st, c));
        columns(names);
        std::vector<Value> values(static_cast<size_t>(count));
        for (;;) {
            const int rc = sqlite3_step(st);
            if (rc == SQLITE_DONE) break;
            if (rc == SQLITE_INTERRUPT) throw Cancelled();
            if (rc != SQLITE_ROW) throw InputError("SQL: " + std::string(sqlite3_errmsg(db)));
            for (int c = 0; c < count; ++c) values[size_t(c)] = valueOf(st, c);
            row(values);
            ++context.rows;
        }
    } catch (...) {
        finish();
        throw;
    }
    finish();
}

}  // namespace stallscope::query
