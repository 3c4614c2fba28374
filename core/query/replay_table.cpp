// `replay_instruction`: a replay's instructions with their re-simulated issue cycle and stall,
// streamed from the decoded stream (a 10^7-instruction replay is never turned into rows at
// once). profile_id = x reads only that replay.

#include <sqlite3.h>

#include <memory>
#include <optional>

#include "core/errors.h"
#include "core/kinds.h"
#include "core/query/tables.h"
#include "core/replay/codec.h"
#include "core/replay/simulate.h"
#include "core/sqlite.h"

namespace stallscope::query {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE x(profile_id INTEGER, id INTEGER, op TEXT, unit TEXT, hlo TEXT, kind TEXT, "
    "cost INTEGER, busy INTEGER, cycle INTEGER, stall INTEGER, dma_id INTEGER)";

struct Table : sqlite3_vtab {
    Workspace* workspace = nullptr;
};

struct Cursor : sqlite3_vtab_cursor {
    Workspace* workspace = nullptr;
    std::vector<int64_t> profiles;
    size_t nextProfile = 0;
    int64_t profile = 0;
    std::unique_ptr<replay::InstructionStream> trace;
    std::unique_ptr<replay::Simulation> sim;
    size_t at = 0;
    bool eof = true;
};

int connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
    const int rc = sqlite3_declare_vtab(db, kSchema);
    if (rc != SQLITE_OK) return rc;
    auto* table = new Table;
    table->workspace = static_cast<Workspace*>(aux);
    *out = table;
    return SQLITE_OK;
}

int disconnect(sqlite3_vtab* table) {
    delete static_cast<Table*>(table);
    return SQLITE_OK;
}

int bestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
    info->estimatedCost = 1e9;
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& c = info->aConstraint[i];
        if (c.usable && c.iColumn == 0 && c.op == SQLITE_INDEX_CONSTRAINT_EQ) {
            info->aConstraintUsage[i].argvIndex = 1;
            info->idxNum = 1;
            info->estimatedCost = 1e7;
            break;
        }
    }
    return SQLITE_OK;
}

int openCursor(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
    auto* cursor = new Cursor;
    cursor->workspace = static_cast<Table*>(vtab)->workspace;
    *out = cursor;
    return SQLITE_OK;
}

int closeCursor(sqlite3_vtab_cursor* c) {
    delete static_cast<Cursor*>(c);
    return SQLITE_OK;
}

// Moves to the next replay holding instructions, decoding and simulating it.
bool startProfile(Cursor& c) {
    while (c.nextProfile < c.profiles.size()) {
        c.profile = c.profiles[c.nextProfile++];
        c.trace = std::make_unique<replay::InstructionStream>(
            replay::loadInstructionStream(*c.workspace, c.profile));
        c.sim = std::make_unique<replay::Simulation>(replay::simulate(*c.trace));
        c.at = 0;
        if (!c.trace->instrs.empty()) return true;
    }
    c.trace.reset();
    c.sim.reset();
    return false;
}

int filter(sqlite3_vtab_cursor* base, int plan, const char*, int, sqlite3_value** argv) {
    auto* c = static_cast<Cursor*>(base);
    try {
        c->profiles = profilesOfKind(
            *c->workspace, kinds::kReplay,
            plan & 1 ? std::optional<int64_t>(sqlite3_value_int64(argv[0])) : std::nullopt);
        c->nextProfile = 0;
        c->eof = !startProfile(*c);
        return SQLITE_OK;
    } catch (const std::exception& e) {
        return failWith(base->pVtab, e);
    }
}

int next(sqlite3_vtab_cursor* base) {
    auto* c = static_cast<Cursor*>(base);
    try {
        if (++c->at >= c->trace->instrs.size()) c->eof = !startProfile(*c);
        return SQLITE_OK;
    } catch (const std::exception& e) {
        return failWith(base->pVtab, e);
    }
}

int eof(sqlite3_vtab_cursor* base) {
    return static_cast<Cursor*>(base)->eof ? 1 : 0;
}

void resultText(sqlite3_context* ctx, const std::string& text) {
    sqlite3_result_text(ctx, text.data(), int(text.size()), SQLITE_TRANSIENT);
}

const char* kindName(replay::InstrKind kind) {
    switch (kind) {
        case replay::InstrKind::DmaIssue:
            return "dma_issue";
        case replay::InstrKind::DmaWait:
            return "dma_wait";
        default:
            return "plain";
    }
}

int column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int column) {
    const auto* c = static_cast<Cursor*>(base);
    const replay::InstructionStream& t = *c->trace;
    const replay::Instr& in = t.instrs[c->at];
    switch (column) {
        case 0:
            sqlite3_result_int64(ctx, c->profile);
            break;
        case 1:
            sqlite3_result_int64(ctx, int64_t(c->at));
            break;
        case 2:
            resultText(ctx, t.strings[in.op]);
            break;
        case 3:
            resultText(ctx, t.strings[in.unit]);
            break;
        case 4:
            if (in.hlo == replay::kNone)
                sqlite3_result_null(ctx);
            else
                resultText(ctx, t.hlos[in.hlo].name);
            break;
        case 5:
            sqlite3_result_text(ctx, kindName(in.kind), -1, SQLITE_STATIC);
            break;
        case 6:
            sqlite3_result_int64(ctx, in.cost);
            break;
        case 7:
            sqlite3_result_int64(ctx, in.busy);
            break;
        case 8:
            sqlite3_result_int64(ctx, int64_t(c->sim->cycle[c->at]));
            break;
        case 9:
            sqlite3_result_int64(ctx, int64_t(c->sim->stall[c->at]));
            break;
        default:
            if (in.dma == replay::kNone)
                sqlite3_result_null(ctx);
            else
                sqlite3_result_int64(ctx, t.dmas[in.dma].id);
    }
    return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
    *out = sqlite3_int64(static_cast<Cursor*>(base)->at);
    return SQLITE_OK;
}

}  // namespace

void registerReplayModule(Workspace& workspace) {
    static const sqlite3_module module = [] {
        sqlite3_module m{};
        m.xConnect = connect;  // eponymous-only: nothing in the workspace's schema
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
    }();
    if (sqlite3_create_module(workspace.db(), "replay_instruction", &module, &workspace) !=
        SQLITE_OK)
        throw Failure(std::string("cannot register the replay_instruction table: ") +
                      sqlite3_errmsg(workspace.db()));
}

}  // namespace stallscope::query
