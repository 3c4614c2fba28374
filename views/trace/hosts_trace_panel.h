#pragma once

// The hosts of a multi-host run in the trace view (core/trace/hosts.h): a Hosts tab with step
// time per host and step, the slowest host per step and the ops varying most, and the overview's
// Run section. A merged run's hosts live in shards: showing one asks the window to open it.

#include <QString>
#include <memory>
#include <optional>

#include "core/trace/hosts.h"
#include "views/trace/trace_panel.h"

namespace stallscope {

class HostsPanel;

class HostsTracePanel : public TracePanel {
    Q_OBJECT
  public:
    explicit HostsTracePanel(TracePanelHost& host);
    ~HostsTracePanel() override;

    std::string_view analysis() const override { return "hosts"; }
    bool appliesTo(const TraceSource* source) const override;
    QString title() const override { return tr("Hosts"); }
    QWidget* widget() override;
    QString overviewHtml() const override;
    int overviewOrder() const override { return -1; }  // how the run was put together: first
    void setResult(const analysis::Result& result) override;
    void clear() override { hosts_.reset(); }

    void setAnalysis(std::shared_ptr<const trace::HostsAnalysis> analysis);
    const std::shared_ptr<const trace::HostsAnalysis>& result() const { return hosts_; }
    HostsPanel* hostsPanel() const { return panel_; }
    // Zooms to `step` of `host` (HostsAnalysis indices) and scrolls the host's tracks into view;
    // a merged run's host asks for its shard instead (hostTimelineRequested).
    void showHostStep(int host, int step);
    // showHostStep by host and step name (a step index when the names do not match), now or
    // once the hosts are loaded: how a shard's view opens at the host and step clicked.
    void revealHostStep(const QString& host, const QString& step, int stepIndex);

  signals:
    void hostTimelineRequested(const QString& shardPath, qint64 profileId, const QString& host,
                               const QString& step, int stepIndex);

  private:
    void applyPendingHostStep();

    std::shared_ptr<const trace::HostsAnalysis> hosts_;
    HostsPanel* panel_ = nullptr;
    struct HostStepTarget {
        QString host, step;
        int stepIndex = -1;
    };
    std::optional<HostStepTarget> pending_;  // revealHostStep before the hosts loaded
};

}  // namespace stallscope
