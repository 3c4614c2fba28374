#include "core/trace/flow_binder.h"

#include <algorithm>

#include "core/errors.h"

namespace stallscope::trace {

FlowTable::BoundSorter& FlowTable::boundSorterOfThisThread() {
    const std::thread::id self = std::this_thread::get_id();
    for (auto& [thread, sorter] : bound_)
        if (thread == self) return *sorter;
    // Two writer threads share the budget; a third (the importer's, for unbound ends) is rare.
    bound_.emplace_back(self, std::make_unique<BoundSorter>(std::max<size_t>(budget_ / 2, 1)));
    return *bound_.back().second;
}

namespace {
constexpr size_t kBoundBatch = 4096;
}  // namespace

void FlowTable::add(const FlowEnd& from, const FlowEnd& to, uint32_t name) {
    if (count_ >= (size_t(1) << 31))
        throw Failure("trace import: more than 2^31 flows are not supported");
    const uint32_t flow = uint32_t(count_++);
    for (const FlowEnd* end : {&from, &to}) {
        if (end->track >= (uint32_t(1) << 30))
            throw Failure("trace import: more than 2^30 tracks with flows are not supported");
        ends_.push({end->ts, end->args, end->track << 2 | uint32_t(end->binding), flow, name,
                    end == &from});
        if (end->track >= trackHasEnds_.size()) trackHasEnds_.resize(size_t(end->track) + 1);
        trackHasEnds_[end->track] = true;
    }
}

TrackFlowBinder::TrackFlowBinder(FlowTable& flows, uint32_t track, int64_t offset)
    : flows_(flows),
      track_(track),
      offset_(offset),
      enclosing_(flows.ends_, track << 2 | uint32_t(FlowBinding::Enclosing)),
      next_(flows.ends_, track << 2 | uint32_t(FlowBinding::NextSlice)) {
    flows.markBinding(track);
    hasEnclosing_ = enclosing_.peek() != nullptr;
    hasNext_ = next_.peek() != nullptr;
    flows.ends_.forEach(track << 2 | uint32_t(FlowBinding::Slice),
                        [&](const FlowEndRecord& r) { exact_.push_back(endRef(r)); });
    // Exact ends bind to the first slice, in order, that carries their args id and starts at
    // their time. When the ids are dense (Chakra: one per node), they are grouped by id with a
    // counting sort instead of kept by time: a slice looks up its own id's ends.
    exactMin_ = UINT64_MAX;
    for (const EndRef& e : exact_) {
        exactMin_ = std::min(exactMin_, e.args);
        exactMax_ = std::max(exactMax_, e.args);
    }
    exactGrouped_ = !exact_.empty() && exactMax_ - exactMin_ < 4 * uint64_t(exact_.size());
    if (exactGrouped_) {
        exactBegin_.assign(size_t(exactMax_ - exactMin_) + 2, 0);
        for (const EndRef& e : exact_) ++exactBegin_[size_t(e.args - exactMin_) + 1];
        for (size_t g = 1; g < exactBegin_.size(); ++g) exactBegin_[g] += exactBegin_[g - 1];
        exactByArgs_.resize(exact_.size());
        std::vector<uint32_t> fill(exactBegin_.begin(), exactBegin_.end() - 1);
        for (size_t k = 0; k < exact_.size(); ++k)
            exactByArgs_[fill[size_t(exact_[k].args - exactMin_)]++] = uint32_t(k);
    }
    exactBound_.assign(exact_.size(), false);
}

TrackFlowBinder::EndRef TrackFlowBinder::endRef(const FlowEndRecord& r) const {
    return {offset_ ? shiftedTime(r.ts, offset_) : r.ts, r.args, r.flow, r.name, r.source};
}

void TrackFlowBinder::bind(const EndRef& e, int64_t start, int64_t end, int32_t depth) {
    // A source attaches at its slice's end, a destination at its start.
    bound_.push_back({uint64_t(e.flow) << 1 | (e.source ? 0 : 1), e.source ? end : start, track_,
                      e.name, depth});
    if (bound_.size() == kBoundBatch) {
        flows_.addBound(bound_);
        bound_.clear();
    }
}

// Enclosing ends before `limit` (or at it, inclusive) see the slices open at their time.
void TrackFlowBinder::bindEnclosingBefore(int64_t limit, bool inclusive) {
    while (const FlowEndRecord* r = enclosing_.peek()) {
        const EndRef e = endRef(*r);
        if (!(e.ts < limit || (inclusive && e.ts == limit))) break;
        enclosing_.pop();
        const PreciseTime at{e.ts, 0};
        while (!open_.empty() &&
               (open_.back().end < at || (open_.back().end == at && open_.back().start != e.ts)))
            open_.pop_back();
        if (open_.empty()) {
            bind(e, e.ts, e.ts, -1);
        } else {
            const Open& o = open_.back();
            bind(e, o.start, o.end.ns + (o.end.ps > 0 ? 1 : 0), int32_t(open_.size() - 1));
        }
    }
}

void TrackFlowBinder::slice(const SliceItem& item) {
    if (hasEnclosing_) open_.push_back({item.start, item.preciseEnd()});
    const int32_t depth = int32_t(item.depth);
    while (const FlowEndRecord* r = next_.peek()) {
        const EndRef e = endRef(*r);
        if (e.ts > item.start) break;
        next_.pop();
        bind(e, item.start, item.end(), depth);
    }
    if (exact_.empty()) return;
    if (exactGrouped_) {
        if (item.args < exactMin_ || item.args > exactMax_) return;
        const size_t g = size_t(item.args - exactMin_);
        for (size_t k = exactBegin_[g]; k < exactBegin_[g + 1]; ++k) {
            const uint32_t e = exactByArgs_[k];
            if (exactBound_[e] || exact_[e].ts != item.start) continue;
            exactBound_[e] = true;
            bind(exact_[e], item.start, item.end(), depth);
        }
    } else {
        while (nextExact_ < exact_.size() && exact_[nextExact_].ts < item.start) ++nextExact_;
        for (size_t k = nextExact_; k < exact_.size() && exact_[k].ts == item.start; ++k) {
            if (exactBound_[k] || exact_[k].args != item.args) continue;
            exactBound_[k] = true;
            bind(exact_[k], item.start, item.end(), depth);
        }
    }
}

void TrackFlowBinder::finish() {
    bindEnclosingBefore(INT64_MAX, true);
    while (const FlowEndRecord* r = next_.peek()) {
        const EndRef e = endRef(*r);
        next_.pop();
        bind(e, e.ts, e.ts, -1);
    }
    for (size_t k = 0; k < exact_.size(); ++k)
        if (!exactBound_[k]) bind(exact_[k], exact_[k].ts, exact_[k].ts, -1);
    flows_.addBound(bound_);
    bound_.clear();
}

}  // namespace stallscope::trace
