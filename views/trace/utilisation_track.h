#pragma once

// A device's utilisation lane (Nsight Systems' GPU utilisation row, HTA's GPU utilisation): at
// every pixel, the share of time any activity (kernel, copy, memset) ran on any of the device's
// tracks, as a filled profile. The device's busy intervals are read once (on the first frame's
// worker, or in the window on a thread of their own), merged across its streams; every frame
// after bins them exactly for its window.

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/trace/step_analysis.h"
#include "views/common/timeline_track.h"
#include "views/trace/trace_tracks.h"

namespace stallscope {

class DeviceUtilisationTrack final : public TimelineTrack {
  public:
    static constexpr int kHeight = 30;
    static constexpr int kBinPixels = 2;
    DeviceUtilisationTrack(TraceSourcePtr source, trace::StepDevice device);
    ~DeviceUtilisationTrack() override;
    // The window's frames do not wait for the busy intervals: they are read on a thread of
    // their own, frames drawn meanwhile are partial (the timeline asks again). Off: a frame
    // reads them first (a headless image).
    void setReadsInBackground(bool background) { background_ = background; }

    struct Frame : TrackFrame {
        double binStart = 0, binWidth = 1;  // timeline units
        std::vector<float> busy;            // 0..1 per bin
    };
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
    TimeRange extent() const override;

    // Busy time of the device inside [from, to) (timeline units), merged across its tracks.
    // Reads the intervals on first use: call it on a worker, or once ready() (tooltips).
    double busyBetween(double from, double to) const;
    // The intervals are read (by a frame's worker): the GUI thread may ask busyBetween().
    bool ready() const { return ready_.load(); }

  private:
    struct Busy {
        double start, end;  // timeline units, merged: sorted and disjoint
    };
    const std::vector<Busy>& intervals() const;  // reads them on first use (any thread)

    TraceSourcePtr source_;
    trace::StepDevice device_;
    mutable std::once_flag loaded_;
    mutable std::vector<Busy> busy_;
    mutable std::atomic<bool> ready_{false};
    bool background_ = false;
    mutable std::once_flag started_;
    mutable std::thread reader_;
    std::atomic<bool> closing_{false};         // stops the reader between chunks
    mutable std::atomic<bool> failed_{false};  // the reader could not read them
};

}  // namespace stallscope
