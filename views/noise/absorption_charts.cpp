// The absorption charts (curves per group, absorption against a swept parameter) and the CSV of
// what they show.
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "views/common/export.h"
#include "views/noise/absorption_parts.h"
#include "views/noise/absorption_view.h"

namespace stallscope {

using absorption_parts::inGroup;
using absorption_parts::number;
using absorption_parts::qs;
using exporting::csvField;
using noise::AbsorptionReport;
using noise::Curve;

namespace {

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

}  // namespace stallscope
