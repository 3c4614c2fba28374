// The comparison table across machines and kernels (rows, CSV, painted for renders and exports)
// and the headless `render absorption` report.
#include <QPainter>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

#include "views/common/export.h"
#include "views/noise/absorption_parts.h"
#include "views/noise/absorption_view.h"

namespace stallscope {

using absorption_parts::inGroup;
using absorption_parts::kTableHeader;
using absorption_parts::number;
using absorption_parts::qs;
using absorption_parts::rowCells;
using exporting::csvField;
using noise::AbsorptionReport;
using noise::Curve;

namespace {

// "12", "12 (11–14)", "128 (0–192)?" (a knee not placed), "≥40".
QString absorptionCell(const AbsorptionReport& report, const Curve* curve) {
    (void)report;
    if (!curve) return QStringLiteral("–");
    const noise::CurveFit& f = curve->fit;
    if (!f.degraded) return QStringLiteral("≥") + number(f.k1) + (f.uncertain ? "?" : "");
    QString text = number(f.k1);
    if (!f.k1High)
        text += QStringLiteral(" (%1–)").arg(number(f.k1Low));
    else if (f.k1Low != f.k1 || *f.k1High != f.k1)
        text += QStringLiteral(" (%1–%2)").arg(number(f.k1Low), number(*f.k1High));
    return text + (f.uncertain ? QStringLiteral("?") : QString());
}

}  // namespace

std::vector<ComparisonRow> comparisonRows(const AbsorptionReport& report) {
    std::vector<ComparisonRow> rows;
    for (const CurveGroup& g : curveGroups(report)) {
        const Curve* byMode[4] = {};
        const Curve* any = nullptr;
        static const char* kModes[4] = {"fp_add64", "l1_ld64", "memory_ld64", "int64_add"};
        for (const Curve& c : report.curves) {
            if (!inGroup(c, g)) continue;
            if (!any || (!any->perf && c.perf)) any = &c;
            for (int m = 0; m < 4; ++m)
                if (c.mode == kModes[m]) byMode[m] = &c;
        }
        ComparisonRow row;
        row.machine = qs(g.machine);
        row.region = qs(g.region);
        row.params = qs(noise::paramsLabel(g.params));
        row.cores = any && any->cores ? QString::number(*any->cores) : QString();
        if (any && any->perf)
            row.performance =
                number(*any->perf) +
                (any->perfUnit.empty() ? QString() : QStringLiteral(" ") + qs(any->perfUnit));
        else if (any)
            row.performance =
                QStringLiteral("t0 %1 %2").arg(number(any->fit.t0), qs(any->timeUnit));
        row.fp = absorptionCell(report, byMode[0]);
        row.l1 = absorptionCell(report, byMode[1]);
        row.memory = absorptionCell(report, byMode[2]);
        row.integer = absorptionCell(report, byMode[3]);
        for (const noise::Classification& cl : report.classifications)
            if (cl.machine == g.machine && cl.region == g.region && cl.params == g.params) {
                row.cls = QString(noise::className(cl.cls)) +
                          (cl.uncertain ? QStringLiteral(" (uncertain)") : QString());
                row.evidence = qs(cl.reason);
            }
        rows.push_back(row);
    }
    return rows;
}

QString comparisonCsv(const AbsorptionReport& report) {
    QString out;
    QStringList header;
    for (const QString& h : kTableHeader) header << csvField(h);
    out += header.join(',') + '\n';
    for (const ComparisonRow& r : comparisonRows(report)) {
        QStringList cells;
        for (const QString& c : rowCells(r)) cells << csvField(c);
        out += cells.join(',') + '\n';
    }
    return out;
}

namespace {

QFont tableFont(const QFont& base) {
    QFont font = base;
    font.setPointSizeF(8.5);
    return font;
}

// Column widths sized to the content (bold header included). With `width` > 0 the evidence
// column takes what is left (it is elided); the others shrink only when they alone do not fit.
std::vector<int> tableColumns(const QFont& font, const std::vector<ComparisonRow>& rows,
                              int width) {
    QFont bold = font;
    bold.setBold(true);
    const QFontMetrics metrics(font), boldMetrics(bold);
    std::vector<int> columns;
    for (int i = 0; i < kTableHeader.size(); ++i) {
        int w = boldMetrics.horizontalAdvance(kTableHeader[i]);
        for (const ComparisonRow& r : rows)
            w = std::max(w, metrics.horizontalAdvance(rowCells(r)[i]));
        columns.push_back(w + 12);
    }
    if (width <= 0) return columns;
    int others = 0;
    for (size_t i = 0; i + 1 < columns.size(); ++i) others += columns[i];
    const int minEvidence = 120;
    if (others + minEvidence > width) {
        const double scale = double(std::max(0, width - minEvidence)) / double(others);
        others = 0;
        for (size_t i = 0; i + 1 < columns.size(); ++i) {
            columns[i] = int(columns[i] * scale);
            others += columns[i];
        }
    }
    columns.back() = std::max(minEvidence, width - others);
    return columns;
}

int tableRowHeight(const QFont& font) {
    return QFontMetrics(font).height() + 6;
}

// The comparison table drawn for the headless render and exports (the widget uses a
// QTableWidget).
void paintTable(QPainter& painter, const QRect& area, const std::vector<ComparisonRow>& rows) {
    painter.save();
    const QFont font = tableFont(painter.font());
    const int rowHeight = tableRowHeight(font);
    const std::vector<int> columns = tableColumns(font, rows, area.width());
    auto drawRow = [&](int y, const QStringList& cells, bool header) {
        int x = area.left();
        QFont f = font;
        f.setBold(header);
        painter.setFont(f);
        for (int i = 0; i < cells.size(); ++i) {
            const QRect cell(x + 6, y, columns[size_t(i)] - 8, rowHeight);
            painter.drawText(
                cell, Qt::AlignVCenter | Qt::AlignLeft,
                painter.fontMetrics().elidedText(cells[i], Qt::ElideRight, cell.width()));
            x += columns[size_t(i)];
        }
    };
    int y = area.top();
    painter.fillRect(QRect(area.left(), y, area.width(), rowHeight), QColor(235, 238, 242));
    painter.setPen(Qt::black);
    drawRow(y, kTableHeader, true);
    y += rowHeight;
    for (size_t r = 0; r < rows.size() && y + rowHeight <= area.bottom() + 1; ++r, y += rowHeight) {
        if (r % 2)
            painter.fillRect(QRect(area.left(), y, area.width(), rowHeight), QColor(246, 247, 249));
        painter.setPen(Qt::black);
        drawRow(y, rowCells(rows[r]), false);
    }
    painter.restore();
}

// The table's natural size: every column as wide as its content (at most `maxWidth` in all).
QSize tableSize(const std::vector<ComparisonRow>& rows, int maxWidth) {
    const QFont font = tableFont(QFont());
    int width = 0;
    for (int w : tableColumns(font, rows, 0)) width += w;
    return QSize(std::min(width, maxWidth), int(rows.size() + 1) * tableRowHeight(font) + 1);
}

// Columns and rows of a grid for `count` charts in `area`, the charts as close to 1.6:1 as the
// count allows; the last row's charts share its whole width, so no cell stays empty.
std::vector<QRect> chartGrid(size_t count, const QRect& area) {
    std::vector<QRect> cells;
    if (count == 0) return cells;
    size_t bestColumns = 1;
    double bestScore = INFINITY;
    for (size_t columns = 1; columns <= count; ++columns) {
        const size_t rows = (count + columns - 1) / columns;
        const double height = double(area.height()) / double(rows);
        double score = 0;
        for (size_t i = 0; i < count; ++i) {
            const size_t row = i / columns;
            const size_t inRow = row + 1 < rows ? columns : count - row * columns;
            const double width = double(area.width()) / double(inRow);
            const double misfit = std::log(width / height / 1.6);
            score += misfit * misfit;
        }
        if (score < bestScore - 1e-9) bestScore = score, bestColumns = columns;
    }
    const size_t rows = (count + bestColumns - 1) / bestColumns;
    for (size_t i = 0; i < count; ++i) {
        const size_t row = i / bestColumns, column = i % bestColumns;
        const size_t inRow = row + 1 < rows ? bestColumns : count - row * bestColumns;
        const int top = area.top() + int(row * size_t(area.height()) / rows);
        const int bottom = area.top() + int((row + 1) * size_t(area.height()) / rows);
        const int left = area.left() + int(column * size_t(area.width()) / inRow);
        const int right = area.left() + int((column + 1) * size_t(area.width()) / inRow);
        cells.emplace_back(left, top, right - left, bottom - top);
    }
    return cells;
}

}  // namespace

ReportCharts reportCharts(const AbsorptionReport& report) {
    const std::vector<CurveGroup> groups = curveGroups(report);
    const std::vector<SweepGroup> sweeps = sweepGroups(report);
    // Six charts at most, four when there is a sweep (its legend needs the room): the sweep
    // charts (up to three) come first, curve charts fill the rest, and a note says what was
    // left out.
    const size_t sweepsShown = std::min<size_t>(sweeps.size(), 3);
    const size_t curvesShown = std::min(groups.size(), (sweeps.empty() ? 6 : 4) - sweepsShown);
    ReportCharts out;
    std::vector<charts::ChartSpec>& specs = out.charts;
    for (size_t i = 0; i < sweepsShown; ++i) specs.push_back(sweepChart(report, sweeps[i]));
    for (size_t i = 0; i < curvesShown; ++i) specs.push_back(curvesChart(report, groups[i]));
    QStringList left;
    if (curvesShown < groups.size())
        left << QStringLiteral("%1 of %2 curve charts left out")
                    .arg(groups.size() - curvesShown)
                    .arg(groups.size());
    if (sweepsShown < sweeps.size())
        left << QStringLiteral("%1 of %2 sweep charts left out")
                    .arg(sweeps.size() - sweepsShown)
                    .arg(sweeps.size());
    out.note = left.isEmpty()
                   ? QString()
                   : left.join(QStringLiteral(", ")) +
                         QStringLiteral(" (the GUI's Curves and Sweep tabs show every one)");
    return out;
}

QImage renderComparisonTable(const AbsorptionReport& report) {
    const std::vector<ComparisonRow> rows = comparisonRows(report);
    QImage image(tableSize(rows, 4000), QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintTable(painter, image.rect(), rows);
    return image;
}

bool writeComparisonTableSvg(const AbsorptionReport& report, const QString& path) {
    const std::vector<ComparisonRow> rows = comparisonRows(report);
    const QSize size = tableSize(rows, 4000);
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(QStringLiteral("Absorption by machine and kernel"));
    QPainter painter;
    if (!painter.begin(&generator)) return false;
    painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    paintTable(painter, QRect(QPoint(0, 0), size), rows);
    return painter.end();
}

QImage renderAbsorptionReport(const AbsorptionReport& report, QSize size) {
    QImage image(size, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    const std::vector<ComparisonRow> rows = comparisonRows(report);
    const ReportCharts shown = reportCharts(report);
    if (shown.charts.empty()) {
        painter.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter,
                         QStringLiteral("No noise runs in this profile"));
        return image;
    }
    const std::vector<charts::ChartSpec>& specs = shown.charts;
    const QString& note = shown.note;

    QFont noteFont = painter.font();
    noteFont.setPointSizeF(9);
    noteFont.setItalic(true);
    const int noteHeight = note.isEmpty() ? 0 : QFontMetrics(noteFont).height() + 8;
    const int tableHeight =
        std::min(size.height() * 35 / 100, tableSize(rows, size.width()).height() + 8);
    const QRect gridArea(0, 0, size.width(), size.height() - tableHeight - noteHeight);
    const std::vector<QRect> cells = chartGrid(specs.size(), gridArea);
    for (size_t i = 0; i < specs.size(); ++i) {
        const charts::RenderedChart chart = charts::renderChart(specs[i], cells[i].size());
        painter.drawImage(cells[i].topLeft(), chart.image);
    }
    if (!note.isEmpty()) {
        painter.save();
        painter.setFont(noteFont);
        painter.setPen(QColor(90, 90, 90));
        painter.drawText(QRect(8, gridArea.bottom() + 1, size.width() - 16, noteHeight),
                         Qt::AlignVCenter | Qt::AlignLeft, note);
        painter.restore();
    }
    paintTable(painter, QRect(0, size.height() - tableHeight + 4, size.width(), tableHeight - 4),
               rows);
    return image;
}

QImage renderAbsorption(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options) {
    return renderAbsorptionReport(noise::analyzeProfile(workspace, profile.id), options.size);
}

}  // namespace stallscope
