#include "views/common/cards.h"

#include <QEvent>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace stallscope {
namespace {

constexpr int kMargin = 8;  // CardStrip's margin around the cards
// Card insides: text starts right of the accent bar.
constexpr int kLeftPad = 14;
constexpr int kRightPad = 8;
constexpr int kValueTop = 26;
// The figure's font, as a multiple of the text font: the largest that fits, not below the text.
constexpr double kLargestValueScale = 1.5;
constexpr double kSmallestValueScale = 1.0;
constexpr double kValueScaleStep = 0.05;

QFont valueFont(double scale) {
    QFont f;
    f.setPointSizeF(f.pointSizeF() * scale);
    f.setBold(true);
    return f;
}

int textWidth(const QFont& font, const QString& text, const QPaintDevice* device) {
    return device ? QFontMetrics(font, device).horizontalAdvance(text)
                  : QFontMetrics(font).horizontalAdvance(text);
}

// Columns and figure font over `width`: one row when the figures fit at the text font or
// larger, else rows of three, then two, then one.
std::pair<int, double> grid(const std::vector<Card>& cards, int width, const QPaintDevice* device) {
    const int n = static_cast<int>(cards.size());
    for (int columns : {n, 3, 2, 1}) {
        if (columns > n || columns <= 0) continue;
        const int cardWidth = (width - cards::kGap * (columns - 1)) / columns;
        const int room = cardWidth - kLeftPad - kRightPad;
        for (double scale = kLargestValueScale; scale >= kSmallestValueScale - 1e-9;
             scale -= kValueScaleStep) {
            const QFont font = valueFont(scale);
            const bool fits = std::all_of(cards.begin(), cards.end(), [&](const Card& card) {
                return textWidth(font, card.value, device) <= room;
            });
            if (fits) return {columns, scale};
        }
    }
    return {1, kSmallestValueScale};
}

}  // namespace

namespace cards {

int heightFor(const std::vector<Card>& cards, int width, const QPaintDevice* device) {
    if (cards.empty()) return 0;
    const int columns = grid(cards, width, device).first;
    const int rows = (static_cast<int>(cards.size()) + columns - 1) / columns;
    return rows * kHeight + (rows - 1) * kGap;
}

void place(std::vector<Card>& cards, const QRect& area, const QPaintDevice* device) {
    if (cards.empty()) return;
    const auto [columns, scale] = grid(cards, area.width(), device);
    const int cardWidth = (area.width() - kGap * (columns - 1)) / columns;
    for (size_t i = 0; i < cards.size(); ++i) {
        const int column = static_cast<int>(i) % columns, row = static_cast<int>(i) / columns;
        Card& card = cards[i];
        card.rect = QRect(area.left() + column * (cardWidth + kGap),
                          area.top() + row * (kHeight + kGap), cardWidth, kHeight);
        card.valueFont = valueFont(scale);
        card.valueRect = card.rect.adjusted(kLeftPad, kValueTop, -kRightPad, 0);
        card.valueRect.setHeight(QFontMetrics(card.valueFont).height());
    }
}

void paint(QPainter& p, const std::vector<Card>& placed) {
    p.save();
    for (const Card& card : placed) {
        const QRect& r = card.rect;
        p.fillRect(r, Qt::white);
        p.fillRect(QRect(r.left(), r.top(), 4, r.height()), card.accent);
        p.setPen(QColor(220, 220, 220));
        p.drawRect(r.adjusted(0, 0, -1, -1));
        p.setFont(QFont());
        p.setPen(QColor(90, 90, 90));
        // Narrow cards: titles and details elide; the figure always fits (place).
        const QRect title = r.adjusted(kLeftPad, 8, -kRightPad, 0);
        p.drawText(title, Qt::AlignLeft | Qt::AlignTop,
                   p.fontMetrics().elidedText(card.title, Qt::ElideRight, title.width()));
        p.setFont(card.valueFont);
        p.setPen(QColor(20, 20, 20));
        p.drawText(card.valueRect, Qt::AlignLeft | Qt::AlignTop, card.value);
        p.setFont(QFont());
        p.setPen(QColor(90, 90, 90));
        const QRect detail = r.adjusted(kLeftPad, 0, -kRightPad, -8);
        p.drawText(detail, Qt::AlignLeft | Qt::AlignBottom,
                   p.fontMetrics().elidedText(card.detail, Qt::ElideRight, detail.width()));
    }
    p.restore();
}

}  // namespace cards

CardStrip::CardStrip(QWidget* parent) : QWidget(parent) {
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void CardStrip::setCards(std::vector<Card> cards) {
    cards_ = std::move(cards);
    setVisible(!cards_.empty());
    updateGeometry();
    update();
}

std::vector<Card> CardStrip::placedCards() const {
    std::vector<Card> placed = cards_;
    cards::place(placed, rect().adjusted(kMargin, kMargin, -kMargin, -kMargin), this);
    return placed;
}

int CardStrip::heightForWidth(int width) const {
    return cards::heightFor(cards_, width - 2 * kMargin, this) + 2 * kMargin;
}

QSize CardStrip::sizeHint() const {
    return {640, heightForWidth(std::max(width(), 320))};
}

QSize CardStrip::minimumSizeHint() const {
    return {200, heightForWidth(std::max(width(), 200))};
}

void CardStrip::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), QColor(246, 247, 249));
    cards::paint(painter, placedCards());
}

bool CardStrip::event(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QWidget::event(event);
    const auto* help = static_cast<QHelpEvent*>(event);
    for (const Card& card : placedCards())
        if (card.rect.contains(help->pos())) {
            QToolTip::showText(help->globalPos(),
                               QStringLiteral("<b>%1</b>: %2<br>%3")
                                   .arg(card.title.toHtmlEscaped(), card.value.toHtmlEscaped(),
                                        card.detail.toHtmlEscaped()),
                               this, card.rect);
            return true;
        }
    QToolTip::hideText();
    return true;
}

}  // namespace stallscope
