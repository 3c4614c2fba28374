#pragma once
// Internals of the Chrome JSON importer shared by its files: the builder that interprets the
// events of one file into trace tracks, slices, instants, counters (chrome_builder.cpp), async
// slices (chrome_async.cpp) and flows (chrome_flows.cpp). Not for use outside importers/chrome.

#include <QJsonObject>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/lanes.h"
#include "core/trace/external_sorter.h"
#include "core/trace/string_interner.h"
#include "core/trace/trace_sink.h"
#include "importers/chrome/chrome_json.h"

namespace stallscope::chrome {

// A decimal integer (an optional '-', then digits) that fits; false for anything else.
bool parseInt(std::string_view text, int64_t& out);

// Interprets the events of one file.
class ChromeTraceBuilder {
  public:
    // parentTrack: the track above the file's processes (a host of a multi-host run), -1: none.
    ChromeTraceBuilder(trace::TraceSink& writer, const std::string& path, int64_t parentTrack = -1)
        : writer_(writer), path_(path), parentTrack_(parentTrack) {}

    void add(const RawEvent& ev);
    // Closes what the file left open and returns the importer's observations.
    QJsonObject finish();
    // Whether an event of the PyTorch profiler's (Kineto's) own categories was read.
    bool sawKinetoCategory() const { return kineto_; }

  private:
    struct OpenSlice {
        int64_t start;
        uint32_t name;
        uint64_t args;
        uint32_t track;
        uint16_t startPs;
        // Its place in the file, reserved at its begin: equal spans nest in file order though
        // the slice is added at its end.
        uint64_t order;
    };
    struct Process {
        uint32_t track;
        std::string name, labels;
    };
    // A flow event (v1 s/t/f, or a v2 bind_id end on a slice) as read; flows are paired once
    // every event is known, in time order, because Kineto writes most `f` before their `s`.
    // The events wait in a sorter that spills to disk: a Kineto trace of 10^8 slices has
    // 6.7 * 10^7 of them.
    struct FlowEvent {
        int64_t ts;
        uint64_t id;     // the id's value when it is a canonical integer, else its text's index
        uint32_t space;  // (version, category) << 2 | how id is held (FlowIdKind)
        uint32_t track;
        uint32_t name;
        uint32_t order;  // file order, the last tie-break
        uint16_t ps;
        char phase;  // 's', 't' or 'f'
        trace::FlowBinding binding;
        bool sameKey(const FlowEvent& o) const { return space == o.space && id == o.id; }
    };
    enum FlowIdKind : uint32_t { kDecimalId = 0, kHexId = 1, kTextId = 2 };
    struct FlowEventOrder {
        bool operator()(const FlowEvent& a, const FlowEvent& b) const;
    };
    // A flow as paired, waiting to be added in the order flows were always added: by the file
    // order of their key's first event, then in time order within the key.
    struct PairedFlow {
        uint64_t seq;       // pairing order (time order within a key)
        uint32_t keyFirst;  // file order of the key's first event
        uint32_t name;
        int64_t fromTs, toTs;
        uint32_t fromTrack, toTrack;
        trace::FlowBinding fromBinding, toBinding;
    };
    struct PairedFlowOrder {
        bool operator()(const PairedFlow& a, const PairedFlow& b) const {
            return a.keyFirst != b.keyFirst ? a.keyFirst < b.keyFirst : a.seq < b.seq;
        }
    };

    // Tracks, slices, instants, counters and metadata (chrome_builder.cpp).
    uint64_t argsOf(const RawEvent& ev);
    uint32_t process(std::string_view pid);
    uint32_t thread(std::string_view pid, std::string_view tid);
    uint32_t lookUpThread(std::string_view pid, std::string_view tid);
    uint32_t namedTrack(std::string_view pid, trace::TrackKind kind, const std::string& name);
    uint32_t globalTrack();
    void complete(const RawEvent& ev);
    void begin(const RawEvent& ev);
    // Adds a slice from (start, startPs) to the event's time, to picosecond precision.
    void addClosed(uint32_t track, const OpenSlice& o, const RawEvent& ev, uint64_t args);
    // From (ns, ps) to (endNs, endPs) as whole ns and a ps remainder; 0 when the end comes
    // first, saturated where the difference does not fit (times from -292 to +292 years).
    static std::pair<int64_t, uint16_t> span(int64_t ns, uint16_t ps, int64_t endNs,
                                             uint16_t endPs);
    void end(const RawEvent& ev);
    void instant(const RawEvent& ev);
    void counter(const RawEvent& ev);
    void metadata(const RawEvent& ev);

    // Async slices (chrome_async.cpp). Async slices of one name in one process share a track
    // while they do not overlap; a root that starts while an earlier one is still open takes the
    // next free lane (its own track), as Chrome and Perfetto draw concurrent async events.
    static constexpr size_t kMaxLanes = 4096;
    static constexpr int64_t kAsyncSortBase =
        (int64_t(INT32_MAX) + int64_t(trace::TrackKind::Async)) << 24;
    struct AsyncGroup {
        size_t ordinal = 0;
        std::vector<uint32_t> lanes;  // track ids
        // A lane is free once every root it held has ended (at or before the next one starts).
        lanes::LaneAssigner<int64_t> free{lanes::Touching::SameLane};
    };
    struct AsyncLane {
        AsyncGroup* group;  // map values do not move
        size_t lane;
    };

    AsyncGroup& asyncGroup(const RawEvent& ev);
    // The track of a lane of the group, made when it is new.
    uint32_t laneTrack(AsyncGroup& group, size_t lane, const RawEvent& ev);
    // Async ids are global, as catapult reads them (Chrome's InputLatency slices begin in the
    // browser process and end in a renderer), unless an id2 says "local": then per process.
    std::string asyncKey(const RawEvent& ev, bool legacy);

    // Async events are paired in time order, as catapult pairs them (it sorts them by ts):
    // Chrome writes per-thread buffers, so an end can come before its begin in the file (a
    // public catapult trace: 544 ends before their begins). Held as read, replayed at the end.
    struct HeldAsync {
        int64_t tsNs = 0;
        uint16_t tsPs = 0;
        char phase = 0;
        uint64_t args = 0;
        std::string name, cat, id, pid;
    };
    void holdAsync(const RawEvent& ev, char phase);
    void replayAsync();
    void asyncBegin(const RawEvent& ev, bool legacy, uint64_t args);
    // An end closes the innermost open slice of its id with the same name (any, when unnamed);
    // slices opened inside it and still open end with it.
    void asyncEnd(const RawEvent& ev, bool legacy);
    void asyncInstant(const RawEvent& ev, bool legacy, uint64_t args);

    // Flows (chrome_flows.cpp).
    // The (version, category, id) of a flow event as a compact key: integer ids (Kineto's
    // correlation ids) by value, other ids by an interned text.
    void flowKey(FlowEvent& into, std::string_view prefix, std::string_view id,
                 std::string_view cat);
    void collectFlow(std::string_view prefix, std::string_view id, std::string_view cat,
                     uint32_t track, const RawEvent& ev, char phase, trace::FlowBinding binding);
    // s -> t -> ... -> f of one (category, id). A start binds to its enclosing slice, a step too;
    // an end with bp:"e" to its enclosing slice, otherwise to the next slice that starts at or
    // after it on its thread.
    void flowV1(const RawEvent& ev, char phase);
    // bind_id with flow_out (source) and flow_in (destination) on slices; a slice with both
    // continues the chain, as a step does.
    void flowV2(const RawEvent& ev, uint32_t track);
    // Pairs the collected flow events of each key in time order, whatever their order in the
    // file. A start while a chain is open begins a new flow (ids are reused); ends left over
    // before any start pair with the key's lone starts (clock skew, or a start and its end at
    // one time); what pairs with nothing is counted.
    void pairFlows();
    // Pairs the events of one key (in time order) into `paired`.
    void pairKey(const std::vector<FlowEvent>& events, uint64_t& seq,
                 trace::ExternalSorter<PairedFlow, PairedFlowOrder>& paired);

    trace::TraceSink& writer_;
    std::string path_;
    int64_t parentTrack_ = -1;
    std::string key_;  // reused lookup key
    std::map<std::string, Process, std::less<>> processes_;
    std::unordered_map<std::string, uint32_t> threads_, named_;
    // The threads last looked up: events alternate between a few (a host thread and its
    // streams), and a key built and hashed per event was a tenth of building the trace.
    struct RecentThread {
        std::string pid, tid;
        uint32_t track = 0;
    };
    std::array<RecentThread, 4> recentThreads_;
    size_t recentThreadsUsed_ = 0, recentThreadNext_ = 0;
    // The flow key space last interned ("<version><category>"), for the same reason.
    std::string lastFlowPrefix_, lastFlowCategory_;
    uint32_t lastFlowSpace_ = UINT32_MAX;
    uint32_t global_ = UINT32_MAX;
    std::unordered_map<uint32_t, std::vector<OpenSlice>> open_;
    std::map<std::string, std::vector<OpenSlice>> async_;
    std::vector<HeldAsync> heldAsync_;
    trace::StringInterner flowSpaces_;  // "<version><category>" of flow keys
    trace::StringInterner flowIds_;     // flow ids that are not canonical integers
    // 40 bytes a record: 20 MB in memory, the rest in sorted runs on disk.
    static constexpr size_t kFlowSortBudget = size_t(1) << 19;
    trace::ExternalSorter<FlowEvent, FlowEventOrder> flowEvents_{kFlowSortBudget};
    uint64_t unmatchedFlowStarts_ = 0, unmatchedFlowEnds_ = 0, backwardFlows_ = 0;
    uint64_t events_ = 0, unmatchedEnd_ = 0, unterminated_ = 0, repairedValues_ = 0;
    uint64_t closedByParent_ = 0, extraLanes_ = 0;
    std::unordered_map<std::string, AsyncGroup> asyncGroups_;
    std::unordered_map<uint32_t, AsyncLane> asyncLanes_;  // by track
    std::map<std::string, uint64_t> phases_, ignored_;
    std::array<uint64_t, 256> onePhaseCounts_{};  // one-character phases, into phases_ at the end
    int64_t firstTs_ = 0, lastTs_ = INT64_MIN;
    bool haveTs_ = false;
    bool kineto_ = false;  // an event of a category only the PyTorch profiler writes
};

}  // namespace stallscope::chrome
