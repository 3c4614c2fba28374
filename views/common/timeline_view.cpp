#include "views/common/timeline_view.h"
#include "views/common/format.h"
#include "views/common/time_navigation.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>
#include <QtConcurrent>
#include <cmath>

namespace stallscope {
namespace {

constexpr int kScrollSteps = 10000;
constexpr double kMinWindow = 4;  // time units

QString defaultTime(double t) {
    return QString::number(t, 'g', 6);
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
    setTimeFormat({});
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    horizontalScrollBar()->setRange(0, 0);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        if (updatingScrollBars_) return;
        const TimeRange all = extent();
        const double start = all.start + all.length() * value / kScrollSteps;
        setWindow({start, start + window_.length()});
    });
    setMinimumSize(320, 200);
}

TimelineView::~TimelineView() = default;

void TimelineView::addTrackQuietly(std::shared_ptr<TimelineTrack> track) {
    const bool first = tracks_.empty() && !explicitExtent_;
    tracks_.push_back(std::move(track));
    frames_.push_back(nullptr);
    if (first) window_ = extent();
}

void TimelineView::addTrack(std::shared_ptr<TimelineTrack> track) {
    addTrackQuietly(std::move(track));
    updateScrollBars();
    requestFrames();
    viewport()->update();
}

void TimelineView::setTracks(std::vector<std::shared_ptr<TimelineTrack>> tracks) {
    tracks_.clear();
    measuredTracks_.clear();  // they point into the old tracks
    frames_.clear();
    selection_.reset();
    frameJob_.supersede();
    for (auto& track : tracks) addTrackQuietly(std::move(track));
    updateScrollBars();
    requestFrames();
    viewport()->update();
}

void TimelineView::clearTracks() {
    tracks_.clear();
    measuredTracks_.clear();  // they point into the old tracks
    frames_.clear();
    selection_.reset();
    frameJob_.supersede();
    updateScrollBars();
    viewport()->update();
}

void TimelineView::addOverlay(std::shared_ptr<TimelineOverlay> overlay) {
    overlays_.push_back(std::move(overlay));
    viewport()->update();
}

void TimelineView::removeOverlay(const TimelineOverlay* overlay) {
    std::erase_if(overlays_, [overlay](const auto& o) { return o.get() == overlay; });
    viewport()->update();
}

void TimelineView::setTimeFormat(TimeFormat format) {
    if (!format.primary) format.primary = defaultTime;
    // Times before zero (a comparison shifted to align an op) get a true minus sign.
    const auto withMinus = [](std::function<QString(double)> f) -> std::function<QString(double)> {
        if (!f) return f;
        return [f = std::move(f)](double t) {
            QString text = f(t);
            if (text.startsWith(QLatin1Char('-'))) text[0] = QChar(0x2212);
            return text;
        };
    };
    format.primary = withMinus(std::move(format.primary));
    format.secondary = withMinus(std::move(format.secondary));
    format_ = std::move(format);
    viewport()->update();
}

void TimelineView::setOverviewPainter(
    std::function<void(QPainter&, const QRect&, TimeRange)> painter) {
    overviewPainter_ = std::move(painter);
    viewport()->update();
}

TimeRange TimelineView::extent() const {
    if (explicitExtent_) return *explicitExtent_;
    std::optional<TimeRange> all;
    for (const auto& track : tracks_) {
        const TimeRange e = track->extent();
        all = all ? TimeRange{std::min(all->start, e.start), std::max(all->end, e.end)} : e;
    }
    if (!all || all->length() <= 0) return {0, 1};
    return *all;
}

void TimelineView::setExtent(std::optional<TimeRange> extent) {
    explicitExtent_ = extent;
    if (extent && tracks_.empty()) window_ = *extent;
    updateScrollBars();
}

void TimelineView::setWindow(TimeRange window) {
    const TimeRange all = extent();
    double length = std::clamp(window.length(), kMinWindow, all.length() * 1.2);
    if (!std::isfinite(length) || length <= 0) length = all.length();
    double start = window.start;
    // Keep at least part of the data on screen.
    start = std::clamp(start, all.start - length * 0.1, all.end - length * 0.9);
    const TimeRange next{start, start + length};
    if (next == window_) return;
    window_ = next;
    updateScrollBars();
    requestFrames();
    viewport()->update();
    emit windowChanged(window_);
}

void TimelineView::fitAll() {
    const TimeRange all = extent();
    const double pad = all.length() * 0.01;
    setWindow({all.start - pad, all.end + pad});
}

void TimelineView::fitRange(TimeRange range, double margin) {
    const double length = std::max(range.length(), kMinWindow);
    const double pad = length * margin;
    setWindow({range.start - pad, range.start + length + pad});
}

void TimelineView::zoomBy(double factor, double anchorTime) {
    setWindow(TimeNavigation::zoomed(window_, factor, anchorTime));
}

void TimelineView::panByPixels(double dx) {
    const TimeMapping mapping = mappingFor(viewport()->size());
    const double shift = dx * mapping.unitsPerPixel();
    setWindow({window_.start + shift, window_.end + shift});
}

void TimelineView::ensureTrackVisible(const TimelineTrack* track, int yInTrack) {
    const Layout layout = layoutFor(viewport()->size());
    int y = 0;
    for (const auto& t : tracks_) {
        if (t.get() == track) {
            const int target = y + yInTrack;
            if (target < verticalOffset_ || target + 20 > verticalOffset_ + layout.tracks.height())
                verticalScrollBar()->setValue(std::max(0, target - layout.tracks.height() / 3));
            return;
        }
        y += t->height();
    }
}

void TimelineView::select(const TimelineTrack* track, const std::optional<TimelineItem>& item) {
    std::optional<Selection> next;
    if (track && item) next = Selection{track, *item};
    const bool same =
        (next.has_value() == selection_.has_value()) &&
        (!next || (next->track == selection_->track && next->item == selection_->item));
    if (same) return;
    selection_ = next;
    viewport()->update();
    emit selectionChanged();
}

void TimelineView::setMeasurement(std::optional<TimeRange> range) {
    measurement_ = range;
    if (!range) measuredTracks_.clear();
    viewport()->update();
    emit measurementChanged();
}

void TimelineView::setArea(TimeRange range, std::vector<const TimelineTrack*> tracks) {
    measuredTracks_ = std::move(tracks);
    setMeasurement(range);
    emit areaSelected();
}

std::vector<const TimelineTrack*> TimelineView::tracksBetween(int top, int bottom) const {
    std::vector<const TimelineTrack*> out;
    int y = 0;
    for (const auto& track : tracks_) {
        const int h = track->height();
        if (y + h > top && y <= bottom) out.push_back(track.get());
        y += h;
    }
    return out;
}

void TimelineView::setCursorTime(std::optional<double> time) {
    if (cursor_ == time) return;
    cursor_ = time;
    viewport()->update();
}

// ---- layout ---------------------------------------------------------------------------------

TimelineView::Layout TimelineView::layoutFor(QSize size) const {
    Layout l;
    l.size = size;
    l.minimap = QRect(0, 0, size.width(), kMinimapHeight);
    l.axis = QRect(0, kMinimapHeight, size.width(), kAxisHeight);
    const int tracksTop = kMinimapHeight + kAxisHeight;
    const int tracksHeight = std::max(0, size.height() - tracksTop - kLegendHeight);
    l.tracks = QRect(0, tracksTop, size.width(), tracksHeight);
    l.legend = QRect(0, tracksTop + tracksHeight, size.width(), kLegendHeight);
    l.dataArea =
        QRect(kGutterWidth, tracksTop, std::max(1, size.width() - kGutterWidth - 8), tracksHeight);
    return l;
}

TimeMapping TimelineView::mappingFor(QSize size) const {
    const Layout l = layoutFor(size);
    return TimeMapping{window_, static_cast<double>(l.dataArea.left()),
                       static_cast<double>(l.dataArea.width())};
}

int TimelineView::totalTrackHeight() const {
    int h = 0;
    for (const auto& t : tracks_) h += t->height();
    return h;
}

QRect TimelineView::trackRect(const TimelineTrack* track, QSize size) const {
    const Layout layout = layoutFor(size);
    int y = layout.tracks.top() - verticalOffset_;
    for (const auto& t : tracks_) {
        if (t.get() == track) {
            const QRect r(layout.dataArea.left(), y, layout.dataArea.width(), t->height());
            return r.intersects(layout.tracks) ? r : QRect();
        }
        y += t->height();
    }
    return {};
}

std::optional<TimelineView::Selection> TimelineView::itemAt(const QPoint& pos) const {
    const QSize size = viewport()->size();
    const Layout layout = layoutFor(size);
    if (!layout.dataArea.contains(pos)) return std::nullopt;
    const TimeMapping mapping = mappingFor(size);
    int y = layout.tracks.top() - verticalOffset_;
    for (size_t i = 0; i < tracks_.size(); ++i) {
        const int h = tracks_[i]->height();
        const QRect rect(layout.dataArea.left(), y, layout.dataArea.width(), h);
        if (rect.contains(pos)) {
            if (auto item = tracks_[i]->hitTest(pos, rect, mapping, frames_[i].get()))
                return Selection{tracks_[i].get(), *item};
            return std::nullopt;
        }
        y += h;
    }
    return std::nullopt;
}

void TimelineView::updateScrollBars() {
    updatingScrollBars_ = true;
    const TimeRange all = extent();
    const double visible = std::clamp(window_.length() / all.length(), 0.0, 1.0);
    const int page = static_cast<int>(visible * kScrollSteps);
    horizontalScrollBar()->setPageStep(std::max(1, page));
    horizontalScrollBar()->setSingleStep(std::max(1, page / 10));
    horizontalScrollBar()->setRange(0, std::max(0, kScrollSteps - page));
    horizontalScrollBar()->setValue(
        static_cast<int>((window_.start - all.start) / all.length() * kScrollSteps));
    const Layout layout = layoutFor(viewport()->size());
    const int overflow = std::max(0, totalTrackHeight() - layout.tracks.height());
    verticalScrollBar()->setRange(0, overflow);
    verticalScrollBar()->setPageStep(std::max(1, layout.tracks.height()));
    verticalScrollBar()->setSingleStep(20);
    verticalOffset_ = std::min(verticalOffset_, overflow);
    updatingScrollBars_ = false;
}

// ---- frames ---------------------------------------------------------------------------------

bool TimelineView::framesCover(TimeRange window, double unitsPerPixel) const {
    for (const auto& frame : frames_) {
        if (!frame || frame->partial) return false;
        if (frame->window.start > window.start || frame->window.end < window.end) return false;
        const double ratio = frame->unitsPerPixel / unitsPerPixel;
        if (ratio > 1.5 || ratio < 0.5) return false;
    }
    return true;
}

void TimelineView::requestFrames() {
    if (tracks_.empty()) return;
    const TimeMapping mapping = mappingFor(viewport()->size());
    if (framesCover(window_, mapping.unitsPerPixel())) return;
    if (!asynchronous_) {
        viewport()->update();  // the paint event prepares synchronously
        return;
    }
    // About three viewport widths so panning reuses the frame.
    const TimeRange wide{window_.start - window_.length(), window_.end + window_.length()};
    const double upp = mapping.unitsPerPixel();
    using Frames = std::vector<std::shared_ptr<const TrackFrame>>;
    // Tracks are shared with the worker; a newer request supersedes this one.
    frameJob_.start(
        [tracks = tracks_, wide, upp] {
            Frames frames;
            frames.reserve(tracks.size());
            for (const auto& track : tracks) frames.push_back(track->prepare(wide, upp));
            return frames;
        },
        [this](Frames frames) {
            if (frames.size() != frames_.size()) return;
            frames_ = std::move(frames);
            viewport()->update();
            emit framesReady();
            // A track still reading its data: ask again until it has drawn it all.
            if (std::any_of(frames_.begin(), frames_.end(),
                            [](const auto& f) { return f && f->partial; }))
                QTimer::singleShot(kPartialRetryMs, this, &TimelineView::requestFrames);
        });
}

void TimelineView::prepareNow(QSize size) {
    const TimeMapping mapping = mappingFor(size);
    const TimeRange wide{window_.start - window_.length(), window_.end + window_.length()};
    frameJob_.supersede();
    for (size_t i = 0; i < tracks_.size(); ++i)
        frames_[i] = tracks_[i]->prepare(wide, mapping.unitsPerPixel());
}

QSize TimelineView::fittedSize(QSize size) const {
    const int needed = kMinimapHeight + kAxisHeight + totalTrackHeight() + kLegendHeight + 12;
    return QSize(size.width(), std::min(size.height(), std::max(needed, 160)));
}

QImage TimelineView::renderImage(QSize size) {
    prepareNow(size);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Base));
    QPainter painter(&image);
    paintContent(painter, size);
    return image;
}

// ---- painting -------------------------------------------------------------------------------

void TimelineView::paintEvent(QPaintEvent*) {
    if (!asynchronous_ && !framesCover(window_, mappingFor(viewport()->size()).unitsPerPixel()))
        prepareNow(viewport()->size());
    QPainter painter(viewport());
    paintContent(painter, viewport()->size());
}

void TimelineView::paintContent(QPainter& painter, QSize size) const {
    const Layout layout = layoutFor(size);
    const TimeMapping mapping = mappingFor(size);
    painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Base));
    // Grid under the tracks, so bars stay solid.
    const double step = format::nearestWholeStep(mapping.unitsPerPixel() * 110);
    painter.setPen(QPen(palette().color(QPalette::Midlight), 1, Qt::DotLine));
    for (double t = std::ceil(window_.start / step) * step; t <= window_.end; t += step) {
        const int x = static_cast<int>(std::lround(mapping.x(t)));
        if (x >= layout.dataArea.left() && x <= layout.dataArea.right())
            painter.drawLine(x, layout.tracks.top(), x, layout.tracks.bottom());
    }
    paintTracks(painter, layout, mapping);
    paintAxis(painter, layout, mapping);
    paintMinimap(painter, layout);
    paintLegend(painter, layout);
}

void TimelineView::paintMinimap(QPainter& painter, const Layout& layout) const {
    const QRect r = layout.minimap.adjusted(kGutterWidth, 3, -8, -3);
    painter.fillRect(layout.minimap, palette().color(QPalette::Window));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(6, layout.minimap.top(), kGutterWidth - 12, layout.minimap.height()),
                     Qt::AlignVCenter | Qt::AlignLeft, tr("Overview"));
    painter.fillRect(r, palette().color(QPalette::Base));
    const TimeRange all = extent();
    if (overviewPainter_) {
        painter.save();
        painter.setClipRect(r);
        overviewPainter_(painter, r, all);
        painter.restore();
    }
    const TimeMapping full{all, static_cast<double>(r.left()), static_cast<double>(r.width())};
    const double x0 = std::max<double>(r.left(), full.x(window_.start));
    const double x1 = std::min<double>(r.right(), full.x(window_.end));
    const QRectF visible(x0, r.top(), std::max(2.0, x1 - x0), r.height());
    painter.fillRect(visible, QColor(30, 110, 220, 50));
    painter.setPen(QPen(QColor(30, 110, 220), 1.5));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(visible);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(r.adjusted(0, 0, -1, -1));
}

std::vector<std::pair<double, QString>> TimelineView::axisTicks(const TimeMapping& mapping) const {
    std::vector<std::pair<double, QString>> ticks;
    const double step = format::nearestWholeStep(mapping.unitsPerPixel() * 110);
    const double first = std::ceil(mapping.window.start / step) * step;
    bool repeats = false;
    for (double t = first; t <= mapping.window.end; t += step) {
        ticks.emplace_back(t, format_.primary(t));
        repeats =
            repeats || (ticks.size() > 1 && ticks.back().second == ticks[ticks.size() - 2].second);
    }
    if (repeats)
        for (size_t i = 1; i < ticks.size(); ++i)
            ticks[i].second = "+" + format_.primary(ticks[i].first - ticks[0].first);
    return ticks;
}

void TimelineView::paintAxis(QPainter& painter, const Layout& layout,
                             const TimeMapping& mapping) const {
    const QRect r = layout.axis;
    painter.fillRect(r, palette().color(QPalette::Window));
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawLine(r.bottomLeft(), r.bottomRight());
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(6, r.top() + 2, kGutterWidth - 12, r.height() / 2),
                     Qt::AlignVCenter | Qt::AlignLeft,
                     format_.unit.isEmpty() ? tr("time") : format_.unit);
    for (const auto& [t, label] : axisTicks(mapping)) {
        const int x = static_cast<int>(std::lround(mapping.x(t)));
        if (x < layout.dataArea.left() || x > layout.dataArea.right()) continue;
        painter.setPen(palette().color(QPalette::Mid));
        painter.drawLine(x, r.bottom() - 6, x, r.bottom());
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QRect(x + 3, r.top() + 1, 110, r.height() / 2 - 1),
                         Qt::AlignLeft | Qt::AlignVCenter, label);
        if (format_.secondary) {
            painter.setPen(palette().color(QPalette::PlaceholderText));
            painter.drawText(QRect(x + 3, r.top() + r.height() / 2 - 2, 110, r.height() / 2 - 4),
                             Qt::AlignLeft | Qt::AlignVCenter, format_.secondary(t));
        }
    }
    painter.setFont(QFont());
    painter.setFont(small);
    if (cursor_ && window_.contains(*cursor_)) {
        const double x = mapping.x(*cursor_);
        painter.setPen(QPen(QColor(200, 40, 40), 1));
        painter.drawLine(QPointF(x, r.top()), QPointF(x, layout.tracks.bottom()));
    }
    if (measurement_) {
        const double x0 = mapping.x(measurement_->start), x1 = mapping.x(measurement_->end);
        const QRectF band(x0, r.top(), x1 - x0, layout.tracks.bottom() - r.top());
        painter.fillRect(band, QColor(255, 170, 0, 40));
        painter.setPen(QPen(QColor(220, 130, 0), 1));
        painter.drawLine(QPointF(x0, r.top()), QPointF(x0, layout.tracks.bottom()));
        painter.drawLine(QPointF(x1, r.top()), QPointF(x1, layout.tracks.bottom()));
        // The area: the measured range on the tracks dragged across, outlined.
        painter.save();
        painter.setClipRect(layout.tracks);
        for (const TimelineTrack* track : measuredTracks_) {
            const QRect rows = trackRect(track, layout.size);
            if (rows.isEmpty()) continue;
            const QRectF area(x0, rows.top(), x1 - x0, rows.height());
            painter.fillRect(area, QColor(255, 150, 0, 45));
            painter.setPen(QPen(QColor(220, 120, 0), 1, Qt::DashLine));
            painter.drawLine(area.topLeft(), area.topRight());
            painter.drawLine(area.bottomLeft(), area.bottomRight());
        }
        painter.restore();
        const QString text = measurementText(*measurement_);
        const QFontMetrics metrics(painter.font());
        const int w = metrics.horizontalAdvance(text) + 12;
        const double cx = std::clamp((x0 + x1) / 2 - w / 2.0, double(layout.dataArea.left()),
                                     double(layout.dataArea.right() - w));
        const QRectF box(cx, layout.tracks.top() + 4, w, metrics.height() + 6);
        painter.setBrush(QColor(255, 244, 214));
        painter.drawRoundedRect(box, 3, 3);
        painter.setPen(Qt::black);
        painter.drawText(box, Qt::AlignCenter, text);
    }
    painter.setFont(QFont());
}

void TimelineView::paintTracks(QPainter& painter, const Layout& layout,
                               const TimeMapping& mapping) const {
    painter.save();
    painter.setClipRect(layout.tracks);
    int y = layout.tracks.top() - verticalOffset_;
    const QColor gutter = palette().color(QPalette::AlternateBase);
    const QColor text = palette().color(QPalette::Text);
    const QColor separator = palette().color(QPalette::Midlight);
    for (size_t i = 0; i < tracks_.size(); ++i) {
        const TimelineTrack& track = *tracks_[i];
        const int h = track.height();
        const QRect full(0, y, layout.size.width(), h);
        if (full.bottom() >= layout.tracks.top() && full.top() <= layout.tracks.bottom()) {
            const QRect rect(layout.dataArea.left(), y, layout.dataArea.width(), h);
            if (track.isHeader()) {
                painter.fillRect(full, palette().color(QPalette::Button));
                QFont bold = painter.font();
                bold.setBold(true);
                painter.save();
                painter.setFont(bold);
                painter.setPen(text);
                const int indent = track.titleIndent();  // nested headers (a host's planes)
                painter.drawText(
                    QRect(6 + indent, y, layout.size.width() - 12 - indent, h),
                    Qt::AlignLeft | Qt::AlignVCenter,
                    painter.fontMetrics().elidedText(track.title(), Qt::ElideMiddle,
                                                     layout.size.width() - 12 - indent));
                painter.restore();
            } else {
                painter.fillRect(QRect(0, y, kGutterWidth - 4, h), gutter);
                painter.setPen(text);
                paintTitle(
                    painter, track.title(),
                    QRect(6 + track.titleIndent(), y, kGutterWidth - 14 - track.titleIndent(), h));
            }
            painter.save();
            painter.setClipRect(rect.intersected(layout.tracks));
            std::optional<TimelineItem> selected;
            if (selection_ && selection_->track == &track) selected = selection_->item;
            track.paint(painter, rect, mapping, frames_[i].get(), selected);
            painter.restore();
            painter.setPen(separator);
            painter.drawLine(0, full.bottom(), layout.size.width(), full.bottom());
        }
        y += h;
    }
    painter.setClipRect(layout.dataArea.adjusted(0, 0, 1, 0));
    const auto rectOf = [this, &layout](const TimelineTrack* track) {
        return trackRect(track, layout.size);
    };
    for (const auto& overlay : overlays_) overlay->paint(painter, layout.dataArea, mapping, rectOf);
    painter.restore();
}

// A track title in the gutter: one line, or two when it does not fit and the track is tall
// enough (long thread and counter names), elided in the middle beyond that.
void TimelineView::paintTitle(QPainter& painter, const QString& title, const QRect& rect) {
    const QFontMetrics metrics = painter.fontMetrics();
    const int lineHeight = metrics.lineSpacing();
    if (metrics.horizontalAdvance(title) <= rect.width() || rect.height() < 2 * lineHeight + 6) {
        painter.drawText(QRect(rect.left(), rect.top(), rect.width(), std::min(rect.height(), 22)),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         metrics.elidedText(title, Qt::ElideMiddle, rect.width()));
        return;
    }
    // Break at the last separator that fits on the first line (or anywhere, if none does).
    int fit = 0;
    while (fit < title.size() && metrics.horizontalAdvance(title.left(fit + 1)) <= rect.width())
        ++fit;
    int breakAt = fit;
    for (int i = fit; i > 0; --i) {
        if (QStringLiteral(" /_:.-").contains(title[i - 1]) ||
            (i < title.size() && QStringLiteral(" (").contains(title[i]))) {
            breakAt = i;
            break;
        }
    }
    const QString first = title.left(breakAt);
    const QString second =
        metrics.elidedText(title.mid(breakAt).trimmed(), Qt::ElideMiddle, rect.width());
    painter.drawText(QRect(rect.left(), rect.top() + 3, rect.width(), lineHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, first);
    painter.drawText(QRect(rect.left(), rect.top() + 3 + lineHeight, rect.width(), lineHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, second);
}

void TimelineView::paintLegend(QPainter& painter, const Layout& layout) const {
    painter.fillRect(layout.legend, palette().color(QPalette::Window));
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawLine(layout.legend.topLeft(), layout.legend.topRight());
    QList<LegendEntry> entries;
    for (const auto& track : tracks_)
        for (const LegendEntry& e : track->legend()) {
            const bool seen = std::any_of(entries.begin(), entries.end(),
                                          [&](const LegendEntry& o) { return o.label == e.label; });
            if (!seen) entries.append(e);
        }
    int x = 8;
    const int cy = layout.legend.center().y();
    const QFontMetrics metrics(painter.font());
    for (const LegendEntry& e : entries) {
        const QRect swatch(x, cy - 5, 18, 10);
        switch (e.style) {
            case LegendEntry::Style::Box:
                painter.fillRect(swatch, e.color);
                break;
            case LegendEntry::Style::Hatched:
                painter.fillRect(swatch, e.color.lighter(150));
                painter.fillRect(swatch, QBrush(e.color.darker(130), Qt::BDiagPattern));
                break;
            case LegendEntry::Style::Line:
            case LegendEntry::Style::Dashed:
                painter.setPen(
                    QPen(e.color, 2,
                         e.style == LegendEntry::Style::Line ? Qt::SolidLine : Qt::DashLine));
                painter.drawLine(swatch.left(), cy, swatch.right(), cy);
                break;
        }
        painter.setPen(palette().color(QPalette::Text));
        const int w = metrics.horizontalAdvance(e.label);
        painter.drawText(QRect(x + 22, layout.legend.top(), w + 4, layout.legend.height()),
                         Qt::AlignVCenter | Qt::AlignLeft, e.label);
        x += 22 + w + 16;
    }
}

QString TimelineView::measurementText(TimeRange range) const {
    const double delta = range.length();
    // An empty unit: the primary text carries its own ("1.50 ms").
    QString text = QStringLiteral("Δ %1 %2").arg(format_.primary(delta), format_.unit).trimmed();
    if (format_.secondary) text += QStringLiteral(" · Δ %1").arg(format_.secondary(delta));
    return text;
}

}  // namespace stallscope
