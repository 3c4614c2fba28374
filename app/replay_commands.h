#pragma once

#include <string>
#include <vector>

namespace stallscope {

// Replay-trace commands of the CLI: dma, suggest, whatif, dcache, generate, convert. Returns
// false when `args[0]` is not one of them; otherwise sets `status`. Throws InputError/Failure.
bool runReplayCommand(const std::vector<std::string>& args, const std::string& store, int& status);

}  // namespace stallscope
