#pragma once

#include <QJsonObject>
#include <string>
#include <vector>

#include "core/workspace.h"

namespace stallscope {

// Replay-trace commands of the CLI: dma, suggest, whatif, dcache, generate, convert. Returns
// false when `args[0]` is not one of them; otherwise sets `status`. Throws InputError/Failure.
bool runReplayCommand(const std::vector<std::string>& args, const std::string& store, int& status);

// CONTRACT `info` keys for a replay profile.
QJsonObject replayInfoJson(const Workspace& workspace, const ProfileInfo& profile);

}  // namespace stallscope
