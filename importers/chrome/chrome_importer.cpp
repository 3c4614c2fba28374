// Chrome Trace Event JSON (chrome://tracing, Perfetto exports, PyTorch profiler/Kineto): the
// events become trace tracks (process -> thread, async and counter tracks), slices, instants,
// counter samples and flows. Streamed: memory does not grow with the file.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <map>
#include <unordered_map>

#include "core/checked_number.h"
#include "core/errors.h"
#include "core/lanes.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "importers/chrome/chrome_json.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

using trace::FlowBinding;
using trace::FlowEnd;
using trace::TraceSink;
using trace::TraceWriter;
using trace::TrackKind;
using trace::TrackSpec;

bool parseInt(std::string_view text, int64_t& out) {
    if (text.empty()) return false;
    int64_t v = 0;
    size_t i = text[0] == '-' ? 1 : 0;
    if (i == text.size()) return false;
    for (; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9' || v > INT64_MAX / 10 - 10) return false;
        v = v * 10 + (text[i] - '0');
    }
    out = text[0] == '-' ? -v : v;
    return true;
}

// Interprets the events of one file.
class ChromeTraceBuilder {
  public:
    // parentTrack: the track above the file's processes (a host of a multi-host run), -1: none.
    ChromeTraceBuilder(TraceSink& writer, const std::string& path, int64_t parentTrack = -1)
        : writer_(writer), path_(path), parentTrack_(parentTrack) {}

    void add(const chrome::RawEvent& ev) {
        ++events_;
        repairedValues_ += ev.repairs;
        const char phase = ev.ph.size() == 1 ? ev.ph[0] : '\0';
        ++phases_[std::string(ev.ph)];
        if (ev.hasTs) {
            int64_t end = 0;
            if (__builtin_add_overflow(ev.tsNs, std::max<int64_t>(ev.durNs, 0), &end))
                end = INT64_MAX - 2;
            lastTs_ = std::max(lastTs_, end);
            if (!haveTs_ || ev.tsNs < firstTs_) firstTs_ = ev.tsNs;
            haveTs_ = true;
        }
        if (phase != 'M' && !ev.hasTs && phase != '\0' &&
            std::string_view("XBEiIbenSTFCstf").find(phase) != std::string_view::npos)
            throw InputError(
                atOffset(path_, static_cast<long long>(ev.offset),
                         "event with ph \"" + std::string(ev.ph) + "\" has no \"ts\""));
        switch (phase) {
            case 'X':
                complete(ev);
                break;
            case 'B':
                begin(ev);
                break;
            case 'E':
                end(ev);
                break;
            case 'i':
            case 'I':
            case 'R':  // a mark (Chrome's navigation and paint timings): an instant, as catapult
                instant(ev);
                break;
            case 'C':
                counter(ev);
                break;
            case 'b':
            case 'e':
            case 'n':
            case 'S':
            case 'T':
            case 'p':
            case 'F':
                holdAsync(ev, phase);
                break;
            case 's':
            case 't':
            case 'f':
                flowV1(ev, phase);
                break;
            case 'M':
                metadata(ev);
                break;
            default:
                ++ignored_[std::string(ev.ph)];
        }
    }

    // Closes what the file left open and returns the importer's observations.
    QJsonObject finish() {
        replayAsync();
        // Slices that never ended are kept, drawn to the end of the trace and marked: their
        // duration is unknown, so the statistics leave them out.
        for (auto& [track, stack] : open_) {
            for (const OpenSlice& o : stack) {
                writer_.addSlice(track, o.start, span(o.start, o.startPs, lastTs_, 0).first, o.name,
                                 o.args, o.startPs, 0, false);
                ++unterminated_;
            }
        }
        for (auto& [key, stack] : async_) {
            for (const OpenSlice& o : stack) {
                writer_.addSlice(o.track, o.start, span(o.start, o.startPs, lastTs_, 0).first,
                                 o.name, o.args, o.startPs, 0, false);
                ++unterminated_;
            }
        }
        pairFlows();
        // Lanes of concurrent async slices sort right after the first one of their name.
        for (auto& [key, group] : asyncGroups_) {
            for (size_t lane = 0; lane < group.lanes.size(); ++lane)
                writer_.track(group.lanes[lane]).sortIndex = kAsyncSortBase +
                                                             int64_t(group.ordinal) * kMaxLanes +
                                                             int64_t(std::min(lane, kMaxLanes - 1));
        }
        for (auto& [pid, p] : processes_) {
            TrackSpec& spec = writer_.track(p.track);
            spec.name = p.name.empty() ? "Process " + std::string(pid) : p.name;
            // A label repeating the name (Kineto's MTIA: "MTIA 17" labelled "MTIA 17") once.
            if (!p.labels.empty() && p.labels != spec.name) spec.name += " (" + p.labels + ")";
        }

        QJsonObject o;
        o.insert("events", qint64(events_));
        QJsonObject phases;
        for (const auto& [ph, n] : phases_) phases.insert(QString::fromStdString(ph), qint64(n));
        o.insert("phases", phases);
        QJsonObject ignored;
        for (const auto& [ph, n] : ignored_) ignored.insert(QString::fromStdString(ph), qint64(n));
        if (!ignored.isEmpty()) o.insert("ignored_events", ignored);
        o.insert("unmatched_end_events", qint64(unmatchedEnd_));
        o.insert("repaired_values", qint64(repairedValues_));
        o.insert("unterminated_slices", qint64(unterminated_));
        o.insert("async_closed_by_parent", qint64(closedByParent_));
        o.insert("async_lanes", qint64(extraLanes_));
        o.insert("unmatched_flow_events", qint64(unmatchedFlowStarts_ + unmatchedFlowEnds_));
        o.insert("unmatched_flow_starts", qint64(unmatchedFlowStarts_));
        o.insert("unmatched_flow_ends", qint64(unmatchedFlowEnds_));
        o.insert("flow_events", qint64(flowEvents_.size()));
        o.insert("flows_ending_before_start", qint64(backwardFlows_));
        return o;
    }

  private:
    struct OpenSlice {
        int64_t start;
        uint32_t name;
        uint64_t args;
        uint32_t track;
        uint16_t startPs;
    };
    struct Process {
        uint32_t track;
        std::string name, labels;
    };
    // A flow event (v1 s/t/f, or a v2 bind_id end on a slice) as read; flows are paired once
    // every event is known, in time order, because Kineto writes most `f` before their `s`.
    struct FlowEvent {
        int64_t ts;
        uint32_t key;  // (category, id) or bind id, interned in flowKeys_
        uint32_t track;
        uint32_t name;
        uint32_t order;  // file order, the last tie-break
        uint16_t ps;
        char phase;  // 's', 't' or 'f'
        FlowBinding binding;
    };

    uint64_t argsOf(const chrome::RawEvent& ev) {
        if (ev.args.empty() || ev.args == "{}") return 0;
        return writer_.addArgs(ev.args);
    }

    uint32_t process(std::string_view pid) {
        auto it = processes_.find(pid);
        if (it != processes_.end()) return it->second.track;
        TrackSpec spec;
        spec.kind = TrackKind::Process;
        spec.parent = parentTrack_;
        spec.pid = std::string(pid);
        int64_t numeric = 0;
        spec.sortIndex = parseInt(pid, numeric) ? numeric : INT32_MAX;
        const uint32_t id = writer_.addTrack(std::move(spec));
        processes_.emplace(std::string(pid), Process{id, {}, {}});
        return id;
    }

    uint32_t thread(std::string_view pid, std::string_view tid) {
        key_.assign(pid);
        key_.push_back('\x1f');
        key_.append(tid);
        auto it = threads_.find(key_);
        if (it != threads_.end()) return it->second;
        TrackSpec spec;
        spec.kind = TrackKind::Thread;
        spec.parent = process(pid);
        spec.pid = std::string(pid);
        spec.tid = std::string(tid);
        spec.name = "Thread " + std::string(tid);
        int64_t numeric = 0;
        spec.sortIndex = parseInt(tid, numeric) ? numeric : INT32_MAX;
        const uint32_t id = writer_.addTrack(std::move(spec));
        threads_.emplace(key_, id);
        return id;
    }

    uint32_t namedTrack(std::string_view pid, TrackKind kind, const std::string& name) {
        key_.assign(pid);
        key_.push_back(char('0' + int(kind)));
        key_.append(name);
        auto it = named_.find(key_);
        if (it != named_.end()) return it->second;
        TrackSpec spec;
        spec.kind = kind;
        spec.parent = process(pid);
        spec.pid = std::string(pid);
        spec.name = name;
        // Counter tracks come after the process's threads and async tracks.
        spec.sortIndex = (int64_t(INT32_MAX) + int64_t(kind)) << 24;
        const uint32_t id = writer_.addTrack(std::move(spec));
        named_.emplace(key_, id);
        return id;
    }

    uint32_t globalTrack() {
        if (global_ == UINT32_MAX) {
            TrackSpec spec;
            spec.kind = TrackKind::Global;
            spec.parent = parentTrack_;
            spec.name = "Global";
            spec.sortIndex = INT64_MIN;
            global_ = writer_.addTrack(std::move(spec));
        }
        return global_;
    }

    void complete(const chrome::RawEvent& ev) {
        const uint32_t track = thread(ev.pid, ev.tid);
        const uint32_t name = writer_.intern(ev.name);
        writer_.addSlice(track, ev.tsNs, ev.hasDur ? ev.durNs : 0, name, argsOf(ev), ev.tsPs,
                         ev.hasDur ? ev.durPs : 0);
        flowV2(ev, track);
    }

    void begin(const chrome::RawEvent& ev) {
        const uint32_t track = thread(ev.pid, ev.tid);
        open_[track].push_back({ev.tsNs, writer_.intern(ev.name), argsOf(ev), track, ev.tsPs});
        flowV2(ev, track);
    }

    // Adds a slice from (start, startPs) to the event's time, to picosecond precision.
    void addClosed(uint32_t track, const OpenSlice& o, const chrome::RawEvent& ev, uint64_t args) {
        const auto [dur, durPs] = span(o.start, o.startPs, ev.tsNs, ev.tsPs);
        writer_.addSlice(track, o.start, dur, o.name, args, o.startPs, durPs);
    }

    // From (ns, ps) to (endNs, endPs) as whole ns and a ps remainder; 0 when the end comes
    // first, saturated where the difference does not fit (times from -292 to +292 years).
    static std::pair<int64_t, uint16_t> span(int64_t ns, uint16_t ps, int64_t endNs,
                                             uint16_t endPs) {
        if (endNs < ns || (endNs == ns && endPs < ps)) return {0, 0};
        int64_t whole = 0;
        if (__builtin_sub_overflow(endNs, ns, &whole)) return {INT64_MAX / 2, 0};
        int remainder = int(endPs) - int(ps);
        if (remainder < 0) {
            remainder += 1000;
            --whole;
        }
        return {whole, uint16_t(remainder)};
    }

    void end(const chrome::RawEvent& ev) {
        const uint32_t track = thread(ev.pid, ev.tid);
        auto& stack = open_[track];
        if (stack.empty()) {
            ++unmatchedEnd_;
            return;
        }
        const OpenSlice o = stack.back();
        stack.pop_back();
        // Args given on the E event count when B had none.
        const uint64_t args = o.args ? o.args : argsOf(ev);
        addClosed(track, o, ev, args);
    }

    void instant(const chrome::RawEvent& ev) {
        uint32_t track;
        if (ev.scope == "g")
            track = globalTrack();
        else if (ev.scope == "p")
            track = process(ev.pid);
        else
            track = thread(ev.pid, ev.tid);
        writer_.addInstant(track, ev.tsNs, writer_.intern(ev.name), argsOf(ev));
    }

    void counter(const chrome::RawEvent& ev) {
        std::string base(ev.name);
        if (ev.hasId) base += " " + chrome::scalarValue(ev.id);
        const bool ok =
            chrome::forEachMember(ev.args, [&](std::string_view key, std::string_view raw) {
                double value = 0;
                if (!chrome::numberValue(raw, value)) return;
                const std::string name = key == "value" ? base : base + " " + std::string(key);
                writer_.addCounter(namedTrack(ev.pid, TrackKind::Counter, name), ev.tsNs, value);
            });
        if (!ok && !ev.args.empty())
            throw InputError(atOffset(path_, static_cast<long long>(ev.offset),
                                      "counter event \"" + base + "\" has malformed \"args\""));
    }

    // Async slices of one name in one process share a track while they do not overlap; a root
    // that starts while an earlier one is still open takes the next free lane (its own track),
    // as Chrome and Perfetto draw concurrent async events.
    static constexpr size_t kMaxLanes = 4096;
    static constexpr int64_t kAsyncSortBase = (int64_t(INT32_MAX) + int64_t(TrackKind::Async))
                                              << 24;
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

    AsyncGroup& asyncGroup(const chrome::RawEvent& ev) {
        key_.assign(ev.pid);
        key_.push_back('\x1f');
        key_.append(ev.name);
        auto [it, inserted] = asyncGroups_.try_emplace(key_);
        if (inserted) it->second.ordinal = asyncGroups_.size() - 1;
        return it->second;
    }

    // The track of a lane of the group, made when it is new.
    uint32_t laneTrack(AsyncGroup& group, size_t lane, const chrome::RawEvent& ev) {
        if (lane < group.lanes.size()) return group.lanes[lane];
        TrackSpec spec;
        spec.kind = TrackKind::Async;
        spec.parent = process(ev.pid);
        spec.pid = std::string(ev.pid);
        spec.name = std::string(ev.name);
        if (!group.lanes.empty()) {
            spec.name += " (" + std::to_string(group.lanes.size() + 1) + ")";
            ++extraLanes_;
        }
        spec.sortIndex = kAsyncSortBase;
        const uint32_t id = writer_.addTrack(std::move(spec));
        group.lanes.push_back(id);
        asyncLanes_.emplace(id, AsyncLane{&group, group.lanes.size() - 1});
        return id;
    }

    // Async ids are global, as catapult reads them (Chrome's InputLatency slices begin in the
    // browser process and end in a renderer), unless an id2 says "local": then per process.
    std::string asyncKey(const chrome::RawEvent& ev, bool legacy) {
        std::string key;
        if (ev.id.find("\"local\"") != std::string_view::npos) key = ev.pid;
        key += '\x1f';
        key += ev.cat;
        key += '\x1f';
        key += ev.id;
        if (legacy) {
            key += '\x1f';
            key += ev.name;
        }
        return key;
    }

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
    std::vector<HeldAsync> heldAsync_;
    void holdAsync(const chrome::RawEvent& ev, char phase) {
        HeldAsync held{ev.tsNs,
                       ev.tsPs,
                       phase,
                       phase == 'e' || phase == 'F' ? 0 : argsOf(ev),
                       std::string(ev.name),
                       std::string(ev.cat),
                       std::string(ev.id),
                       std::string(ev.pid)};
        heldAsync_.push_back(std::move(held));
    }
    void replayAsync() {
        std::stable_sort(heldAsync_.begin(), heldAsync_.end(),
                         [](const HeldAsync& a, const HeldAsync& b) {
                             return a.tsNs != b.tsNs ? a.tsNs < b.tsNs : a.tsPs < b.tsPs;
                         });
        for (const HeldAsync& held : heldAsync_) {
            chrome::RawEvent ev;
            ev.name = held.name;
            ev.cat = held.cat;
            ev.id = held.id;
            ev.pid = held.pid;
            ev.tsNs = held.tsNs;
            ev.tsPs = held.tsPs;
            ev.hasTs = true;
            const bool legacy =
                held.phase == 'S' || held.phase == 'T' || held.phase == 'p' || held.phase == 'F';
            if (held.phase == 'b' || held.phase == 'S')
                asyncBegin(ev, legacy, held.args);
            else if (held.phase == 'e' || held.phase == 'F')
                asyncEnd(ev, legacy);
            else
                asyncInstant(ev, legacy, held.args);
        }
        heldAsync_ = {};
    }

    void asyncBegin(const chrome::RawEvent& ev, bool legacy, uint64_t args) {
        auto& stack = async_[asyncKey(ev, legacy)];
        // Nested async slices share their root's track; a root takes a free lane of its name.
        uint32_t track;
        if (stack.empty()) {
            AsyncGroup& group = asyncGroup(ev);
            track = laneTrack(group, group.free.open(ev.tsNs), ev);
        } else {
            track = stack.front().track;
        }
        stack.push_back({ev.tsNs, writer_.intern(ev.name), args, track, ev.tsPs});
    }

    // An end closes the innermost open slice of its id with the same name (any, when unnamed);
    // slices opened inside it and still open end with it.
    void asyncEnd(const chrome::RawEvent& ev, bool legacy) {
        auto it = async_.find(asyncKey(ev, legacy));
        if (it == async_.end()) {
            ++unmatchedEnd_;
            return;
        }
        auto& stack = it->second;
        const uint32_t name = ev.name.empty() ? 0 : writer_.intern(ev.name);
        size_t match = stack.size();
        while (match > 0 && name != 0 && stack[match - 1].name != name) --match;
        if (match == 0) {
            ++unmatchedEnd_;
            return;
        }
        for (size_t i = stack.size(); i-- > match - 1;) {
            const OpenSlice& o = stack[i];
            addClosed(o.track, o, ev, o.args);
            // Children still open end with their parent: ended, not unterminated.
            if (i != match - 1) ++closedByParent_;
        }
        if (match == 1) {
            // The root ended: its lane is free from now on.
            const AsyncLane& lane = asyncLanes_.at(stack.front().track);
            lane.group->free.close(lane.lane, ev.tsNs);
        }
        stack.resize(match - 1);
        if (stack.empty()) async_.erase(it);
    }

    void asyncInstant(const chrome::RawEvent& ev, bool legacy, uint64_t args) {
        auto it = async_.find(asyncKey(ev, legacy));
        const uint32_t track = it != async_.end() && !it->second.empty()
                                   ? it->second.front().track
                                   : laneTrack(asyncGroup(ev), 0, ev);
        writer_.addInstant(track, ev.tsNs, writer_.intern(ev.name), args);
    }

    uint32_t flowKey(std::string_view prefix, std::string_view id, std::string_view cat) {
        key_.assign(prefix);
        key_.append(cat);
        key_.push_back('\x1f');
        key_.append(id);
        return flowKeys_.try_emplace(key_, uint32_t(flowKeys_.size())).first->second;
    }

    void collectFlow(uint32_t key, uint32_t track, const chrome::RawEvent& ev, char phase,
                     FlowBinding binding) {
        flowEvents_.push_back({ev.tsNs, key, track, writer_.intern(ev.name),
                               uint32_t(flowEvents_.size()), ev.tsPs, phase, binding});
    }

    // s -> t -> ... -> f of one (category, id). A start binds to its enclosing slice, a step too;
    // an end with bp:"e" to its enclosing slice, otherwise to the next slice that starts at or
    // after it on its thread.
    void flowV1(const chrome::RawEvent& ev, char phase) {
        const uint32_t track = thread(ev.pid, ev.tid);
        const FlowBinding binding =
            phase == 'f' && ev.bp != "e" ? FlowBinding::NextSlice : FlowBinding::Enclosing;
        collectFlow(flowKey("1", ev.id, ev.cat), track, ev, phase, binding);
    }

    // bind_id with flow_out (source) and flow_in (destination) on slices; a slice with both
    // continues the chain, as a step does.
    void flowV2(const chrome::RawEvent& ev, uint32_t track) {
        if (ev.bindId.empty() || (!ev.flowIn && !ev.flowOut)) return;
        const char phase = ev.flowIn && ev.flowOut ? 't' : ev.flowOut ? 's' : 'f';
        collectFlow(flowKey("2", ev.bindId, {}), track, ev, phase, FlowBinding::Enclosing);
    }

    // Pairs the collected flow events of each key in time order, whatever their order in the
    // file. A start while a chain is open begins a new flow (ids are reused); ends left over
    // before any start pair with the key's lone starts (clock skew, or a start and its end at
    // one time); what pairs with nothing is counted.
    void pairFlows() {
        // At one time an end comes first: it closes the chain open before (an id reused at
        // the moment its last flow ends); a start and its own end at the same time pair
        // through the lone-event pass below.
        auto rank = [](char phase) { return phase == 'f' ? 0 : phase == 's' ? 1 : 2; };
        std::sort(flowEvents_.begin(), flowEvents_.end(),
                  [&](const FlowEvent& a, const FlowEvent& b) {
                      if (a.key != b.key) return a.key < b.key;
                      if (a.ts != b.ts) return a.ts < b.ts;
                      if (a.ps != b.ps) return a.ps < b.ps;
                      if (a.phase != b.phase) return rank(a.phase) < rank(b.phase);
                      return a.order < b.order;
                  });
        size_t i = 0;
        std::vector<size_t> loneStarts, loneEnds;  // of the current key, in time order
        while (i < flowEvents_.size()) {
            const uint32_t key = flowEvents_[i].key;
            bool open = false, arrowFromOpen = false;
            size_t openAt = 0;
            FlowEnd from;
            uint32_t name = 0;
            loneStarts.clear();
            loneEnds.clear();
            size_t starts = 0;
            for (; i < flowEvents_.size() && flowEvents_[i].key == key; ++i) {
                const FlowEvent& e = flowEvents_[i];
                const FlowEnd here{e.track, e.ts, e.binding};
                if (e.phase == 's') {
                    ++starts;
                    if (open && !arrowFromOpen) loneStarts.push_back(openAt);
                    open = true;
                    arrowFromOpen = false;
                    openAt = i;
                    from = here;
                    name = e.name;
                    continue;
                }
                if (!open) {
                    loneEnds.push_back(i);
                    continue;
                }
                writer_.addFlow(from, here, name);
                arrowFromOpen = true;
                from = here;
                if (e.phase == 'f') open = false;
            }
            if (open && !arrowFromOpen) loneStarts.push_back(openAt);
            // An end stamped before its start (device and host clocks apart) pairs with the
            // lone start of its id: the arrow points back in time, and is counted. Only for an
            // id used once (Kineto's launch -> kernel flows): an id reused for many flows
            // (catapult's flow.json: 275 starts of reused ids with no end) leaves lone starts
            // and ends that are no pair of each other.
            size_t nextStart = 0, paired = 0;
            for (const size_t end : starts > 1 ? std::vector<size_t>{} : loneEnds) {
                const FlowEvent& e = flowEvents_[end];
                while (nextStart < loneStarts.size()) {
                    const FlowEvent& s = flowEvents_[loneStarts[nextStart]];
                    if (s.ts > e.ts || (s.ts == e.ts && s.ps >= e.ps)) break;
                    ++nextStart;  // a start before this end: not its pair
                }
                if (nextStart == loneStarts.size()) break;
                const FlowEvent& s = flowEvents_[loneStarts[nextStart++]];
                writer_.addFlow({s.track, s.ts, s.binding}, {e.track, e.ts, e.binding}, s.name);
                if (e.ts < s.ts || (e.ts == s.ts && e.ps < s.ps)) ++backwardFlows_;
                ++paired;
            }
            unmatchedFlowStarts_ += loneStarts.size() - paired;
            unmatchedFlowEnds_ += loneEnds.size() - paired;
        }
    }

    void metadata(const chrome::RawEvent& ev) {
        std::string value;
        int64_t sortIndex = 0;
        bool haveSort = false;
        chrome::forEachMember(ev.args, [&](std::string_view key, std::string_view raw) {
            if (key == "name" || key == "labels") value = chrome::scalarValue(raw);
            if (key == "sort_index") {
                double v = 0;
                // Sort indexes beyond int32 (1e300, inf) are not an order anyone meant: ignored.
                const auto index = chrome::numberValue(raw, v)
                                       ? integralIfInRange<int32_t>(std::trunc(v))
                                       : std::nullopt;
                haveSort = index.has_value();
                sortIndex = index.value_or(0);
            }
        });
        while (!value.empty() && value.back() == ' ') value.pop_back();
        if (ev.name == "process_name") {
            process(ev.pid);
            processes_.find(ev.pid)->second.name = value;
        } else if (ev.name == "process_labels") {
            process(ev.pid);
            processes_.find(ev.pid)->second.labels = value;
        } else if (ev.name == "process_sort_index" && haveSort) {
            writer_.track(process(ev.pid)).sortIndex = sortIndex;
        } else if (ev.name == "thread_name") {
            writer_.track(thread(ev.pid, ev.tid)).name = value;
        } else if (ev.name == "thread_sort_index" && haveSort) {
            writer_.track(thread(ev.pid, ev.tid)).sortIndex = sortIndex;
        } else {
            ++ignored_["M:" + std::string(ev.name)];
        }
    }

    TraceSink& writer_;
    std::string path_;
    int64_t parentTrack_ = -1;
    std::string key_;  // reused lookup key
    std::map<std::string, Process, std::less<>> processes_;
    std::unordered_map<std::string, uint32_t> threads_, named_;
    uint32_t global_ = UINT32_MAX;
    std::unordered_map<uint32_t, std::vector<OpenSlice>> open_;
    std::map<std::string, std::vector<OpenSlice>> async_;
    std::unordered_map<std::string, uint32_t> flowKeys_;
    std::vector<FlowEvent> flowEvents_;
    uint64_t unmatchedFlowStarts_ = 0, unmatchedFlowEnds_ = 0, backwardFlows_ = 0;
    uint64_t events_ = 0, unmatchedEnd_ = 0, unterminated_ = 0, repairedValues_ = 0;
    uint64_t closedByParent_ = 0, extraLanes_ = 0;
    std::unordered_map<std::string, AsyncGroup> asyncGroups_;
    std::unordered_map<uint32_t, AsyncLane> asyncLanes_;  // by track
    std::map<std::string, uint64_t> phases_, ignored_;
    int64_t firstTs_ = 0, lastTs_ = INT64_MIN;
    bool haveTs_ = false;
};

// What the start of a JSON document says about its structure.
enum class Structure { TraceEvents, NotTrace, Unknown };

// Walks the members of the top-level object that `doc` starts with (after the '{' at `at`),
// skipping their values, until one is "traceEvents" holding an array (a trace), the object ends
// without it (not a trace), or the text runs out or is not JSON (unknown).
Structure topLevelStructure(std::string_view doc, size_t at) {
    size_t i = at + 1;
    auto ws = [&] {
        while (i < doc.size() &&
               (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n'))
            ++i;
    };
    // Past a string starting at i ('"'); false when it does not end within the text.
    auto skipString = [&] {
        for (++i; i < doc.size(); ++i) {
            if (doc[i] == '\\')
                ++i;
            else if (doc[i] == '"')
                return ++i, true;
        }
        return false;
    };
    auto skipValue = [&] {
        if (i >= doc.size()) return false;
        if (doc[i] == '"') return skipString();
        if (doc[i] != '{' && doc[i] != '[') {
            while (i < doc.size() && doc[i] != ',' && doc[i] != '}' && doc[i] != ']' &&
                   doc[i] != ' ' && doc[i] != '\n' && doc[i] != '\r' && doc[i] != '\t')
                ++i;
            return i < doc.size();
        }
        size_t depth = 0;
        while (i < doc.size()) {
            const char c = doc[i];
            if (c == '"') {
                if (!skipString()) return false;
                continue;
            }
            if (c == '{' || c == '[') ++depth;
            if ((c == '}' || c == ']') && --depth == 0) return ++i, true;
            ++i;
        }
        return false;
    };
    for (;;) {
        ws();
        if (i >= doc.size()) return Structure::Unknown;
        if (doc[i] == '}') return Structure::NotTrace;
        if (doc[i] != '"') return Structure::Unknown;
        const size_t keyStart = i + 1;
        if (!skipString()) return Structure::Unknown;
        const std::string_view key = doc.substr(keyStart, i - 1 - keyStart);
        ws();
        if (i >= doc.size() || doc[i] != ':') return Structure::Unknown;
        ++i;
        ws();
        if (i >= doc.size()) return Structure::Unknown;
        if (key == "traceEvents")
            return doc[i] == '[' ? Structure::TraceEvents : Structure::NotTrace;
        if (!skipValue()) return Structure::Unknown;
        ws();
        if (i >= doc.size()) return Structure::Unknown;
        if (doc[i] == ',') {
            ++i;
            continue;
        }
        return doc[i] == '}' ? Structure::NotTrace : Structure::Unknown;
    }
}

// How far detection reads to find "traceEvents" behind a large leading member (Kineto's
// deviceProperties and metadata run to tens of KB).
constexpr size_t kDetectLimit = size_t(1) << 20;

class ChromeJsonImporter : public Importer {
  public:
    std::string format() const override { return "chrome-json"; }
    std::string kind() const override { return "trace"; }
    std::string description() const override {
        return "Chrome Trace Event JSON (chrome://tracing, Perfetto, PyTorch profiler), "
               "array or object form";
    }
    int detect(const Sniff& sniff) const override {
        std::string_view head = sniff.head;
        if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
        const size_t first = head.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos) return 0;
        const bool hasPhase = head.find("\"ph\"") != std::string_view::npos;
        if (head[first] == '{') {
            // The object's members decide: a "traceEvents" array among them is a trace, however
            // far the members before it run (read up to kDetectLimit bytes).
            Structure structure = topLevelStructure(head, first);
            if (structure == Structure::Unknown && sniff.readAhead) {
                std::string_view more = sniff.readAhead(kDetectLimit);
                const size_t skip = size_t(head.data() + first - sniff.head.data());
                structure = topLevelStructure(more, skip);
            }
            if (structure == Structure::TraceEvents) return 100;
            if (structure == Structure::NotTrace) return 0;
            // Cut short before traceEvents: what the head shows is the best guess.
            const bool kineto = head.find("\"deviceProperties\"") != std::string_view::npos;
            return hasPhase || kineto ? 60 : 0;
        }
        if (head[first] == '[') {
            const size_t second = head.find_first_not_of(" \t\r\n", first + 1);
            if (second != std::string_view::npos && head[second] != '{' && head[second] != ']')
                return 0;
            return hasPhase ? 95 : 40;
        }
        return 0;
    }

    void run(ImportContext& ctx) const override {
        TraceWriter writer(ctx.workspace, ctx.profileId);
        QJsonObject meta = readTrace(writer, ctx.input, ctx.progress, -1, nullptr);
        const trace::TraceSummary summary = writer.finish(
            [&](double f) { ctx.progress.report(0.8 + 0.2 * f, "building timeline"); });
        meta.insert("trace", trace::summaryJson(summary));
        QJsonArray warnings = meta.value("warnings").toArray();
        if (summary.unboundFlows > 0)
            warnings.append(QString("%1 flows have an end with no slice to attach to (drawn at "
                                    "the event's time)")
                                .arg(qint64(summary.unboundFlows)));
        if (summary.overlapping > 0)
            warnings.append(QString("%1 slices overlap their parent (not properly nested)")
                                .arg(qint64(summary.overlapping)));
        meta.insert("warnings", warnings);
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }

    bool readsHosts() const override { return true; }
    void readHost(HostImportContext& ctx) const override {
        std::vector<std::pair<std::string, std::string>> topLevel;
        ctx.metadata = readTrace(ctx.sink, ctx.input, ctx.progress, ctx.hostTrack, &topLevel);
        for (const auto& [key, value] : topLevel) {
            // Kineto writes its times relative to baseTimeNanoseconds (since the epoch), and
            // the rank in distributedInfo.
            int64_t base = 0;
            if (key == "baseTimeNanoseconds" && parseInt(value, base) && base > 0) {
                ctx.clockBaseNs = base;
                ctx.clockSource = "kineto baseTimeNanoseconds";
            } else if (key == "distributedInfo") {
                const QJsonObject info =
                    QJsonDocument::fromJson(QByteArray::fromStdString(value)).object();
                if (info.contains("rank"))
                    ctx.hostName = "rank " + std::to_string(info.value("rank").toInteger());
            }
        }
    }

  private:
    // Reads the file's events into `writer` below parentTrack (progress up to 0.8); returns its
    // metadata without the writer's summary. topLevel: the top-level members, when wanted.
    static QJsonObject readTrace(TraceSink& writer, InputFile& input, Progress& progress,
                                 int64_t parentTrack,
                                 std::vector<std::pair<std::string, std::string>>* topLevel) {
        ChromeTraceBuilder builder(writer, input.path(), parentTrack);
        chrome::EventReader reader(input);
        chrome::RawEvent ev;
        uint64_t n = 0;
        while (reader.next(ev)) {
            builder.add(ev);
            if ((++n & 0x3fff) == 0) progress.report(0.8 * input.fraction(), "reading events");
        }
        if (n == 0) throw InputError(input.path() + ": no trace events (not a Chrome trace?)");
        if (topLevel) *topLevel = reader.topLevel();
        QJsonObject meta = builder.finish();

        if (!reader.displayTimeUnit().empty())
            meta.insert("display_time_unit", QString::fromStdString(reader.displayTimeUnit()));
        QJsonObject top;
        for (const auto& [key, value] : reader.topLevel())
            top.insert(QString::fromStdString(key), QString::fromStdString(value));
        if (!top.isEmpty()) meta.insert("trace_metadata", top);
        QJsonArray warnings;
        if (reader.missingClose())
            warnings.append(
                "the JSON ends without its closing bracket; events up to the end were "
                "imported");
        if (meta.value("unmatched_end_events").toInteger() > 0)
            warnings.append(QString("%1 end events without a matching begin were ignored")
                                .arg(meta.value("unmatched_end_events").toInteger()));
        if (meta.value("unterminated_slices").toInteger() > 0)
            warnings.append(QString("%1 slices never ended: drawn to the end of the trace and "
                                    "left out of op totals, means and percentiles")
                                .arg(meta.value("unterminated_slices").toInteger()));
        if (meta.value("flows_ending_before_start").toInteger() > 0)
            warnings.append(QString("%1 flows end before they start (the clocks of their two "
                                    "ends disagree): drawn pointing back in time")
                                .arg(meta.value("flows_ending_before_start").toInteger()));
        if (meta.value("unmatched_flow_starts").toInteger() > 0)
            warnings.append(QString("%1 flow starts have no step or end with their id")
                                .arg(meta.value("unmatched_flow_starts").toInteger()));
        if (meta.value("unmatched_flow_ends").toInteger() > 0)
            warnings.append(QString("%1 flow steps or ends have no start with their id")
                                .arg(meta.value("unmatched_flow_ends").toInteger()));
        if (meta.value("async_closed_by_parent").toInteger() > 0)
            warnings.append(QString("%1 async slices had no end event of their own; they end "
                                    "with the enclosing slice of their id")
                                .arg(meta.value("async_closed_by_parent").toInteger()));
        if (meta.value("repaired_values").toInteger() > 0)
            warnings.append(QString("%1 values in args are not JSON (bare inf or nan, raw control "
                                    "characters in strings): kept as text")
                                .arg(meta.value("repaired_values").toInteger()));
        const QJsonObject ignoredEvents = meta.value("ignored_events").toObject();
        for (auto it = ignoredEvents.begin(); it != ignoredEvents.end(); ++it)
            warnings.append(
                it.key().startsWith("M:")
                    ? QString("%1 metadata events \"%2\" were not used")
                          .arg(it.value().toInteger())
                          .arg(it.key().mid(2))
                    : QString("%1 events of phase \"%2\" were not used (a phase Stallscope does "
                              "not draw)")
                          .arg(it.value().toInteger())
                          .arg(it.key()));
        if (reader.trailingOffset() >= 0) {
            meta.insert("trailing_data_offset", qint64(reader.trailingOffset()));
            warnings.append(QString("byte %1: data after the end of the JSON document was "
                                    "ignored%2")
                                .arg(reader.trailingOffset())
                                .arg(input.compression() != Compression::None
                                         ? " (offset in the decompressed JSON)"
                                         : ""));
        }
        meta.insert("missing_close_bracket", reader.missingClose());
        meta.insert("warnings", warnings);
        return meta;
    }
};

}  // namespace

const Importer& chromeJsonImporter() {
    static const ChromeJsonImporter importer;
    return importer;
}

}  // namespace stallscope
