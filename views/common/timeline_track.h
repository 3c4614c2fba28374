#pragma once

#include <QColor>
#include <QList>
#include <QPair>
#include <QRect>
#include <QString>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

class QPainter;

namespace stallscope {

// The generic contract between TimelineView and what it draws. A timeline shows tracks stacked
// vertically over one shared time axis; the view owns zoom, pan, selection, hover, the axis, the
// minimap and the legend, and tracks own their data and painting. Time is a double in the
// profile's own unit (cycles for replay profiles, ns for traces).
//
// Drawing happens in two steps so big profiles stay smooth:
//   1. prepare(): runs on a worker thread (and must therefore only read immutable data) and returns
//      a draw-ready TrackFrame for a time window at a resolution: items narrower than
//      kFoldPixels are folded into counted items, so a frame holds O(pixels) items at any zoom.
//   2. paint(): runs on the GUI thread with the latest frame and maps its items (kept in time
//      units, not pixels) through the current TimeMapping; a frame prepared for a nearby window
//      stays correct while a fresher one is computed.

// Items narrower than this fold into one counted item.
constexpr double kFoldPixels = 3.0;

struct TimeRange {
    double start = 0, end = 0;
    double length() const { return end - start; }
    bool contains(double t) const { return t >= start && t <= end; }
    bool operator==(const TimeRange&) const = default;
};

// Linear map between time and viewport x over the data area [left, left + width).
struct TimeMapping {
    TimeRange window;
    double left = 0;
    double width = 1;
    double pixelsPerUnit() const { return width / std::max(window.length(), 1e-12); }
    double unitsPerPixel() const { return window.length() / std::max(width, 1e-12); }
    double x(double t) const { return left + (t - window.start) * pixelsPerUnit(); }
    double time(double x) const { return window.start + (x - left) * unitsPerPixel(); }
};

// One thing a track drew, as hit-testing and selection see it.
struct TimelineItem {
    int64_t id = -1;  // track-defined (e.g. a DMA index); -1 for a folded group
    double start = 0, end = 0;
    int64_t count = 1;  // > 1 for a folded group
    int row = 0;        // track-defined sub-row
    bool operator==(const TimelineItem&) const = default;
};

struct LegendEntry {
    QString label;
    QColor color;
    enum class Style { Box, Hatched, Line, Dashed } style = Style::Box;
};

// Field/value pairs for a details panel.
using DetailFields = QList<QPair<QString, QString>>;

// Draw-ready data of one track for a window at a resolution; tracks subclass it.
struct TrackFrame {
    virtual ~TrackFrame() = default;
    TimeRange window;          // what it covers
    double unitsPerPixel = 1;  // resolution it was folded at
    // Drawn before the track's data was read (a device's busy intervals at 10^8 slices take
    // seconds): the view prepares it again shortly rather than wait for it with every track.
    bool partial = false;
};

class TimelineTrack {
  public:
    virtual ~TimelineTrack() = default;

    virtual QString title() const = 0;
    // Pixel height of the track (fixed for a given data set).
    virtual int height() const = 0;

    // Thread-safe (called on workers): items overlapping `window`, folded at `unitsPerPixel`.
    virtual std::shared_ptr<const TrackFrame> prepare(TimeRange window,
                                                      double unitsPerPixel) const = 0;
    // GUI thread: draws `frame` (may be null while none is ready) into `rect` (the track's area;
    // rect.left() == mapping.left). `selected` is the view's selection when it belongs here.
    virtual void paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                       const TrackFrame* frame,
                       const std::optional<TimelineItem>& selected) const = 0;

    // The item under `pos` (viewport coordinates inside `rect`), if any.
    virtual std::optional<TimelineItem> hitTest(const QPoint& pos, const QRect& rect,
                                                const TimeMapping& mapping,
                                                const TrackFrame* frame) const = 0;
    virtual QString toolTip(const TimelineItem& item) const = 0;
    virtual DetailFields details(const TimelineItem& item) const = 0;
    virtual QList<LegendEntry> legend() const { return {}; }
    // A header groups the tracks after it (e.g. a process above its threads): the view draws
    // it as a band across the gutter and data area with its title in bold.
    virtual bool isHeader() const { return false; }
    // Indent of the title in the gutter (tracks under a header), in pixels.
    virtual int titleIndent() const { return 0; }
    // Full extent of the track's data.
    virtual TimeRange extent() const = 0;
};

// Something drawn over all tracks (dependency arrows, flows, ghosts); gets each track's rect.
class TimelineOverlay {
  public:
    virtual ~TimelineOverlay() = default;
    // trackRect(track) is the track's rect in viewport coordinates, or an empty rect when the
    // track is not shown.
    virtual void paint(QPainter& painter, const QRect& dataArea, const TimeMapping& mapping,
                       const std::function<QRect(const TimelineTrack*)>& trackRect) const = 0;
};

}  // namespace stallscope
