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

#include "views/common/async_job.h"
#include "views/common/render.h"
#include "views/common/suggestion_item.h"
#include "views/common/timeline_view.h"
#include "views/trace/trace_panel.h"
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
class QLayout;
class QUrl;

namespace stallscope {

class AreaSummaryPanel;
class ElidedLabel;

class TraceView : public QWidget, public TracePanelHost {
    Q_OBJECT
  public:
    explicit TraceView(QWidget* parent = nullptr);
    ~TraceView() override;

    // Opens the profile on a worker; the view fills in when it is ready (emits loaded()).
    void open(const std::string& workspacePath, int64_t profileId);
    // Shows an already opened source (tests, compare view).
    void setSource(TraceSourcePtr source, std::vector<trace::OpStat> ops);

    QTreeWidget* trackTree() const { return tree_; }
    QTableView* opTable() const { return opTable_; }
    QLineEdit* findField() const { return findEdit_; }
    QStandardItemModel* opModel() const { return opModel_; }
    QString overviewHtml() const;

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
    // The details panel's text (what a selection or a clicked process shows).
    QString detailsText() const;
    // The Summary tab: an area selection's or a clicked track's slices by name.
    AreaSummaryPanel* summaryPanel() const { return summary_; }
    // Follows a "flow:N" link of the details pane (the selected slice's N-th listed flow) to the
    // slice at its other end: selected and revealed.
    void followFlow(const QUrl& link);

    // The panels (trace_panel.cpp): each shows one registered analysis, loaded after the
    // profile on a worker (stored with the profile after its first derivation).
    const std::vector<std::unique_ptr<TracePanel>>& panels() const { return panels_; }
    template <class P>
    P* panel() const {
        for (const auto& p : panels_)
            if (auto* found = dynamic_cast<P*>(p.get())) return found;
        return nullptr;
    }
    // Hands a result to the panels showing that analysis (what the worker does; tests too).
    void setAnalysis(std::string_view name, const analysis::Result& result);

    // The suggestions dock's entries: every panel's, in suggestionOrder() order.
    QList<SuggestionItem> suggestionItems() const;
    void showSuggestion(int index);
    // A step recommendation an edit expresses: proposed in the Critical path tab's what-if and
    // re-simulated (apply: and saved as a derived profile), the tab brought forward.
    void previewSuggestion(int index, bool apply);

    // TracePanelHost.
    TimelineView* timeline() const override { return timeline_; }
    QWidget* keyScope() const override { return const_cast<TraceView*>(this); }
    const TraceSourcePtr& source() const override { return source_; }
    TraceTimelineBinding* binding() const override { return binding_.get(); }
    void showRange(int64_t start, int64_t end) override;  // store ns, with a margin
    void setStatus(const QString& text) override;
    void raisePanel(const QWidget* widget) override;
    void panelChanged() override;
    // Store track ids shown on the timeline, in order (headers excluded).
    std::vector<int64_t> shownTrackIds() const override;

  signals:
    void loaded();
    void foundSlice(bool found);
    void suggestionsReady(const QList<SuggestionItem>& suggestions);

  private:
    QLayout* buildFindBar();
    QWidget* buildTreePane();
    QTabWidget* buildTabs();
    void buildTree();
    void applyTreeToTimeline();
    void fillOpTable(const std::vector<trace::OpStat>& ops);
    void countMatches(const QString& text);
    void showSelectionDetails();
    void showTrackDetails(int64_t trackId);
    void selectOpRow(const std::string& name);
    void moveCurrent(int delta);
    void togglePinCurrent();
    void markPinned(QTreeWidgetItem* item, bool pinned);
    // trace_view_explore.cpp
    void connectExploring();
    void summarizeArea();
    void summarizeTrack(int64_t trackId);
    QString flowsHtml(const TimelineView::Selection& selection);
    void revealSlice(const TimelineTrack* track, const TimelineItem& item);
    void loadAnalyses(const std::string& workspacePath, int64_t profileId);
    void refreshOverview();
    void syncPanelTabs();

    TraceSourcePtr source_;
    std::vector<trace::OpStat> ops_;
    std::vector<QString> foldedOpNames_;  // ops_' names case-folded, for the match count
    QString matchText_;  // the find field's match count, while the status line shows it
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
    QTabWidget* tabs_ = nullptr;
    AreaSummaryPanel* summary_ = nullptr;
    // The other ends of the flows the details pane lists, by link index.
    struct FlowEnd {
        int64_t track = 0, ts = 0;
        int32_t depth = -1;
    };
    std::vector<FlowEnd> shownFlows_;
    static constexpr size_t kFlowsListed = 50;
    bool fillingTree_ = false;
    bool syncingOpTable_ = false;
    std::map<int64_t, QTreeWidgetItem*> treeItems_;
    std::vector<int64_t> pinned_;  // in pin order
    std::vector<std::unique_ptr<TracePanel>> panels_;
    async::JobSlot openJob_, densityJob_, findJob_, argsJob_;
    std::vector<std::unique_ptr<async::JobSlot>> analysisJobs_;  // one per panel
};

// A worker's workspace for the registered analyses: writable so a first derivation is stored
// with the profile; read-only (deriving without storing) when it cannot be.
std::unique_ptr<Workspace> openForAnalyses(const std::string& workspacePath);

QWidget* createTraceView(const ProfileInfo& profile, const QString& workspacePath);

// Bins of the busy-density minimap over the whole trace.
constexpr size_t kOverviewBins = 1024;

// `render timeline` for trace profiles: every track with data over options.from/to (ns since the
// profile's start; default: all).
QImage renderTraceTimeline(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options);
// The overview page (what the trace is, its steps, transfers and critical path) as an image.
QImage renderTraceOverview(const Workspace& workspace, const ProfileInfo& profile,
                           const RenderOptions& options);
// The lanes the GUI leads a trace's timeline with (steps strip, utilisation, transfer links), from
// what is stored, else derived now and not stored.
std::vector<std::shared_ptr<TimelineTrack>> traceLeadingLanes(const Workspace& workspace,
                                                              const ProfileInfo& profile,
                                                              const TraceSourcePtr& source);
// `leading`: lanes above the trace's tracks (the steps strip, transfer links).
QImage renderTraceTimelineImage(const TraceSourcePtr& source, const RenderOptions& options,
                                std::vector<std::shared_ptr<TimelineTrack>> leading = {});

}  // namespace stallscope
