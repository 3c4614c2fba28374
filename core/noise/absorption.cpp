#include "core/noise/absorption.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <tuple>

#include "core/errors.h"
#include "core/sqlite.h"
#include "core/workspace.h"

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

// ---- Segmented regression (docs/design.md, "Absorption") ----
//
// The medians y (divided by the first one) at x (k mapped onto [0, 1]) with weights w = 1 / SE^2
// are fitted by t0 + a h1(x) + b h2(x), h1 = clamp(x - u1, 0, u2 - u1), h2 = max(0, x - u2): flat
// to the knee u1, slope a to u2, slope b after it. For given breakpoints this is linear least
// squares, and every sum it needs is a polynomial in u1, u2 over prefix sums of the points, so
// each pair of breakpoints costs O(1) and the breakpoints are searched on a grid of sub-steps.

// Prefix sums of the weighted points, size n + 1.
struct Sums {
    std::vector<double> w, wx, wxx, wy, wxy, wyy;
    struct Range {
        double w = 0, wx = 0, wxx = 0, wy = 0, wxy = 0;
    };
    void build(const std::vector<double>& x, const std::vector<double>& y,
               const std::vector<double>& weight) {
        const size_t n = x.size();
        for (auto* v : {&w, &wx, &wxx, &wy, &wxy, &wyy}) v->assign(n + 1, 0.0);
        for (size_t i = 0; i < n; ++i) {
            w[i + 1] = w[i] + weight[i];
            wx[i + 1] = wx[i] + weight[i] * x[i];
            wxx[i + 1] = wxx[i] + weight[i] * x[i] * x[i];
            wy[i + 1] = wy[i] + weight[i] * y[i];
            wxy[i + 1] = wxy[i] + weight[i] * x[i] * y[i];
            wyy[i + 1] = wyy[i] + weight[i] * y[i] * y[i];
        }
    }
    Range range(size_t from, size_t to) const {
        return {w[to] - w[from], wx[to] - wx[from], wxx[to] - wxx[from], wy[to] - wy[from],
                wxy[to] - wxy[from]};
    }
};

// A candidate breakpoint: its position and how many points lie at or before it.
struct Breakpoint {
    double u = 0;
    size_t before = 0;
};

struct Segmented {
    int segments = 0;  // 0: no feasible fit; 1 flat; 2 plateau + rise; 3 plateau + transient + rise
    double u1 = 0, u2 = 0;        // breakpoints (u2 == u1 with two segments)
    double t0 = 0, a = 0, b = 0;  // plateau and the slopes after u1 and after u2
    double rss = INFINITY;        // weighted, over the points the fit used
    double at(double x) const {
        if (segments <= 1 || x <= u1) return t0;
        if (x <= u2) return t0 + a * (x - u1);
        return t0 + a * (u2 - u1) + b * (x - u2);
    }
};

Segmented fitFlat(const Sums& s) {
    Segmented f;
    const double w = s.w.back(), wy = s.wy.back();
    if (w <= 0) return f;
    f.segments = 1;
    f.t0 = wy / w;
    f.rss = std::max(0.0, s.wyy.back() - f.t0 * wy);
    return f;
}

// Plateau then one rising line from the knee: 2x2 normal equations.
Segmented fitTwo(const Sums& s, const Breakpoint& knee) {
    Segmented f;
    const size_t n = s.w.size() - 1;
    const Sums::Range all = s.range(0, n), c = s.range(knee.before, n);
    const double u = knee.u;
    const double s00 = all.w, s01 = c.wx - u * c.w, s11 = c.wxx - 2 * u * c.wx + u * u * c.w;
    const double t0 = all.wy, t1 = c.wxy - u * c.wy;
    const double det = s00 * s11 - s01 * s01;
    if (!(det > 1e-12 * s00 * s11)) return f;
    f.b = (s00 * t1 - s01 * t0) / det;
    if (!(f.b > 0)) return f;
    f.segments = 2;
    f.u1 = f.u2 = u;
    f.t0 = (s11 * t0 - s01 * t1) / det;
    f.a = f.b;
    f.rss = std::max(0.0, s.wyy.back() - (f.t0 * t0 + f.b * t1));
    return f;
}

// How fast a transient may rise, as a fraction of the saturation slope that follows it.
struct TransientLimits {
    double low = 0.2, high = 0.8;
};

// Plateau, transient, saturation: 3x3 normal equations solved by Cholesky. The transient rises
// at least limits.low times as fast as saturation (a slower one cannot be told from a plateau
// that drifts within the noise, and would let the knee slide anywhere along it) and at most
// limits.high times (as fast would make it saturation, and the second breakpoint arbitrary).
Segmented fitThree(const Sums& s, const Breakpoint& knee, const Breakpoint& end,
                   const TransientLimits& limits) {
    Segmented f;
    const size_t n = s.w.size() - 1;
    const Sums::Range all = s.range(0, n), bs = s.range(knee.before, end.before),
                      cs = s.range(end.before, n);
    const double u1 = knee.u, u2 = end.u, d = u2 - u1;
    const double s00 = all.w;
    const double s01 = bs.wx - u1 * bs.w + d * cs.w;
    const double s02 = cs.wx - u2 * cs.w;
    const double s11 = bs.wxx - 2 * u1 * bs.wx + u1 * u1 * bs.w + d * d * cs.w;
    const double s12 = d * s02;
    const double s22 = cs.wxx - 2 * u2 * cs.wx + u2 * u2 * cs.w;
    const double t0 = all.wy;
    const double t1 = bs.wxy - u1 * bs.wy + d * cs.wy;
    const double t2 = cs.wxy - u2 * cs.wy;
    if (!(s00 > 0)) return f;
    f.u1 = u1;
    f.u2 = u2;
    const double l00 = std::sqrt(s00), l10 = s01 / l00, l20 = s02 / l00;
    const double d11 = s11 - l10 * l10;
    if (d11 > 1e-10 * s11) {
        const double l11 = std::sqrt(d11), l21 = (s12 - l20 * l10) / l11;
        const double d22 = s22 - l20 * l20 - l21 * l21;
        if (d22 > 1e-10 * s22) {
            const double l22 = std::sqrt(d22);
            const double z0 = t0 / l00, z1 = (t1 - l10 * z0) / l11,
                         z2 = (t2 - l20 * z0 - l21 * z1) / l22;
            const double b = z2 / l22, a = (z1 - l21 * b) / l11;
            if (b > 0 && a >= limits.low * b && a <= limits.high * b) {
                f.segments = 3;
                f.a = a;
                f.b = b;
                f.t0 = (z0 - l10 * a - l20 * b) / l00;
                f.rss = std::max(0.0, s.wyy.back() - (z0 * z0 + z1 * z1 + z2 * z2));
                return f;
            }
        }
    }
    // Outside the limits the best fit lies on one of them: a = ratio * b, one slope over
    // g = ratio h1 + h2.
    for (double ratio : {limits.low, limits.high}) {
        const double sgg = ratio * ratio * s11 + 2 * ratio * s12 + s22;
        const double s0g = ratio * s01 + s02, tg = ratio * t1 + t2;
        const double det = s00 * sgg - s0g * s0g;
        if (!(det > 1e-12 * s00 * sgg)) continue;
        const double b = (s00 * tg - s0g * t0) / det;
        if (!(b > 0)) continue;
        const double t = (sgg * t0 - s0g * tg) / det;
        const double rss = std::max(0.0, s.wyy.back() - (t * t0 + b * tg));
        if (rss < f.rss) {
            f.segments = 3;
            f.a = ratio * b;
            f.b = b;
            f.t0 = t;
            f.rss = rss;
        }
    }
    return f;
}

// The best fit with `segments` over the candidate breakpoints, and per candidate the best fit
// with its knee there (`byKnee`) and with saturation starting there (`byEnd`): the profiles the
// intervals are read from. Three segments include two (u2 = u1), the limit of a short transient.
Segmented searchFit(const Sums& s, int segments, const std::vector<Breakpoint>& candidates,
                    const TransientLimits& limits, std::vector<double>* byKnee = nullptr,
                    std::vector<double>* byEnd = nullptr) {
    if (byKnee) byKnee->assign(candidates.size(), INFINITY);
    if (byEnd) byEnd->assign(candidates.size(), INFINITY);
    if (segments == 1) return fitFlat(s);
    Segmented best;
    auto consider = [&](const Segmented& f, size_t i, size_t j) {
        if (f.segments == 0) return;
        if (byKnee) (*byKnee)[i] = std::min((*byKnee)[i], f.rss);
        if (byEnd) (*byEnd)[j] = std::min((*byEnd)[j], f.rss);
        if (f.rss < best.rss) best = f;
    };
    for (size_t i = 0; i < candidates.size(); ++i) {
        consider(fitTwo(s, candidates[i]), i, i);
        if (segments == 3)
            for (size_t j = i + 1; j < candidates.size(); ++j)
                consider(fitThree(s, candidates[i], candidates[j], limits), i, j);
    }
    return best;
}

// The per-point noise of the medians: standard errors from the repeats (each point's own
// run-to-run spread, never below the lower quartile of the spreads, so repeats that happen to
// agree do not dominate), scaled by a dispersion factor from second differences of neighbouring
// medians: medians that scatter more than their repeats say (runs of one k that share a state,
// or a curve that is not quite linear) widen every interval. With one run per k the second
// differences alone give the noise.
struct NoiseModel {
    std::vector<double> se;  // standard error of each median from its runs, in units of y
    double dispersion = 1;   // what the standard errors are multiplied by
    bool repeats = false;
};

NoiseModel noiseModel(const std::vector<CurvePoint>& points, const std::vector<double>& x,
                      const std::vector<double>& y) {
    const size_t n = points.size();
    NoiseModel m;
    std::vector<double> spread(n, -1), known;
    for (size_t i = 0; i < n; ++i)
        if (points[i].runs >= 2 && points[i].median > 0) {
            spread[i] = 1.4826 * points[i].mad / points[i].median;
            known.push_back(spread[i]);
        }
    m.repeats = known.size() * 2 >= n && !known.empty();
    const double typical = m.repeats ? std::max(median(known), 1e-5) : 0;
    const size_t half = 3;  // the spread of 7 neighbouring medians' runs
    m.se.resize(n);
    for (size_t i = 0; i < n; ++i) {
        if (!m.repeats) {
            m.se[i] = std::abs(y[i]) + 1e-12;  // relative units; the dispersion scales them
            continue;
        }
        std::vector<double> near;
        for (size_t j = i > half ? i - half : 0; j < std::min(n, i + half + 1); ++j)
            if (spread[j] >= 0) near.push_back(spread[j]);
        const double s = near.empty() ? typical : std::max(median(near), 1e-5);
        const double factor = points[i].runs >= 3 ? 1.2533 : 1.0;  // median vs mean of two
        m.se[i] = factor * s * std::abs(y[i]) / std::sqrt(double(points[i].runs));
    }
    std::vector<double> z;
    for (size_t i = 1; i + 1 < n; ++i) {
        const double l = (x[i] - x[i - 1]) / (x[i + 1] - x[i - 1]);
        const double e = y[i] - (1 - l) * y[i - 1] - l * y[i + 1];
        const double v = m.se[i] * m.se[i] + (1 - l) * (1 - l) * m.se[i - 1] * m.se[i - 1] +
                         l * l * m.se[i + 1] * m.se[i + 1];
        z.push_back(std::abs(e) / std::sqrt(v));
    }
    // A third of the second differences may straddle a breakpoint or an outlier: the lower
    // third of |z| (0.4307 for a standard normal) is the first guess of the scatter.
    std::sort(z.begin(), z.end());
    const double scatter = z.empty() ? 0 : quantile(z, 1.0 / 3) / 0.4307;
    m.dispersion = m.repeats ? std::max(1.0, scatter) : std::max(scatter, 1e-5);
    return m;
}

// One model fitted with outlier trimming, one median at a time: fit the medians in use, leave
// out the one furthest beyond `cutoff` standard errors and take back any left-out one now within
// it, refit, until nothing changes. Dropping every median beyond the cutoff at once goes wrong
// when a few wild medians drag the first fit so far that good medians look wild too; the
// wildest one is still the furthest. Models are compared on the trimmed cost
// sum(min(z^2, cutoff^2)) of their best step.
struct TrimmedFit {
    Segmented fit;
    std::vector<char> used;  // the medians the fit was made from
    double cost = INFINITY;
};

TrimmedFit trimmedFit(int segments, const std::vector<double>& x, const std::vector<double>& y,
                      const std::vector<double>& weight, const std::vector<Breakpoint>& candidates,
                      double cutoff, const TransientLimits& limits) {
    const size_t n = x.size();
    TrimmedFit out;
    std::vector<char> used(n, 1);
    std::vector<double> w(n), z(n);
    Sums sums;
    for (size_t step = 0; step < n / 2 + 3; ++step) {
        for (size_t i = 0; i < n; ++i) w[i] = used[i] ? weight[i] : 0.0;
        sums.build(x, y, w);
        const Segmented fit = searchFit(sums, segments, candidates, limits);
        if (fit.segments == 0) break;
        double cost = 0;
        for (size_t i = 0; i < n; ++i) {
            z[i] = std::abs(y[i] - fit.at(x[i])) * std::sqrt(weight[i]);
            cost += std::min(z[i] * z[i], cutoff * cutoff);
        }
        if (cost < out.cost) out = {fit, used, cost};
        std::vector<char> next = used;
        size_t worst = n;
        for (size_t i = 0; i < n; ++i) {
            if (!used[i] && z[i] <= cutoff) next[i] = 1;
            if (used[i] && z[i] > cutoff && (worst == n || z[i] > z[worst])) worst = i;
        }
        if (worst < n) next[worst] = 0;
        if (next == used) break;
        used = std::move(next);
    }
    return out;
}

// The grid of candidate breakpoints: every measured k and `perStep` - 1 positions between
// neighbours, up to the third-last point, so a rise always rests on at least two medians a
// whole step past the knee (one median alone cannot tell degradation from an outlier). Curves
// with more than kMaxCandidates such k get every `stride`-th one (and the third-last), and
// refinedGrid() adds the rest around the breakpoints found: the search over pairs stays
// quadratic in at most kMaxCandidates.
constexpr size_t kMaxCandidates = 120;

std::vector<Breakpoint> breakpointGrid(const std::vector<double>& x, size_t* strideOut = nullptr) {
    const size_t n = x.size();
    std::vector<Breakpoint> grid;
    if (strideOut) *strideOut = 1;
    if (n < 3) return grid;
    const size_t stride = (n - 2 + kMaxCandidates - 1) / kMaxCandidates;
    if (strideOut) *strideOut = stride;
    const int perStep = stride > 1 ? 1 : std::clamp(int(std::lround(48.0 / double(n - 1))), 1, 8);
    for (size_t j = 0; j + 2 < n; ++j) {
        if (j % stride != 0 && j + 3 != n) continue;
        grid.push_back({x[j], j + 1});
        if (j + 3 < n)
            for (int s = 1; s < perStep; ++s)
                grid.push_back({x[j] + (x[j + 1] - x[j]) * s / perStep, j + 1});
    }
    return grid;
}

// A strided grid with every measured k within `stride` steps of the given breakpoints added.
std::vector<Breakpoint> refinedGrid(const std::vector<double>& x, std::vector<Breakpoint> grid,
                                    size_t stride, std::initializer_list<double> around) {
    const size_t n = x.size();
    for (double u : around) {
        size_t at = 0;
        while (at + 3 < n && x[at + 1] <= u) ++at;
        for (size_t j = at > stride ? at - stride : 0; j + 2 < n && j <= at + stride; ++j)
            grid.push_back({x[j], j + 1});
    }
    std::sort(grid.begin(), grid.end(),
              [](const Breakpoint& a, const Breakpoint& b) { return a.u < b.u; });
    grid.erase(std::unique(grid.begin(), grid.end(),
                           [](const Breakpoint& a, const Breakpoint& b) { return a.u == b.u; }),
               grid.end());
    return grid;
}

// The range of breakpoints whose profile (best cost with the breakpoint there) is within
// `limit`: from the first candidate inside to the last, each end moved out to where the profile,
// interpolated linearly towards the next candidate outside, crosses the limit.
std::optional<std::pair<double, double>> hull(const std::vector<Breakpoint>& candidates,
                                              const std::vector<double>& profile, double limit) {
    size_t first = candidates.size(), last = 0;
    for (size_t i = 0; i < candidates.size(); ++i)
        if (profile[i] <= limit) first = std::min(first, i), last = i;
    if (first == candidates.size()) return std::nullopt;
    auto crossing = [&](size_t inside, size_t outside) {
        const double pi = profile[inside], po = profile[outside];
        const double t = std::isfinite(po) && po > pi ? (limit - pi) / (po - pi) : 0.0;
        return candidates[inside].u + t * (candidates[outside].u - candidates[inside].u);
    };
    return std::make_pair(
        first > 0 ? crossing(first, first - 1) : candidates[first].u,
        last + 1 < candidates.size() ? crossing(last, last + 1) : candidates[last].u);
}
}  // namespace

namespace {

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

namespace {

// How an absorption reads against "near zero". One that never degraded within the tested range
// is at least that large, never zero. Otherwise it is zero at or below the limit, or when its
// knee was placed and its interval runs from 0 to no more than nearZeroSpan: a fit whose best
// knee is 3 but could as well be 0 shows no absorption. An interval from 0 to further, or an
// unplaced knee's interval from 0, could be zero or not: the estimate decides, and the reading
// is ambiguous.
enum class Reading { Zero, NotZero, Ambiguous };

Reading reading(double value, bool lowerBound, const std::optional<AbsorptionInterval>& in,
                bool uncertain, double limit, const ClassifyOptions& o) {
    if (lowerBound) return Reading::NotZero;
    if (value <= limit) return Reading::Zero;
    if (!in || in->low > 0) return Reading::NotZero;
    if (!uncertain && in->high && *in->high <= o.nearZeroSpan) return Reading::Zero;
    return Reading::Ambiguous;
}

}  // namespace

std::optional<BottleneckClass> classify(const Evidence& e, std::string* reason,
                                        const ClassifyOptions& o) {
    if (!e.fp || !e.l1) return std::nullopt;
    auto say = [&](const std::string& why) {
        if (reason) *reason = why;
    };
    const bool fpLow =
        reading(*e.fp, e.fpLowerBound, e.fpInterval, e.fpUncertain, o.low, o) == Reading::Zero;
    const bool l1Low =
        reading(*e.l1, e.l1LowerBound, e.l1Interval, e.l1Uncertain, o.low, o) == Reading::Zero;
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
        const bool memoryLow = reading(*e.memory, e.memoryLowerBound, e.memoryInterval,
                                       e.memoryUncertain, o.memoryLow, o) == Reading::Zero;
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
