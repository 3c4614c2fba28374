#include "core/trace/trace_store.h"

#include <zstd.h>

#include <new>

#include <QJsonArray>
#include <QJsonDocument>
#include <QString>
#include <algorithm>
#include <unordered_map>

#include "core/errors.h"
#include "core/sqlite.h"

namespace stallscope::trace {

TraceStore::TraceStore(const Workspace& workspace, int64_t profileId)
    : workspace_(workspace), profileId_(profileId) {
    sqlite3* db = workspace.db();
    sql::Statement tracks(
        db,
        "SELECT id, parent_id, kind, name, sort_index, pid, tid, slices, "
        "instants, samples, max_depth, start_ns, end_ns, levels FROM trace_tracks "
        "WHERE profile_id = ? ORDER BY id");
    tracks.bind(1, profileId);
    bool any = false;
    while (tracks.step()) {
        TrackRow t;
        t.id = tracks.int64(0);
        t.parent = tracks.isNull(1) ? -1 : tracks.int64(1);
        t.kind = trackKindFromName(tracks.text(2));
        t.name = tracks.text(3);
        t.sortIndex = tracks.int64(4);
        t.pid = tracks.text(5);
        t.tid = tracks.text(6);
        t.slices = uint64_t(tracks.int64(7));
        t.instants = uint64_t(tracks.int64(8));
        t.samples = uint64_t(tracks.int64(9));
        t.maxDepth = uint32_t(tracks.int64(10));
        if (!tracks.isNull(11)) {
            t.start = tracks.int64(11);
            t.end = tracks.int64(12);
            start_ = any ? std::min(start_, t.start) : t.start;
            end_ = any ? std::max(end_, t.end) : t.end;
            any = true;
        }
        const std::string levels = tracks.text(13);
        size_t pos = 0;
        while (pos < levels.size()) {
            size_t comma = levels.find(',', pos);
            if (comma == std::string::npos) comma = levels.size();
            t.levels.push_back(std::stoi(levels.substr(pos, comma - pos)));
            pos = comma + 1;
        }
        if (t.levels.empty()) t.levels.push_back(0);
        tracks_.push_back(std::move(t));
    }
    // Packed strings (ids in order), or the rows of profiles written before them.
    for (const std::string& chunk : workspace.readBlobs(profileId, kStringsStream))
        decodeStrings(unpackChunk(chunk), strings_);
    if (!strings_.empty()) return;
    sql::Statement strings(db,
                           "SELECT id, text FROM trace_strings WHERE profile_id = ? ORDER BY id");
    strings.bind(1, profileId);
    while (strings.step()) {
        const auto id = size_t(strings.int64(0));
        if (id >= strings_.size()) strings_.resize(id + 1);
        strings_[id] = strings.text(1);
    }
}

const TrackRow* TraceStore::track(int64_t id) const {
    auto it = std::lower_bound(tracks_.begin(), tracks_.end(), id,
                               [](const TrackRow& t, int64_t v) { return t.id < v; });
    return it != tracks_.end() && it->id == id ? &*it : nullptr;
}

std::vector<const TrackRow*> TraceStore::children(int64_t parent) const {
    std::vector<const TrackRow*> out;
    for (const TrackRow& t : tracks_)
        if (t.parent == parent) out.push_back(&t);
    std::stable_sort(out.begin(), out.end(), [](const TrackRow* a, const TrackRow* b) {
        return a->sortIndex != b->sortIndex ? a->sortIndex < b->sortIndex : a->id < b->id;
    });
    return out;
}

const std::string& TraceStore::text(uint32_t id) const {
    static const std::string empty;
    return id < strings_.size() ? strings_[id] : empty;
}

int TraceStore::levelFor(const TrackRow& track, double resolution) const {
    int chosen = 0;
    for (int level : track.levels)
        if (double(lodWidth(level)) <= 2.0 * resolution) chosen = level;
    return chosen;
}

std::vector<SliceItem> TraceStore::slices(int64_t trackId, int64_t from, int64_t to,
                                          double resolution) const {
    std::vector<SliceItem> out;
    const TrackRow* t = track(trackId);
    if (!t || t->slices + t->instants == 0) return out;
    forEachChunkAt(trackId, levelFor(*t, resolution), from, to,
                   [&](const std::vector<SliceItem>& items) {
                       out.insert(out.end(), items.begin(), items.end());
                   });
    const auto byStart = [](const SliceItem& a, const SliceItem& b) {
        if (a.start != b.start) return a.start < b.start;
        if (a.startPs != b.startPs) return a.startPs < b.startPs;
        return a.depth < b.depth;
    };
    // Chunks are stored in time order, so a window's items mostly come sorted already.
    if (!std::is_sorted(out.begin(), out.end(), byStart))
        std::stable_sort(out.begin(), out.end(), byStart);
    return out;
}

void TraceStore::forEachChunkIn(
    int64_t trackId, int64_t from, int64_t to,
    const std::function<void(const std::vector<SliceItem>&)>& visit) const {
    const TrackRow* t = track(trackId);
    if (!t || t->slices + t->instants == 0) return;
    forEachChunkAt(trackId, 0, from, to, visit);
}

void TraceStore::forEachChunkAt(
    int64_t trackId, int level, int64_t from, int64_t to,
    const std::function<void(const std::vector<SliceItem>&)>& visit) const {
    const auto [firstSeq, lastSeq] = chunkSeqs(trackId, level, from, to);
    if (firstSeq > lastSeq) return;
    sql::Statement st(workspace_.db(),
                      "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND "
                      "level = ? AND seq >= ? AND seq <= ? AND first_ns <= ? AND end_ns >= ? "
                      "ORDER BY seq");
    st.bind(1, profileId_)
        .bind(2, trackId)
        .bind(3, level)
        .bind(4, firstSeq)
        .bind(5, lastSeq)
        .bind(6, to)
        .bind(7, from);
    std::vector<SliceItem> chunk;
    while (st.step()) {
        chunk.clear();
        decodeSlices(st.blob(0), chunk);
        // The chunk's items overlapping the window, in place.
        const auto outside = [from, to](const SliceItem& it) {
            return !(it.start <= to && it.end() >= from);
        };
        chunk.erase(std::remove_if(chunk.begin(), chunk.end(), outside), chunk.end());
        if (!chunk.empty()) visit(chunk);
    }
}

std::pair<int64_t, int64_t> TraceStore::chunkSeqs(int64_t track, int level, int64_t from,
                                                  int64_t to) const {
    std::lock_guard lock(directoriesMutex_);
    auto [it, fresh] = directories_.try_emplace({track, level});
    ChunkDirectory& d = it->second;
    if (fresh) {
        sql::Statement st(workspace_.db(),
                          "SELECT seq, first_ns, end_ns FROM trace_chunks WHERE profile_id = ? "
                          "AND track_id = ? AND level = ? ORDER BY seq");
        st.bind(1, profileId_).bind(2, track).bind(3, level);
        std::vector<int64_t> firsts;
        while (st.step()) {
            d.seqs.push_back(st.int64(0));
            firsts.push_back(st.int64(1));
            const int64_t end = st.int64(2);
            d.endsBefore.push_back(d.endsBefore.empty() ? end : std::max(d.endsBefore.back(), end));
        }
        d.firstsAfter.resize(firsts.size());
        for (size_t i = firsts.size(); i-- > 0;)
            d.firstsAfter[i] =
                i + 1 < firsts.size() ? std::min(firsts[i], d.firstsAfter[i + 1]) : firsts[i];
    }
    // Both are monotonic: chunks before `lo` all end before `from`, those from `hi` on all
    // start after `to`.
    const size_t lo = size_t(std::lower_bound(d.endsBefore.begin(), d.endsBefore.end(), from) -
                             d.endsBefore.begin());
    const size_t hi = size_t(std::upper_bound(d.firstsAfter.begin(), d.firstsAfter.end(), to) -
                             d.firstsAfter.begin());
    if (lo >= hi) return {1, 0};
    return {d.seqs[lo], d.seqs[hi - 1]};
}

void TraceStore::forEachChunk(
    int64_t trackId, const std::function<void(const std::vector<SliceItem>&)>& visit) const {
    std::mutex alone;  // no other thread reads: the lock is never contended
    forEachChunk(trackId, alone, visit);
}

void TraceStore::forEachChunk(
    int64_t trackId, std::mutex& reading,
    const std::function<void(const std::vector<SliceItem>&)>& visit) const {
    std::unique_lock lock(reading);
    const TrackRow* t = track(trackId);
    if (!t || t->slices + t->instants == 0) return;
    std::optional<sql::Statement> st;
    st.emplace(workspace_.db(),
               "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND level = 0 "
               "ORDER BY seq");
    st->bind(1, profileId_).bind(2, trackId);
    std::string bytes;
    std::vector<SliceItem> chunk;
    try {
        while (st->step()) {
            bytes.assign(st->blob(0));
            lock.unlock();
            chunk.clear();
            decodeSlices(bytes, chunk);
            visit(chunk);
            lock.lock();
        }
    } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        st.reset();  // finalized on the connection, under the lock
        throw;
    }
    st.reset();
}

std::vector<CounterItem> TraceStore::counters(int64_t trackId, int64_t from, int64_t to,
                                              double resolution) const {
    std::vector<CounterItem> out;
    const TrackRow* t = track(trackId);
    if (!t || t->samples == 0) return out;
    const int level = levelFor(*t, resolution);
    // The chunk holding the last sample before `from` gives the value at the left edge.
    sql::Statement st(workspace_.db(),
                      "SELECT data FROM trace_chunks WHERE profile_id = ?1 AND track_id = ?2 AND "
                      "level = ?3 AND end_ns >= (SELECT coalesce(max(first_ns), ?5) FROM "
                      "trace_chunks WHERE profile_id = ?1 AND track_id = ?2 AND level = ?3 AND "
                      "first_ns <= ?5) AND first_ns <= ?4 ORDER BY seq");
    st.bind(1, profileId_).bind(2, trackId).bind(3, level).bind(4, to).bind(5, from);
    std::vector<CounterItem> chunk;
    CounterItem before;
    bool haveBefore = false;
    while (st.step()) {
        chunk.clear();
        decodeCounters(st.blob(0), chunk);
        for (const CounterItem& it : chunk) {
            if (it.ts < from) {
                before = it;
                haveBefore = true;
            } else if (it.ts <= to) {
                out.push_back(it);
            }
        }
    }
    if (haveBefore) out.insert(out.begin(), before);
    return out;
}

const std::vector<FlowRow>& TraceStore::flows() const {
    if (flows_) return *flows_;
    std::vector<FlowRow> all;
    forEachFlow([&all](const FlowRow& f) { all.push_back(f); });
    flows_.emplace(std::move(all));
    return *flows_;
}

void TraceStore::forEachFlow(const std::function<void(const FlowRow&)>& visit) const {
    if (flows_) {
        for (const FlowRow& f : *flows_) visit(f);
        return;
    }
    // One stored chunk at a time: a pass over 10^7 flows holds one chunk, not all of them.
    int64_t id = 0;
    std::vector<FlowRow> rows;
    const bool packed = forEachFlowChunk([&](std::string_view chunk) {
        rows.clear();
        decodeFlowChunk(chunk, id, rows);
        id += int64_t(rows.size());
        for (const FlowRow& f : rows) visit(f);
    });
    if (packed) return;
    sql::Statement st(workspace_.db(),
                      "SELECT id, name_id, from_track, from_ns, from_depth, to_track, to_ns, "
                      "to_depth FROM trace_flows WHERE profile_id = ? ORDER BY id");
    st.bind(1, profileId_);
    while (st.step()) {
        FlowRow f;
        f.id = st.int64(0);
        f.name = uint32_t(st.int64(1));
        f.fromTrack = st.int64(2);
        f.fromTs = st.int64(3);
        f.fromDepth = int32_t(st.int64(4));
        f.toTrack = st.int64(5);
        f.toTs = st.int64(6);
        f.toDepth = int32_t(st.int64(7));
        visit(f);
    }
}

bool TraceStore::forEachFlowChunk(const std::function<void(std::string_view)>& visit) const {
    sql::Statement st(workspace_.db(),
                      "SELECT data FROM blobs WHERE profile_id = ? AND stream = ? ORDER BY seq");
    st.bind(1, profileId_).bind(2, std::string(kFlowsStream));
    bool any = false;
    while (st.step()) {
        any = true;
        visit(st.blob(0));
    }
    return any;
}

void TraceStore::decodeFlowChunk(std::string_view packed, int64_t firstId,
                                 std::vector<FlowRow>& out) {
    std::vector<PackedFlow> flows;
    decodeFlows(unpackChunk(packed), flows);
    out.reserve(out.size() + flows.size());
    for (const PackedFlow& p : flows)
        out.push_back(
            {firstId++, p.name, p.fromTrack, p.fromTs, p.fromDepth, p.toTrack, p.toTs, p.toDepth});
}

const QJsonObject& TraceStore::metadata() const {
    if (!metadata_) {
        const auto profile = workspace_.profile(profileId_);
        metadata_ =
            profile
                ? QJsonDocument::fromJson(QByteArray::fromStdString(profile->metadataJson)).object()
                : QJsonObject();
    }
    return *metadata_;
}

std::vector<OpStat> TraceStore::opStats() const {
    std::vector<OpStat> out;
    const std::vector<std::string> chunks = workspace_.readBlobs(profileId_, kOpsStream);
    std::vector<PackedOp> packed;
    for (const std::string& chunk : chunks) decodeOps(unpackChunk(chunk), packed);
    // The order the rows were read in: total descending, then name id.
    std::sort(packed.begin(), packed.end(), [](const PackedOp& a, const PackedOp& b) {
        return a.total != b.total ? a.total > b.total : a.name < b.name;
    });
    for (const PackedOp& p : packed)
        out.push_back({text(p.name), p.count, 0, 0, p.total, p.self, p.min, p.max, p.p50, p.p95});
    sql::Statement st(workspace_.db(),
                      "SELECT name_id, count, total_ns, self_ns, min_ns, max_ns, p50_ns, p95_ns "
                      "FROM trace_ops WHERE profile_id = ? ORDER BY total_ns DESC, name_id");
    st.bind(1, profileId_);
    while (chunks.empty() && st.step()) {
        OpStat s;
        s.name = text(uint32_t(st.int64(0)));
        s.count = uint64_t(st.int64(1));
        s.total = st.int64(2);
        s.self = st.int64(3);
        s.min = st.int64(4);
        s.max = st.int64(5);
        s.p50 = st.int64(6);
        s.p95 = st.int64(7);
        out.push_back(std::move(s));
    }
    std::vector<std::pair<uint32_t, uint64_t>> unended;
    for (const std::string& chunk : workspace_.readBlobs(profileId_, kOpsUnendedStream))
        decodeOpsUnended(unpackChunk(chunk), unended);
    if (!unended.empty()) {
        std::unordered_map<std::string_view, OpStat*> byName;
        for (OpStat& s : out) byName.emplace(s.name, &s);
        std::vector<OpStat> onlyUnended;  // ops none of whose slices ended
        for (const auto& [name, n] : unended) {
            const auto it = byName.find(text(name));
            if (it != byName.end()) {
                it->second->unended = n;
            } else {
                OpStat s;
                s.name = text(name);
                s.unended = n;
                onlyUnended.push_back(std::move(s));
            }
        }
        for (OpStat& s : onlyUnended) out.push_back(std::move(s));
    }
    const QJsonArray aggregated = metadata().value("aggregated_ops").toArray();
    if (!aggregated.isEmpty()) {
        std::unordered_map<std::string, uint64_t> occurrences;
        for (const auto& a : aggregated) {
            const QJsonObject o = a.toObject();
            occurrences[o.value("name").toString().toStdString()] +=
                uint64_t(o.value("occurrences").toInteger());
        }
        for (OpStat& s : out) {
            const auto it = occurrences.find(s.name);
            if (it != occurrences.end()) s.aggregated = std::min(it->second, s.count);
        }
    }
    return out;
}

std::optional<FoundSlice> TraceStore::find(const std::string& needle, int64_t after,
                                           bool forward) const {
    const QString lowered = QString::fromStdString(needle).toCaseFolded();
    std::vector<bool> matches(strings_.size(), false);
    bool any = false;
    for (size_t i = 1; i < strings_.size(); ++i) {
        matches[i] = QString::fromStdString(strings_[i]).toCaseFolded().contains(lowered);
        any = any || matches[i];
    }
    if (!any) return std::nullopt;
    std::optional<FoundSlice> best;
    auto better = [&](const SliceItem& s) {
        if (!best) return true;
        return forward ? s.start < best->slice.start : s.start > best->slice.start;
    };
    // Level 0 chunks are sorted by start: scan them from the edge of `after` outwards.
    sql::Statement st(workspace_.db(),
                      forward ? "SELECT data FROM trace_chunks WHERE profile_id = ?1 AND track_id "
                                "= ?2 AND level = 0 AND seq >= coalesce((SELECT max(seq) FROM "
                                "trace_chunks WHERE profile_id = ?1 AND track_id = ?2 AND level = "
                                "0 AND first_ns <= ?3), 0) ORDER BY seq"
                              : "SELECT data FROM trace_chunks WHERE profile_id = ?1 AND track_id "
                                "= ?2 AND level = 0 AND first_ns < ?3 ORDER BY seq DESC");
    std::vector<SliceItem> chunk;
    for (const TrackRow& t : tracks_) {
        if (t.slices + t.instants == 0) continue;
        st.bind(1, profileId_).bind(2, t.id).bind(3, after);
        bool done = false;
        while (!done && st.step()) {
            chunk.clear();
            decodeSlices(st.blob(0), chunk);
            if (forward) {
                for (const SliceItem& s : chunk) {
                    if (s.start <= after || !matches[s.name]) continue;
                    if (better(s)) best = FoundSlice{t.id, s};
                    done = true;
                    break;
                }
            } else {
                for (auto it = chunk.rbegin(); it != chunk.rend(); ++it) {
                    if (it->start >= after || !matches[it->name]) continue;
                    if (better(*it)) best = FoundSlice{t.id, *it};
                    done = true;
                    break;
                }
            }
            // Later (earlier) chunks cannot beat what this track already found.
            if (best && !done && !chunk.empty()) {
                if (forward ? chunk.front().start > best->slice.start
                            : chunk.back().start < best->slice.start)
                    done = true;
            }
        }
        st.reset();
    }
    return best;
}

namespace {

// Calls visit(raw key, member text) for each top-level member of a JSON object; strings and
// nesting are skipped over. Nothing for anything that is not an object.
template <class Visit>
void forEachJsonMember(std::string_view obj, Visit&& visit) {
    size_t i = obj.find('{');
    if (i == std::string_view::npos) return;
    ++i;
    auto skipString = [&](size_t p) {  // p at '"'; returns past the closing quote
        for (++p; p < obj.size(); ++p) {
            if (obj[p] == '\\')
                ++p;
            else if (obj[p] == '"')
                return p + 1;
        }
        return obj.size();
    };
    while (i < obj.size()) {
        while (i < obj.size() && obj[i] != '"' && obj[i] != '}') ++i;
        if (i >= obj.size() || obj[i] == '}') break;
        const size_t keyStart = i;
        const size_t keyEnd = skipString(i);
        size_t p = keyEnd;
        int depth = 0;
        for (; p < obj.size(); ++p) {
            const char c = obj[p];
            if (c == '"') {
                p = skipString(p) - 1;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (depth == 0) break;
                --depth;
            } else if (c == ',' && depth == 0) {
                break;
            }
        }
        visit(obj.substr(keyStart, keyEnd - keyStart), obj.substr(keyStart, p - keyStart));
        i = p + 1;
    }
}

// The top-level members of a JSON object as (raw key, member text) pairs.
std::vector<std::pair<std::string_view, std::string_view>> jsonMembers(std::string_view obj) {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    forEachJsonMember(
        obj, [&](std::string_view key, std::string_view member) { out.emplace_back(key, member); });
    return out;
}

// The member text of the last member named `key` (unquoted), as a repeated key's value is.
std::optional<std::string_view> lastJsonMember(std::string_view obj, std::string_view key) {
    std::optional<std::string_view> found;
    forEachJsonMember(obj, [&](std::string_view rawKey, std::string_view member) {
        if (rawKey.size() == key.size() + 2 && rawKey.back() == '"' &&
            rawKey.substr(1, key.size()) == key)
            found = member;
    });
    return found;
}

}  // namespace

std::string TraceStore::args(uint64_t argsId) const {
    return args(argsId, 0);
}

void TraceStore::FreeDecompressor::operator()(ZSTD_DCtx_s* context) const {
    ZSTD_freeDCtx(context);
}

const TraceStore::ArgsChunk* TraceStore::argsChunk(int64_t seq) const {
    for (size_t i = 0; i < argsCache_.size(); ++i) {
        if (argsCache_[i].seq != seq) continue;
        // Most recent first: a walk over a track's slices reads the same chunks again and again.
        std::rotate(argsCache_.begin(), argsCache_.begin() + i, argsCache_.begin() + i + 1);
        return &argsCache_.front();
    }
    // Prepared once, and the evicted chunk's buffers reused: a walk over a large trace reads a
    // chunk for every thousand args.
    if (!argsSelect_)
        argsSelect_ = std::make_unique<sql::Statement>(
            workspace_.db(), "SELECT data FROM trace_args WHERE profile_id = ? AND seq = ?");
    sql::Statement& st = *argsSelect_;
    struct ResetAfter {
        sql::Statement& statement;
        ~ResetAfter() { statement.reset(); }
    } resetAfter{st};
    st.bind(1, profileId_).bind(2, seq);
    if (!st.step()) return nullptr;
    const std::string_view packed = st.blob(0);
    const unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
        throw Failure("trace args: corrupt chunk");
    constexpr size_t kCachedChunks = 8;
    ArgsChunk chunk;
    if (argsCache_.size() == kCachedChunks) {
        chunk = std::move(argsCache_.back());
        argsCache_.pop_back();
        chunk.entries.clear();
    }
    chunk.seq = seq;
    chunk.raw.resize(size_t(size));
    if (!decompressor_) decompressor_.reset(ZSTD_createDCtx());
    if (!decompressor_) throw std::bad_alloc();
    const size_t n = ZSTD_decompressDCtx(decompressor_.get(), chunk.raw.data(), chunk.raw.size(),
                                         packed.data(), packed.size());
    if (ZSTD_isError(n)) throw Failure(std::string("trace args: ") + ZSTD_getErrorName(n));
    ByteReader in(chunk.raw);
    while (!in.atEnd()) {
        const uint64_t length = in.varint();
        const size_t at = chunk.raw.size() - size_t(in.remaining());
        in.take(length);
        chunk.entries.emplace_back(uint32_t(at), uint32_t(length));
    }
    argsCache_.insert(argsCache_.begin(), std::move(chunk));
    return &argsCache_.front();
}

const ArgsLayouts& TraceStore::argsLayouts() const {
    if (!argsLayouts_) {
        argsLayouts_.emplace();
        for (const std::string& chunk : workspace_.readBlobs(profileId_, kArgsLayoutsStream))
            decodeArgsLayouts(unpackChunk(chunk), *argsLayouts_);
    }
    return *argsLayouts_;
}

std::string_view TraceStore::overlayOwn(std::string_view entry, uint64_t& base,
                                        std::string& text) const {
    if (entry[0] == kArgsPacked) {
        text = expandPackedArgs(entry, argsLayouts(), base);
        return text;
    }
    ByteReader overlay(entry.substr(1));
    base = overlay.varint();
    return entry.substr(entry.size() - size_t(overlay.remaining()));
}

namespace {

bool isOverlay(std::string_view entry) {
    return !entry.empty() && (entry[0] == kArgsOverlay || entry[0] == kArgsPacked);
}

}  // namespace

std::string TraceStore::args(uint64_t argsId, int depth) const {
    const std::optional<std::string_view> stored = argsEntry(argsId);
    if (!stored) return {};
    // A copy: reading the base below may evict this chunk from the cache.
    const std::string entryText(*stored);
    {
        const std::string_view entry(entryText);
        if (!isOverlay(entry)) return entryText;
        // An overlay: own members first, then the base's members own does not have.
        uint64_t base = 0;
        std::string ownText;
        const std::string_view own = overlayOwn(entry, base, ownText);
        if (depth > 8) throw Failure("trace args: overlays nested too deep");
        const std::string baseText = args(base, depth + 1);
        const auto ownMembers = jsonMembers(own);
        std::string out = "{";
        for (const auto& [key, member] : ownMembers) {
            if (out.size() > 1) out.push_back(',');
            out += member;
        }
        for (const auto& baseMember : jsonMembers(baseText)) {
            const auto& key = baseMember.first;  // captured below: no structured binding (clang 14)
            const auto& member = baseMember.second;
            const bool overridden = std::any_of(ownMembers.begin(), ownMembers.end(),
                                                [&](const auto& o) { return o.first == key; });
            if (overridden) continue;
            if (out.size() > 1) out.push_back(',');
            out += member;
        }
        return out + "}";
    }
}

std::optional<std::string_view> TraceStore::argsEntry(uint64_t argsId) const {
    if (argsId == 0) return std::nullopt;
    const uint64_t index = argsId - 1;
    const ArgsChunk* chunk = argsChunk(int64_t(index / kArgsPerChunk));
    if (!chunk || index % kArgsPerChunk >= chunk->entries.size()) return std::nullopt;
    const auto [at, length] = chunk->entries[index % kArgsPerChunk];
    return std::string_view(chunk->raw.data() + at, length);
}

std::optional<std::string_view> TraceStore::argsMemberView(uint64_t argsId, std::string_view key,
                                                           std::string& scratch) const {
    const std::optional<std::string_view> entry = argsEntry(argsId);
    if (!entry) return std::nullopt;
    if (!isOverlay(*entry)) return lastJsonMember(*entry, key);  // as argsMember reads it
    std::optional<std::string> member = argsMember(argsId, key);
    if (!member) return std::nullopt;
    scratch = std::move(*member);
    return std::string_view(scratch);
}

std::optional<std::string> TraceStore::argsMember(uint64_t argsId, std::string_view key,
                                                  uint64_t* holder) const {
    const std::string quoted = "\"" + std::string(key) + "\"";
    for (int depth = 0; argsId != 0 && depth <= 8; ++depth) {
        const std::optional<std::string_view> stored = argsEntry(argsId);
        if (!stored) return std::nullopt;
        const std::string_view entry = *stored;
        if (!isOverlay(entry) && depth == 0) {
            // A slice's own args: read directly (memoising every slice's would grow without
            // bound over a large trace).
            const auto found = lastJsonMember(entry, key);  // as the memo's
            if (!found) return std::nullopt;
            if (holder) *holder = argsId;
            return std::string(*found);
        }
        if (!isOverlay(entry)) {
            // A base many events share (XProf's op metadata): its members are looked up once.
            auto& memo = memberMemo_[argsId];
            for (const auto& [memoKey, value] : memo) {
                if (memoKey != key) continue;
                if (holder && value) *holder = argsId;
                return value;
            }
            std::optional<std::string> found;
            for (const auto& [memberKey, member] : jsonMembers(entry))
                if (memberKey == quoted) found = std::string(member);
            memo.emplace_back(std::string(key), found);
            if (holder && found) *holder = argsId;
            return found;
        }
        uint64_t base = 0;
        std::string ownText;
        const std::string_view own = overlayOwn(entry, base, ownText);
        if (own.find(quoted) == std::string_view::npos) {
            argsId = base;
            continue;
        }
        for (const auto& [memberKey, member] : jsonMembers(own)) {
            if (memberKey != quoted) continue;
            if (holder) *holder = argsId;
            return std::string(member);
        }
        argsId = base;  // not its own: the base's, if any
    }
    return std::nullopt;
}

QJsonObject summaryJson(const TraceSummary& s) {
    QJsonObject o;
    o.insert("tracks", qint64(s.tracks));
    o.insert("slices", qint64(s.slices));
    o.insert("instants", qint64(s.instants));
    o.insert("counter_samples", qint64(s.counterSamples));
    o.insert("counter_series", qint64(s.counterSeries));
    o.insert("flows", qint64(s.flows));
    o.insert("overlapping_slices", qint64(s.overlapping));
    o.insert("unended_slices", qint64(s.unended));
    o.insert("unbound_flows", qint64(s.unboundFlows));
    o.insert("max_depth", qint64(s.maxDepth));
    o.insert("start", qint64(s.start));
    o.insert("end", qint64(s.end));
    o.insert("time_unit", kTimeUnit);
    o.insert("percentiles", s.percentilesExact ? "exact" : "histogram (about 1% error)");
    return o;
}

QJsonObject TraceStore::infoJson(int topOps) const {
    QJsonObject o;
    qint64 slices = 0, instants = 0, samples = 0, series = 0, tracks = 0;
    int maxDepth = 0;
    for (const TrackRow& t : tracks_) {
        slices += qint64(t.slices);
        instants += qint64(t.instants);
        samples += qint64(t.samples);
        if (t.samples > 0) ++series;
        ++tracks;
        maxDepth = std::max(maxDepth, int(t.maxDepth));
    }
    o.insert("tracks", tracks);
    o.insert("slices", slices);
    o.insert("instants", instants);
    o.insert("counters", samples);
    o.insert("counter_series", series);
    o.insert("flows", qint64(flows().size()));
    o.insert("start", qint64(start_));
    o.insert("end", qint64(end_));
    o.insert("duration", qint64(end_ - start_));
    o.insert("time_unit", kTimeUnit);
    o.insert("max_depth", maxDepth);
    QJsonArray top;
    const std::vector<OpStat> ops = opStats();
    for (size_t i = 0; i < ops.size() && int(i) < topOps; ++i) {
        const OpStat& s = ops[i];
        QJsonObject op{{"name", QString::fromStdString(s.name)},
                       {"count", qint64(s.count)},
                       {"total", qint64(s.total)},
                       {"self", qint64(s.self)},
                       {"mean", s.mean()},
                       {"p50", qint64(s.p50)},
                       {"p95", qint64(s.p95)}};
        if (s.aggregated > 0) op.insert("aggregated", qint64(s.aggregated));
        if (s.unended > 0) op.insert("unended", qint64(s.unended));
        top.append(op);
    }
    o.insert("top_ops", top);
    // XProf aggregated events, summed per op (count, summed duration).
    const QJsonValue aggregated = metadata().value("aggregated_ops");
    if (aggregated.isArray()) o.insert("aggregated_ops", aggregated);
    return o;
}

}  // namespace stallscope::trace
