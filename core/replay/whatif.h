#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/replay/dcache.h"
#include "core/replay/dependencies.h"
#include "core/replay/instruction_stream.h"
#include "core/replay/simulate.h"

namespace stallscope::replay {

// Edits of a replay trace (DOMAIN.md §1 "Replay timing model": any what-if is re-simulated
// exactly). Indices in a plan are instruction indices of the trace the plan was made for.

struct Move {
    std::vector<uint32_t> instrs;  // placed in this order just before `before`
    uint32_t before = 0;
};

// The DMA writes `newAddress` instead of its destination; `readers` are the memory-read slots
// (InstructionStream::memRefs indices) of the reads of its data, shifted along.
struct Relocation {
    uint32_t dma = 0;
    uint64_t newAddress = 0;
    std::vector<uint32_t> readerSlots;
    std::vector<uint32_t> sourceReaders;  // DMAs whose source reads the data
    uint64_t freeFrom = 0, freeTo = 0;    // cycles over which the new region was checked free
};

struct EditPlan {
    std::vector<Move> moves;
    std::vector<uint32_t> removed;  // instructions dropped (pinned DMAs' ISSUE and WAIT)
    std::vector<Relocation> relocations;
    // Smallest range of instructions the plan reorders or removes.
    uint32_t windowBegin() const;
    uint32_t windowEnd() const;
    bool empty() const { return moves.empty() && removed.empty(); }
    // The edited order of [windowBegin, windowEnd] (without removed instructions).
    std::vector<uint32_t> windowOrder() const;
    void merge(const EditPlan& other);
};

// The analyses a plan is checked against: all of one trace.
struct TraceState {
    const InstructionStream& trace;
    const Simulation& sim;
    const DependencyAnalysis& deps;
    const DcacheAnalysis& dcache;
};

// Plans moving a DMA's ISSUE, its lightweight chain and the WAITs of DMAs whose data the chain
// reads to just before instruction `before`. When the destination still holds live data over the
// hoisted interval and `allowRelocation`, the destination moves to a free region. Throws
// InputError with the reason when the edit would break a dependency.
EditPlan planHoist(const TraceState& state, size_t dma, uint32_t before, bool allowRelocation);
// Plans issuing several DMAs (with their chains) together before `before`.
EditPlan planGroup(const TraceState& state, const std::vector<size_t>& dmas, uint32_t before);
// Plans removing a DMA whose data is already resident (pinning): its ISSUE and WAIT go away.
EditPlan planRemoveDma(const TraceState& state, size_t dma);

struct EditedTrace {
    InstructionStream trace;
    std::vector<uint32_t> origIndex;  // per edited instruction: its index in the input trace
};

// Materializes a plan. Measured values are dropped (they describe the unedited run).
EditedTrace applyPlan(const InstructionStream& trace, const EditPlan& plan);

// Re-simulated totals of a plan without materializing it.
ResimResult resimulatePlan(IncrementalSimulator& simulator, const EditPlan& plan);

// A user edit by DMA id and original instruction index (CLI `--hoist DMA@INSTR`).
struct HoistEdit {
    int64_t dmaId = 0;
    uint32_t beforeInstr = 0;  // index in the original trace
};

struct AppliedEdit {
    std::string kind;  // "hoist", "group", "pin"
    std::vector<int64_t> dmas;
    uint32_t toInstr = kNone;  // original index, kNone for pins
    int64_t predictedSaving = 0;
    bool relocated = false;
};

struct WhatifResult {
    EditedTrace edited;  // origIndex relative to the input trace
    uint64_t beforeTotal = 0, beforeStall = 0;
    uint64_t afterTotal = 0, afterStall = 0;
    std::vector<AppliedEdit> applied;
    std::vector<std::string> skipped;  // suggestions that became illegal, with the reason
};

// Applies user hoists one after another (each checked against the already-edited trace). Throws
// InputError on the first illegal edit.
WhatifResult applyHoists(const InstructionStream& trace, const std::vector<HoistEdit>& edits,
                         bool allowRelocation = true);

// Checks that `edited` preserves every dependency of `original`: each read (registers, memory,
// DMA sources) sees data from the same producer (a removed pinned DMA may be replaced by an
// earlier DMA of identical contents), reads of DMA data stay after that DMA's WAIT, and the final
// writers match. Returns an empty string when it holds, else the first violation.
std::string verifyDependencies(const InstructionStream& original, const InstructionStream& edited,
                               const std::vector<uint32_t>& origIndex);

}  // namespace stallscope::replay
