#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/replay/instruction_stream.h"

namespace stallscope::replay {

// Reference workloads written by a small accelerator model (CONTRACT.md §6). Deterministic: the
// same scenario, seed and size give the same trace on every platform (own PRNG, no std::
// distributions).

struct GenerateOptions {
    uint64_t seed = 1;
    uint64_t instructions = 1000000;  // `scale` only
    uint32_t invocations = 4;         // `allgather`, `allgather-pinned`
};

// The names `generate` accepts.
const std::vector<std::string>& workloadNames();

// The CONTRACT.md §1 machine (hbm, 16 MiB data-cache of 512 B pages, 256-page buckets, hbm<->dcache
// links with base latency 400 and 64 B/cycle), plus remote_hbm links when `withRemote`.
Machine referenceMachine(bool withRemote);

// Throws InputError for an unknown scenario.
InstructionStream generateWorkload(std::string_view scenario, const GenerateOptions& options = {});

// SplitMix64: tiny, fast and identical everywhere.
class SplitMix64 {
  public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, bound) (bound > 0); the modulo bias is irrelevant at these bounds.
    uint64_t below(uint64_t bound) { return next() % bound; }
    uint64_t between(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }

  private:
    uint64_t state_;
};

}  // namespace stallscope::replay
