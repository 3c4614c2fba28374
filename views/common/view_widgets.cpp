#include "views/common/view_widgets.h"

#include <QLabel>
#include <QPainter>

namespace stallscope {

PaintedWidget::PaintedWidget(PaintFunction paint, QWidget* parent)
    : QWidget(parent), paint_(std::move(paint)) {
    setMinimumSize(320, 220);
}

void PaintedWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paint_(painter, QRectF(rect()));
}

QLabel* summaryLabel(QWidget* parent) {
    auto* label = new QLabel(QObject::tr("Comparing…"), parent);
    QFont bold = label->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    label->setFont(bold);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    return label;
}

QImage imageWithSummary(QSize size, const QString& summary, const PaintFunction& paint) {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    QFont font = painter.font();
    font.setBold(true);
    font.setPointSizeF(11);
    painter.setFont(font);
    painter.setPen(Qt::black);
    painter.drawText(QRect(10, 4, size.width() - 20, 26), Qt::AlignLeft | Qt::AlignVCenter,
                     summary);
    font.setBold(false);
    font.setPointSizeF(9);
    painter.setFont(font);
    paint(painter, QRectF(0, 34, size.width(), size.height() - 34));
    return image;
}

}  // namespace stallscope
