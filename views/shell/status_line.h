#pragma once

#include <QWidget>
#include <optional>

class QLabel;
class QProgressBar;
class QToolButton;

namespace stallscope {

class ElidedLabel;

// What the main window's status bar shows: the last message (red when it is an error; elided, so
// a message naming a long path never widens the window), an import's progress with its Cancel
// button while one runs, and how many profiles the workspace holds.
class StatusLine : public QWidget {
    Q_OBJECT
  public:
    explicit StatusLine(QWidget* parent = nullptr);

    void setMessage(const QString& text, bool error = false);
    QString message() const;
    // Shows the progress bar and Cancel at 0 (fraction: 0..1); hidden again by endImport().
    void beginImport();
    void setImportProgress(double fraction);
    void endImport();
    // "1 profile", "8 profiles"; nullopt clears it (the workspace could not be read).
    void setProfileCount(std::optional<int> count);

  signals:
    void cancelRequested();

  private:
    ElidedLabel* message_;
    QProgressBar* progress_;
    QToolButton* cancel_;
    QLabel* count_;
};

}  // namespace stallscope
