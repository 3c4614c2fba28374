#pragma once

// Trace profiles on the generic timeline: slice tracks (coloured by name, nested by depth, folded
// items as counted blocks, instants as markers), counter tracks (area charts) and flow arrows.
// Times on the timeline are ns since the profile's start, so axes read from zero and doubles keep
// full precision on epoch-based timestamps.

#include <QColor>
#include <QString>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "timeline_track.h"
#include "trace_store.h"
#include "workspace.h"

namespace stallscope {

class TimelineView;

// Shared read access to one trace profile from any thread. The in-memory part of the store
// (tracks, strings, range) is immutable after opening and read directly; queries that touch the
// database run on a per-thread store taken from a pool (SQLite connections are not shared).
class TraceSource {
  public:
    // Opens the profile (reads tracks and strings): call off the GUI thread.
    TraceSource(std::string workspacePath, int64_t profileId);
    ~TraceSource();

    const trace::TraceStore& store() const { return *primary_; }  // in-memory parts only
    const std::string& workspacePath() const { return workspacePath_; }
    int64_t origin() const { return primary_->start(); }
    const std::string& text(uint32_t id) const { return primary_->text(id); }
    const std::vector<trace::FlowRow>& flows() const { return flows_; }

    // Runs `query` with a store owned by the calling thread for its duration (any thread).
    template <class Query>
    auto query(Query&& q) const {
        Lease lease(*this);
        return q(*lease.store);
    }

  private:
    struct Connection {
        std::unique_ptr<Workspace> workspace;
        std::unique_ptr<trace::TraceStore> store;
    };
    struct Lease {
        explicit Lease(const TraceSource& source);
        ~Lease();
        const TraceSource& source;
        std::unique_ptr<Connection> connection;
        const trace::TraceStore* store = nullptr;
    };
    std::unique_ptr<Connection> open() const;

    std::string workspacePath_;
    int64_t profileId_;
    std::unique_ptr<Connection> primaryConnection_;
    const trace::TraceStore* primary_ = nullptr;
    std::vector<trace::FlowRow> flows_;
    mutable std::mutex poolMutex_;
    mutable std::vector<std::unique_ptr<Connection>> pool_;
};
using TraceSourcePtr = std::shared_ptr<const TraceSource>;

// A stable colour per op name (FNV-1a hash → hue), so a name looks the same in every view.
QColor traceNameColor(const std::string& name);
// "1.25 ms", "830 ns", "2.500 s".
QString formatNanoseconds(double ns);

// What the slice tracks dim everything but (the op selected in the op table); GUI thread only.
struct TraceHighlight {
    std::string name;  // empty: nothing highlighted
};

class TraceSliceTrack final : public TimelineTrack {
  public:
    static constexpr int kRowHeight = 18;
    static constexpr int kPadding = 3;

    TraceSliceTrack(TraceSourcePtr source, const trace::TrackRow& row,
                    std::shared_ptr<const TraceHighlight> highlight = {});
    struct Frame : TrackFrame {
        std::vector<trace::SliceItem> items;  // times relative to the profile's origin
    };

    int64_t trackId() const { return trackId_; }
    QString title() const override { return title_; }
    int height() const override;
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    TimeRange extent() const override { return extent_; }
    // Vertical centre of depth row `depth` relative to the track's top.
    static int rowCenter(int depth) { return kPadding + depth * kRowHeight + kRowHeight / 2; }
    // The timeline item of a slice (as hitTest returns it); times relative to the origin.
    static TimelineItem itemOf(const trace::SliceItem& slice);
    // Args id of the last hit slice matching `item` (0: none); hitTest remembers its frame.
    uint64_t argsOf(const TimelineItem& item) const;

  private:
    TraceSourcePtr source_;
    int64_t trackId_;
    int depthRows_;
    QString title_;
    TimeRange extent_;
    std::shared_ptr<const TraceHighlight> highlight_;
    mutable std::shared_ptr<const Frame> lastHitFrame_;
};

class TraceCounterTrack final : public TimelineTrack {
  public:
    static constexpr int kHeight = 44;
    TraceCounterTrack(TraceSourcePtr source, const trace::TrackRow& row);
    struct Frame : TrackFrame {
        std::vector<trace::CounterItem> items;  // ts relative to the origin
        double low = 0, high = 1;               // value axis
    };
    QString title() const override { return title_; }
    int height() const override { return kHeight; }
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    TimeRange extent() const override { return extent_; }

  private:
    TraceSourcePtr source_;
    int64_t trackId_;
    QString title_;
    TimeRange extent_;
    QColor color_;
    mutable std::map<double, trace::CounterItem> lastHit_;  // by time, for tooltips
};

// Flow arrows between slices (or instants) of the shown tracks.
class TraceFlowOverlay final : public TimelineOverlay {
  public:
    using TrackMap = std::map<int64_t, const TimelineTrack*>;
    // `shown` maps store track ids to the timeline tracks currently shown (updated by the owner).
    TraceFlowOverlay(TraceSourcePtr source, std::shared_ptr<const TrackMap> shown);
    void paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
               const std::function<QRect(const TimelineTrack*)>& trackRect) const override;

  private:
    TraceSourcePtr source_;
    std::shared_ptr<const TrackMap> shown_;
    std::vector<trace::FlowRow> byStart_;  // sorted by the earlier end's time
    int64_t longest_ = 0;
};

// The tracks of `source` in tree order (process, then its threads), as timeline tracks.
struct TraceTimelineTracks {
    std::vector<std::shared_ptr<TimelineTrack>> tracks;
    std::map<int64_t, const TimelineTrack*> byTrackId;
};
TraceTimelineTracks makeTraceTracks(const TraceSourcePtr& source,
                                    const std::vector<int64_t>& trackIds,
                                    std::shared_ptr<const TraceHighlight> highlight = {});
// Every track id with data in display order (depth-first over the track tree).
std::vector<int64_t> traceTracksInOrder(const trace::TraceStore& store);
// ns time format for trace timelines.
void setTraceTimeFormat(TimelineView& view);

// Keeps a TimelineView showing a chosen set of a trace's tracks with their flow arrows.
class TraceTimelineBinding {
  public:
    TraceTimelineBinding(TimelineView& view, TraceSourcePtr source,
                         std::shared_ptr<const TraceHighlight> highlight = {});
    // Replaces the shown tracks (keeps the window).
    void show(const std::vector<int64_t>& trackIds);
    const TraceTimelineTracks& shown() const { return shown_; }
    const TimelineTrack* trackFor(int64_t trackId) const;
    const TraceSourcePtr& source() const { return source_; }

  private:
    TimelineView& view_;
    TraceSourcePtr source_;
    std::shared_ptr<const TraceHighlight> highlight_;
    std::shared_ptr<TraceFlowOverlay::TrackMap> map_;
    TraceTimelineTracks shown_;
};

}  // namespace stallscope
