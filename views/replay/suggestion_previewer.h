#pragma once

#include <QObject>
#include <optional>

#include "views/common/async_job.h"
#include "views/replay/replay_document.h"

namespace stallscope {

// The suggestion states of one replay tab. Showing a suggestion re-simulates its edit quickly for
// the ghosts (where its ISSUEs land); previewing it builds the whole re-simulated document to
// stack under the original. Requests made before the document is there wait for it, and a newer
// request drops the result of an older one. The work runs on workers; the tab draws.
class SuggestionPreviewer : public QObject {
    Q_OBJECT
  public:
    explicit SuggestionPreviewer(QObject* parent = nullptr);

    // The document the suggestion indices refer to; runs the requests that waited for it.
    void setDocument(ReplayDocumentPtr document);

    // shown() at once (the tab zooms to it), then ghostsReady. Out of range: nothing.
    void show(int index);
    // Shows it too when it is not shown; previewStarted at once, then previewReady.
    void preview(int index);
    // Forgets the preview (the tab closed it); a running one is dropped.
    void closePreview();

    std::optional<int> shownSuggestion() const { return shown_; }
    std::optional<int> previewedSuggestion() const { return previewed_; }
    const std::optional<SuggestionPreview>& lastPreview() const { return lastPreview_; }

  signals:
    void shown(int index);
    void ghostsReady(int index, const stallscope::SuggestionPreview& preview);
    void previewStarted(int index);
    void previewReady(int index, const stallscope::SuggestionPreview& preview);
    // A re-simulation failed: `forPreview` tells the preview's from the ghosts'.
    void failed(const QString& message, bool forPreview);

  private:
    bool inRange(int index) const;

    ReplayDocumentPtr document_;
    std::optional<int> pendingShow_, pendingPreview_;
    std::optional<int> shown_, previewed_;
    std::optional<SuggestionPreview> lastPreview_;
    async::JobSlot ghostJob_;
    async::JobSlot previewJob_;
};

}  // namespace stallscope
