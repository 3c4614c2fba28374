#include "core/sqlite.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/errors.h"

namespace stallscope::sql {

namespace {

// What the user can act on (a full disk, a failing disk, another process holding the workspace,
// a read-only file) names the workspace file and says what to do; the import's transaction rolls
// back, so the workspace is as it was. Other failures say what SQLite said.
// Whether a write to `file` may have failed for want of room, when SQLite kept no errno (some of
// its write paths do not): less than 64 MiB free beside it, or a file size limit in force.
bool noRoomFor(const std::string& file) {
    struct statvfs fs {};
    const std::string dir = std::filesystem::path(file).parent_path().string();
    if (::statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 &&
        uint64_t(fs.f_bavail) * fs.f_frsize < (uint64_t(64) << 20))
        return true;
    rlimit limit{};
    return ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
}

std::string explain(sqlite3* db, int code, std::string_view what, std::string_view detail) {
    const char* file = sqlite3_db_filename(db, "main");
    const std::string workspace = file && *file ? file : "workspace";
    // An I/O error whose cause is a full disk (or quota, or file size limit) is a full disk.
    const int osError = sqlite3_system_errno(db);
    const bool full = (code & 0xff) == SQLITE_FULL ||
                      ((code & 0xff) == SQLITE_IOERR &&
                       (osError == ENOSPC || osError == EFBIG || osError == EDQUOT ||
                        (osError == 0 && code == SQLITE_IOERR_WRITE && noRoomFor(workspace))));
    if (full)
        return workspace +
               ": the disk is full (or a quota or file size limit was reached) while writing the "
               "workspace; nothing was stored. Free space on that disk, or choose another "
               "workspace with --store";
    switch (code & 0xff) {
        case SQLITE_IOERR:
            return workspace + ": could not read or write the workspace (" + std::string(detail) +
                   (osError ? std::string(": ") + std::strerror(osError) : std::string()) +
                   "); nothing was stored";
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return workspace +
                   ": the workspace is busy: another Stallscope process or window is writing to "
                   "it; try again when it has finished";
        case SQLITE_READONLY:
            return workspace + ": the workspace is read-only; it can be viewed but not changed";
        default:
            return std::string(what) + ": " + std::string(detail);
    }
}

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
    throw Failure(explain(db, sqlite3_extended_errcode(db), what, sqlite3_errmsg(db)));
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
        SQLITE_OK)
        fail(db, "SQL prepare failed for \"" + std::string(sql.substr(0, 60)) + "\"");
}

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
}

Statement& Statement::bind(int index, int64_t value) {
    if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail(db_, "SQL bind");
    return *this;
}
Statement& Statement::bind(int index, double value) {
    if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail(db_, "SQL bind");
    return *this;
}
Statement& Statement::bind(int index, std::string_view text) {
    // A default-constructed view has no data pointer, which SQLite would store as NULL: text
    // is always text (bindNull says NULL).
    const char* data = text.data() ? text.data() : "";
    if (sqlite3_bind_text(stmt_, index, data, static_cast<int>(text.size()), SQLITE_TRANSIENT) !=
        SQLITE_OK)
        fail(db_, "SQL bind");
    return *this;
}
Statement& Statement::bindBlob(int index, const void* data, size_t size) {
    if (sqlite3_bind_blob64(stmt_, index, data, size, SQLITE_TRANSIENT) != SQLITE_OK)
        fail(db_, "SQL bind");
    return *this;
}
Statement& Statement::bindNull(int index) {
    if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail(db_, "SQL bind");
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, "SQL step");
}

void Statement::exec() {
    while (step()) {
    }
    reset();
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int64_t Statement::int64(int column) const {
    return sqlite3_column_int64(stmt_, column);
}
double Statement::real(int column) const {
    return sqlite3_column_double(stmt_, column);
}
std::string Statement::text(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
             : std::string();
}
std::string_view Statement::blob(int column) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
             : std::string_view();
}
bool Statement::isNull(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

void exec(sqlite3* db, std::string_view sql) {
    char* message = nullptr;
    if (const int rc = sqlite3_exec(db, std::string(sql).c_str(), nullptr, nullptr, &message);
        rc != SQLITE_OK) {
        std::string text = message ? message : "unknown error";
        sqlite3_free(message);
        throw Failure(explain(db, sqlite3_extended_errcode(db), "SQL failed", text));
    }
}

Transaction::Transaction(sqlite3* db) : db_(db) {
    exec(db_, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    exec(db_, "COMMIT");
    done_ = true;
}

}  // namespace stallscope::sql
