#pragma once

#include <QJsonObject>
#include <cstdint>
#include <string>
#include <vector>

#include "suggest.h"
#include "trace.h"

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
    size_t a = kNone, b = kNone;  // Trace::dmas indices (kNone when missing on that side)
    int64_t stallA = 0, stallB = 0, slackA = 0, slackB = 0;
    int64_t issueInstrA = -1, issueInstrB = -1, issueCycleA = -1, issueCycleB = -1;
    bool changed() const;
};

struct OpDelta {
    std::string name;       // HLO op name, or the opcode for instructions outside any HLO op
    uint64_t a = 0, b = 0;  // cycles spent (issue cost + stall) in the op
    double deltaPct() const;
};

struct ReplayComparison {
    ReplaySide a, b;
    std::vector<DmaDelta> dmas;
    std::vector<OpDelta> ops;  // by |delta| descending
    size_t changedDmas = 0;
    std::string summary;  // "B vs A: -14.8% cycles, -61.0% stall cycles, 9 DMAs changed"
};

// Matching: by DMA id when most ids are shared, the rest by (link, bytes) in issue order.
ReplayComparison compareReplays(const Trace& a, const Analysis& analysisA, const Trace& b,
                                const Analysis& analysisB);

QJsonObject comparisonJson(const ReplayComparison& c, const Trace& a, const Trace& b);

}  // namespace stallscope::replay
