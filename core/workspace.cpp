#include "core/workspace.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "core/errors.h"
#include "core/schema.h"
#include "core/sqlite.h"

namespace stallscope {

namespace {

int pragmaInt(sqlite3* db, const char* pragma) {
    sql::Statement st(db, std::string("PRAGMA ") + pragma);
    return st.step() ? static_cast<int>(st.int64(0)) : 0;
}

// Holds an flock on a directory while workspaces in it are set up (journal mode, migrations),
// so processes creating or upgrading one workspace at once take turns. Not on the workspace file
// itself: closing any descriptor of that file would drop the (fcntl) locks SQLite holds on it for
// every other connection of this process.
class SetupLock {
  public:
    explicit SetupLock(const std::string& workspacePath) {
        const std::filesystem::path dir = std::filesystem::absolute(workspacePath).parent_path();
        fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd_ < 0) return;  // no lock rather than no workspace
        while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    ~SetupLock() {
        if (fd_ >= 0) ::close(fd_);  // releases the flock
    }
    SetupLock(const SetupLock&) = delete;
    SetupLock& operator=(const SetupLock&) = delete;

  private:
    int fd_ = -1;
};

ProfileInfo readProfile(const sql::Statement& st) {
    ProfileInfo p;
    p.id = st.int64(0);
    p.name = st.text(1);
    p.kind = st.text(2);
    p.sourcePath = st.text(3);
    p.sourceSize = st.int64(4);
    p.sourceHash = st.text(5);
    p.importedAt = st.text(6);
    p.metadataJson = st.text(7);
    if (!st.isNull(8)) p.parentId = st.int64(8);
    return p;
}

// "file:" URI of a path opened read-only with immutable=1; escapes what URIs give meaning to.
std::string immutableUri(const std::string& path) {
    std::string uri = "file:";
    const std::string absolute = std::filesystem::absolute(path).string();
    for (const unsigned char c : absolute) {
        if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
            uri += static_cast<char>(c);
        } else {
            char escaped[4];
            std::snprintf(escaped, sizeof escaped, "%%%02X", c);
            uri += escaped;
        }
    }
    return uri + "?immutable=1";
}

// A -wal file with frames in it holds committed data not yet in the main file.
bool hasWalContent(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path + "-wal", ec);
    return !ec && size > 0;
}

// A rollback journal left by a writer that died mid-transaction (DirectWrites): the main file
// holds its half-written pages until a writable connection rolls it back.
bool hasHotJournal(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path + "-journal", ec);
    return !ec && size > 0;
}

// The busy timeout of every workspace connection: a writer's commit is waited for, not failed.
constexpr int kBusyTimeoutMs = 5000;

// Into WAL (from a new file, or from the rollback mode a command-line import writes in). SQLite
// answers "busy" at once, without its busy handler, when another connection holds the write lock
// of a rollback-mode file: waited for here as the busy handler would.
void switchToWal(sqlite3* db) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
        try {
            sql::exec(db, "PRAGMA journal_mode = WAL");
            return;
        } catch (const Failure&) {
            const int code = sqlite3_errcode(db);
            if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
                std::chrono::steady_clock::now() > deadline)
                throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// Switches `db` to a rollback journal, without waiting: true when it did, which it can only when
// no other connection has the file open (its busy timeout is left at 0).
bool leaveWal(sqlite3* db) {
    sqlite3_busy_timeout(db, 0);
    try {
        sql::Statement mode(db, "PRAGMA journal_mode = DELETE");
        return mode.step() && mode.text(0) == "delete";
    } catch (const Failure&) {
        return false;
    }
}

bool directoryWritable(const std::string& path) {
    std::filesystem::path parent = std::filesystem::absolute(path).parent_path();
    return ::access(parent.c_str(), W_OK) == 0;
}

constexpr const char* kProfileColumns =
    "id, name, kind, source_path, source_size, source_hash, imported_at, metadata, parent_id";

}  // namespace

// access() says yes to root for any file, so look at the permission bits as well: a file nobody
// may write is read-only even for root.
// SQLite also needs the directory writable to keep its -wal and -shm files beside the workspace.
bool Workspace::isWritable(const std::string& path) {
    struct stat st {};
    return ::access(path.c_str(), W_OK) == 0 && ::stat(path.c_str(), &st) == 0 &&
           (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0 && directoryWritable(path);
}

Workspace::Workspace(sqlite3* db, std::string path, Mode mode)
    : db_(db), path_(std::move(path)), mode_(mode), registered_(registerOpenWorkspace(path_)) {}

Workspace::~Workspace() {
    if (owned_) sqlite3_close_v2(db_);
    unregisterOpenWorkspace(registered_);
}

std::unique_ptr<Workspace> Workspace::borrow(sqlite3* db) {
    std::unique_ptr<Workspace> ws(new Workspace(db, {}, Mode::ReadOnly));
    ws->owned_ = false;
    return ws;
}

std::unique_ptr<Workspace> Workspace::openExisting(const std::string& path) {
    if (!std::filesystem::exists(path))
        throw InputError(path + ": no workspace here (`stallscope import FILE` creates one)");
    return open(path, isWritable(path) ? Mode::ReadWrite : Mode::ReadOnly);
}

std::string Workspace::defaultPath() {
    QString base = qEnvironmentVariable("XDG_DATA_HOME");
    // The XDG spec says to ignore a relative XDG_DATA_HOME.
    if (base.isEmpty() || QDir::isRelativePath(base)) base = QDir::homePath() + "/.local/share";
    return (base + "/stallscope/workspace.sqlite").toStdString();
}

std::unique_ptr<Workspace> Workspace::open(const std::string& path, Mode mode) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (exists && fs::is_directory(path, ec))
        throw InputError(path + ": is a directory, not a workspace file");
    if (!exists && mode == Mode::ReadOnly) throw InputError(path + ": workspace does not exist");
    if (exists && mode == Mode::ReadWrite && !directoryWritable(path))
        throw InputError(path +
                         ": workspace is read-only (its directory is not writable, so SQLite "
                         "cannot keep its journal beside it)");
    if (exists && mode == Mode::ReadWrite && !isWritable(path))
        throw InputError(path + ": workspace is read-only (no write permission)");
    if (!exists) {
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty()) fs::create_directories(parent, ec);
    }

    // Writers set the workspace up one at a time: two processes creating it at the same moment
    // raced in WAL setup ("disk I/O error") and in the migrations.
    std::optional<SetupLock> setupLock;
    if (mode == Mode::ReadWrite) setupLock.emplace(path);
    sqlite3* db = nullptr;
    int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY
                                       : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    std::string target = path;
    // A WAL database needs its -shm file even to read; where we may not write (a read-only file
    // or directory) SQLite could not create it and would fail, or root would leave stray -wal and
    // -shm files behind. Nobody can be writing such a file, so read it as immutable.
    if (mode == Mode::ReadOnly && exists && !hasWalContent(path) && !hasHotJournal(path) &&
        !isWritable(path)) {
        target = immutableUri(path);
        flags |= SQLITE_OPEN_URI;
    }
    if (sqlite3_open_v2(target.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        std::string message = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close_v2(db);
        throw InputError(path + ": cannot open workspace: " + message);
    }
    std::unique_ptr<Workspace> ws(new Workspace(db, path, mode));
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    // A read-only connection cannot roll back a killed import's journal (SQLite refuses to
    // read past it): a writable one does, at its first read, when the file may be written.
    if (mode == Mode::ReadOnly && exists && hasHotJournal(path) && isWritable(path)) {
        sqlite3* recover = nullptr;
        if (sqlite3_open_v2(path.c_str(), &recover, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                            nullptr) == SQLITE_OK) {
            sqlite3_busy_timeout(recover, kBusyTimeoutMs);
            sqlite3_exec(recover, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
        }
        sqlite3_close_v2(recover);
    }

    int version = 0;
    int appId = 0;
    int tables = 0;
    try {
        version = pragmaInt(db, "user_version");
        appId = pragmaInt(db, "application_id");
        sql::Statement count(db, "SELECT count(*) FROM sqlite_master");
        tables = count.step() ? static_cast<int>(count.int64(0)) : 0;
    } catch (const Failure&) {
        // SQLite reads the header here (a pre-check opening the file would drop the locks of
        // this process's other connections to it when closed).
        if (sqlite3_errcode(db) == SQLITE_NOTADB)
            throw InputError(path + ": not a Stallscope workspace (not an SQLite database)");
        throw InputError(path + ": not a Stallscope workspace (unreadable SQLite file)");
    }
    // Refuse before writing anything (even switching to WAL writes the header).
    if (tables > 0 && appId != kApplicationId)
        throw InputError(path + ": not a Stallscope workspace (an SQLite file of another program)");
    if (version > kSchemaVersion)
        throw InputError(path + ": workspace schema version " + std::to_string(version) +
                         " is newer than this Stallscope supports (" +
                         std::to_string(kSchemaVersion) + "); use a newer Stallscope");

    sql::exec(db, "PRAGMA foreign_keys = ON");
    if (mode == Mode::ReadWrite) {
        switchToWal(db);
        sql::exec(db, "PRAGMA synchronous = NORMAL");
        ws->migrate(kSchemaVersion);
    } else if (version < kSchemaVersion) {
        throw InputError(path + ": workspace needs an upgrade; open it writable once");
    }
    return ws;
}

void Workspace::createAtVersion(const std::string& path, int version) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw Failure("cannot create " + path);
    Workspace ws(db, path, Mode::ReadWrite);
    ws.migrate(version);
}

void Workspace::migrate(int targetVersion) {
    if (pragmaInt(db_, "user_version") >= targetVersion) return;
    sql::Transaction tx(db_);
    // Read again under the write lock: another process creating the same workspace at the same
    // moment may have migrated it while this one waited.
    int version = pragmaInt(db_, "user_version");
    if (version >= targetVersion) return;
    if (version == 0) sql::exec(db_, "PRAGMA application_id = " + std::to_string(kApplicationId));
    for (; version < targetVersion; ++version) schema::migrateFrom(db_, version);
    sql::exec(db_, "PRAGMA user_version = " + std::to_string(targetVersion));
    tx.commit();
}

int Workspace::schemaVersion() const {
    return pragmaInt(db_, "user_version");
}

std::vector<ProfileInfo> Workspace::profiles() const {
    sql::Statement st(db_, std::string("SELECT ") + kProfileColumns + " FROM profiles ORDER BY id");
    std::vector<ProfileInfo> out;
    while (st.step()) out.push_back(readProfile(st));
    return out;
}

std::optional<ProfileInfo> Workspace::profile(int64_t id) const {
    sql::Statement st(db_,
                      std::string("SELECT ") + kProfileColumns + " FROM profiles WHERE id = ?");
    st.bind(1, id);
    if (!st.step()) return std::nullopt;
    return readProfile(st);
}

ProfileInfo Workspace::resolveProfile(const std::string& idOrName) const {
    sql::Statement byName(
        db_, std::string("SELECT ") + kProfileColumns + " FROM profiles WHERE name = ?");
    byName.bind(1, idOrName);
    if (byName.step()) return readProfile(byName);
    char* end = nullptr;
    const long long id = std::strtoll(idOrName.c_str(), &end, 10);
    if (!idOrName.empty() && end && *end == '\0') {
        if (auto p = profile(id)) return *p;
    }
    throw InputError("no profile named or numbered '" + idOrName + "' in " + path_);
}

std::string Workspace::uniqueName(const std::string& base) const {
    sql::Statement st(db_, "SELECT 1 FROM profiles WHERE name = ?");
    auto taken = [&](const std::string& name) {
        st.bind(1, name);
        const bool found = st.step();
        st.reset();
        return found;
    };
    if (!taken(base)) return base;
    for (int n = 2;; ++n) {
        std::string candidate = base + " (" + std::to_string(n) + ")";
        if (!taken(candidate)) return candidate;
    }
}

int64_t Workspace::insertProfile(const ProfileInfo& info) {
    sql::Statement st(db_,
                      "INSERT INTO profiles(name, kind, source_path, source_size, source_hash, "
                      "imported_at, metadata, parent_id) VALUES(?,?,?,?,?,?,?,?)");
    const std::string now =
        info.importedAt.empty()
            ? QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString()
            : info.importedAt;
    st.bind(1, info.name).bind(2, info.kind).bind(3, info.sourcePath).bind(4, info.sourceSize);
    st.bind(5, info.sourceHash).bind(6, now).bind(7, info.metadataJson);
    if (info.parentId)
        st.bind(8, *info.parentId);
    else
        st.bindNull(8);
    st.exec();
    return sqlite3_last_insert_rowid(db_);
}

void Workspace::renameProfile(int64_t id, const std::string& newName) {
    if (newName.empty()) throw InputError("a profile name cannot be empty");
    sql::Statement clash(db_, "SELECT id FROM profiles WHERE name = ? AND id <> ?");
    clash.bind(1, newName).bind(2, id);
    if (clash.step()) throw InputError("a profile named '" + newName + "' already exists");
    sql::Statement st(db_, "UPDATE profiles SET name = ? WHERE id = ?");
    st.bind(1, newName).bind(2, id);
    st.exec();
}

void Workspace::setParentProfile(int64_t id, int64_t parent) {
    sql::Statement st(db_, "UPDATE profiles SET parent_id = ? WHERE id = ?");
    st.bind(1, parent).bind(2, id);
    st.exec();
}

void Workspace::deleteProfile(int64_t id) {
    sql::Transaction tx(db_);
    sql::Statement st(db_, "DELETE FROM profiles WHERE id = ?");
    st.bind(1, id);
    st.exec();
    tx.commit();
}

void Workspace::appendBlob(int64_t profileId, const std::string& stream, int64_t seq,
                           const void* data, size_t size) {
    sql::Statement st(db_, "INSERT INTO blobs(profile_id, stream, seq, data) VALUES(?,?,?,?)");
    st.bind(1, profileId).bind(2, stream).bind(3, seq).bindBlob(4, data, size);
    st.exec();
}

std::vector<std::string> Workspace::readBlobs(int64_t profileId, const std::string& stream) const {
    sql::Statement st(db_,
                      "SELECT data FROM blobs WHERE profile_id = ? AND stream = ? ORDER BY seq");
    st.bind(1, profileId).bind(2, stream);
    std::vector<std::string> out;
    while (st.step()) out.emplace_back(st.blob(0));
    return out;
}

DirectWrites::DirectWrites(Workspace& workspace) : workspace_(workspace) {
    if (workspace.readOnly()) return;
    sqlite3* db = workspace.db();
    // Journal modes change in turn with other processes' setup (which switches to WAL): two at
    // once raced into "disk I/O error".
    const SetupLock setupLock(workspace.path());
    // Leaving WAL needs the file to itself: with any other connection open it fails at once
    // (no waiting), and the import writes through the WAL as before.
    active_ = leaveWal(db);
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
}

DirectWrites::~DirectWrites() {
    if (!active_) return;
    // Best effort: a workspace left in rollback mode is switched back by its next writable open.
    try {
        const SetupLock setupLock(workspace_.path());
        switchToWal(workspace_.db());
    } catch (const Failure&) {
    }
}

bool Workspace::removeIfUnused(const std::string& path) {
    const SetupLock setupLock(path);
    sqlite3* db = nullptr;
    bool unused = false;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) ==
        SQLITE_OK) {
        // Leaving WAL succeeds only on a file no other connection has open.
        unused = leaveWal(db);
        try {
            if (unused) {
                // A file the failed import never set up has no profiles table at all.
                sql::Statement table(db,
                                     "SELECT count(*) FROM sqlite_master WHERE name = 'profiles'");
                if (table.step() && table.int64(0) > 0) {
                    sql::Statement count(db, "SELECT count(*) FROM profiles");
                    unused = count.step() && count.int64(0) == 0;
                }
            }
        } catch (const Failure&) {
            unused = false;
        }
    }
    sqlite3_close_v2(db);
    if (!unused) return false;
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove(path + suffix, ignored);
    return true;
}

}  // namespace stallscope
