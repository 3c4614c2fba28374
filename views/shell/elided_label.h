#pragma once

#include <QLabel>

namespace stallscope {

// A one-line label that never asks for the width of its text: a long text is elided at the right
// and the whole of it is the tooltip. A QLabel's minimum width is its text's width, so one long
// sentence (a suggestion, an error naming a path) would widen its tool bar and with it the main
// window, past the screen.
class ElidedLabel : public QLabel {
    Q_OBJECT
  public:
    explicit ElidedLabel(QWidget* parent = nullptr);

    // Shows `text` (elided when it does not fit) and makes it the tooltip. Hides QLabel::setText
    // so the tooltip always follows.
    void setText(const QString& text);
    void clear();
    // The text as drawn at the current width ("…" at the end when elided).
    QString shownText() const;
    bool isElided() const { return shownText() != text(); }

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    QRect textRect() const;
    QString shownLine() const;
    QSize withMargins(int width) const;
};

}  // namespace stallscope
