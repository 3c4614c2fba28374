#pragma once

#include <QFutureWatcher>
#include <QImage>
#include <QWidget>
#include <memory>

#include "render.h"
#include "replay_compare.h"
#include "replay_document.h"

class QLabel;
class QTableWidget;

namespace stallscope {

class TimelineView;

// Before/after of two replay profiles (DOMAIN.md §6): the summary line, both timelines stacked
// on one synchronized cycle axis, per-op and per-DMA delta tables.
struct ReplayComparisonData {
    ReplayDocumentPtr a, b;
    replay::ReplayComparison comparison;
};
using ReplayComparisonPtr = std::shared_ptr<const ReplayComparisonData>;

// Loads both profiles and compares them; runs on a worker.
ReplayComparisonPtr loadReplayComparison(const QString& workspacePath, const ProfileInfo& a,
                                         const ProfileInfo& b);

class ReplayCompareView : public QWidget {
    Q_OBJECT
  public:
    ReplayCompareView(const ProfileInfo& a, const ProfileInfo& b, const QString& workspacePath,
                      QWidget* parent = nullptr);
    // Shows already loaded data (tests, headless rendering).
    explicit ReplayCompareView(ReplayComparisonPtr data, QWidget* parent = nullptr);

    bool isLoaded() const { return data_ != nullptr; }
    TimelineView* before() const { return before_; }
    TimelineView* after() const { return after_; }
    QTableWidget* opTable() const { return ops_; }
    QTableWidget* dmaTable() const { return dmas_; }
    QString summary() const;
    // CSV of the per-DMA deltas.
    QString dmaCsv() const;
    QImage renderImage(QSize size);

  signals:
    void loaded();

  private:
    void build();
    void show(ReplayComparisonPtr data);

    ReplayComparisonPtr data_;
    QFutureWatcher<ReplayComparisonPtr>* watcher_ = nullptr;
    QLabel* summary_ = nullptr;
    TimelineView* before_ = nullptr;
    TimelineView* after_ = nullptr;
    QTableWidget* ops_ = nullptr;
    QTableWidget* dmas_ = nullptr;
    bool syncing_ = false;
};

// `render compare A --against B` for replay profiles.
QImage renderReplayCompare(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options);

}  // namespace stallscope
