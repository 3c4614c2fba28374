#include "cpi_chart.h"

#include <QFontMetricsF>
#include <QSvgGenerator>
#include <cmath>
#include <unordered_map>

namespace stallscope::charts {

namespace {

QColor classColor(const std::string& gsiClass) {
    static const std::unordered_map<std::string, QColor> colors{
        {"Base", QColor(0x4c, 0xa8, 0x5a)},    {"Idle", QColor(0xa0, 0xa0, 0xa0)},
        {"Ctrl", QColor(0x8e, 0x6b, 0xbf)},    {"Sync", QColor(0xc0, 0x84, 0x3c)},
        {"MemData", QColor(0x3a, 0x78, 0xc9)}, {"MemStruct", QColor(0x38, 0xb2, 0xc0)},
        {"ComData", QColor(0xe3, 0xc0, 0x3a)}, {"ComStruct", QColor(0xd6, 0x4f, 0x45)},
    };
    const auto it = colors.find(gsiClass);
    return it == colors.end() ? QColor(0x80, 0x80, 0x80) : it->second;
}

const QColor kText(0x30, 0x30, 0x30);
const QColor kGrid(0xe4, 0xe4, 0xe4);
const QColor kAxis(0x90, 0x90, 0x90);

void drawYAxis(QPainter& p, const QRectF& plot, double max, bool percent) {
    const double step = niceStep(max, 5);
    p.setFont(QFont(p.font().family(), 8));
    for (double v = 0; v <= max * 1.0001; v += step) {
        const double y = plot.bottom() - v / max * plot.height();
        p.setPen(kGrid);
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(kText);
        const QString label = percent ? QString::number(v, 'g', 3) + "%" : shortNumber(v);
        p.drawText(QRectF(plot.left() - 62, y - 8, 56, 16), Qt::AlignRight | Qt::AlignVCenter,
                   label);
    }
    p.setPen(kAxis);
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    p.drawLine(plot.bottomLeft(), plot.topLeft());
}

}  // namespace

QColor categoryColor(const std::string& category) {
    const std::string cls = cpi::gsiClassOf(category);
    QColor base = classColor(cls);
    if (cls == category) return base;
    // Shade by a stable hash of the name so raw categories of one class stay apart.
    uint32_t h = 2166136261u;
    for (unsigned char c : category) h = (h ^ c) * 16777619u;
    float hue = 0, saturation = 0, value = 0;
    base.getHsvF(&hue, &saturation, &value);
    const float shift = static_cast<float>(static_cast<int>(h % 9) - 4) * 0.022f;
    const float lightness = static_cast<float>(static_cast<int>((h / 9) % 5) - 2) * 0.09f;
    hue = std::fmod(hue + shift + 1.0f, 1.0f);
    return QColor::fromHsvF(hue, std::clamp(saturation - lightness * 0.6f, 0.15f, 1.0f),
                            std::clamp(value + lightness, 0.35f, 1.0f));
}

QColor seriesColor(int index) {
    static const QColor palette[] = {QColor(0x33, 0x33, 0x33), QColor(0x1f, 0x77, 0xb4),
                                     QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd),
                                     QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2)};
    return palette[static_cast<size_t>(index) % std::size(palette)];
}

double niceStep(double max, int target) {
    if (!(max > 0)) return 1;
    const double raw = max / std::max(1, target);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * magnitude) return m * magnitude;
    return 10 * magnitude;
}

QString shortNumber(double value) {
    const double a = std::abs(value);
    if (a >= 1e9) return QString::number(value / 1e9, 'g', 3) + "G";
    if (a >= 1e6) return QString::number(value / 1e6, 'g', 3) + "M";
    if (a >= 1e3) return QString::number(value / 1e3, 'g', 3) + "k";
    return QString::number(value, 'g', 3);
}

void paintMessage(QPainter& painter, const QRectF& area, const QString& text) {
    painter.setPen(kText);
    painter.drawText(area.adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, text);
}

void paintStackChart(QPainter& p, const QRectF& area, const cpi::CpiData& data,
                     const StackChartOptions& options, std::vector<StackSegment>* segments) {
    p.save();
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSizeF(9);
    p.setFont(font);
    const QFontMetricsF fm(font);
    if (data.stacks.empty()) {
        paintMessage(p, area, "No CPI stacks in this profile.");
        p.restore();
        return;
    }
    // Legend column on the right sized to the longest category name.
    double legendWidth = 0;
    for (const std::string& c : data.categories)
        legendWidth = std::max(legendWidth, fm.horizontalAdvance(QString::fromStdString(c)));
    legendWidth = std::min(legendWidth + 34, area.width() * 0.3);
    const QRectF plot(area.left() + 72, area.top() + 30, area.width() - 72 - legendWidth - 16,
                      area.height() - 30 - 52);
    if (plot.width() < 20 || plot.height() < 20) {
        p.restore();
        return;
    }
    p.setPen(kText);
    QFont titleFont = font;
    titleFont.setBold(true);
    p.setFont(titleFont);
    p.drawText(QRectF(area.left() + 8, area.top() + 4, area.width() - 16, 22),
               Qt::AlignLeft | Qt::AlignVCenter,
               options.title.isEmpty()
                   ? (options.normalized ? "CPI stacks (share of cycles)" : "CPI stacks (cycles)")
                   : options.title);
    p.setFont(font);

    double maxTotal = 0;
    for (const cpi::KernelStack& s : data.stacks) maxTotal = std::max(maxTotal, s.total());
    const double axisMax =
        options.normalized
            ? 100.0
            : (maxTotal > 0 ? std::ceil(maxTotal / niceStep(maxTotal, 5)) * niceStep(maxTotal, 5)
                            : 1.0);
    drawYAxis(p, plot, axisMax, options.normalized);
    p.save();
    p.translate(area.left() + 14, plot.center().y());
    p.rotate(-90);
    p.setPen(kText);
    p.drawText(QRectF(-80, -10, 160, 20), Qt::AlignCenter,
               options.normalized ? "share of cycles" : "cycles");
    p.restore();

    const int kernels = static_cast<int>(data.kernels.size());
    const int sources = static_cast<int>(data.sources.size());
    std::unordered_map<std::string, int> kernelIndex, sourceIndex;
    for (int i = 0; i < kernels; ++i) kernelIndex[data.kernels[i]] = i;
    for (int i = 0; i < sources; ++i) sourceIndex[data.sources[i]] = i;
    const double groupWidth = plot.width() / kernels;
    const double barWidth = std::max(0.5, groupWidth * (sources > 1 ? 0.86 : 0.7) / sources);
    const double groupPad = (groupWidth - barWidth * sources) / 2;
    std::unordered_map<std::string, QColor> colors;
    for (const std::string& c : data.categories) colors[c] = categoryColor(c);

    for (size_t si = 0; si < data.stacks.size(); ++si) {
        const cpi::KernelStack& s = data.stacks[si];
        const double total = s.total();
        if (!(total > 0)) continue;
        const int k = kernelIndex[s.kernel];
        const int src = sourceIndex[s.source];
        const double x = plot.left() + k * groupWidth + groupPad + src * barWidth;
        double y = plot.bottom();
        for (const std::string& category : data.categories) {
            const auto it = s.cycles.find(category);
            if (it == s.cycles.end() || it->second <= 0) continue;
            const double value = options.normalized ? it->second / total * 100 : it->second;
            const double h = value / axisMax * plot.height();
            const QRectF rect(x, y - h, barWidth, h);
            p.fillRect(rect, colors[category]);
            if (segments)
                segments->push_back(
                    {rect, static_cast<int>(si), category, it->second, it->second / total});
            y -= h;
        }
        // Thin outline keeps neighbouring bars apart when they are wide enough to show it.
        if (barWidth >= 6) {
            p.setPen(QPen(QColor(255, 255, 255), 1));
            p.drawLine(QPointF(x + barWidth, y), QPointF(x + barWidth, plot.bottom()));
        }
        if (barWidth >= 16 && sources > 1) {
            p.setPen(kText);
            QFont small = font;
            small.setPointSizeF(7);
            p.setFont(small);
            p.drawText(QRectF(x - 4, plot.bottom() + 2, barWidth + 8, 14), Qt::AlignCenter,
                       QFontMetricsF(small).elidedText(QString::fromStdString(s.source),
                                                       Qt::ElideRight, barWidth + 8));
            p.setFont(font);
        }
    }
    // Kernel labels: every kernel when there is room, else every n-th.
    const int every = std::max(1, static_cast<int>(std::ceil(90.0 / groupWidth)));
    p.setPen(kText);
    const double labelTop = plot.bottom() + (barWidth >= 16 && sources > 1 ? 16 : 4);
    for (int k = 0; k < kernels; k += every) {
        const double width = groupWidth * every - 4;
        const QRectF rect(plot.left() + k * groupWidth + 2, labelTop, width, 16);
        p.drawText(rect, Qt::AlignHCenter | Qt::AlignTop,
                   fm.elidedText(QString::fromStdString(data.kernels[k]), Qt::ElideMiddle, width));
    }
    if (every > 1 || kernels > 1) {
        p.drawText(QRectF(plot.left(), area.bottom() - 18, plot.width(), 16), Qt::AlignCenter,
                   QString("%1 kernels × %2 source%3 (%4)")
                       .arg(kernels)
                       .arg(sources)
                       .arg(sources == 1 ? "" : "s")
                       .arg(QString::fromStdString([&] {
                           std::string names;
                           for (const std::string& s : data.sources)
                               names += (names.empty() ? "" : ", ") + s;
                           return names;
                       }())));
    }
    // Legend, top of stack first so it reads like the bars.
    double ly = plot.top();
    const double lx = plot.right() + 16;
    for (auto it = data.categories.rbegin(); it != data.categories.rend(); ++it) {
        if (ly + 16 > area.bottom()) break;
        p.fillRect(QRectF(lx, ly + 2, 12, 12), colors[*it]);
        p.setPen(kText);
        p.drawText(QRectF(lx + 18, ly, legendWidth - 20, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(QString::fromStdString(*it), Qt::ElideRight, legendWidth - 20));
        ly += 17;
    }
    p.restore();
}

void paintMapeChart(QPainter& p, const QRectF& area, const cpi::MapeReport& mape,
                    const std::vector<std::string>& models) {
    p.save();
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSizeF(9);
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(kText);
    p.drawText(QRectF(area.left() + 8, area.top() + 4, area.width() - 16, 22),
               Qt::AlignLeft | Qt::AlignVCenter, "MAPE of total cycles against hw");
    p.setFont(font);
    if (mape.overall.empty()) {
        paintMessage(p, area,
                     "No MAPE: the profile needs stacks from source 'hw' and at least one model "
                     "for the same kernels.");
        p.restore();
        return;
    }
    std::vector<std::string> groups{""};
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
    const double axisMax =
        std::max(1.0, std::ceil(max * 1.12 / niceStep(max * 1.12, 4)) * niceStep(max * 1.12, 4));
    const QRectF plot(area.left() + 72, area.top() + 30, area.width() - 72 - 130,
                      area.height() - 30 - 30);
    if (plot.width() < 20 || plot.height() < 20) {
        p.restore();
        return;
    }
    drawYAxis(p, plot, axisMax, true);
    const double groupWidth = plot.width() / static_cast<double>(groups.size());
    const double barWidth =
        std::min(60.0, groupWidth * 0.7 / static_cast<double>(std::max<size_t>(1, shown.size())));
    const QFontMetricsF fm(font);
    for (size_t g = 0; g < groups.size(); ++g) {
        const double start = plot.left() + g * groupWidth +
                             (groupWidth - barWidth * static_cast<double>(shown.size())) / 2;
        for (size_t m = 0; m < shown.size(); ++m) {
            const cpi::ModelMape* entry = find(shown[m], groups[g]);
            if (!entry) continue;
            const double h = entry->mapePct / axisMax * plot.height();
            const QRectF bar(start + static_cast<double>(m) * barWidth, plot.bottom() - h,
                             barWidth - 2, h);
            p.fillRect(bar, seriesColor(static_cast<int>(m) + 1));
            p.setPen(kText);
            p.drawText(QRectF(bar.left() - 10, bar.top() - 16, bar.width() + 20, 14),
                       Qt::AlignCenter, QString::number(entry->mapePct, 'f', 1) + "%");
        }
        p.setPen(kText);
        const QString label = groups[g].empty() ? "all kernels" : QString::fromStdString(groups[g]);
        p.drawText(QRectF(plot.left() + g * groupWidth, plot.bottom() + 4, groupWidth, 16),
                   Qt::AlignCenter, fm.elidedText(label, Qt::ElideRight, groupWidth - 4));
    }
    double ly = plot.top();
    for (size_t m = 0; m < shown.size(); ++m) {
        p.fillRect(QRectF(plot.right() + 16, ly + 2, 12, 12), seriesColor(static_cast<int>(m) + 1));
        p.setPen(kText);
        p.drawText(QRectF(plot.right() + 34, ly, 96, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(QString::fromStdString(shown[m]), Qt::ElideRight, 96));
        ly += 17;
    }
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
