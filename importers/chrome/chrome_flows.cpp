// Chrome Trace Event JSON: flows (v1 s/t/f events, v2 bind_id on slices), collected as read and
// paired per id in time order once every event is known.
#include <algorithm>

#include "core/errors.h"

#include "importers/chrome/chrome_builder.h"

namespace stallscope::chrome {

using trace::FlowBinding;

namespace {

// The value of a decimal integer written the one way it prints ("0", "-12", not "012", "-0",
// "+1"); false for anything else, which is then keyed by its text.
bool canonicalDecimal(std::string_view text, uint64_t& value) {
    const bool negative = !text.empty() && text[0] == '-';
    const std::string_view digits = negative ? text.substr(1) : text;
    if (digits.empty() || digits.size() > 19 || (digits[0] == '0' && text.size() > 1)) return false;
    uint64_t v = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + uint64_t(c - '0');
    }
    if (v > uint64_t(INT64_MAX)) return false;
    value = negative ? uint64_t(-int64_t(v)) : v;
    return true;
}

// The value of "0x" and lowercase hex digits without leading zeros (Chrome's pointer ids).
bool canonicalHex(std::string_view text, uint64_t& value) {
    if (text.size() < 3 || text.size() > 18 || text[0] != '0' || text[1] != 'x') return false;
    if (text[2] == '0' && text.size() > 3) return false;
    uint64_t v = 0;
    for (const char c : text.substr(2)) {
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) return false;
        v = v << 4 | uint64_t(digit);
    }
    value = v;
    return true;
}

int phaseRank(char phase) {
    return phase == 'f' ? 0 : phase == 's' ? 1 : 2;
}

}  // namespace

// At one time an end comes first: it closes the chain open before (an id reused at the moment
// its last flow ends); a start and its own end at the same time pair through the lone-event
// pass of pairKey.
bool ChromeTraceBuilder::FlowEventOrder::operator()(const FlowEvent& a, const FlowEvent& b) const {
    if (a.space != b.space) return a.space < b.space;
    if (a.id != b.id) return a.id < b.id;
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.ps != b.ps) return a.ps < b.ps;
    if (a.phase != b.phase) return phaseRank(a.phase) < phaseRank(b.phase);
    return a.order < b.order;
}

void ChromeTraceBuilder::flowKey(FlowEvent& into, std::string_view prefix, std::string_view id,
                                 std::string_view cat) {
    if (lastFlowSpace_ == UINT32_MAX || prefix != lastFlowPrefix_ || cat != lastFlowCategory_) {
        key_.assign(prefix);
        key_.append(cat);
        lastFlowSpace_ = flowSpaces_.intern(key_);
        lastFlowPrefix_.assign(prefix);
        lastFlowCategory_.assign(cat);
    }
    const uint32_t space = lastFlowSpace_;
    if (space >= (uint32_t(1) << 30))
        throw InputError(path_ + ": more than 2^30 flow categories are not supported");
    FlowIdKind kind = kDecimalId;
    if (!canonicalDecimal(id, into.id)) {
        kind = kHexId;
        if (!canonicalHex(id, into.id)) {
            kind = kTextId;
            into.id = flowIds_.intern(id);
        }
    }
    into.space = space << 2 | kind;
}

void ChromeTraceBuilder::collectFlow(std::string_view prefix, std::string_view id,
                                     std::string_view cat, uint32_t track, const RawEvent& ev,
                                     char phase, FlowBinding binding) {
    if (flowEvents_.size() >= UINT32_MAX)
        throw InputError(path_ + ": more than 2^32 flow events are not supported");
    FlowEvent e;
    flowKey(e, prefix, id, cat);
    e.ts = ev.tsNs;
    e.track = track;
    e.name = writer_.intern(ev.name);
    e.order = uint32_t(flowEvents_.size());
    e.ps = ev.tsPs;
    e.phase = phase;
    e.binding = binding;
    flowEvents_.push(e);
}

void ChromeTraceBuilder::flowV1(const RawEvent& ev, char phase) {
    const uint32_t track = thread(ev.pid, ev.tid);
    const FlowBinding binding =
        phase == 'f' && ev.bp != "e" ? FlowBinding::NextSlice : FlowBinding::Enclosing;
    collectFlow("1", ev.id, ev.cat, track, ev, phase, binding);
}

void ChromeTraceBuilder::flowV2(const RawEvent& ev, uint32_t track) {
    if (ev.bindId.empty() || (!ev.flowIn && !ev.flowOut)) return;
    const char phase = ev.flowIn && ev.flowOut ? 't' : ev.flowOut ? 's' : 'f';
    collectFlow("2", ev.bindId, {}, track, ev, phase, FlowBinding::Enclosing);
}

void ChromeTraceBuilder::pairFlows() {
    flowEvents_.seal();
    // 48 bytes a record; usually already in order (Kineto's ids grow through the file).
    trace::ExternalSorter<PairedFlow, PairedFlowOrder> paired(kFlowSortBudget);
    std::vector<FlowEvent> events;  // of one key, in time order
    uint64_t seq = 0;
    FlowEvent e;
    while (flowEvents_.next(e)) {
        if (!events.empty() && !events.back().sameKey(e)) {
            pairKey(events, seq, paired);
            events.clear();
        }
        events.push_back(e);
    }
    if (!events.empty()) pairKey(events, seq, paired);
    paired.seal();
    PairedFlow f;
    while (paired.next(f))
        writer_.addFlow({f.fromTrack, f.fromTs, f.fromBinding}, {f.toTrack, f.toTs, f.toBinding},
                        f.name);
}

void ChromeTraceBuilder::pairKey(const std::vector<FlowEvent>& events, uint64_t& seq,
                                 trace::ExternalSorter<PairedFlow, PairedFlowOrder>& paired) {
    uint32_t keyFirst = UINT32_MAX;
    for (const FlowEvent& e : events) keyFirst = std::min(keyFirst, e.order);
    auto add = [&](const FlowEvent& from, const FlowEvent& to, uint32_t name) {
        paired.push({seq++, keyFirst, name, from.ts, to.ts, from.track, to.track, from.binding,
                     to.binding});
    };
    bool open = false, arrowFromOpen = false;
    size_t openAt = 0;
    size_t from = 0;  // the event the next arrow leaves from
    uint32_t name = 0;
    std::vector<size_t> loneStarts, loneEnds;  // in time order
    size_t starts = 0;
    for (size_t i = 0; i < events.size(); ++i) {
        const FlowEvent& e = events[i];
        if (e.phase == 's') {
            ++starts;
            if (open && !arrowFromOpen) loneStarts.push_back(openAt);
            open = true;
            arrowFromOpen = false;
            openAt = i;
            from = i;
            name = e.name;
            continue;
        }
        if (!open) {
            loneEnds.push_back(i);
            continue;
        }
        add(events[from], e, name);
        arrowFromOpen = true;
        from = i;
        if (e.phase == 'f') open = false;
    }
    if (open && !arrowFromOpen) loneStarts.push_back(openAt);
    // An end stamped before its start (device and host clocks apart) pairs with the lone start
    // of its id: the arrow points back in time, and is counted. Only for an id used once
    // (Kineto's launch -> kernel flows): an id reused for many flows (catapult's flow.json: 275
    // starts of reused ids with no end) leaves lone starts and ends that are no pair of each
    // other.
    size_t nextStart = 0, pairs = 0;
    for (const size_t end : starts > 1 ? std::vector<size_t>{} : loneEnds) {
        const FlowEvent& e = events[end];
        while (nextStart < loneStarts.size()) {
            const FlowEvent& s = events[loneStarts[nextStart]];
            if (s.ts > e.ts || (s.ts == e.ts && s.ps >= e.ps)) break;
            ++nextStart;  // a start before this end: not its pair
        }
        if (nextStart == loneStarts.size()) break;
        const FlowEvent& s = events[loneStarts[nextStart++]];
        add(s, e, s.name);
        if (e.ts < s.ts || (e.ts == s.ts && e.ps < s.ps)) ++backwardFlows_;
        ++pairs;
    }
    unmatchedFlowStarts_ += loneStarts.size() - pairs;
    unmatchedFlowEnds_ += loneEnds.size() - pairs;
}

}  // namespace stallscope::chrome
