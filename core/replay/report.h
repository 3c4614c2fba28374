#pragma once

#include <QJsonObject>

#include <cstdint>

#include "core/replay/instruction_stream.h"
#include "core/replay/suggest.h"
#include "core/replay/whatif.h"

namespace stallscope::replay {

// JSON documents of the CLI (CONTRACT.md §5); keys there are binding, extra keys are extras.

// `dma`: totals, per-DMA lifetime, stall split and backtail; `divergence` when the trace carries
// measured values.
QJsonObject dmaReport(const InstructionStream& trace, const Analysis& analysis);
// `suggest`: {"suggestions":[{"kind","dmas","to_instr","saving_cycles","evidence","text"}]}.
QJsonObject suggestReport(const InstructionStream& trace, const Analysis& analysis);
// `whatif`: before/after totals and the applied edits.
QJsonObject whatifReport(const WhatifResult& result);
// `dcache`: occupancy summary plus the per-bin series and the bucket heatmap.
QJsonObject dcacheReport(const DcacheAnalysis& dcache);
// Per-unit busy fraction per time bin.
QJsonObject utilizationReport(const InstructionStream& trace, const UnitUtilization& utilization);
// `info` for a replay profile: tracks (units, DMA links, the HLO band), slices (instructions and
// DMAs), counters, time range in cycles and the ops with most cycles.
QJsonObject replayInfo(const InstructionStream& trace, const Simulation& sim, int64_t profileId,
                       int topOps = 10);
// Dependency edges of one DMA, for drawing.
QJsonObject dependencyReport(const InstructionStream& trace, const Analysis& analysis, size_t dma);

}  // namespace stallscope::replay
