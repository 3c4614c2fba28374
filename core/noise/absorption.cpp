// Curves from runs and their classes (analyzeRuns), loading runs from the workspace, the JSON
// report and the suggestions. Fitting one curve is absorption_fit.cpp (on the regression of
// segmented_regression.cpp), the classes absorption_classify.cpp.
#include "core/noise/absorption.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <tuple>

#include "core/noise/absorption_internal.h"
#include "core/sqlite.h"
#include "core/workspace.h"

namespace stallscope::noise {

using detail::median;
using detail::Reading;
using detail::reading;

namespace {

std::optional<double> numericValue(const std::string& text) {
    bool ok = false;
    const double v = QString::fromStdString(text).trimmed().toDouble(&ok);
    if (!ok || !std::isfinite(v)) return std::nullopt;
    return v;
}

}  // namespace

bool paramValueLess(const std::string& a, const std::string& b) {
    const auto x = numericValue(a), y = numericValue(b);
    if (x && y) return *x != *y ? *x < *y : a < b;
    if (x || y) return x.has_value();  // numbers first
    return a < b;
}

bool paramsLess(const std::map<std::string, std::string>& a,
                const std::map<std::string, std::string>& b) {
    auto i = a.begin(), j = b.begin();
    for (; i != a.end() && j != b.end(); ++i, ++j) {
        if (i->first != j->first) return i->first < j->first;
        if (i->second != j->second) return paramValueLess(i->second, j->second);
    }
    return i == a.end() && j != b.end();
}

std::string paramsLabel(const std::map<std::string, std::string>& params) {
    std::string out;
    for (const auto& [name, value] : params) out += (out.empty() ? "" : ", ") + name + "=" + value;
    return out;
}

namespace {

std::string formatCount(double v) {
    return QString::number(v, 'g', 6).toStdString();
}

std::string absorptionText(const std::optional<double>& v, bool lowerBound) {
    if (!v) return "not measured";
    return (lowerBound ? "≥ " : "") + formatCount(*v);
}

// "13", "13 (12-14)", "≥ 40", "3 (0-6, knee not placed)".
std::string readingText(const std::optional<double>& v, bool lowerBound,
                        const std::optional<AbsorptionInterval>& in, bool uncertain) {
    std::string text = absorptionText(v, lowerBound);
    if (!v || !in) return text;
    std::string range;
    if (!in->high)
        range = in->low < *v ? "from " + formatCount(in->low) : "";
    else if (in->low != *v || *in->high != *v)
        range = formatCount(in->low) + "–" + formatCount(*in->high);
    if (uncertain) range += std::string(range.empty() ? "" : ", ") + "knee not placed";
    return range.empty() ? text : text + " (" + range + ")";
}

}  // namespace

AbsorptionReport analyzeRuns(const std::vector<NoiseRun>& runs, const FitOptions& fitOptions,
                             const ClassifyOptions& classifyOptions) {
    AbsorptionReport report;
    report.runs = static_cast<int64_t>(runs.size());
    using Key =
        std::tuple<std::string, std::string, std::map<std::string, std::string>, std::string>;
    std::map<Key, std::vector<const NoiseRun*>> groups;
    for (const NoiseRun& r : runs) groups[{r.machine, r.region, r.params, r.mode}].push_back(&r);

    for (const auto& [key, rows] : groups) {
        Curve c;
        std::tie(c.machine, c.region, c.params, c.mode) = key;
        std::vector<std::pair<double, double>> samples;
        double smallestK = rows.front()->k;
        for (const NoiseRun* r : rows) smallestK = std::min(smallestK, r->k);
        std::vector<double> perfAtBase;
        for (const NoiseRun* r : rows) {
            samples.emplace_back(r->k, r->time);
            if (!c.bodyInstr && r->bodyInstr) c.bodyInstr = r->bodyInstr;
            if (!c.payloadInstr && r->payloadInstr) c.payloadInstr = r->payloadInstr;
            if (!c.overheadInstr && r->overheadInstr) c.overheadInstr = r->overheadInstr;
            if (!c.cores && r->cores) c.cores = r->cores;
            if (r->perf && r->k == smallestK) perfAtBase.push_back(*r->perf);
            if (c.perfUnit.empty()) {
                auto it = r->extra.find("perf_unit");
                if (it != r->extra.end()) c.perfUnit = it->second;
            }
        }
        c.timeUnit = rows.front()->timeUnit;
        if (!perfAtBase.empty()) c.perf = median(perfAtBase);
        c.fit = fitCurve(samples, fitOptions);
        report.curves.push_back(std::move(c));
    }

    // Numeric parameter values in numeric order (the map above ordered them as text).
    std::stable_sort(report.curves.begin(), report.curves.end(),
                     [](const Curve& a, const Curve& b) {
                         if (a.machine != b.machine) return a.machine < b.machine;
                         if (a.region != b.region) return a.region < b.region;
                         if (a.params != b.params) return paramsLess(a.params, b.params);
                         return a.mode < b.mode;
                     });

    // One classification per (machine, region, params), from its modes' absorptions.
    for (size_t i = 0; i < report.curves.size();) {
        size_t j = i;
        Classification cl;
        cl.machine = report.curves[i].machine;
        cl.region = report.curves[i].region;
        cl.params = report.curves[i].params;
        Evidence& e = cl.evidence;
        for (; j < report.curves.size() && report.curves[j].machine == cl.machine &&
               report.curves[j].region == cl.region && report.curves[j].params == cl.params;
             ++j) {
            const Curve& c = report.curves[j];
            const bool lowerBound = !c.fit.degraded;
            const AbsorptionInterval interval{c.fit.k1Low, c.fit.k1High};
            if (c.mode == "fp_add64") {
                e.fp = c.fit.k1;
                e.fpLowerBound = lowerBound;
                e.fpInterval = interval;
                e.fpUncertain = c.fit.uncertain;
            } else if (c.mode == "l1_ld64") {
                e.l1 = c.fit.k1;
                e.l1LowerBound = lowerBound;
                e.l1Interval = interval;
                e.l1Uncertain = c.fit.uncertain;
            } else if (c.mode == "memory_ld64") {
                e.memory = c.fit.k1;
                e.memoryLowerBound = lowerBound;
                e.memoryInterval = interval;
                e.memoryUncertain = c.fit.uncertain;
            } else if (c.mode == "int64_add") {
                e.integer = c.fit.k1;
                e.integerInterval = interval;
            }
        }
        e.text = "FP " + readingText(e.fp, e.fpLowerBound, e.fpInterval, e.fpUncertain) + ", L1 " +
                 readingText(e.l1, e.l1LowerBound, e.l1Interval, e.l1Uncertain) + ", memory " +
                 readingText(e.memory, e.memoryLowerBound, e.memoryInterval, e.memoryUncertain);
        if (e.integer) e.text += ", int " + formatCount(*e.integer);
        if (auto cls = classify(e, &cl.reason, classifyOptions)) {
            cl.cls = *cls;
            // Memory counts only where the class was read from it.
            const bool memoryUsed = cl.cls == BottleneckClass::BandwidthBound ||
                                    cl.cls == BottleneckClass::LatencyBound;
            const ClassifyOptions& o = classifyOptions;
            const bool ambiguous =
                reading(*e.fp, e.fpLowerBound, e.fpInterval, e.fpUncertain, o.low, o) ==
                    Reading::Ambiguous ||
                reading(*e.l1, e.l1LowerBound, e.l1Interval, e.l1Uncertain, o.low, o) ==
                    Reading::Ambiguous ||
                (memoryUsed && reading(*e.memory, e.memoryLowerBound, e.memoryInterval,
                                       e.memoryUncertain, o.memoryLow, o) == Reading::Ambiguous);
            cl.uncertain =
                e.fpUncertain || e.l1Uncertain || (memoryUsed && e.memoryUncertain) || ambiguous;
            if (cl.uncertain)
                cl.reason +=
                    "; uncertain: a knee it rests on is not placed or its interval spans zero "
                    "and more, so the class reads the best estimate";
            report.classifications.push_back(std::move(cl));
        }
        i = j;
    }
    return report;
}

std::vector<NoiseRun> loadRuns(const Workspace& workspace, int64_t profileId) {
    sql::Statement q(workspace.db(),
                     "SELECT machine, region, mode, k, time, time_unit, rep, body_instr, "
                     "payload_instr, overhead_instr, cores, perf, params, extra "
                     "FROM noise_runs WHERE profile_id = ? ORDER BY line");
    q.bind(1, profileId);
    auto jsonMap = [](const std::string& text) {
        std::map<std::string, std::string> out;
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QJsonValue v = it.value();
            out[it.key().toStdString()] = v.isDouble()
                                              ? QString::number(v.toDouble(), 'g', 15).toStdString()
                                              : v.toString().toStdString();
        }
        return out;
    };
    std::vector<NoiseRun> runs;
    while (q.step()) {
        NoiseRun r;
        r.machine = q.text(0);
        r.region = q.text(1);
        r.mode = q.text(2);
        r.k = q.real(3);
        r.time = q.real(4);
        r.timeUnit = q.text(5);
        if (!q.isNull(6)) r.rep = q.int64(6);
        if (!q.isNull(7)) r.bodyInstr = q.real(7);
        if (!q.isNull(8)) r.payloadInstr = q.real(8);
        if (!q.isNull(9)) r.overheadInstr = q.real(9);
        if (!q.isNull(10)) r.cores = q.int64(10);
        if (!q.isNull(11)) r.perf = q.real(11);
        r.params = jsonMap(q.text(12));
        r.extra = jsonMap(q.text(13));
        runs.push_back(std::move(r));
    }
    return runs;
}

AbsorptionReport analyzeProfile(const Workspace& workspace, int64_t profileId) {
    return analyzeRuns(loadRuns(workspace, profileId));
}

namespace {

QJsonObject paramsJson(const std::map<std::string, std::string>& params) {
    QJsonObject o;
    for (const auto& [name, value] : params) {
        bool numeric = false;
        const double v = QString::fromStdString(value).toDouble(&numeric);
        o.insert(QString::fromStdString(name),
                 numeric ? QJsonValue(v) : QJsonValue(QString::fromStdString(value)));
    }
    return o;
}

QJsonValue optionalNumber(const std::optional<double>& v) {
    return v ? QJsonValue(*v) : QJsonValue(QJsonValue::Null);
}

}  // namespace

QJsonObject absorptionJson(const AbsorptionReport& report) {
    QJsonArray curves;
    for (const Curve& c : report.curves) {
        QJsonObject o;
        o.insert("machine", QString::fromStdString(c.machine));
        o.insert("region", QString::fromStdString(c.region));
        o.insert("mode", QString::fromStdString(c.mode));
        o.insert("params", paramsJson(c.params));
        o.insert("abs_raw", c.fit.k1);
        o.insert("abs_rel", optionalNumber(c.absRel()));
        o.insert("k2", optionalNumber(c.fit.k2));
        // The intervals (measured k) and the fitted breakpoints behind them.
        o.insert("abs_raw_low", c.fit.k1Low);
        o.insert("abs_raw_high", optionalNumber(c.fit.k1High));
        o.insert("k2_low", optionalNumber(c.fit.k2Low));
        o.insert("k2_high", optionalNumber(c.fit.k2High));
        o.insert("knee_uncertain", c.fit.uncertain);
        o.insert("knee_note", QString::fromStdString(c.fit.note));
        o.insert("segments", c.fit.segments);
        o.insert("k1_fit", c.fit.knee);
        o.insert("k1_fit_low", c.fit.kneeLow);
        o.insert("k1_fit_high", c.fit.k1High ? QJsonValue(c.fit.kneeHigh) : QJsonValue());
        o.insert("k2_fit", c.fit.degraded ? optionalNumber(c.fit.saturationStart) : QJsonValue());
        o.insert("k2_fit_low", c.fit.k2 ? QJsonValue(c.fit.saturationLow) : QJsonValue());
        o.insert("k2_fit_high", c.fit.k2 ? QJsonValue(c.fit.saturationHigh) : QJsonValue());
        o.insert("transient_slope", c.fit.degraded ? c.fit.transientSlope : 0.0);
        o.insert("dispersion", c.fit.dispersion);
        o.insert("outliers", c.fit.outliers);
        o.insert("degraded", c.fit.degraded);
        o.insert("saturated", c.fit.k2.has_value());
        o.insert("t0", c.fit.t0);
        o.insert("slope", c.fit.slope);
        o.insert("threshold", c.fit.threshold);
        o.insert("relative_noise", c.fit.relativeNoise);
        o.insert("line_tolerance", c.fit.lineTolerance);
        o.insert("time_unit", QString::fromStdString(c.timeUnit));
        o.insert("body_instr", optionalNumber(c.bodyInstr));
        o.insert("perf", optionalNumber(c.perf));
        if (!c.perfUnit.empty()) o.insert("perf_unit", QString::fromStdString(c.perfUnit));
        if (c.cores) o.insert("cores", static_cast<qint64>(*c.cores));
        QJsonArray points;
        for (const CurvePoint& p : c.fit.points) {
            points.append(QJsonObject{{"k", p.k},
                                      {"median", p.median},
                                      {"q1", p.q1},
                                      {"q3", p.q3},
                                      {"runs", p.runs},
                                      {"normalized", c.fit.t0 > 0 ? p.median / c.fit.t0 : 0.0},
                                      {"outlier", p.outlier}});
        }
        o.insert("points", points);
        curves.append(o);
    }
    QJsonArray classes;
    for (const Classification& cl : report.classifications) {
        const Evidence& e = cl.evidence;
        auto interval = [](const std::optional<AbsorptionInterval>& in) {
            if (!in) return QJsonValue();
            return QJsonValue(QJsonArray{in->low, optionalNumber(in->high)});
        };
        QJsonObject evidence{{"fp_add64", optionalNumber(e.fp)},
                             {"l1_ld64", optionalNumber(e.l1)},
                             {"memory_ld64", optionalNumber(e.memory)},
                             {"int64_add", optionalNumber(e.integer)},
                             {"intervals", QJsonObject{{"fp_add64", interval(e.fpInterval)},
                                                       {"l1_ld64", interval(e.l1Interval)},
                                                       {"memory_ld64", interval(e.memoryInterval)},
                                                       {"int64_add", interval(e.integerInterval)}}},
                             {"text", QString::fromStdString(e.text)}};
        classes.append(QJsonObject{{"machine", QString::fromStdString(cl.machine)},
                                   {"region", QString::fromStdString(cl.region)},
                                   {"params", paramsJson(cl.params)},
                                   {"class", className(cl.cls)},
                                   {"uncertain", cl.uncertain},
                                   {"evidence", evidence},
                                   {"reason", QString::fromStdString(cl.reason)}});
    }
    return QJsonObject{{"curves", curves},
                       {"classification", classes},
                       {"runs", static_cast<qint64>(report.runs)}};
}

std::vector<NoiseSuggestion> noiseSuggestions(const AbsorptionReport& report) {
    std::vector<NoiseSuggestion> out;
    for (const Classification& cl : report.classifications) {
        const Evidence& e = cl.evidence;
        auto count = [](const std::optional<double>& v, bool lowerBound) {
            return absorptionText(v, lowerBound);
        };
        std::string advice;
        switch (cl.cls) {
            case BottleneckClass::ComputeBound:
                advice = "vectorize or cut FP work";
                if (e.memory)
                    advice += "; memory absorbs " + count(e.memory, e.memoryLowerBound) + " loads";
                else
                    advice += "; L1 absorbs " + count(e.l1, e.l1LowerBound) + " loads";
                break;
            case BottleneckClass::DataBound:
                advice = "cut loads or improve locality (L1 absorbs " +
                         count(e.l1, e.l1LowerBound) + ", FP absorbs " +
                         count(e.fp, e.fpLowerBound) + ": extra arithmetic is free)";
                break;
            case BottleneckClass::FullOverlap:
                advice =
                    "FP and loads saturate together or the front end limits: check "
                    "decode/dispatch, then cut both FP and load work";
                break;
            case BottleneckClass::LimitedOverlap:
                advice = "break FP/load dependency chains or interleave independent work (FP " +
                         count(e.fp, e.fpLowerBound) + ", L1 " + count(e.l1, e.l1LowerBound) + ")";
                break;
            case BottleneckClass::BandwidthBound:
                advice = "move fewer bytes (blocking, smaller types, fused passes); FP absorbs " +
                         count(e.fp, e.fpLowerBound) + " instructions, so extra compute is free";
                break;
            case BottleneckClass::LatencyBound:
                advice =
                    "add memory-level parallelism (prefetch, independent chains); memory "
                    "absorbs " +
                    count(e.memory, e.memoryLowerBound) + " loads";
                break;
        }
        std::string where = cl.region + (cl.machine.empty() ? "" : " on " + cl.machine);
        if (!cl.params.empty()) where += " (" + paramsLabel(cl.params) + ")";
        out.push_back({className(cl.cls),
                       std::string(className(cl.cls)) + ": " + advice + " — " + where, cl.machine,
                       cl.region});
    }
    return out;
}

}  // namespace stallscope::noise
