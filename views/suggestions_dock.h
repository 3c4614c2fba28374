#pragma once

#include <QList>
#include <QString>
#include <QWidget>

class QLabel;
class QListWidget;
class QStackedWidget;

namespace stallscope {

// One optimization suggestion as the dock lists it (see `stallscope suggest`).
struct SuggestionItem {
    QString kind;  // e.g. "hoist-dma"
    QString text;  // one sentence for the user
    double savingCycles = 0;
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

  signals:
    void suggestionActivated(int index);

  private:
    QStackedWidget* stack_;
    QLabel* placeholder_;
    QListWidget* list_;
    QList<SuggestionItem> suggestions_;
};

}  // namespace stallscope
