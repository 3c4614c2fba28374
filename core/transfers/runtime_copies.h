#pragma once

// Transfers from runtime copy calls (Kineto traces, XProf GPU profiles without XLA op lines):
// what the two readers of such traces gather (Evidence) and how transfers are made of it.
//   kineto_evidence.cpp   Kineto's runtime calls, copy activities, syncs and stream waits
//   xprof_runtime.cpp     the same read from an XProf GPU profile's planes
//   runtime_copies.cpp    each call bound to its activity, waited at the first sync that holds
//                         it, in runs per host thread; then modelled

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"

namespace stallscope::transfers::detail {

struct Call {
    trace::SliceItem slice;
    int64_t track = 0;
};
struct Activity {
    trace::SliceItem slice;
    int64_t track = 0;
    int host = -1;     // TrackHosts::of(track)
    std::string link;  // "HtoD", "nccl AllGather"
    int64_t device = -1, bytes = 0, stream = -1;
    std::string elementType;  // when the activity says (NCCL kernels' dtype)
};
// A GPU stream waiting for an event recorded on another stream.
struct StreamWait {
    trace::SliceItem slice;
    int64_t track = 0;
    int host = -1;
    int64_t device = -1, waitOnStream = -1, recordCorrelation = -1;
    int64_t reached = 0;      // when the waiting stream got to the wait
    int64_t resumed = 0;      // when the first work after it started
    int64_t recordIssue = 0;  // the host's cudaEventRecord: copies issued before it count
    bool resolved = false;    // record and consuming work found
};

// What a derivation from runtime calls reads from a trace. Correlation ids are scoped by host
// (TrackHosts::scoped).
struct Evidence {
    std::unordered_map<int64_t, Call> issues;              // by correlation id
    std::unordered_map<int64_t, std::vector<Call>> syncs;  // by host track
    std::vector<std::pair<int64_t, Activity>> activities;  // correlation, activity
    std::unordered_map<int64_t, int64_t> records;          // cudaEventRecord start by correlation
    std::vector<StreamWait> streamWaits;
    std::unordered_set<int64_t> synchronousCopies;  // correlation ids of synchronous memcpys
    uint64_t unsizedCollectives = 0;
    uint64_t unsizedCopies = 0;  // copies whose trace states no size (ROCm XProf: "size:0")
    // A stream's work, as opposed to the sync activities around it (placing stream waits).
    std::function<bool(uint32_t)> isStreamWork = [](uint32_t) { return true; };
};

// The integer member `key` of a slice's args; -1 when absent.
int64_t argNumber(const trace::TraceStore& store, uint64_t args, std::string_view key);
// Names both readers share.
bool isSync(std::string_view name);
std::string collectiveKind(std::string_view name);
bool isUnsizedCollective(std::string_view name);

Evidence kinetoEvidence(const trace::TraceStore& store, const TrackHosts& hosts);
Evidence xprofRuntimeEvidence(const trace::TraceStore& store, const TrackHosts& hosts);
// Where each stream wait sits on its stream: reached when the stream had finished the work
// before it (or at the wait, when it was idle), resumed when the next work on it started; and
// when the host recorded the event it waits for. `isWork` tells a stream's work (kernels,
// copies) from the sync activities around it.
void placeStreamWaits(const trace::TraceStore& store, const std::function<bool(uint32_t)>& isWork,
                      const std::unordered_map<int64_t, int64_t>& records,
                      std::vector<StreamWait>& waits);
// Transfers from the evidence (`source`: "kineto", kXprofRuntimeSource).
Analysis transfersOf(const trace::TraceStore& store, const TrackHosts& hosts, Evidence& ev,
                     const char* source);

}  // namespace stallscope::transfers::detail
