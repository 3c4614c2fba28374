#include "views/trace/flow_index.h"

#include <algorithm>
#include <cstdlib>

#include "core/nearly_sorted.h"

namespace stallscope {

namespace {

int64_t earlierEnd(const trace::FlowRow& f) {
    return std::min(f.fromTs, f.toTs);
}

bool byEarlierEnd(const trace::FlowRow& a, const trace::FlowRow& b) {
    const int64_t x = earlierEnd(a), y = earlierEnd(b);
    return x != y ? x < y : a.id < b.id;
}

constexpr size_t kCachedChunks = 8;

}  // namespace

FlowIndex::FlowIndex(const trace::TraceStore& store, const std::atomic<bool>& stop) {
    std::vector<trace::FlowRow> rows;
    int64_t nextId = 0;
    struct Stopped {};
    const auto add = [&](std::string_view packed, const std::vector<trace::FlowRow>& flows) {
        Chunk c;
        c.firstId = nextId;
        c.count = flows.size();
        c.minEarlier = INT64_MAX;
        c.maxEarlier = INT64_MIN;
        for (const trace::FlowRow& f : flows) {
            c.minEarlier = std::min(c.minEarlier, earlierEnd(f));
            c.maxEarlier = std::max(c.maxEarlier, earlierEnd(f));
            longest_ = std::max(longest_, std::abs(f.toTs - f.fromTs));
        }
        c.packed.assign(packed);
        nextId += int64_t(flows.size());
        size_ += flows.size();
        if (c.count > 0) chunks_.push_back(std::move(c));
    };
    try {
        const bool packed = store.forEachFlowChunk([&](std::string_view chunk) {
            if (stop.load()) throw Stopped{};
            rows.clear();
            trace::TraceStore::decodeFlowChunk(chunk, nextId, rows);
            add(chunk, rows);
        });
        if (!packed) {
            // Profiles from before flows were packed: their table, decoded and sorted.
            store.forEachFlow([&](const trace::FlowRow& f) {
                sorted_.push_back(f);
                longest_ = std::max(longest_, std::abs(f.toTs - f.fromTs));
            });
            size_ = sorted_.size();
            sortNearlySorted(sorted_, byEarlierEnd);
            return;
        }
    } catch (const Stopped&) {
        chunks_.clear();
        size_ = 0;
        return;
    }
    // Chunks that follow time cover the trace about once between them; twice or more, and a
    // window would decode most of them: hold the flows decoded and sorted instead.
    double covered = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const Chunk& c : chunks_) {
        covered += double(c.maxEarlier - c.minEarlier);
        first = std::min(first, c.minEarlier);
        last = std::max(last, c.maxEarlier);
    }
    if (chunks_.size() > 2 && covered > 2.0 * (double(last) - double(first) + 1.0)) {
        sorted_.reserve(size_);
        for (const Chunk& c : chunks_)
            trace::TraceStore::decodeFlowChunk(c.packed, c.firstId, sorted_);
        chunks_.clear();
        sortNearlySorted(sorted_, byEarlierEnd);
    }
}

std::shared_ptr<const std::vector<trace::FlowRow>> FlowIndex::decoded(size_t chunk) const {
    {
        std::lock_guard lock(cacheMutex_);
        for (auto it = cache_.begin(); it != cache_.end(); ++it)
            if (it->first == chunk) {
                cache_.splice(cache_.begin(), cache_, it);
                return cache_.front().second;
            }
    }
    auto rows = std::make_shared<std::vector<trace::FlowRow>>();
    trace::TraceStore::decodeFlowChunk(chunks_[chunk].packed, chunks_[chunk].firstId, *rows);
    std::lock_guard lock(cacheMutex_);
    cache_.emplace_front(chunk, rows);
    if (cache_.size() > kCachedChunks) cache_.pop_back();
    return rows;
}

std::vector<trace::FlowRow> FlowIndex::between(int64_t from, int64_t to) const {
    std::vector<trace::FlowRow> out;
    if (!sorted_.empty()) {
        auto it =
            std::lower_bound(sorted_.begin(), sorted_.end(), from,
                             [](const trace::FlowRow& f, int64_t t) { return earlierEnd(f) < t; });
        for (; it != sorted_.end() && earlierEnd(*it) <= to; ++it) out.push_back(*it);
        return out;
    }
    for (size_t c = 0; c < chunks_.size(); ++c) {
        if (chunks_[c].maxEarlier < from || chunks_[c].minEarlier > to) continue;
        for (const trace::FlowRow& f : *decoded(c))
            if (earlierEnd(f) >= from && earlierEnd(f) <= to) out.push_back(f);
    }
    std::sort(out.begin(), out.end(), byEarlierEnd);
    return out;
}

size_t FlowIndex::atLeastBetween(int64_t from, int64_t to) const {
    if (!sorted_.empty()) {
        const auto lower = [](const trace::FlowRow& f, int64_t t) { return earlierEnd(f) < t; };
        const auto a = std::lower_bound(sorted_.begin(), sorted_.end(), from, lower);
        const auto b =
            std::upper_bound(a, sorted_.end(), to,
                             [](int64_t t, const trace::FlowRow& f) { return t < earlierEnd(f); });
        return size_t(b - a);
    }
    size_t n = 0;
    for (const Chunk& c : chunks_)
        if (c.minEarlier >= from && c.maxEarlier <= to) n += c.count;
    return n;
}

}  // namespace stallscope
