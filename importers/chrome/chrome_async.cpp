// Chrome Trace Event JSON: async slices (b/e/n, and the legacy S/T/p/F), held as read and paired
// in time order at the end of the file, each root on a free lane of its name.
#include <algorithm>

#include "importers/chrome/chrome_builder.h"

namespace stallscope::chrome {

using trace::TrackKind;
using trace::TrackSpec;

ChromeTraceBuilder::AsyncGroup& ChromeTraceBuilder::asyncGroup(const RawEvent& ev) {
    key_.assign(ev.pid);
    key_.push_back('\x1f');
    key_.append(ev.name);
    auto [it, inserted] = asyncGroups_.try_emplace(key_);
    if (inserted) it->second.ordinal = asyncGroups_.size() - 1;
    return it->second;
}

uint32_t ChromeTraceBuilder::laneTrack(AsyncGroup& group, size_t lane, const RawEvent& ev) {
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

std::string ChromeTraceBuilder::asyncKey(const RawEvent& ev, bool legacy) {
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

void ChromeTraceBuilder::holdAsync(const RawEvent& ev, char phase) {
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

void ChromeTraceBuilder::replayAsync() {
    std::stable_sort(heldAsync_.begin(), heldAsync_.end(),
                     [](const HeldAsync& a, const HeldAsync& b) {
                         return a.tsNs != b.tsNs ? a.tsNs < b.tsNs : a.tsPs < b.tsPs;
                     });
    for (const HeldAsync& held : heldAsync_) {
        RawEvent ev;
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

void ChromeTraceBuilder::asyncBegin(const RawEvent& ev, bool legacy, uint64_t args) {
    auto& stack = async_[asyncKey(ev, legacy)];
    // Nested async slices share their root's track; a root takes a free lane of its name.
    uint32_t track;
    if (stack.empty()) {
        AsyncGroup& group = asyncGroup(ev);
        track = laneTrack(group, group.free.open(ev.tsNs), ev);
    } else {
        track = stack.front().track;
    }
    stack.push_back(
        {ev.tsNs, writer_.intern(ev.name), args, track, ev.tsPs, writer_.reserveSliceOrder()});
}

void ChromeTraceBuilder::asyncEnd(const RawEvent& ev, bool legacy) {
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

void ChromeTraceBuilder::asyncInstant(const RawEvent& ev, bool legacy, uint64_t args) {
    auto it = async_.find(asyncKey(ev, legacy));
    const uint32_t track = it != async_.end() && !it->second.empty()
                               ? it->second.front().track
                               : laneTrack(asyncGroup(ev), 0, ev);
    writer_.addInstant(track, ev.tsNs, writer_.intern(ev.name), args);
}

}  // namespace stallscope::chrome
