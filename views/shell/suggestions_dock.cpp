#include "views/shell/suggestions_dock.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "views/common/format.h"

namespace stallscope {

namespace {
const QString kPreviewTip = QObject::tr("Re-simulate the edit and show the predicted timeline");
const QString kApplyTip =
    QObject::tr("Re-simulate the edit and save the result as a new profile derived from this one");
}  // namespace

SuggestionsDock::SuggestionsDock(QWidget* parent)
    : QWidget(parent),
      stack_(new QStackedWidget(this)),
      emptyLabel_(new QLabel(stack_)),
      list_(new QListWidget(stack_)),
      previewButton_(new QPushButton(tr("Preview"), this)),
      applyButton_(new QPushButton(tr("Apply"), this)),
      compareButton_(new QPushButton(tr("Compare with Original"), this)) {
    setEmptyMessage({});
    emptyLabel_->setAlignment(Qt::AlignCenter);
    emptyLabel_->setWordWrap(true);
    emptyLabel_->setMargin(12);
    emptyLabel_->setForegroundRole(QPalette::PlaceholderText);
    list_->setFrameShape(QFrame::NoFrame);
    list_->setWordWrap(true);
    list_->setAlternatingRowColors(true);
    list_->setUniformItemSizes(false);
    list_->setSpacing(2);
    stack_->addWidget(emptyLabel_);
    stack_->addWidget(list_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stack_);
    previewButton_->setToolTip(kPreviewTip);
    applyButton_->setToolTip(kApplyTip);
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(4, 2, 4, 4);
    buttons->addStretch(1);
    buttons->addWidget(previewButton_);
    buttons->addWidget(applyButton_);
    buttons->addWidget(compareButton_);
    compareButton_->setToolTip(
        tr("Open the applied result side by side with the profile it came from"));
    compareButton_->hide();
    connect(compareButton_, &QPushButton::clicked, this, [this] {
        if (derivedId_) emit compareWithParentRequested(*derivedId_);
    });
    layout->addLayout(buttons);

    connect(list_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit suggestionActivated(list_->row(item)); });
    connect(list_, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { emit suggestionActivated(list_->row(item)); });
    const auto usable = [this] {
        const int row = list_->currentRow();
        return row >= 0 && row < suggestions_.size() && suggestions_[row].canApply &&
               suggestions_[row].kind != QLatin1String("error");
    };
    connect(list_, &QListWidget::currentRowChanged, this, [this, usable](int row) {
        previewButton_->setEnabled(usable());
        applyButton_->setEnabled(usable());
        // A disabled button says why (hovering a disabled button still shows its tooltip).
        const QString why = row >= 0 && row < suggestions_.size() && !usable()
                                ? suggestions_[row].whyNotApplicable
                                : QString();
        previewButton_->setToolTip(why.isEmpty() ? kPreviewTip : why);
        applyButton_->setToolTip(why.isEmpty() ? kApplyTip : why);
    });
    connect(previewButton_, &QPushButton::clicked, this, [this, usable] {
        if (usable()) emit previewRequested(list_->currentRow());
    });
    connect(applyButton_, &QPushButton::clicked, this, [this, usable] {
        if (usable()) emit applyRequested(list_->currentRow());
    });
    setSuggestions({});
}

QString SuggestionsDock::emptyMessage() const {
    return emptyMessage_;
}

void SuggestionsDock::setEmptyMessage(const QString& message) {
    emptyMessage_ = message.isEmpty()
                        ? tr("Suggestions appear here for replay, trace, CPI and noise profiles")
                        : message;
    // Profile names can be one long word: breakable, so they never widen the dock.
    emptyLabel_->setText(format::wrappable(emptyMessage_));
}

void SuggestionsDock::setSuggestions(const QList<SuggestionItem>& suggestions) {
    suggestions_ = suggestions;
    list_->clear();
    const QLocale locale;
    for (const SuggestionItem& suggestion : suggestions) {
        QString text = tr("%1 — %2").arg(suggestion.kind, suggestion.text);
        // CPI and absorption advice has no cycle saving to promise; replay suggestions do, and
        // usually say it in their text already.
        if (suggestion.savingCycles > 0 && !suggestion.text.contains(QLatin1String("saving")))
            text += tr(" (saves %1 cycles)").arg(locale.toString(suggestion.savingCycles, 'f', 0));
        if (!suggestion.dmas.isEmpty()) {
            QStringList ids;
            for (qint64 id : suggestion.dmas) ids << QString::number(id);
            text += tr("\nDMAs: %1").arg(ids.join(QStringLiteral(", ")));
        }
        if (!suggestion.evidence.isEmpty()) text += tr("\nEvidence: %1").arg(suggestion.evidence);
        auto* item = new QListWidgetItem(text, list_);
        item->setToolTip(suggestion.text);
    }
    previewButton_->setEnabled(false);
    applyButton_->setEnabled(false);
    stack_->setCurrentWidget(suggestions.isEmpty() ? static_cast<QWidget*>(emptyLabel_)
                                                   : static_cast<QWidget*>(list_));
}

void SuggestionsDock::setDerivedProfile(std::optional<qint64> derivedId) {
    derivedId_ = derivedId;
    compareButton_->setVisible(derivedId.has_value());
}

}  // namespace stallscope
