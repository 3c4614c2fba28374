#pragma once

#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <functional>
#include <vector>

class QWidget;

namespace stallscope::charts {

// The kit for custom-painted charts (the CPI, estimates, steps and hosts charts, the headless
// renderer and the PNG/SVG export): one paint function per chart, drawing into any QPainter.
// Kind-neutral: a kind's own charts live in its views/ folder (CPI stacks in views/cpi/).

// The kit's colours: text, secondary text, grid lines, axes and alternate bands.
namespace ink {
inline const QColor kText(0x30, 0x30, 0x30);
inline const QColor kMuted(0x70, 0x70, 0x70);
inline const QColor kGrid(0xe4, 0xe4, 0xe4);
inline const QColor kAxis(0x90, 0x90, 0x90);
inline const QColor kBand(0xf4, 0xf6, 0xf9);
}  // namespace ink

// Distinct colours for series (models, estimators) by position.
QColor seriesColor(int index);

// Labels with what they all share at the start or end replaced by "…" (when that is long), so
// the part that tells them apart stays visible; `common` gets the shared part.
std::vector<QString> distinctLabels(const std::vector<QString>& labels, QString* common);

// Starts a chart in `area`: saves the painter (the chart restores it), clears the area to white
// and sets the chart's font at `pointSize`, which it returns.
QFont beginChart(QPainter& painter, const QRectF& area, double pointSize);

// A centred message where a chart has nothing to draw.
void paintMessage(QPainter& painter, const QRectF& area, const QString& text);

// The chart's title, bold, at the top left of `area` (elided to its width).
void drawTitle(QPainter& painter, const QRectF& area, const QString& text);

// A y axis from 0 to `max` left of `plot` with grid lines across it, ticks labelled as numbers
// or percentages, and the axis lines along the plot's left and bottom.
void drawYAxis(QPainter& painter, const QRectF& plot, double max, bool percent);

// The y axis title, turned upright, centred on (x, centreY).
void drawYTitle(QPainter& painter, double x, double centreY, const QString& text);

// Writes `paint` as SVG (size in pixels). Returns false when the file cannot be written.
bool writeSvg(const QString& path, const QSize& size, const QString& title,
              const std::function<void(QPainter&, const QRectF&)>& paint);

}  // namespace stallscope::charts
