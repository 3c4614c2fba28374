#pragma once

// The segmented regression behind fitCurve (internal to core/noise): the models, the search over
// breakpoints, the noise of the medians and outlier trimming (docs/design.md, "Absorption").

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "core/noise/absorption.h"

namespace stallscope::noise::detail {

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

// How fast a transient may rise, as a fraction of the saturation slope that follows it.
struct TransientLimits {
    double low = 0.2, high = 0.8;
};

// The best fit with `segments` over the candidate breakpoints, and per candidate the best fit
// with its knee there (`byKnee`) and with saturation starting there (`byEnd`): the profiles the
// intervals are read from. Three segments include two (u2 = u1), the limit of a short transient.
Segmented searchFit(const Sums& s, int segments, const std::vector<Breakpoint>& candidates,
                    const TransientLimits& limits, std::vector<double>* byKnee = nullptr,
                    std::vector<double>* byEnd = nullptr);

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
                      const std::vector<double>& y);

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
                      double cutoff, const TransientLimits& limits);

// The grid of candidate breakpoints: every measured k and `perStep` - 1 positions between
// neighbours, up to the third-last point, so a rise always rests on at least two medians a
// whole step past the knee (one median alone cannot tell degradation from an outlier). Curves
// with more than kMaxCandidates such k get every `stride`-th one (and the third-last), and
// refinedGrid() adds the rest around the breakpoints found: the search over pairs stays
// quadratic in at most kMaxCandidates.
constexpr size_t kMaxCandidates = 120;

std::vector<Breakpoint> breakpointGrid(const std::vector<double>& x, size_t* strideOut = nullptr);

// A strided grid with every measured k within `stride` steps of the given breakpoints added.
std::vector<Breakpoint> refinedGrid(const std::vector<double>& x, std::vector<Breakpoint> grid,
                                    size_t stride, std::initializer_list<double> around);

// The range of breakpoints whose profile (best cost with the breakpoint there) is within
// `limit`: from the first candidate inside to the last, each end moved out to where the profile,
// interpolated linearly towards the next candidate outside, crosses the limit.
std::optional<std::pair<double, double>> hull(const std::vector<Breakpoint>& candidates,
                                              const std::vector<double>& profile, double limit);

}  // namespace stallscope::noise::detail
