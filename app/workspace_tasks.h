#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <list>
#include <memory>
#include <vector>

#include "core/workspace.h"
#include "views/common/async_job.h"

namespace stallscope {

// What the main window's profile list shows: the workspace's profiles, or why it cannot be read.
struct ProfileList {
    std::vector<ProfileInfo> profiles;
    QString error;
    bool writable = true;
};

// The workspace reads and edits of the main window, each on a worker with a connection of its
// own, so the GUI thread never runs SQL: the profile list (a newer reload drops an older one's
// result) and renames or deletions (every edit reports).
class WorkspaceTasks : public QObject {
    Q_OBJECT
  public:
    explicit WorkspaceTasks(const QString& path, QObject* parent = nullptr);

    const QString& path() const { return path_; }
    // Another workspace: results still coming for the old one are dropped.
    void setPath(const QString& path);

    // Loads the profile list (creating or migrating the workspace); listLoaded follows.
    void reload();
    // Runs `edit` on a writable connection; edited(description) or edited(error, true) follows.
    void edit(const QString& description, std::function<void(Workspace&)> edit);

  signals:
    void listLoaded(const stallscope::ProfileList& list);
    void edited(const QString& message, bool failed);

  private:
    QString path_;
    async::JobSlot listJob_;
    // One slot per edit, so a second edit never drops the first one's outcome.
    std::list<std::unique_ptr<async::JobSlot>> editJobs_;
};

}  // namespace stallscope
