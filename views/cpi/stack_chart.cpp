// The CPI stack chart (paintStackChart): its layout is worked out first (heading, legend, the
// kernels that fit, bars, labels, plot), then painted part by part in a fixed order, so each part
// leaves the painter as the next expects it.
#include <QFontMetricsF>
#include <algorithm>
#include <cmath>
#include <set>

#include "views/common/format.h"
#include "views/cpi/cpi_charts.h"

namespace stallscope::charts {

using ink::kAxis;
using ink::kBand;
using ink::kMuted;
using ink::kText;

namespace {

// Each kernel's group: the hw stack's when it names one, else the first named.
std::unordered_map<std::string, std::string> kernelGroupMap(const cpi::CpiData& data) {
    std::unordered_map<std::string, std::string> groupOf;
    for (const cpi::KernelStack& s : data.stacks) {
        if (s.group.empty()) continue;
        auto [it, inserted] = groupOf.emplace(s.kernel, s.group);
        if (!inserted && s.source == cpi::kHardwareSource) it->second = s.group;
    }
    return groupOf;
}

// Display order: kernels of one group side by side, groups in first-appearance order.
std::vector<std::string> displayOrder(const cpi::CpiData& data,
                                      std::unordered_map<std::string, std::string>& groupOf) {
    std::vector<std::string> groups;
    for (const std::string& k : data.kernels)
        if (std::find(groups.begin(), groups.end(), groupOf[k]) == groups.end())
            groups.push_back(groupOf[k]);
    std::vector<std::string> out;
    for (const std::string& g : groups)
        for (const std::string& k : data.kernels)
            if (groupOf[k] == g) out.push_back(k);
    return out;
}

// The chart's font, the smaller one of totals and source labels, and their metrics.
struct StackFonts {
    QFont font, small;
    QFontMetricsF fm, smallFm;
    explicit StackFonts(const QFont& chartFont)
        : font(chartFont), small(smallerFont(chartFont)), fm(font), smallFm(small) {}
    static QFont smallerFont(QFont f) {
        f.setPointSizeF(7.5);
        return f;
    }
};

// The legend: one row per category, top of the stack first, in as many columns as it needs.
struct StackLegend {
    double column = 0;  // width of one column
    double rowHeight = 16;
    int perColumn = 1;
    double width = 0;  // all columns
    // Under the plot instead of beside it (when beside it would leave kernels out): its top.
    bool below = false;
    double top = 0, height = 0;
};

// Where everything of a stack chart goes, worked out before anything is painted.
struct StackGeometry {
    int sources = 0;
    std::unordered_map<std::string, int> sourceIndex;
    bool hasHw = false;
    StackLegend legend;
    double left = 0, plotWidth = 0;
    std::unordered_map<std::string, std::string> groupOf;
    std::vector<std::string> shown;  // kernels drawn, left to right
    int kernels = 0;
    std::unordered_map<std::string, int> kernelIndex;  // of the kernels drawn
    std::vector<std::string> kernelGroups;             // of the kernels drawn
    bool anyGroup = false;
    // Bars: hw set apart from the models by hwGap bar widths.
    double hwGap = 0, barsPerGroup = 0, groupWidth = 0, barWidth = 0, x0 = 0;
    // Kernel labels: horizontal or slanted, source names under the bars when they fit.
    double labelWidth = 0, slantLength = 0;
    bool slanted = false, sourceLabels = false;
    std::vector<QString> labels;
    QString commonPart;  // what every kernel name shares, said once in the footer
    QRectF plot;
    double axisMax = 1;

    double barX(int kernel, int source) const {
        const double inner = (groupWidth - barWidth * barsPerGroup) / 2;
        double x = x0 + kernel * groupWidth + inner + source * barWidth;
        if (source > 0) x += hwGap * barWidth;
        return x;
    }
};

constexpr double kFooter = 18;

// The title and the notice under it; returns where the chart below them starts.
double paintStackHeading(QPainter& p, const QRectF& area, const StackChartOptions& options) {
    drawTitle(p, area,
              options.title.isEmpty()
                  ? (options.normalized ? "CPI stacks (share of cycles)" : "CPI stacks (cycles)")
                  : options.title);
    double top = area.top() + 30;
    if (!options.notice.isEmpty()) {
        // As many lines as the notice needs at this width (a fixed two cut it at 1280x800).
        p.setPen(QColor(0x9a, 0x5b, 0x00));
        const QRectF wide(area.left() + 8, top - 4, area.width() - 16, area.height() / 4);
        const QRectF needed =
            p.boundingRect(wide, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, options.notice);
        p.drawText(wide, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, options.notice);
        top += std::min(needed.height(), wide.height()) + 2;
    }
    return top;
}

StackLegend stackLegend(const QFontMetricsF& fm, const std::vector<std::string>& categories,
                        const QRectF& area, double top) {
    StackLegend legend;
    double nameWidth = 0;
    for (const std::string& c : categories)
        nameWidth = std::max(nameWidth, fm.horizontalAdvance(QString::fromStdString(c)));
    legend.column = std::min(nameWidth + 26, 190.0);
    const double legendHeight = area.bottom() - top - 8;
    legend.perColumn = std::max(1, static_cast<int>(legendHeight / legend.rowHeight) - 1);
    const int legendColumns = std::max(
        1, (static_cast<int>(categories.size()) + legend.perColumn - 1) / legend.perColumn);
    legend.width = legend.column * legendColumns + 8;
    return legend;
}

// The kernels that fit (each needs room for its bars and a readable label), in display order:
// when not all do, the costliest by the reference source (hw, else the first source).
void placeKernels(StackGeometry& g, const cpi::CpiData& data, const StackChartOptions& options,
                  StackChartLayout& layout) {
    g.groupOf = kernelGroupMap(data);
    const std::vector<std::string> order = displayOrder(data, g.groupOf);
    const double minGroup = std::max(20.0, g.sources * 7.0 + 8);
    int fit = std::max(1, static_cast<int>(g.plotWidth / minGroup));
    if (options.maxKernels > 0) fit = std::min(fit, options.maxKernels);
    g.shown = order;
    if (static_cast<int>(order.size()) > fit) {
        const std::string& reference =
            g.hasHw ? std::string(cpi::kHardwareSource) : data.sources[0];
        std::unordered_map<std::string, double> cost;
        for (const cpi::KernelStack& s : data.stacks)
            if (s.source == reference) cost[s.kernel] = std::max(cost[s.kernel], s.total());
        std::vector<std::string> ranked = order;
        std::stable_sort(
            ranked.begin(), ranked.end(),
            [&](const std::string& a, const std::string& b) { return cost[a] > cost[b]; });
        ranked.resize(static_cast<size_t>(fit));
        const std::set<std::string> keep(ranked.begin(), ranked.end());
        g.shown.clear();
        for (const std::string& k : order)
            if (keep.count(k)) g.shown.push_back(k);
        layout.hiddenKernels = static_cast<int>(order.size() - g.shown.size());
    }
    g.kernels = static_cast<int>(g.shown.size());
    layout.kernels = g.shown;
}

// Bars: at most 44 px wide; hw a little apart from the models; kernels separated by a gap of at
// least a third of a group.
void placeBars(StackGeometry& g, StackChartLayout& layout) {
    const double maxBar = 44;
    g.hwGap = g.hasHw && g.sources > 1 ? 0.45 : 0;  // in bar widths
    g.barsPerGroup = g.sources + g.hwGap;
    g.groupWidth = g.plotWidth / g.kernels;
    g.groupWidth = std::min(g.groupWidth, maxBar * g.barsPerGroup / 0.66);
    g.barWidth = std::max(1.0, g.groupWidth * 0.66 / g.barsPerGroup);
    layout.barWidth = g.barWidth;
    const double blockWidth = g.groupWidth * g.kernels;
    g.x0 = g.left + (g.plotWidth - blockWidth) / 2;
}

// Labels: horizontal when a kernel's share of the width is wide enough, else slanted.
void placeLabels(StackGeometry& g, const QFontMetricsF& fm) {
    g.labelWidth = std::min(std::max(g.groupWidth, g.plotWidth / g.kernels), 360.0);
    g.slanted = g.labelWidth < 96;
    g.sourceLabels = !g.slanted && g.barWidth >= 14 && g.sources > 1;
    for (const std::string& k : g.shown) g.labels.push_back(shortKernelName(k));
    // What all names share is said once in the footer; the labels keep what differs.
    g.labels = distinctLabels(g.labels, &g.commonPart);
    double longest = 0;
    for (const QString& l : g.labels) longest = std::max(longest, fm.horizontalAdvance(l));
    g.slantLength = std::min(longest + 4, 170.0);
    for (const std::string& k : g.shown) {
        g.kernelGroups.push_back(g.groupOf[k]);
        g.anyGroup = g.anyGroup || !g.kernelGroups.back().empty();
    }
}

StackGeometry stackGeometry(const QFontMetricsF& fm, const QRectF& area, double top,
                            const cpi::CpiData& data, const StackChartOptions& options,
                            StackChartLayout& layout) {
    StackGeometry g;
    g.sources = static_cast<int>(data.sources.size());
    for (int i = 0; i < g.sources; ++i) g.sourceIndex[data.sources[i]] = i;
    g.hasHw = g.sourceIndex.count(cpi::kHardwareSource) > 0;
    g.legend = stackLegend(fm, data.categories, area, top);
    g.left = area.left() + 74;
    g.plotWidth = area.right() - g.legend.width - 16 - g.left;
    // A legend beside a narrow plot would leave kernels out (9 kernels at 1280x800 lost 3):
    // then it goes under the plot, in as many columns as the width holds.
    const double minGroup = std::max(20.0, g.sources * 7.0 + 8);
    const size_t kernelCount = data.kernels.size();
    if (g.plotWidth / minGroup < double(kernelCount) && options.maxKernels <= 0) {
        StackLegend& legend = g.legend;
        const int across =
            std::max(1, static_cast<int>((area.width() - 16) / std::max(legend.column, 1.0)));
        const int rows = (static_cast<int>(data.categories.size()) + across - 1) / across;
        legend.below = true;
        legend.perColumn = std::max(rows, 1);
        legend.width = legend.column * across;
        legend.height = 18 + rows * legend.rowHeight + 4;
        legend.top = area.bottom() - kFooter - legend.height;
        g.plotWidth = area.right() - 16 - g.left;
    }
    placeKernels(g, data, options, layout);
    placeBars(g, layout);
    placeLabels(g, fm);
    const double labelBand = (g.sourceLabels ? 15 : 0) +
                             (g.slanted ? g.slantLength * 0.64 + 10 : 18) + (g.anyGroup ? 22 : 0);
    g.plot = QRectF(g.left, top + 14, g.plotWidth,
                    area.bottom() - kFooter - g.legend.height - labelBand - top - 14);
    return g;
}

// The top of the cycles axis: a tick above the tallest bar drawn (100 when normalized).
double stackAxisMax(StackGeometry& g, const cpi::CpiData& data, const StackChartOptions& options) {
    double maxTotal = 0;
    for (int i = 0; i < g.kernels; ++i) g.kernelIndex[g.shown[i]] = i;
    for (const cpi::KernelStack& s : data.stacks)
        if (g.kernelIndex.count(s.kernel)) maxTotal = std::max(maxTotal, s.total());
    return options.normalized
               ? 100.0
               : (maxTotal > 0 ? std::ceil(maxTotal * 1.06 / format::tickStep(maxTotal * 1.06, 5)) *
                                     format::tickStep(maxTotal * 1.06, 5)
                               : 1.0);
}

// Group bands behind the bars.
void paintGroupBands(QPainter& p, const StackGeometry& g) {
    for (int k = 0, band = 0; k < g.kernels;) {
        int end = k;
        while (end < g.kernels && g.kernelGroups[end] == g.kernelGroups[k]) ++end;
        if (g.anyGroup && band % 2 == 1)
            p.fillRect(QRectF(g.x0 + k * g.groupWidth, g.plot.top(), (end - k) * g.groupWidth,
                              g.plot.height()),
                       kBand);
        ++band;
        k = end;
    }
}

// The segments of one stack's bar, bottom up; returns the top of the bar.
double paintBarSegments(QPainter& p, const StackGeometry& g, const cpi::CpiData& data, size_t si,
                        double x, double total, const Palette& colors,
                        const StackChartOptions& options, std::vector<StackSegment>* segments) {
    const cpi::KernelStack& s = data.stacks[si];
    double y = g.plot.bottom();
    for (const std::string& category : data.categories) {
        const auto it = s.cycles.find(category);
        if (it == s.cycles.end() || it->second <= 0) continue;
        const double value = options.normalized ? it->second / total * 100 : it->second;
        const double h = value / g.axisMax * g.plot.height();
        const QRectF rect(x, y - h, g.barWidth, h);
        const QColor color = colors.at(category);
        p.fillRect(rect, color);
        // A hairline between segments keeps neighbouring shades apart.
        if (h >= 4 && g.barWidth >= 5) {
            p.setPen(QPen(QColor(255, 255, 255, 200), 1));
            p.drawLine(QPointF(x, y - h), QPointF(x + g.barWidth - 1, y - h));
        }
        // The share inside segments tall and wide enough to hold it.
        if (h >= 15 && g.barWidth >= 30) {
            p.setPen(color.lightnessF() > 0.55 ? kText : QColor(Qt::white));
            p.drawText(rect, Qt::AlignCenter,
                       QString::number(it->second / total * 100, 'f', 0) + "%");
        }
        if (segments)
            segments->push_back(
                {rect, static_cast<int>(si), category, it->second, it->second / total, color});
        y -= h;
    }
    return y;
}

// One bar per stack of a drawn kernel: its segments, the hw outline, the total on top and the
// source under it.
void paintBars(QPainter& p, const StackGeometry& g, const StackFonts& fonts,
               const cpi::CpiData& data, const Palette& colors, const StackChartOptions& options,
               std::vector<StackSegment>* segments) {
    p.setFont(fonts.small);
    for (size_t si = 0; si < data.stacks.size(); ++si) {
        const cpi::KernelStack& s = data.stacks[si];
        const auto ki = g.kernelIndex.find(s.kernel);
        if (ki == g.kernelIndex.end()) continue;
        const double total = s.total();
        if (!(total > 0)) continue;
        const auto source = g.sourceIndex.find(s.source);
        const int src = source == g.sourceIndex.end() ? 0 : source->second;
        const double x = g.barX(ki->second, src);
        const double y = paintBarSegments(p, g, data, si, x, total, colors, options, segments);
        // The measured bar is outlined: the reference the models are judged against.
        if (s.source == cpi::kHardwareSource && g.sources > 1 && g.barWidth >= 4) {
            p.setPen(QPen(QColor(0x20, 0x20, 0x20), 1.2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x, y, g.barWidth, g.plot.bottom() - y));
        }
        // Total on top of the bar when it fits.
        if (!options.normalized && g.barWidth >= 14) {
            p.setPen(kText);
            const QString label = format::shortNumber(total);
            // Room of its own: the hw bar has the gap beside it, model bars touch their
            // neighbours, so their totals must fit the bar itself or they run together.
            const bool hw = s.source == cpi::kHardwareSource;
            const double room = g.barWidth + (hw ? g.hwGap * g.barWidth : 2);
            if (fonts.smallFm.horizontalAdvance(label) <= room)
                p.drawText(QRectF(x + g.barWidth / 2 - room / 2, y - 14, room, 13),
                           Qt::AlignHCenter | Qt::AlignBottom, label);
        }
        if (g.sourceLabels) {
            QFont f = fonts.small;
            f.setBold(s.source == cpi::kHardwareSource);
            p.setFont(f);
            p.setPen(s.source == cpi::kHardwareSource ? kText : kMuted);
            const double room = g.barWidth + 2;  // neighbouring labels must not run together
            p.drawText(QRectF(x + g.barWidth / 2 - room / 2, g.plot.bottom() + 2, room, 13),
                       Qt::AlignCenter,
                       QFontMetricsF(f).elidedText(QString::fromStdString(s.source), Qt::ElideRight,
                                                   room));
            p.setFont(fonts.small);
        }
    }
    p.setFont(fonts.font);
}

// Where the kernel labels start, under the bars (and the source labels).
double labelTopOf(const StackGeometry& g) {
    return g.plot.bottom() + (g.sourceLabels ? 16 : 4);
}

void paintKernelLabels(QPainter& p, const StackGeometry& g, const QFontMetricsF& fm,
                       const QRectF& area) {
    p.setPen(kText);
    const double labelTop = labelTopOf(g);
    for (int k = 0; k < g.kernels; ++k) {
        const double centre = g.x0 + (k + 0.5) * g.groupWidth;
        if (!g.slanted) {
            const double width = g.labelWidth - 6;
            p.drawText(QRectF(centre - width / 2, labelTop, width, 16),
                       Qt::AlignHCenter | Qt::AlignTop,
                       // Middle: names of one family differ at either end (shapes, suffixes).
                       fm.elidedText(g.labels[k], Qt::ElideMiddle, width));
        } else {
            // Slanted up to the bar; no longer than the room left of it.
            const double room = std::min(g.slantLength, (centre + 3 - area.left() - 4) / 0.766);
            p.save();
            p.translate(centre + 3, labelTop + 2);
            p.rotate(-40);
            p.drawText(QRectF(-room, -8, room, 16), Qt::AlignRight | Qt::AlignVCenter,
                       fm.elidedText(g.labels[k], Qt::ElideMiddle, room));
            p.restore();
        }
    }
}

// Group brackets under the labels.
void paintGroupBrackets(QPainter& p, const StackGeometry& g, const QFont& font) {
    const double gy = labelTopOf(g) + (g.slanted ? g.slantLength * 0.64 + 8 : 18);
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    for (int k = 0; k < g.kernels;) {
        int end = k;
        while (end < g.kernels && g.kernelGroups[end] == g.kernelGroups[k]) ++end;
        const double a = g.x0 + k * g.groupWidth + 4, b = g.x0 + end * g.groupWidth - 4;
        p.setPen(QPen(kAxis, 1));
        p.drawLine(QPointF(a, gy), QPointF(b, gy));
        p.drawLine(QPointF(a, gy - 4), QPointF(a, gy));
        p.drawLine(QPointF(b, gy - 4), QPointF(b, gy));
        p.setPen(kText);
        const QString name = g.kernelGroups[k].empty() ? QString("(no group)")
                                                       : QString::fromStdString(g.kernelGroups[k]);
        p.drawText(QRectF(a, gy + 1, b - a, 16), Qt::AlignHCenter | Qt::AlignTop,
                   QFontMetricsF(bold).elidedText(name, Qt::ElideRight, b - a));
        k = end;
    }
    p.setFont(font);
}

// Footer: what is drawn and what is left out.
void paintStackFooter(QPainter& p, const StackGeometry& g, const QFontMetricsF& fm,
                      const QRectF& area, const cpi::CpiData& data, int hiddenKernels) {
    std::string names;
    for (const std::string& s : data.sources) names += (names.empty() ? "" : ", ") + s;
    // Kernels left out come first: an elided footer must not hide that some are missing.
    QString text = hiddenKernels > 0
                       ? QString(
                             "%1 of %2 kernels drawn (the costliest by %3 cycles; all in "
                             "the table) × %4 source%5 (%6)")
                             .arg(g.kernels)
                             .arg(g.kernels + hiddenKernels)
                             .arg(g.hasHw ? "hw" : QString::fromStdString(data.sources[0]))
                       : QString("%1 kernel%2 × %3 source%4 (%5)")
                             .arg(g.kernels)
                             .arg(g.kernels == 1 ? "" : "s");
    text = text.arg(g.sources).arg(g.sources == 1 ? "" : "s").arg(QString::fromStdString(names));
    if (g.hasHw && g.sources > 1) text += " · hw outlined, models to its right";
    if (!g.commonPart.isEmpty()) text += " · names shortened from " + g.commonPart;
    p.setPen(hiddenKernels > 0 ? QColor(0x9a, 0x5b, 0x00) : kMuted);
    const QRectF& plot = g.plot;
    p.drawText(
        QRectF(plot.left(), area.bottom() - kFooter, area.right() - plot.left() - 8, kFooter),
        Qt::AlignLeft | Qt::AlignVCenter,
        fm.elidedText(text, Qt::ElideRight, area.right() - plot.left() - 8));
}

// Legend, top of stack first so it reads like the bars.
void paintStackLegend(QPainter& p, const StackGeometry& g, const StackFonts& fonts,
                      const cpi::CpiData& data, const Palette& colors) {
    const StackLegend& legend = g.legend;
    // Beside the plot, or under its labels from the chart's left edge.
    const double lx0 = legend.below ? g.left - 66 : g.plot.right() + 16;
    const double ly0 = legend.below ? legend.top + 18 : g.plot.top();
    p.setPen(kText);
    {
        QFont bold = fonts.font;
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(lx0, ly0 - 16, legend.width, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   data.classes ? "GSI class" : "category");
        p.setFont(fonts.font);
    }
    int row = 0;
    for (auto it = data.categories.rbegin(); it != data.categories.rend(); ++it, ++row) {
        const double lx = lx0 + (row / legend.perColumn) * legend.column;
        const double ly = ly0 + (row % legend.perColumn) * legend.rowHeight;
        p.fillRect(QRectF(lx, ly + 2, 12, 12), colors.at(*it));
        p.setPen(kText);
        p.drawText(
            QRectF(lx + 17, ly, legend.column - 20, legend.rowHeight),
            Qt::AlignLeft | Qt::AlignVCenter,
            fonts.fm.elidedText(QString::fromStdString(*it), Qt::ElideRight, legend.column - 20));
    }
}

}  // namespace

StackChartLayout paintStackChart(QPainter& p, const QRectF& area, const cpi::CpiData& data,
                                 const StackChartOptions& options,
                                 std::vector<StackSegment>* segments) {
    StackChartLayout layout;
    const StackFonts fonts(beginChart(p, area, 9));
    if (data.stacks.empty()) {
        paintMessage(p, area,
                     "No CPI stacks in this profile." +
                         (options.notice.isEmpty() ? QString() : "\n\n" + options.notice));
        p.restore();
        return layout;
    }
    const double top = paintStackHeading(p, area, options);
    const Palette colors = categoryPalette(data.categories);
    StackGeometry g = stackGeometry(fonts.fm, area, top, data, options, layout);
    if (g.plot.width() < 20 || g.plot.height() < 40) {
        p.restore();
        return layout;
    }
    g.axisMax = stackAxisMax(g, data, options);

    paintGroupBands(p, g);
    drawYAxis(p, g.plot, g.axisMax, options.normalized);
    drawYTitle(p, area.left() + 14, g.plot.center().y(),
               options.normalized ? "share of cycles (%)" : "cycles");
    paintBars(p, g, fonts, data, colors, options, segments);
    paintKernelLabels(p, g, fonts.fm, area);
    if (g.anyGroup) paintGroupBrackets(p, g, fonts.font);
    paintStackFooter(p, g, fonts.fm, area, data, layout.hiddenKernels);
    paintStackLegend(p, g, fonts, data, colors);
    p.restore();
    return layout;
}

}  // namespace stallscope::charts
