#pragma once

#include <QImage>
#include <QSize>
#include <QString>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/workspace.h"

namespace stallscope {

// Headless rendering of a view to an image with the same drawing code the GUI uses
// (CONTRACT §5 `render`). Needs a QApplication (the render command creates an offscreen one).
struct RenderOptions {
    QSize size{1600, 900};
    bool sizeGiven = false;  // --size given: keep it exactly; otherwise timelines fit their tracks
    // Visible range in the view's own time unit (cycles for replay, ns for traces); empty: all.
    std::optional<double> from, to;
    std::optional<ProfileInfo> against;  // the second profile of `compare`
    // `compare` of traces: the CDF's op (--op; "*": all ops).
    std::string op;
    // `compare` of replays: align both runs at this HLO op (--align-op).
    std::string alignOp;
};

// Renders `view` of `profile`. Throws InputError when the view does not exist or does not apply
// to the profile's kind.
using Renderer = std::function<QImage(const Workspace& workspace, const ProfileInfo& profile,
                                      const RenderOptions& options)>;

struct RendererEntry {
    std::string view;                // e.g. "timeline"
    std::vector<std::string> kinds;  // profile kinds it draws
    Renderer render;
};

// The renderers of every kind, and renderView() over them: views/view_kinds.h.

}  // namespace stallscope
