#include "kind_compare.h"

#include <QJsonArray>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace stallscope {

namespace {

double pct(double from, double to) {
    return from == 0 ? 0 : 100.0 * (to - from) / from;
}

QJsonValue optional(const std::optional<double>& v) {
    return v ? QJsonValue(*v) : QJsonValue();
}

std::string curveKey(const noise::Curve& c) {
    return c.machine + "\x1f" + c.region + "\x1f" + c.mode + "\x1f" + noise::paramsLabel(c.params);
}

}  // namespace

QJsonObject compareCpi(const cpi::CpiData& a, const cpi::CpiData& b) {
    std::map<std::pair<std::string, std::string>, const cpi::KernelStack*> inA, inB;
    for (const auto& s : a.stacks) inA[{s.kernel, s.source}] = &s;
    for (const auto& s : b.stacks) inB[{s.kernel, s.source}] = &s;
    auto stallOf = [](const cpi::KernelStack& s) {
        double stall = 0;
        for (const auto& [category, cycles] : s.cycles)
            if (cpi::gsiClassOf(category) != "Base") stall += cycles;
        return stall;
    };
    double totalA = 0, totalB = 0, stallA = 0, stallB = 0;
    QJsonArray ops, categories;
    size_t matched = 0;
    for (const auto& [key, sa] : inA) {
        auto it = inB.find(key);
        if (it == inB.end()) continue;
        const cpi::KernelStack& sb = *it->second;
        ++matched;
        totalA += sa->total();
        totalB += sb.total();
        stallA += stallOf(*sa);
        stallB += stallOf(sb);
        ops.append(
            QJsonObject{{"name", QString::fromStdString(key.first + " [" + key.second + "]")},
                        {"kernel", QString::fromStdString(key.first)},
                        {"source", QString::fromStdString(key.second)},
                        {"a", sa->total()},
                        {"b", sb.total()},
                        {"delta_pct", pct(sa->total(), sb.total())}});
        std::set<std::string> names;
        for (const auto& [c, v] : sa->cycles) names.insert(c);
        for (const auto& [c, v] : sb.cycles) names.insert(c);
        for (const std::string& c : names) {
            const auto va = sa->cycles.count(c) ? sa->cycles.at(c) : 0.0;
            const auto vb = sb.cycles.count(c) ? sb.cycles.at(c) : 0.0;
            categories.append(QJsonObject{{"kernel", QString::fromStdString(key.first)},
                                          {"source", QString::fromStdString(key.second)},
                                          {"category", QString::fromStdString(c)},
                                          {"a", va},
                                          {"b", vb},
                                          {"delta", vb - va}});
        }
    }
    char line[200];
    std::snprintf(line, sizeof line,
                  "B vs A: %+.1f%% cycles, %+.1f%% stall cycles over %zu matched kernel stacks",
                  pct(totalA, totalB), pct(stallA, stallB), matched);
    return QJsonObject{{"kind", "cpi"},
                       {"a", QJsonObject{{"stacks", static_cast<qint64>(a.stacks.size())},
                                         {"total_cycles", totalA},
                                         {"stall_cycles", stallA}}},
                       {"b", QJsonObject{{"stacks", static_cast<qint64>(b.stacks.size())},
                                         {"total_cycles", totalB},
                                         {"stall_cycles", stallB}}},
                       {"delta", QJsonObject{{"total", totalB - totalA},
                                             {"stall", stallB - stallA},
                                             {"total_pct", pct(totalA, totalB)},
                                             {"stall_pct", pct(stallA, stallB)}}},
                       {"ops", ops},
                       {"categories", categories},
                       {"matched", static_cast<qint64>(matched)},
                       {"summary", line}};
}

QJsonObject compareAbsorption(const noise::AbsorptionReport& a, const noise::AbsorptionReport& b) {
    std::map<std::string, const noise::Curve*> inB;
    for (const auto& c : b.curves) inB[curveKey(c)] = &c;
    QJsonArray curves, ops;
    double plateauA = 0, plateauB = 0;
    size_t matched = 0, changedK1 = 0;
    for (const auto& ca : a.curves) {
        auto it = inB.find(curveKey(ca));
        if (it == inB.end()) continue;
        const noise::Curve& cb = *it->second;
        ++matched;
        plateauA += ca.fit.t0;
        plateauB += cb.fit.t0;
        changedK1 += ca.fit.k1 != cb.fit.k1;
        const QString name =
            QString::fromStdString(ca.machine + " " + ca.region + " " + ca.mode +
                                   (ca.params.empty() ? "" : " " + noise::paramsLabel(ca.params)));
        curves.append(QJsonObject{{"machine", QString::fromStdString(ca.machine)},
                                  {"region", QString::fromStdString(ca.region)},
                                  {"mode", QString::fromStdString(ca.mode)},
                                  {"k1_a", ca.fit.k1},
                                  {"k1_b", cb.fit.k1},
                                  {"k2_a", optional(ca.fit.k2)},
                                  {"k2_b", optional(cb.fit.k2)},
                                  {"t0_a", ca.fit.t0},
                                  {"t0_b", cb.fit.t0},
                                  {"slope_a", ca.fit.slope},
                                  {"slope_b", cb.fit.slope}});
        ops.append(QJsonObject{{"name", name},
                               {"a", ca.fit.t0},
                               {"b", cb.fit.t0},
                               {"delta_pct", pct(ca.fit.t0, cb.fit.t0)}});
    }
    auto classes = [](const noise::AbsorptionReport& r) {
        QJsonArray out;
        for (const auto& c : r.classifications)
            out.append(QJsonObject{{"machine", QString::fromStdString(c.machine)},
                                   {"region", QString::fromStdString(c.region)},
                                   {"class", noise::className(c.cls)}});
        return out;
    };
    char line[200];
    std::snprintf(
        line, sizeof line,
        "B vs A: %+.1f%% plateau runtime, absorption changed on %zu of %zu matched curves",
        pct(plateauA, plateauB), changedK1, matched);
    return QJsonObject{
        {"kind", "noise"},
        {"a", QJsonObject{{"curves", static_cast<qint64>(a.curves.size())},
                          {"plateau_total", plateauA},
                          {"classification", classes(a)}}},
        {"b", QJsonObject{{"curves", static_cast<qint64>(b.curves.size())},
                          {"plateau_total", plateauB},
                          {"classification", classes(b)}}},
        // Noise runs have no stall cycles; `total` is the summed plateau runtime.
        {"delta", QJsonObject{{"total", plateauB - plateauA}, {"stall", QJsonValue()}}},
        {"ops", ops},
        {"curves", curves},
        {"summary", line}};
}

}  // namespace stallscope
