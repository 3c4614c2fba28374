#pragma once

// The trace-profile tab: track tree (process → thread/stream; collapse, filter by name, reorder,
// pin to the top), the timeline, find by name with next/previous, the op table linked both ways
// with the timeline, a details panel with the selected slice's arguments (or the selected
// process's device stats) and an overview (time range, devices, top ops, busiest tracks).

#include <QImage>
#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/trace/hosts.h"
#include "core/trace/step_analysis.h"
#include "core/transfers/transfers.h"
#include "views/common/async_job.h"
#include "views/common/cards.h"
#include "views/common/render.h"
#include "views/shell/suggestions_dock.h"
#include "views/trace/trace_tracks.h"

class QComboBox;
class QLineEdit;
class QLabel;
class QTreeWidget;
class QTableView;
class QStandardItemModel;
class QSortFilterProxyModel;
class QTextBrowser;
class QTabWidget;
class QTreeWidgetItem;

namespace stallscope {

class HostsPanel;
class StepBoundaryOverlay;
class ElidedLabel;
class StepsPanel;
class TimelineView;

class TraceView : public QWidget {
    Q_OBJECT
  public:
    explicit TraceView(QWidget* parent = nullptr);
    ~TraceView() override;

    // Opens the profile on a worker; the view fills in when it is ready (emits loaded()).
    void open(const std::string& workspacePath, int64_t profileId);
    // Shows an already opened source (tests, compare view).
    void setSource(TraceSourcePtr source, std::vector<trace::OpStat> ops);

    TimelineView* timeline() const { return timeline_; }
    QTreeWidget* trackTree() const { return tree_; }
    QTableView* opTable() const { return opTable_; }
    QStandardItemModel* opModel() const { return opModel_; }
    const TraceSourcePtr& source() const { return source_; }
    QString overviewHtml() const;
    // Headline cards over the overview when the profile has transfers (as a replay's: total,
    // stalled at waits, base vs transfer, slack, the busiest link's busy share).
    CardStrip* transferCards() const { return transferCards_; }
    static std::vector<Card> transferCardsOf(const transfers::Analysis& analysis);

    // Track tree filter: shows tracks whose name (or whose process's name) contains `text`.
    void setTrackFilter(const QString& text);
    // Find: the next/previous slice whose name contains `needle` after/before the current
    // selection (or the window start); selects and reveals it. Runs on a worker; foundSlice()
    // reports the result (found false when nothing matched).
    void findNext(const QString& needle, bool forward);
    // Highlights the op's slices and finds its next occurrence.
    void selectOp(const QString& name);
    // Moves a track (or process) up (delta < 0) or down among its siblings, in the tree and on
    // the timeline; kept for the session.
    void moveTrack(int64_t trackId, int delta);
    // Pins a track (or a whole process) to the top of the timeline, in the order pinned.
    void setPinned(int64_t trackId, bool pinned);
    bool isPinned(int64_t trackId) const;
    // Store track ids shown on the timeline, in order (headers excluded).
    std::vector<int64_t> shownTrackIds() const;
    // The details panel's text (what a selection or a clicked process shows).
    QString detailsText() const;

    // Steps: the breakdown (loaded after the profile, from the workspace or computed on a
    // worker), the Steps tab, the strip and boundaries on the timeline, the step picker and the
    // recommendations for the suggestions dock.
    void setStepAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis);
    const std::shared_ptr<const trace::StepAnalysis>& stepAnalysis() const { return steps_; }
    StepsPanel* stepsPanel() const { return stepsPanel_; }
    QComboBox* stepPicker() const { return stepPicker_; }
    // Zooms the timeline to step `index` (StepAnalysis::steps) with a margin.
    void showStep(int index);
    // Zooms to where recommendation `index` shows and selects its track when shown.
    void showRecommendation(int index);
    // Suggestion `index` as the dock lists them: transfer edits first, then step
    // recommendations.
    void showSuggestion(int index);
    QList<SuggestionItem> suggestionItems() const;

    // Async transfers (core/transfers: copies and collectives under the DMA model), stored with
    // the profile at import: a track per link above the trace's tracks, figures in the
    // overview, edits in the suggestions dock.
    void setTransferAnalysis(std::shared_ptr<const transfers::Analysis> analysis);
    const std::shared_ptr<const transfers::Analysis>& transferAnalysis() const {
        return transfers_;
    }
    // Zooms to a transfer's lifetime (issue to the end of its wait) and selects it.
    void showTransfer(uint32_t id);

    // Multi-host runs (core/trace/hosts.h): a Hosts tab with step time per host and step, the
    // slowest host per step and the ops varying most across hosts.
    void setHostsAnalysis(std::shared_ptr<const trace::HostsAnalysis> analysis);
    const std::shared_ptr<const trace::HostsAnalysis>& hostsAnalysis() const { return hosts_; }
    HostsPanel* hostsPanel() const { return hostsPanel_; }
    // Zooms to `step` of `host` (HostsAnalysis indices) and scrolls the host's tracks into view.
    // A merged run (hosts' timelines in shard workspaces) asks for the host's shard instead:
    // hostTimelineRequested.
    void showHostStep(int host, int step);
    // showHostStep by host and step name (a step index when the names do not match), now or
    // once the hosts are loaded: how a shard's view opens at the host and step clicked in the
    // merged run.
    void revealHostStep(const QString& host, const QString& step, int stepIndex);

  signals:
    void loaded();
    void foundSlice(bool found);
    void stepsReady();
    void suggestionsReady(const QList<SuggestionItem>& suggestions);
    // A merged run's host lives in a shard: open `profileId` of the workspace at `shardPath` and
    // reveal `host`'s `step` there (revealHostStep).
    void hostTimelineRequested(const QString& shardPath, qint64 profileId, const QString& host,
                               const QString& step, int stepIndex);

  private:
    void buildTree();
    void applyTreeToTimeline();
    void fillOpTable(const std::vector<trace::OpStat>& ops);
    void showSelectionDetails();
    void showTrackDetails(int64_t trackId);
    void selectOpRow(const std::string& name);
    void moveCurrent(int delta);
    void togglePinCurrent();
    void markPinned(QTreeWidgetItem* item, bool pinned);
    void loadSteps(const std::string& workspacePath, int64_t profileId);
    void showRange(int64_t start, int64_t end);  // store ns, with a margin
    void setStepDevice(int device);
    void loadTransfers(const std::string& workspacePath, int64_t profileId);
    void loadHosts(const std::string& workspacePath, int64_t profileId);
    void updateLeadingTracks();
    QString transfersHtml() const;

    TraceSourcePtr source_;
    std::vector<trace::OpStat> ops_;
    std::shared_ptr<TraceHighlight> highlight_;
    std::unique_ptr<TraceTimelineBinding> binding_;
    TimelineView* timeline_ = nullptr;
    QTreeWidget* tree_ = nullptr;
    QLineEdit* treeFilter_ = nullptr;
    QLineEdit* findEdit_ = nullptr;
    ElidedLabel* status_ = nullptr;
    QComboBox* flowDisplay_ = nullptr;
    QTableView* opTable_ = nullptr;
    QStandardItemModel* opModel_ = nullptr;
    QSortFilterProxyModel* opProxy_ = nullptr;
    QTextBrowser* details_ = nullptr;
    QTextBrowser* overview_ = nullptr;
    CardStrip* transferCards_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    bool fillingTree_ = false;
    bool syncingOpTable_ = false;
    std::map<int64_t, QTreeWidgetItem*> treeItems_;
    std::vector<int64_t> pinned_;  // in pin order
    std::shared_ptr<const trace::StepAnalysis> steps_;
    std::shared_ptr<StepBoundaryOverlay> stepBoundaries_;
    std::shared_ptr<const transfers::Analysis> transfers_;
    // What the transfer analysis could not make into transfers ("done without start 2, ..."),
    // kept when it found none: the overview says why there are none.
    QString transfersUnmatched_;
    std::shared_ptr<const trace::HostsAnalysis> hosts_;
    struct HostStepTarget {
        QString host, step;
        int stepIndex = -1;
    };
    std::optional<HostStepTarget> pendingHostStep_;  // revealHostStep before the hosts loaded
    void applyPendingHostStep();
    HostsPanel* hostsPanel_ = nullptr;
    int stepDevice_ = 0;
    StepsPanel* stepsPanel_ = nullptr;
    QComboBox* stepPicker_ = nullptr;
    async::JobSlot openJob_, densityJob_, findJob_, argsJob_, stepsJob_, transfersJob_, hostsJob_;
};

// A worker's workspace for the profile analyses (steps, transfers, hosts): writable so a first
// analysis is stored with the profile; read-only (computing without storing) when it cannot be.
std::unique_ptr<Workspace> openForAnalyses(const std::string& workspacePath);

QWidget* createTraceView(const ProfileInfo& profile, const QString& workspacePath);

// `render timeline` for trace profiles: every track with data over options.from/to (ns since the
// profile's start; default: all).
QImage renderTraceTimeline(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options);
QImage renderTraceTimelineImage(const TraceSourcePtr& source, const RenderOptions& options);

}  // namespace stallscope
