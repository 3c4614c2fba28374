// TimelineView's input: wheel zoom around the cursor, drag to pan, Shift/right-drag to measure
// (an area over the tracks dragged across), the minimap, hover tooltips and the keys.
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>

#include "views/common/time_navigation.h"
#include "views/common/timeline_view.h"

namespace stallscope {

// ---- interaction ----------------------------------------------------------------------------

void TimelineView::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
    requestFrames();
}

void TimelineView::scrollContentsBy(int, int) {
    verticalOffset_ = verticalScrollBar()->value();
    viewport()->update();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    const QSize size = viewport()->size();
    const Layout layout = layoutFor(size);
    const QPointF pos = event->position();
    if (pos.x() < kGutterWidth || (event->modifiers() & Qt::AltModifier)) {
        QAbstractScrollArea::wheelEvent(event);  // vertical scroll over the labels
        return;
    }
    const QPoint delta = event->angleDelta();
    if ((event->modifiers() & Qt::ShiftModifier) || std::abs(delta.x()) > std::abs(delta.y())) {
        const int d = delta.x() != 0 ? delta.x() : delta.y();
        panByPixels(-d / 120.0 * layout.dataArea.width() * 0.1);
    } else if (delta.y() != 0) {
        const double anchor = mappingFor(size).time(pos.x());
        zoomBy(TimeNavigation::wheelZoomFactor(delta.y()), anchor);
    }
    event->accept();
}

void TimelineView::moveWindowToMinimapX(double x) {
    const Layout layout = layoutFor(viewport()->size());
    const QRect r = layout.minimap.adjusted(kGutterWidth, 0, -8, 0);
    const TimeRange all = extent();
    const double t = all.start + (x - r.left()) / std::max(1, r.width()) * all.length();
    setWindow({t - window_.length() / 2, t + window_.length() / 2});
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
    pressPos_ = event->position().toPoint();
    pressWindow_ = window_;
    moved_ = false;
    const Layout layout = layoutFor(viewport()->size());
    if (layout.minimap.contains(pressPos_) && pressPos_.x() >= kGutterWidth) {
        drag_ = Drag::Minimap;
        moveWindowToMinimapX(pressPos_.x());
    } else if (event->button() == Qt::RightButton ||
               (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier))) {
        drag_ = Drag::Measure;
        const double t = mappingFor(viewport()->size()).time(pressPos_.x());
        pressContentY_ = pressPos_.y() - layout.tracks.top() + verticalOffset_;
        measuredTracks_ = tracksBetween(pressContentY_, pressContentY_);
        setMeasurement(TimeRange{t, t});
    } else if (event->button() == Qt::LeftButton) {
        drag_ = Drag::Pan;
        viewport()->setCursor(Qt::ClosedHandCursor);
    }
    event->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    const QSize size = viewport()->size();
    const TimeMapping mapping = mappingFor(size);
    if ((pos - pressPos_).manhattanLength() > 3) moved_ = true;
    switch (drag_) {
        case Drag::Pan: {
            const double shift = (pressPos_.x() - pos.x()) * mapping.unitsPerPixel();
            setWindow({pressWindow_.start + shift, pressWindow_.end + shift});
            break;
        }
        case Drag::Measure: {
            const TimeMapping m = mappingFor(size);
            const double a = m.time(pressPos_.x()), b = m.time(pos.x());
            const int y = pos.y() - layoutFor(size).tracks.top() + verticalOffset_;
            measuredTracks_ =
                tracksBetween(std::min(y, pressContentY_), std::max(y, pressContentY_));
            setMeasurement(TimeRange{std::min(a, b), std::max(a, b)});
            break;
        }
        case Drag::Minimap:
            moveWindowToMinimapX(pos.x());
            break;
        case Drag::None:
            break;
    }
    if (pos.x() >= kGutterWidth) {
        const double t = mapping.time(pos.x());
        setCursorTime(t);
        emit cursorMoved(t);
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
    const Drag drag = drag_;
    drag_ = Drag::None;
    viewport()->unsetCursor();
    if (drag == Drag::Pan && !moved_) {
        setMeasurement(std::nullopt);
        if (auto hit = itemAt(event->position().toPoint()))
            select(hit->track, hit->item);
        else
            clearSelection();
    } else if (drag == Drag::Measure && !moved_) {
        setMeasurement(std::nullopt);
    } else if (drag == Drag::Measure && measurement_ && measurement_->length() > 0) {
        emit areaSelected();
    }
    event->accept();
}

void TimelineView::leaveEvent(QEvent* event) {
    setCursorTime(std::nullopt);
    QAbstractScrollArea::leaveEvent(event);
}

bool TimelineView::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (auto hit = itemAt(help->pos())) {
            QToolTip::showText(help->globalPos(), hit->track->toolTip(hit->item), viewport());
        } else {
            const Layout layout = layoutFor(viewport()->size());
            if (layout.axis.contains(help->pos()) && help->pos().x() >= kGutterWidth) {
                const double t = mappingFor(viewport()->size()).time(help->pos().x());
                QString text = (format_.primary(t) + QLatin1Char(' ') + format_.unit).trimmed();
                if (format_.secondary) text += QStringLiteral(" · ") + format_.secondary(t);
                QToolTip::showText(help->globalPos(), text, viewport());
            } else {
                QToolTip::hideText();
            }
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

bool TimelineView::navigateByKey(int key) {
    const double center =
        cursor_ && window_.contains(*cursor_) ? *cursor_ : (window_.start + window_.end) / 2;
    // W/S/A/D as every time view has them; Home fits with this view's margins.
    if (key != Qt::Key_Home)
        if (const auto w = TimeNavigation::windowForKey(key, window_, center, extent())) {
            setWindow(*w);
            return true;
        }
    switch (key) {
        case Qt::Key_Home:
            fitAll();
            return true;
        case Qt::Key_F:
            if (measurement_ && measurement_->length() > 0)
                fitRange(*measurement_);
            else if (selection_)
                fitRange({selection_->item.start, selection_->item.end}, 0.25);
            return true;
        case Qt::Key_Escape:
            setMeasurement(std::nullopt);
            clearSelection();
            return true;
        default:
            return false;
    }
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
    if (navigateByKey(event->key()))
        event->accept();
    else
        QAbstractScrollArea::keyPressEvent(event);
}

}  // namespace stallscope
