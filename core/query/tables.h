#pragma once

// SQL over every profile (docs/sql.md): Perfetto-style tables on the workspace's own
// connection. `profile`, `track`, `thread`, `process`, `noise_run`, `cpi_stack` and `estimate`
// are temporary views over the stored rows; `slice` and `counter` are virtual tables reading
// the packed chunks (profile, track, ts and name constraints pushed down: a window reads only
// its chunks); `args`, `flow`, `step` and `critical_path` are virtual tables over the stored
// args and analyses. Nothing is copied and nothing is written to the workspace file.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/progress.h"
#include "core/workspace.h"

struct sqlite3_vtab;

namespace stallscope::query {

// Registers the tables on the workspace's connection (once per connection).
void registerTables(Workspace& workspace);

// The names of the tables, for `query --tables` and the docs.
const std::vector<std::string>& tableNames();

struct Value {
    enum class Type { Null, Integer, Real, Text } type = Type::Null;
    int64_t integer = 0;
    double real = 0;
    std::string text;
};

// Runs one read-only statement: `columns` once, then `row` per row. A statement that would
// write, or a PRAGMA that sets anything, throws InputError ("read-only: ..."); bad SQL throws
// InputError with SQLite's message and the byte offset it points at. `progress` (optional) is
// polled while SQLite works: cancelling it stops the query with Cancelled.
void run(Workspace& workspace, const std::string& sql,
         const std::function<void(const std::vector<std::string>&)>& columns,
         const std::function<void(const std::vector<Value>&)>& row, Progress* progress = nullptr);

// A slice's (or counter sample's) id: its place in the workspace, unique across profiles,
// stable while the workspace holds the profile. Bits: profile 12, track 19, chunk 21, place
// in the chunk 11 (trace_format.h kChunkItems = 2048).
struct ItemPlace {
    int64_t profile = 0, track = 0, seq = 0, index = 0;
};
int64_t itemId(const ItemPlace& place);  // throws Failure beyond the bits above
ItemPlace placeOf(int64_t id);

// Internal: what the virtual-table modules share.
// The profiles of `kind` (only `only` when given), by id.
std::vector<int64_t> profilesOfKind(const Workspace& workspace, std::string_view kind,
                                    std::optional<int64_t> only);
// Hands SQLite an exception's message as the table's error.
int failWith(sqlite3_vtab* table, const std::exception& error);

// The virtual-table modules (slice_table.cpp, rows_table.cpp).
void registerSliceModules(Workspace& workspace);
void registerRowModules(Workspace& workspace);
std::vector<std::string> rowTableNames();
void registerReplayModule(Workspace& workspace);

}  // namespace stallscope::query
