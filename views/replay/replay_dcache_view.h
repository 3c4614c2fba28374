#pragma once

#include <QImage>
#include <QWidget>
#include <optional>

#include "views/common/timeline_track.h"
#include "views/replay/replay_document.h"

namespace stallscope {

// Data-cache occupancy (SnR Fig. 8): a heatmap with x = time, y = bucket of 256 pages, colour =
// used pages (with its colour scale), and above it the unused % and largest-contiguous-unused %
// over time with their medians. The time axis follows a timeline (setWindow/setCursorTime and
// windowChanged/cursorMoved), wheel zooms around the cursor, drag pans, W/S/A/D and Home work as
// in the timeline, Shift-drag selects a range whose statistics replace the whole-trace ones,
// and hovering tells bucket, time and used pages. Wasted pages (written, never read) can be
// overlaid.
class DcacheView : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kLeft = 150;
    static constexpr int kRight = 90;  // colour scale
    static constexpr int kStatsHeight = 120;
    static constexpr int kAxisHeight = 34;
    static constexpr int kHeaderHeight = 26;

    explicit DcacheView(QWidget* parent = nullptr);
    void setDocument(ReplayDocumentPtr doc);
    const ReplayDocumentPtr& document() const { return doc_; }

    TimeRange window() const { return window_; }
    void setWindow(TimeRange window);
    void setCursorTime(std::optional<double> time);
    std::optional<TimeRange> selection() const { return selection_; }
    void setSelection(std::optional<TimeRange> range);
    void setWastedOverlay(bool on);
    bool wastedOverlay() const { return wastedOverlay_; }
    // Compact form for a strip under a timeline: the plots span [left, width - right) so they
    // line up with the timeline's data area, the statistics chart is shorter and the colour
    // scale is left out (the full view keeps it).
    void setCompact(int left, int right);

    // Statistics of the selection (or the whole trace): medians over bins in range, weighted by
    // their overlap with it (the whole-trace ones are the analysis's exact time-weighted medians).
    struct Stats {
        double medianUnusedPct = 0, medianLargestFreePct = 0;
        double meanUnusedPct = 0;
        double wastedPages = 0;
        bool wholeTrace = true;
    };
    Stats stats() const;

    struct Layout {
        QRect header, stats, heatmap, axis, scale;
    };
    Layout layoutFor(QSize size) const;  // scale is empty in the compact form
    TimeMapping mappingFor(QSize size) const;
    // Heatmap cell under a point: bin and bucket.
    std::optional<std::pair<uint32_t, uint32_t>> cellAt(const QPoint& pos, QSize size) const;
    // Colour of a used-pages fraction (0..1) on the scale.
    static QColor colorFor(double fraction);
    // Where a used-pages fraction sits on the scale: a square root, so a bucket holding a few
    // pages stands out from an empty one (linear, 12 of 256 pages looked empty).
    static double scalePosition(double usedFraction);
    QString hoverText(const QPoint& pos, QSize size) const;

    void paintContent(QPainter& painter, QSize size) const;
    QImage renderImage(QSize size) const;
    // bin,start_cycle,end_cycle,bucket,used_pages,wasted_pages rows.
    QString heatmapCsv() const;

  signals:
    void windowChanged(stallscope::TimeRange window);
    void cursorMoved(double time);
    void selectionChanged();

  protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

  private:
    void rebuildImage();
    void paintStats(QPainter& painter, const Layout& layout, const TimeMapping& mapping) const;
    void paintHeatmap(QPainter& painter, const Layout& layout, const TimeMapping& mapping) const;
    void paintAxis(QPainter& painter, const Layout& layout, const TimeMapping& mapping) const;
    void paintScale(QPainter& painter, const Layout& layout) const;

    ReplayDocumentPtr doc_;
    QImage heat_;    // bins x buckets, one pixel per cell (bucket 0 at the bottom)
    QImage wasted_;  // same grid, translucent where pages were wasted
    TimeRange window_{0, 1};
    std::optional<double> cursor_;
    std::optional<TimeRange> selection_;
    int left_ = kLeft, right_ = kRight, statsHeight_ = kStatsHeight;
    bool compact_ = false;
    bool wastedOverlay_ = true;
    enum class Drag { None, Pan, Select } drag_ = Drag::None;
    QPoint pressPos_;
    TimeRange pressWindow_;
};

}  // namespace stallscope
