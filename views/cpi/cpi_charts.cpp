#include "views/cpi/cpi_charts.h"

#include <QFontMetricsF>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "views/common/format.h"

// The CPI palette, kernel names, the MAPE chart and the metric table; the stack chart is
// stack_chart.cpp.

namespace stallscope::charts {

using ink::kAxis;
using ink::kBand;
using ink::kMuted;
using ink::kText;

namespace {

// Class hues far enough apart that shades of one class never pass for another: the warm
// classes are red (ComStruct), amber (ComData) and magenta (Sync); memory is blue (data) and
// teal (structure).
QColor classColor(const std::string& gsiClass) {
    static const std::unordered_map<std::string, QColor> colors{
        {"Base", QColor(0x3f, 0xa3, 0x4d)},    {"Idle", QColor(0x9a, 0x9a, 0x9a)},
        {"Ctrl", QColor(0x8a, 0x63, 0xc4)},    {"Sync", QColor(0xc8, 0x4f, 0x9e)},
        {"MemData", QColor(0x35, 0x72, 0xc6)}, {"MemStruct", QColor(0x1f, 0xa6, 0xa6)},
        {"ComData", QColor(0xe6, 0xa8, 0x17)}, {"ComStruct", QColor(0xd8, 0x43, 0x3b)},
    };
    const auto it = colors.find(gsiClass);
    return it == colors.end() ? QColor(0x80, 0x80, 0x80) : it->second;
}

// A colour a given fraction lighter (t > 0) or darker (t < 0), hue nudged along so the ends
// of a long ramp differ in hue as well as lightness.
QColor shade(const QColor& base, double t) {
    float h = 0, s = 0, l = 0;
    base.getHslF(&h, &s, &l);
    const bool grey = s < 0.05f;
    double lightness = l + t * 0.58;  // t in [-0.5, 0.5]
    lightness = std::clamp(lightness, 0.2, 0.86);
    double hue = grey ? 0 : std::fmod(h - t * 0.07 + 1.0, 1.0);
    double saturation = grey ? 0 : std::clamp(s * (1.0 - 0.35 * t), 0.25, 1.0);
    return QColor::fromHslF(static_cast<float>(hue), static_cast<float>(saturation),
                            static_cast<float>(lightness));
}
}  // namespace

QColor categoryColor(const std::string& category) {
    return classColor(cpi::gsiClassOf(category));
}

Palette categoryPalette(const std::vector<std::string>& categories) {
    // Categories per class in the given (stacking) order.
    std::map<std::string, std::vector<std::string>> byClass;
    std::set<std::string> seen;
    for (const std::string& c : categories)
        if (seen.insert(c).second) byClass[cpi::gsiClassOf(c)].push_back(c);
    Palette palette;
    for (const auto& [cls, members] : byClass) {
        const QColor base = classColor(cls);
        const size_t n = members.size();
        // Wider spread for more members: 2 get +-0.17, 6 and more the whole ramp.
        const double spread = n <= 1 ? 0 : std::min(1.0, 0.35 + 0.13 * static_cast<double>(n));
        for (size_t i = 0; i < n; ++i) {
            if (n == 1) {
                palette[members[i]] = base;
                continue;
            }
            // Bottom of the stack darkest, top lightest.
            const double t = (static_cast<double>(i) / static_cast<double>(n - 1) - 0.5) * spread;
            palette[members[i]] = shade(base, t);
        }
    }
    return palette;
}

QString shortKernelName(const std::string& kernel) {
    std::string_view rest = kernel;
    std::string prefix;
    if (rest.starts_with('#')) {
        const auto space = rest.find(' ');
        if (space != std::string_view::npos) {
            prefix = std::string(rest.substr(0, space + 1));
            rest.remove_prefix(space + 1);
        }
    }
    // The parameter list: the first '(' outside template arguments.
    int depth = 0;
    size_t paren = std::string_view::npos, lastSpace = std::string_view::npos;
    for (size_t i = 0; i < rest.size(); ++i) {
        const char c = rest[i];
        if (c == '<') ++depth;
        if (c == '>' && depth > 0) --depth;
        if (depth == 0 && c == ' ') lastSpace = i;
        if (depth == 0 && c == '(') {
            paren = i;
            break;
        }
    }
    std::string_view name = rest.substr(0, paren);
    std::string_view params = paren == std::string_view::npos ? "" : rest.substr(paren);
    // Drop a return type ("enable_if<...>::type kernel<...>(...)" -> "kernel<...>(...)"), only
    // from what looks like a signature ("core 0" stays).
    if (paren != std::string_view::npos && lastSpace != std::string_view::npos &&
        lastSpace < name.size())
        name.remove_prefix(lastSpace + 1);
    // Namespaces go ("at::native::kernel<...>" -> "kernel<...>"): the last qualifier outside
    // template arguments starts the name.
    {
        int d = 0;
        size_t start = 0;
        for (size_t i = 0; i + 1 < name.size(); ++i) {
            if (name[i] == '<') ++d;
            if (name[i] == '>' && d > 0) --d;
            if (d == 0 && name[i] == ':' && name[i + 1] == ':') start = i + 2;
        }
        name.remove_prefix(start);
    }
    // Nested template arguments become "<…>"; the outer ones stay (they tell instances apart).
    std::string out = prefix;
    depth = 0;
    for (char c : name) {
        if (c == '<') {
            if (++depth == 2) out += "<…>";
            if (depth >= 2) continue;
        } else if (c == '>') {
            if (--depth >= 1) continue;
        } else if (depth >= 2) {
            continue;
        }
        out.push_back(c);
    }
    out += params.size() > 24 ? std::string("(…)") : std::string(params);
    return QString::fromStdString(out);
}

void paintMapeChart(QPainter& p, const QRectF& area, const cpi::MapeReport& mape,
                    const std::vector<std::string>& models) {
    QFont font = beginChart(p, area, 9);
    drawTitle(p, area, "MAPE of total cycles against hw, per model (all kernels and per group)");
    if (mape.overall.empty()) {
        paintMessage(p, area,
                     "No MAPE: the profile needs stacks from source 'hw' and at least one model "
                     "for the same kernels.");
        p.restore();
        return;
    }
    // Groups in the order their kernels come (as the stack chart shows them).
    std::vector<std::string> groups{""};
    for (const cpi::KernelError& e : mape.kernels)
        if (!e.group.empty() && std::find(groups.begin(), groups.end(), e.group) == groups.end())
            groups.push_back(e.group);
    for (const cpi::ModelMape& m : mape.byGroup)
        if (std::find(groups.begin(), groups.end(), m.group) == groups.end())
            groups.push_back(m.group);
    std::vector<std::string> shown;
    for (const std::string& m : models)
        if (m != cpi::kHardwareSource) shown.push_back(m);
    auto find = [&](const std::string& model, const std::string& group) -> const cpi::ModelMape* {
        const auto& list = group.empty() ? mape.overall : mape.byGroup;
        for (const cpi::ModelMape& m : list)
            if (m.model == model && m.group == group) return &m;
        return nullptr;
    };
    double max = 0;
    for (const auto& m : mape.overall) max = std::max(max, m.mapePct);
    for (const auto& m : mape.byGroup) max = std::max(max, m.mapePct);
    const double axisMax = std::max(1.0, std::ceil(max * 1.15 / format::tickStep(max * 1.15, 4)) *
                                             format::tickStep(max * 1.15, 4));
    // Narrow (a chart beside tables): the legend goes in one row under the title and the plot
    // takes the whole width.
    const bool legendOnTop = area.width() < 560;
    const double plotTop = area.top() + (legendOnTop ? 52 : 34);
    const QRectF plot(area.left() + 74, plotTop, area.width() - 74 - (legendOnTop ? 12 : 200),
                      area.bottom() - 28 - plotTop);
    if (plot.width() < 20 || plot.height() < 20) {
        p.restore();
        return;
    }
    drawYAxis(p, plot, axisMax, true);
    drawYTitle(p, area.left() + 14, plot.center().y(), "MAPE (%)");
    const double groupWidth = plot.width() / static_cast<double>(groups.size());
    const double barWidth =
        std::min(56.0, groupWidth * 0.7 / static_cast<double>(std::max<size_t>(1, shown.size())));
    const QFontMetricsF fm(font);
    for (size_t g = 0; g < groups.size(); ++g) {
        const double start = plot.left() + g * groupWidth +
                             (groupWidth - barWidth * static_cast<double>(shown.size())) / 2;
        for (size_t m = 0; m < shown.size(); ++m) {
            const cpi::ModelMape* entry = find(shown[m], groups[g]);
            if (!entry) continue;
            const double h = entry->mapePct / axisMax * plot.height();
            const QRectF bar(start + static_cast<double>(m) * barWidth, plot.bottom() - h,
                             barWidth - 3, h);
            p.fillRect(bar, seriesColor(static_cast<int>(m) + 1));
            // The value over its bar when it fits there; neighbours' labels must not collide.
            const QString value = QString::number(entry->mapePct, 'f', 1) + "%";
            if (fm.horizontalAdvance(value) <= barWidth + 1) {
                p.setPen(kText);
                p.drawText(QRectF(bar.center().x() - barWidth / 2, bar.top() - 15, barWidth, 14),
                           Qt::AlignCenter, value);
            }
        }
        p.setPen(kText);
        const QString label =
            groups[g].empty() ? "all kernels" : "group " + QString::fromStdString(groups[g]);
        p.drawText(QRectF(plot.left() + g * groupWidth, plot.bottom() + 4, groupWidth, 16),
                   Qt::AlignCenter, fm.elidedText(label, Qt::ElideRight, groupWidth - 4));
    }
    if (legendOnTop) {
        double lx = plot.left();
        const double ly = area.top() + 30;
        for (size_t m = 0; m < shown.size(); ++m) {
            const QString text = QString::fromStdString(shown[m]);
            const double width = 18 + fm.horizontalAdvance(text) + 14;
            if (lx + width > area.right()) break;
            p.fillRect(QRectF(lx, ly + 2, 12, 12), seriesColor(static_cast<int>(m) + 1));
            p.setPen(kText);
            p.drawText(QRectF(lx + 16, ly, width - 16, 16), Qt::AlignLeft | Qt::AlignVCenter, text);
            lx += width;
        }
        p.restore();
        return;
    }
    double ly = plot.top();
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(kText);
    p.drawText(QRectF(plot.right() + 16, ly - 18, 130, 16), Qt::AlignLeft | Qt::AlignVCenter,
               "model");
    p.setFont(font);
    for (size_t m = 0; m < shown.size(); ++m) {
        p.fillRect(QRectF(plot.right() + 16, ly + 2, 12, 12), seriesColor(static_cast<int>(m) + 1));
        p.setPen(kText);
        const cpi::ModelMape* all = find(shown[m], "");
        const QString text = QString::fromStdString(shown[m]) +
                             (all ? QString(" (%1 kernels)").arg(all->kernels) : QString());
        p.drawText(QRectF(plot.right() + 34, ly, 164, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(text, Qt::ElideRight, 164));
        ly += 17;
    }
    p.restore();
}

void paintMetricTable(QPainter& p, const QRectF& area, const cpi::MetricTable& table,
                      const QString& title) {
    QFont font = beginChart(p, area, 8.5);
    const QFontMetricsF fm(font);
    QFont bold = font;
    bold.setBold(true);
    const QFontMetricsF boldFm(bold);
    drawTitle(p, area, title);
    if (table.rows.empty()) {
        paintMessage(p, area, "No kernel metrics in this profile.");
        p.restore();
        return;
    }
    const double rowHeight = 16;
    double top = area.top() + 30;
    // Kernels in full above the table (names are long; columns show them shortened).
    const size_t listed = std::min<size_t>(table.rows.size(), 3);
    p.setPen(kText);
    for (size_t k = 0; k < listed; ++k, top += rowHeight)
        p.drawText(QRectF(area.left() + 10, top, area.width() - 20, rowHeight),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(QString("kernel %1: ").arg(k + 1) +
                                     QString::fromStdString(table.rows[k].kernel) + " (" +
                                     QString::fromStdString(table.rows[k].source) + ")",
                                 Qt::ElideRight, area.width() - 20));
    top += 6;
    double nameWidth = 0, unitWidth = 0;
    for (size_t c = 0; c < table.columns(); ++c) {
        nameWidth =
            std::max(nameWidth, fm.horizontalAdvance(QString::fromStdString(table.names[c])));
        unitWidth =
            std::max(unitWidth, fm.horizontalAdvance(QString::fromStdString(table.units[c])));
    }
    nameWidth = std::min(nameWidth + 14, 330.0);
    unitWidth = std::min(std::max(unitWidth, fm.horizontalAdvance("unit")) + 14, 80.0);
    const double width = area.width() - 20;
    const double valueWidth = 130;
    // Kernels as value columns (as many as fit in one block), metrics down the rows, and
    // further blocks of metrics side by side when the width allows.
    const int kernelColumns =
        std::max(1, std::min(static_cast<int>(table.rows.size()),
                             static_cast<int>((width - nameWidth - unitWidth) / valueWidth)));
    const double blockWidth = nameWidth + unitWidth + kernelColumns * valueWidth + 24;
    const int blocks = std::max(1, static_cast<int>(width / blockWidth));
    const int perBlock =
        std::max(1, static_cast<int>((area.bottom() - top - rowHeight - 26) / rowHeight));
    const int shownMetrics = std::min(static_cast<int>(table.columns()), blocks * perBlock);
    const int usedBlocks = (shownMetrics + perBlock - 1) / perBlock;
    for (int block = 0; block < usedBlocks; ++block) {
        const double left = area.left() + 10 + block * blockWidth;
        const double valuesLeft = left + nameWidth + unitWidth;
        double y = top;
        p.setFont(bold);
        p.setPen(kText);
        p.drawText(QRectF(left, y, nameWidth, rowHeight), Qt::AlignLeft | Qt::AlignVCenter,
                   "metric");
        p.drawText(QRectF(left + nameWidth, y, unitWidth, rowHeight),
                   Qt::AlignLeft | Qt::AlignVCenter, "unit");
        for (int k = 0; k < kernelColumns; ++k)
            p.drawText(
                QRectF(valuesLeft + k * valueWidth, y, valueWidth - 8, rowHeight),
                Qt::AlignRight | Qt::AlignVCenter,
                table.rows.size() <= listed
                    ? QString("kernel %1").arg(k + 1)
                    : boldFm.elidedText(shortKernelName(table.rows[static_cast<size_t>(k)].kernel),
                                        Qt::ElideRight, valueWidth - 8));
        p.setFont(font);
        y += rowHeight;
        p.setPen(kAxis);
        p.drawLine(QPointF(left, y), QPointF(left + blockWidth - 24, y));
        y += 2;
        for (int r = block * perBlock; r < std::min(shownMetrics, (block + 1) * perBlock);
             ++r, y += rowHeight) {
            const size_t metric = static_cast<size_t>(r);
            if (r % 2 == 1) p.fillRect(QRectF(left, y, blockWidth - 24, rowHeight), kBand);
            p.setPen(kText);
            p.drawText(QRectF(left + 2, y, nameWidth - 8, rowHeight),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(QString::fromStdString(table.names[metric]), Qt::ElideMiddle,
                                     nameWidth - 8));
            p.setPen(kMuted);
            p.drawText(QRectF(left + nameWidth, y, unitWidth - 4, rowHeight),
                       Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(QString::fromStdString(table.units[metric]), Qt::ElideRight,
                                     unitWidth - 4));
            p.setPen(kText);
            for (int k = 0; k < kernelColumns; ++k)
                p.drawText(QRectF(valuesLeft + k * valueWidth, y, valueWidth - 8, rowHeight),
                           Qt::AlignRight | Qt::AlignVCenter,
                           fm.elidedText(QString::fromStdString(
                                             table.cellText(static_cast<size_t>(k), metric)),
                                         Qt::ElideRight, valueWidth - 8));
        }
    }
    QStringList leftOut;
    if (shownMetrics < static_cast<int>(table.columns()))
        leftOut
            << QString("%1 more metrics").arg(table.columns() - static_cast<size_t>(shownMetrics));
    if (kernelColumns < static_cast<int>(table.rows.size()))
        leftOut << QString("%1 more kernels")
                       .arg(table.rows.size() - static_cast<size_t>(kernelColumns));
    p.setPen(leftOut.isEmpty() ? kMuted : QColor(0x9a, 0x5b, 0x00));
    p.drawText(QRectF(area.left() + 10, area.bottom() - 20, width, 18),
               Qt::AlignLeft | Qt::AlignVCenter,
               (leftOut.isEmpty() ? QString("%1 metrics of %2 kernel%3")
                                        .arg(table.columns())
                                        .arg(table.rows.size())
                                        .arg(table.rows.size() == 1 ? "" : "s")
                                  : leftOut.join(", ") + " not shown") +
                   " · the Metrics table of the CPI view sorts them; `cpi --json` lists them "
                   "(kernel_metrics)");
    p.restore();
}

}  // namespace stallscope::charts
