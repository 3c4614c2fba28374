#pragma once

// Step breakdown of a trace profile (issue 18): where the time of each training or inference
// step goes on each device, whether communication hides behind compute, why devices sit idle,
// how long launches take, and what to change. Works on any trace kind the importers write
// (PyTorch/Kineto Chrome JSON, XProf XSpace, Chakra ET); rules in docs/steps.md.
//
// Steps (StepSource, first that applies):
//   1. a user-chosen repeating op (StepOptions::stepOp, exact name, on the track holding most
//      of them): step i runs from occurrence i's start to occurrence i+1's start, the last one
//      to its own end;
//   2. Kineto `ProfilerStep#N` slices on a host thread: the slice is the step;
//   3. XProf `Steps` lines of a device plane: each event is a step;
//   4. XProf `XLA Modules`: executions of the module with the largest total time, start to
//      next start as in 1;
//   5. iteration markers (`Iteration#N`, `iteration_N`, Chakra and others): as in 2;
//   6. otherwise the whole trace is one step.
//
// Breakdown: every nanosecond of a step on a device goes to exactly one category. Device
// activity wins over idle; among concurrent activities (several streams, async ops) the
// highest of this order wins:
//   compute (GEMM/conv > attention > other kernels) > communication > memcpy > memset.
// So `communication` and `memcpy` count only exposed time; the hidden part is in the overlap
// figures. A nanosecond without device activity is idle, and its cause is, in this order:
//   input      the host is in the input pipeline (DataLoader, tf.data, infeed);
//   host_wait  the host is in a runtime call (launch, memcpy, synchronize), or the device's
//              next work was launched only after the device went idle (the host was late);
//   idle       anything else (waiting on another stream or device, nothing to do).
// The categories (kCategoryNames) are the keys of `breakdown` in `steps --json`.
//
// Thread safety: analyzeSteps reads through a TraceStore, which is one per thread; call it on
// a worker with a store opened there. The result is a plain value.

#include <QJsonObject>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/trace/trace_store.h"
#include "core/workspace.h"

namespace stallscope::trace {

// Device categories, in the priority order above (activity first, then the causes of idle).
enum class StepCategory : uint8_t {
    Compute,
    Communication,
    Memcpy,
    Memset,
    HostWait,
    Input,
    Idle,
};
constexpr size_t kStepCategoryCount = 7;
// JSON names: "compute", "communication", "memcpy", "memset", "host_wait", "input", "idle".
extern const std::array<const char*, kStepCategoryCount> kCategoryNames;

// Host-side categories of a step (union over host threads), priority in this order:
// input pipeline > synchronisation calls > other runtime/driver calls (launches, memcpy API) >
// framework operators (`aten::`, `ns::op`) > Python functions > other host slices > nothing.
enum class HostCategory : uint8_t { Input, Sync, Runtime, Operator, Python, Other, Idle };
constexpr size_t kHostCategoryCount = 7;
extern const std::array<const char*, kHostCategoryCount> kHostCategoryNames;

enum class StepSource { StepOp, ProfilerStep, XlaSteps, XlaModules, IterationMarker, WholeTrace };
const char* stepSourceName(StepSource source);  // "step_op", "profiler_step", ...

struct StepOptions {
    std::string stepOp;  // exact op name whose occurrences delimit steps; empty: detect
    // Only the tracks below this one (a host of a multi-host run, core/trace/hosts.h): that
    // host's steps, devices and host threads, as if it were a profile of its own. -1: all.
    int64_t withinTrack = -1;
};

struct StepDevice {
    std::string name;             // "GPU 0", "/device:TPU:0", "rank 3"
    int64_t processTrack = -1;    // the process track grouping its tracks (-1: none)
    std::vector<int64_t> tracks;  // tracks whose slices are its activity (streams, op lines)
};

struct Step {
    int index = 0;  // 0, 1, ... in time order
    std::string name;
    int64_t start = 0, end = 0;  // ns, end exclusive
    int64_t markerTrack = -1;    // track of the slice that marked it (-1: whole trace)
    int64_t duration() const { return end - start; }
};

// One step on one device; breakdown sums to the step's duration.
struct DeviceStepBreakdown {
    int step = 0;
    int device = 0;
    // The span this device's step covers: the step's, or in a multi-host run its host's own
    // step (each host is analysed on its own step markers).
    int64_t start = 0, end = 0;
    int64_t duration() const { return end - start; }
    std::array<int64_t, kStepCategoryCount> ns{};
    // Compute split by kernel name (sums to ns[Compute]).
    int64_t gemm = 0, attention = 0, otherCompute = 0;
    // Exposed memcpy split by direction (sums to ns[Memcpy]).
    int64_t h2d = 0, d2h = 0, d2d = 0, peer = 0, otherCopy = 0;
    // Communication and memcpy activity whatever overlaps it; hidden = while compute runs.
    int64_t communicationTotal = 0, communicationHidden = 0;
    int64_t memcpyTotal = 0, memcpyHidden = 0;
    // Starting in the step: device activities (kernels, copies, memsets, collectives), and of
    // them the compute kernels (what kernels_per_step and small_kernels count).
    int64_t activities = 0, kernels = 0;
    int64_t at(StepCategory c) const { return ns[size_t(c)]; }
};

struct HostStepBreakdown {
    int step = 0;
    // Sums to the step's duration (in a multi-host run: to its hosts' step durations).
    std::array<int64_t, kHostCategoryCount> ns{};
};

// A stretch of a step during which a device ran nothing.
struct IdleGap {
    int step = 0, device = 0;
    int64_t start = 0, end = 0;
    int64_t input = 0, hostWait = 0, idle = 0;  // its nanoseconds by cause
    StepCategory cause = StepCategory::Idle;    // the cause holding most of it
    std::string hostActivity;                   // deepest host slice at its middle, "" if none
    int64_t hostTrack = -1;
    int64_t duration() const { return end - start; }
};

struct LatencyStats {
    uint64_t count = 0;
    uint64_t negative = 0;  // kernel start before its launch (clocks apart): left out
    int64_t mean = 0, p50 = 0, p95 = 0, max = 0;
};

struct StepRecommendation {
    std::string kind;  // input_bound, launch_bound, sync_stall, exposed_communication,
                       // memcpy_bound, small_kernels, device_idle
    std::string text;
    double sharePct = 0;  // most of the step time (all steps and devices) it would recover
    QJsonObject evidence;
    // Where it shows on the timeline.
    int64_t start = 0, end = 0;
    int64_t track = -1;
};

struct StepAnalysis {
    // 4: zero-length kernels counted, ROCm/XProf copy names and copy streams, AMD GEMMs, no
    // device recommendations without a device.
    // 5: per step both device activities and compute kernels; deviceActivity.
    static constexpr int kVersion = 5;  // of the analysis and its stored form
    StepSource source = StepSource::WholeTrace;
    std::string stepOp;  // the op of StepSource::StepOp / the module of XlaModules
    std::vector<StepDevice> devices;
    std::vector<Step> steps;
    std::vector<DeviceStepBreakdown> breakdown;            // step-major, then device
    std::vector<HostStepBreakdown> host;                   // one per step
    std::vector<IdleGap> gaps;                             // the longest (kMaxGaps), longest first
    std::array<uint64_t, kStepCategoryCount> gapCounts{};  // every gap, by its cause
    LatencyStats launchLatency;  // launch call start -> kernel start, over linked kernels
    int64_t medianKernel = 0;    // median duration of compute activities, ns
    std::vector<StepRecommendation> recommendations;  // largest share first
    // False for a trace without device activity (CPU only, a CUPTI range profile): its one
    // "device" stands for the host, and its breakdown holds the host's idle causes.
    bool deviceActivity = true;
    // What the breakdown cannot say, for the user ("no device activity: ...", "no durations:
    // ..."); empty when nothing.
    std::string note;

    static constexpr size_t kMaxGaps = 200;
    // A step's time: its longest device span (the slowest host's step in a multi-host run,
    // whose joined step spans every host's and so is no step time); the step's span otherwise.
    int64_t stepTime(int step) const;
    // Sum over steps and devices of the devices' step durations, and of each category.
    int64_t totalDeviceTime() const;
    int64_t total(StepCategory c) const;
    double sharePct(StepCategory c) const;
};

// A multi-host run profile (hosts.h) is analysed host by host, each on its own step markers
// within its host track, and the results joined: devices of every host, steps matched by name
// (or index) spanning their hosts' steps, each device's breakdown over its host's step,
// launch latency and kernel median over all hosts, and per kind of recommendation the host
// where it weighs most (its share re-based on the run's device time).
StepAnalysis analyzeSteps(const TraceStore& store, const StepOptions& options = {});

// Everything above as JSON (CONTRACT §7 `steps --json` keys and more, times in ns), and back.
QJsonObject toJson(const StepAnalysis& analysis);
StepAnalysis stepAnalysisFromJson(const QJsonObject& json);  // throws Failure when malformed

// Stored with the profile as the registered analysis "steps" (step_registration.h).

// Two analyses side by side: core/compare/step_compare.h.

// `suggest --json` of a trace profile: {"suggestions":[{"kind","text","share_pct",
// "saving_ns","evidence","start","end","track"}]}.
QJsonObject stepSuggestionsJson(const StepAnalysis& analysis);

// The human-readable table of `steps` without --json.
std::string stepsTable(const StepAnalysis& analysis);

}  // namespace stallscope::trace
