// Fitting one curve: the medians of its repeats, the segmented regression's three models and
// the penalized choice among them, then the knee, saturation and their intervals in measured k.
#include <QString>
#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/noise/absorption.h"
#include "core/noise/absorption_internal.h"
#include "core/noise/segmented_regression.h"

namespace stallscope::noise {

using detail::Breakpoint;
using detail::breakpointGrid;
using detail::hull;
using detail::median;
using detail::NoiseModel;
using detail::noiseModel;
using detail::quantile;
using detail::refinedGrid;
using detail::searchFit;
using detail::Segmented;
using detail::Sums;
using detail::TransientLimits;
using detail::TrimmedFit;
using detail::trimmedFit;

namespace {

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

// The last measured k at or before `k` (the first when none is).
double lastAtOrBefore(const std::vector<CurvePoint>& points, double k) {
    double out = points.front().k;
    for (const CurvePoint& p : points)
        if (p.k <= k + 1e-9 * (1 + std::abs(k))) out = p.k;
    return out;
}

// `k` itself, or the measured k it is within 2% of a step from: an interval end that the
// interpolation puts a hair below a measured k does not move abs_raw a whole step.
double snapped(const std::vector<CurvePoint>& points, double k) {
    for (size_t i = 0; i < points.size(); ++i) {
        const double before = i > 0 ? points[i].k - points[i - 1].k : INFINITY;
        const double after = i + 1 < points.size() ? points[i + 1].k - points[i].k : INFINITY;
        if (std::abs(k - points[i].k) <= 0.02 * std::min(before, after)) return points[i].k;
    }
    return k;
}

size_t indexOf(const std::vector<CurvePoint>& points, double k) {
    size_t i = 0;
    while (i + 1 < points.size() && points[i].k < k) ++i;
    return i;
}

std::string kText(double k) {
    return QString::number(k, 'g', 6).toStdString();
}

// Two noise quantities: degraded when the second median is beyond the noise; the knee lies
// somewhere between them.
void fitTwoPoints(CurveFit& fit, const FitOptions& options) {
    const auto& p = fit.points;
    fit.t0 = p[0].median;
    fit.relativeNoise = relativeSpread(p, 0, p.size());
    fit.threshold = thresholdFor(p, fit.relativeNoise, options);
    fit.degraded = p.size() == 2 && p[1].median > fit.t0 * (1 + fit.threshold);
    if (!fit.degraded) {
        fit.k1 = fit.knee = fit.kneeLow = fit.kneeHigh = p.back().k;
        fit.k1Low = fit.k1;
        return;
    }
    fit.segments = 2;
    fit.k1 = fit.k1Low = p[0].k;
    fit.k1High = p[0].k;
    fit.knee = fit.kneeLow = p[0].k;
    fit.kneeHigh = p[1].k;
    fit.saturationStart = fit.knee;
    fit.tailSlope = fit.transientSlope = (p[1].median - p[0].median) / (p[1].k - p[0].k);
    fit.uncertain = true;
    fit.note = "only two noise quantities: the knee lies anywhere between k=" + kText(p[0].k) +
               " and k=" + kText(p[1].k);
}

}  // namespace

double CurveFit::model(double k) const {
    if (!degraded || k <= knee) return t0;
    if (segments == 3 && saturationStart && k <= *saturationStart)
        return t0 + transientSlope * (k - knee);
    const double start = segments == 3 && saturationStart ? *saturationStart : knee;
    return t0 + transientSlope * (start - knee) + tailSlope * (k - start);
}

namespace {

// One curve as the segmented regression sees it: k mapped onto [0, 1] (x), runtimes relative to
// the typical median (y), the noise and weight of each median, and the candidate breakpoints.
struct Regression {
    double k0 = 0, span = 0, ref = 1;
    std::vector<double> x, y, weight;
    NoiseModel noise;
    std::vector<Breakpoint> grid;
    size_t stride = 1;
    TransientLimits limits;

    // The measured k at position u.
    double k(double u) const { return k0 + u * span; }
    // 1 / SE^2 of each median, its standard error scaled by the dispersion.
    void weigh() {
        for (size_t i = 0; i < x.size(); ++i)
            weight[i] = 1 / (noise.dispersion * noise.dispersion * noise.se[i] * noise.se[i]);
    }
};

Regression regressionOf(const std::vector<CurvePoint>& points, const FitOptions& options) {
    const size_t n = points.size();
    Regression r;
    r.k0 = points.front().k;
    r.span = points.back().k - r.k0;
    std::vector<double> medians;
    for (const CurvePoint& p : points) medians.push_back(p.median);
    const double typical = median(medians);
    r.ref = typical > 0 ? typical : 1.0;
    r.x.resize(n);
    r.y.resize(n);
    r.weight.resize(n);
    for (size_t i = 0; i < n; ++i) {
        r.x[i] = (points[i].k - r.k0) / r.span;
        r.y[i] = points[i].median / r.ref;
    }
    r.noise = noiseModel(points, r.x, r.y);
    r.grid = breakpointGrid(r.x, &r.stride);
    r.limits = {options.minTransientRatio, options.maxTransientRatio};
    r.weigh();
    return r;
}

// The prefix sums over the medians a fit used.
Sums sumsOfUsed(const Regression& r, const std::vector<char>& used) {
    std::vector<double> w(r.x.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = used[i] ? r.weight[i] : 0.0;
    Sums sums;
    sums.build(r.x, r.y, w);
    return sums;
}

// Flat, plateau + rise, plateau + transient + rise, each trimmed of outlying medians, and the
// penalized choice among them: the trimmed cost plus ln(n) per parameter.
struct ModelChoice {
    TrimmedFit fits[3];
    double criterion[3] = {}, plateauNoise[3] = {};
    double penalty[3] = {};  // what each model's parameters cost
    int chosen = 0;

    const TrimmedFit& best() const { return fits[chosen]; }
};

// A rise must also lift the model by minRelativeRise by the last k, or it is no degradation at
// all.
ModelChoice chooseModel(const Regression& r, const std::vector<CurvePoint>& points,
                        const FitOptions& options) {
    const size_t n = r.x.size();
    ModelChoice models;
    const double penalty = options.penaltyPerParameter * std::log(double(n));
    models.penalty[1] = 2 * penalty;
    models.penalty[2] = 2 * penalty * (1 + options.transientPenalty);
    for (int m = 0; m < 3; ++m) {
        TrimmedFit& fit = models.fits[m];
        fit = trimmedFit(m + 1, r.x, r.y, r.weight, r.grid, options.outlierCutoff, r.limits);
        models.criterion[m] = fit.cost + models.penalty[m];
        // The run-to-run noise of the plateau (of every k for the flat fit); with one run per k,
        // the medians' own scatter about the model.
        size_t plateau = n;
        if (m > 0) {
            plateau = 0;
            while (plateau < n && r.x[plateau] <= fit.fit.u1 + 1e-12) ++plateau;
        }
        models.plateauNoise[m] = r.noise.repeats
                                     ? relativeSpread(points, 0, std::max<size_t>(1, plateau))
                                     : r.noise.dispersion;
        if (m > 0 && fit.fit.segments != 0) {
            const double rise = fit.fit.at(1.0) - fit.fit.t0;
            if (!(rise > options.minRelativeRise * fit.fit.t0)) models.criterion[m] = INFINITY;
        }
        if (models.criterion[m] < models.criterion[models.chosen]) models.chosen = m;
    }
    return models;
}

// The scatter of the medians about the chosen model (robust, corrected for its parameters)
// replaces the first guess from second differences. True when that changed the weights: the
// models are then fitted again.
bool rescaleNoise(Regression& r, const ModelChoice& models) {
    const size_t n = r.x.size();
    const Segmented& fit = models.best().fit;
    if (fit.segments == 0 || n < 8) return false;
    const double parameters = 1 + 2 * models.chosen;
    std::vector<double> z;
    for (size_t i = 0; i < n; ++i)
        z.push_back(std::abs(r.y[i] - fit.at(r.x[i])) * std::sqrt(r.weight[i]));
    const double scatter =
        r.noise.dispersion * 1.4826 * median(z) * std::sqrt(double(n) / (double(n) - parameters));
    const double dispersion = r.noise.repeats ? std::max(1.0, scatter) : std::max(scatter, 1e-5);
    if (!(std::abs(dispersion - r.noise.dispersion) > 1e-9 * r.noise.dispersion)) return false;
    r.noise.dispersion = dispersion;
    r.weigh();
    return true;
}

// On a strided grid, the breakpoints found are refined among every measured k around them, and
// the intervals read from that finer grid (returned; the grid itself when not strided).
std::vector<Breakpoint> refineBreakpoints(const Regression& r, ModelChoice& models,
                                          const FitOptions& options) {
    const int chosen = models.chosen;
    if (r.stride <= 1 || chosen == 0) return r.grid;
    TrimmedFit& best = models.fits[chosen];
    // Trimmed again: medians next to the true knee sat off the coarse fit.
    std::vector<Breakpoint> fine = refinedGrid(r.x, r.grid, r.stride, {best.fit.u1, best.fit.u2});
    TrimmedFit refined =
        trimmedFit(chosen + 1, r.x, r.y, r.weight, fine, options.outlierCutoff, r.limits);
    if (refined.fit.segments != 0 && refined.cost <= best.cost) {
        best = std::move(refined);
        models.criterion[chosen] = best.cost + models.penalty[chosen];
    }
    return fine;
}

// The plateau, its noise and the medians the chosen model left out.
void recordChosenModel(CurveFit& fit, const Regression& r, const ModelChoice& models,
                       const FitOptions& options) {
    const TrimmedFit& best = models.best();
    fit.dispersion = r.noise.dispersion;
    fit.relativeNoise = models.plateauNoise[models.chosen];
    fit.threshold = thresholdFor(fit.points, fit.relativeNoise, options);
    fit.t0 = best.fit.t0 * r.ref;
    for (size_t i = 0; i < fit.points.size(); ++i) {
        fit.points[i].outlier = !best.used[i];
        fit.outliers += fit.points[i].outlier;
    }
}

// The chi^2 an interval spans: it grows like an F(1, n - 5) quantile when the scatter was
// estimated from the medians themselves.
double intervalChi2(const FitOptions& options, size_t n) {
    return options.intervalChi2 * (1 + 2.5 / double(std::max<size_t>(n, 6) - 5));
}

// Flat: absorbed everything tested. A knee still counts as possible when its best fit is within
// the noise of the flat one (penalties included); then k1 is "at least" that.
void readPossibleKnee(CurveFit& fit, const Regression& r, const ModelChoice& models,
                      double interval) {
    const auto& points = fit.points;
    const double lastK = points.back().k;
    fit.k1 = fit.knee = fit.kneeLow = fit.kneeHigh = lastK;
    fit.k1Low = lastK;
    const int m = models.criterion[2] < models.criterion[1] ? 2 : 1;
    if (!(models.criterion[m] <= models.criterion[0] + interval)) return;
    std::vector<double> byKnee;
    searchFit(sumsOfUsed(r, models.fits[m].used), m + 1, r.grid, r.limits, &byKnee);
    const TrimmedFit& knee = models.fits[m];
    const double trimmed = knee.cost - knee.fit.rss;  // cutoff^2 per trimmed median
    const auto range =
        hull(r.grid, byKnee, models.criterion[0] + interval - trimmed - models.penalty[m]);
    if (!range) return;
    fit.kneeLow = snapped(points, r.k(range->first));
    fit.k1Low = lastAtOrBefore(points, fit.kneeLow);
    fit.uncertain = fit.k1Low < lastK;
    if (fit.uncertain)
        fit.note = "no clear degradation, but a knee from k=" + kText(fit.k1Low) +
                   " on is within the noise";
}

// The fitted breakpoints and slopes in measured k.
void placeBreakpoints(CurveFit& fit, const Regression& r, const Segmented& f) {
    fit.degraded = true;
    fit.segments = f.segments;
    fit.knee = r.k(f.u1);
    fit.k1 = lastAtOrBefore(fit.points, fit.knee);
    fit.saturationStart = r.k(f.u2);
    fit.transientSlope = (f.segments == 3 ? f.a : f.b) * r.ref / r.span;
    fit.tailSlope = f.b * r.ref / r.span;
}

// Intervals: the breakpoints whose best fit on the same medians is within the interval's chi^2
// of the best one. The profiles range over three segments whatever number was chosen (two
// segments are their limit): a two-segment knee sits inside a transient the penalty did not pay
// for, and its interval must reach the transient's start.
void readIntervals(CurveFit& fit, const Regression& r, const TrimmedFit& best,
                   const std::vector<Breakpoint>& fine, double interval) {
    const auto& points = fit.points;
    const Segmented& f = best.fit;
    std::vector<double> byKnee, byEnd;
    const Segmented again = searchFit(sumsOfUsed(r, best.used), 3, fine, r.limits, &byKnee, &byEnd);
    const double limit = std::min(again.rss, f.rss) + interval;
    const auto knees = hull(fine, byKnee, limit);
    const auto ends = hull(fine, byEnd, limit);
    const double u1Low = knees ? std::min(knees->first, f.u1) : f.u1;
    const double u1High = knees ? std::max(knees->second, f.u1) : f.u1;
    const double u2Low = ends ? std::min(ends->first, f.u2) : f.u2;
    const double u2High = ends ? std::max(ends->second, f.u2) : f.u2;
    fit.kneeLow = snapped(points, r.k(u1Low));
    fit.kneeHigh = snapped(points, r.k(u1High));
    fit.saturationLow = snapped(points, r.k(u2Low));
    fit.saturationHigh = snapped(points, r.k(u2High));
    fit.k1Low = lastAtOrBefore(points, fit.kneeLow);
    fit.k1High = lastAtOrBefore(points, fit.kneeHigh);
    fit.k2Low = lastAtOrBefore(points, fit.saturationLow);
    fit.k2High = lastAtOrBefore(points, fit.saturationHigh);
}

// Saturation: the fitted line after the second breakpoint; k2, like k1, is the last measured k
// at or before its breakpoint ("after k2 patterns the code is saturated"). It needs
// minSaturationPoints medians from k2 on that sit on the line (within the noise of the degraded
// medians, never closer than the degradation threshold asks; a long tail may hold an isolated
// outlier) and a line rising beyond the noise.
void readSaturation(CurveFit& fit, const FitOptions& options) {
    const auto& points = fit.points;
    const size_t n = points.size();
    const size_t firstDegraded = indexOf(points, fit.knee + 1e-9 * (1 + std::abs(fit.knee)));
    fit.lineTolerance = std::max(
        fit.threshold, thresholdFor(points, relativeSpread(points, firstDegraded, n), options));
    const double start = *fit.saturationStart;
    const double lineAtZero = fit.model(start) - fit.tailSlope * start;
    auto onLine = [&](const CurvePoint& p) {
        const double expected = lineAtZero + fit.tailSlope * p.k;
        return std::abs(p.median - expected) <= fit.lineTolerance * expected;
    };
    const size_t begin = indexOf(points, std::max(fit.k1, lastAtOrBefore(points, start)));
    const size_t tail = n - begin;
    size_t inLine = 0;
    for (size_t i = begin; i < n; ++i) inLine += onLine(points[i]);
    const size_t minPoints = size_t(std::max(2, options.minSaturationPoints));
    const size_t tolerated = tail > minPoints ? std::max<size_t>(1, tail / 5) : 0;
    const double rise = fit.tailSlope * (points.back().k - start);
    if (inLine >= minPoints && tail - inLine <= tolerated && rise > fit.threshold * fit.t0) {
        fit.k2 = points[begin].k;
        fit.k2Low = std::min(*fit.k2Low, *fit.k2);
        fit.k2High = std::max(*fit.k2High, *fit.k2);
        fit.slope = fit.tailSlope;
        fit.intercept = lineAtZero;
    } else {
        fit.k2Low.reset();
        fit.k2High.reset();
    }
}

// Can the knee be placed? Not when a flat curve fits within the noise, when the interval spans
// more than maxKneeSteps measured steps, or with too few noise quantities.
void judgeKneePlacement(CurveFit& fit, const ModelChoice& models, double interval,
                        const FitOptions& options) {
    const auto& points = fit.points;
    const size_t n = points.size();
    const size_t steps = indexOf(points, *fit.k1High) - indexOf(points, fit.k1Low);
    if (models.criterion[0] <= models.criterion[models.chosen] + interval) {
        fit.k1High.reset();
        fit.uncertain = true;
        fit.note = "degradation is within the noise of a flat curve";
    } else if (steps > size_t(options.maxKneeSteps)) {
        fit.uncertain = true;
        fit.note = "too noisy to place the knee: k1 between " + kText(fit.k1Low) + " and " +
                   kText(*fit.k1High) + " (" + std::to_string(steps) + " steps)";
    } else if (n < 4) {
        fit.uncertain = true;
        fit.note = "only " + std::to_string(n) + " noise quantities: too coarse to place the knee";
    }
}

}  // namespace

CurveFit fitCurve(const std::vector<std::pair<double, double>>& samples,
                  const FitOptions& options) {
    if (samples.empty()) throw InputError("a noise curve without runs");
    CurveFit fit;
    fit.points = pointsFrom(samples);
    if (fit.points.size() < 3) {
        fitTwoPoints(fit, options);
        return fit;
    }
    Regression regression = regressionOf(fit.points, options);
    ModelChoice models = chooseModel(regression, fit.points, options);
    if (rescaleNoise(regression, models)) models = chooseModel(regression, fit.points, options);
    const std::vector<Breakpoint> fine = refineBreakpoints(regression, models, options);
    recordChosenModel(fit, regression, models, options);
    const double interval = intervalChi2(options, fit.points.size());
    if (models.chosen == 0) {
        readPossibleKnee(fit, regression, models, interval);
        return fit;
    }
    placeBreakpoints(fit, regression, models.best().fit);
    readIntervals(fit, regression, models.best(), fine, interval);
    readSaturation(fit, options);
    judgeKneePlacement(fit, models, interval, options);
    return fit;
}

}  // namespace stallscope::noise
