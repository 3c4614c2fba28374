#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/open_workspaces.h"
#include "core/schema.h"

namespace stallscope {

struct ProfileInfo {
    int64_t id = 0;
    std::string name;
    std::string kind;  // replay, noise, cpi, estimates, trace
    std::string sourcePath;
    int64_t sourceSize = 0;
    std::string sourceHash;  // "xxh128:<hex>" of the file as stored on disk
    std::string importedAt;  // ISO 8601, UTC
    std::string metadataJson = "{}";
    std::optional<int64_t> parentId;  // set on profiles derived from another (applied suggestions)
};

// One SQLite workspace file. Not thread-safe: each thread opens its own Workspace on the same
// path (WAL lets readers run beside the single writer).
class Workspace {
  public:
    enum class Mode { ReadWrite, ReadOnly };
    static constexpr int kSchemaVersion = schema::kVersion;
    static constexpr int kApplicationId = 0x53534350;  // "SSCP"

    // Opens or creates. Throws InputError (file is not a workspace, schema newer than ours,
    // read-only file opened for writing) without having modified the file.
    static std::unique_ptr<Workspace> open(const std::string& path, Mode mode = Mode::ReadWrite);

    // An existing workspace for commands that mostly read: writable when the file and its
    // directory are (so an older schema gets migrated), read-only otherwise. A missing file is an
    // InputError rather than a new empty workspace.
    static std::unique_ptr<Workspace> openExisting(const std::string& path);

    // $XDG_DATA_HOME/stallscope/workspace.sqlite (falls back to ~/.local/share).
    static std::string defaultPath();

    static bool isWritable(const std::string& path);

    // A workspace over a connection someone else opened and closes (the SQLite extension in
    // a user's sqlite3 shell or Python): read through, never migrated, never closed here.
    static std::unique_ptr<Workspace> borrow(sqlite3* db);

    // Deletes the workspace file (and its journals) when it holds no profile and no other
    // connection has it open: what a failed first import created, unless a second process
    // importing into the same new file at the same moment is using it. True when removed.
    static bool removeIfUnused(const std::string& path);

    // Test hook: create a workspace at an older schema version (migrations stop there).
    static void createAtVersion(const std::string& path, int version);

    ~Workspace();
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    sqlite3* db() const { return db_; }
    const std::string& path() const { return path_; }
    int schemaVersion() const;
    bool readOnly() const { return mode_ == Mode::ReadOnly; }

    std::vector<ProfileInfo> profiles() const;
    std::optional<ProfileInfo> profile(int64_t id) const;
    // By numeric id or exact name. Throws InputError when nothing or several match.
    ProfileInfo resolveProfile(const std::string& idOrName) const;

    // A name not yet used: base, "base (2)", "base (3)", ...
    std::string uniqueName(const std::string& base) const;

    // Inserts the row; call inside a transaction. Returns the id.
    int64_t insertProfile(const ProfileInfo& info);
    void renameProfile(int64_t id, const std::string& newName);
    void deleteProfile(int64_t id);
    // Marks `id` as derived from `parent` (a what-if's predicted trace, an applied suggestion).
    void setParentProfile(int64_t id, int64_t parent);

    // Chunked binary payloads of a profile (e.g. the compressed replay trace).
    void appendBlob(int64_t profileId, const std::string& stream, int64_t seq, const void* data,
                    size_t size);
    std::vector<std::string> readBlobs(int64_t profileId, const std::string& stream) const;

  private:
    Workspace(sqlite3* db, std::string path, Mode mode);
    void migrate(int targetVersion);

    sqlite3* db_;
    std::string path_;
    Mode mode_;
    OpenWorkspaceFile registered_;  // in the process's list of open workspace files
    bool owned_ = true;             // false: borrowed, the owner closes it
};

// While alive, the workspace's connection writes through a rollback journal instead of the WAL
// when it is the only connection to the file (otherwise nothing changes). A large import then
// writes the pages it appends once, where the WAL writes and syncs each twice (into the log, then
// into the file at the checkpoint): 1.6-2.3 s of a 200 MB XSpace import's 6.9 s. The price:
// another process opening the workspace meanwhile waits for the import's commit, so only the
// command line asks for it. Outside a transaction only; a killed import leaves a hot journal that
// the next writable open rolls back.
class DirectWrites {
  public:
    explicit DirectWrites(Workspace& workspace);
    ~DirectWrites();  // back to WAL
    DirectWrites(const DirectWrites&) = delete;
    DirectWrites& operator=(const DirectWrites&) = delete;
    bool active() const { return active_; }

  private:
    Workspace& workspace_;
    bool active_ = false;
};

}  // namespace stallscope
