#pragma once

#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QThreadPool>
#include <memory>

namespace stallscope {

class Progress;

// Runs importFiles() on a worker thread with its own workspace connection, so the GUI thread
// never waits on parsing or SQLite. One import at a time.
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
    // Cancels a running import and waits for the worker, which rolls the import back.
    ~ImportRunner() override;

    // Imports files into the workspace at workspacePath (created if missing). name and format
    // are as for `stallscope import`; empty means default and detect. Returns false, starting
    // nothing, while another import runs.
    bool start(const QString& workspacePath, const QStringList& files, const QString& name = {},
               const QString& format = {});
    // Asks the worker to stop at its next progress point; finished() follows with ok == false.
    void cancel();
    bool isRunning() const { return running_; }
    // The result of the last finished import (tells a cancellation from an error).
    const Outcome& lastOutcome() const { return lastOutcome_; }
    // Blocks until the worker is done (tests and shutdown only).
    void waitForFinished();

  signals:
    void started(const QStringList& files);
    void progressChanged(double fraction, const QString& stage);
    void finished(bool ok, const QString& message, const QList<qint64>& profileIds);

  private:
    void onWorkerFinished();

    QThreadPool pool_;  // one thread of our own: the global pool stays free for list loads
    QFutureWatcher<Outcome> watcher_;
    std::shared_ptr<Progress> progress_;
    Outcome lastOutcome_;
    bool running_ = false;
};

}  // namespace stallscope
