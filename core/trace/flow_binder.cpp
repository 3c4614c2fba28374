#include "core/trace/flow_binder.h"

#include <algorithm>

#include "core/errors.h"

namespace stallscope::trace {

void FlowTable::add(const FlowEnd& from, const FlowEnd& to, uint32_t name) {
    if ((count_ >> kBlockBits) == blocks_.size())
        blocks_.push_back(std::make_unique_for_overwrite<FlowRecord[]>(size_t(1) << kBlockBits));
    FlowRecord& f = (*this)[count_++];
    f.fromTs = from.ts;
    f.toTs = to.ts;
    f.fromArgs = from.args;
    f.toArgs = to.args;
    f.fromTrack = from.track;
    f.toTrack = to.track;
    f.name = name;
    f.fromDepth = f.toDepth = -1;
    f.fromBinding = from.binding;
    f.toBinding = to.binding;
}

void FlowTable::indexEnds(size_t tracks) {
    if (count_ >= (size_t(1) << 31))
        throw Failure("trace import: more than 2^31 flows are not supported");
    endsBegin_.assign(tracks + 1, 0);
    for (size_t i = 0; i < count_; ++i) {
        const FlowRecord& f = (*this)[i];
        ++endsBegin_[f.fromTrack + 1];
        ++endsBegin_[f.toTrack + 1];
    }
    for (size_t t = 0; t < tracks; ++t) endsBegin_[t + 1] += endsBegin_[t];
    ends_.resize(endsBegin_.back());
    std::vector<size_t> fill(endsBegin_.begin(), endsBegin_.end() - 1);
    for (size_t i = 0; i < count_; ++i) {
        const FlowRecord& f = (*this)[i];
        ends_[fill[f.fromTrack]++] = uint32_t(i) << 1 | 1;  // low bit: the source end
        ends_[fill[f.toTrack]++] = uint32_t(i) << 1;
    }
}

uint64_t FlowTable::unbound() const {
    uint64_t n = 0;
    for (size_t i = 0; i < count_; ++i) {
        const FlowRecord& f = (*this)[i];
        if (f.fromDepth < 0 || f.toDepth < 0) ++n;
    }
    return n;
}

TrackFlowBinder::TrackFlowBinder(FlowTable& flows, uint32_t track) : flows_(flows) {
    // Without flows (tracks written early) the ends are not indexed.
    const std::vector<size_t>& begin = flows.endsBegin_;
    const size_t from = track + 1 < begin.size() ? begin[track] : 0;
    const size_t to = track + 1 < begin.size() ? begin[track + 1] : 0;
    auto listFor = [&](FlowBinding b) -> std::vector<EndRef>& {
        return b == FlowBinding::Enclosing   ? enclosing_
               : b == FlowBinding::NextSlice ? next_
                                             : exact_;
    };
    for (size_t k = from; k < to; ++k) {
        const uint32_t i = flows.ends_[k] >> 1;
        const FlowRecord& f = flows[i];
        if (flows.ends_[k] & 1)
            listFor(f.fromBinding).push_back({f.fromTs, f.fromArgs, i, true});
        else
            listFor(f.toBinding).push_back({f.toTs, f.toArgs, i, false});
    }
    // By time, ties in the order the ends were listed (flow, then source before destination):
    // the order a stable sort by time gives, but the keys are unique, so a plain sort does.
    // Ends often come in time order already (Chakra's dependencies by node).
    auto byTs = [](const EndRef& a, const EndRef& b) {
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.flow != b.flow) return a.flow < b.flow;
        return a.source && !b.source;
    };
    // Exact ends bind to the first slice, in order, that carries their args id and starts at
    // their time. When the ids are dense (Chakra: one per node), they are grouped by id with a
    // counting sort instead of sorted by time: a slice looks up its own id's ends.
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
    for (std::vector<EndRef>* ends : {&enclosing_, &next_, &exact_})
        if ((ends != &exact_ || !exactGrouped_) &&
            !std::is_sorted(ends->begin(), ends->end(), byTs))
            std::sort(ends->begin(), ends->end(), byTs);
    exactBound_.assign(exact_.size(), false);
}

void TrackFlowBinder::bind(const EndRef& e, int64_t start, int64_t end, int32_t depth) {
    FlowRecord& f = flows_[e.flow];
    if (e.source) {
        f.fromTs = end;
        f.fromDepth = depth;
    } else {
        f.toTs = start;
        f.toDepth = depth;
    }
}

// Enclosing ends before `limit` (or at it, inclusive) see the slices open at their time.
void TrackFlowBinder::bindEnclosingBefore(int64_t limit, bool inclusive) {
    while (nextEnclosing_ < enclosing_.size() &&
           (enclosing_[nextEnclosing_].ts < limit ||
            (inclusive && enclosing_[nextEnclosing_].ts == limit))) {
        const EndRef& e = enclosing_[nextEnclosing_++];
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
    if (!enclosing_.empty()) open_.push_back({item.start, item.preciseEnd()});
    const int32_t depth = int32_t(item.depth);
    while (nextNext_ < next_.size() && next_[nextNext_].ts <= item.start)
        bind(next_[nextNext_++], item.start, item.end(), depth);
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

}  // namespace stallscope::trace
