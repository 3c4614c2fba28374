#pragma once

#include <QFileSystemWatcher>
#include <QObject>
#include <QString>
#include <QTimer>

namespace stallscope {

// Tells when a workspace file changed on disk, whoever changed it (a command-line import into
// the workspace the window shows). SQLite writes a commit to the file's WAL and a checkpoint to
// the file; the WAL comes and goes with the connections, so the folder is watched too (a watch
// on a deleted file is dropped: the paths are watched again after every change). Changes come
// in bursts: one announcement per quiet `settleMs`, and only when the content may have changed:
// the window's own reads create and remove an empty WAL, which must not start another read.
class WorkspaceWatcher : public QObject {
    Q_OBJECT
  public:
    explicit WorkspaceWatcher(QObject* parent = nullptr, int settleMs = 400);
    // Watches `path` (and its WAL and folder) instead of what was watched before.
    void watch(const QString& path);

  signals:
    void changed();

  private:
    // What a commit or a checkpoint changes: the file's size and time, the WAL's size and time
    // (a WAL restarted after a checkpoint is rewritten in place: its size may stay). An empty
    // WAL (a reader's) counts as none.
    struct Fingerprint {
        qint64 size = -1, modified = -1, walSize = 0, walModified = 0;
        bool operator==(const Fingerprint&) const = default;
    };
    Fingerprint fingerprint() const;
    void rewatch();

    QFileSystemWatcher watcher_;
    QTimer settle_;
    QString path_;
    Fingerprint last_;
};

}  // namespace stallscope
