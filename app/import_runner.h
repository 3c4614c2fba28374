#pragma once

#include <QList>
#include <QObject>
#include <QStringList>
#include <memory>

#include "views/common/async_job.h"

namespace stallscope {

class Progress;

// Runs importFiles() on a worker thread with its own workspace connection, so the GUI thread
// never waits on parsing or SQLite. One import at a time; enqueue() lines further requests up
// behind it.
class ImportRunner : public QObject {
    Q_OBJECT
  public:
    // Progress updates reach the GUI thread at most this often (plus stage changes and the end).
    static constexpr int kMinProgressIntervalMs = 50;

    struct Outcome {
        bool ok = false;
        bool cancelled = false;
        QString message;
        QList<qint64> profileIds;
    };

    explicit ImportRunner(QObject* parent = nullptr);
    // Cancels a running import without waiting: its worker rolls the import back (the
    // application waits for the thread pool before it exits).
    ~ImportRunner() override;

    // Imports files into the workspace at workspacePath (created if missing). name and format
    // are as for `stallscope import`; empty means default and detect. Returns false, starting
    // nothing, while another import runs.
    // asOneRun: the files are the hosts (ranks) of one run, one profile.
    bool start(const QString& workspacePath, const QStringList& files, const QString& name = {},
               const QString& format = {}, bool asOneRun = false);
    // Starts the files now, or after the imports before them.
    void enqueue(const QString& workspacePath, const QStringList& files, bool asOneRun = false);
    // Asks the worker to stop at its next progress point (finished() follows with ok == false)
    // and drops the queued requests.
    void cancel();
    bool isRunning() const { return running_; }
    // Running or queued.
    bool isBusy() const { return running_ || !queue_.isEmpty(); }
    // The files of the running import.
    const QStringList& currentFiles() const { return currentFiles_; }
    // The result of the last finished import (tells a cancellation from an error).
    const Outcome& lastOutcome() const { return lastOutcome_; }

  signals:
    void started(const QStringList& files);
    void progressChanged(double fraction, const QString& stage);
    void finished(bool ok, const QString& message, const QList<qint64>& profileIds);

  private:
    void onWorkerFinished(const Outcome& outcome);

    async::JobSlot job_;
    std::shared_ptr<Progress> progress_;
    Outcome lastOutcome_;
    bool running_ = false;
    QStringList currentFiles_;
    struct Queued {
        QString workspacePath;
        QStringList files;
        bool asOneRun = false;
    };
    QList<Queued> queue_;
};

}  // namespace stallscope
