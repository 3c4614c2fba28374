#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace/string_interner.h"
#include "core/trace/trace_sink.h"

namespace stallscope::trace {

class TraceWriter;

// One host of a multi-host run as its importer wrote it, held in memory so that hosts can be
// parsed on worker threads while one thread owns the TraceWriter (and the workspace). Ids are
// the recording's own: strings from 0 (0 is ""), tracks from 0, args from 1. replayInto() adds
// everything to the writer in the order it was recorded, with the ids moved to the writer's,
// so the writer ends as if the importer had written to it directly.
class HostRecording final : public TraceSink {
  public:
    HostRecording();
    HostRecording(const HostRecording&) = delete;
    HostRecording& operator=(const HostRecording&) = delete;

    uint32_t intern(std::string_view text) override { return strings_.intern(text); }
    std::string_view text(uint32_t id) const override { return strings_.text(id); }
    uint32_t addTrack(TrackSpec spec) override;
    TrackSpec& track(uint32_t id) override { return tracks_[id]; }
    size_t trackCount() const override { return tracks_.size(); }
    uint64_t addArgs(std::string_view json) override;
    uint64_t addArgsOver(uint64_t base, std::string_view own) override;
    void addSlice(uint32_t track, int64_t start, int64_t dur, uint32_t name, uint64_t args = 0,
                  uint16_t startPs = 0, uint16_t durPs = 0, bool ended = true,
                  uint64_t order = kOrderOfAdding) override;
    uint64_t reserveSliceOrder() override { return nextOrder_++; }
    void addInstant(uint32_t track, int64_t ts, uint32_t name, uint64_t args = 0) override;
    void addCounter(uint32_t track, int64_t ts, double value) override;
    void addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                      int64_t selfNs) override;
    void addFlow(FlowEnd from, FlowEnd to, uint32_t name) override;
    // The writer writes the tracks when the whole run is read: nothing to do early.
    void finishTracksBefore(uint32_t) override {}

    // Called with every slice as it is added (recording ids), e.g. to find step markers.
    using SliceObserver = std::function<void(uint32_t track, int64_t start, uint32_t name)>;
    void setSliceObserver(SliceObserver observer) { observer_ = std::move(observer); }

    // Adds the recording to `writer`; returns the writer's id of the recording's track 0 (its
    // tracks keep their order from there). `checkpoint` is called now and then (it may throw,
    // e.g. Cancelled).
    uint32_t replayInto(TraceWriter& writer, const std::function<void()>& checkpoint) const;

    // Bytes held (records, args, strings' index), for bounding the hosts in flight.
    uint64_t bytesHeld() const;

  private:
    // Appended records in fixed blocks: no copy on growth, no doubling slack.
    template <class T>
    class Blocks {
      public:
        void push(const T& item) {
            if (blocks_.empty() || blocks_.back().size() == kBlock) {
                blocks_.emplace_back();
                blocks_.back().reserve(kBlock);
            }
            blocks_.back().push_back(item);
            ++size_;
        }
        template <class F>
        void forEach(F&& f) const {
            for (const std::vector<T>& block : blocks_)
                for (const T& item : block) f(item);
        }
        size_t size() const { return size_; }
        uint64_t bytes() const { return uint64_t(blocks_.size()) * kBlock * sizeof(T); }

      private:
        static constexpr size_t kBlock = size_t(1) << 14;
        std::vector<std::vector<T>> blocks_;
        size_t size_ = 0;
    };

    enum class EventKind : uint8_t { Slice, UnendedSlice, Instant };
    struct Event {
        int64_t start, dur;
        uint64_t args;
        uint64_t order;  // the slice's place in the host's file
        uint32_t name, track;
        uint16_t startPs, durPs;
        EventKind kind;
    };
    struct Sample {
        int64_t ts;
        double value;
        uint32_t track;
    };
    struct Aggregate {
        uint64_t occurrences;
        int64_t totalNs, selfNs;
        uint32_t name;
    };
    struct Flow {
        FlowEnd from, to;
        uint32_t name;
    };
    // Argument objects, entry after entry: the base's id as a varint (0: a plain object), the
    // length as a varint, the JSON bytes. Blocks of kArgsBlock bytes (or one entry's size).
    void appendArgs(uint64_t base, std::string_view json);

    StringInterner strings_;
    std::vector<TrackSpec> tracks_;
    std::vector<std::string> args_;
    uint64_t argsCount_ = 0;
    uint64_t nextOrder_ = 0;  // places in the host's file, made the writer's at replay
    Blocks<Event> events_;    // slices and instants, in the order added
    Blocks<Sample> samples_;
    std::vector<Aggregate> aggregates_;
    Blocks<Flow> flows_;
    SliceObserver observer_;
};

}  // namespace stallscope::trace
