#pragma once

#include <QWidget>
#include <functional>
#include <optional>

#include "views/common/async_job.h"
#include "views/common/time_navigation.h"
#include "views/replay/replay_document.h"
#include "views/replay/replay_tracks.h"
#include "views/shell/elided_label.h"

class QCheckBox;
class QComboBox;
class QPainter;
class QLineEdit;
class QSplitter;
class QTabWidget;
class QToolButton;
class QTreeWidget;

namespace stallscope {

class DcacheView;
class ReplayOverview;
class SuggestionPreviewer;
class TimelineView;

// The tab of one replay profile: Overview, Timeline (HLO band, DMA lanes, unit utilization,
// dependency arrows, a details panel and, on request, the re-simulated timeline of a suggestion
// stacked under the original) and Data cache (heatmap), with linked time axes. The document loads
// on a worker through ReplayDocumentCache, so the suggestions dock and the tab share it. While a
// preview is open the two timelines share the page and the data-cache strip under them steps
// aside; the splitter between them remembers where the user put it (QSettings).
class ReplayProfileTab : public QWidget {
    Q_OBJECT
  public:
    ReplayProfileTab(const ProfileInfo& profile, const QString& workspacePath,
                     QWidget* parent = nullptr);
    explicit ReplayProfileTab(ReplayDocumentPtr document, QWidget* parent = nullptr);
    ~ReplayProfileTab() override;

    void setDocument(ReplayDocumentPtr document);
    const ReplayDocumentPtr& document() const { return doc_; }
    bool isLoaded() const { return doc_ != nullptr; }

    QTabWidget* pages() const { return pages_; }
    ReplayOverview* overview() const { return overview_; }
    TimelineView* timeline() const { return timeline_; }
    TimelineView* previewTimeline() const { return preview_; }
    DcacheView* dcache() const { return dcache_; }
    DcacheView* dcacheStrip() const { return dcacheStrip_; }  // under the timeline
    QTreeWidget* detailsPanel() const { return details_; }
    // The tool bar's status line and the preview's caption: one line, elided, tooltip the whole.
    ElidedLabel* statusLabel() const { return status_; }
    ElidedLabel* previewLabel() const { return previewLabel_; }
    // Timeline, preview and data-cache strip, top to bottom.
    QSplitter* timelineSplitter() const { return stack_; }
    QToolButton* closePreviewButton() const { return closePreview_; }
    const ReplayTracks& tracks() const { return tracks_; }

    // Where the timeline splitter's sizes with a preview open are kept.
    static constexpr char kPreviewSizesKey[] = "replayTab/previewSplitterSizes";

    // Switches to the timeline, zooms to the DMA and selects it.
    void showDma(size_t dma);
    // Zooms the timeline to the suggestion's DMAs, highlights their backtails and, once the
    // re-simulation finishes on a worker (ghostsReady), shows the proposed ISSUE positions as
    // ghost bars. Before the document is loaded, the request waits for it.
    void showSuggestion(int index);
    // Re-simulates the suggestion on a worker and stacks its timeline under the original
    // (previewReady); the data-cache strip steps aside meanwhile.
    void previewSuggestion(int index);
    // Removes the preview and gives the strip its room back.
    void closePreview();
    std::optional<int> shownSuggestion() const;
    const std::optional<SuggestionPreview>& lastPreview() const;
    // A DMA id or (part of) an HLO op name; true when found.
    bool find(const QString& text);
    void setDependencyMode(DependencyOverlay::Mode mode);

    // Exports of the current page: PNG or SVG by extension.
    bool exportImage(const QString& path);
    QString dmaCsv() const;

  signals:
    void documentReady();
    // Suggestion `index` is shown on the timeline, wherever it was chosen.
    void suggestionShown(int index);
    void loadFailed(const QString& message);
    void ghostsReady();
    void previewReady();
    void dependenciesReady();

  private:
    void build();
    QWidget* buildToolBar();
    QWidget* buildTimelinePage();
    void updateDetails();
    void requestDependencies();
    void onSuggestionShown(int index);
    void onGhostsReady(int index, const SuggestionPreview& preview);
    void onPreviewStarted(int index);
    void onPreviewReady(int index, const SuggestionPreview& preview);
    void rememberPreviewSizes();
    TimeRange suggestionRange(int index) const;

    QString workspacePath_;
    ReplayDocumentPtr doc_;
    ReplayDocumentPtr previewDoc_;
    ReplayTracks tracks_;
    ReplayTracks previewTracks_;
    QTabWidget* pages_ = nullptr;
    ReplayOverview* overview_ = nullptr;
    QSplitter* stack_ = nullptr;
    TimelineView* timeline_ = nullptr;
    TimelineView* preview_ = nullptr;
    QWidget* previewBox_ = nullptr;
    ElidedLabel* previewLabel_ = nullptr;
    QToolButton* closePreview_ = nullptr;
    DcacheView* dcache_ = nullptr;
    DcacheView* dcacheStrip_ = nullptr;
    QTreeWidget* details_ = nullptr;
    QLineEdit* findEdit_ = nullptr;
    QComboBox* dependencyMode_ = nullptr;
    QCheckBox* wastedPages_ = nullptr;
    ElidedLabel* status_ = nullptr;
    SuggestionPreviewer* suggestions_ = nullptr;
    async::JobSlot loadJob_;
    async::JobSlot dependencyJob_;
    // The splitter's sizes before a preview opened, given back when it closes.
    QList<int> sizesWithoutPreview_;
    TimeNavigation* navigation_ = new TimeNavigation(this);
    size_t findCursor_ = 0;
};

}  // namespace stallscope
