#include "views/shell/elided_label.h"

#include <QPainter>
#include <QStyle>

namespace stallscope {
namespace {

// Wide enough for a word or two; the layout gives the label whatever room is left beyond that.
constexpr int kMinimumChars = 6;
constexpr int kPreferredChars = 24;

}  // namespace

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    setTextFormat(Qt::PlainText);
    setWordWrap(false);
}

void ElidedLabel::setText(const QString& text) {
    QLabel::setText(text);
    setToolTip(text);
}

void ElidedLabel::clear() {
    setText(QString());
}

QRect ElidedLabel::textRect() const {
    const int m = margin();
    return contentsRect().adjusted(m, m, -m, -m);
}

// One line: a text with line breaks shows its first line, marked as cut like an elided one.
QString ElidedLabel::shownLine() const {
    const QString line = text().section(QLatin1Char('\n'), 0, 0);
    return line == text() ? line : line + QStringLiteral(" …");
}

QString ElidedLabel::shownText() const {
    return fontMetrics().elidedText(shownLine(), Qt::ElideRight, textRect().width());
}

QSize ElidedLabel::minimumSizeHint() const {
    return withMargins(fontMetrics().averageCharWidth() * kMinimumChars);
}

QSize ElidedLabel::sizeHint() const {
    const int preferred = fontMetrics().averageCharWidth() * kPreferredChars;
    return withMargins(std::min(preferred, fontMetrics().horizontalAdvance(shownLine())));
}

// One line of text `width` wide, with the label's margin and frame around it.
QSize ElidedLabel::withMargins(int width) const {
    const QMargins frame = contentsMargins();
    return {width + 2 * margin() + frame.left() + frame.right(),
            fontMetrics().height() + 2 * margin() + frame.top() + frame.bottom()};
}

void ElidedLabel::paintEvent(QPaintEvent* event) {
    QFrame::paintEvent(event);  // frame and style-sheet background
    QPainter painter(this);
    style()->drawItemText(&painter, textRect(),
                          QStyle::visualAlignment(layoutDirection(), alignment()), palette(),
                          isEnabled(), shownText(), foregroundRole());
}

}  // namespace stallscope
