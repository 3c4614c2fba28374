#include "app/workspace_watcher.h"

#include <QDateTime>
#include <QFileInfo>

namespace stallscope {

WorkspaceWatcher::WorkspaceWatcher(QObject* parent, int settleMs) : QObject(parent) {
    settle_.setSingleShot(true);
    settle_.setInterval(settleMs);
    connect(&settle_, &QTimer::timeout, this, [this] {
        rewatch();
        const Fingerprint now = fingerprint();
        if (now == last_) return;
        last_ = now;
        emit changed();
    });
    const auto touched = [this] { settle_.start(); };
    connect(&watcher_, &QFileSystemWatcher::fileChanged, this, touched);
    connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, touched);
}

void WorkspaceWatcher::watch(const QString& path) {
    settle_.stop();
    if (!watcher_.files().isEmpty()) watcher_.removePaths(watcher_.files());
    if (!watcher_.directories().isEmpty()) watcher_.removePaths(watcher_.directories());
    path_ = QFileInfo(path).absoluteFilePath();
    last_ = fingerprint();
    rewatch();
}

WorkspaceWatcher::Fingerprint WorkspaceWatcher::fingerprint() const {
    Fingerprint f;
    const QFileInfo file(path_);
    if (file.exists()) {
        f.size = file.size();
        f.modified = file.lastModified().toMSecsSinceEpoch();
    }
    const QFileInfo wal(path_ + "-wal");
    if (wal.exists() && wal.size() > 0) {
        f.walSize = wal.size();
        f.walModified = wal.lastModified().toMSecsSinceEpoch();
    }
    return f;
}

void WorkspaceWatcher::rewatch() {
    if (path_.isEmpty()) return;
    QStringList wanted{QFileInfo(path_).absolutePath()};
    for (const QString& file : {path_, path_ + "-wal"})
        if (QFileInfo::exists(file)) wanted << file;
    QStringList missing;
    for (const QString& p : wanted)
        if (!watcher_.files().contains(p) && !watcher_.directories().contains(p)) missing << p;
    if (!missing.isEmpty()) watcher_.addPaths(missing);
}

}  // namespace stallscope
