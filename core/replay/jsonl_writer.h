#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "core/replay/instruction_stream.h"

namespace stallscope::replay {

// Writes a trace as CONTRACT.md §1 JSON Lines: the machine record, the hlo records, then one
// instr record per instruction. Defaults are omitted (cost 1, busy = cost, no registers...).
// `origIndex` (optional, one entry per instruction) is written as `orig_i`; measured `cycle` and
// `stall` are written where the trace has them. Re-importing gives the identical trace.
void writeJsonl(const InstructionStream& trace, std::ostream& out,
                const std::vector<uint32_t>* origIndex = nullptr);

}  // namespace stallscope::replay
