#pragma once

// Multi-host runs (issue 15): the per-host files of one distributed job become one trace
// profile with a host level in the track tree (a host track above each file's processes),
// the hosts' clocks aligned and each host's provenance in the metadata (core/trace/hosts.h
// reads it back).
//
// Alignment, first that applies: every host gives a clock base on a shared clock (XProf's
// Task Environment profile_start_time; Kineto's baseTimeNanoseconds), and hosts are shifted by
// their base's distance from the earliest; else the first step every host ran
// (`ProfilerStep#N`, XProf Steps ids) starts at host 0's time; else the hosts' own clocks.

#include <string>
#include <vector>

#include "importers/import_service.h"

namespace stallscope {

struct RunMember {
    std::string path;
    const Importer* importer = nullptr;
};

// The importer for one file: `format` when given, else detected from its content.
const Importer* detectFile(const std::string& path, const std::string& format);

// The host files of a run directory, detected by content (files no importer recognises are
// left out; `format` keeps only that format). Throws InputError naming the directory when it
// holds none, or profiles of different kinds.
// An XProf run directory may also hold the profiler's own conversions of its hosts (older
// TensorFlow wrote `<host>.trace.json.gz` beside `<host>.xplane.pb`): when every file of the
// other kinds names a host that has an XSpace, the XSpaces are the run and the others are
// listed in `skipped` (when given) instead of refusing the directory.
std::vector<RunMember> runMembers(const std::string& dir, const std::string& format,
                                  std::vector<std::string>* skipped = nullptr);
// The given files as hosts of one run (--as-one); throws InputError on mixed kinds.
std::vector<RunMember> runMembers(const std::vector<std::string>& files, const std::string& format);

struct RunOptions {
    std::string name;                  // profile name; default from `source`
    std::string source;                // the run directory, or the first file
    std::vector<std::string> skipped;  // files of the directory left out (runMembers)
};

// Imports the members as one trace profile, inside the caller's transaction (progress 0..0.99;
// throws on bad input or cancellation, leaving the rollback to the caller).
ImportedProfile importRun(Workspace& workspace, const std::vector<RunMember>& members,
                          const RunOptions& options, Progress& progress);

// `merge`: one run profile in `workspace` from the trace profiles of shard workspaces (their
// stored host summaries, core/trace/hosts.h; computed when a shard has none), without copying
// their slices. Hosts are ordered by file name as a run directory's are; each host names the
// shard, profile and host track holding its timeline (RunHost::shard*). One transaction.
ImportedProfile mergeShards(Workspace& workspace, const std::vector<std::string>& shards,
                            const std::string& name, Progress& progress);

}  // namespace stallscope
