#pragma once

// Building a step graph from host threads and device streams (Kineto, XProf GPU planes): the parts
// the build's files share.
//   build_host.cpp     host threads tiled into nodes (work, input, runtime calls)
//   build_device.cpp   device streams' activities, bound to their launches; their latencies
//   build_waits.cpp    syncs, collectives across ranks, steps
//   build_graph.cpp    the order of the parts, and the graph of XLA op lines
//   build_chakra.cpp   Chakra node graphs (collectives matched as above)

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/step_graph.h"
#include "core/trace/steps/internal.h"
#include "core/trace/trace_args.h"
#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"

namespace stallscope::graph::build {

// A runtime call of a host thread, as tiled: the nodes it covers.
struct Call {
    int64_t start = 0, end = 0;
    uint64_t args = 0;
    uint32_t firstNode = kNone, lastNode = kNone;
    bool sync = false;
};

// A device activity before it becomes a node.
struct Activity {
    trace::SliceItem slice;
    NodeKind kind = NodeKind::Kernel;
    int64_t call = -1;  // index into the host calls of its launch, -1 unbound
};

class KinetoBuilder {
  public:
    // window: only the slices overlapping it (a batch of steps of a trace too large for one
    // graph); launches are then bound by correlation alone (the flows have no time index).
    explicit KinetoBuilder(const trace::TraceStore& store,
                           std::optional<TimeWindow> window = std::nullopt);
    Graph build();

  private:
    // Level 0 of a track, or the slices overlapping the window, a chunk at a time (a window's
    // gathered at once were a fifth of the critical path's page faults at 10^7 slices).
    template <class Fn>
    void readTrack(int64_t track, Fn&& visit) const {
        if (!window_)
            trace::steps::forEachChunk(store_, track, visit);
        else
            store_.forEachChunkIn(track, window_->from, window_->to, visit);
    }

    // About the most slices of a track this graph reads (a window past the cap holds a whole
    // step): its lists are reserved for them (pages reserved but never written cost nothing;
    // grown by doubling, a window's lists were half the critical path's page faults at 10^7).
    size_t mostSlicesOf(const trace::TrackRow& track) const {
        const uint64_t all = track.slices + track.instants;
        return size_t(window_ ? std::min<uint64_t>(all, windowSlices(1)) : all);
    }

    // build_host.cpp
    void classifyTracks();
    void tileHostLane(const trace::TrackRow& track);
    // build_device.cpp
    void readDeviceLane(const trace::TrackRow& track, std::vector<Activity>& out);
    void bindLaunches(std::vector<std::vector<Activity>>& lanes);
    void addDeviceLanes(std::vector<std::vector<Activity>>& lanes);
    void setLatencies(uint32_t lane);
    void anchorUnbound();
    // build_events.cpp: cross-stream event waits (cudaStreamWaitEvent).
    struct PendingWait {
        uint32_t node;  // the wait's node on the waiting stream
        uint64_t args;  // the "Stream Wait Event" activity's
    };
    std::unordered_map<int64_t, std::vector<trace::SliceItem>> streamWaits_;  // by track
    std::vector<PendingWait> pendingWaits_;
    // The waits of a stream recorded before `nextStart`, as zero-length nodes of its lane.
    void addStreamWaitNode(const trace::SliceItem& wait, uint32_t lane, int64_t nextStart);
    void bindStreamWaits();
    std::vector<bool> anchored_;  // device nodes triggered by another stream's activity
    bool isAnchored(uint32_t node) const { return node < anchored_.size() && anchored_[node]; }
    int64_t correlationOf(uint64_t args) const;
    // build_waits.cpp
    void addSyncWaits();
    void addQueueWaits();
    void linkHandoffs();
    void matchCollectives();
    void findSteps();

    int hostOf(int64_t track) const { return hosts_.of(track) < 0 ? 0 : hosts_.of(track); }

    const trace::TraceStore& store_;
    std::optional<TimeWindow> window_;
    trace::TraceArgs args_;
    transfers::detail::TrackHosts hosts_;
    Graph g_;
    std::vector<const trace::TrackRow*> hostTracks_, deviceTracks_;
    std::vector<Call> calls_;
    // Host nodes under no op or call: the thread idle (waiting for another, or sleeping).
    std::vector<bool> idle_;
    void markIdle(uint32_t node);
    bool isIdle(uint32_t node) const { return node < idle_.size() && idle_[node]; }
    enum class NameRole : uint8_t { Unknown, Marker, Ignored, Input, Call, SyncCall, Other };
    std::vector<NameRole> roles_;  // by string id
    NameRole roleOf(uint32_t name);
    std::vector<int16_t> deviceClasses_;  // by string id, -1 not yet known
    uint8_t deviceClassOf(uint32_t name);
    // Each host track's calls as (end, index into calls_), sorted: where flows start.
    std::unordered_map<int64_t, std::vector<std::pair<int64_t, uint32_t>>> callsByEnd_;
    // Step markers (ProfilerStep#N) per host lane, as read.
    struct Marker {
        int64_t start, end;
        uint32_t name;
        uint32_t lane;
    };
    std::vector<Marker> markers_;
    std::vector<Marker> deviceStepMarkers() const;
};

// Collectives across hosts: the k-th of each host's list (ordered by start here) are one
// group when every host has one of that name still running after the last arrived; each
// member's own length becomes its time after that arrival. Others are counted unmatched.
void matchCollectiveGroups(Graph& g, std::vector<std::vector<uint32_t>> byHost);
// Makes `members` one group when each ends after the last of them started: each then runs its
// own length after that arrival. eagerFirst (a send and its receive): the first goes at once and
// is no member itself; the others wait for it. False, nothing changed, when one ended before.
bool formGroup(Graph& g, std::vector<uint32_t> members, bool eagerFirst);

// The median of `v` (nearest rank), `fallback` when empty.
int64_t medianOf(std::vector<int64_t> v, int64_t fallback);

}  // namespace stallscope::graph::build
