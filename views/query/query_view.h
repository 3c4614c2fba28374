#pragma once

// The Query tab of a workspace: SQL over every profile (core/query, docs/sql.md). An editor
// with examples and a history (Ctrl+Enter runs), results that arrive while the query runs and
// page into the table as it scrolls, Cancel, CSV export, and rows that name a time (ts and
// dur, with profile_id) zoom that profile's timeline to it on a double-click. The query runs
// on a worker over its own read-only connection: the GUI never waits for SQL.

#include <QAbstractTableModel>
#include <QWidget>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "core/progress.h"
#include "core/query/tables.h"
#include "views/common/async_job.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace stallscope {

// Rows a running query has produced so far (written by the worker, read by the GUI).
struct QueryRows {
    std::mutex mutex;
    std::vector<std::string> columns;
    std::vector<std::vector<query::Value>> rows;
    bool truncated = false;  // stopped keeping rows at the cap
};

// The results: the rows received so far, shown a page at a time (fetchMore).
class QueryResultModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    static constexpr int kPage = 1000;
    void reset(std::shared_ptr<QueryRows> rows);
    // Takes the rows that arrived since the last call (GUI thread).
    void take();
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

    size_t received() const { return received_.size(); }
    int column(const QString& name) const;  // -1 when absent
    const query::Value& value(int row, int column) const;
    QString csv() const;  // every received row

  private:
    std::shared_ptr<QueryRows> source_;
    std::vector<QString> columns_;
    std::vector<std::vector<query::Value>> received_;
    int shown_ = 0;
};

class QueryView : public QWidget {
    Q_OBJECT
  public:
    static constexpr size_t kRowCap = 1000000;
    explicit QueryView(const QString& workspacePath, QWidget* parent = nullptr);
    void setWorkspacePath(const QString& path) { workspacePath_ = path; }

    void setSql(const QString& sql);
    void run();
    void cancel();
    bool running() const { return running_; }
    QueryResultModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    QLabel* status() const { return status_; }
    // The time a result row names: profile, ts, dur (none without ts).
    struct RowTime {
        qint64 profile = -1, ts = 0, dur = 0;
    };
    std::optional<RowTime> timeOfRow(int row) const;

    // The result's rows with ts and dur as (profile, items) for "Show as track": labelled by
    // the name column (else the first text column); empty with a reason when they cannot be.
    struct TrackRows {
        qint64 profile = -1;
        std::vector<std::tuple<qint64, qint64, QString>> items;  // ts, dur, label
    };
    std::vector<TrackRows> trackRows(QString* why) const;
    QString trackTitle() const;

  signals:
    // A row naming a time was activated: show it on that profile's timeline.
    void timeRequested(qint64 profileId, qint64 start, qint64 end);
    // "Show as track": pin these rows on their profile's timeline.
    void trackRequested(qint64 profileId, const QString& title,
                        const std::vector<std::tuple<qint64, qint64, QString>>& items);
    void finished();

  private:
    void rememberQuery(const QString& sql);
    void showRunning(bool running);
    void takeRows();

    QString workspacePath_;
    QPlainTextEdit* editor_ = nullptr;
    QComboBox* examples_ = nullptr;
    QComboBox* history_ = nullptr;
    QPushButton* runButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QPushButton* trackButton_ = nullptr;
    QLabel* status_ = nullptr;
    QTableView* table_ = nullptr;
    QueryResultModel* model_ = nullptr;
    QTimer* poll_ = nullptr;
    std::shared_ptr<Progress> progress_;
    bool running_ = false;
    bool sized_ = false;  // columns fitted to the first rows
    async::JobSlot job_;
};

}  // namespace stallscope
