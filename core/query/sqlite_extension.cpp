// The loadable SQLite extension (libstallscope.so; `stallscope query --extension` prints its
// path): the same tables as `stallscope query` on a workspace opened by any sqlite3 shell or
// Python's sqlite3 (`conn.load_extension(path)`). It registers views in the connection's temp
// schema and read-only virtual tables: the workspace file is not changed.
//
// The module links the system libsqlite3 it was built against and calls it directly, so the
// host must use that same library (Debian's sqlite3 shell and python3 do).

#include <sqlite3.h>

#include <memory>

#include "core/query/tables.h"
#include "core/sqlite.h"
#include "core/workspace.h"

namespace {

// Holds the borrowed workspace until the connection closes (SQLite destroys a module's client
// data then).
int notATable(sqlite3*, void*, int, const char* const*, sqlite3_vtab**, char** error) {
    *error = sqlite3_mprintf("stallscope_workspace holds the extension's state; not a table");
    return SQLITE_ERROR;
}

void holdUntilClose(sqlite3* db, stallscope::Workspace* workspace) {
    static const sqlite3_module holder = [] {
        sqlite3_module m{};
        m.xConnect = notATable;
        return m;
    }();
    sqlite3_create_module_v2(db, "stallscope_workspace", &holder, workspace,
                             [](void* p) { delete static_cast<stallscope::Workspace*>(p); });
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int sqlite3_stallscope_init(
    sqlite3* db, char** error, const sqlite3_api_routines*) {
    try {
        {
            stallscope::sql::Statement id(db, "PRAGMA application_id");
            if (!id.step() || id.int64(0) != stallscope::Workspace::kApplicationId) {
                *error = sqlite3_mprintf("stallscope: not a Stallscope workspace");
                return SQLITE_ERROR;
            }
        }
        std::unique_ptr<stallscope::Workspace> workspace = stallscope::Workspace::borrow(db);
        stallscope::query::registerTables(*workspace);
        holdUntilClose(db, workspace.release());
        return SQLITE_OK;
    } catch (const std::exception& e) {
        *error = sqlite3_mprintf("stallscope: %s", e.what());
        return SQLITE_ERROR;
    }
}
