#include "views/common/time_navigation.h"

#include <cmath>

namespace stallscope {

void TimeNavigation::setOffset(QObject* view, double offset) {
    for (Member& m : members_)
        if (m.view == view) m.offset = offset;
}

double TimeNavigation::offsetOf(const QObject* view) const {
    for (const Member& m : members_)
        if (m.view == view) return m.offset;
    return 0;
}

void TimeNavigation::moveWindow(QObject* from, TimeRange window) {
    if (updating_) return;
    const auto guard = hold();
    const double shared = -offsetOf(from);
    for (const Member& m : members_) {
        if (!m.view || m.view == from || (m.active && !m.active())) continue;
        const double shift = shared + m.offset;
        m.setWindow({window.start + shift, window.end + shift});
    }
}

void TimeNavigation::moveCursor(QObject* from, double time) {
    if (updating_) return;
    const auto guard = hold();
    const double shared = time - offsetOf(from);
    for (const Member& m : members_) {
        if (!m.view || m.view == from || (m.active && !m.active())) continue;
        m.setCursor(shared + m.offset);
    }
}

TimeRange TimeNavigation::zoomed(TimeRange window, double factor, double anchor) {
    const double fraction = (anchor - window.start) / std::max(window.length(), 1e-12);
    const double length = window.length() / factor;
    const double start = anchor - fraction * length;
    return {start, start + length};
}

std::optional<TimeRange> TimeNavigation::windowForKey(int key, TimeRange window, double anchor,
                                                      TimeRange all) {
    const double panStep = window.length() * kKeyPanFraction;
    switch (key) {
        case Qt::Key_W:
            return zoomed(window, kKeyZoom, anchor);
        case Qt::Key_S:
            return zoomed(window, 1 / kKeyZoom, anchor);
        case Qt::Key_A:
            return panned(window, -panStep);
        case Qt::Key_D:
            return panned(window, panStep);
        case Qt::Key_Home:
            return all;
        default:
            return std::nullopt;
    }
}

double TimeNavigation::wheelZoomFactor(int angleDeltaY) {
    return std::pow(kWheelZoomPerStep, angleDeltaY / 120.0);
}

}  // namespace stallscope
