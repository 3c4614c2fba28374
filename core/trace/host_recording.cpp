#include "core/trace/host_recording.h"

#include <algorithm>

#include "core/trace/trace_writer.h"

namespace stallscope::trace {

namespace {

constexpr size_t kArgsBlock = size_t(1) << 20;
constexpr size_t kCheckpointEvery = size_t(1) << 16;

void putVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out.push_back(char(uint8_t(v) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}

uint64_t getVarint(const char*& p) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        const uint8_t byte = uint8_t(*p++);
        v |= uint64_t(byte & 0x7f) << shift;
        if (byte < 0x80) return v;
    }
}

}  // namespace

HostRecording::HostRecording() {
    intern("");  // id 0: no name, as in the writer
}

uint32_t HostRecording::addTrack(TrackSpec spec) {
    tracks_.push_back(std::move(spec));
    return uint32_t(tracks_.size() - 1);
}

void HostRecording::appendArgs(uint64_t base, std::string_view json) {
    const size_t need = json.size() + 20;
    if (args_.empty() || args_.back().capacity() - args_.back().size() < need) {
        args_.emplace_back();
        args_.back().reserve(std::max(kArgsBlock, need));
    }
    std::string& block = args_.back();
    putVarint(block, base);
    putVarint(block, json.size());
    block.append(json);
}

uint64_t HostRecording::addArgs(std::string_view json) {
    appendArgs(0, json);
    return ++argsCount_;
}

uint64_t HostRecording::addArgsOver(uint64_t base, std::string_view own) {
    appendArgs(base, own);
    return ++argsCount_;
}

void HostRecording::addSlice(uint32_t track, int64_t start, int64_t dur, uint32_t name,
                             uint64_t args, uint16_t startPs, uint16_t durPs, bool ended,
                             uint64_t order) {
    if (order == kOrderOfAdding) order = nextOrder_++;
    events_.push({start, dur, args, order, name, track, startPs, durPs,
                  ended ? EventKind::Slice : EventKind::UnendedSlice});
    if (observer_) observer_(track, start, name);
}

void HostRecording::addInstant(uint32_t track, int64_t ts, uint32_t name, uint64_t args) {
    events_.push({ts, 0, args, nextOrder_++, name, track, 0, 0, EventKind::Instant});
}

void HostRecording::addCounter(uint32_t track, int64_t ts, double value) {
    samples_.push({ts, value, track});
}

void HostRecording::addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                                 int64_t selfNs) {
    aggregates_.push_back({occurrences, totalNs, selfNs, name});
}

void HostRecording::addFlow(FlowEnd from, FlowEnd to, uint32_t name) {
    flows_.push({from, to, name});
}

uint64_t HostRecording::bytesHeld() const {
    uint64_t bytes = events_.bytes() + samples_.bytes() + flows_.bytes();
    for (const std::string& block : args_) bytes += block.capacity();
    return bytes + strings_.size() * 32;
}

uint32_t HostRecording::replayInto(TraceWriter& writer,
                                   const std::function<void()>& checkpoint) const {
    checkpoint();
    // Strings in the order they were first interned here: new ones get the writer's next ids
    // in the order a direct import would have given them.
    std::vector<uint32_t> nameOf(strings_.size());
    for (size_t i = 0; i < strings_.size(); ++i) nameOf[i] = writer.intern(strings_.text(i));

    const uint32_t firstTrack = uint32_t(writer.trackCount());
    auto trackOf = [&](uint32_t local) {
        return local < tracks_.size() ? firstTrack + local : local;
    };
    for (const TrackSpec& spec : tracks_) {
        TrackSpec copy = spec;
        if (copy.parent >= 0) copy.parent += firstTrack;
        writer.addTrack(std::move(copy));
    }

    // Args are numbered consecutively in both: the writer's id is its count before plus ours.
    const uint64_t argsBase = writer.argsCount();
    auto argsOf = [argsBase](uint64_t local) { return local ? argsBase + local : 0; };
    for (const std::string& block : args_) {
        const char* p = block.data();
        const char* end = p + block.size();
        while (p < end) {
            const uint64_t base = getVarint(p);
            const size_t size = size_t(getVarint(p));
            const std::string_view json(p, size);
            p += size;
            if (base)
                writer.addArgsOver(argsOf(base), json);
            else
                writer.addArgs(json);
        }
    }
    checkpoint();

    size_t done = 0;
    // The host's places in its file, after those of the hosts replayed before it.
    const uint64_t firstOrder = writer.reserveSliceOrders(nextOrder_);
    events_.forEach([&](const Event& e) {
        if (e.kind == EventKind::Instant)
            writer.addInstant(trackOf(e.track), e.start, nameOf[e.name], argsOf(e.args));
        else
            writer.addSlice(trackOf(e.track), e.start, e.dur, nameOf[e.name], argsOf(e.args),
                            e.startPs, e.durPs, e.kind == EventKind::Slice, firstOrder + e.order);
        if (++done % kCheckpointEvery == 0) checkpoint();
    });
    samples_.forEach([&](const Sample& s) { writer.addCounter(trackOf(s.track), s.ts, s.value); });
    for (const Aggregate& a : aggregates_)
        writer.addAggregate(nameOf[a.name], a.occurrences, a.totalNs, a.selfNs);
    flows_.forEach([&](const Flow& f) {
        FlowEnd from = f.from, to = f.to;
        from.track = trackOf(from.track);
        to.track = trackOf(to.track);
        from.args = argsOf(from.args);
        to.args = argsOf(to.args);
        writer.addFlow(from, to, nameOf[f.name]);
    });
    checkpoint();
    return firstTrack;
}

}  // namespace stallscope::trace
