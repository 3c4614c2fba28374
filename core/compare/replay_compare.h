#pragma once

#include <QJsonObject>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/replay/instruction_stream.h"
#include "core/replay/suggest.h"

namespace stallscope::replay {

// Before/after comparison of two replay traces (DOMAIN.md §6): totals, per-DMA and per-HLO-op
// deltas, data-cache medians.

struct ReplaySide {
    uint64_t totalCycles = 0, stallCycles = 0, baseStallCycles = 0, transferStallCycles = 0;
    uint64_t slackCycles = 0;
    double medianUnusedPct = 0, medianLargestFreePct = 0;
    size_t instructions = 0, dmas = 0;
};

enum class DmaMatch : uint8_t { ById, ByLinkBytesOrder, OnlyInA, OnlyInB };
const char* dmaMatchName(DmaMatch m);

struct DmaDelta {
    DmaMatch match = DmaMatch::ById;
    size_t a = kNone,
           b = kNone;  // InstructionStream::dmas indices (kNone when missing on that side)
    int64_t stallA = 0, stallB = 0, slackA = 0, slackB = 0;
    int64_t issueInstrA = -1, issueInstrB = -1, issueCycleA = -1, issueCycleB = -1;
    // The ISSUE moved relative to the instructions around it. Indices alone cannot tell: an
    // edited trace is renumbered, so a DMA that stayed put between two moved chains has another
    // index in B. See compareReplays for how the stable instructions are found.
    bool issueMoved = false;
    // Where the ISSUE now sits, in A's instruction numbering, minus where it was (negative:
    // hoisted earlier); 0 when it did not move.
    int64_t issueShift = 0;
    bool changed() const;
};

struct OpDelta {
    std::string name;       // HLO op name, or the opcode for instructions outside any HLO op
    uint64_t a = 0, b = 0;  // cycles spent (issue cost + stall) in the op
    // percentChange(a, b): +100 for an op new in B, −100 for one gone (as trace compare).
    double deltaPct() const;
};

struct ReplayComparison {
    ReplaySide a, b;
    std::vector<DmaDelta> dmas;
    std::vector<OpDelta> ops;  // by |delta| descending
    size_t changedDmas = 0;
    std::string summary;  // "B vs A: −14.8% cycles, −61.0% stall cycles, 9 DMAs changed"
};

// Matching: by DMA id when most ids are shared, the rest by (link, bytes) in issue order.
// Issue positions: every instruction of A is paired with the same-signature instruction of B
// (op, unit, HLO op; a DMA's ISSUE/WAIT with its matched DMA's), k-th occurrence with k-th; the
// heaviest order-preserving subset of the pairs (a longest increasing subsequence, O(n log n))
// is what stayed put, and a DMA whose ISSUE is not in it moved. Ties keep plain instructions
// rather than ISSUEs, so a hoist reads as "the DMA moved", not "everything it passed moved".
ReplayComparison compareReplays(const InstructionStream& a, const Analysis& analysisA,
                                const InstructionStream& b, const Analysis& analysisB);

// Both runs shifted so that an HLO op starts at the same time.
struct Alignment {
    std::string op;         // empty: aligned at the start (offset 0)
    uint64_t a = 0, b = 0;  // the op's start cycle in A and in B (hloOpStartCycle)
    int64_t offset() const { return static_cast<int64_t>(b) - static_cast<int64_t>(a); }
};
// Where the HLO op called `name` starts: the first issue cycle of its longest run (in cycles)
// of consecutive instructions, i.e. the op's block on the timeline. A DMA ISSUE hoisted out of
// the op into an earlier one keeps the op's name but does not move its start. Empty when no
// instruction belongs to the op.
std::optional<uint64_t> hloOpStartCycle(const InstructionStream& t, const Simulation& sim,
                                        std::string_view name);
// HLO op names present in both traces, in A's order of first appearance.
std::vector<std::string> commonHloOps(const InstructionStream& a, const InstructionStream& b);
// Throws InputError naming what is missing when the op is not in both traces.
Alignment alignAtOp(const InstructionStream& a, const Simulation& simA, const InstructionStream& b,
                    const Simulation& simB, const std::string& op);

QJsonObject comparisonJson(const ReplayComparison& c, const InstructionStream& a,
                           const InstructionStream& b,
                           const std::optional<Alignment>& alignment = std::nullopt);

}  // namespace stallscope::replay
