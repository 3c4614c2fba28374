#pragma once

// The workspace files this process has open, and a guard for every path that may open a file
// by name.
//
// SQLite locks a workspace with POSIX (fcntl) locks, and POSIX drops every lock a process holds
// on a file when the process closes *any* descriptor of that file. So a file dialog that sniffs
// the workspace's content, or an import or export given the workspace's own path, released the
// GUI's locks: another process then saw no reader, checkpointed and deleted the -wal and -shm
// files under the GUI (which kept writing to the deleted ones: its later imports were lost and
// their ids reused). Everything that opens a user-named file asks here first.

#include <string>

namespace stallscope {

// Registered by Workspace for as long as it is open (counted: several connections to one file).
// The file is remembered by device and inode, so it is released even if renamed meanwhile.
struct OpenWorkspaceFile {
    unsigned long long device = 0, inode = 0;
    bool valid = false;
};
OpenWorkspaceFile registerOpenWorkspace(const std::string& path);
void unregisterOpenWorkspace(const OpenWorkspaceFile& file);

// Whether `path` is an open workspace or one of its -wal, -shm or -journal files (compared by
// device and inode, so links and other spellings of the path count).
bool isOpenWorkspaceFile(const std::string& path);

// Whether `path` is the workspace at `workspacePath` or one of its companions (by device and
// inode; false when either does not exist).
bool isWorkspaceFile(const std::string& path, const std::string& workspacePath);

// Throws InputError naming `path` when it is such a file; `what` says what was to be done
// ("import", "write the image to").
void refuseOpenWorkspaceFile(const std::string& path, const std::string& what);

}  // namespace stallscope
