#pragma once

// Transfers derived from a trace profile (async copies and collectives, core/transfers) drawn as
// the replay timeline draws DMAs: one track per link, a lane per transfer in flight at once,
// each bar showing issue → ready (base latency), queueing behind earlier transfers, the
// transfer on the link, and the stall of whoever waited for it; a dashed tail back to the
// backtail (how early it could have been issued).

#include <memory>

#include "core/transfers/transfers.h"
#include "views/common/timeline_track.h"

namespace stallscope {

using TransferAnalysisPtr = std::shared_ptr<const transfers::Analysis>;

class TransferLinkTrack final : public TimelineTrack {
  public:
    static constexpr int kRowHeight = 16;
    static constexpr int kPadding = 3;
    static constexpr int kMaxRowsShown = 12;  // deeper lanes fold into the last one

    // `origin` is the store time of timeline time 0.
    TransferLinkTrack(TransferAnalysisPtr analysis, uint32_t link, int64_t origin);
    QString title() const override;
    int height() const override;
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    QList<LegendEntry> legend() const override;
    TimeRange extent() const override;

    uint32_t link() const { return link_; }
    // The lane transfer `id` is drawn in (folded into the last shown one when deeper).
    int rowOf(uint32_t id) const;
    // The bar's vertical extent for a row inside the track rect.
    QRectF rowRect(const QRect& trackRect, int row) const;

  private:
    TransferAnalysisPtr analysis_;
    uint32_t link_;
    int64_t origin_;
    std::vector<uint32_t> transfers_;  // this link's, by issue
    std::vector<int> rows_;            // per transfers_ entry
    int lanes_ = 1;
    TimeRange extent_;
    // The longest issue -> end and backtail -> issue, to find what a window shows.
    int64_t longestAfterIssue_ = 0, longestBeforeIssue_ = 0;
};

// The tracks of every link with transfers, in the analysis's link order.
std::vector<std::shared_ptr<TimelineTrack>> makeTransferTracks(const TransferAnalysisPtr& analysis,
                                                               int64_t origin);

}  // namespace stallscope
