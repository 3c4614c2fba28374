#pragma once

#include <QImage>

#include "views/common/render.h"
#include "views/replay/replay_document.h"
#include "views/replay/replay_tracks.h"

namespace stallscope {

// Headless renderers of the replay views (`stallscope render VIEW PROFILE`), drawing with the
// widgets' own paint code: the full timeline, the DMA lanes only, the unit-utilization tracks,
// the data-cache heatmap and the overview page.
QImage renderReplayTimeline(const Workspace& workspace, const ProfileInfo& profile,
                            const RenderOptions& options);
QImage renderReplayDma(const Workspace& workspace, const ProfileInfo& profile,
                       const RenderOptions& options);
QImage renderReplayUtilization(const Workspace& workspace, const ProfileInfo& profile,
                               const RenderOptions& options);
QImage renderReplayDcache(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options);
QImage renderReplayOverview(const Workspace& workspace, const ProfileInfo& profile,
                            const RenderOptions& options);

// The same from an already built document (tests and benchmarks).
QImage renderTimelineImage(const ReplayDocumentPtr& doc, const RenderOptions& options,
                           ReplayTrackSelection which = {});
QImage renderDcacheImage(const ReplayDocumentPtr& doc, const RenderOptions& options);
QImage renderOverviewImage(const ReplayDocumentPtr& doc, const RenderOptions& options);

}  // namespace stallscope
