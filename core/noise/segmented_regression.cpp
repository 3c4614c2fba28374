#include "core/noise/segmented_regression.h"

#include <algorithm>

#include "core/noise/absorption_internal.h"

namespace stallscope::noise::detail {

namespace {

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

}  // namespace

Segmented searchFit(const Sums& s, int segments, const std::vector<Breakpoint>& candidates,
                    const TransientLimits& limits, std::vector<double>* byKnee,
                    std::vector<double>* byEnd) {
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

std::vector<Breakpoint> breakpointGrid(const std::vector<double>& x, size_t* strideOut) {
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

}  // namespace stallscope::noise::detail
