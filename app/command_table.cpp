// The command table: every `stallscope` command, its usage and options, and what runs it.

#include <iostream>

#include "app/command_line.h"
#include "app/commands.h"
#include "core/errors.h"
#include "core/kinds.h"

namespace stallscope::cli {

namespace {

const Option kJson{"--json", ""};
const Option kLimit{"--limit", "N"};

// `dma` and `suggest` answer for the profile's kind: a trace's transfers, a replay's DMAs.
int byProfileKind(const Options& o, int (*onTrace)(const Options&, Workspace&, const ProfileInfo&),
                  int (*onReplay)(const Options&)) {
    if (o.positional.size() == 1) {
        auto workspace = Workspace::openExisting(o.store);
        const ProfileInfo profile = workspace->resolveProfile(o.positional[0]);
        if (profile.kind == kinds::kTrace) return onTrace(o, *workspace, profile);
    }
    return onReplay(o);
}

}  // namespace

const std::vector<Command>& commands() {
    static const std::vector<Command> table{
        {"import",
         "[--name N] [--format F] [--as-one] [--shard OUT.sqlite] FILE...",
         "import files (format detected from content); a DIR is one multi-host run (XProf run "
         "directory, per-rank Kineto traces); --as-one: the files are the hosts of one run; "
         "--shard: import them as one run into a new shard workspace OUT (no --store needed), "
         "with the hosts' summaries",
         {{"--name", "N"}, {"--format", "F"}, {"--shard", "OUT.sqlite"}, {"--as-one", ""}},
         runImport},
        {"merge",
         "OUT.sqlite SHARD... [--name N]",
         "one run profile from shard workspaces' host summaries, without copying their slices",
         {{"--name", "N"}},
         runMerge},
        {"hosts",
         "PROFILE [--json]",
         "per-host step time, the slowest host per step and its excess over the median, the op "
         "whose per-host time varies most",
         {kJson},
         runHosts},
        {"list", "[--json]", "profiles in the workspace", {kJson}, runList},
        {"info", "PROFILE [--json]", "kind, counts, time range, top ops", {kJson}, runInfo},
        {"formats", "", "the formats import understands", {}, runFormats},
        {"dma",
         "PROFILE --json",
         "per-DMA lifetime, stall breakdown, backtails (traces: async copies, collectives, "
         "memcpys; ns)",
         {kJson},
         [](const Options& o) { return byProfileKind(o, runTraceDma, runReplayDma); }},
        {"dma-compare",
         "A B --json",
         "before/after of two traces per transfer and run",
         {kJson},
         runDmaCompare},
        {"suggest",
         "PROFILE --json [--limit N]",
         "optimization suggestions with predicted savings (trace profiles: transfer edits, then "
         "the step recommendations)",
         {kJson, kLimit},
         [](const Options& o) { return byProfileKind(o, runTraceSuggest, runReplaySuggest); }},
        {"steps",
         "PROFILE [--json] [--step-op NAME]",
         "step time and its breakdown per device (compute, communication, memcpy, memset, "
         "host_wait, input, idle), overlap, idle gaps, recommendations",
         {kJson, {"--step-op", "NAME"}},
         runSteps},
        {"critical-path",
         "PROFILE [--json]",
         "trace profiles: the chain of host work, launches, kernels, copies, collective waits, "
         "input and syncs that ends each step, its time by kind",
         {kJson},
         runCriticalPath},
        {"whatif",
         "PROFILE [--kernel-speedup GLOB=F]... [--comm-speedup F] [--no-input-wait] "
         "[--launch-overhead NS] [--remove-sync GLOB]... [--overlap-copy GLOB]... "
         "[--rank-like-median] [--out F.json] "
         "--json | PROFILE (--hoist DMA@INSTR)... | --apply-suggestions [--out F.jsonl] --json",
         "re-simulate edits: of a trace's step graph (measured, simulated and predicted step "
         "time; --out the predicted trace as Chrome JSON), of a replay (--out the edited trace)",
         {kJson,
          {"--hoist", "DMA@INSTR"},
          {"--apply-suggestions", ""},
          {"--out", "F", true},
          {"--kernel-speedup", "GLOB=F"},
          {"--comm-speedup", "F"},
          {"--no-input-wait", ""},
          {"--launch-overhead", "NS"},
          {"--remove-sync", "GLOB"},
          {"--overlap-copy", "GLOB"},
          {"--rank-like-median", ""}},
         [](const Options& o) { return byProfileKind(o, runTraceWhatif, runReplayWhatif); }},
        {"dcache", "PROFILE --json", "data-cache occupancy and fragmentation", {kJson}, runDcache},
        {"generate",
         "SCENARIO [--instructions N] [--seed S] --out FILE",
         "write a reference workload (allgather, allgather-pinned, matmul-starved, "
         "fragmentation, scale)",
         {{"--instructions", "N"}, {"--seed", "S"}, {"--out", "FILE", true}},
         runGenerate},
        {"render",
         "VIEW PROFILE [--against B] --out F.png [--size WxH] [--range FROM:TO]",
         "draw a view headless to PNG (compare: also --op NAME, --align-op NAME as for compare)",
         {{"--out", "F.png", true},
          {"--against", "B"},
          {"--size", "WxH"},
          {"--range", "FROM:TO"},
          {"--op", "NAME"},
          {"--align-op", "NAME"}},
         runRender},
        {"query",
         "[--json | --csv] SQL | --extension",
         "one read-only SQL statement over Perfetto-style tables of every profile (profile, "
         "track, thread, process, slice, counter, args, flow, step, step_breakdown, "
         "critical_path, transfer, link, host, host_step, absorption, dma, kernel_metric, "
         "noise_run, "
         "cpi_stack, estimate; "
         "docs/sql.md); writes are refused. --extension: the path of the loadable SQLite "
         "extension giving sqlite3 and Python the same tables",
         {kJson, {"--csv", ""}, {"--extension", ""}},
         runQuery},
        {"absorption",
         "PROFILE [--json]",
         "noise absorption per region/mode, classification",
         {kJson},
         runAbsorption},
        {"cpi",
         "PROFILE [--classes] [--json]",
         "CPI stacks per kernel and source, MAPE against hw",
         {kJson, {"--classes", ""}},
         runCpi},
        {"estimates",
         "PROFILE [--json]",
         "predicted vs measured, MAPE, speedup errors",
         {kJson},
         runEstimates},
        {"noise-probe",
         "--out F.csv [--quick] [--threads N]",
         "measure absorption on this machine (x86-64)",
         {{"--out", "F.csv", true}, {"--quick", ""}, {"--threads", "N"}},
         runNoiseProbe},
        {"compare",
         "A B [--json] [--op NAME] [--align-op NAME]",
         "before/after deltas of two profiles of one kind; traces: --op picks the CDF's op "
         "(default: largest total in A; \"*\": all ops), p50/p95 are nearest-rank (never "
         "interpolated); replays: --align-op shifts B so that HLO op starts with A's (its "
         "longest block)",
         {kJson, {"--op", "NAME"}, {"--align-op", "NAME"}},
         runCompare},
        {"convert", "IN OUT", "replay trace JSONL <-> binary (.ssrp)", {}, runConvert},
        {"demo",
         "",
         "build the demo workspace, then open the GUI (or print a summary without a display)",
         {},
         runDemo},
    };
    return table;
}

}  // namespace stallscope::cli
