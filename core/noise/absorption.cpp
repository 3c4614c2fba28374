#include "absorption.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "errors.h"
#include "sqlite.h"
#include "workspace.h"

namespace stallscope::noise {

namespace {

// Quantile with linear interpolation of a sorted, non-empty vector.
double quantile(const std::vector<double>& sorted, double q) {
    const double pos = q * double(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return quantile(values, 0.5);
}

struct Line {
    double slope = 0, intercept = 0;
    double at(double k) const { return intercept + slope * k; }
};

// Theil-Sen over the given points: the median of pairwise slopes, the median intercept.
Line theilSen(const std::vector<CurvePoint>& points, const std::vector<size_t>& use) {
    std::vector<double> slopes;
    for (size_t a = 0; a < use.size(); ++a)
        for (size_t b = a + 1; b < use.size(); ++b) {
            const CurvePoint &p = points[use[a]], &q = points[use[b]];
            slopes.push_back((q.median - p.median) / (q.k - p.k));
        }
    Line line;
    line.slope = slopes.empty() ? 0 : median(slopes);
    std::vector<double> intercepts;
    for (size_t i : use) intercepts.push_back(points[i].median - line.slope * points[i].k);
    line.intercept = median(intercepts);
    return line;
}

// Siegel's repeated median over points [from, to): for each point the median slope to the
// others, then the median of those. Half the points can be wild before the slope moves (plain
// Theil-Sen gives way when a quarter of them are).
Line repeatedMedian(const std::vector<CurvePoint>& points, size_t from, size_t to) {
    std::vector<double> perPoint;
    for (size_t i = from; i < to; ++i) {
        std::vector<double> slopes;
        for (size_t j = from; j < to; ++j)
            if (j != i)
                slopes.push_back((points[j].median - points[i].median) /
                                 (points[j].k - points[i].k));
        perPoint.push_back(median(slopes));
    }
    Line line;
    line.slope = median(perPoint);
    std::vector<double> intercepts;
    for (size_t i = from; i < to; ++i)
        intercepts.push_back(points[i].median - line.slope * points[i].k);
    line.intercept = median(intercepts);
    return line;
}

// Run-to-run spread of one run relative to its median (1.4826 MAD: a standard deviation for
// Gaussian noise), the median over the points in [from, to) that have repeats; 0 without any.
double relativeSpread(const std::vector<CurvePoint>& points, size_t from, size_t to) {
    std::vector<double> relative;
    for (size_t i = from; i < to; ++i)
        if (points[i].runs >= 2 && points[i].median > 0)
            relative.push_back(1.4826 * points[i].mad / points[i].median);
    return relative.empty() ? 0 : median(relative);
}

// The degradation threshold for a median of the typical number of repeats.
double thresholdFor(const std::vector<CurvePoint>& points, double relativeNoise,
                    const FitOptions& options) {
    std::vector<double> runs;
    for (const CurvePoint& p : points) runs.push_back(p.runs);
    const double standardError = 1.2533 * relativeNoise / std::sqrt(median(runs));
    return std::max(options.minRelativeRise, options.sigmas * standardError);
}

std::vector<CurvePoint> pointsFrom(std::vector<std::pair<double, double>> samples) {
    std::sort(samples.begin(), samples.end());
    std::vector<CurvePoint> points;
    for (size_t i = 0; i < samples.size();) {
        size_t j = i;
        std::vector<double> times;
        while (j < samples.size() && samples[j].first == samples[i].first)
            times.push_back(samples[j++].second);
        std::sort(times.begin(), times.end());
        CurvePoint p;
        p.k = samples[i].first;
        p.median = quantile(times, 0.5);
        p.q1 = quantile(times, 0.25);
        p.q3 = quantile(times, 0.75);
        std::vector<double> deviations;
        for (double t : times) deviations.push_back(std::abs(t - p.median));
        p.mad = median(deviations);
        p.runs = static_cast<int>(times.size());
        points.push_back(p);
        i = j;
    }
    return points;
}

}  // namespace

double CurveFit::model(double k) const {
    if (points.empty()) return t0;
    if (k <= k1) return t0;
    if (k2 && k >= *k2) return intercept + slope * k;
    if (k2) {
        const double end = intercept + slope * *k2;
        return t0 + (end - t0) * (k - k1) / (*k2 - k1);
    }
    // Degraded without saturation: follow the medians past the plateau.
    for (size_t i = 1; i < points.size(); ++i) {
        if (points[i].k < k) continue;
        const CurvePoint& a = points[i - 1];
        const double ya = a.k <= k1 ? t0 : a.median;
        return ya + (points[i].median - ya) * (k - a.k) / (points[i].k - a.k);
    }
    return points.back().median;
}

CurveFit fitCurve(const std::vector<std::pair<double, double>>& samples,
                  const FitOptions& options) {
    if (samples.empty()) throw InputError("a noise curve without runs");
    CurveFit fit;
    fit.points = pointsFrom(samples);
    const auto& points = fit.points;
    const size_t n = points.size();

    // Degradation: the first median beyond the noise that the next one confirms (a single slow
    // median is an outlier, not the end of the plateau). The run-to-run noise is estimated from
    // the plateau only (transient and saturated points spread far more), so t0, the noise and the
    // plateau are found together: start from the smallest k, re-estimate from the plateau found,
    // repeat until nothing changes. t0 re-estimated from the plateau repairs a slow first point.
    fit.t0 = points[0].median;
    fit.relativeNoise = relativeSpread(points, 0, std::max<size_t>(1, (n + 2) / 3));
    size_t firstDegraded = n;
    for (int pass = 0; pass < 8; ++pass) {
        fit.threshold = thresholdFor(points, fit.relativeNoise, options);
        auto exceeds = [&](size_t i) { return points[i].median > fit.t0 * (1 + fit.threshold); };
        size_t found = n;
        for (size_t i = 1; i < n; ++i) {
            if (exceeds(i) && (i + 1 == n || exceeds(i + 1))) {
                found = i;
                break;
            }
        }
        std::vector<double> plateau;
        for (size_t i = 0; i < found; ++i) plateau.push_back(points[i].median);
        const double t0 = median(plateau);
        const double noise = relativeSpread(points, 0, found);
        const bool stable = found == firstDegraded && t0 == fit.t0 && noise == fit.relativeNoise;
        firstDegraded = found;
        fit.t0 = t0;
        fit.relativeNoise = noise;
        if (stable) break;
    }
    fit.degraded = firstDegraded < n;
    fit.k1 = points[fit.degraded ? firstDegraded - 1 : n - 1].k;
    if (!fit.degraded) return fit;

    // Saturation: the longest tail (starting at the knee at the earliest) that a straight rising
    // line explains within the noise; its first k is k2. The line is a repeated-median fit, so
    // one wild median cannot tilt it, and a long tail may hold an isolated outlier (a preempted
    // measurement) as long as k2 itself and at least minSaturationPoints points sit on the line.
    // Degraded runs spread more than plateau runs (the probe's go from 2% to 15%), so a median
    // sits on the line when it is within the noise of the degraded medians, and never closer
    // than the degradation threshold asks.
    const size_t minPoints = static_cast<size_t>(std::max(2, options.minSaturationPoints));
    const size_t knee = firstDegraded - 1;
    fit.lineTolerance = std::max(
        fit.threshold, thresholdFor(points, relativeSpread(points, firstDegraded, n), options));
    auto onLine = [&](const Line& line, size_t i) {
        const double expected = line.at(points[i].k);
        return std::abs(points[i].median - expected) <= fit.lineTolerance * expected;
    };
    for (size_t j = knee; j + minPoints <= n; ++j) {
        const Line line = repeatedMedian(points, j, n);
        if (line.slope <= 0 || !onLine(line, j)) continue;
        const size_t tail = n - j;
        const size_t tolerated = tail > minPoints ? std::max<size_t>(1, tail / 5) : 0;
        std::vector<size_t> inliers;
        for (size_t i = j; i < n; ++i)
            if (onLine(line, i)) inliers.push_back(i);
        if (inliers.size() < minPoints || tail - inliers.size() > tolerated) continue;
        const Line refit = theilSen(points, inliers);
        const double rise = refit.at(points[inliers.back()].k) - refit.at(points[j].k);
        if (refit.slope <= 0 || rise <= fit.threshold * fit.t0) continue;
        fit.k2 = points[j].k;
        fit.slope = refit.slope;
        fit.intercept = refit.intercept;
        break;
    }
    return fit;
}

const char* className(BottleneckClass c) {
    switch (c) {
        case BottleneckClass::ComputeBound:
            return "compute-bound";
        case BottleneckClass::DataBound:
            return "data-bound";
        case BottleneckClass::FullOverlap:
            return "full-overlap";
        case BottleneckClass::LimitedOverlap:
            return "limited-overlap";
        case BottleneckClass::BandwidthBound:
            return "bandwidth-bound";
        case BottleneckClass::LatencyBound:
            return "latency-bound";
    }
    return "limited-overlap";
}

std::optional<BottleneckClass> classify(const Evidence& e, std::string* reason,
                                        const ClassifyOptions& o) {
    if (!e.fp || !e.l1) return std::nullopt;
    auto say = [&](const std::string& why) {
        if (reason) *reason = why;
    };
    // An absorption that never degraded within the tested range is at least that large.
    const bool fpLow = *e.fp <= o.low && !e.fpLowerBound;
    const bool l1Low = *e.l1 <= o.low && !e.l1LowerBound;
    const double fp = *e.fp, l1 = *e.l1;
    if (fpLow && l1Low) {
        say("FP and L1 absorptions are both near zero: both resources saturate together, or the "
            "front end is the bottleneck (paper Table 3, case 3)");
        return BottleneckClass::FullOverlap;
    }
    if (fpLow) {
        say("FP absorption is near zero while loads are absorbed: the FP units are saturated "
            "(Table 3, case 1)");
        return BottleneckClass::ComputeBound;
    }
    if (l1Low) {
        say("L1 absorption is near zero while FP is absorbed: the load/store units are "
            "saturated (Table 3, case 2)");
        return BottleneckClass::DataBound;
    }
    if (std::min(fp, l1) >= o.tipping / 2 && std::max(fp, l1) >= o.tipping) {
        if (!e.memory) {
            say("FP and L1 noise are absorbed in quantity: the loop waits on data beyond L1 "
                "(measure memory_ld64 to tell bandwidth from latency)");
            return BottleneckClass::DataBound;
        }
        const bool memoryLow = *e.memory <= o.memoryLow && !e.memoryLowerBound;
        if (memoryLow) {
            say("FP and L1 noise are absorbed but memory loads are not: memory bandwidth is "
                "saturated (paper §4.2, STREAM)");
            return BottleneckClass::BandwidthBound;
        }
        say("FP, L1 and memory loads are absorbed: stalls come from dependent memory latency, "
            "not bandwidth (paper §4.2, lat_mem_rd)");
        return BottleneckClass::LatencyBound;
    }
    if (fp >= o.tipping) {
        say("FP absorbs far more than L1: the load/store side limits the loop");
        return BottleneckClass::DataBound;
    }
    if (l1 >= o.tipping) {
        say("L1 absorbs far more than FP: the FP side limits the loop");
        return BottleneckClass::ComputeBound;
    }
    say("FP and L1 absorptions are both moderate: FP and memory work depend on each other "
        "(Table 3, case 4)");
    return BottleneckClass::LimitedOverlap;
}

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
            if (c.mode == "fp_add64") {
                e.fp = c.fit.k1;
                e.fpLowerBound = lowerBound;
            } else if (c.mode == "l1_ld64") {
                e.l1 = c.fit.k1;
                e.l1LowerBound = lowerBound;
            } else if (c.mode == "memory_ld64") {
                e.memory = c.fit.k1;
                e.memoryLowerBound = lowerBound;
            } else if (c.mode == "int64_add") {
                e.integer = c.fit.k1;
            }
        }
        e.text = "FP " + absorptionText(e.fp, e.fpLowerBound) + ", L1 " +
                 absorptionText(e.l1, e.l1LowerBound) + ", memory " +
                 absorptionText(e.memory, e.memoryLowerBound);
        if (e.integer) e.text += ", int " + formatCount(*e.integer);
        if (auto cls = classify(e, &cl.reason, classifyOptions)) {
            cl.cls = *cls;
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
                                      {"normalized", c.fit.t0 > 0 ? p.median / c.fit.t0 : 0.0}});
        }
        o.insert("points", points);
        curves.append(o);
    }
    QJsonArray classes;
    for (const Classification& cl : report.classifications) {
        const Evidence& e = cl.evidence;
        QJsonObject evidence{{"fp_add64", optionalNumber(e.fp)},
                             {"l1_ld64", optionalNumber(e.l1)},
                             {"memory_ld64", optionalNumber(e.memory)},
                             {"int64_add", optionalNumber(e.integer)},
                             {"text", QString::fromStdString(e.text)}};
        classes.append(QJsonObject{{"machine", QString::fromStdString(cl.machine)},
                                   {"region", QString::fromStdString(cl.region)},
                                   {"params", paramsJson(cl.params)},
                                   {"class", className(cl.cls)},
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
