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

CurveFit fitCurve(const std::vector<std::pair<double, double>>& samples,
                  const FitOptions& options) {
    if (samples.empty()) throw InputError("a noise curve without runs");
    CurveFit fit;
    fit.points = pointsFrom(samples);
    auto& points = fit.points;
    const size_t n = points.size();
    if (n < 3) {
        fitTwoPoints(fit, options);
        return fit;
    }

    // Normalized coordinates: k onto [0, 1], runtimes relative to the typical median.
    const double k0 = points.front().k, span = points.back().k - k0;
    std::vector<double> medians;
    for (const CurvePoint& p : points) medians.push_back(p.median);
    const double typical = median(medians);
    const double ref = typical > 0 ? typical : 1.0;
    std::vector<double> x(n), y(n), weight(n);
    for (size_t i = 0; i < n; ++i) {
        x[i] = (points[i].k - k0) / span;
        y[i] = points[i].median / ref;
    }
    NoiseModel noise = noiseModel(points, x, y);
    size_t stride = 1;
    const std::vector<Breakpoint> grid = breakpointGrid(x, &stride);
    const TransientLimits limits{options.minTransientRatio, options.maxTransientRatio};
    auto setWeights = [&] {
        for (size_t i = 0; i < n; ++i)
            weight[i] = 1 / (noise.dispersion * noise.dispersion * noise.se[i] * noise.se[i]);
    };
    setWeights();

    // Flat, plateau + rise, plateau + transient + rise, each trimmed of outlying medians, then
    // the penalized choice: the trimmed cost plus ln(n) per parameter. A rise must also lift the
    // model by minRelativeRise by the last k, or it is no degradation at all.
    const double penalty = options.penaltyPerParameter * std::log(double(n));
    const double modelPenalty[3] = {0, 2 * penalty, 2 * penalty * (1 + options.transientPenalty)};
    TrimmedFit fits[3];
    double criterion[3], plateauNoise[3];
    int chosen = 0;
    auto fitModels = [&] {
        chosen = 0;
        for (int m = 0; m < 3; ++m) {
            fits[m] = trimmedFit(m + 1, x, y, weight, grid, options.outlierCutoff, limits);
            criterion[m] = fits[m].cost + modelPenalty[m];
            // The run-to-run noise of the plateau (of every k for the flat fit); with one run
            // per k, the medians' own scatter about the model.
            size_t plateau = n;
            if (m > 0) {
                plateau = 0;
                while (plateau < n && x[plateau] <= fits[m].fit.u1 + 1e-12) ++plateau;
            }
            plateauNoise[m] = noise.repeats
                                  ? relativeSpread(points, 0, std::max<size_t>(1, plateau))
                                  : noise.dispersion;
            if (m > 0 && fits[m].fit.segments != 0) {
                const double rise = fits[m].fit.at(1.0) - fits[m].fit.t0;
                if (!(rise > options.minRelativeRise * fits[m].fit.t0)) criterion[m] = INFINITY;
            }
            if (criterion[m] < criterion[chosen]) chosen = m;
        }
    };
    fitModels();
    // The scatter of the medians about the chosen model (robust, corrected for its parameters)
    // replaces the first guess from second differences, and the models are fitted again with it.
    if (fits[chosen].fit.segments != 0 && n >= 8) {
        const double parameters = 1 + 2 * chosen;
        std::vector<double> z;
        for (size_t i = 0; i < n; ++i)
            z.push_back(std::abs(y[i] - fits[chosen].fit.at(x[i])) * std::sqrt(weight[i]));
        const double scatter =
            noise.dispersion * 1.4826 * median(z) * std::sqrt(double(n) / (double(n) - parameters));
        const double dispersion = noise.repeats ? std::max(1.0, scatter) : std::max(scatter, 1e-5);
        if (std::abs(dispersion - noise.dispersion) > 1e-9 * noise.dispersion) {
            noise.dispersion = dispersion;
            setWeights();
            fitModels();
        }
    }
    fit.dispersion = noise.dispersion;
    TrimmedFit& best = fits[chosen];
    // On a strided grid, the breakpoints found are refined among every measured k around them,
    // and the intervals read from that finer grid.
    std::vector<Breakpoint> fine = grid;
    if (stride > 1 && chosen > 0) {
        // Trimmed again: medians next to the true knee sat off the coarse fit.
        fine = refinedGrid(x, grid, stride, {best.fit.u1, best.fit.u2});
        TrimmedFit refined =
            trimmedFit(chosen + 1, x, y, weight, fine, options.outlierCutoff, limits);
        if (refined.fit.segments != 0 && refined.cost <= best.cost) {
            best = std::move(refined);
            criterion[chosen] = best.cost + modelPenalty[chosen];
        }
    }
    const Segmented& f = best.fit;
    fit.relativeNoise = plateauNoise[chosen];
    fit.threshold = thresholdFor(points, fit.relativeNoise, options);
    fit.t0 = f.t0 * ref;
    for (size_t i = 0; i < n; ++i) {
        points[i].outlier = !best.used[i];
        fit.outliers += points[i].outlier;
    }
    // The interval's chi^2 grows like an F(1, n - 5) quantile when the scatter was estimated
    // from the medians themselves.
    const double interval = options.intervalChi2 * (1 + 2.5 / double(std::max<size_t>(n, 6) - 5));
    const double lastK = points.back().k;

    if (chosen == 0) {
        // Flat: absorbed everything tested. A knee still counts as possible when its best fit is
        // within the noise of the flat one (penalties included); then k1 is "at least" that.
        fit.k1 = fit.knee = fit.kneeLow = fit.kneeHigh = lastK;
        fit.k1Low = lastK;
        const int m = criterion[2] < criterion[1] ? 2 : 1;
        if (criterion[m] <= criterion[0] + interval) {
            std::vector<double> w(n), byKnee;
            for (size_t i = 0; i < n; ++i) w[i] = fits[m].used[i] ? weight[i] : 0.0;
            Sums sums;
            sums.build(x, y, w);
            searchFit(sums, m + 1, grid, limits, &byKnee);
            const double trimmed = fits[m].cost - fits[m].fit.rss;  // cutoff^2 per trimmed median
            const auto range =
                hull(grid, byKnee, criterion[0] + interval - trimmed - modelPenalty[m]);
            if (range) {
                fit.kneeLow = snapped(points, k0 + range->first * span);
                fit.k1Low = lastAtOrBefore(points, fit.kneeLow);
                fit.uncertain = fit.k1Low < lastK;
                if (fit.uncertain)
                    fit.note = "no clear degradation, but a knee from k=" + kText(fit.k1Low) +
                               " on is within the noise";
            }
        }
        return fit;
    }

    fit.degraded = true;
    fit.segments = f.segments;
    fit.knee = k0 + f.u1 * span;
    fit.k1 = lastAtOrBefore(points, fit.knee);
    fit.saturationStart = k0 + f.u2 * span;
    fit.transientSlope = (f.segments == 3 ? f.a : f.b) * ref / span;
    fit.tailSlope = f.b * ref / span;

    // Intervals: the breakpoints whose best fit on the same medians is within the interval's
    // chi^2 of the best one. The profiles range over three segments whatever number was chosen
    // (two segments are their limit): a two-segment knee sits inside a transient the penalty did
    // not pay for, and its interval must reach the transient's start.
    {
        std::vector<double> w(n), byKnee, byEnd;
        for (size_t i = 0; i < n; ++i) w[i] = best.used[i] ? weight[i] : 0.0;
        Sums sums;
        sums.build(x, y, w);
        const Segmented again = searchFit(sums, 3, fine, limits, &byKnee, &byEnd);
        const double limit = std::min(again.rss, f.rss) + interval;
        const auto knees = hull(fine, byKnee, limit);
        const auto ends = hull(fine, byEnd, limit);
        const double u1Low = knees ? std::min(knees->first, f.u1) : f.u1;
        const double u1High = knees ? std::max(knees->second, f.u1) : f.u1;
        const double u2Low = ends ? std::min(ends->first, f.u2) : f.u2;
        const double u2High = ends ? std::max(ends->second, f.u2) : f.u2;
        fit.kneeLow = snapped(points, k0 + u1Low * span);
        fit.kneeHigh = snapped(points, k0 + u1High * span);
        fit.saturationLow = snapped(points, k0 + u2Low * span);
        fit.saturationHigh = snapped(points, k0 + u2High * span);
        fit.k1Low = lastAtOrBefore(points, fit.kneeLow);
        fit.k1High = lastAtOrBefore(points, fit.kneeHigh);
        fit.k2Low = lastAtOrBefore(points, fit.saturationLow);
        fit.k2High = lastAtOrBefore(points, fit.saturationHigh);
    }

    // Saturation: the fitted line after the second breakpoint; k2, like k1, is the last measured
    // k at or before its breakpoint ("after k2 patterns the code is saturated"). It needs
    // minSaturationPoints medians from k2 on that sit on the line (within the noise of the
    // degraded medians, never closer than the degradation threshold asks; a long tail may hold an
    // isolated outlier) and a line rising beyond the noise.
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
    const double rise = fit.tailSlope * (lastK - start);
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

    // Can the knee be placed? Not when a flat curve fits within the noise, when the interval
    // spans more than maxKneeSteps measured steps, or with too few noise quantities.
    const size_t steps = indexOf(points, *fit.k1High) - indexOf(points, fit.k1Low);
    if (criterion[0] <= criterion[chosen] + interval) {
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
    return fit;
}

}  // namespace stallscope::noise
