#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/replay/instruction_stream.h"

namespace stallscope::replay {

// The replay timing model and DMA engine of DOMAIN.md §1 ("DMA lifetime", "Replay timing model").

constexpr uint64_t kNoCycle = std::numeric_limits<uint64_t>::max();

struct DmaTiming {
    uint64_t issueCycle = 0;
    uint64_t readyCycle = 0;        // issue + base latency: joins the link queue
    uint64_t startCycle = 0;        // transfer start (link free and ready)
    uint64_t completeCycle = 0;     // end of transfer
    uint64_t waitCycle = kNoCycle;  // cycle of its WAIT, kNoCycle when never waited
    uint64_t baseStall = 0;
    uint64_t transferStall = 0;
    uint64_t slack = 0;
};

// Where the model and the trace's measured values disagree.
struct Divergence {
    bool measured = false;    // the trace carries measured values at all
    uint64_t compared = 0;    // instructions with a measured cycle or stall
    uint64_t differing = 0;   // instructions whose cycle or stall differs
    uint64_t maxAbsDiff = 0;  // largest |model - measured| over cycles and stalls
    uint32_t firstDiffering = kNone;
};

struct Simulation {
    std::vector<uint64_t> cycle;  // issue cycle per instruction
    std::vector<uint64_t> stall;  // stall cycles per instruction (non-zero only at WAITs)
    std::vector<DmaTiming> dmas;  // per InstructionStream::dmas index
    uint64_t totalCycles = 0;     // cycle of the last instruction + its cost + its stall
    uint64_t stallCycles = 0;
    uint64_t baseStallCycles = 0;
    uint64_t transferStallCycles = 0;
    uint64_t costCycles = 0;      // sum of issue costs (totalCycles = costCycles + stallCycles)
    uint64_t maxDmaLifetime = 0;  // max(complete - issue) over DMAs
    Divergence divergence;
};

// Cycles a link needs to move `bytes`: ceil(bytes / bandwidth).
uint64_t transferCycles(const Link& link, uint64_t bytes);

Simulation simulate(const InstructionStream& trace);

// A re-simulation of an edited instruction order, computed incrementally from a baseline: the
// edited order equals the original outside [windowBegin, windowEnd] (original indices) except
// for removed instructions. Simulation starts at windowBegin with the baseline's state and stops
// as soon as the machine state is a pure time shift of the baseline's, so a what-if costs
// O(window) instead of O(trace).
struct ResimResult {
    uint64_t totalCycles = 0;
    uint64_t stallCycles = 0;
};

class IncrementalSimulator {
  public:
    IncrementalSimulator(const InstructionStream& trace, const Simulation& baseline);
    // `windowOrder`: the edited order of the original instructions in [windowBegin, windowEnd]
    // (a permutation of that range minus removed instructions; moved instructions come from inside
    // the window). `removedAfterWindow`: original indices after windowEnd that are dropped.
    ResimResult run(uint32_t windowBegin, uint32_t windowEnd, std::span<const uint32_t> windowOrder,
                    std::span<const uint32_t> removedAfterWindow = {});

  private:
    const InstructionStream& trace_;
    const Simulation& base_;
    std::vector<uint64_t> complete_;  // per DMA, valid where stamp_ == epoch_
    std::vector<uint32_t> stamp_;
    std::vector<uint32_t> removedStamp_;  // per instruction
    std::vector<uint32_t> outstandingPos_;
    std::vector<uint32_t> outstanding_;
    std::vector<uint64_t> linkFree_;
    uint32_t epoch_ = 0;
};

// Fraction of cycles each unit is busy in each of `bins` equal time bins over [0, totalCycles).
// A unit is busy from an instruction's issue cycle for its `busy` cycles (overlaps merged).
struct UnitUtilization {
    std::vector<uint32_t> units;  // InstructionStream::strings indices of unit names
    uint32_t bins = 0;
    uint64_t binCycles = 0;            // cycles per bin (the last bin may be shorter)
    std::vector<double> busyFraction;  // units.size() x bins, row-major
    std::vector<double> overall;       // per unit, over the whole trace
    double at(size_t unit, size_t bin) const { return busyFraction[unit * bins + bin]; }
    size_t unitIndex(const InstructionStream& trace,
                     std::string_view name) const;  // kNone when absent
};

UnitUtilization unitUtilization(const InstructionStream& trace, const Simulation& sim,
                                uint32_t bins);

}  // namespace stallscope::replay
