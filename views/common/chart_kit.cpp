#include "views/common/chart_kit.h"

#include <QFontMetricsF>
#include <QSvgGenerator>
#include <algorithm>

#include "views/common/format.h"

namespace stallscope::charts {

using ink::kAxis;
using ink::kGrid;
using ink::kText;

QColor seriesColor(int index) {
    static const QColor palette[] = {QColor(0x33, 0x33, 0x33), QColor(0x1f, 0x77, 0xb4),
                                     QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd),
                                     QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2)};
    return palette[static_cast<size_t>(index) % std::size(palette)];
}

std::vector<QString> distinctLabels(const std::vector<QString>& labels, QString* common) {
    if (common) common->clear();
    if (labels.size() < 2) return labels;
    // Longest common prefix and suffix (not overlapping in the shortest label).
    qsizetype prefix = labels[0].size(), suffix = labels[0].size();
    qsizetype shortest = labels[0].size();
    for (const QString& l : labels) {
        shortest = std::min(shortest, l.size());
        qsizetype p = 0;
        while (p < prefix && p < l.size() && l[p] == labels[0][p]) ++p;
        prefix = p;
        qsizetype s = 0;
        while (s < suffix && s < l.size() &&
               l[l.size() - 1 - s] == labels[0][labels[0].size() - 1 - s])
            ++s;
        suffix = s;
    }
    // Cut at a boundary the reader sees ("…_kernel<" rather than inside a word), and only what
    // is long enough to matter.
    auto boundary = [](QChar c) { return !c.isLetterOrNumber(); };
    while (prefix > 0 && !boundary(labels[0][prefix - 1])) --prefix;
    while (suffix > 0 && !boundary(labels[0][labels[0].size() - suffix])) --suffix;
    if (prefix < 10) prefix = 0;
    if (suffix < 10) suffix = 0;
    if (prefix + suffix >= shortest) suffix = 0;
    if (prefix >= shortest) prefix = 0;
    if (prefix == 0 && suffix == 0) return labels;
    std::vector<QString> out;
    for (const QString& l : labels)
        out.push_back((prefix ? "…" : "") + l.mid(prefix, l.size() - prefix - suffix) +
                      (suffix ? "…" : ""));
    if (common)
        *common = labels[0].left(prefix) + (prefix ? "…" : "") +
                  (suffix ? labels[0].right(suffix) : QString());
    return out;
}

QFont beginChart(QPainter& painter, const QRectF& area, double pointSize) {
    painter.save();
    painter.fillRect(area, Qt::white);
    QFont font = painter.font();
    font.setPointSizeF(pointSize);
    painter.setFont(font);
    return font;
}

void paintMessage(QPainter& painter, const QRectF& area, const QString& text) {
    painter.setPen(kText);
    painter.drawText(area.adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, text);
}

void drawTitle(QPainter& p, const QRectF& area, const QString& text) {
    p.save();
    QFont bold = p.font();
    bold.setBold(true);
    bold.setPointSizeF(10);
    p.setFont(bold);
    p.setPen(kText);
    p.drawText(QRectF(area.left() + 8, area.top() + 4, area.width() - 16, 22),
               Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(bold).elidedText(text, Qt::ElideRight, area.width() - 16));
    p.restore();
}

void drawYAxis(QPainter& p, const QRectF& plot, double max, bool percent) {
    const double step = format::tickStep(max, 5);
    p.save();
    QFont font = p.font();
    font.setPointSizeF(8);
    p.setFont(font);
    for (double v = 0; v <= max * 1.0001; v += step) {
        const double y = plot.bottom() - v / max * plot.height();
        p.setPen(kGrid);
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(kText);
        const QString label = percent ? QString::number(v, 'g', 3) + "%" : format::shortNumber(v);
        p.drawText(QRectF(plot.left() - 62, y - 8, 56, 16), Qt::AlignRight | Qt::AlignVCenter,
                   label);
    }
    p.setPen(kAxis);
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    p.drawLine(plot.bottomLeft(), plot.topLeft());
    p.restore();
}

void drawYTitle(QPainter& p, double x, double centreY, const QString& text) {
    p.save();
    p.translate(x, centreY);
    p.rotate(-90);
    p.setPen(kText);
    p.drawText(QRectF(-120, -10, 240, 20), Qt::AlignCenter, text);
    p.restore();
}

bool writeSvg(const QString& path, const QSize& size, const QString& title,
              const std::function<void(QPainter&, const QRectF&)>& paint) {
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(title);
    QPainter painter;
    if (!painter.begin(&generator)) return false;
    paint(painter, QRectF(QPointF(0, 0), QSizeF(size)));
    return painter.end();
}

}  // namespace stallscope::charts
