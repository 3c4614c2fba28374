#pragma once

// What runs each command of the table (app/command_table.cpp), by family. Each takes its
// parsed command line; bad input throws InputError (exit 2), other failures Failure (exit 1).

#include "app/command_line.h"
#include "core/workspace.h"

namespace stallscope {

// The workspace itself (workspace_commands.cpp).
int runImport(const cli::Options& o);
int runList(const cli::Options& o);
int runInfo(const cli::Options& o);
int runFormats(const cli::Options& o);
int runDemo(const cli::Options& o);
// Replays (replay_commands.cpp).
int runReplayDma(const cli::Options& o);
int runReplaySuggest(const cli::Options& o);
int runReplayWhatif(const cli::Options& o);
int runDcache(const cli::Options& o);
int runGenerate(const cli::Options& o);
int runConvert(const cli::Options& o);
// Trace profiles: transfers (transfer_commands.cpp), steps, hosts of a run.
int runTraceDma(const cli::Options& o, Workspace& workspace, const ProfileInfo& profile);
int runTraceSuggest(const cli::Options& o, Workspace& workspace, const ProfileInfo& profile);
int runDmaCompare(const cli::Options& o);
// The step graph (graph_commands.cpp).
int runCriticalPath(const cli::Options& o);
int runTraceWhatif(const cli::Options& o, Workspace& workspace, const ProfileInfo& profile);
int runSteps(const cli::Options& o);
int runHosts(const cli::Options& o);
int runMerge(const cli::Options& o);
// Noise, CPI stacks and estimates, comparisons, rendering.
int runAbsorption(const cli::Options& o);
int runNoiseProbe(const cli::Options& o);
int runCpi(const cli::Options& o);
int runEstimates(const cli::Options& o);
int runCompare(const cli::Options& o);
int runRender(const cli::Options& o);
// SQL over the workspace (query_command.cpp).
int runQuery(const cli::Options& o);

}  // namespace stallscope
