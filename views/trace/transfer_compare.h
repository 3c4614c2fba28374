#pragma once

// Before/after of the transfers of two trace profiles (issue 14): per module run and per
// transfer, matched as compare::compareTransfers matches them (runs by program and order, transfers
// by name and occurrence), and the lifetimes of one run's transfers, A over B on one time scale
// measured from each run's start: base latency, queueing, on the link, and the stall at the wait.

#include <QWidget>
#include <memory>
#include <vector>

#include "core/compare/transfer_compare.h"
#include "core/transfers/transfers.h"

class QLabel;
class QTableWidget;

namespace stallscope {

struct TransferComparisonData {
    std::shared_ptr<const transfers::Analysis> a, b;
    compare::TransferComparison comparison;  // of *a and *b
};
// Reads (or derives, on the first request) both profiles' transfers and compares them.
TransferComparisonData loadTransferComparison(Workspace& workspace, int64_t a, int64_t b);

// One matched run: its transfers in A and B, pairwise.
struct TransferRunPair {
    QString program;
    int run = 0;
    int64_t startA = 0, startB = 0, lengthA = 0, lengthB = 0;
    std::vector<std::pair<const transfers::Transfer*, const transfers::Transfer*>> transfers;
};

class TransferLifetimeChart : public QWidget {
  public:
    explicit TransferLifetimeChart(QWidget* parent = nullptr);
    void setRun(TransferRunPair run);
    const TransferRunPair& run() const { return run_; }

    struct Layout {
        QRectF plot;
        // Per transfer, the lanes of A and B and the stall block drawn in each (empty when none).
        std::vector<QRectF> laneA, laneB, stallA, stallB;
        double xEndA = 0, xEndB = 0;  // the runs' ends
    };
    Layout paintChart(QPainter& painter, const QRectF& area) const;
    QSize sizeHint() const override;

  protected:
    void paintEvent(QPaintEvent*) override;
    bool event(QEvent* event) override;  // tooltips

  private:
    TransferRunPair run_;
};

class TransferComparePane : public QWidget {
  public:
    explicit TransferComparePane(QWidget* parent = nullptr);
    void setData(TransferComparisonData data);

    QLabel* summary() const { return summary_; }
    QTableWidget* moduleTable() const { return modules_; }
    QTableWidget* transferTable() const { return transfers_; }
    TransferLifetimeChart* chart() const { return chart_; }
    // Shows the run of module row `row` (in compareTransfers' runs order).
    void selectRun(int row);
    QString transfersCsv() const;  // every matched pair, as compareTransfers lists them

  private:
    TransferRunPair pairOf(int row) const;
    TransferComparisonData data_;
    QLabel* summary_ = nullptr;
    QTableWidget* modules_ = nullptr;
    QTableWidget* transfers_ = nullptr;
    TransferLifetimeChart* chart_ = nullptr;
};

}  // namespace stallscope
