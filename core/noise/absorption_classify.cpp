// The paper's bottleneck classes, read from the absorptions per mode.
#include <algorithm>
#include <string>

#include "core/noise/absorption.h"
#include "core/noise/absorption_internal.h"

namespace stallscope::noise {

using detail::Reading;
using detail::reading;

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

Reading detail::reading(double value, bool lowerBound, const std::optional<AbsorptionInterval>& in,
                        bool uncertain, double limit, const ClassifyOptions& o) {
    if (lowerBound) return Reading::NotZero;
    if (value <= limit) return Reading::Zero;
    if (!in || in->low > 0) return Reading::NotZero;
    if (!uncertain && in->high && *in->high <= o.nearZeroSpan) return Reading::Zero;
    return Reading::Ambiguous;
}

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

}  // namespace stallscope::noise
