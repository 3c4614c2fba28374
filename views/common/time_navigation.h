#pragma once

// One time axis shared by several views (a profile's timeline and its data-cache views, the two
// sides of a comparison): a window change or cursor move in any linked view moves the others,
// each through its own offset (view time = shared time + offset). Also the zoom and pan
// arithmetic every time view uses for the wheel and W/S/A/D, so they all move alike.

#include <QObject>
#include <QPointer>
#include <QScopedValueRollback>
#include <functional>
#include <optional>
#include <vector>

#include "views/common/timeline_track.h"

namespace stallscope {

class TimeNavigation : public QObject {
    Q_OBJECT
  public:
    static constexpr double kWheelZoomPerStep = 1.25;  // per 120 units of wheel delta
    static constexpr double kKeyZoom = 1.5;            // W and S
    static constexpr double kKeyPanFraction = 0.15;    // A and D, of the window

    explicit TimeNavigation(QObject* parent = nullptr) : QObject(parent) {}

    // Links a view with setWindow(TimeRange)/windowChanged(TimeRange) and
    // setCursorTime(double)/cursorMoved(double). `active` (optional) says whether the view
    // follows now (a hidden preview does not).
    template <typename View>
    void link(View* view, double offset = 0, std::function<bool()> active = {}) {
        members_.push_back({view, offset, [view](TimeRange w) { view->setWindow(w); },
                            [view](double t) { view->setCursorTime(t); }, std::move(active)});
        connect(view, &View::windowChanged, this,
                [this, view](TimeRange w) { moveWindow(view, w); });
        connect(view, &View::cursorMoved, this, [this, view](double t) { moveCursor(view, t); });
    }
    // The view's offset from the shared time (e.g. a comparison aligned at an op).
    void setOffset(QObject* view, double offset);
    double offsetOf(const QObject* view) const;

    // Moves every linked view but `from` to `window` as seen by `from` (view time).
    void moveWindow(QObject* from, TimeRange window);
    void moveCursor(QObject* from, double time);

    // While the returned guard lives, linked views' changes are not passed on: for code that
    // positions several linked views itself, and for other links (selection) that must not echo.
    [[nodiscard]] QScopedValueRollback<bool> hold() {
        return QScopedValueRollback(updating_, true);
    }
    bool isUpdating() const { return updating_; }

    // `window` zoomed by `factor` (> 1: in) keeping `anchor` at the same place.
    static TimeRange zoomed(TimeRange window, double factor, double anchor);
    static TimeRange panned(TimeRange window, double shift) {
        return {window.start + shift, window.end + shift};
    }
    // The window after W/S/A/D (zoom around `anchor`, pan by kKeyPanFraction) or Home (`all`);
    // nothing for other keys.
    static std::optional<TimeRange> windowForKey(int key, TimeRange window, double anchor,
                                                 TimeRange all);
    // Zoom factor of a wheel turn.
    static double wheelZoomFactor(int angleDeltaY);

  private:
    struct Member {
        QPointer<QObject> view;
        double offset = 0;
        std::function<void(TimeRange)> setWindow;
        std::function<void(double)> setCursor;
        std::function<bool()> active;
    };

    std::vector<Member> members_;
    bool updating_ = false;
};

}  // namespace stallscope
