#pragma once
// Helpers shared by the files of the replay timeline tracks: replay_tracks.cpp (colours, the HLO
// band, assembly), replay_dma_track.cpp, replay_unit_track.cpp and
// replay_dependency_overlay.cpp. Not for use outside views/replay.

#include <QLocale>
#include <QObject>
#include <QRectF>
#include <QString>
#include <algorithm>
#include <cstdint>

#include "views/replay/replay_tracks.h"

namespace stallscope::replay_tracks {

inline QString number(double v) {
    return QLocale().toString(v, 'f', 0);
}

inline QString cycleText(uint64_t c) {
    return c == replay::kNoCycle ? QObject::tr("never") : number(static_cast<double>(c));
}

// Horizontal span [x(a), x(b)] of a bar as a rect, at least `minWidth` wide.
inline QRectF span(const TimeMapping& m, double a, double b, double top, double height,
                   double minWidth = 0) {
    const double x0 = m.x(a), x1 = m.x(b);
    return QRectF(x0, top, std::max(x1 - x0, minWidth), height);
}

}  // namespace stallscope::replay_tracks
