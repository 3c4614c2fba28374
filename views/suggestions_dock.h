#pragma once

#include <QList>
#include <QString>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;
class QStackedWidget;

namespace stallscope {

// One optimization suggestion as the dock lists it (see `stallscope suggest`).
struct SuggestionItem {
    QString kind;  // e.g. "hoist-dma"
    QString text;  // one sentence for the user
    double savingCycles = 0;
    QList<qint64> dmas;  // DMA ids it moves
    QString evidence;    // "stall_cycles=1523, backtail_cycles=2870, ..."
};

// Suggestions for the current replay profile, best first as given.
class SuggestionsDock : public QWidget {
    Q_OBJECT
  public:
    explicit SuggestionsDock(QWidget* parent = nullptr);

    void setSuggestions(const QList<SuggestionItem>& suggestions);
    const QList<SuggestionItem>& suggestions() const { return suggestions_; }
    QListWidget* list() const { return list_; }
    // The text shown while there are no suggestions.
    QString emptyMessage() const;
    QPushButton* previewButton() const { return previewButton_; }
    QPushButton* applyButton() const { return applyButton_; }

  signals:
    // Clicked or activated: show it on the timeline.
    void suggestionActivated(int index);
    // Show the re-simulated timeline under the original.
    void previewRequested(int index);
    // Save the edited trace as a new derived profile.
    void applyRequested(int index);

  private:
    QStackedWidget* stack_;
    QLabel* placeholder_;
    QListWidget* list_;
    QPushButton* previewButton_;
    QPushButton* applyButton_;
    QList<SuggestionItem> suggestions_;
};

}  // namespace stallscope
