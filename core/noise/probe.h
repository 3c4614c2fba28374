#pragma once

// `stallscope noise-probe`: measures absorption on this machine by running reference kernels
// with k noise instructions injected into their loop bodies, and writes CONTRACT §2 CSV.

#include <ostream>
#include <string>
#include <vector>

#include "core/noise/probe_emitter.h"
#include "core/progress.h"

namespace stallscope::noise::probe {

struct ProbeOptions {
    bool quick = false;  // fewer k, repeats and shorter runs: finishes in well under 30 s
    int threads = 1;     // threads running the bandwidth kernel at once
    std::vector<Kernel> kernels{Kernel::StreamTriad, Kernel::PointerChase, Kernel::FpChains};
    std::vector<NoiseMode> modes{NoiseMode::FpAdd64, NoiseMode::Int64Add, NoiseMode::L1Ld64,
                                 NoiseMode::MemoryLd64};
};

// The noise quantities measured for a kernel and mode, ascending from 0.
std::vector<int> noiseQuantities(Kernel kernel, NoiseMode mode, bool quick);

// "hostname (CPU model)".
std::string machineName();

// Bytes for a buffer that must live in DRAM given the last-level cache size: at least twice the
// cache and at least `minimum`, at most 1 GiB, a power of two (from `minimum` upward).
size_t beyondCacheBytes(size_t minimum, size_t lastLevelCache);

// Runs the probe and writes the CSV (header first). Throws Failure on unsupported machines
// (see unsupportedReason()) and Cancelled when progress is cancelled.
void runProbe(const ProbeOptions& options, std::ostream& csv, Progress& progress);

}  // namespace stallscope::noise::probe
