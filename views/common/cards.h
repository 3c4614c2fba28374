#pragma once

// Headline cards (title, a large figure, a detail line, an accent bar), as the replay overview
// and the trace overview's transfers show them. The figure gets the largest font (up to 1.5
// times the text font) at which every card's figure fits; when even the text font does not fit
// in one row the cards wrap into rows of three, then two. A figure is never cut.

#include <QColor>
#include <QFont>
#include <QRect>
#include <QString>
#include <QWidget>
#include <vector>

class QPaintDevice;
class QPainter;

namespace stallscope {

struct Card {
    QString title, value, detail;
    QColor accent;
    QRect rect;       // the card, once placed
    QRect valueRect;  // where its figure is drawn
    QFont valueFont;
};

namespace cards {
constexpr int kHeight = 84;
constexpr int kGap = 12;
// Height the cards take over `width` (their rows).
int heightFor(const std::vector<Card>& cards, int width, const QPaintDevice* device = nullptr);
// Sets each card's rect, valueRect and valueFont inside `area`.
void place(std::vector<Card>& cards, const QRect& area, const QPaintDevice* device = nullptr);
void paint(QPainter& painter, const std::vector<Card>& placed);
}  // namespace cards

// A row (or rows) of cards filling its width; its height follows the width.
class CardStrip : public QWidget {
  public:
    explicit CardStrip(QWidget* parent = nullptr);
    void setCards(std::vector<Card> cards);
    // The cards as drawn at the current size.
    std::vector<Card> placedCards() const;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    void paintEvent(QPaintEvent*) override;
    bool event(QEvent* event) override;  // a card's whole text as its tooltip (details elide)

  private:
    std::vector<Card> cards_;
};

}  // namespace stallscope
