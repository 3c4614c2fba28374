#include "core/trace/trace_writer.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/sqlite.h"
#include "core/trace/chunk_sinks.h"
#include "core/trace/lod_builder.h"

namespace stallscope::trace {

const char* trackKindName(TrackKind kind) {
    switch (kind) {
        case TrackKind::Process:
            return "process";
        case TrackKind::Thread:
            return "thread";
        case TrackKind::Async:
            return "async";
        case TrackKind::Counter:
            return "counter";
        case TrackKind::Global:
            return "global";
    }
    return "thread";
}

TrackKind trackKindFromName(std::string_view name) {
    if (name == "process") return TrackKind::Process;
    if (name == "async") return TrackKind::Async;
    if (name == "counter") return TrackKind::Counter;
    if (name == "global") return TrackKind::Global;
    return TrackKind::Thread;
}

namespace {

// Tracks with at most this many slices keep level 0 in memory (48 bytes an item) while their
// higher levels are built.
constexpr uint64_t kLevelZeroInMemory = uint64_t(1) << 20;

constexpr const char* kReadLevelZeroSql =
    "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND level = 0 "
    "ORDER BY seq";

}  // namespace

// Tracks written on a worker while the importer goes on (finishTracksBefore).
struct TraceWriter::PendingTracks {
    std::unique_ptr<SliceSorter> slices;
    std::vector<std::pair<uint32_t, TrackState>> tracks;  // copies: tracks_ may grow meanwhile
    std::exception_ptr error;
    std::atomic<bool> abandon = false;
    std::thread worker;
};

TraceWriter::TraceWriter(Workspace& workspace, int64_t profileId, size_t recordBudget)
    : workspace_(workspace),
      profileId_(profileId),
      recordBudget_(recordBudget ? recordBudget : importBuffers().traceRecords),
      slices_(std::make_unique<SliceSorter>(recordBudget_)),
      samples_(std::make_unique<SampleSorter>(recordBudget_ / 4)),
      flows_(recordBudget_ / 2),
      args_([this](int64_t seq, const std::string& packed) { storeArgsChunk(seq, packed); }) {
    intern("");  // id 0: no name
}

TraceWriter::~TraceWriter() {
    directWriter_.reset();  // its threads write through this writer
    if (pending_) {
        pending_->abandon = true;
        pending_->worker.join();
    }
}

uint32_t TraceWriter::addTrack(TrackSpec spec) {
    TrackState state;
    state.spec = std::move(spec);
    state.direct = direct_;
    tracks_.push_back(std::move(state));
    if (direct_) heldSlices_.resize(tracks_.size());
    return uint32_t(tracks_.size() - 1);
}

void TraceWriter::setTimeOffset(uint32_t track, int64_t ns) {
    if (tracks_[track].slicesWritten)
        throw Failure("trace writer: time offset for track " + std::to_string(track) +
                      " set after it was written");
    tracks_[track].offset = ns;
}

void TraceWriter::storeArgsChunk(int64_t seq, const std::string& packed) {
    std::lock_guard lock(dbMutex_);
    if (!argsInsert_)
        argsInsert_ = std::make_unique<sql::Statement>(
            workspace_.db(), "INSERT INTO trace_args(profile_id, seq, data) VALUES(?,?,?)");
    argsInsert_->bind(1, profileId_).bind(2, seq);
    argsInsert_->bindBlob(3, packed.data(), packed.size());
    argsInsert_->exec();
}

void TraceWriter::addSlice(uint32_t track, int64_t start, int64_t dur, uint32_t name, uint64_t args,
                           uint16_t startPs, uint16_t durPs, bool ended, uint64_t order) {
    if (dur < 0) dur = durPs = 0;
    // Every end must fit int64 ns (with room for the ps rounding): a slice may not run past it.
    // (When INT64_MAX - 2 - start overflows, start is negative and every duration fits.)
    if (int64_t room = 0; !__builtin_sub_overflow(INT64_MAX - 2, start, &room) && dur > room) {
        dur = room;
        durPs = 0;
    }
    // A track finishTracksBefore wrote is closed: a slice added now would be dropped silently.
    if (tracks_[track].slicesWritten)
        throw Failure("trace writer: slice added to track " + std::to_string(track) +
                      " after it was written");
    startPs = std::min<uint16_t>(startPs, 999);
    durPs = std::min<uint16_t>(durPs, 999);
    if (order == kOrderOfAdding) order = nextOrder_++;
    const RawSlice raw{start, dur, args, order, name, track, startPs, durPs, !ended};
    TrackState& t = tracks_[track];
    if (t.direct) {
        std::vector<RawSlice>& held = heldSlices_[track];
        if (!held.empty() && SliceOrder{}(raw, held.back())) {
            sortTrack(track);
            slices_->push(raw);
        } else {
            held.push_back(raw);
            if (++heldRecords_ >= recordBudget_) sortEveryTrack();
        }
    } else {
        slices_->push(raw);
    }
    ++slicesAdded_;
    if (observer_) observer_(track, start, name);
    ++t.slices;
    t.start = std::min(t.start, start);
    SliceItem probe;
    probe.start = start;
    probe.dur = dur;
    probe.startPs = startPs;
    probe.durPs = durPs;
    t.end = std::max(t.end, probe.end());
}

void TraceWriter::addInstant(uint32_t track, int64_t ts, uint32_t name, uint64_t args) {
    if (tracks_[track].slicesWritten)
        throw Failure("trace writer: instant added to track " + std::to_string(track) +
                      " after it was written");
    if (tracks_[track].direct) sortTrack(track);
    slices_->push({ts, -1, args, nextOrder_++, name, track, 0, 0, false});
    TrackState& t = tracks_[track];
    ++t.instants;
    t.start = std::min(t.start, ts);
    t.end = std::max(t.end, ts);
}

void TraceWriter::addCounter(uint32_t track, int64_t ts, double value) {
    samples_->push({ts, value, samplesAdded_++, track});
    TrackState& t = tracks_[track];
    ++t.samples;
    t.start = std::min(t.start, ts);
    t.end = std::max(t.end, ts);
}

void TraceWriter::addAggregate(uint32_t name, uint64_t occurrences, int64_t totalNs,
                               int64_t selfNs) {
    waitPendingTracks();  // the workers own the statistics until then
    waitDirectTracks();
    ops_.reserveNames(strings_.size());
    ops_.addAggregate(name, occurrences, totalNs, selfNs);
}

void TraceWriter::addFlow(FlowEnd from, FlowEnd to, uint32_t name) {
    waitPendingTracks();
    waitDirectTracks();
    if ((from.track < tracks_.size() && tracks_[from.track].slicesWritten) ||
        (to.track < tracks_.size() && tracks_[to.track].slicesWritten))
        throw Failure("trace import: a flow ends on a track already written");
    flows_.add(from, to, name);
}

// Nests the track's slices (by exact ps times; statistics use durations rounded to ns), binds
// its flow ends, counts the op statistics, writes level 0 and then the levels worth keeping.
void TraceWriter::writeSliceTrack(uint32_t trackId, TrackState& track, const SliceSource& slices,
                                  const std::function<void(double)>& step, OpStatistics& ops,
                                  uint64_t& overlapping) {
    LockedStatement insert(dbMutex_, workspace_.db(), kInsertChunkSql);
    // Flow ends bind while their own track is written: their times are still the ones added.
    // (Moved with their track by its offset, as the slices are.)
    TrackFlowBinder flows(flows_, trackId, track.offset);
    const bool binding = flows.active();

    struct Open {
        PreciseTime end;
        int64_t start, roundedEnd;
        uint32_t name;
        int64_t children;
        bool unended;
    };
    std::vector<Open> stack;
    auto pop = [&]() {
        const Open& o = stack.back();
        if (!o.unended)
            ops.addSelf(o.name, std::max<int64_t>(0, o.roundedEnd - o.start - o.children));
        stack.pop_back();
    };

    LevelCounter<SliceFolder, SliceItem> levelCounts(track.end - track.start);
    ChunkSink levelZero(*insert, dbMutex_, profileId_, trackId, 0);
    // Level 0 is built again for the higher levels from the track's held slices (a direct
    // track: each one's depth is kept in its track field, which the track's id makes
    // redundant), from a copy in memory when the track is not too large, or else read back
    // from SQLite (reading and decoding it was a tenth of writing a track).
    RawSlice* const held = slices.held ? slices.held->data() : nullptr;
    const bool levelZeroInMemory = !held && track.slices + track.instants <= kLevelZeroInMemory;
    std::vector<SliceItem> levelZeroItems;
    if (levelZeroInMemory) levelZeroItems.reserve(size_t(track.slices + track.instants));
    uint64_t seen = 0;
    const int64_t offset = track.offset;
    slices.forEach(trackId, [&](const RawSlice& raw) {
        RawSlice r = raw;
        r.start = shiftedTime(r.start, offset);
        const PreciseTime start{r.start, r.startPs};
        if (binding) flows.before(start);
        while (!stack.empty() && stack.back().end <= start) pop();
        const SliceItem item = itemOf(r, uint32_t(stack.size()));
        if (held) held[seen].track = item.depth;
        if (r.dur >= 0) {
            const int64_t dur = OpStatistics::roundedNs(r.dur, r.durPs);
            const PreciseTime end = item.preciseEnd();
            // A slice that never ended has no known length: it neither overlaps its parent
            // nor takes from the parent's self time.
            if (!stack.empty() && !r.unended) {
                Open& parent = stack.back();
                if (end > parent.end) ++overlapping;
                parent.children += std::min(dur, parent.roundedEnd - r.start);
            }
            stack.push_back({end, r.start, r.start + dur, r.name, 0, r.unended});
            if (r.unended)
                ops.addUnended(r.name);
            else
                ops.addSlice(r.name, r.dur, r.durPs);
            if (binding) flows.slice(item);
        }
        track.maxDepth = std::max(track.maxDepth, item.depth);
        levelZero.add(item);
        if (levelZeroInMemory) levelZeroItems.push_back(item);
        levelCounts.add(item);
        if ((++seen & 0xffff) == 0) step(double(seen));
    });
    if (binding) flows.finish();
    while (!stack.empty()) pop();
    levelZero.flush();

    track.levels = levelCounts.finish(track.slices + track.instants);
    if (track.levels.size() <= 1) return;

    // Second pass over level 0 (in memory, or as stored) builds the kept levels.
    std::vector<std::unique_ptr<ChunkSink>> sinks(size_t(kMaxLevel) + 1);
    for (size_t i = 1; i < track.levels.size(); ++i)
        sinks[size_t(track.levels[i])] =
            std::make_unique<ChunkSink>(*insert, dbMutex_, profileId_, trackId, track.levels[i]);
    LevelBuilder<SliceFolder, SliceItem, std::function<void(int, const SliceItem&)>> build(
        track.levels, [&](int level, const SliceItem& out) { sinks[size_t(level)]->add(out); });
    if (held) {
        for (size_t i = 0; i < slices.held->size(); ++i) {
            RawSlice r = held[i];
            r.start = shiftedTime(r.start, offset);
            build.add(itemOf(r, r.track));
        }
    } else if (levelZeroInMemory) {
        for (const SliceItem& item : levelZeroItems) build.add(item);
    } else {
        LockedStatement read(dbMutex_, workspace_.db(), kReadLevelZeroSql);
        std::unique_lock lock(dbMutex_);
        read->bind(1, profileId_).bind(2, int64_t(trackId));
        std::vector<SliceItem> items;
        while (read->step()) {
            items.clear();
            decodeSlices(read->blob(0), items);
            lock.unlock();  // the sinks take it to write
            for (const SliceItem& item : items) build.add(item);
            lock.lock();
        }
        read->reset();
    }
    build.finish();
    for (const auto& sink : sinks)
        if (sink) sink->flush();
}

SliceItem TraceWriter::itemOf(const RawSlice& r, uint32_t depth) {
    SliceItem item;
    item.start = r.start;
    item.name = r.name;
    item.args = r.args;
    item.depth = depth;
    if (r.dur < 0) {
        item.kind = ItemKind::Instant;
        item.dur = 0;
    } else {
        item.dur = r.dur;
        item.startPs = r.startPs;
        item.durPs = r.durPs;
        item.unended = r.unended;
    }
    return item;
}

void TraceWriter::writeCounterTrack(uint32_t trackId) {
    TrackState& track = tracks_[trackId];
    sql::Statement insert(workspace_.db(), kInsertChunkSql);
    LevelCounter<CounterFolder, CounterItem> levelCounts(track.end - track.start);
    ChunkSink levelZero(insert, dbMutex_, profileId_, trackId, 0);
    samples_->forEach(trackId, [&](const RawSample& r) {
        CounterItem item;
        item.ts = shiftedTime(r.ts, track.offset);
        item.value = item.min = item.max = r.value;
        levelZero.add(item);
        levelCounts.add(item);
    });
    levelZero.flush();
    track.levels = levelCounts.finish(track.samples);
    if (track.levels.size() <= 1) return;

    std::vector<std::unique_ptr<ChunkSink>> sinks(size_t(kMaxLevel) + 1);
    for (size_t i = 1; i < track.levels.size(); ++i)
        sinks[size_t(track.levels[i])] =
            std::make_unique<ChunkSink>(insert, dbMutex_, profileId_, trackId, track.levels[i]);
    LevelBuilder<CounterFolder, CounterItem, std::function<void(int, const CounterItem&)>> build(
        track.levels, [&](int level, const CounterItem& out) { sinks[size_t(level)]->add(out); });
    sql::Statement read(workspace_.db(), kReadLevelZeroSql);
    read.bind(1, profileId_).bind(2, int64_t(trackId));
    std::vector<CounterItem> items;
    while (read.step()) {
        items.clear();
        decodeCounters(read.blob(0), items);
        for (const CounterItem& item : items) build.add(item);
    }
    build.finish();
    for (const auto& sink : sinks)
        if (sink) sink->flush();
}

void TraceWriter::finishTracksBefore(uint32_t end) {
    end = std::min<uint32_t>(end, uint32_t(tracks_.size()));
    if (direct_) {
        std::vector<uint32_t> held;
        for (uint32_t t = 0; t < end; ++t)
            if (tracks_[t].direct && !heldSlices_[t].empty()) held.push_back(t);
        finishTracks(held);
    }
    if (flows_.size() > 0 || !slices_->onlyBefore(end)) return;
    // One batch at a time: at most two record buffers are held.
    waitPendingTracks();
    auto job = std::make_unique<PendingTracks>();
    uint64_t records = 0;
    for (uint32_t t = 0; t < end; ++t) {
        TrackState& track = tracks_[t];
        if (track.slicesWritten || track.slices + track.instants == 0) continue;
        if (track.direct && !heldSlices_[t].empty()) continue;
        job->tracks.emplace_back(t, track);
        track.slicesWritten = true;
        records += track.slices + track.instants;
    }
    if (job->tracks.empty()) return;
    slicesHandedOff_ += records;
    ops_.reserveNames(strings_.size());
    // The buffer the worker before used, when there is one: its pages are already mapped.
    job->slices =
        std::exchange(slices_, spareSlices_ ? std::move(spareSlices_)
                                            : std::make_unique<SliceSorter>(recordBudget_));
    PendingTracks* j = job.get();
    job->worker = std::thread([this, j] {
        try {
            j->slices->seal();
            for (auto& [id, state] : j->tracks) {
                // Between tracks too: a plane of many small tracks never reaches the per-chunk
                // progress check, and a cancelled import waits for this worker.
                if (j->abandon) throw Failure("trace import: abandoned");
                writeSliceTrack(
                    id, state, SliceSource{j->slices.get(), nullptr},
                    [j](double) {
                        if (j->abandon) throw Failure("trace import: abandoned");
                    },
                    ops_, overlapping_);
            }
        } catch (...) {
            j->error = std::current_exception();
        }
        j->slices->clear();
    });
    pending_ = std::move(job);
}

void TraceWriter::waitPendingTracks() {
    if (!pending_) return;
    pending_->worker.join();
    const std::unique_ptr<PendingTracks> job = std::move(pending_);
    if (job->error) std::rethrow_exception(job->error);
    spareSlices_ = std::move(job->slices);
    for (const auto& [id, state] : job->tracks) {
        tracks_[id].levels = state.levels;
        tracks_[id].maxDepth = state.maxDepth;
    }
}

TraceSummary TraceWriter::finish(const std::function<void(double)>& progress) {
    waitPendingTracks();
    waitDirectTracks();
    ops_.reserveNames(strings_.size());
    args_.finish();
    slices_->seal();
    samples_->seal();

    flows_.seal();
    const double totalRecords =
        double(slicesHandedOff_ + slices_->records() + samples_->records()) + 1.0;
    TraceSummary summary;

    // Slice tracks first (the largest first, for an even share between threads), then the
    // counter tracks on this thread.
    std::vector<uint32_t> sliceTracks;
    double done = double(slicesHandedOff_);
    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        const TrackState& track = tracks_[t];
        if (track.slices + track.instants > 0 && !track.slicesWritten) sliceTracks.push_back(t);
    }
    std::stable_sort(sliceTracks.begin(), sliceTracks.end(), [this](uint32_t a, uint32_t b) {
        return tracks_[a].slices + tracks_[a].instants > tracks_[b].slices + tracks_[b].instants;
    });
    writeSliceTracks(sliceTracks, progress, totalRecords);
    for (const uint32_t t : sliceTracks) done += double(tracks_[t].slices + tracks_[t].instants);

    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        TrackState& track = tracks_[t];
        if (track.samples > 0) {
            writeCounterTrack(t);
            done += double(track.samples);
        }
        summary.slices += track.slices;
        summary.instants += track.instants;
        summary.counterSamples += track.samples;
        if (track.samples > 0) ++summary.counterSeries;
        summary.maxDepth = std::max(summary.maxDepth, track.maxDepth);
        progress(0.95 * done / totalRecords);
    }
    for (TrackState& t : tracks_) {
        if (!t.hasData() || t.offset == 0) continue;
        t.start = shiftedTime(t.start, t.offset);
        t.end = shiftedTime(t.end, t.offset);
    }
    // Flow ends move with their tracks; those on tracks without slices attach to nothing.
    flows_.leaveUnbound(
        [this](uint32_t t) { return t < tracks_.size() ? tracks_[t].offset : int64_t(0); });
    summary.overlapping = overlapping_;
    summary.unended = ops_.unended();
    summary.percentilesExact = ops_.percentilesExact();
    const std::vector<bool> kept = keptTracks();
    writeRows(kept);
    int64_t start = INT64_MAX, end = INT64_MIN;
    for (const TrackState& t : tracks_) {
        if (!t.hasData()) continue;
        start = std::min(start, t.start);
        end = std::max(end, t.end);
    }
    summary.start = start == INT64_MAX ? 0 : start;
    summary.end = end == INT64_MIN ? 0 : end;
    summary.tracks = uint64_t(std::count(kept.begin(), kept.end(), true));
    summary.flows = flows_.size();
    summary.unboundFlows = flows_.unbound();
    progress(1.0);
    return summary;
}

void TraceWriter::writeSliceTracks(const std::vector<uint32_t>& order,
                                   const std::function<void(double)>& progress,
                                   double totalRecords) {
    // Thrown on the other threads once one failed: not the error to report.
    struct Abandoned {};
    std::atomic<size_t> next = 0;
    std::atomic<uint64_t> done = slicesHandedOff_;
    std::atomic<bool> abandon = false;
    std::mutex errorMutex;
    std::exception_ptr firstError;
    auto run = [&](OpStatistics& ops, uint64_t& overlapping, bool reports) {
        try {
            for (size_t i = next++; i < order.size(); i = next++) {
                if (abandon) throw Abandoned{};
                TrackState& track = tracks_[order[i]];
                uint64_t counted = 0;
                auto step = [&](double seen) {
                    if (abandon) throw Abandoned{};
                    done += uint64_t(seen) - counted;
                    counted = uint64_t(seen);
                    if (reports) progress(0.95 * double(done) / totalRecords);
                };
                const SliceSource source{slices_.get(),
                                         track.direct ? &heldSlices_[order[i]] : nullptr};
                writeSliceTrack(order[i], track, source, step, ops, overlapping);
                done += track.slices + track.instants - counted;
                if (reports) progress(0.95 * double(done) / totalRecords);
            }
        } catch (const Abandoned&) {
        } catch (...) {
            abandon = true;
            std::lock_guard lock(errorMutex);
            if (!firstError) firstError = std::current_exception();
        }
    };
    // Each helper thread counts its own statistics; they are merged once all are written.
    struct Helper {
        OpStatistics ops;
        uint64_t overlapping = 0;
        std::thread thread;
    };
    std::vector<std::unique_ptr<Helper>> helpers;
    const size_t threads = std::min(writeThreads_, order.size());
    for (size_t h = 1; h < threads; ++h) {
        helpers.push_back(std::make_unique<Helper>(Helper{OpStatistics(ops_.exactBudget())}));
        Helper* helper = helpers.back().get();
        helper->ops.reserveNames(strings_.size());
        helper->thread =
            std::thread([&run, helper] { run(helper->ops, helper->overlapping, false); });
    }
    run(ops_, overlapping_, true);
    for (const auto& helper : helpers) helper->thread.join();
    if (firstError) std::rethrow_exception(firstError);
    for (const auto& helper : helpers) {
        ops_.merge(helper->ops);
        overlapping_ += helper->overlapping;
    }
}

// Tracks holding data, and the tracks enclosing them; empty ones (metadata only) are dropped.
std::vector<bool> TraceWriter::keptTracks() const {
    std::vector<bool> kept(tracks_.size(), false);
    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        if (!tracks_[t].hasData()) continue;
        for (int64_t p = t; p >= 0 && !kept[size_t(p)]; p = tracks_[size_t(p)].spec.parent)
            kept[size_t(p)] = true;
    }
    return kept;
}

void TraceWriter::writeRows(const std::vector<bool>& kept) {
    sqlite3* db = workspace_.db();
    sql::Statement track(db,
                         "INSERT INTO trace_tracks(profile_id, id, parent_id, kind, name, "
                         "sort_index, pid, tid, slices, instants, samples, max_depth, start_ns, "
                         "end_ns, levels) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (uint32_t t = 0; t < tracks_.size(); ++t) {
        if (!kept[t]) continue;
        const TrackState& s = tracks_[t];
        std::string levels;
        for (int l : s.levels) levels += (levels.empty() ? "" : ",") + std::to_string(l);
        track.bind(1, profileId_).bind(2, int64_t(t));
        if (s.spec.parent >= 0)
            track.bind(3, s.spec.parent);
        else
            track.bindNull(3);
        track.bind(4, std::string_view(trackKindName(s.spec.kind))).bind(5, s.spec.name);
        track.bind(6, s.spec.sortIndex).bind(7, s.spec.pid).bind(8, s.spec.tid);
        track.bind(9, int64_t(s.slices)).bind(10, int64_t(s.instants)).bind(11, int64_t(s.samples));
        track.bind(12, int64_t(s.maxDepth));
        if (s.hasData())
            track.bind(13, s.start).bind(14, s.end);
        else
            track.bindNull(13).bindNull(14);
        track.bind(15, levels);
        track.exec();
    }

    PackedSink strings(workspace_, profileId_, kStringsStream);
    for (std::string_view text : strings_.texts()) {
        encodeString(text, strings.buffer());
        strings.endEntry();
    }
    strings.finish();

    if (!argsLayouts_.empty()) {
        PackedSink layouts(workspace_, profileId_, kArgsLayoutsStream);
        for (const std::vector<std::string>& keys : argsLayouts_) {
            encodeArgsLayout(keys, layouts.buffer());
            layouts.endEntry();
        }
        layouts.finish();
    }

    PackedSink flows(workspace_, profileId_, kFlowsStream);
    PackedFlow previous;
    flows_.forEachFlow([&](const BoundFlow& f) {
        PackedFlow packed;
        packed.name = f.name;
        packed.fromTrack = int64_t(f.fromTrack);
        packed.fromTs = f.fromTs;
        packed.fromDepth = f.fromDepth;
        packed.toTrack = int64_t(f.toTrack);
        packed.toTs = f.toTs;
        packed.toDepth = f.toDepth;
        // Each chunk decodes on its own: deltas restart from zero.
        if (flows.startsChunk()) previous = PackedFlow{};
        encodeFlow(packed, previous, flows.buffer());
        flows.endEntry();
        previous = packed;
    });
    flows.finish();

    PackedSink ops(workspace_, profileId_, kOpsStream);
    ops_.forEachOp([&](const PackedOp& op) {
        encodeOp(op, ops.buffer());
        ops.endEntry();
    });
    ops.finish();
    if (ops_.unended() > 0) {
        PackedSink unended(workspace_, profileId_, kOpsUnendedStream);
        ops_.forEachUnended([&](uint32_t name, uint64_t count) {
            encodeOpUnended(name, count, unended.buffer());
            unended.endEntry();
        });
        unended.finish();
    }
}

}  // namespace stallscope::trace
