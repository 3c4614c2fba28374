#pragma once

// The critical path on a trace timeline: a strip above the tracks with each step's path
// segments coloured by kind (host work, launches, kernels, copies, collective waits, input,
// syncs, idle), and an overlay marking each segment on the track it ran on.

#include <QColor>
#include <memory>
#include <vector>

#include "core/graph/critical_path.h"
#include "views/common/timeline_track.h"

namespace stallscope {

class TraceTimelineBinding;
using CriticalPathPtr = std::shared_ptr<const graph::CriticalPath>;

namespace pathview {

QColor kindColor(const std::string& kind);
QString kindLabel(const std::string& kind);

// Every step's segments in one time-ordered list, each with its step.
struct FlatSegment {
    const graph::PathSegment* segment = nullptr;
    int step = 0;
};
std::vector<FlatSegment> flatten(const graph::CriticalPath& path);
// The selected item outlined across `bar` (the strip's and the predicted lanes' selection).
void outlineSelected(QPainter& painter, const TimeMapping& mapping, const TimelineItem& selected,
                     const QRectF& bar);

}  // namespace pathview

class CriticalPathStripTrack final : public TimelineTrack {
  public:
    static constexpr int kHeight = 18;
    // `origin` is the store time of timeline time 0.
    CriticalPathStripTrack(CriticalPathPtr path, int64_t origin);
    QString title() const override { return QObject::tr("Critical path"); }
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

  private:
    CriticalPathPtr path_;
    int64_t origin_;
    std::vector<pathview::FlatSegment> segments_;
};

// Each segment outlined in its kind's colour on the track it ran on (host threads, streams).
class CriticalPathOverlay final : public TimelineOverlay {
  public:
    // `binding` is read at paint time: the trace's tracks as the timeline shows them.
    CriticalPathOverlay(CriticalPathPtr path, int64_t origin,
                        std::function<const TraceTimelineBinding*()> binding);
    void paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
               const std::function<QRect(const TimelineTrack*)>& trackRect) const override;

  private:
    CriticalPathPtr path_;
    int64_t origin_;
    std::function<const TraceTimelineBinding*()> binding_;
    std::vector<pathview::FlatSegment> segments_;
};

}  // namespace stallscope
