#include "views/noise/absorption_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "core/errors.h"
#include "views/common/export.h"

namespace stallscope {

using exporting::csvField;
using noise::AbsorptionReport;
using noise::Curve;

namespace {

QString number(double v) {
    return QString::number(v, 'g', 4);
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

bool inGroup(const Curve& c, const CurveGroup& g) {
    return c.machine == g.machine && c.region == g.region && c.params == g.params;
}

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

// " (11–14)" after a knee's value when its interval is more than the value itself.
QString rangeText(double value, double low, std::optional<double> high) {
    if (!high) return QStringLiteral(" (%1–?)").arg(number(low));
    if (low == value && *high == value) return {};
    return QStringLiteral(" (%1–%2)").arg(number(low), number(*high));
}

}  // namespace

QString CurveGroup::label() const {
    QString text = qs(region);
    if (!machine.empty()) text += QStringLiteral(" — ") + qs(machine);
    if (!params.empty()) text += QStringLiteral(" (%1)").arg(qs(noise::paramsLabel(params)));
    return text;
}

QString SweepGroup::label() const {
    QString text = qs(region) + QStringLiteral(" vs ") + qs(param);
    if (!machine.empty()) text += QStringLiteral(" — ") + qs(machine);
    return text;
}

QColor modeColor(const std::string& mode) {
    if (mode == "fp_add64") return QColor(31, 119, 180);
    if (mode == "int64_add") return QColor(255, 127, 14);
    if (mode == "l1_ld64") return QColor(44, 160, 44);
    if (mode == "memory_ld64") return QColor(214, 39, 40);
    // Other modes: a stable colour from the name.
    return QColor::fromHsv(int(qHash(qs(mode)) % 360), 160, 170);
}

std::vector<CurveGroup> curveGroups(const AbsorptionReport& report) {
    std::vector<CurveGroup> groups;
    for (const Curve& c : report.curves) {
        if (!groups.empty() && inGroup(c, groups.back())) continue;
        groups.push_back({c.machine, c.region, c.params});
    }
    return groups;
}

std::vector<SweepGroup> sweepGroups(const AbsorptionReport& report) {
    std::map<std::tuple<std::string, std::string, std::string>, std::set<double>> values;
    for (const Curve& c : report.curves)
        for (const auto& [name, value] : c.params) {
            bool numeric = false;
            const double v = qs(value).toDouble(&numeric);
            if (numeric) values[{c.machine, c.region, name}].insert(v);
        }
    std::vector<SweepGroup> out;
    for (const auto& [key, set] : values)
        if (set.size() >= 2) out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key)});
    return out;
}

charts::ChartSpec curvesChart(const AbsorptionReport& report, const CurveGroup& group,
                              double yClip) {
    charts::ChartSpec spec;
    spec.title = group.label();
    spec.xLabel = QStringLiteral("noise patterns per iteration (k)");
    spec.yLabel = QStringLiteral("runtime / t0 (clipped at %1×)").arg(number(yClip));
    std::vector<const Curve*> curves;
    double maxY = 1.0, maxK = 0.0;
    for (const Curve& c : report.curves) {
        if (!inGroup(c, group)) continue;
        curves.push_back(&c);
        const double t0 = c.fit.t0 > 0 ? c.fit.t0 : 1.0;
        for (const noise::CurvePoint& p : c.fit.points) {
            maxY = std::max(maxY, p.q3 / t0);
            maxK = std::max(maxK, p.k);
        }
    }
    const double yMax = std::min(std::max(maxY * 1.05, 1.2), yClip);

    // The x range ends where the last curve leaves the visible y range (or at its last point)
    // and takes in every k1/k2 marker, plus a margin: a curve that leaves the clip early does not
    // leave the rest of the plot empty.
    double extent = 0;
    for (const Curve* c : curves) {
        const auto& points = c->fit.points;
        const double t0 = c->fit.t0 > 0 ? c->fit.t0 : 1.0;
        double visible = points.back().k;
        for (size_t i = 0; i < points.size(); ++i) {
            const double y = points[i].median / t0;
            if (y <= yMax) continue;
            if (i == 0) {
                visible = points[0].k;
            } else {
                const double y0 = points[i - 1].median / t0;
                visible =
                    points[i - 1].k + (yMax - y0) / (y - y0) * (points[i].k - points[i - 1].k);
            }
            break;
        }
        extent = std::max(extent, visible);
        if (c->fit.degraded) extent = std::max(extent, c->fit.k1);
        if (c->fit.k2) extent = std::max(extent, *c->fit.k2);
    }
    const double xMax = extent <= 0 || extent >= maxK ? maxK : std::min(maxK, extent * 1.08);

    size_t lanes = 0;
    for (const Curve* cp : curves) {
        const Curve& c = *cp;
        const QColor color = modeColor(c.mode);
        const double t0 = c.fit.t0 > 0 ? c.fit.t0 : 1.0;
        charts::ChartSeries band{{}, color, charts::ChartSeries::Style::Band, {}, {}, false, {}};
        // "fp_add64: k1 12 (11–14), k2 20 (18–24)", intervals only where they say more.
        QString legend =
            qs(c.mode) + QStringLiteral(": k1 ") +
            (c.fit.degraded ? number(c.fit.k1) + rangeText(c.fit.k1, c.fit.k1Low, c.fit.k1High)
                            : QStringLiteral("≥ %1").arg(number(c.fit.k1)));
        if (c.fit.uncertain) legend += QStringLiteral(" not placed");
        legend += c.fit.k2 ? QStringLiteral(", k2 %1").arg(number(*c.fit.k2)) +
                                 rangeText(*c.fit.k2, *c.fit.k2Low, c.fit.k2High)
                           : QStringLiteral(", no saturation");
        charts::ChartSeries medians{
            legend, color, charts::ChartSeries::Style::LineWithPoints, {}, {}, false, {}};
        charts::ChartSeries model{
            {}, color.darker(140), charts::ChartSeries::Style::Dashed, {}, {}, false, {}};
        // The band stops at the first point it has wholly left the plot by (true values: the
        // chart clips it at the plot's edge instead of flattening it at the clip).
        bool bandDone = false;
        for (const noise::CurvePoint& p : c.fit.points) {
            if (!bandDone) {
                band.points.append({p.k, p.q1 / t0});
                band.upper.append({p.k, p.q3 / t0});
                bandDone = p.q1 / t0 > yMax || p.k >= xMax;
            }
            medians.points.append({p.k, p.median / t0});
        }
        // The model sampled at the points and at the knees, so its corners are exact.
        std::set<double> ks;
        for (const noise::CurvePoint& p : c.fit.points) ks.insert(p.k);
        ks.insert(c.fit.k1);
        if (c.fit.k2) ks.insert(*c.fit.k2);
        for (double k : ks) model.points.append({k, c.fit.model(k) / t0});
        spec.series.push_back(band);
        spec.series.push_back(medians);
        spec.series.push_back(model);
        // k1 dashed, k2 dotted, each labelled at the top in the mode's colour; the legend
        // entry of the mode gives their values.
        const bool together = c.fit.degraded && c.fit.k2 && *c.fit.k2 == c.fit.k1;
        if (c.fit.degraded)
            spec.markers.push_back({c.fit.k1,
                                    color,
                                    false,
                                    {},
                                    together ? QStringLiteral("k1=k2") : QStringLiteral("k1")});
        if (c.fit.k2)
            spec.markers.push_back(
                {*c.fit.k2, color, true, {}, together ? QString() : QStringLiteral("k2")});
        // Where the knees may lie, from the lowest abs_raw (k2) the interval allows to the
        // highest fitted breakpoint: k1 as a translucent band across the plot, and both on the
        // k axis in the mode's lane, k1 solid and k2 hatched.
        const int lane = int(lanes++);
        if (c.fit.degraded) {
            spec.spans.push_back({c.fit.k1Low, c.fit.kneeHigh, color, false, -1});
            spec.spans.push_back({c.fit.k1Low, c.fit.kneeHigh, color, false, lane});
        }
        if (c.fit.k2) spec.spans.push_back({*c.fit.k2Low, c.fit.saturationHigh, color, true, lane});
        if (c.fit.uncertain) spec.notes << QStringLiteral("%1: %2").arg(qs(c.mode), qs(c.fit.note));
    }
    spec.xMin = 0;
    spec.xMax = xMax;
    spec.yMin = 0.8;
    spec.yMax = yMax;
    return spec;
}

namespace {

// The curves of one sweep, by the values of the other parameters, then mode, then the swept
// value; values in numeric order.
struct SweepPoint {
    double k1 = 0;
    bool lowerBound = false;
    std::optional<double> k2;
    const Curve* curve = nullptr;
};
using ParamsKey = std::map<std::string, std::string>;
struct ParamsOrder {
    bool operator()(const ParamsKey& a, const ParamsKey& b) const {
        return noise::paramsLess(a, b);
    }
};
struct SweepData {
    std::map<ParamsKey, std::map<std::string, std::map<double, SweepPoint>>, ParamsOrder>
        absorption;
    std::map<ParamsKey, std::map<double, std::vector<double>>, ParamsOrder> perf;
    QString perfUnit;
};

SweepData sweepData(const AbsorptionReport& report, const SweepGroup& sweep) {
    SweepData data;
    for (const Curve& c : report.curves) {
        if (c.machine != sweep.machine || c.region != sweep.region) continue;
        auto it = c.params.find(sweep.param);
        if (it == c.params.end()) continue;
        bool numeric = false;
        const double x = qs(it->second).toDouble(&numeric);
        if (!numeric) continue;
        ParamsKey rest = c.params;
        rest.erase(sweep.param);
        data.absorption[rest][c.mode][x] = {c.fit.k1, !c.fit.degraded, c.fit.k2, &c};
        if (c.perf) data.perf[rest][x].push_back(*c.perf);
        if (data.perfUnit.isEmpty()) data.perfUnit = qs(c.perfUnit);
    }
    return data;
}

// Shade `index` of `count` of a colour: the middle one is the colour itself.
QColor shade(const QColor& color, size_t index, size_t count) {
    if (count <= 1) return color;
    const double t = double(index) / double(count - 1);  // 0 dark .. 1 light
    const int factor = int(std::lround(175 - 140 * t));
    return factor >= 100 ? color.darker(factor) : color.lighter(200 - factor);
}

}  // namespace

charts::ChartSpec sweepChart(const AbsorptionReport& report, const SweepGroup& sweep) {
    charts::ChartSpec spec;
    spec.title = QStringLiteral("Absorption vs %1 — %2").arg(qs(sweep.param), qs(sweep.region));
    if (!sweep.machine.empty()) spec.title += QStringLiteral(" on %1").arg(qs(sweep.machine));
    spec.xLabel = qs(sweep.param);
    spec.yLabel = QStringLiteral("absorption k1 (patterns)");
    const SweepData data = sweepData(report, sweep);
    // One series per mode and combination of the other parameters (paper Fig. 7 plots each
    // core count apart), the combinations in shades of the mode's colour.
    const size_t combos = data.absorption.size();
    size_t comboIndex = 0;
    bool anyOpen = false;
    for (const auto& [rest, modes] : data.absorption) {
        const QString restLabel = qs(noise::paramsLabel(rest));
        for (const auto& [mode, points] : modes) {
            charts::ChartSeries s{restLabel.isEmpty() ? qs(mode) : qs(mode) + ", " + restLabel,
                                  shade(modeColor(mode), comboIndex, combos),
                                  charts::ChartSeries::Style::LineWithPoints,
                                  {},
                                  {},
                                  false,
                                  {}};
            for (const auto& [x, point] : points) {
                s.points.append({x, point.k1});
                if (point.lowerBound) s.open.append({x, point.k1});
            }
            anyOpen = anyOpen || !s.open.isEmpty();
            spec.series.push_back(s);
        }
        ++comboIndex;
    }
    if (anyOpen) spec.openLegend = QStringLiteral("≥ k1: no degradation seen");
    double maxK1 = 0;
    for (const charts::ChartSeries& s : spec.series)
        for (const QPointF& p : s.points) maxK1 = std::max(maxK1, p.y());
    spec.yMax = maxK1 * 1.1 + 1;  // room above the highest marker
    // and beside the first and last value, so their markers are not cut in half
    double xLo = INFINITY, xHi = -INFINITY;
    for (const charts::ChartSeries& s : spec.series)
        for (const QPointF& p : s.points) xLo = std::min(xLo, p.x()), xHi = std::max(xHi, p.x());
    if (xHi > xLo) {
        spec.xMin = xLo - 0.03 * (xHi - xLo);
        spec.xMax = xHi + 0.03 * (xHi - xLo);
    }
    comboIndex = 0;
    for (const auto& [rest, byX] : data.perf) {
        const QString restLabel = qs(noise::paramsLabel(rest));
        charts::ChartSeries s{restLabel.isEmpty() ? QStringLiteral("performance")
                                                  : QStringLiteral("perf., %1").arg(restLabel),
                              shade(QColor(90, 90, 90), comboIndex++, data.perf.size()),
                              charts::ChartSeries::Style::Dashed,
                              {},
                              {},
                              true,
                              {}};
        for (const auto& [x, values] : byX) {
            std::vector<double> sorted = values;
            std::sort(sorted.begin(), sorted.end());
            s.points.append({x, sorted[sorted.size() / 2]});
        }
        spec.series.push_back(s);
    }
    if (!data.perf.empty()) {
        spec.y2Label = data.perfUnit.isEmpty()
                           ? QStringLiteral("performance")
                           : QStringLiteral("performance (%1)").arg(data.perfUnit);
        spec.y2Min = 0;
    }
    spec.yMin = 0;
    spec.legendRight = spec.series.size() > 4;
    return spec;
}

QString sweepCsv(const AbsorptionReport& report, const SweepGroup& sweep) {
    QString out = QStringLiteral(
        "machine,region,param,value,other_params,mode,k1,lower_bound,k2,"
        "perf,perf_unit\n");
    const SweepData data = sweepData(report, sweep);
    for (const auto& [rest, modes] : data.absorption)
        for (const auto& [mode, points] : modes)
            for (const auto& [x, point] : points) {
                const Curve& c = *point.curve;
                out += QStringList{csvField(qs(sweep.machine)),
                                   csvField(qs(sweep.region)),
                                   csvField(qs(sweep.param)),
                                   csvField(qs(c.params.at(sweep.param))),
                                   csvField(qs(noise::paramsLabel(rest))),
                                   csvField(qs(mode)),
                                   number(point.k1),
                                   point.lowerBound ? QStringLiteral("1") : QStringLiteral("0"),
                                   point.k2 ? number(*point.k2) : QString(),
                                   c.perf ? QString::number(*c.perf, 'g', 6) : QString(),
                                   csvField(qs(c.perfUnit))}
                           .join(',') +
                       '\n';
            }
    return out;
}

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

namespace {

const QStringList kTableHeader{"machine", "region",   "params",   "cores", "performance", "FP abs.",
                               "L1 abs.", "mem abs.", "int abs.", "class", "evidence"};

QStringList rowCells(const ComparisonRow& r) {
    return {r.machine, r.region, r.params,  r.cores, r.performance, r.fp,
            r.l1,      r.memory, r.integer, r.cls,   r.evidence};
}

}  // namespace

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

QString curvesCsv(const AbsorptionReport& report, const CurveGroup& group) {
    QString out = QStringLiteral(
        "machine,region,params,mode,k,median,q1,q3,runs,normalized,model,"
        "k1,k2,k1_low,k1_high,k2_low,k2_high,knee_uncertain,outlier\n");
    for (const Curve& c : report.curves) {
        if (!inGroup(c, group)) continue;
        for (const noise::CurvePoint& p : c.fit.points) {
            const double t0 = c.fit.t0 > 0 ? c.fit.t0 : 1.0;
            out += QStringList{csvField(qs(c.machine)),
                               csvField(qs(c.region)),
                               csvField(qs(noise::paramsLabel(c.params))),
                               qs(c.mode),
                               number(p.k),
                               QString::number(p.median, 'g', 8),
                               QString::number(p.q1, 'g', 8),
                               QString::number(p.q3, 'g', 8),
                               QString::number(p.runs),
                               QString::number(p.median / t0, 'g', 6),
                               QString::number(c.fit.model(p.k) / t0, 'g', 6),
                               number(c.fit.k1),
                               c.fit.k2 ? number(*c.fit.k2) : QString(),
                               number(c.fit.k1Low),
                               c.fit.k1High ? number(*c.fit.k1High) : QString(),
                               c.fit.k2Low ? number(*c.fit.k2Low) : QString(),
                               c.fit.k2High ? number(*c.fit.k2High) : QString(),
                               c.fit.uncertain ? QStringLiteral("1") : QStringLiteral("0"),
                               p.outlier ? QStringLiteral("1") : QStringLiteral("0")}
                       .join(',') +
                   '\n';
        }
    }
    return out;
}

QList<SuggestionItem> absorptionSuggestionItems(const AbsorptionReport& report) {
    QList<SuggestionItem> items;
    for (const noise::NoiseSuggestion& s : noise::noiseSuggestions(report)) {
        // The dock shows "kind — text": the text's own leading "kind: " would say it twice.
        QString text = qs(s.text);
        if (const QString prefix = qs(s.kind) + QStringLiteral(": "); text.startsWith(prefix))
            text.remove(0, prefix.size());
        items.append({qs(s.kind), text, 0.0});
    }
    return items;
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

QWidget* createNoiseView(const ProfileInfo& profile, const QString& workspacePath) {
    return new AbsorptionView(profile, workspacePath);
}

AbsorptionView::AbsorptionView(const ProfileInfo& profile, const QString& workspacePath,
                               QWidget* parent)
    : QWidget(parent),
      status_(new QLabel(tr("Fitting absorption curves…"), this)),
      tabs_(new QTabWidget(this)),
      groupBox_(new QComboBox(this)),
      curvesHolder_(new QWidget(this)),
      table_(new QTableWidget(this)),
      sweepBox_(new QComboBox(this)),
      sweepHolder_(new QWidget(this)) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    bar->addWidget(status_, 1);
    for (const QString& format :
         {QStringLiteral("PNG"), QStringLiteral("SVG"), QStringLiteral("CSV")}) {
        auto* button = new QPushButton(tr("Export %1…").arg(format), this);
        connect(button, &QPushButton::clicked, this, [this, format] { exportCurrent(format); });
        bar->addWidget(button);
    }
    layout->addLayout(bar);
    layout->addWidget(tabs_, 1);

    auto* curvesPage = new QWidget(this);
    auto* curvesLayout = new QVBoxLayout(curvesPage);
    curvesLayout->addWidget(groupBox_);
    curvesHolder_->setLayout(new QVBoxLayout);
    curvesHolder_->layout()->setContentsMargins(0, 0, 0, 0);
    curvesLayout->addWidget(curvesHolder_, 1);
    tabs_->addTab(curvesPage, tr("Curves"));
    tabs_->addTab(table_, tr("Machines and kernels"));
    auto* sweepPage = new QWidget(this);
    auto* sweepLayout = new QVBoxLayout(sweepPage);
    sweepLayout->addWidget(sweepBox_);
    sweepHolder_->setLayout(new QVBoxLayout);
    sweepHolder_->layout()->setContentsMargins(0, 0, 0, 0);
    sweepLayout->addWidget(sweepHolder_, 1);
    tabs_->addTab(sweepPage, tr("Sweep"));
    tabs_->setEnabled(false);

    connect(groupBox_, &QComboBox::currentIndexChanged, this, &AbsorptionView::showCurves);
    connect(sweepBox_, &QComboBox::currentIndexChanged, this, &AbsorptionView::showSweep);

    if (workspacePath.isEmpty()) return;
    // SQL and fitting run on a worker with its own read-only connection.
    const std::string path = workspacePath.toStdString();
    const int64_t id = profile.id;
    loadJob_.start(
        [path, id] {
            auto workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
            return noise::analyzeProfile(*workspace, id);
        },
        [this](AbsorptionReport report) { setReport(report); });
}

void AbsorptionView::setReport(const AbsorptionReport& report) {
    report_ = report;
    groups_ = curveGroups(report_);
    sweeps_ = sweepGroups(report_);
    status_->setText(tr("%1 runs, %2 curves, %3 classified regions")
                         .arg(report_.runs)
                         .arg(report_.curves.size())
                         .arg(report_.classifications.size()));
    tabs_->setEnabled(true);
    groupBox_->blockSignals(true);
    groupBox_->clear();
    for (const CurveGroup& g : groups_) groupBox_->addItem(g.label());
    groupBox_->blockSignals(false);
    sweepBox_->blockSignals(true);
    sweepBox_->clear();
    for (const SweepGroup& s : sweeps_) sweepBox_->addItem(s.label());
    sweepBox_->blockSignals(false);
    tabs_->setTabEnabled(2, !sweeps_.empty());

    const std::vector<ComparisonRow> rows = comparisonRows(report_);
    table_->clear();
    table_->setColumnCount(int(kTableHeader.size()));
    table_->setHorizontalHeaderLabels(kTableHeader);
    table_->setRowCount(int(rows.size()));
    for (int r = 0; r < int(rows.size()); ++r) {
        const QStringList cells = rowCells(rows[size_t(r)]);
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setFlags(item->flags() & ~Qt::ItemIsEditable);
            item->setToolTip(cells[c]);
            table_->setItem(r, c, item);
        }
    }
    table_->resizeColumnsToContents();
    table_->horizontalHeader()->setStretchLastSection(true);
    showCurves(0);
    if (!sweeps_.empty()) showSweep(0);
    emit suggestionsReady(absorptionSuggestionItems(report_));
}

namespace {

void replaceChart(QWidget* holder, const charts::ChartSpec& spec) {
    QLayout* layout = holder->layout();
    while (QLayoutItem* item = layout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    layout->addWidget(charts::createChartWidget(spec, holder));
}

}  // namespace

void AbsorptionView::showCurves(int index) {
    if (index < 0 || index >= int(groups_.size())) return;
    currentGroup_ = index;
    replaceChart(curvesHolder_, curvesChart(report_, groups_[size_t(index)]));
}

void AbsorptionView::showSweep(int index) {
    if (index < 0 || index >= int(sweeps_.size())) return;
    currentSweep_ = index;
    replaceChart(sweepHolder_, sweepChart(report_, sweeps_[size_t(index)]));
}

charts::ChartSpec AbsorptionView::currentSpec() const {
    if (tabs_->currentIndex() == 2 && !sweeps_.empty())
        return sweepChart(report_, sweeps_[size_t(currentSweep_)]);
    if (groups_.empty()) return {};
    return curvesChart(report_, groups_[size_t(currentGroup_)]);
}

bool AbsorptionView::exportTo(const QString& format, const QString& path) {
    const int tab = tabs_->currentIndex();
    const bool table = tab == 1;
    const bool sweep = tab == 2 && !sweeps_.empty();
    if (groups_.empty() && !table) return false;
    if (format == QLatin1String("CSV")) {
        const QString text = table   ? comparisonCsv(report_)
                             : sweep ? sweepCsv(report_, sweeps_[size_t(currentSweep_)])
                                     : curvesCsv(report_, groups_[size_t(currentGroup_)]);
        return exporting::writeTextFile(path, text);
    }
    if (format == QLatin1String("SVG"))
        return table ? writeComparisonTableSvg(report_, path)
                     : charts::writeChartSvg(currentSpec(), QSize(1200, 800), path);
    return (table ? renderComparisonTable(report_)
                  : charts::renderChart(currentSpec(), QSize(1200, 800)).image)
        .save(path, "PNG");
}

void AbsorptionView::exportCurrent(const QString& format) {
    const exporting::Format kind = format == QLatin1String("CSV")   ? exporting::Format::Csv
                                   : format == QLatin1String("SVG") ? exporting::Format::Svg
                                                                    : exporting::Format::Png;
    exporting::runExport(
        this,
        {tr("Export %1").arg(format), kind, QStringLiteral("absorption.%1").arg(format.toLower()),
         [this, format](const QString& path, QString*) { return exportTo(format, path); }},
        [this](const QString& message, bool) { status_->setText(message); });
}

void AbsorptionView::showLoadError(const QString& error) {
    status_->setText(tr("Cannot load: %1").arg(error));
    emit loadFailed(status_->text());
}

}  // namespace stallscope
