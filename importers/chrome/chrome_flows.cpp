// Chrome Trace Event JSON: flows (v1 s/t/f events, v2 bind_id on slices), collected as read and
// paired per id in time order once every event is known.
#include <algorithm>

#include "importers/chrome/chrome_builder.h"

namespace stallscope::chrome {

using trace::FlowBinding;
using trace::FlowEnd;

uint32_t ChromeTraceBuilder::flowKey(std::string_view prefix, std::string_view id,
                                     std::string_view cat) {
    key_.assign(prefix);
    key_.append(cat);
    key_.push_back('\x1f');
    key_.append(id);
    return flowKeys_.intern(key_);
}

void ChromeTraceBuilder::collectFlow(uint32_t key, uint32_t track, const RawEvent& ev, char phase,
                                     FlowBinding binding) {
    flowEvents_.push_back({ev.tsNs, key, track, writer_.intern(ev.name),
                           uint32_t(flowEvents_.size()), ev.tsPs, phase, binding});
}

void ChromeTraceBuilder::flowV1(const RawEvent& ev, char phase) {
    const uint32_t track = thread(ev.pid, ev.tid);
    const FlowBinding binding =
        phase == 'f' && ev.bp != "e" ? FlowBinding::NextSlice : FlowBinding::Enclosing;
    collectFlow(flowKey("1", ev.id, ev.cat), track, ev, phase, binding);
}

void ChromeTraceBuilder::flowV2(const RawEvent& ev, uint32_t track) {
    if (ev.bindId.empty() || (!ev.flowIn && !ev.flowOut)) return;
    const char phase = ev.flowIn && ev.flowOut ? 't' : ev.flowOut ? 's' : 'f';
    collectFlow(flowKey("2", ev.bindId, {}), track, ev, phase, FlowBinding::Enclosing);
}

void ChromeTraceBuilder::pairFlows() {
    // At one time an end comes first: it closes the chain open before (an id reused at
    // the moment its last flow ends); a start and its own end at the same time pair
    // through the lone-event pass below.
    auto rank = [](char phase) { return phase == 'f' ? 0 : phase == 's' ? 1 : 2; };
    std::sort(flowEvents_.begin(), flowEvents_.end(), [&](const FlowEvent& a, const FlowEvent& b) {
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

}  // namespace stallscope::chrome
