#pragma once

#include <QFontMetrics>
#include <QLineF>
#include <QRectF>
#include <set>
#include <vector>

#include "core/replay/dependencies.h"
#include "views/common/timeline_track.h"
#include "views/replay/replay_document.h"

namespace stallscope {

// Replay-specific timeline tracks: the HLO-op band, one DMA lane per link and one utilization
// track per unit, plus overlays for dependency arrows and suggestion ghosts.

namespace replaycolors {
QColor baseLatency();    // issue -> ready
QColor queued();         // ready -> transfer start (waiting for the link)
QColor transfer();       // transfer start -> complete
QColor baseStall();      // green
QColor transferStall();  // purple
QColor slack();          // grey, hatched
QColor backtail();
QColor highlight();   // selected backtail, ghosts
QColor completion();  // DMA completion marks on unit tracks
QColor unit(const QString& name);
QColor op(const QString& name);
}  // namespace replaycolors

// Pixel geometry of one DMA in a row (DOMAIN.md §1 "DMA lifetime"): the bar runs issue -> ready
// (base latency), ready -> start (queued) and start -> complete (transfer); the stall at the WAIT
// sits in the lower half of the bar: green over [wait, ready] and purple over
// [max(wait, ready), complete]; slack is [complete, wait]; the backtail runs at mid-height from the
// earliest legal issue point to the issue. Empty rects / null line where a part does not exist.
struct DmaSegments {
    QRectF base, queue, transfer;
    QRectF baseStall, transferStall;
    QRectF slack;
    QLineF backtail;
    double waitX = -1;  // x of the WAIT, -1 when never waited
};
DmaSegments dmaSegments(const replay::DmaTiming& timing, double backtailCycle,
                        const TimeMapping& mapping, const QRectF& bar);

class HloTrack final : public TimelineTrack {
  public:
    explicit HloTrack(ReplayDocumentPtr doc) : doc_(std::move(doc)) {}
    QString title() const override { return QObject::tr("HLO ops"); }
    int height() const override { return 24; }
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    TimeRange extent() const override { return {0, doc_->totalCycles()}; }

  private:
    ReplayDocumentPtr doc_;
};

class DmaLaneTrack final : public TimelineTrack {
  public:
    static constexpr int kRowHeight = 26;
    static constexpr int kTopPad = 2;
    static constexpr int kMaxRowsShown = 24;  // deeper rows fold into the last one

    DmaLaneTrack(ReplayDocumentPtr doc, size_t lane);
    QString title() const override;
    int height() const override { return kTopPad * 2 + shownRows() * kRowHeight; }
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    QList<LegendEntry> legend() const override;
    TimeRange extent() const override { return {0, doc_->totalCycles()}; }

    size_t lane() const { return lane_; }
    int shownRows() const;
    int shownRow(size_t dma) const;  // row a DMA is drawn in
    // The bar rect of a row inside the track rect.
    QRectF barRect(const QRect& trackRect, int row) const;
    TimelineItem itemFor(size_t dma) const;
    // DMAs whose backtail is highlighted, and ghost bars (proposed positions).
    void setHighlighted(std::set<size_t> dmas) { highlighted_ = std::move(dmas); }
    void setGhosts(std::vector<SuggestionPreview::Ghost> ghosts) { ghosts_ = std::move(ghosts); }
    const std::vector<SuggestionPreview::Ghost>& ghosts() const { return ghosts_; }
    // Ghost bar rect of a ghost of this lane (empty when the DMA is in another lane).
    QRectF ghostRect(const SuggestionPreview::Ghost& ghost, const QRect& trackRect,
                     const TimeMapping& mapping) const;

    struct Item {
        uint32_t first = 0;  // index into the row
        uint32_t count = 1;
        double start = 0, end = 0, stall = 0;
    };
    struct Frame : TrackFrame {
        std::vector<std::vector<Item>> rows;
    };

  private:
    void paintDma(QPainter& painter, size_t dma, const TimeMapping& mapping, const QRectF& bar,
                  bool selected) const;

    ReplayDocumentPtr doc_;
    size_t lane_;
    std::set<size_t> highlighted_;
    std::vector<SuggestionPreview::Ghost> ghosts_;
};

class UnitTrack final : public TimelineTrack {
  public:
    UnitTrack(ReplayDocumentPtr doc, size_t unit) : doc_(std::move(doc)), unit_(unit) {}
    QString title() const override;
    int height() const override { return 44; }
    std::shared_ptr<const TrackFrame> prepare(TimeRange window, double upp) const override;
    void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
               const TrackFrame* frame, const std::optional<TimelineItem>& selected) const override;
    std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                        const TimeMapping& mapping,
                                        const TrackFrame* frame) const override;
    QString toolTip(const TimelineItem& item) const override;
    DetailFields details(const TimelineItem& item) const override;
    QList<LegendEntry> legend() const override;
    TimeRange extent() const override { return {0, doc_->totalCycles()}; }
    size_t unit() const { return unit_; }

    // Busy fraction and DMA completions per column of `upp` time units from window.start.
    struct Frame : TrackFrame {
        std::vector<float> busy;
        std::vector<uint32_t> completions;
        // Column index of the item ids handed out by hitTest.
    };
    // Exact busy time of this unit over [from, to) (overlapping busy spans merged).
    double busyBetween(double from, double to) const;

  private:
    ReplayDocumentPtr doc_;
    size_t unit_;
};

// Arrows from the producers / constraints to the selected DMA's ISSUE.
class DependencyOverlay final : public TimelineOverlay {
  public:
    enum class Mode { Off, Conservative, Relaxed };
    explicit DependencyOverlay(ReplayDocumentPtr doc) : doc_(std::move(doc)) {}
    void setTracks(const TimelineTrack* hlo, std::vector<const DmaLaneTrack*> lanes,
                   std::vector<const UnitTrack*> units);
    void setEdges(size_t dma, std::vector<replay::DependencyEdge> edges);
    void clear() { edges_.clear(); }
    void setMode(Mode mode) { mode_ = mode; }
    Mode mode() const { return mode_; }
    const std::vector<replay::DependencyEdge>& edges() const { return edges_; }
    // Anchor point of an instruction (its DMA row or its unit's track) at its issue cycle.
    std::optional<QPointF> anchor(
        uint32_t instr, const TimeMapping& mapping,
        const std::function<QRect(const TimelineTrack*)>& trackRect) const;
    void paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
               const std::function<QRect(const TimelineTrack*)>& trackRect) const override;

    // A constraint's name ("destination-writer") where paint() draws it: clear of every DMA bar
    // and of the other labels, next to the arrow's start when there is room, else the nearest
    // free place above or below it (a leader line joins them); left out when the data area has
    // no such place.
    struct Label {
        QString text;
        QRectF rect;
        QPointF from;  // the arrow's start
    };
    std::vector<Label> labels(const QFontMetrics& metrics, const QRect& dataArea,
                              const TimeMapping& mapping,
                              const std::function<QRect(const TimelineTrack*)>& trackRect) const;

  private:
    bool overlapsDmaBar(const QRectF& rect, const TimeMapping& mapping,
                        const std::function<QRect(const TimelineTrack*)>& trackRect) const;

    ReplayDocumentPtr doc_;
    const TimelineTrack* hlo_ = nullptr;
    std::vector<const DmaLaneTrack*> lanes_;
    std::vector<const UnitTrack*> units_;
    std::vector<replay::DependencyEdge> edges_;
    size_t dma_ = 0;
    Mode mode_ = Mode::Relaxed;
};

// The document's tracks in display order (HLO band, DMA lanes, units).
struct ReplayTracks {
    ReplayDocumentPtr doc;
    std::shared_ptr<HloTrack> hlo;
    std::vector<std::shared_ptr<DmaLaneTrack>> lanes;
    std::vector<std::shared_ptr<UnitTrack>> units;
    std::shared_ptr<DependencyOverlay> dependencies;
    DmaLaneTrack* laneOf(size_t dma) const;
};
class TimelineView;
struct ReplayTrackSelection {
    bool hlo = true, dma = true, units = true;
};
ReplayTracks installReplayTracks(TimelineView& view, const ReplayDocumentPtr& doc,
                                 ReplayTrackSelection which = {});

}  // namespace stallscope
