#pragma once

// Small pieces every view is built from: a widget drawn by a paint function (the same function
// the headless renders call), the bold summary line of a comparison, and an image with that
// summary on top.

#include <QImage>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <functional>

class QLabel;
class QPainter;

namespace stallscope {

using PaintFunction = std::function<void(QPainter&, const QRectF&)>;

class PaintedWidget : public QWidget {
  public:
    explicit PaintedWidget(PaintFunction paint, QWidget* parent = nullptr);

  protected:
    void paintEvent(QPaintEvent*) override;

  private:
    PaintFunction paint_;
};

// The bold, selectable, wrapping summary line at the top of a comparison ("Comparing…" until
// the data is there).
QLabel* summaryLabel(QWidget* parent);

// `summary` in bold on top, then what `paint` draws below it, as one white image of `size`.
QImage imageWithSummary(QSize size, const QString& summary, const PaintFunction& paint);

}  // namespace stallscope
