#include "core/compare/kind_compare.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/compare/percent.h"

namespace stallscope {

namespace {

QJsonValue optional(const std::optional<double>& v) {
    return v ? QJsonValue(*v) : QJsonValue();
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

std::string curveKey(const noise::Curve& c) {
    return c.machine + "\x1f" + c.region + "\x1f" + c.mode + "\x1f" + noise::paramsLabel(c.params);
}

double stallOf(const cpi::KernelStack& s) {
    double stall = 0;
    for (const auto& [category, cycles] : s.cycles)
        if (cpi::gsiClassOf(category) != "Base") stall += cycles;
    return stall;
}

QJsonArray pairsJson(const std::vector<std::pair<std::string, std::string>>& pairs) {
    QJsonArray out;
    for (const auto& [kernel, source] : pairs)
        out.append(QJsonObject{{"kernel", qs(kernel)}, {"source", qs(source)}});
    return out;
}

}  // namespace

// ---- CPI --------------------------------------------------------------------------------------

double CpiStackDelta::delta(const std::string& category) const {
    const auto ia = a.find(category);
    const auto ib = b.find(category);
    return (ib == b.end() ? 0.0 : ib->second) - (ia == a.end() ? 0.0 : ia->second);
}

const CpiSourceTotals* CpiComparison::primary() const {
    for (const CpiSourceTotals& s : sources)
        if (s.source == primarySource) return &s;
    return nullptr;
}

CpiComparison compareCpiStacks(const cpi::CpiData& a, const cpi::CpiData& b) {
    CpiComparison c;
    std::map<std::pair<std::string, std::string>, const cpi::KernelStack*> inB;
    for (const auto& s : b.stacks) inB[{s.kernel, s.source}] = &s;
    std::set<std::pair<std::string, std::string>> matchedKeys;
    std::map<std::string, CpiSourceTotals> bySource;
    std::vector<std::string> sourceOrder;  // A's order ("hw" first, as CpiData keeps it)
    std::set<std::string> categories;
    for (const cpi::KernelStack& sa : a.stacks) {
        const std::pair key{sa.kernel, sa.source};
        auto it = inB.find(key);
        if (it == inB.end()) {
            c.onlyInA.push_back(key);
            continue;
        }
        if (!matchedKeys.insert(key).second) continue;  // a repeated row: compare once
        const cpi::KernelStack& sb = *it->second;
        CpiStackDelta d{sa.kernel,  sa.source,   sa.group.empty() ? sb.group : sa.group,
                        sa.cycles,  sb.cycles,   sa.total(),
                        sb.total(), stallOf(sa), stallOf(sb)};
        for (const auto& [category, v] : d.a) categories.insert(category);
        for (const auto& [category, v] : d.b) categories.insert(category);
        if (!bySource.count(sa.source)) sourceOrder.push_back(sa.source);
        CpiSourceTotals& t = bySource[sa.source];
        t.source = sa.source;
        ++t.kernels;
        t.totalA += d.totalA;
        t.totalB += d.totalB;
        t.stallA += d.stallA;
        t.stallB += d.stallB;
        c.stacks.push_back(std::move(d));
    }
    for (const cpi::KernelStack& sb : b.stacks)
        if (!matchedKeys.count({sb.kernel, sb.source}) &&
            std::find(c.onlyInB.begin(), c.onlyInB.end(), std::pair{sb.kernel, sb.source}) ==
                c.onlyInB.end())
            c.onlyInB.push_back({sb.kernel, sb.source});
    // "hw" first, then models in A's order.
    std::stable_partition(sourceOrder.begin(), sourceOrder.end(),
                          [](const std::string& s) { return s == cpi::kHardwareSource; });
    for (const std::string& s : sourceOrder) c.sources.push_back(bySource[s]);
    c.categories = cpi::orderCategories({categories.begin(), categories.end()});
    c.primarySource = c.sources.empty() ? std::string() : c.sources.front().source;

    std::string line = "B vs A";
    if (const CpiSourceTotals* p = c.primary()) {
        line += " (" + p->source + "): " + signedPercentText(percentChange(p->totalA, p->totalB)) +
                " cycles, " + signedPercentText(percentChange(p->stallA, p->stallB)) +
                " stall cycles over " + std::to_string(p->kernels) + " kernel" +
                (p->kernels == 1 ? "" : "s");
    } else {
        line += ": no kernel stack in both profiles";
    }
    if (!c.onlyInA.empty()) line += ", " + std::to_string(c.onlyInA.size()) + " only in A";
    if (!c.onlyInB.empty()) line += ", " + std::to_string(c.onlyInB.size()) + " only in B";
    c.summary = line;
    return c;
}

QJsonObject cpiComparisonJson(const CpiComparison& c) {
    QJsonArray ops, categories, sources;
    for (const CpiStackDelta& d : c.stacks) {
        ops.append(QJsonObject{{"name", qs(d.kernel + " [" + d.source + "]")},
                               {"kernel", qs(d.kernel)},
                               {"source", qs(d.source)},
                               {"a", d.totalA},
                               {"b", d.totalB},
                               {"delta", d.totalB - d.totalA},
                               {"delta_pct", percentChange(d.totalA, d.totalB)},
                               {"stall_a", d.stallA},
                               {"stall_b", d.stallB}});
        for (const std::string& category : c.categories) {
            const auto ia = d.a.find(category);
            const auto ib = d.b.find(category);
            if (ia == d.a.end() && ib == d.b.end()) continue;
            const double va = ia == d.a.end() ? 0.0 : ia->second;
            const double vb = ib == d.b.end() ? 0.0 : ib->second;
            categories.append(QJsonObject{{"kernel", qs(d.kernel)},
                                          {"source", qs(d.source)},
                                          {"category", qs(category)},
                                          {"class", qs(cpi::gsiClassOf(category))},
                                          {"a", va},
                                          {"b", vb},
                                          {"delta", vb - va},
                                          {"delta_pct", percentChange(va, vb)}});
        }
    }
    for (const CpiSourceTotals& s : c.sources)
        sources.append(QJsonObject{{"source", qs(s.source)},
                                   {"kernels", static_cast<qint64>(s.kernels)},
                                   {"total_a", s.totalA},
                                   {"total_b", s.totalB},
                                   {"stall_a", s.stallA},
                                   {"stall_b", s.stallB},
                                   {"total_pct", percentChange(s.totalA, s.totalB)},
                                   {"stall_pct", percentChange(s.stallA, s.stallB)}});
    const CpiSourceTotals* p = c.primary();
    const CpiSourceTotals none;
    const CpiSourceTotals& t = p ? *p : none;
    // a/b/delta (CONTRACT §5) are the primary source's totals over its matched kernels.
    return QJsonObject{{"kind", "cpi"},
                       {"source", p ? QJsonValue(qs(t.source)) : QJsonValue()},
                       {"a", QJsonObject{{"total_cycles", t.totalA}, {"stall_cycles", t.stallA}}},
                       {"b", QJsonObject{{"total_cycles", t.totalB}, {"stall_cycles", t.stallB}}},
                       {"delta", QJsonObject{{"total", t.totalB - t.totalA},
                                             {"stall", t.stallB - t.stallA},
                                             {"total_pct", percentChange(t.totalA, t.totalB)},
                                             {"stall_pct", percentChange(t.stallA, t.stallB)}}},
                       {"sources", sources},
                       {"ops", ops},
                       {"categories", categories},
                       {"matched", static_cast<qint64>(c.stacks.size())},
                       {"only_in_a", pairsJson(c.onlyInA)},
                       {"only_in_b", pairsJson(c.onlyInB)},
                       {"summary", qs(c.summary)}};
}

// ---- noise ------------------------------------------------------------------------------------

QString NoiseCurveDelta::label() const {
    return qs(a.machine + " " + a.region + " " + a.mode +
              (a.params.empty() ? "" : " " + noise::paramsLabel(a.params)));
}

NoiseComparison compareNoise(const noise::AbsorptionReport& a, const noise::AbsorptionReport& b) {
    NoiseComparison c;
    std::map<std::string, const noise::Curve*> inB;
    for (const auto& curve : b.curves) inB[curveKey(curve)] = &curve;
    std::set<std::string> matched;
    for (const auto& ca : a.curves) {
        const std::string key = curveKey(ca);
        auto it = inB.find(key);
        if (it == inB.end()) {
            c.onlyInA.push_back(ca);
            continue;
        }
        matched.insert(key);
        const noise::Curve& cb = *it->second;
        c.plateauA += ca.fit.t0;
        c.plateauB += cb.fit.t0;
        c.changedK1 += ca.fit.k1 != cb.fit.k1;
        c.curves.push_back({ca, cb});
    }
    for (const auto& cb : b.curves)
        if (!matched.count(curveKey(cb))) c.onlyInB.push_back(cb);
    c.classesA = a.classifications;
    c.classesB = b.classifications;
    std::string line = "B vs A: " + signedPercentText(percentChange(c.plateauA, c.plateauB)) +
                       " plateau runtime, absorption changed on " + std::to_string(c.changedK1) +
                       " of " + std::to_string(c.curves.size()) + " matched curves";
    if (!c.onlyInA.empty()) line += ", " + std::to_string(c.onlyInA.size()) + " only in A";
    if (!c.onlyInB.empty()) line += ", " + std::to_string(c.onlyInB.size()) + " only in B";
    c.summary = line;
    return c;
}

QJsonObject noiseComparisonJson(const NoiseComparison& c) {
    QJsonArray curves, ops;
    for (const NoiseCurveDelta& d : c.curves) {
        const noise::Curve& ca = d.a;
        const noise::Curve& cb = d.b;
        QJsonObject params;
        for (const auto& [name, value] : ca.params) params.insert(qs(name), qs(value));
        curves.append(QJsonObject{
            {"machine", qs(ca.machine)},
            {"region", qs(ca.region)},
            {"mode", qs(ca.mode)},
            {"params", params},
            {"abs_raw_a", ca.fit.k1},
            {"abs_raw_b", cb.fit.k1},
            {"abs_raw_delta", cb.fit.k1 - ca.fit.k1},
            {"abs_rel_a", optional(ca.absRel())},
            {"abs_rel_b", optional(cb.absRel())},
            {"abs_rel_delta",
             ca.absRel() && cb.absRel() ? QJsonValue(*cb.absRel() - *ca.absRel()) : QJsonValue()},
            {"degraded_a", ca.fit.degraded},
            {"degraded_b", cb.fit.degraded},
            {"k1_a", ca.fit.k1},
            {"k1_b", cb.fit.k1},
            {"k2_a", optional(ca.fit.k2)},
            {"k2_b", optional(cb.fit.k2)},
            {"t0_a", ca.fit.t0},
            {"t0_b", cb.fit.t0},
            {"t0_pct", percentChange(ca.fit.t0, cb.fit.t0)},
            {"slope_a", ca.fit.slope},
            {"slope_b", cb.fit.slope}});
        ops.append(QJsonObject{{"name", d.label()},
                               {"a", ca.fit.t0},
                               {"b", cb.fit.t0},
                               {"delta_pct", percentChange(ca.fit.t0, cb.fit.t0)}});
    }
    auto classes = [](const std::vector<noise::Classification>& list) {
        QJsonArray out;
        for (const auto& cl : list)
            out.append(QJsonObject{{"machine", qs(cl.machine)},
                                   {"region", qs(cl.region)},
                                   {"class", noise::className(cl.cls)}});
        return out;
    };
    auto unmatched = [](const std::vector<noise::Curve>& list) {
        QJsonArray out;
        for (const auto& cv : list)
            out.append(QJsonObject{{"machine", qs(cv.machine)},
                                   {"region", qs(cv.region)},
                                   {"mode", qs(cv.mode)},
                                   {"params", qs(noise::paramsLabel(cv.params))}});
        return out;
    };
    size_t curvesA = c.curves.size() + c.onlyInA.size();
    size_t curvesB = c.curves.size() + c.onlyInB.size();
    return QJsonObject{
        {"kind", "noise"},
        {"a", QJsonObject{{"curves", static_cast<qint64>(curvesA)},
                          {"plateau_total", c.plateauA},
                          {"classification", classes(c.classesA)}}},
        {"b", QJsonObject{{"curves", static_cast<qint64>(curvesB)},
                          {"plateau_total", c.plateauB},
                          {"classification", classes(c.classesB)}}},
        // Noise runs have no stall cycles; `total` is the summed plateau runtime of the
        // matched curves.
        {"delta", QJsonObject{{"total", c.plateauB - c.plateauA},
                              {"total_pct", percentChange(c.plateauA, c.plateauB)},
                              {"stall", QJsonValue()},
                              {"changed_abs_raw", static_cast<qint64>(c.changedK1)}}},
        {"ops", ops},
        {"curves", curves},
        {"only_in_a", unmatched(c.onlyInA)},
        {"only_in_b", unmatched(c.onlyInB)},
        {"summary", qs(c.summary)}};
}

}  // namespace stallscope
