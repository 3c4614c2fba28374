#pragma once

#include <QWidget>
#include <optional>

#include "views/replay/replay_document.h"
#include "views/replay/replay_tracks.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSplitter;
class QTabWidget;
class QTreeWidget;

namespace stallscope {

class DcacheView;
class ReplayOverview;
class TimelineView;

// The tab of one replay profile: Overview, Timeline (HLO band, DMA lanes, unit utilization,
// dependency arrows, a details panel and, on request, the re-simulated timeline of a suggestion
// stacked under the original) and Data cache (heatmap), with linked time axes. The document loads
// on a worker through ReplayDocumentCache, so the suggestions dock and the tab share it.
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
    QLabel* previewLabel() const { return previewLabel_; }
    const ReplayTracks& tracks() const { return tracks_; }

    // Switches to the timeline, zooms to the DMA and selects it.
    void showDma(size_t dma);
    // Zooms the timeline to the suggestion's DMAs, highlights their backtails and, once the
    // re-simulation finishes on a worker (ghostsReady), shows the proposed ISSUE positions as
    // ghost bars. Before the document is loaded, the request waits for it.
    void showSuggestion(int index);
    // Re-simulates the suggestion on a worker and stacks its timeline under the original
    // (previewReady).
    void previewSuggestion(int index);
    std::optional<int> shownSuggestion() const { return shownSuggestion_; }
    const std::optional<SuggestionPreview>& lastPreview() const { return previewResult_; }
    // A DMA id or (part of) an HLO op name; true when found.
    bool find(const QString& text);
    void setDependencyMode(DependencyOverlay::Mode mode);

    // Exports of the current page: PNG or SVG by extension.
    bool exportImage(const QString& path);
    QString dmaCsv() const;

  signals:
    void documentReady();
    void loadFailed(const QString& message);
    void ghostsReady();
    void previewReady();
    void dependenciesReady();

  private:
    void build();
    void syncWindow(TimeRange window, QObject* from);
    void updateDetails();
    void requestDependencies();

    QString workspacePath_;
    ReplayDocumentPtr doc_;
    ReplayDocumentPtr previewDoc_;
    ReplayTracks tracks_;
    ReplayTracks previewTracks_;
    QTabWidget* pages_ = nullptr;
    ReplayOverview* overview_ = nullptr;
    TimelineView* timeline_ = nullptr;
    TimelineView* preview_ = nullptr;
    QWidget* previewBox_ = nullptr;
    QLabel* previewLabel_ = nullptr;
    DcacheView* dcache_ = nullptr;
    DcacheView* dcacheStrip_ = nullptr;
    QTreeWidget* details_ = nullptr;
    QLineEdit* findEdit_ = nullptr;
    QComboBox* dependencyMode_ = nullptr;
    QLabel* status_ = nullptr;
    std::optional<int> pendingSuggestion_;
    std::optional<int> pendingPreview_;
    std::optional<int> shownSuggestion_;
    std::optional<SuggestionPreview> previewResult_;
    quint64 ghostGeneration_ = 0;
    quint64 previewGeneration_ = 0;
    quint64 dependencyGeneration_ = 0;
    bool syncing_ = false;
    size_t findCursor_ = 0;
};

}  // namespace stallscope
