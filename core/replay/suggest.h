#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/replay/dcache.h"
#include "core/replay/dependencies.h"
#include "core/replay/instruction_stream.h"
#include "core/replay/simulate.h"
#include "core/replay/whatif.h"

namespace stallscope::replay {

// Automatic suggestions: SnR Algorithm 2 (hoist a stalled DMA within its backtail when the
// data-cache has room) plus DOMAIN.md's group and pin suggestions. Every saving is re-simulated.

struct SuggestOptions {
    uint64_t pinMaxBytes = 4096;      // largest DMA considered a small setup DMA
    uint64_t pinBudgetBytes = 65536;  // data-cache bytes pinning may keep resident
    uint32_t maxGroup = 16;           // DMAs issued together at most
    uint32_t evidenceLimit = 256;     // suggestions that get the (costlier) free-space evidence
};

struct Suggestion {
    std::string kind;           // "hoist", "group", "pin"
    std::vector<int64_t> dmas;  // DMA ids
    std::vector<size_t> dmaIndices;
    uint32_t toInstr = kNone;  // instruction the ISSUEs move before; kNone for pins
    int64_t savingCycles = 0;  // re-simulated
    bool partial = false;      // the backtail is shorter than the stall
    std::vector<std::pair<std::string, int64_t>> evidence;
    std::string text;
    EditPlan plan;
};

struct AnalysisOptions {
    DependencyOptions dependencies;
    DcacheOptions dcache;
    SuggestOptions suggest;
    uint32_t utilizationBins = 512;
    bool withSuggestions = true;
};

struct Analysis {
    Simulation sim;
    DependencyAnalysis deps;
    DcacheAnalysis dcache;
    UnitUtilization utilization;
    std::vector<Suggestion> suggestions;  // by saving, largest first
};

std::vector<Suggestion> suggest(const InstructionStream& trace, const Simulation& sim,
                                const DependencyAnalysis& deps, DcacheAnalysis& dcache,
                                const SuggestOptions& options = {});

// Simulation, dependencies, data-cache occupancy, utilization and suggestions in one call.
Analysis analyze(const InstructionStream& trace, const AnalysisOptions& options = {});

// Applies suggestions round by round: each round analyses the current trace, applies its
// suggestions whose edited windows do not overlap (best saving first), and repeats until no
// suggestion saves cycles or `maxRounds` is reached.
WhatifResult applyAllSuggestions(const InstructionStream& trace,
                                 const AnalysisOptions& options = {}, uint32_t maxRounds = 6);

}  // namespace stallscope::replay
