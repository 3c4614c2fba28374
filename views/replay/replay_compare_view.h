#pragma once

#include <QImage>
#include <QWidget>
#include <memory>
#include <optional>

#include "core/compare/replay_compare.h"
#include "views/common/async_job.h"
#include "views/common/render.h"
#include "views/common/time_navigation.h"
#include "views/replay/replay_document.h"
#include "views/replay/replay_tracks.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QTableWidget;

namespace stallscope {

class TimelineView;

// Before/after of two replay profiles (DOMAIN.md §6): the summary line, both timelines stacked
// on one synchronized cycle axis (window, cursor, vertical scroll and DMA selection follow both),
// aligned at the start or at a chosen HLO op, with the same rows in both; totals, per-op and
// per-DMA delta tables with CSV export.
struct ReplayComparisonData {
    ReplayDocumentPtr a, b;
    replay::ReplayComparison comparison;
};
using ReplayComparisonPtr = std::shared_ptr<const ReplayComparisonData>;

// Loads both profiles and compares them; runs on a worker.
ReplayComparisonPtr loadReplayComparison(const QString& workspacePath, const ProfileInfo& a,
                                         const ProfileInfo& b);
// Compares two already built documents.
ReplayComparisonPtr compareReplayDocuments(ReplayDocumentPtr a, ReplayDocumentPtr b);

class ReplayCompareView : public QWidget {
    Q_OBJECT
  public:
    enum class Table { Totals, Ops, Dmas };

    ReplayCompareView(const ProfileInfo& a, const ProfileInfo& b, const QString& workspacePath,
                      QWidget* parent = nullptr);
    // Shows already loaded data (tests, headless rendering).
    explicit ReplayCompareView(ReplayComparisonPtr data, QWidget* parent = nullptr);

    bool isLoaded() const { return data_ != nullptr; }
    const ReplayComparisonData* data() const { return data_.get(); }
    TimelineView* before() const { return before_; }
    TimelineView* after() const { return after_; }
    QTableWidget* totalsTable() const { return totals_; }
    QTableWidget* opTable() const { return ops_; }
    QTableWidget* dmaTable() const { return dmas_; }
    QComboBox* alignBox() const { return align_; }
    // Each side's replay tracks (drawn inside the shared rows) and the shared row of a lane.
    const ReplayTracks& tracksA() const { return tracksA_; }
    const ReplayTracks& tracksB() const { return tracksB_; }
    const TimelineTrack* laneRow(bool sideA, size_t lane) const {
        return (sideA ? laneRowsA_ : laneRowsB_).at(lane);
    }
    QString summary() const;

    // Aligns both runs at the start (empty) or at an HLO op's first start: B's axis is shifted
    // by the alignment's offset, so equal times line up. Throws InputError for an unknown op.
    void setAlignment(const std::string& op);
    const replay::Alignment& alignment() const { return alignment_; }

    // Selects the DMAs of comparison.dmas[index] in both timelines and zooms both to them.
    void showDmaDelta(size_t index);
    // comparison.dmas index of a DMA table row (rows follow sorting), -1 when out of range.
    int dmaDeltaOfRow(int row) const;

    // CSV of each table, rows in the comparison's order.
    QString totalsCsv() const;
    QString opCsv() const;
    QString dmaCsv() const;
    bool exportCsv(Table table, const QString& path, QString* error = nullptr) const;

    // Summary and totals on top, then both timelines on the shared axis. With `fit`, the image
    // is made tall enough for every track of both (its width is kept).
    QImage renderImage(QSize size, bool fit = false);

  signals:
    void loaded();

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void showLoadError(const QString& error);
    async::JobSlot loadJob_{this, [this](const QString& error) { showLoadError(error); }};
    void build();
    void showData(ReplayComparisonPtr data);
    void installTracks();
    void applyAlignment();
    void syncSelection(TimelineView* from, TimelineView* to);
    std::optional<size_t> dmaOf(const TimelineView* view) const;  // selected DMA index
    void selectDma(TimelineView* view, bool sideA, size_t dma);

    ReplayComparisonPtr data_;
    QLabel* summary_ = nullptr;
    QLabel* labelA_ = nullptr;
    QLabel* labelB_ = nullptr;
    QComboBox* align_ = nullptr;
    TimelineView* before_ = nullptr;
    TimelineView* after_ = nullptr;
    QTabWidget* tables_ = nullptr;
    QTableWidget* totals_ = nullptr;
    QTableWidget* ops_ = nullptr;
    QTableWidget* dmas_ = nullptr;
    ReplayTracks tracksA_, tracksB_;
    // The shown (aligned) lane of each side per DmaLaneTrack index.
    std::vector<const TimelineTrack*> laneRowsA_, laneRowsB_;
    std::vector<size_t> deltaOfA_, deltaOfB_;  // DMA index -> comparison.dmas index
    replay::Alignment alignment_;
    TimeNavigation* navigation_ = new TimeNavigation(this);
};

// `render compare A --against B` for replay profiles (`--align-op` aligns at an HLO op).
QImage renderReplayCompare(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options);

}  // namespace stallscope
