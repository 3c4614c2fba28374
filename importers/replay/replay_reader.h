#pragma once

#include <string>

#include "input_stream.h"
#include "progress.h"
#include "trace.h"

namespace stallscope {

// Reads a replay trace in either form (JSON Lines or binary, any compression) without storing it.
replay::Trace readReplayFile(const std::string& path, Progress* progress = nullptr);
replay::Trace readReplayJsonl(InputFile& input, Progress* progress = nullptr);

}  // namespace stallscope
