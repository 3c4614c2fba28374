#pragma once

// Hosts of a multi-host run (issue 15): one trace profile holds every host (or rank) of a
// distributed job, each below a host track of its own (importers/run_import.h), or a merged
// profile holds only the hosts' summaries and names the shard workspaces holding their
// timelines. This header is the plain-data API over both:
//
//   runHosts(metadata)          the hosts a profile's metadata lists (empty: one-host profile)
//   summarizeHost(store, host)  one host: its steps (the step analysis restricted to the
//                               host's tracks, StepOptions::withinTrack), per-step breakdown
//                               summed over its devices, slices, and per-op totals over its
//                               device tracks (every track when it has no device; step
//                               markers are not ops)
//   combineHosts(summaries)     across hosts: steps matched by name (or index), the slowest
//                               host per step and its excess over the step's median, the ops
//                               whose per-host total varies most
//   loadOrAnalyzeHosts(ws, id)  the above for a profile, the registered analysis "hosts"
//                               (hosts_registration.h; merged profiles read the summaries
//                               merge stored)
//
// Medians are nearest-rank (the ceil(n/2)-th smallest), as in `steps`. Thread safety: like
// analyzeSteps, one TraceStore per thread; call it on a worker. Results are plain values.

#include <QJsonObject>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/trace/step_analysis.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"

namespace stallscope::trace {

// The metadata member that marks a multi-host run profile ({"hosts","alignment","source"}).
constexpr const char* kRunMetadataKey = "run";

// A host as the profile's metadata lists it ("hosts": [...]).
struct RunHost {
    int index = 0;
    std::string name;    // "34.83.195.179_6003", "rank 3"
    int64_t track = -1;  // its host track in this profile (-1: merged, the timeline is in a shard)
    std::string path;    // the host's file
    std::string hash;    // "xxh128:..." of the file
    int64_t size = 0;
    int64_t offsetNs = 0;  // added to the file's times to align it with the other hosts
    // Merged profiles: the shard workspace, profile and host track holding its timeline.
    std::string shard;
    int64_t shardProfile = 0;
    int64_t shardTrack = -1;
};
std::vector<RunHost> runHosts(const QJsonObject& metadata);
// The processes (XProf planes, Kineto pids) in display order: the top-level tracks, or in a
// run profile those below each host track.
std::vector<const TrackRow*> processTracks(const TraceStore& store);
bool isRunProfile(const QJsonObject& metadata);
bool isMergedProfile(const QJsonObject& metadata);  // summaries only, timelines in shards

// One step of one host.
struct HostStep {
    std::string name;
    int64_t start = 0;     // ns, on the run's aligned clock (where the timeline shows it)
    int64_t duration = 0;  // ns
    // The step's device time by category (kCategoryNames order), summed over the host's devices.
    std::array<int64_t, kStepCategoryCount> breakdown{};
};

struct HostOpTotal {
    std::string name;
    int64_t total = 0;  // ns, summed over the host's slices of that name
    uint64_t count = 0;
};

struct HostSummary {
    RunHost host;
    uint64_t slices = 0;
    int devices = 0;
    std::string stepSource;  // stepSourceName of the host's own step detection
    std::vector<HostStep> steps;
    std::vector<HostOpTotal> ops;  // by name
    int64_t stepTimeMedian() const;
};

struct Straggler {
    int step = 0;  // index into HostsAnalysis::steps
    std::string stepName;
    int host = 0;  // index into HostsAnalysis::hosts
    std::string hostName;
    int64_t stepTime = 0;        // the slowest host's duration of the step, ns
    int64_t medianStepTime = 0;  // the step's median duration across the hosts that ran it
    double excessPct = 0;        // (stepTime - median) / median * 100
};

struct OpVariation {
    std::string name;
    std::vector<int64_t> perHost;  // total per host (hosts order), 0 where it did not run
    int64_t min = 0, max = 0, median = 0;
    int64_t spread() const { return max - min; }
    double spreadPct = 0;  // spread / median * 100 (0 when the median is 0)
    int slowestHost = 0;   // the host with the largest total
};

struct HostsAnalysis {
    static constexpr int kVersion = 1;  // of the analysis and its stored form
    std::vector<HostSummary> hosts;
    // Steps matched across hosts: by name when every host names its steps uniquely
    // (ProfilerStep#N, XProf step ids), else by position.
    std::vector<std::string> steps;
    bool matchedByName = false;
    std::vector<std::vector<int>> stepOfHost;  // [step][host]: index into hosts[h].steps or -1
    std::vector<Straggler> stragglers;         // one per step run by at least two hosts
    std::vector<OpVariation> variableOps;      // largest spread first (at most kMaxOps)
    static constexpr size_t kMaxOps = 20;
};

HostSummary summarizeHost(const TraceStore& store, const RunHost& host);
// A one-host profile as a host (its whole track tree).
HostSummary summarizeProfile(const TraceStore& store, const std::string& name);
HostsAnalysis combineHosts(std::vector<HostSummary> hosts);
// Every host of a run profile (a one-host profile is one host).
HostsAnalysis analyzeHosts(const TraceStore& store);

// `hosts --json` (CONTRACT §7 keys and more; "slowest_host": the host with the most time over
// the steps' medians, summed over steps). The stored form holds the summaries; the rest is
// recomputed from them (instant).
QJsonObject toJson(const HostsAnalysis& analysis);
QJsonObject summaryToJson(const HostSummary& summary);
HostSummary summaryFromJson(const QJsonObject& json);  // throws Failure when malformed

// The readable table of `hosts` without --json.
std::string hostsTable(const HostsAnalysis& analysis);

}  // namespace stallscope::trace
