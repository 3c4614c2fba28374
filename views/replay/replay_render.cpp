#include "views/replay/replay_render.h"

#include "core/replay/codec.h"
#include "views/common/timeline_view.h"
#include "views/replay/replay_dcache_view.h"
#include "views/replay/replay_overview.h"
#include "views/replay/replay_tracks.h"

namespace stallscope {
namespace {

ReplayDocumentPtr documentOf(const Workspace& workspace, const ProfileInfo& profile) {
    return buildReplayDocument(replay::loadInstructionStream(workspace, profile.id), profile);
}

}  // namespace

QImage renderTimelineImage(const ReplayDocumentPtr& doc, const RenderOptions& options,
                           ReplayTrackSelection which) {
    TimelineView view;
    view.setAsynchronous(false);
    installReplayTracks(view, doc, which);
    if (options.from && options.to)
        view.setWindow({*options.from, *options.to});
    else
        view.fitAll();
    return view.renderImage(options.sizeGiven ? options.size : view.fittedSize(options.size));
}

QImage renderDcacheImage(const ReplayDocumentPtr& doc, const RenderOptions& options) {
    DcacheView view;
    view.setDocument(doc);
    if (options.from && options.to) view.setWindow({*options.from, *options.to});
    return view.renderImage(options.size);
}

QImage renderOverviewImage(const ReplayDocumentPtr& doc, const RenderOptions& options) {
    ReplayOverview view;
    view.setDocument(doc);
    return view.renderImage(options.size);
}

QImage renderReplayTimeline(const Workspace& workspace, const ProfileInfo& profile,
                            const RenderOptions& options) {
    return renderTimelineImage(documentOf(workspace, profile), options);
}

QImage renderReplayDma(const Workspace& workspace, const ProfileInfo& profile,
                       const RenderOptions& options) {
    return renderTimelineImage(documentOf(workspace, profile), options, {false, true, false});
}

QImage renderReplayUtilization(const Workspace& workspace, const ProfileInfo& profile,
                               const RenderOptions& options) {
    return renderTimelineImage(documentOf(workspace, profile), options, {false, false, true});
}

QImage renderReplayDcache(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options) {
    return renderDcacheImage(documentOf(workspace, profile), options);
}

QImage renderReplayOverview(const Workspace& workspace, const ProfileInfo& profile,
                            const RenderOptions& options) {
    return renderOverviewImage(documentOf(workspace, profile), options);
}

}  // namespace stallscope
