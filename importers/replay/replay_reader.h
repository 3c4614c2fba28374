#pragma once

#include <string>

#include "core/input_stream.h"
#include "core/progress.h"
#include "core/replay/instruction_stream.h"

namespace stallscope {

// Reads a replay trace in either form (JSON Lines or binary, any compression) without storing it.
replay::InstructionStream readReplayFile(const std::string& path, Progress* progress = nullptr);
replay::InstructionStream readReplayJsonl(InputFile& input, Progress* progress = nullptr);

}  // namespace stallscope
