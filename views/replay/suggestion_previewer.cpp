#include "views/replay/suggestion_previewer.h"
#include "views/common/async_job.h"

#include <utility>

namespace stallscope {

SuggestionPreviewer::SuggestionPreviewer(QObject* parent)
    : QObject(parent),
      ghostJob_(this, [this](const QString& message) { emit failed(message, false); }),
      previewJob_(this, [this](const QString& message) { emit failed(message, true); }) {}

void SuggestionPreviewer::setDocument(ReplayDocumentPtr document) {
    document_ = std::move(document);
    ghostJob_.supersede();
    previewJob_.supersede();
    shown_.reset();
    previewed_.reset();
    lastPreview_.reset();
    if (!document_) return;
    if (pendingShow_) show(*std::exchange(pendingShow_, std::nullopt));
    if (pendingPreview_) preview(*std::exchange(pendingPreview_, std::nullopt));
}

bool SuggestionPreviewer::inRange(int index) const {
    return document_ && index >= 0 && size_t(index) < document_->analysis.suggestions.size();
}

void SuggestionPreviewer::show(int index) {
    if (!document_) {
        pendingShow_ = index;
        return;
    }
    if (!inRange(index)) return;
    shown_ = index;
    emit shown(index);
    const ReplayDocumentPtr document = document_;
    ghostJob_.start(
        [document, index] { return previewSuggestion(*document, size_t(index), false); },
        [this, index](SuggestionPreview result) { emit ghostsReady(index, result); });
}

void SuggestionPreviewer::preview(int index) {
    if (!document_) {
        pendingPreview_ = index;
        return;
    }
    if (!inRange(index)) return;
    if (shown_ != index) show(index);
    previewed_ = index;
    emit previewStarted(index);
    const ReplayDocumentPtr document = document_;
    previewJob_.start(
        [document, index] { return previewSuggestion(*document, size_t(index), true); },
        [this, index](SuggestionPreview result) {
            lastPreview_ = result;
            emit previewReady(index, result);
        });
}

void SuggestionPreviewer::closePreview() {
    previewJob_.supersede();
    pendingPreview_.reset();
    previewed_.reset();
}

}  // namespace stallscope
