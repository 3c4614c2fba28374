#pragma once

// A trace's flows for the timeline without holding them decoded: the stored chunks (65,536
// flows each, in flow id order) stay packed in memory (about 8 bytes a flow against 56 decoded:
// 33 M flows at 10^8 slices are 260 MB, not 1.85 GB), each with the range of its flows' earlier
// end. A window's flows decode the chunks that can hold them, the last few kept decoded. Flows
// whose ids do not follow time (the chunks' ranges overlapping far more than the trace is long)
// are held decoded and sorted instead, as every chunk would cover every window.

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/trace/trace_store.h"

namespace stallscope {

class FlowIndex {
  public:
    FlowIndex() = default;  // no flows (yet)
    // Reads every flow chunk of `store` once; stops early (leaving an empty index) once `stop`
    // is set.
    FlowIndex(const trace::TraceStore& store, const std::atomic<bool>& stop);

    size_t size() const { return size_; }
    int64_t longest() const { return longest_; }  // the most ns between a flow's two ends
    bool empty() const { return size_ == 0; }
    // Whether the flows stay packed (their chunks follow time), not held decoded.
    bool packed() const { return !chunks_.empty(); }
    // The flows whose earlier end lies in [from, to] (store time), sorted by it, then by id.
    std::vector<trace::FlowRow> between(int64_t from, int64_t to) const;
    // How many flows have their earlier end in [from, to] at least, counted without decoding
    // (the chunks lying wholly inside).
    size_t atLeastBetween(int64_t from, int64_t to) const;

  private:
    struct Chunk {
        int64_t firstId = 0;
        int64_t minEarlier = 0, maxEarlier = 0;
        size_t count = 0;
        std::string packed;
    };
    std::shared_ptr<const std::vector<trace::FlowRow>> decoded(size_t chunk) const;

    std::vector<Chunk> chunks_;
    std::vector<trace::FlowRow> sorted_;  // only when the chunks do not follow time
    size_t size_ = 0;
    int64_t longest_ = 0;
    mutable std::mutex cacheMutex_;
    mutable std::list<std::pair<size_t, std::shared_ptr<const std::vector<trace::FlowRow>>>>
        cache_;  // most recent first
};

}  // namespace stallscope
