#pragma once

// Noise-injection curves with a known answer, for the absorption tests and the accuracy tool
// (tests/benchmarks/bench_absorption_accuracy.cpp): flat at t0 up to k1, a transient rising at
// half the final slope up to k2, then linear saturation; every run carries relative Gaussian
// noise and a few runs are slowed down by a fixed factor (a preempted run). Curves that never
// degrade are flat over the whole tested range.

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace stallscope::noise::testing {

struct CurveSpec {
    double noise = 0.008;  // run-to-run spread of one run, relative (a standard deviation)
    int repeats = 5;       // runs per noise quantity
    double step = 1;       // k = 0, step, 2 step, ...
    double outlierRate = 0.03;
    double outlierFactor = 1.3;
    bool degrades = true;
};

// A run's time without noise at k: t0 up to k1, rising at half `slope` up to k2, then at
// `slope` (the shape of every known curve in the tests).
inline double kneeCurveTime(double k, double t0, double k1, double k2, double slope) {
    double t = t0;
    if (k > k1) t += 0.5 * slope * (std::min(k, k2) - k1);
    if (k > k2) t += slope * (k - k2);
    return t;
}

struct KnownCurve {
    double k1 = 0;             // true absorption (a whole number of patterns)
    std::optional<double> k2;  // start of saturation; empty for a curve that never degrades
    double step = 1;
    std::vector<double> ks;                          // the measured noise quantities
    std::vector<std::pair<double, double>> samples;  // (k, time) per run

    // The paper's absorption as a measurement can give it: the last measured k at or before k1
    // (the largest k measured when the curve never degrades).
    double absRaw() const {
        if (!k2) return ks.back();
        double last = ks.front();
        for (double k : ks)
            if (k <= k1 + 1e-9) last = k;
        return last;
    }
};

// A random curve of the given kind: k1 in 0..64, a transient of 0..16 patterns at half the
// saturation slope (0.5-2.5% of t0 per pattern), 6-12 steps measured past k2; t0 between 50 and
// 5000 time units. A flat curve spans 20-60 steps.
inline KnownCurve knownCurve(std::mt19937& random, const CurveSpec& spec) {
    auto uniformInt = [&](int lo, int hi) {
        return std::uniform_int_distribution<int>(lo, hi)(random);
    };
    auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(random);
    };
    KnownCurve c;
    c.step = spec.step;
    const double t0 = std::exp(uniform(std::log(50.0), std::log(5000.0)));
    const double slope = uniform(0.005, 0.025) * t0;  // saturation, time per pattern
    double kMax;
    if (spec.degrades) {
        c.k1 = uniformInt(0, 64);
        c.k2 = c.k1 + uniformInt(0, 16);
        kMax = *c.k2 + spec.step * uniformInt(6, 12);
    } else {
        c.k1 = INFINITY;
        kMax = spec.step * uniformInt(20, 60);
    }
    for (double k = 0; k <= kMax + 1e-9; k += spec.step) c.ks.push_back(k);
    std::normal_distribution<double> gauss(0, spec.noise);
    std::bernoulli_distribution outlier(spec.outlierRate);
    for (double k : c.ks) {
        const double t = c.k2 ? kneeCurveTime(k, t0, c.k1, *c.k2, slope) : t0;
        for (int r = 0; r < spec.repeats; ++r) {
            double sample = t * (1 + gauss(random));
            if (outlier(random)) sample *= spec.outlierFactor;
            c.samples.emplace_back(k, sample);
        }
    }
    return c;
}

}  // namespace stallscope::noise::testing
