#pragma once

// Steps on a trace timeline: a strip above the tracks with each step's breakdown over its time
// span (aligned with everything under it), and step boundaries drawn across every track.

#include <memory>

#include "core/trace/step_analysis.h"
#include "views/common/timeline_track.h"

namespace stallscope {

using StepAnalysisPtr = std::shared_ptr<const trace::StepAnalysis>;

class StepStripTrack final : public TimelineTrack {
  public:
    static constexpr int kHeight = 20;
    // `origin` is the store time of timeline time 0.
    StepStripTrack(StepAnalysisPtr analysis, int64_t origin, int device);
    QString title() const override;
    int height() const override { return kHeight; }
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
    int device() const { return device_; }
    // The step index at timeline time `t`, or -1.
    int stepAt(double t) const;

  private:
    StepAnalysisPtr analysis_;
    int64_t origin_;
    int device_;
};

// Dashed step boundaries over every track.
class StepBoundaryOverlay final : public TimelineOverlay {
  public:
    StepBoundaryOverlay(StepAnalysisPtr analysis, int64_t origin)
        : analysis_(std::move(analysis)), origin_(origin) {}
    void paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
               const std::function<QRect(const TimelineTrack*)>& trackRect) const override;

  private:
    StepAnalysisPtr analysis_;
    int64_t origin_;
};

}  // namespace stallscope
