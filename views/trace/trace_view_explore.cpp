// The trace view's exploring habits from Perfetto and Nsight: the Summary tab (an area selection
// or a whole process/thread aggregated by name) and following a selected slice's flows from the
// details pane to the slice at their other end.

#include <QTabWidget>
#include <QTextBrowser>
#include <QUrl>
#include <algorithm>
#include <cmath>

#include "views/common/format.h"
#include "views/common/timeline_view.h"
#include "views/shell/elided_label.h"
#include "views/trace/area_summary_panel.h"
#include "views/trace/trace_view.h"

namespace stallscope {

namespace {

void appendDescendants(const trace::TraceStore& store, int64_t parent, std::vector<int64_t>& out) {
    for (const trace::TrackRow* row : store.children(parent)) {
        if (row->slices > 0) out.push_back(row->id);
        appendDescendants(store, row->id, out);
    }
}

// The store track a timeline track shows (-1: a lane of an analysis).
int64_t storeTrackOf(const TimelineTrack* track) {
    if (const auto* slices = dynamic_cast<const TraceSliceTrack*>(track)) return slices->trackId();
    if (const auto* header = dynamic_cast<const TraceProcessHeaderTrack*>(track))
        return header->trackId();
    return -1;
}

}  // namespace

void TraceView::connectExploring() {
    connect(timeline_, &TimelineView::areaSelected, this, &TraceView::summarizeArea);
    connect(summary_, &AreaSummaryPanel::opActivated, this, &TraceView::selectOp);
    connect(summary_, &AreaSummaryPanel::ready, this,
            [this] { status_->setText(summary_->headingText()); });
    details_->setOpenLinks(false);
    connect(details_, &QTextBrowser::anchorClicked, this, &TraceView::followFlow);
}

void TraceView::summarizeArea() {
    const auto range = timeline_->measurement();
    if (!source_ || !range || range->length() <= 0) return;
    // Slice tracks dragged across; a process header alone stands for its tracks.
    std::vector<int64_t> tracks, headers;
    for (const TimelineTrack* track : timeline_->measuredTracks()) {
        const int64_t id = storeTrackOf(track);
        if (id < 0) continue;
        if (track->isHeader())
            headers.push_back(id);
        else
            tracks.push_back(id);
    }
    if (tracks.empty())
        for (const int64_t header : headers) appendDescendants(source_->store(), header, tracks);
    if (tracks.empty()) return;
    summary_->summarize(source_, std::move(tracks), range->start, range->end, tr("Area"));
    tabs_->setCurrentWidget(summary_);
}

void TraceView::summarizeTrack(int64_t trackId) {
    if (!source_) return;
    const trace::TrackRow* row = source_->store().track(trackId);
    if (!row) return;
    std::vector<int64_t> tracks;
    if (row->slices > 0) tracks.push_back(trackId);
    appendDescendants(source_->store(), trackId, tracks);
    if (tracks.empty()) return;
    const trace::TraceStore& store = source_->store();
    const QString name = QString::fromStdString(row->name.empty() ? row->pid : row->name);
    summary_->summarize(source_, std::move(tracks), 0.0, double(store.end() - store.start()),
                        name.isEmpty() ? tr("Track") : name);
}

QString TraceView::flowsHtml(const TimelineView::Selection& selection) {
    shownFlows_.clear();
    const auto* slices = dynamic_cast<const TraceSliceTrack*>(selection.track);
    if (!slices || selection.item.id < 0) return {};
    const int64_t origin = source_->origin();
    const TraceFlowOverlay::SliceSpan span{
        slices->trackId(), origin + int64_t(std::floor(selection.item.start)),
        origin + int64_t(std::ceil(selection.item.end)), selection.item.row};
    const auto atSpan = [&span](int64_t track, int64_t ts, int32_t depth) {
        return track == span.track && ts >= span.start && ts <= span.end && depth == span.depth;
    };
    QString rows;
    if (!source_->flowsRead())
        return "<h4>" + tr("Flows") + "</h4><p>" + tr("Still reading the trace's flows…") + "</p>";
    // Only flows whose earlier end lies from the slice's start (less the longest flow) to its
    // end can touch it (10^7 flows are not scanned on every click).
    const std::shared_ptr<const FlowIndex> index = source_->flows();
    const std::vector<trace::FlowRow> flows =
        index->between(span.start - index->longest(), span.end);
    for (auto it = flows.begin(); it != flows.end() && shownFlows_.size() < kFlowsListed; ++it) {
        const trace::FlowRow& f = *it;
        const bool outgoing = atSpan(f.fromTrack, f.fromTs, f.fromDepth);
        if (!outgoing && !atSpan(f.toTrack, f.toTs, f.toDepth)) continue;
        FlowEnd end;
        end.track = outgoing ? f.toTrack : f.fromTrack;
        end.ts = outgoing ? f.toTs : f.fromTs;
        end.depth = outgoing ? f.toDepth : f.fromDepth;
        const trace::TrackRow* row = source_->store().track(end.track);
        const QString where = row ? QString::fromStdString(row->name) : tr("a hidden track");
        rows += QStringLiteral("<tr><td>%1</td><td><a href=\"flow:%2\">%3 %4 at %5</a></td></tr>")
                    .arg(QString::fromStdString(source_->text(f.name)).toHtmlEscaped())
                    .arg(shownFlows_.size())
                    .arg(outgoing ? QStringLiteral("→ to") : QStringLiteral("← from"),
                         where.toHtmlEscaped(), format::nanoseconds(double(end.ts - origin)));
        shownFlows_.push_back(end);
    }
    if (rows.isEmpty()) return {};
    return "<h4>" + tr("Flows (click to follow)") + "</h4><table>" + rows + "</table>";
}

void TraceView::followFlow(const QUrl& link) {
    bool ok = false;
    const size_t index = link.path().toULongLong(&ok);
    if (link.scheme() != QLatin1String("flow") || !ok || index >= shownFlows_.size()) return;
    const FlowEnd end = shownFlows_[index];
    const TimelineTrack* track = binding_->trackFor(end.track);
    if (!track) {
        status_->setText(tr("The flow ends on a hidden track: show it in the Tracks tab"));
        return;
    }
    // The slice the flow ends in (read on a worker): at its depth, or the deepest covering it.
    TraceSourcePtr source = source_;
    findJob_.start(
        [source, end]() -> std::optional<trace::SliceItem> {
            const std::vector<trace::SliceItem> items =
                source->query([&](const trace::TraceStore& s) {
                    return s.slices(end.track, end.ts, end.ts, 0.0);
                });
            const trace::SliceItem* best = nullptr;
            for (const trace::SliceItem& s : items) {
                if (s.kind == trace::ItemKind::Folded || s.start > end.ts || s.end() < end.ts)
                    continue;
                if (end.depth >= 0 ? int(s.depth) == end.depth : (!best || s.depth > best->depth))
                    best = &s;
            }
            if (!best) return std::nullopt;
            return *best;
        },
        [this, track, end](std::optional<trace::SliceItem> found) {
            const int64_t origin = source_->origin();
            if (!found) {
                status_->setText(tr("No slice at the flow's end (%1)")
                                     .arg(format::nanoseconds(double(end.ts - origin))));
                return;
            }
            found->start -= origin;
            revealSlice(track, TraceSliceTrack::itemOf(*found));
        });
}

void TraceView::revealSlice(const TimelineTrack* track, const TimelineItem& item) {
    const TimeRange window = timeline_->window();
    if (item.end - item.start > window.length())
        timeline_->fitRange({item.start, item.end});
    else if (!window.contains(item.start) || !window.contains(item.end))
        timeline_->setWindow({(item.start + item.end - window.length()) / 2,
                              (item.start + item.end + window.length()) / 2});
    timeline_->select(track, item);
    timeline_->ensureTrackVisible(track, TraceSliceTrack::rowCenter(item.row));
}

}  // namespace stallscope
