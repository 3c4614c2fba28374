#pragma once

// A what-if previewed on the timeline: under each track of the step graph (a host thread, a
// device stream), its lane re-simulated with the edit, as the replay view stacks a previewed
// reordering under the measured trace. Items are coloured by kind (the critical path's colours);
// a tooltip gives the predicted and the measured times.

#include <memory>
#include <vector>

#include "core/graph/whatif.h"
#include "views/common/timeline_track.h"
#include "views/trace/trace_tracks.h"

namespace stallscope {

using PredictedLanesPtr = std::shared_ptr<const std::vector<graph::PredictedLane>>;

class PredictedLaneTrack final : public TimelineTrack {
  public:
    static constexpr int kHeight = 20;
    // `lane` indexes `lanes`; `edit` names the edit in the title and tooltips.
    PredictedLaneTrack(TraceSourcePtr source, PredictedLanesPtr lanes, size_t lane, QString edit);

    struct Frame : TrackFrame {
        struct Box {
            double start, end;  // timeline units
            uint32_t item;      // into the lane's items (the first, when folded)
            uint32_t count;     // > 1: items under kFoldPixels folded together
        };
        std::vector<Box> boxes;
    };
    QString title() const override;
    int height() const override { return kHeight; }
    int titleIndent() const override { return 12; }
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

    const graph::PredictedLane& lane() const { return (*lanes_)[lane_]; }
    // As the trace names it (unnamed host work by its kind).
    QString itemName(const graph::PredictedItem& item) const;

  private:
    TraceSourcePtr source_;
    PredictedLanesPtr lanes_;
    size_t lane_;
    QString edit_;
    int64_t origin_;
    TimeRange extent_;
};

}  // namespace stallscope
