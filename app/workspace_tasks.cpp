#include "app/workspace_tasks.h"
#include "views/common/async_job.h"

#include "core/errors.h"

namespace stallscope {

WorkspaceTasks::WorkspaceTasks(const QString& path, QObject* parent)
    : QObject(parent), path_(path), listJob_(this) {}

void WorkspaceTasks::setPath(const QString& path) {
    path_ = path;
    listJob_.supersede();
}

void WorkspaceTasks::reload() {
    const std::string path = path_.toStdString();
    listJob_.start(
        [path] {
            ProfileList list;
            try {
                std::unique_ptr<Workspace> workspace;
                try {
                    workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
                } catch (const InputError&) {
                    // Missing, or an older schema: the writable open creates or migrates it.
                    workspace = Workspace::open(path, Workspace::Mode::ReadWrite);
                }
                list.profiles = workspace->profiles();
                list.writable = Workspace::isWritable(path);
            } catch (const std::exception& error) {
                list.error = QString::fromStdString(error.what());
                list.writable = false;
            }
            return list;
        },
        [this](ProfileList list) { emit listLoaded(list); });
}

void WorkspaceTasks::edit(const QString& description, std::function<void(Workspace&)> edit) {
    const std::string path = path_.toStdString();
    async::JobSlot* job = editJobs_.emplace_back(std::make_unique<async::JobSlot>(this)).get();
    (*job).start(
        [path, edit = std::move(edit)]() -> QString {
            try {
                std::unique_ptr<Workspace> workspace = Workspace::open(path);
                edit(*workspace);
                return {};
            } catch (const std::exception& error) {
                return QString::fromStdString(error.what());
            }
        },
        [this, description, job](QString error) {
            std::erase_if(editJobs_, [job](const auto& slot) { return slot.get() == job; });
            emit edited(error.isEmpty() ? description : error, !error.isEmpty());
        });
}

}  // namespace stallscope
