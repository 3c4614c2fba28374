// `render timeline` of a trace profile: the GUI's timeline drawn headless.

#include <QPainter>

#include "views/common/timeline_view.h"
#include "views/trace/trace_view.h"

namespace stallscope {

QImage renderTraceTimelineImage(const TraceSourcePtr& source, const RenderOptions& options) {
    TimelineView view;
    view.setAsynchronous(false);
    TraceTimelineBinding binding(view, source);
    binding.setFlowDisplay(FlowDisplay::All);  // an image has no selection to follow
    binding.show(traceTracksInOrder(source->store()));
    // The same minimap as the GUI's (here on the calling thread: this is the headless path).
    view.setOverviewPainter(
        densityOverview(source->query([](const trace::TraceStore& s) {
            return trackBusyDensity(s, kOverviewBins);
        }),
                        TimeRange{0, double(source->store().end() - source->origin())}));
    if (options.from && options.to)
        view.setWindow({*options.from, *options.to});
    else
        view.fitAll();
    const QSize size = options.sizeGiven ? options.size : view.fittedSize(options.size);
    QImage image = view.renderImage(size);
    // Tracks below the image: say how many, and how tall an image would show them all.
    const TimelineView::Layout layout = view.layoutFor(size);
    int y = layout.tracks.top(), cut = 0;
    for (const auto& track : view.tracks()) {
        if (y + track->height() > layout.tracks.bottom() + 1 && !track->isHeader()) ++cut;
        y += track->height();
    }
    if (cut > 0) {
        const int needed = view.fittedSize(QSize(size.width(), 1 << 20)).height();
        QPainter painter(&image);
        painter.fillRect(layout.legend, QColor(255, 236, 200));
        painter.setPen(QColor(120, 60, 0));
        QFont bold = painter.font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.drawText(layout.legend.adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft,
                         QStringLiteral("▼ %1 more track%2 below; render with --size %3x%4 to "
                                        "see all of them")
                             .arg(cut)
                             .arg(cut == 1 ? "" : "s")
                             .arg(size.width())
                             .arg(needed));
    }
    return image;
}

QImage renderTraceTimeline(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    return renderTraceTimelineImage(std::make_shared<TraceSource>(workspace.path(), profile.id),
                                    options);
}

}  // namespace stallscope
