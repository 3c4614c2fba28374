#include "views/common/chart_kit.h"
#include "views/common/format.h"

#include <QFontMetricsF>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace stallscope::charts {

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

const QColor kText(0x30, 0x30, 0x30);
const QColor kMuted(0x70, 0x70, 0x70);
const QColor kGrid(0xe4, 0xe4, 0xe4);
const QColor kAxis(0x90, 0x90, 0x90);
const QColor kBand(0xf4, 0xf6, 0xf9);

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

QColor seriesColor(int index) {
    static const QColor palette[] = {QColor(0x33, 0x33, 0x33), QColor(0x1f, 0x77, 0xb4),
                                     QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd),
                                     QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2)};
    return palette[static_cast<size_t>(index) % std::size(palette)];
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

StackChartLayout paintStackChart(QPainter& p, const QRectF& area, const cpi::CpiData& data,
                                 const StackChartOptions& options,
                                 std::vector<StackSegment>* segments) {
    StackChartLayout layout;
    QFont font = beginChart(p, area, 9);
    const QFontMetricsF fm(font);
    QFont small = font;
    small.setPointSizeF(7.5);
    const QFontMetricsF smallFm(small);
    if (data.stacks.empty()) {
        paintMessage(p, area,
                     "No CPI stacks in this profile." +
                         (options.notice.isEmpty() ? QString() : "\n\n" + options.notice));
        p.restore();
        return layout;
    }
    drawTitle(p, area,
              options.title.isEmpty()
                  ? (options.normalized ? "CPI stacks (share of cycles)" : "CPI stacks (cycles)")
                  : options.title);
    double top = area.top() + 30;
    if (!options.notice.isEmpty()) {
        p.setPen(QColor(0x9a, 0x5b, 0x00));
        const QRectF noticeRect(area.left() + 8, top - 4, area.width() - 16, 30);
        p.drawText(noticeRect, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, options.notice);
        top += 28;
    }

    const Palette colors = categoryPalette(data.categories);
    const int sources = static_cast<int>(data.sources.size());
    std::unordered_map<std::string, int> sourceIndex;
    for (int i = 0; i < sources; ++i) sourceIndex[data.sources[i]] = i;
    const bool hasHw = sourceIndex.count(cpi::kHardwareSource) > 0;

    // Legend: one row per category, top of the stack first, in as many columns as it needs.
    double nameWidth = 0;
    for (const std::string& c : data.categories)
        nameWidth = std::max(nameWidth, fm.horizontalAdvance(QString::fromStdString(c)));
    const double legendColumn = std::min(nameWidth + 26, 190.0);
    const double rowHeight = 16;
    const double legendHeight = area.bottom() - top - 8;
    const int perColumn = std::max(1, static_cast<int>(legendHeight / rowHeight) - 1);
    const int legendColumns =
        std::max(1, (static_cast<int>(data.categories.size()) + perColumn - 1) / perColumn);
    const double legendWidth = legendColumn * legendColumns + 8;

    // Kernels that fit: each needs room for its bars and a readable label.
    const double left = area.left() + 74;
    const double plotWidth = area.right() - legendWidth - 16 - left;
    std::unordered_map<std::string, std::string> groupOf = kernelGroupMap(data);
    const std::vector<std::string> order = displayOrder(data, groupOf);
    const double minGroup = std::max(20.0, sources * 7.0 + 8);
    int fit = std::max(1, static_cast<int>(plotWidth / minGroup));
    if (options.maxKernels > 0) fit = std::min(fit, options.maxKernels);
    std::vector<std::string> shown = order;
    if (static_cast<int>(order.size()) > fit) {
        // The costliest kernels by the reference source (hw, else the first source).
        const std::string& reference = hasHw ? std::string(cpi::kHardwareSource) : data.sources[0];
        std::unordered_map<std::string, double> cost;
        for (const cpi::KernelStack& s : data.stacks)
            if (s.source == reference) cost[s.kernel] = std::max(cost[s.kernel], s.total());
        std::vector<std::string> ranked = order;
        std::stable_sort(
            ranked.begin(), ranked.end(),
            [&](const std::string& a, const std::string& b) { return cost[a] > cost[b]; });
        ranked.resize(static_cast<size_t>(fit));
        const std::set<std::string> keep(ranked.begin(), ranked.end());
        shown.clear();
        for (const std::string& k : order)
            if (keep.count(k)) shown.push_back(k);
        layout.hiddenKernels = static_cast<int>(order.size() - shown.size());
    }
    const int kernels = static_cast<int>(shown.size());
    layout.kernels = shown;

    // Bars: at most 44 px wide; hw a little apart from the models; kernels separated by a gap
    // of at least a third of a group.
    const double maxBar = 44;
    const double hwGap = hasHw && sources > 1 ? 0.45 : 0;  // in bar widths
    const double barsPerGroup = sources + hwGap;
    double groupWidth = plotWidth / kernels;
    groupWidth = std::min(groupWidth, maxBar * barsPerGroup / 0.66);
    const double barWidth = std::max(1.0, groupWidth * 0.66 / barsPerGroup);
    layout.barWidth = barWidth;
    const double blockWidth = groupWidth * kernels;
    const double x0 = left + (plotWidth - blockWidth) / 2;

    // Labels: horizontal when a kernel's share of the width is wide enough, else slanted.
    const double labelWidth = std::min(std::max(groupWidth, plotWidth / kernels), 360.0);
    const bool slanted = labelWidth < 96;
    const bool sourceLabels = !slanted && barWidth >= 14 && sources > 1;
    std::vector<QString> labels;
    for (const std::string& k : shown) labels.push_back(shortKernelName(k));
    // What all names share is said once in the footer; the labels keep what differs.
    QString commonPart;
    labels = distinctLabels(labels, &commonPart);
    double longest = 0;
    for (const QString& l : labels) longest = std::max(longest, fm.horizontalAdvance(l));
    const double slantLength = std::min(longest + 4, 170.0);
    std::vector<std::string> kernelGroups;
    bool anyGroup = false;
    for (const std::string& k : shown) {
        kernelGroups.push_back(groupOf[k]);
        anyGroup = anyGroup || !kernelGroups.back().empty();
    }
    const double labelBand =
        (sourceLabels ? 15 : 0) + (slanted ? slantLength * 0.64 + 10 : 18) + (anyGroup ? 22 : 0);
    const double footer = 18;
    const QRectF plot(left, top + 14, plotWidth, area.bottom() - footer - labelBand - top - 14);
    if (plot.width() < 20 || plot.height() < 40) {
        p.restore();
        return layout;
    }

    double maxTotal = 0;
    std::unordered_map<std::string, int> kernelIndex;
    for (int i = 0; i < kernels; ++i) kernelIndex[shown[i]] = i;
    for (const cpi::KernelStack& s : data.stacks)
        if (kernelIndex.count(s.kernel)) maxTotal = std::max(maxTotal, s.total());
    const double axisMax =
        options.normalized
            ? 100.0
            : (maxTotal > 0 ? std::ceil(maxTotal * 1.06 / format::tickStep(maxTotal * 1.06, 5)) *
                                  format::tickStep(maxTotal * 1.06, 5)
                            : 1.0);

    // Group bands behind the bars.
    for (int k = 0, band = 0; k < kernels;) {
        int end = k;
        while (end < kernels && kernelGroups[end] == kernelGroups[k]) ++end;
        if (anyGroup && band % 2 == 1)
            p.fillRect(
                QRectF(x0 + k * groupWidth, plot.top(), (end - k) * groupWidth, plot.height()),
                kBand);
        ++band;
        k = end;
    }
    drawYAxis(p, plot, axisMax, options.normalized);
    drawYTitle(p, area.left() + 14, plot.center().y(),
               options.normalized ? "share of cycles (%)" : "cycles");

    auto barX = [&](int kernel, int source) {
        const double inner = (groupWidth - barWidth * barsPerGroup) / 2;
        double x = x0 + kernel * groupWidth + inner + source * barWidth;
        if (source > 0) x += hwGap * barWidth;
        return x;
    };
    p.setFont(small);
    for (size_t si = 0; si < data.stacks.size(); ++si) {
        const cpi::KernelStack& s = data.stacks[si];
        const auto ki = kernelIndex.find(s.kernel);
        if (ki == kernelIndex.end()) continue;
        const double total = s.total();
        if (!(total > 0)) continue;
        const int src = sourceIndex[s.source];
        const double x = barX(ki->second, src);
        double y = plot.bottom();
        for (const std::string& category : data.categories) {
            const auto it = s.cycles.find(category);
            if (it == s.cycles.end() || it->second <= 0) continue;
            const double value = options.normalized ? it->second / total * 100 : it->second;
            const double h = value / axisMax * plot.height();
            const QRectF rect(x, y - h, barWidth, h);
            const QColor color = colors.at(category);
            p.fillRect(rect, color);
            // A hairline between segments keeps neighbouring shades apart.
            if (h >= 4 && barWidth >= 5) {
                p.setPen(QPen(QColor(255, 255, 255, 200), 1));
                p.drawLine(QPointF(x, y - h), QPointF(x + barWidth - 1, y - h));
            }
            // The share inside segments tall and wide enough to hold it.
            if (h >= 15 && barWidth >= 30) {
                p.setPen(color.lightnessF() > 0.55 ? kText : QColor(Qt::white));
                p.drawText(rect, Qt::AlignCenter,
                           QString::number(it->second / total * 100, 'f', 0) + "%");
            }
            if (segments)
                segments->push_back(
                    {rect, static_cast<int>(si), category, it->second, it->second / total, color});
            y -= h;
        }
        // The measured bar is outlined: the reference the models are judged against.
        if (s.source == cpi::kHardwareSource && sources > 1 && barWidth >= 4) {
            p.setPen(QPen(QColor(0x20, 0x20, 0x20), 1.2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x, y, barWidth, plot.bottom() - y));
        }
        // Total on top of the bar when it fits.
        if (!options.normalized && barWidth >= 14) {
            p.setPen(kText);
            const QString label = format::shortNumber(total);
            // Room of its own: the hw bar has the gap beside it, model bars touch their
            // neighbours, so their totals must fit the bar itself or they run together.
            const bool hw = s.source == cpi::kHardwareSource;
            const double room = barWidth + (hw ? hwGap * barWidth : 2);
            if (smallFm.horizontalAdvance(label) <= room)
                p.drawText(QRectF(x + barWidth / 2 - room / 2, y - 14, room, 13),
                           Qt::AlignHCenter | Qt::AlignBottom, label);
        }
        if (sourceLabels) {
            QFont f = small;
            f.setBold(s.source == cpi::kHardwareSource);
            p.setFont(f);
            p.setPen(s.source == cpi::kHardwareSource ? kText : kMuted);
            const double room = barWidth + 2;  // neighbouring labels must not run together
            p.drawText(QRectF(x + barWidth / 2 - room / 2, plot.bottom() + 2, room, 13),
                       Qt::AlignCenter,
                       QFontMetricsF(f).elidedText(QString::fromStdString(s.source), Qt::ElideRight,
                                                   room));
            p.setFont(small);
        }
    }
    p.setFont(font);

    // Kernel labels.
    p.setPen(kText);
    const double labelTop = plot.bottom() + (sourceLabels ? 16 : 4);
    for (int k = 0; k < kernels; ++k) {
        const double centre = x0 + (k + 0.5) * groupWidth;
        if (!slanted) {
            const double width = labelWidth - 6;
            p.drawText(QRectF(centre - width / 2, labelTop, width, 16),
                       Qt::AlignHCenter | Qt::AlignTop,
                       // Middle: names of one family differ at either end (shapes, suffixes).
                       fm.elidedText(labels[k], Qt::ElideMiddle, width));
        } else {
            // Slanted up to the bar; no longer than the room left of it.
            const double room = std::min(slantLength, (centre + 3 - area.left() - 4) / 0.766);
            p.save();
            p.translate(centre + 3, labelTop + 2);
            p.rotate(-40);
            p.drawText(QRectF(-room, -8, room, 16), Qt::AlignRight | Qt::AlignVCenter,
                       fm.elidedText(labels[k], Qt::ElideMiddle, room));
            p.restore();
        }
    }
    // Group brackets under the labels.
    if (anyGroup) {
        const double gy = labelTop + (slanted ? slantLength * 0.64 + 8 : 18);
        QFont bold = font;
        bold.setBold(true);
        p.setFont(bold);
        for (int k = 0; k < kernels;) {
            int end = k;
            while (end < kernels && kernelGroups[end] == kernelGroups[k]) ++end;
            const double a = x0 + k * groupWidth + 4, b = x0 + end * groupWidth - 4;
            p.setPen(QPen(kAxis, 1));
            p.drawLine(QPointF(a, gy), QPointF(b, gy));
            p.drawLine(QPointF(a, gy - 4), QPointF(a, gy));
            p.drawLine(QPointF(b, gy - 4), QPointF(b, gy));
            p.setPen(kText);
            const QString name = kernelGroups[k].empty() ? QString("(no group)")
                                                         : QString::fromStdString(kernelGroups[k]);
            p.drawText(QRectF(a, gy + 1, b - a, 16), Qt::AlignHCenter | Qt::AlignTop,
                       QFontMetricsF(bold).elidedText(name, Qt::ElideRight, b - a));
            k = end;
        }
        p.setFont(font);
    }
    // Footer: what is drawn and what is left out.
    {
        std::string names;
        for (const std::string& s : data.sources) names += (names.empty() ? "" : ", ") + s;
        QString text = QString("%1 kernel%2 × %3 source%4 (%5)")
                           .arg(kernels)
                           .arg(kernels == 1 ? "" : "s")
                           .arg(sources)
                           .arg(sources == 1 ? "" : "s")
                           .arg(QString::fromStdString(names));
        if (hasHw && sources > 1) text += " · hw outlined, models to its right";
        if (!commonPart.isEmpty()) text += " · names shortened from " + commonPart;
        if (layout.hiddenKernels > 0)
            text += QString(" · top %1 by %2 cycles shown, %3 more not drawn (see the table)")
                        .arg(kernels)
                        .arg(hasHw ? "hw" : QString::fromStdString(data.sources[0]))
                        .arg(layout.hiddenKernels);
        p.setPen(layout.hiddenKernels > 0 ? QColor(0x9a, 0x5b, 0x00) : kMuted);
        p.drawText(
            QRectF(plot.left(), area.bottom() - footer, area.right() - plot.left() - 8, footer),
            Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(text, Qt::ElideRight, area.right() - plot.left() - 8));
    }
    // Legend, top of stack first so it reads like the bars.
    const double lx0 = plot.right() + 16;
    p.setPen(kText);
    {
        QFont bold = font;
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(lx0, plot.top() - 16, legendWidth, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   data.classes ? "GSI class" : "category");
        p.setFont(font);
    }
    int row = 0;
    for (auto it = data.categories.rbegin(); it != data.categories.rend(); ++it, ++row) {
        const double lx = lx0 + (row / perColumn) * legendColumn;
        const double ly = plot.top() + (row % perColumn) * rowHeight;
        p.fillRect(QRectF(lx, ly + 2, 12, 12), colors.at(*it));
        p.setPen(kText);
        p.drawText(QRectF(lx + 17, ly, legendColumn - 20, rowHeight),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(QString::fromStdString(*it), Qt::ElideRight, legendColumn - 20));
    }
    p.restore();
    return layout;
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
