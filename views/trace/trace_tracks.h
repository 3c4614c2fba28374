#pragma once

// Trace profiles on the generic timeline: slice tracks (coloured by name, nested by depth, folded
// items as counted blocks, instants as markers), counter tracks (area charts) and flow arrows.
// Times on the timeline are ns since the profile's start, so axes read from zero and doubles keep
// full precision on epoch-based timestamps.

#include <QColor>
#include <QJsonObject>
#include <QPainterPath>
#include <QPointer>
#include <QPolygonF>
#include <QStaticText>
#include <QString>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "views/common/timeline_track.h"
#include "views/trace/flow_index.h"

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
    // The flows by the earlier of their two ends' times (flow_index.h). Read on a thread of
    // their own from opening on: 10^7 flows take a second, which the first frame does not wait
    // for (arrows follow a selection). Empty until read.
    std::shared_ptr<const FlowIndex> flows() const;
    bool flowsRead() const { return flowsRead_.load(); }
    // The flows once read (an image of every arrow, tests).
    std::shared_ptr<const FlowIndex> waitForFlows() const;
    // The profile's metadata (what the importer recorded), read at opening.
    const QJsonObject& metadata() const { return metadata_; }
    // What the profile knows about a process track: XProf plane stats (device type, peak
    // FLOPS, bandwidths), Chrome process labels, Chakra ranks.
    DetailFields processDetails(const trace::TrackRow& process) const;
    // The device type of a process (XProf device_type_string), "" when unknown.
    QString deviceType(const trace::TrackRow& process) const;

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
    void readFlows();
    mutable std::mutex flowsMutex_;
    mutable std::condition_variable flowsDone_;
    std::shared_ptr<const FlowIndex> flows_;
    std::atomic<bool> flowsRead_{false}, closing_{false};
    std::thread flowReader_;
    QJsonObject metadata_;
    mutable std::mutex poolMutex_;
    mutable std::vector<std::unique_ptr<Connection>> pool_;
};
using TraceSourcePtr = std::shared_ptr<const TraceSource>;

// A stable colour per op name (FNV-1a hash → hue), so a name looks the same in every view.
QColor traceNameColor(const std::string& name);

// The minimap's density: per bin of [start, end), how many tracks are inside a top-level slice on
// average (0..tracks), read from a coarse LOD level so it costs a few thousand items a track.
std::vector<double> trackBusyDensity(const trace::TraceStore& store, size_t bins);
// Draws such a density as a filled profile into the timeline's overview strip.
std::function<void(QPainter&, const QRect&, TimeRange)> densityOverview(std::vector<double> density,
                                                                        TimeRange extent);

// What the slice tracks dim everything but: the op selected in the op table, or every name the
// find field matches. GUI thread only.
struct TraceHighlight {
    std::unordered_set<std::string> names;  // empty: nothing highlighted
    bool dims(const std::string& name) const { return !names.empty() && !names.contains(name); }
};

// A process (XProf plane, Chrome pid, Chakra rank set) above its tracks: a band with its name
// (and device type); clicking it shows the process's details.
class TraceProcessHeaderTrack final : public TimelineTrack {
  public:
    static constexpr int kHeight = 22;
    // `level`: 0 for the outermost process, 1 for a process inside it (a host's planes).
    TraceProcessHeaderTrack(TraceSourcePtr source, const trace::TrackRow& row, TimeRange extent,
                            int level = 0);
    int titleIndent() const override { return level_ * 12; }
    int64_t trackId() const { return trackId_; }
    QString title() const override { return title_; }
    int height() const override { return kHeight; }
    bool isHeader() const override { return true; }
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
    int level_ = 0;
};

class TraceSliceTrack final : public TimelineTrack {
  public:
    static constexpr int kRowHeight = 18;
    static constexpr int kPadding = 3;
    // Slices narrower than this (zero-length nodes, sub-ns events) are still drawn this wide.
    static constexpr double kMinSliceWidth = 3.0;

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
    int titleIndent() const override { return indent_; }
    // Vertical centre of depth row `depth` relative to the track's top.
    static int rowCenter(int depth) { return kPadding + depth * kRowHeight + kRowHeight / 2; }
    // The timeline item of a slice (as hitTest returns it); times relative to the origin.
    static TimelineItem itemOf(const trace::SliceItem& slice);
    // Args id of the last hit slice matching `item` (0: none); hitTest remembers its frame.
    uint64_t argsOf(const TimelineItem& item) const;
    // Remembers a slice selected without a hit (a Find match) as if it had been hit, so that
    // argsOf and the details describe it; times relative to the origin.
    void noteSelected(const trace::SliceItem& slice) const;

  private:
    TraceSourcePtr source_;
    int64_t trackId_;
    int depthRows_;
    QString title_;
    TimeRange extent_;
    int indent_;
    std::shared_ptr<const TraceHighlight> highlight_;
    // The slice of the last hit frame that `item` describes, nullptr when gone.
    const trace::SliceItem* hitSlice(const TimelineItem& item) const;
    mutable std::shared_ptr<const Frame> lastHitFrame_;
    mutable std::unordered_map<uint64_t, QStaticText> labels_;  // GUI thread (paint) only
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
    int titleIndent() const override { return indent_; }

  private:
    TraceSourcePtr source_;
    int64_t trackId_;
    QString title_;
    TimeRange extent_;
    int indent_;
    QColor color_;
    QString unit_;
    mutable std::map<double, trace::CounterItem> lastHit_;  // by time, for tooltips
};

// Which flow arrows a trace timeline draws. Every flow at once (a Kineto step has thousands of
// launch → kernel arrows) hides the slices under them, so by default only those of the selected
// slice, as Perfetto does; a slice with none of its own (an aten op whose launch is nested in it)
// shows those of the slices nested in it while they are few.
enum class FlowDisplay { Selected, All, None };

// Flow arrows between slices (or instants) of the shown tracks.
class TraceFlowOverlay final : public TimelineOverlay {
  public:
    using TrackMap = std::map<int64_t, const TimelineTrack*>;
    // `shown` maps store track ids to the timeline tracks currently shown (updated by the owner);
    // `view` is the timeline whose selection FlowDisplay::Selected follows.
    TraceFlowOverlay(TraceSourcePtr source, std::shared_ptr<const TrackMap> shown,
                     const TimelineView* view = nullptr);
    void paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
               const std::function<QRect(const TimelineTrack*)>& trackRect) const override;
    void setDisplay(FlowDisplay display) { display_ = display; }
    // Paints wait for the flows to be read (a headless image; never on the GUI thread).
    void setWaitForFlows(bool wait) { waitForFlows_ = wait; }
    FlowDisplay display() const { return display_; }

    // A slice a flow end may lie in: its track, [start, end] in store time and its depth.
    struct SliceSpan {
        int64_t track = 0;
        int64_t start = 0, end = 0;
        int depth = 0;
    };
    // How a flow ends in the slice `span`: at the slice itself, at a slice nested in it, or not.
    enum class FlowTie { None, Own, Nested };
    static FlowTie tie(const trace::FlowRow& flow, const SliceSpan& span) {
        auto at = [&span](int64_t track, int64_t ts, int32_t depth) {
            if (track != span.track || ts < span.start || ts > span.end || depth < span.depth)
                return FlowTie::None;
            return depth == span.depth ? FlowTie::Own : FlowTie::Nested;
        };
        const FlowTie from = at(flow.fromTrack, flow.fromTs, flow.fromDepth);
        const FlowTie to = at(flow.toTrack, flow.toTs, flow.toDepth);
        if (from == FlowTie::Own || to == FlowTie::Own) return FlowTie::Own;
        return from == FlowTie::Nested || to == FlowTie::Nested ? FlowTie::Nested : FlowTie::None;
    }
    // Nested slices' flows a selected slice without flows of its own shows, at most.
    static constexpr int kNestedFlowsShown = 8;

    // How a flow is drawn between the rects of its tracks: a curve and a head whose tip is on
    // the target. Forward arrows enter the target's start from the left; backward and vertical
    // ones stop at the target row's edge facing the source; arrows along one row arc over it to
    // its top edge (none when both ends coincide). Heads follow the curve, so backward ones
    // point backward.
    struct FlowArrow {
        QPainterPath path;
        QPolygonF head;
        QPointF tip;
    };
    static std::optional<FlowArrow> arrowFor(const trace::FlowRow& flow, const QRect& from,
                                             const QRect& to, const TimeMapping& mapping,
                                             int64_t origin);

  private:
    // The selected slice as a span, when the view's selection is a slice of a trace track.
    std::optional<SliceSpan> selectedSpan() const;

    TraceSourcePtr source_;
    std::shared_ptr<const TrackMap> shown_;
    QPointer<const TimelineView> view_;
    FlowDisplay display_ = FlowDisplay::Selected;
    bool waitForFlows_ = false;
};

// The tracks of `source` in the order given, as timeline tracks, with a process header above
// each run of tracks of one process.
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
    ~TraceTimelineBinding();
    TraceTimelineBinding(const TraceTimelineBinding&) = delete;
    TraceTimelineBinding& operator=(const TraceTimelineBinding&) = delete;
    // Replaces the shown tracks (keeps the window).
    void show(const std::vector<int64_t>& trackIds);
    // Tracks drawn above the trace's own (the step strip), kept across show().
    void setLeadingTracks(std::vector<std::shared_ptr<TimelineTrack>> tracks);
    // Tracks drawn right under a trace track of the given id (a what-if's predicted lane), kept
    // across show(); shown from the next show() or setLeadingTracks().
    void setCompanionTracks(std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> tracks);
    const TraceTimelineTracks& shown() const { return shown_; }
    const TimelineTrack* trackFor(int64_t trackId) const;
    const TraceSourcePtr& source() const { return source_; }
    void setFlowDisplay(FlowDisplay display);
    // A headless image: its paint waits for the flows (read meanwhile, beside its tracks).
    void setWaitForFlows(bool wait) { flows_->setWaitForFlows(wait); }
    FlowDisplay flowDisplay() const { return flows_->display(); }

  private:
    TimelineView& view_;
    TraceSourcePtr source_;
    std::shared_ptr<const TraceHighlight> highlight_;
    std::shared_ptr<TraceFlowOverlay::TrackMap> map_;
    std::shared_ptr<TraceFlowOverlay> flows_;
    std::vector<std::shared_ptr<TimelineTrack>> leading_;
    std::vector<std::pair<int64_t, std::shared_ptr<TimelineTrack>>> companions_;
    std::vector<int64_t> shownIds_;
    TraceTimelineTracks shown_;
};

}  // namespace stallscope
