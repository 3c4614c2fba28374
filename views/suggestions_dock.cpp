#include "suggestions_dock.h"

#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace stallscope {

SuggestionsDock::SuggestionsDock(QWidget* parent)
    : QWidget(parent),
      stack_(new QStackedWidget(this)),
      placeholder_(new QLabel(tr("Suggestions appear here for replay profiles"), stack_)),
      list_(new QListWidget(stack_)) {
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setWordWrap(true);
    placeholder_->setMargin(12);
    placeholder_->setForegroundRole(QPalette::PlaceholderText);
    list_->setFrameShape(QFrame::NoFrame);
    list_->setWordWrap(true);
    list_->setAlternatingRowColors(true);
    list_->setUniformItemSizes(false);
    list_->setSpacing(2);
    stack_->addWidget(placeholder_);
    stack_->addWidget(list_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stack_);

    connect(list_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit suggestionActivated(list_->row(item)); });
    setSuggestions({});
}

QString SuggestionsDock::emptyMessage() const {
    return placeholder_->text();
}

void SuggestionsDock::setSuggestions(const QList<SuggestionItem>& suggestions) {
    suggestions_ = suggestions;
    list_->clear();
    const QLocale locale;
    for (const SuggestionItem& suggestion : suggestions) {
        const QString saving =
            tr("saves %1 cycles").arg(locale.toString(suggestion.savingCycles, 'f', 0));
        auto* item = new QListWidgetItem(
            tr("%1 — %2 (%3)").arg(suggestion.kind, suggestion.text, saving), list_);
        item->setToolTip(suggestion.text);
    }
    stack_->setCurrentWidget(suggestions.isEmpty() ? static_cast<QWidget*>(placeholder_)
                                                   : static_cast<QWidget*>(list_));
}

}  // namespace stallscope
