#include "core/open_workspaces.h"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <utility>

#include "core/errors.h"

namespace stallscope {

namespace {

using FileId = std::pair<dev_t, ino_t>;

struct Registry {
    std::mutex mutex;
    std::map<FileId, int> open;  // workspace file -> connections open on it
};

// Never destroyed: a workspace held by another static object may close during exit, after
// a function-local registry would already be gone.
Registry& registry() {
    static Registry* const instance = new Registry;
    return *instance;
}

bool fileId(const std::string& path, FileId& id) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    id = {st.st_dev, st.st_ino};
    return true;
}

bool isRegistered(const std::string& path) {
    FileId id;
    if (!fileId(path, id)) return false;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    return r.open.count(id) > 0;
}

// `path` itself, and the database it is a companion of (SQLite names them after it).
template <class Test>
bool fileOrCompanionOf(const std::string& path, Test&& test) {
    if (test(path)) return true;
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        const std::string s(suffix);
        if (path.size() > s.size() && path.ends_with(s) &&
            test(path.substr(0, path.size() - s.size())))
            return true;
    }
    return false;
}

}  // namespace

OpenWorkspaceFile registerOpenWorkspace(const std::string& path) {
    FileId id;
    if (!fileId(path, id)) return {};
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    ++r.open[id];
    return {static_cast<unsigned long long>(id.first), static_cast<unsigned long long>(id.second),
            true};
}

void unregisterOpenWorkspace(const OpenWorkspaceFile& file) {
    if (!file.valid) return;
    const FileId id{static_cast<dev_t>(file.device), static_cast<ino_t>(file.inode)};
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const auto it = r.open.find(id);
    if (it != r.open.end() && --it->second <= 0) r.open.erase(it);
}

bool isOpenWorkspaceFile(const std::string& path) {
    return fileOrCompanionOf(path, isRegistered);
}

bool isWorkspaceFile(const std::string& path, const std::string& workspacePath) {
    FileId workspace;
    if (!fileId(workspacePath, workspace)) return false;
    return fileOrCompanionOf(path, [&](const std::string& p) {
        FileId id;
        return fileId(p, id) && id == workspace;
    });
}

void refuseOpenWorkspaceFile(const std::string& path, const std::string& what) {
    if (!isOpenWorkspaceFile(path)) return;
    throw InputError(path + ": is an open Stallscope workspace (or its journal); will not " + what +
                     " it (opening it here would release this program's locks on the "
                     "workspace)");
}

}  // namespace stallscope
