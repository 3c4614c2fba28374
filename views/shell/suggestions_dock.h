#pragma once

#include <QList>
#include <QString>
#include <QWidget>
#include <optional>

#include "views/common/suggestion_item.h"

class QLabel;
class QListWidget;
class QPushButton;
class QStackedWidget;

namespace stallscope {

// Suggestions for the current replay profile, best first as given.
class SuggestionsDock : public QWidget {
    Q_OBJECT
  public:
    explicit SuggestionsDock(QWidget* parent = nullptr);

    void setSuggestions(const QList<SuggestionItem>& suggestions);
    const QList<SuggestionItem>& suggestions() const { return suggestions_; }
    QListWidget* list() const { return list_; }
    // The text shown while there are no suggestions; setting an empty one restores the default.
    QString emptyMessage() const;
    void setEmptyMessage(const QString& message);
    QPushButton* previewButton() const { return previewButton_; }
    QPushButton* applyButton() const { return applyButton_; }
    QPushButton* compareButton() const { return compareButton_; }
    // The derived profile that Compare opens against its parent; nullopt hides the button.
    void setDerivedProfile(std::optional<qint64> derivedId);

  signals:
    // Clicked or activated: show it on the timeline.
    void suggestionActivated(int index);
    // Show the re-simulated timeline under the original.
    void previewRequested(int index);
    // Save the edited trace as a new derived profile.
    void applyRequested(int index);
    // Compare a derived profile (suggestions applied) with its parent.
    void compareWithParentRequested(qint64 derivedId);

  private:
    QStackedWidget* stack_;
    QLabel* emptyLabel_;    // shown while there are no suggestions
    QString emptyMessage_;  // its text as given (the label's has break points added)
    QListWidget* list_;
    QPushButton* previewButton_;
    QPushButton* applyButton_;
    QPushButton* compareButton_;
    std::optional<qint64> derivedId_;
    QList<SuggestionItem> suggestions_;
};

}  // namespace stallscope
