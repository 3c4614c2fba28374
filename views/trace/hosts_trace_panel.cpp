#include "views/trace/hosts_trace_panel.h"

#include "views/common/format.h"
#include "views/common/timeline_view.h"
#include "views/trace/hosts_panel.h"

namespace stallscope {

namespace {

QString htmlEscape(const QString& s) {
    return s.toHtmlEscaped();
}

}  // namespace

HostsTracePanel::HostsTracePanel(TracePanelHost& host) : TracePanel(host) {
    panel_ = new HostsPanel;
    connect(panel_, &HostsPanel::hostStepActivated, this, &HostsTracePanel::showHostStep);
}

HostsTracePanel::~HostsTracePanel() {
    if (!panel_->parent()) delete panel_;
}

bool HostsTracePanel::appliesTo(const TraceSource* source) const {
    return source && trace::isRunProfile(source->metadata());
}

QWidget* HostsTracePanel::widget() {
    return panel_;
}

void HostsTracePanel::setResult(const analysis::Result& result) {
    setAnalysis(std::static_pointer_cast<const trace::HostsAnalysis>(result));
}

void HostsTracePanel::setAnalysis(std::shared_ptr<const trace::HostsAnalysis> analysis) {
    hosts_ = std::move(analysis);
    panel_->setAnalysis(hosts_);
    host_.panelChanged();
    applyPendingHostStep();
}

// A multi-host run: how its clocks were aligned and which host is slow where.
QString HostsTracePanel::overviewHtml() const {
    if (!hosts_ || hosts_->hosts.empty() || !host_.source()) return {};
    const QJsonObject run = host_.source()->metadata().value(trace::kRunMetadataKey).toObject();
    QString html =
        tr("<h3>Run</h3><p>%n host(s), clocks aligned by %1", nullptr, int(hosts_->hosts.size()))
            .arg(htmlEscape(run.value("alignment").toString()));
    const trace::Straggler* worst = nullptr;
    for (const trace::Straggler& st : hosts_->stragglers)
        if (!worst || st.excessPct > worst->excessPct) worst = &st;
    if (worst)
        html += tr("; slowest: %1 in %2, %3 over the step's median")
                    .arg(htmlEscape(QString::fromStdString(worst->hostName)),
                         htmlEscape(QString::fromStdString(worst->stepName)),
                         format::signedPercent(worst->excessPct));
    if (!hosts_->variableOps.empty())
        html += tr("; the op varying most across hosts: %1")
                    .arg(htmlEscape(QString::fromStdString(hosts_->variableOps.front().name)));
    return html + tr(" (Hosts tab)</p>");
}

void HostsTracePanel::revealHostStep(const QString& host, const QString& step, int stepIndex) {
    pending_ = HostStepTarget{host, step, stepIndex};
    applyPendingHostStep();
}

void HostsTracePanel::applyPendingHostStep() {
    if (!pending_ || !hosts_ || !host_.source()) return;
    const HostStepTarget target = *pending_;
    pending_.reset();
    int host = -1;
    for (size_t h = 0; h < hosts_->hosts.size(); ++h)
        if (QString::fromStdString(hosts_->hosts[h].host.name) == target.host) host = int(h);
    int step = target.stepIndex;
    for (size_t i = 0; i < hosts_->steps.size(); ++i)
        if (hosts_->matchedByName && QString::fromStdString(hosts_->steps[i]) == target.step)
            step = int(i);
    host_.raisePanel(panel_);
    showHostStep(host, step);
}

void HostsTracePanel::showHostStep(int host, int step) {
    if (!hosts_ || host < 0 || size_t(host) >= hosts_->hosts.size() || step < 0 ||
        size_t(step) >= hosts_->steps.size())
        return;
    const trace::RunHost& where = hosts_->hosts[size_t(host)].host;
    if (where.track < 0 && !where.shard.empty()) {
        emit hostTimelineRequested(QString::fromStdString(where.shard), where.shardProfile,
                                   QString::fromStdString(where.name),
                                   QString::fromStdString(hosts_->steps[size_t(step)]), step);
        return;
    }
    const int index = hosts_->stepOfHost[size_t(step)][size_t(host)];
    if (index < 0) return;
    const trace::HostStep& s = hosts_->hosts[size_t(host)].steps[size_t(index)];
    host_.showRange(s.start, s.start + s.duration);
    // The host's own tracks: its first shown track (the host track has no slices itself).
    const int64_t hostTrack = where.track;
    TraceTimelineBinding* binding = host_.binding();
    if (!binding || hostTrack < 0) return;
    for (const int64_t id : host_.shownTrackIds()) {
        int64_t ancestor = id;
        while (ancestor >= 0 && ancestor != hostTrack) {
            const trace::TrackRow* row = host_.source()->store().track(ancestor);
            ancestor = row ? row->parent : -1;
        }
        if (ancestor == hostTrack) {
            if (const TimelineTrack* track = binding->trackFor(id))
                host_.timeline()->ensureTrackVisible(track);
            break;
        }
    }
}

}  // namespace stallscope
