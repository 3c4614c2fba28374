// Absorption accuracy against curves with a known answer (tests/core/noise_curves.h): the error
// of abs_raw in steps of k per noise level and number of repeats, and how often a curve that
// never degrades is called degraded. Seeded: the same build prints the same table.
//
//   bench_absorption_accuracy [CURVES]     (default 200 curves per row)
#include <cstdio>
#include <string>

#include "../core/noise_curves.h"
#include "noise/absorption.h"

using namespace stallscope::noise;
using testing::CurveSpec;
using testing::KnownCurve;

namespace {

struct Row {
    int curves = 0, within1 = 0, within2 = 0, late = 0, notDegraded = 0;
    double sumError = 0, maxError = 0;
};

Row measure(CurveSpec spec, int curves, unsigned seed) {
    std::mt19937 random(seed);
    Row row;
    const double steps[3] = {1, 2, 5};
    for (int i = 0; i < curves; ++i) {
        spec.step = steps[i % 3];
        const KnownCurve c = testing::knownCurve(random, spec);
        const CurveFit fit = fitCurve(c.samples);
        const double error = std::abs(fit.k1 - c.absRaw()) / c.step;
        ++row.curves;
        row.sumError += error;
        row.maxError = std::max(row.maxError, error);
        row.within1 += error <= 1 + 1e-9;
        row.within2 += error <= 2 + 1e-9;
        row.late += fit.k1 > c.absRaw() + 1e-9;
        row.notDegraded += !fit.degraded;
    }
    return row;
}

void print(const char* label, const Row& r) {
    std::printf("%-22s %6d %8.2f %8.1f %8.1f%% %8.1f%% %8.1f%% %8d\n", label, r.curves,
                r.sumError / r.curves, r.maxError, 100.0 * r.within1 / r.curves,
                100.0 * r.within2 / r.curves, 100.0 * r.late / r.curves, r.notDegraded);
}

}  // namespace

int main(int argc, char** argv) {
    const int curves = argc > 1 ? std::stoi(argv[1]) : 200;
    std::printf("%-22s %6s %8s %8s %9s %9s %9s %8s\n", "curves", "n", "err.mean", "err.max",
                "<=1 step", "<=2 steps", "late", "flat");
    std::printf("(errors of abs_raw in steps of k; steps 1, 2, 5 in turn; 3%% outliers at 1.3x)\n");
    for (double noise : {0.002, 0.005, 0.008, 0.01, 0.02}) {
        CurveSpec spec;
        spec.noise = noise;
        spec.repeats = 5;
        char label[64];
        std::snprintf(label, sizeof label, "noise %.1f%%, 5 reps", noise * 100);
        print(label, measure(spec, curves, 1000 + unsigned(noise * 1e4)));
    }
    for (int repeats : {1, 3, 10}) {
        for (double noise : {0.01, 0.02}) {
            CurveSpec spec;
            spec.noise = noise;
            spec.repeats = repeats;
            char label[64];
            std::snprintf(label, sizeof label, "noise %.0f%%, %d reps", noise * 100, repeats);
            print(label, measure(spec, curves, 2000 + unsigned(repeats * 100 + noise * 1e3)));
        }
    }
    // Curves that never degrade: how many are called degraded.
    for (int repeats : {1, 5}) {
        for (double noise : {0.002, 0.01, 0.02}) {
            CurveSpec spec;
            spec.noise = noise;
            spec.repeats = repeats;
            spec.degrades = false;
            std::mt19937 random(3000 + unsigned(repeats * 100 + noise * 1e3));
            int degraded = 0;
            for (int i = 0; i < curves; ++i) {
                spec.step = i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : 5;
                degraded += fitCurve(testing::knownCurve(random, spec).samples).degraded;
            }
            std::printf("flat, noise %.1f%%, %d reps: %d of %d called degraded\n", noise * 100,
                        repeats, degraded, curves);
        }
    }
    return 0;
}
