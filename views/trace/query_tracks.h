#pragma once

// Query results pinned to a trace's timeline (Perfetto's debug tracks): a result with ts and
// dur becomes a track above the trace's own, each row a box labelled by its name column,
// overlapping rows stacked. The Query tab's "Show as track" pins one; the panel keeps them for
// the open trace (views/trace/trace_panel.h) and draws nothing else.

#include <QString>
#include <memory>
#include <vector>

#include "views/common/timeline_track.h"
#include "views/trace/trace_panel.h"

namespace stallscope {

struct QueryTrackItem {
    int64_t ts = 0, dur = 0;  // store ns
    QString label;
};

struct QueryTrackData {
    QString title;
    std::vector<QueryTrackItem> items;  // sorted by ts
    std::vector<int> rows;              // each item's stacked row
    int rowCount = 1;
    // Sorts the items and stacks overlapping ones (at most kMaxRows, the rest share the last).
    static std::shared_ptr<const QueryTrackData> make(QString title,
                                                      std::vector<QueryTrackItem> items);
    static constexpr int kMaxRows = 6;
};

class QueryResultTrack final : public TimelineTrack {
  public:
    static constexpr int kRowHeight = 16;
    QueryResultTrack(std::shared_ptr<const QueryTrackData> data, int64_t origin)
        : data_(std::move(data)), origin_(origin) {}
    QString title() const override { return data_->title; }
    int height() const override { return data_->rowCount * kRowHeight + 4; }
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    TimeRange extent() const override;
    // The colour of a label's boxes (stable per label).
    static QColor colorOf(const QString& label);

  private:
    std::shared_ptr<const QueryTrackData> data_;
    int64_t origin_;
};

class QueryTracksPanel : public TracePanel {
    Q_OBJECT
  public:
    explicit QueryTracksPanel(TracePanelHost& host) : TracePanel(host) {}
    std::string_view analysis() const override { return "query_tracks"; }  // none registered
    void setResult(const analysis::Result&) override {}
    void clear() override { pinned_.clear(); }
    std::vector<std::shared_ptr<TimelineTrack>> leadingTracks() const override;

    void pin(std::shared_ptr<const QueryTrackData> data);
    void unpinAll();
    size_t pinnedCount() const { return pinned_.size(); }

  private:
    std::vector<std::shared_ptr<const QueryTrackData>> pinned_;
};

}  // namespace stallscope
