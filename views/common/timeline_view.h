#pragma once

#include <QAbstractScrollArea>
#include <QImage>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "views/common/async_job.h"
#include "views/common/timeline_track.h"

namespace stallscope {

// How times print on the axis and in readouts: a primary label (e.g. cycles) and an optional
// secondary one (e.g. µs derived from the clock).
struct TimeFormat {
    QString unit = QStringLiteral("ns");
    std::function<QString(double)> primary;    // a time
    std::function<QString(double)> secondary;  // the same time in a second unit, may be empty
};

// A generic custom-painted timeline: tracks stacked over one shared time axis, with a minimap,
// a legend, zoom (wheel around the cursor, W/S), pan (drag, A/D, scrollbar, minimap), Home to fit
// all, F to fit the selection or measurement, Shift/right-drag measures a range over the tracks
// dragged across (an area), click selection with hit-testing and hover tooltips. Track data is
// prepared on worker threads for about three viewport widths and repainted from the latest frames
// (see timeline_track.h).
class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
  public:
    static constexpr int kGutterWidth = 200;
    static constexpr int kMinimapHeight = 30;
    static constexpr int kAxisHeight = 34;
    static constexpr int kLegendHeight = 24;

    struct Selection {
        const TimelineTrack* track = nullptr;
        TimelineItem item;
    };
    // Where everything sits for a viewport size.
    struct Layout {
        QSize size;
        QRect minimap, axis, tracks, legend, dataArea;  // dataArea: tracks minus the gutter
    };

    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    void addTrack(std::shared_ptr<TimelineTrack> track);
    // Replaces every track at once: one frame request for all of them (adding a hundred
    // tracks one by one prepared the first ones a hundred times).
    void setTracks(std::vector<std::shared_ptr<TimelineTrack>> tracks);
    void clearTracks();
    const std::vector<std::shared_ptr<TimelineTrack>>& tracks() const { return tracks_; }
    void addOverlay(std::shared_ptr<TimelineOverlay> overlay);
    void removeOverlay(const TimelineOverlay* overlay);
    void setTimeFormat(TimeFormat format);
    const TimeFormat& timeFormat() const { return format_; }
    // Draws the minimap background (e.g. a density) into a rect spanning the full extent.
    void setOverviewPainter(std::function<void(QPainter&, const QRect&, TimeRange)> painter);

    // Full extent: union of the tracks' extents unless set explicitly.
    TimeRange extent() const;
    void setExtent(std::optional<TimeRange> extent);
    TimeRange window() const { return window_; }
    void setWindow(TimeRange window);
    void fitAll();
    // Zooms so `range` fills the middle of the view with `margin` (fraction of the range) around.
    void fitRange(TimeRange range, double margin = 0.1);
    void zoomBy(double factor, double anchorTime);
    void panByPixels(double dx);
    // Scrolls vertically so the track (and a y offset inside it) is shown.
    void ensureTrackVisible(const TimelineTrack* track, int yInTrack = 0);

    // Selection (emits selectionChanged when it changes).
    const std::optional<Selection>& selection() const { return selection_; }
    void select(const TimelineTrack* track, const std::optional<TimelineItem>& item);
    void clearSelection() { select(nullptr, std::nullopt); }
    std::optional<TimeRange> measurement() const { return measurement_; }
    void setMeasurement(std::optional<TimeRange> range);
    // The tracks a measuring drag went across (an area: the measured range on those tracks), in
    // display order; empty without a measurement. Cleared with it and when tracks change.
    const std::vector<const TimelineTrack*>& measuredTracks() const { return measuredTracks_; }
    void setArea(TimeRange range, std::vector<const TimelineTrack*> tracks);
    std::optional<double> cursorTime() const { return cursor_; }
    void setCursorTime(std::optional<double> time);

    // Data preparation: asynchronous (workers) by default; synchronous for headless rendering and
    // tests. prepareNow() computes the frames for the current window at `size` on this thread.
    void setAsynchronous(bool on) { asynchronous_ = on; }
    void prepareNow(QSize size);
    bool framesPending() const { return frameJob_.isBusy(); }
    // Draws everything for a viewport of `size` (the paint event and exports use the same code).
    void paintContent(QPainter& painter, QSize size) const;
    QImage renderImage(QSize size);
    // `size`, made no taller than the minimap, axis, every track and the legend need: exported
    // images of a few tracks carry no empty band.
    QSize fittedSize(QSize size) const;
    Layout layoutFor(QSize size) const;
    TimeMapping mappingFor(QSize size) const;
    // W/A/S/D zoom and pan, F fits the selection, Home fits all, Esc clears: what the keys do,
    // for views that route them here from anywhere inside (false: not a navigation key).
    bool navigateByKey(int key);
    // The axis ticks in `mapping`'s window and their labels: absolute times, or, where those
    // would repeat (zoomed in far from 0: "24.75 ms" thrice), the first absolute and the rest
    // as offsets from it ("+1.00 µs").
    std::vector<std::pair<double, QString>> axisTicks(const TimeMapping& mapping) const;
    // Viewport rect of a track for `size` (empty when scrolled away or unknown).
    QRect trackRect(const TimelineTrack* track, QSize size) const;
    QRect trackRect(const TimelineTrack* track) const {
        return trackRect(track, viewport()->size());
    }
    // The track and item at a viewport position.
    std::optional<Selection> itemAt(const QPoint& pos) const;
    // Text describing a measured range (Δ in the primary and secondary units).
    QString measurementText(TimeRange range) const;

  signals:
    void windowChanged(stallscope::TimeRange window);
    void selectionChanged();
    void cursorMoved(double time);
    void measurementChanged();
    // A measuring drag ended over a range and some tracks (measurement() and measuredTracks()).
    void areaSelected();
    void framesReady();

  protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool viewportEvent(QEvent* event) override;

  private:
    void addTrackQuietly(std::shared_ptr<TimelineTrack> track);  // no frame request
    enum class Drag { None, Pan, Measure, Minimap };
    int totalTrackHeight() const;
    void updateScrollBars();
    void requestFrames();
    bool framesCover(TimeRange window, double unitsPerPixel) const;
    void paintMinimap(QPainter& painter, const Layout& layout) const;
    void paintAxis(QPainter& painter, const Layout& layout, const TimeMapping& mapping) const;
    void paintTracks(QPainter& painter, const Layout& layout, const TimeMapping& mapping) const;
    void paintLegend(QPainter& painter, const Layout& layout) const;
    static void paintTitle(QPainter& painter, const QString& title, const QRect& rect);
    void moveWindowToMinimapX(double x);
    // Tracks whose rows overlap content heights [top, bottom] (0: the first track's top).
    std::vector<const TimelineTrack*> tracksBetween(int top, int bottom) const;

    std::vector<std::shared_ptr<TimelineTrack>> tracks_;
    std::vector<std::shared_ptr<const TrackFrame>> frames_;
    std::vector<std::shared_ptr<TimelineOverlay>> overlays_;
    std::function<void(QPainter&, const QRect&, TimeRange)> overviewPainter_;
    TimeFormat format_;
    std::optional<TimeRange> explicitExtent_;
    TimeRange window_{0, 1};
    int verticalOffset_ = 0;
    std::optional<Selection> selection_;
    std::optional<TimeRange> measurement_;
    std::vector<const TimelineTrack*> measuredTracks_;
    std::optional<double> cursor_;
    bool asynchronous_ = true;
    static constexpr int kPartialRetryMs = 150;  // then a partial frame is prepared again
    async::JobSlot frameJob_{this};
    bool updatingScrollBars_ = false;

    Drag drag_ = Drag::None;
    QPoint pressPos_;
    int pressContentY_ = 0;  // the press's height in the track stack
    TimeRange pressWindow_;
    bool moved_ = false;
};

}  // namespace stallscope
