// `render timeline` of a trace profile: the GUI's timeline drawn headless.

#include <QPainter>
#include <QTextDocument>
#include <cmath>

#include "core/analysis/cache.h"
#include "core/analysis/registry.h"
#include "core/trace/step_registration.h"
#include "core/transfers/transfers_registration.h"
#include "views/common/timeline_view.h"
#include "views/trace/step_tracks.h"
#include "views/trace/trace_view.h"
#include "views/trace/transfer_tracks.h"
#include "views/trace/utilisation_track.h"

namespace stallscope {

QImage renderTraceTimelineImage(const TraceSourcePtr& source, const RenderOptions& options,
                                std::vector<std::shared_ptr<TimelineTrack>> leading) {
    TimelineView view;
    view.setAsynchronous(false);
    TraceTimelineBinding binding(view, source);
    binding.setFlowDisplay(FlowDisplay::All);  // an image has no selection to follow
    binding.setWaitForFlows(true);
    binding.setLeadingTracks(std::move(leading));
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

// The lanes the GUI leads the timeline with: the steps strip and the transfers' links, from
// what is stored (else derived now and not stored: a render only reads the workspace).
std::vector<std::shared_ptr<TimelineTrack>> traceLeadingLanes(const Workspace& workspace,
                                                              const ProfileInfo& profile,
                                                              const TraceSourcePtr& source) {
    std::vector<std::shared_ptr<TimelineTrack>> lanes;
    const int64_t origin = source->origin();
    const auto steps = analysis::read(workspace, profile.id, trace::stepsAnalysis());
    if (steps && !steps->devices.empty()) {
        lanes.push_back(std::make_shared<StepStripTrack>(steps, origin, 0));
        lanes.push_back(std::make_shared<DeviceUtilisationTrack>(source, steps->devices[0]));
    }
    if (const auto transfers =
            analysis::read(workspace, profile.id, transfers::transfersAnalysis()))
        for (auto& lane : makeTransferTracks(transfers, origin)) lanes.push_back(std::move(lane));
    return lanes;
}

QImage renderTraceTimeline(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    const auto source = std::make_shared<TraceSource>(workspace.path(), profile.id);
    return renderTraceTimelineImage(source, options, traceLeadingLanes(workspace, profile, source));
}

QImage renderTraceOverview(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options) {
    // The overview page the GUI shows, from the same panels: each gets its analysis as stored
    // (else derived now, not stored), on this thread.
    const auto source = std::make_shared<TraceSource>(workspace.path(), profile.id);
    TraceView view;
    view.setSource(source, source->query([](const trace::TraceStore& s) { return s.opStats(); }));
    for (const auto& panel : view.panels()) {
        if (!panel->appliesTo(source.get())) continue;
        if (const analysis::Definition* definition = analysis::find(panel->analysis()))
            view.setAnalysis(panel->analysis(),
                             analysis::storedOrDerived(workspace, profile.id, *definition));
    }
    QTextDocument page;
    page.setDocumentMargin(16);
    page.setHtml("<h2>" + QString::fromStdString(profile.name).toHtmlEscaped() + "</h2>" +
                 view.overviewHtml());
    const QSize wanted = options.sizeGiven ? options.size : QSize(1000, 0);
    page.setTextWidth(wanted.width());
    const int height = options.sizeGiven ? wanted.height() : int(std::ceil(page.size().height()));
    QImage image(wanted.width(), std::max(height, 1), QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    page.drawContents(&painter, QRectF(0, 0, wanted.width(), height));
    return image;
}

}  // namespace stallscope
