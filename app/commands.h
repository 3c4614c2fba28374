#pragma once

#include <string>
#include <vector>

namespace stallscope {

// Each family of subcommands handles its own names: it returns false when args[0] is not one
// of its commands, otherwise runs it and sets `status` (0 ok). Bad input throws InputError.
// cli.cpp asks them in turn.
bool runReplayCommand(const std::vector<std::string>& args, const std::string& store, int& status);
bool runRenderCommand(const std::vector<std::string>& args, const std::string& store, int& status);
bool runNoiseCommand(const std::vector<std::string>& args, const std::string& store, int& status);
bool runCompareCommand(const std::vector<std::string>& args, const std::string& store, int& status);
// steps (and suggest of a trace profile): core/trace/step_analysis.h.
bool runStepCommand(const std::vector<std::string>& args, const std::string& store, int& status);
// dma/suggest on trace profiles (transfers), dma-compare; false for replay profiles.
bool runTransferCommand(const std::vector<std::string>& args, const std::string& store,
                        int& status);
// hosts, merge: multi-host runs (core/trace/hosts.h, importers/run_import.h).
bool runHostCommand(const std::vector<std::string>& args, const std::string& store, int& status);
bool runCpiCommand(const std::vector<std::string>& args, const std::string& store, int& status);

}  // namespace stallscope
