// The parts TraceWriter is made of, each on its own: string interner, spill sorter,
// level-of-detail folding, op statistics, args store (overlays) and flow binding.
#include <zstd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/sqlite.h"
#include "core/trace/args_store.h"
#include "core/trace/external_sorter.h"
#include "core/trace/flow_binder.h"
#include "core/trace/lod_builder.h"
#include "core/trace/op_statistics.h"
#include "core/trace/spill_codec.h"
#include "core/trace/spill_sorter.h"
#include "core/trace/string_interner.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "core/workspace.h"

using namespace stallscope;
using namespace stallscope::trace;

namespace {

// --- spill sorter --------------------------------------------------------------------------------

struct Record {
    int64_t key;
    uint32_t seq;  // unique: records never compare equal unless identical
    uint32_t track;
};
struct RecordOrder {
    bool operator()(const Record& a, const Record& b) const {
        if (a.track != b.track) return a.track < b.track;
        if (a.key != b.key) return a.key < b.key;
        return a.seq < b.seq;
    }
};

// What the sorter hands back for `track`, as (key, seq) pairs.
std::vector<std::pair<int64_t, uint32_t>> visited(SpillSorter<Record, RecordOrder>& sorter,
                                                  uint32_t track) {
    std::vector<std::pair<int64_t, uint32_t>> out;
    sorter.forEach(track, [&](const Record& r) {
        QCOMPARE(r.track, track);
        out.emplace_back(r.key, r.seq);
    });
    return out;
}

// The whole sequence's order (ExternalSorter): by key, then seq.
struct KeySeqOrder {
    bool operator()(const Record& a, const Record& b) const {
        return a.key != b.key ? a.key < b.key : a.seq < b.seq;
    }
};

// Drains a sealed ExternalSorter: it must hand back `records` in Order.
template <class Order>
void expectDrainedInOrder(ExternalSorter<Record, Order>& sorter, std::vector<Record> records) {
    std::sort(records.begin(), records.end(), Order{});
    Record r;
    size_t i = 0;
    while (sorter.next(r)) {
        QVERIFY(i < records.size());
        QCOMPARE(r.key, records[i].key);
        QCOMPARE(r.seq, records[i].seq);
        ++i;
    }
    QCOMPARE(i, records.size());
}

std::vector<std::pair<int64_t, uint32_t>> expected(std::vector<Record> records, uint32_t track) {
    std::sort(records.begin(), records.end(), RecordOrder{});
    std::vector<std::pair<int64_t, uint32_t>> out;
    for (const Record& r : records)
        if (r.track == track) out.emplace_back(r.key, r.seq);
    return out;
}

// --- level of detail -----------------------------------------------------------------------------

// A properly nested random track in nesting order (by start, longer first), instants between:
// depths as the writer gives them.
std::vector<SliceItem> nestedTrack(uint64_t seed, int roots) {
    std::mt19937_64 rng(seed);
    std::vector<SliceItem> items;
    int64_t t = 0;
    // Children fill their parent from its start, each followed by a gap.
    auto fill = [&](auto&& self, int64_t start, int64_t end, uint32_t depth) -> void {
        int64_t at = start;
        while (depth < 4 && at < end) {
            const int64_t room = end - at;
            const int64_t dur = std::min<int64_t>(room, 1 + int64_t(rng() % 300));
            if (rng() % 5 == 0) {
                SliceItem instant;
                instant.kind = ItemKind::Instant;
                instant.start = at;
                instant.depth = depth;
                instant.name = 9;
                items.push_back(instant);
            }
            SliceItem s;
            s.start = at;
            s.dur = dur;
            s.depth = depth;
            s.name = uint32_t(rng() % 5) + 1;
            items.push_back(s);
            if (dur > 8 && rng() % 2 == 0) self(self, at, at + dur, depth + 1);
            at += dur + int64_t(rng() % 50);
        }
    };
    for (int i = 0; i < roots; ++i) {
        const int64_t dur = rng() % 4 == 0 ? int64_t(rng() % 100000) : int64_t(rng() % 3000);
        SliceItem root;
        root.start = t;
        root.dur = dur;
        root.name = 1;
        items.push_back(root);
        fill(fill, t, t + dur, 1);
        t += dur + int64_t(rng() % 5000);
    }
    return items;
}

std::vector<SliceItem> foldDirectly(const std::vector<SliceItem>& items, int level) {
    std::vector<SliceItem> out;
    SliceFolder folder(lodWidth(level));
    auto collect = [&](const SliceItem& item) { out.push_back(item); };
    for (const SliceItem& item : items) folder.add(item, collect);
    folder.finish(collect);
    return out;
}

// The same item, its name aside when `names` is false.
bool sameItem(const SliceItem& a, const SliceItem& b, bool names = true) {
    return a.start == b.start && a.dur == b.dur && (!names || a.name == b.name) &&
           a.depth == b.depth && a.kind == b.kind && a.count == b.count && a.startPs == b.startPs &&
           a.durPs == b.durPs && a.args == b.args;
}

bool isInstantLike(const SliceItem& item) {
    return item.kind == ItemKind::Instant ||
           (item.kind == ItemKind::Folded && item.args == kFoldedInstants);
}

// --- args ----------------------------------------------------------------------------------------

// The entries of a stored args chunk.
std::vector<std::string> chunkEntries(const std::string& packed) {
    const unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
    std::string raw(size_t(size), '\0');
    ZSTD_decompress(raw.data(), raw.size(), packed.data(), packed.size());
    ByteReader in(raw);
    std::vector<std::string> out;
    while (!in.atEnd()) out.emplace_back(in.take(in.varint()));
    return out;
}

// --- flows ---------------------------------------------------------------------------------------

SliceItem slice(int64_t start, int64_t dur, uint32_t depth, uint64_t args = 0, uint16_t durPs = 0) {
    SliceItem s;
    s.start = start;
    s.dur = dur;
    s.depth = depth;
    s.args = args;
    s.durPs = durPs;
    return s;
}

// Feeds one track's items (in nesting order, depths set) to its binder.
void bindTrack(FlowTable& flows, uint32_t track, const std::vector<SliceItem>& items) {
    TrackFlowBinder binder(flows, track);
    QVERIFY(binder.active());
    for (const SliceItem& item : items) {
        binder.before(item.preciseStart());
        if (item.kind == ItemKind::Slice) binder.slice(item);
    }
    binder.finish();
}

// The flows as they would be stored, once the tracks to bind were bound.
std::vector<BoundFlow> boundFlows(FlowTable& flows) {
    flows.leaveUnbound([](uint32_t) { return int64_t(0); });
    std::vector<BoundFlow> out;
    flows.forEachFlow([&](const BoundFlow& f) { out.push_back(f); });
    return out;
}

// A trace profile to write into (inside the caller's transaction).
int64_t traceProfile(Workspace& ws, const char* name) {
    ProfileInfo info;
    info.name = name;
    info.kind = "trace";
    return ws.insertProfile(info);
}

}  // namespace

class TestTraceParts : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    // Ids are dense, stable while the table grows, and texts survive arena blocks filling up.
    void internerIdsStable() {
        StringInterner strings;
        QCOMPARE(strings.intern(""), 0u);
        QCOMPARE(strings.intern("alpha"), 1u);
        QCOMPARE(strings.intern("beta"), 2u);
        QCOMPARE(strings.intern("alpha"), 1u);
        QCOMPARE(strings.intern(std::string("a\0b", 3)), 3u);  // bytes, not C strings
        QCOMPARE(strings.intern("a"), 4u);
        // 100,000 names: the slot table doubles several times, the arena takes new blocks.
        for (int i = 0; i < 100000; ++i)
            QCOMPARE(strings.intern("op " + std::to_string(i)), uint32_t(5 + i));
        const std::string huge(3 << 20, 'x');  // larger than an arena block
        QCOMPARE(strings.intern(huge), 100005u);
        QCOMPARE(strings.size(), size_t(100006));
        QCOMPARE(strings.intern("alpha"), 1u);
        QCOMPARE(strings.intern("op 0"), 5u);
        QCOMPARE(strings.intern("op 99999"), 100004u);
        QCOMPARE(strings.intern(huge), 100005u);
        QCOMPARE(std::string(strings.text(1)), std::string("alpha"));
        QCOMPARE(strings.text(3).size(), size_t(3));
        QCOMPARE(std::string(strings.text(777)), std::string("op 772"));
        QCOMPARE(strings.text(100005).size(), huge.size());
        QCOMPARE(strings.texts().size(), size_t(100006));
        QVERIFY(strings.text(0).empty());
    }

    // Spilled blocks hold each word as its difference from the record before: extreme values
    // (wrapping differences), doubles' bits and padding come back as written; a block cut short
    // or with bytes left over is refused.
    void spillCodecRoundTrips() {
        struct Wide {
            int64_t a;
            double value;
            uint64_t b;
            uint32_t c;
            uint16_t d;
            bool e;
        };
        static_assert(sizeof(Wide) == 32);
        std::vector<Wide> records;
        std::mt19937_64 rng(17);
        const int64_t extremes[] = {0, 1, -1, INT64_MIN, INT64_MAX, INT64_MIN + 1, 1 << 20};
        for (int64_t x : extremes)
            for (int64_t y : extremes) {
                Wide w;
                std::memset(&w, 0, sizeof w);
                w = {x, double(y) * 0.5, uint64_t(y), uint32_t(x), uint16_t(y), (x & 1) != 0};
                records.push_back(w);
            }
        for (int i = 0; i < 500; ++i) {
            Wide w;
            std::memset(&w, 0, sizeof w);
            w = {int64_t(rng()),  std::numeric_limits<double>::quiet_NaN(),
                 rng(),           uint32_t(rng()),
                 uint16_t(rng()), bool(rng() & 1)};
            records.push_back(w);
        }
        std::vector<char> encoded(spill_codec::maxBytes<Wide>(records.size() + 1), 1);
        const size_t bytes = spill_codec::encode(records.data(), records.size(), encoded.data());
        QVERIFY(bytes <= spill_codec::maxBytes<Wide>(records.size()));
        std::fill(encoded.begin() + ptrdiff_t(bytes), encoded.end(), 0);
        std::vector<Wide> back(records.size());
        QVERIFY(spill_codec::decode(encoded.data(), bytes, back.data(), back.size()));
        QCOMPARE(std::memcmp(back.data(), records.data(), records.size() * sizeof(Wide)), 0);
        QVERIFY(!spill_codec::decode(encoded.data(), bytes - 1, back.data(), back.size()));
        QVERIFY(!spill_codec::decode(encoded.data(), bytes, back.data(), back.size() - 1));
        // Records a few apart take a byte or two a word.
        std::vector<Record> close;
        for (uint32_t i = 0; i < 1000; ++i) close.push_back({int64_t(1'000'000 + 7 * i), i, 3});
        std::vector<char> small(spill_codec::maxBytes<Record>(close.size()));
        // The first: 1e6 (zigzag 2e6) in 3 bytes, track 3 above seq 0 (zigzag 6 << 32) in 5; then
        // a byte each for +7 and +1.
        QCOMPARE(spill_codec::encode(close.data(), close.size(), small.data()),
                 size_t(3 + 5 + 999 * 2));
    }

    // Random records over several tracks with a budget of 1024: many sorted runs, merged back
    // in order per track, with what stayed in memory.
    void spillSorterOrdersAcrossSpills() {
        SpillSorter<Record, RecordOrder> sorter(1024);
        std::mt19937_64 rng(3);
        std::vector<Record> records;
        for (uint32_t i = 0; i < 20000; ++i) {
            const Record r{int64_t(rng() % 5000) - 1000, i, uint32_t(rng() % 5)};
            records.push_back(r);
            sorter.push(r);
        }
        QCOMPARE(sorter.runs(), size_t(39));  // 20000 / 512: full half-budget buffers
        QCOMPARE(sorter.records(), uint64_t(20000));
        QVERIFY(sorter.onlyBefore(5));
        QVERIFY(!sorter.onlyBefore(4));
        sorter.seal();
        size_t total = 0;
        for (uint32_t t = 0; t < 5; ++t) {
            const auto got = visited(sorter, t);
            QCOMPARE(got, expected(records, t));
            total += got.size();
        }
        QCOMPARE(total, size_t(20000));
        QVERIFY(visited(sorter, 7).empty());
        // Cleared, the sorter takes new records into the same file.
        sorter.clear();
        QCOMPARE(sorter.records(), uint64_t(0));
        QVERIFY(visited(sorter, 1).empty());
        std::vector<Record> again;
        for (uint32_t i = 0; i < 3000; ++i) {
            const Record r{int64_t(3000 - i), i, 2};
            again.push_back(r);
            sorter.push(r);
        }
        sorter.seal();
        const auto got = visited(sorter, 2);
        QCOMPARE(got.size(), size_t(3000));
        QCOMPARE(got.front().first, int64_t(1));
        QCOMPARE(got.back().first, int64_t(3000));
        QCOMPARE(got, expected(again, 2));
    }

    // Each track in order but tracks interleaved (XProf lines and their lanes): runs are grouped
    // by track instead of sorted, with the same result; an unsorted stretch in the last buffer
    // is sorted in place.
    void spillSorterGroupsTracksInOrder() {
        SpillSorter<Record, RecordOrder> sorter(1024);
        std::mt19937_64 rng(5);
        std::vector<Record> records;
        std::vector<int64_t> next(3, 0);
        for (uint32_t i = 0; i < 5000; ++i) {
            const uint32_t t = uint32_t(rng() % 3);
            next[t] += int64_t(rng() % 10);
            records.push_back({next[t], i, t});
            sorter.push(records.back());
        }
        // The last, partial buffer: out of order in its middle only.
        for (uint32_t i = 0; i < 100; ++i) {
            records.push_back({int64_t(1'000'000 - i), 5000 + i, 1});
            sorter.push(records.back());
        }
        QCOMPARE(sorter.runs(), size_t(9));  // 5100 / 512
        sorter.seal();
        for (uint32_t t = 0; t < 3; ++t) QCOMPARE(visited(sorter, t), expected(records, t));
        QCOMPARE(visited(sorter, 1).back().first, int64_t(1'000'000));
    }

    // Mostly in order with a few records behind their track's last (a parent slice added after
    // its children): those are set aside and merged back, in runs and in what stays in
    // memory, whether a spill came before (grouped into the second buffer) or not (sorted in
    // place). The flow sorter's case too: a second half in order of its own, behind the first.
    void sortersMergeSetAsideRecords() {
        for (const uint32_t count : {300u, 5000u}) {  // under and over half the budget
            SpillSorter<Record, RecordOrder> sorter(1024);
            std::mt19937_64 rng(count);
            std::vector<Record> records;
            std::vector<int64_t> next(4, 100);
            for (uint32_t i = 0; i < count; ++i) {
                const uint32_t t = uint32_t(rng() % 4);
                next[t] += int64_t(rng() % 4);
                // Every 17th record of a track starts before the track's last one.
                const int64_t key = i % 17 == 0 ? next[t] - int64_t(rng() % 50) : next[t];
                records.push_back({key, i, t});
                sorter.push(records.back());
            }
            QCOMPARE(sorter.records(), uint64_t(count));
            sorter.seal();
            for (uint32_t t = 0; t < 4; ++t) QCOMPARE(visited(sorter, t), expected(records, t));
        }
        for (const uint32_t half : {200u, 3000u}) {
            ExternalSorter<Record, KeySeqOrder> sorter(1024);
            std::vector<Record> records;
            for (uint32_t i = 0; i < half; ++i) records.push_back({int64_t(2 * i), i, 0});
            for (uint32_t i = 0; i < half; ++i)
                records.push_back({int64_t(2 * i + 1), half + i, 0});
            records.push_back({-5, 2 * half, 0});
            for (const Record& r : records) sorter.push(r);
            QCOMPARE(sorter.size(), uint64_t(2 * half + 1));
            sorter.seal();
            expectDrainedInOrder(sorter, records);
        }
    }

    // Two readers of one track side by side (a flow binder's enclosing and next-slice ends)
    // see what forEach sees.
    void spillSorterReadersSideBySide() {
        SpillSorter<Record, RecordOrder> sorter(1024);
        std::mt19937_64 rng(11);
        std::vector<Record> records;
        for (uint32_t i = 0; i < 5000; ++i) {
            records.push_back({int64_t(rng() % 900), i, uint32_t(rng() % 2)});
            sorter.push(records.back());
        }
        sorter.seal();
        SpillSorter<Record, RecordOrder>::Reader zero(sorter, 0), one(sorter, 1);
        std::vector<std::pair<int64_t, uint32_t>> gotZero, gotOne;
        while (zero.peek() || one.peek()) {
            if (const Record* r = zero.peek()) {
                gotZero.emplace_back(r->key, r->seq);
                zero.pop();
            }
            if (const Record* r = one.peek()) {
                gotOne.emplace_back(r->key, r->seq);
                one.pop();
            }
        }
        QCOMPARE(gotZero, expected(records, 0));
        QCOMPARE(gotOne, expected(records, 1));
        SpillSorter<Record, RecordOrder>::Reader none(sorter, 5);
        QVERIFY(!none.peek());
    }

    // The whole sequence in order across runs on disk and the rest in memory.
    void externalSorterMergesRuns() {
        ExternalSorter<Record, KeySeqOrder> sorter(1024);
        std::mt19937_64 rng(7);
        std::vector<Record> records;
        for (uint32_t i = 0; i < 10000; ++i) {
            records.push_back({int64_t(rng() % 3000) - 1500, i, 0});
            sorter.push(records.back());
        }
        QCOMPARE(sorter.runs(), size_t(19));  // 10000 / 512
        QCOMPARE(sorter.size(), uint64_t(10000));
        sorter.seal();
        expectDrainedInOrder(sorter, records);
        ExternalSorter<Record, KeySeqOrder> empty(1024);
        empty.seal();
        Record r;
        QVERIFY(!empty.next(r));
        // Runs that continue one another (keys growing through the input), the last one
        // overlapping the rest in memory: the same order as a sort.
        ExternalSorter<Record, KeySeqOrder> growing(1024);
        std::vector<Record> ordered;
        for (uint32_t k = 0; k < 3000; ++k) ordered.push_back({int64_t(k / 3), k, 0});
        for (uint32_t k = 0; k < 40; ++k) ordered.push_back({int64_t(k * 25), 3000 + k, 0});
        for (const Record& o : ordered) growing.push(o);
        QCOMPARE(growing.runs(), size_t(5));  // 3040 / 512
        growing.seal();
        expectDrainedInOrder(growing, ordered);
    }

    void levelsChosenAndSized() {
        QCOMPARE(topLevelFor(1), 1);
        QCOMPARE(topLevelFor(4), 1);
        QCOMPARE(topLevelFor(5), 2);
        QCOMPARE(topLevelFor(17), 3);
        QCOMPARE(topLevelFor(INT64_MAX), kMaxLevel);
        // Kept: a level at most half the last kept one.
        QCOMPARE(chooseLevels(100, {0, 60, 50, 20, 10, 9}), (std::vector<int>{0, 2, 3, 4}));
        QCOMPARE(chooseLevels(3, {0, 3, 2}), (std::vector<int>{0}));
    }

    // Width 16: narrow items starting in one bucket fold into a counted item named after the
    // longest; a slice at least 16 long stays itself and ends the run at its depth; depths and
    // instants fold apart.
    void sliceFolderFoldsNarrowRuns() {
        std::vector<SliceItem> items = {
            slice(0, 2, 0),  slice(3, 5, 0),  slice(10, 3, 0), slice(20, 40, 0),  // wide: itself
            slice(21, 2, 1), slice(25, 1, 1),  // depth 1, bucket 1
            slice(64, 1, 0),                   // alone in its bucket
        };
        items[0].name = 1;
        items[1].name = 2;
        items[2].name = 3;
        SliceItem instant;
        instant.kind = ItemKind::Instant;
        instant.start = 22;
        instant.depth = 1;
        items.insert(items.begin() + 5, instant);
        std::vector<SliceItem> out = foldDirectly(items, 2);  // lodWidth(2) == 16
        QCOMPARE(out.size(), size_t(5));
        QCOMPARE(out[0].kind, ItemKind::Folded);
        QCOMPARE(out[0].start, int64_t(0));
        QCOMPARE(out[0].dur, int64_t(13));  // to the latest end of its members
        QCOMPARE(out[0].count, uint64_t(3));
        QCOMPARE(out[0].name, 2u);  // the longest member
        QVERIFY(sameItem(out[1], items[3]));
        // finish() closes the open runs by depth, slices before instants.
        QCOMPARE(out[2].kind, ItemKind::Slice);  // 64: the one item of its run
        QCOMPARE(out[2].start, int64_t(64));
        QCOMPARE(out[3].kind, ItemKind::Folded);
        QCOMPARE(out[3].depth, 1u);
        QCOMPARE(out[3].count, uint64_t(2));
        QCOMPARE(out[3].start, int64_t(21));
        QCOMPARE(out[3].dur, int64_t(5));
        QCOMPARE(out[4].kind, ItemKind::Instant);
        QCOMPARE(out[4].start, int64_t(22));
    }

    // The invariant the levels keep, on random nested tracks at every level: counts add up,
    // each level-0 item is a member of exactly one item of its depth (runs taken in order), a
    // folded item spans exactly its members (first start to latest end) whose starts share one
    // bucket and is named after one of them, wide slices stay themselves; and the cascade gives
    // per depth what folding level 0 gives, folded items' names aside (see lod_builder.h).
    void lodFoldingInvariant() {
        for (const uint64_t seed : {1, 2, 3}) {
            const std::vector<SliceItem> levelZero = nestedTrack(seed, 400);
            const int64_t span = levelZero.back().end() - levelZero.front().start;
            const int top = topLevelFor(span);
            QVERIFY(top >= 8);
            std::vector<int> all;
            for (int k = 0; k <= top; ++k) all.push_back(k);
            std::map<int, std::vector<SliceItem>> cascaded;
            LevelBuilder<SliceFolder, SliceItem, std::function<void(int, const SliceItem&)>> build(
                all, [&](int level, const SliceItem& item) { cascaded[level].push_back(item); });
            LevelCounter<SliceFolder, SliceItem> counter(span);
            for (const SliceItem& item : levelZero) {
                build.add(item);
                counter.add(item);
            }
            build.finish();
            counter.finish(levelZero.size());
            for (int k = 1; k <= top; ++k) {
                const std::vector<SliceItem> direct = foldDirectly(levelZero, k);
                const std::vector<SliceItem>& level = cascaded[k];
                QCOMPARE(level.size(), direct.size());
                QCOMPARE(counter.count(k), uint64_t(direct.size()));
                // Per depth and kind the same items in the same order (runs of different
                // depths close in a different order).
                auto byStream = [](const std::vector<SliceItem>& items) {
                    std::map<std::pair<uint32_t, bool>, std::vector<SliceItem>> out;
                    for (const SliceItem& item : items)
                        out[{item.depth, isInstantLike(item)}].push_back(item);
                    return out;
                };
                const auto cascadedStreams = byStream(level), directStreams = byStream(direct);
                QCOMPARE(cascadedStreams.size(), directStreams.size());
                for (const auto& [key, items] : directStreams) {
                    const std::vector<SliceItem>& other = cascadedStreams.at(key);
                    QCOMPARE(other.size(), items.size());
                    for (size_t i = 0; i < items.size(); ++i)
                        QVERIFY(sameItem(other[i], items[i], items[i].count == 1));
                }
                // Members: per (depth, instants or not), level-0 items in order, taken by count.
                const int64_t width = lodWidth(k);
                std::map<std::pair<uint32_t, bool>, std::vector<const SliceItem*>> streams;
                for (const SliceItem& item : levelZero)
                    streams[{item.depth, isInstantLike(item)}].push_back(&item);
                std::map<std::pair<uint32_t, bool>, size_t> taken;
                uint64_t counted = 0;
                for (const SliceItem& item : level) {
                    const auto key = std::make_pair(item.depth, isInstantLike(item));
                    const std::vector<const SliceItem*>& stream = streams[key];
                    size_t& next = taken[key];
                    QVERIFY(next + item.count <= stream.size());
                    int64_t end = INT64_MIN;
                    bool named = false;
                    for (size_t m = next; m < next + item.count; ++m) {
                        end = std::max(end, stream[m]->end());
                        named = named || stream[m]->name == item.name;
                        if (item.count > 1) {
                            QVERIFY(stream[m]->kind == ItemKind::Instant || stream[m]->dur < width);
                            QCOMPARE(stream[m]->start >> std::countr_zero(uint64_t(width)),
                                     item.start >> std::countr_zero(uint64_t(width)));
                        }
                    }
                    QCOMPARE(item.start, stream[next]->start);
                    if (item.count == 1) {
                        QVERIFY(sameItem(item, *stream[next]));
                    } else {
                        QCOMPARE(item.kind, ItemKind::Folded);
                        QCOMPARE(item.end(), end);
                        QVERIFY(named);
                    }
                    next += item.count;
                    counted += item.count;
                }
                QCOMPARE(counted, uint64_t(levelZero.size()));
                for (const auto& [key, stream] : streams) QCOMPARE(taken[key], stream.size());
            }
        }
    }

    // Counter buckets: first time, last value, min, max, count; the cascade agrees with folding
    // the samples directly.
    void counterFolding() {
        std::vector<CounterItem> samples;
        std::mt19937_64 rng(9);
        for (int i = 0; i < 5000; ++i) {
            CounterItem s;
            s.ts = int64_t(i) * 7 + int64_t(rng() % 5);
            s.value = s.min = s.max = double(rng() % 100);
            samples.push_back(s);
        }
        std::map<int, std::vector<CounterItem>> cascaded;
        const std::vector<int> levels{0, 2, 3, 5};
        LevelBuilder<CounterFolder, CounterItem, std::function<void(int, const CounterItem&)>>
            build(levels, [&](int level, const CounterItem& c) { cascaded[level].push_back(c); });
        for (const CounterItem& s : samples) build.add(s);
        build.finish();
        for (const int k : {2, 3, 5}) {
            std::vector<CounterItem> direct;
            CounterFolder folder(lodWidth(k));
            auto collect = [&](const CounterItem& c) { direct.push_back(c); };
            for (const CounterItem& s : samples) folder.add(s, collect);
            folder.finish(collect);
            QCOMPARE(cascaded[k].size(), direct.size());
            uint64_t count = 0;
            for (size_t i = 0; i < direct.size(); ++i) {
                QCOMPARE(cascaded[k][i].ts, direct[i].ts);
                QCOMPARE(cascaded[k][i].value, direct[i].value);
                QCOMPARE(cascaded[k][i].min, direct[i].min);
                QCOMPARE(cascaded[k][i].max, direct[i].max);
                QCOMPARE(cascaded[k][i].count, direct[i].count);
                count += direct[i].count;
            }
            QCOMPARE(count, uint64_t(samples.size()));
        }
        // One bucket of width 16 by hand.
        CounterFolder folder(16);
        std::vector<CounterItem> out;
        auto collect = [&](const CounterItem& c) { out.push_back(c); };
        for (const auto& [ts, v] :
             std::vector<std::pair<int64_t, double>>{{16, 5}, {18, 1}, {20, 9}, {31, 4}, {32, 7}}) {
            CounterItem s;
            s.ts = ts;
            s.value = s.min = s.max = v;
            folder.add(s, collect);
        }
        folder.finish(collect);
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(out[0].ts, int64_t(16));
        QCOMPARE(out[0].value, 4.0);
        QCOMPARE(out[0].min, 1.0);
        QCOMPARE(out[0].max, 9.0);
        QCOMPARE(out[0].count, uint64_t(4));
        QCOMPARE(out[1].ts, int64_t(32));
    }

    // Count, total (exact in ps, rounded), self, min/max of rounded durations, nearest-rank
    // percentiles over the slices on the timeline; aggregates and unended slices apart.
    void opStatisticsExact() {
        OpStatistics ops;
        ops.reserveNames(4);
        for (int d = 1; d <= 100; ++d) ops.addSlice(1, d, 0);
        ops.addSelf(1, 70);
        ops.addSelf(1, 30);
        for (int i = 0; i < 3; ++i) ops.addSlice(2, 0, 400);  // 0.4 ns each: rounded to 0
        ops.addSlice(2, 2, 600);                              // 2.6 ns: rounded to 3
        ops.addAggregate(2, 10, 1000, 900);
        ops.addUnended(3);
        ops.addUnended(3);
        ops.addAggregate(3, 5, 50, 40);
        std::vector<PackedOp> seen;
        ops.forEachOp([&](const PackedOp& op) { seen.push_back(op); });
        QCOMPARE(seen.size(), size_t(3));
        QCOMPARE(seen[0].name, 1u);
        QCOMPARE(seen[0].count, uint64_t(100));
        QCOMPARE(seen[0].total, int64_t(5050));
        QCOMPARE(seen[0].self, int64_t(100));
        QCOMPARE(seen[0].min, int64_t(1));
        QCOMPARE(seen[0].max, int64_t(100));
        QCOMPARE(seen[0].p50, int64_t(50));
        QCOMPARE(seen[0].p95, int64_t(95));
        QCOMPARE(seen[1].name, 2u);
        QCOMPARE(seen[1].count, uint64_t(14));           // 4 on the timeline, 10 aggregated
        QCOMPARE(seen[1].total, int64_t(1000 + 2 + 2));  // 2 ns + 1.8 ns of remainders, rounded
        QCOMPARE(seen[1].self, int64_t(900));
        QCOMPARE(seen[1].min, int64_t(0));
        QCOMPARE(seen[1].max, int64_t(3));
        QCOMPARE(seen[1].p50, int64_t(0));  // rank 2 of (0, 0, 0, 3)
        QCOMPARE(seen[1].p95, int64_t(3));
        // Only aggregates on the timeline's side: no durations, min/max/percentiles 0.
        QCOMPARE(seen[2].name, 3u);
        QCOMPARE(seen[2].count, uint64_t(5));
        QCOMPARE(seen[2].total, int64_t(50));
        QCOMPARE(seen[2].min, int64_t(0));
        QCOMPARE(seen[2].max, int64_t(0));
        QCOMPARE(seen[2].p95, int64_t(0));
        QCOMPARE(ops.unended(), uint64_t(2));
        std::vector<std::pair<uint32_t, uint64_t>> unended;
        ops.forEachUnended([&](uint32_t name, uint64_t n) { unended.emplace_back(name, n); });
        QCOMPARE(unended, (std::vector<std::pair<uint32_t, uint64_t>>{{3, 2}}));
        QVERIFY(ops.percentilesExact());
    }

    // Exact percentiles of more than 2^20 durations are selected on two threads: the same
    // nearest ranks, each name with its own durations.
    void opStatisticsExactOnTwoThreads() {
        OpStatistics ops;
        ops.reserveNames(6);
        std::mt19937_64 rng(5);
        std::vector<int64_t> durations(400000);
        for (uint32_t name = 1; name <= 4; ++name) {
            for (size_t i = 0; i < durations.size(); ++i)
                durations[i] = int64_t(i + 1) * name;  // 1..400000, times the name
            std::shuffle(durations.begin(), durations.end(), rng);
            for (const int64_t d : durations) ops.addSlice(name, d, 0);
        }
        ops.addSlice(5, 7, 0);
        std::vector<PackedOp> seen;
        ops.forEachOp([&](const PackedOp& op) { seen.push_back(op); });
        QCOMPARE(seen.size(), size_t(5));
        for (uint32_t name = 1; name <= 4; ++name) {
            const PackedOp& op = seen[name - 1];
            QCOMPARE(op.name, name);
            QCOMPARE(op.count, uint64_t(400000));
            QCOMPARE(op.p50, int64_t(200000) * name);  // rank ceil(0.5 n) - 1
            QCOMPARE(op.p95, int64_t(380000) * name);
            QCOMPARE(op.max, int64_t(400000) * name);
        }
        QCOMPARE(seen[4].p50, int64_t(7));
        QVERIFY(ops.percentilesExact());
    }

    // Past the budget of exact durations every op switches to log histograms: percentiles
    // within about 1%, exact below 1024 ns.
    void opStatisticsHistograms() {
        OpStatistics ops(100);
        for (int d = 1; d <= 100; ++d) ops.addSlice(1, d, 0);
        QVERIFY(ops.percentilesExact());
        for (int i = 1; i <= 1000; ++i) ops.addSlice(2, int64_t(i) * 1000, 0);
        QVERIFY(!ops.percentilesExact());
        std::vector<PackedOp> seen;
        ops.forEachOp([&](const PackedOp& op) { seen.push_back(op); });
        QCOMPARE(seen[0].p50, int64_t(50));  // linear buckets below 1024 ns
        QCOMPARE(seen[0].p95, int64_t(95));
        QVERIFY2(std::abs(double(seen[1].p50) / 500000.0 - 1) < 0.011,
                 qPrintable(QString::number(seen[1].p50)));
        QVERIFY2(std::abs(double(seen[1].p95) / 950000.0 - 1) < 0.011,
                 qPrintable(QString::number(seen[1].p95)));
        QCOMPARE(seen[1].min, int64_t(1000));  // min, max and totals stay exact
        QCOMPARE(seen[1].max, int64_t(1000000));
        QCOMPARE(seen[1].total, int64_t(500500000));
        for (const int64_t d : {int64_t(1024), int64_t(12345), int64_t(1) << 40}) {
            const double back = double(OpStatistics::histogramValue(OpStatistics::histogramKey(d)));
            QVERIFY(std::abs(back / double(d) - 1) < 0.011);
        }
    }

    // The table-driven key is floor(64 log2 d) as std::log2 gives it, at every bucket's edges
    // (the durations the table was bisected for, and their neighbours) and between them.
    void opStatisticsKeyMatchesLog2() {
        auto byLog2 = [](int64_t d) {
            return d < 1024 ? d : 1024 + int64_t(std::floor(std::log2(double(d)) * 64.0));
        };
        uint64_t state = 0x9e3779b97f4a7c15ull;
        uint64_t checked = 0;
        for (int e = 10; e < 63; ++e) {
            for (int j = 0; j <= 64; ++j) {
                const double edge = std::exp2(double(e) + double(j) / 64.0);
                if (edge >= 9.2e18) continue;
                const auto at = int64_t(edge);
                for (int64_t delta = -3; delta <= 3; ++delta) {
                    QCOMPARE(OpStatistics::histogramKey(at + delta), byLog2(at + delta));
                    ++checked;
                }
            }
            for (int i = 0; i < 2000; ++i) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                const int64_t d =
                    int64_t((uint64_t(1) << e) | ((state >> 1) & ((uint64_t(1) << e) - 1)));
                QCOMPARE(OpStatistics::histogramKey(d), byLog2(d));
                ++checked;
            }
        }
        QCOMPARE(OpStatistics::histogramKey(INT64_MAX), byLog2(INT64_MAX));
        QVERIFY(checked > 100000);
    }

    // Past the switch durations reach the histograms in batches (more than one batch here, and
    // split over two statistics merged): the percentiles are those of counting every duration's
    // bucket at once.
    void opStatisticsBatchedHistograms() {
        OpStatistics first(1000), second(1000);
        std::vector<std::vector<int64_t>> keys(3);
        uint64_t state = 12345;
        for (int i = 0; i < 2'500'000; ++i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const auto name = uint32_t((state >> 20) % 3);
            // Name 0 short (linear buckets), 1 over four decades, 2 far apart (sorted, not
            // counted).
            const int64_t d = name == 0   ? int64_t((state >> 33) % 900)
                              : name == 1 ? int64_t(1000 + (state >> 33) % 10'000'000)
                                          : int64_t((state >> 33) % 2 ? 5 : int64_t(1) << 50);
            (i % 3 == 0 ? first : second).addSlice(name, d, 0);
            keys[name].push_back(OpStatistics::histogramKey(d));
        }
        first.merge(second);
        QVERIFY(!first.percentilesExact());
        std::vector<PackedOp> seen;
        first.forEachOp([&](const PackedOp& op) { seen.push_back(op); });
        QCOMPARE(seen.size(), size_t(3));
        for (uint32_t name = 0; name < 3; ++name) {
            std::vector<int64_t>& k = keys[name];
            std::sort(k.begin(), k.end());
            auto rank = [&](double p) { return size_t(std::ceil(p * double(k.size()))) - 1; };
            QCOMPARE(seen[name].count, uint64_t(k.size()));
            QCOMPARE(seen[name].p50, OpStatistics::histogramValue(k[rank(0.5)]));
            QCOMPARE(seen[name].p95, OpStatistics::histogramValue(k[rank(0.95)]));
        }
        QCOMPARE(seen[2].p95,
                 OpStatistics::histogramValue(OpStatistics::histogramKey(int64_t(1) << 50)));
    }

    // Entries numbered from 1, kArgsPerChunk to a chunk stored in order; an overlay entry is
    // kArgsOverlay, the base id, then its own object; over base 0 it is a plain entry.
    void argsStoreChunksAndOverlays() {
        std::vector<std::pair<int64_t, std::string>> stored;
        ArgsStore args(
            [&](int64_t seq, const std::string& packed) { stored.emplace_back(seq, packed); });
        QCOMPARE(args.add(R"({"a":1})"), uint64_t(1));
        QCOMPARE(args.addOver(1, R"({"b":2})"), uint64_t(2));
        QCOMPARE(args.addOver(0, R"({"c":3})"), uint64_t(3));
        for (int i = 4; i <= 2500; ++i)
            QCOMPARE(args.add("{\"i\":" + std::to_string(i) + "}"), uint64_t(i));
        QCOMPARE(args.addOver(300, R"({"x":0})"), uint64_t(2501));
        args.finish();
        QCOMPARE(args.count(), uint64_t(2501));
        QCOMPARE(stored.size(), size_t(3));
        for (size_t i = 0; i < stored.size(); ++i) QCOMPARE(stored[i].first, int64_t(i));
        const std::vector<std::string> first = chunkEntries(stored[0].second);
        QCOMPARE(first.size(), kArgsPerChunk);
        QCOMPARE(first[0], std::string(R"({"a":1})"));
        QCOMPARE(first[1], std::string("\x01\x01") + R"({"b":2})");
        QCOMPARE(first[2], std::string(R"({"c":3})"));
        QCOMPARE(first[1023], std::string(R"({"i":1024})"));
        const std::vector<std::string> last = chunkEntries(stored[2].second);
        QCOMPARE(last.size(), size_t(2501 - 2048));
        QCOMPARE(last.back(), std::string("\x01\xac\x02") + R"({"x":0})");  // varint 300
    }

    // Overlays read back merged: own members first and winning, then the base's, through
    // overlays of overlays and across chunks.
    void argsOverlaysReadBack() {
        auto ws = Workspace::open(dir_.filePath("args.sqlite").toStdString());
        sql::Transaction tx(ws->db());
        const int64_t id = traceProfile(*ws, "args");
        TraceWriter writer(*ws, id);
        const uint64_t base = writer.addArgs(R"({"op":"fusion","flops":10,"bytes":20})");
        const uint64_t event = writer.addArgsOver(base, R"({"flops":12,"step":3})");
        const uint64_t deeper = writer.addArgsOver(event, R"({"step":4,"core":"1"})");
        const uint64_t plain = writer.addArgsOver(0, R"({"only":true})");
        for (int i = 0; i < 1500; ++i) writer.addArgs("{}");
        const uint64_t far = writer.addArgsOver(base, R"({"bytes":0})");  // another chunk
        const uint64_t empty = writer.addArgsOver(base, "{}");
        TrackSpec spec;
        const uint32_t t = writer.addTrack(spec);
        writer.addSlice(t, 0, 10, writer.intern("s"), deeper);
        writer.finish([](double) {});
        tx.commit();
        TraceStore store(*ws, id);
        QCOMPARE(store.args(base), std::string(R"({"op":"fusion","flops":10,"bytes":20})"));
        QCOMPARE(store.args(event),
                 std::string(R"({"flops":12,"step":3,"op":"fusion","bytes":20})"));
        QCOMPARE(store.args(deeper),
                 std::string(R"({"step":4,"core":"1","flops":12,"op":"fusion","bytes":20})"));
        QCOMPARE(store.args(plain), std::string(R"({"only":true})"));
        QCOMPARE(far, uint64_t(1505));
        QCOMPARE(store.args(far), std::string(R"({"bytes":0,"op":"fusion","flops":10})"));
        QCOMPARE(store.args(empty), std::string(R"({"op":"fusion","flops":10,"bytes":20})"));
        QCOMPARE(store.args(0), std::string());
    }

    // Packed overlays (typed values under a layout's keys) read back as the text overlays they
    // stand for, whole and by member; a HostRecording-style sink (the default) stores the text.
    void argsPackedReadBack() {
        auto ws = Workspace::open(dir_.filePath("packed.sqlite").toStdString());
        sql::Transaction tx(ws->db());
        const int64_t id = traceProfile(*ws, "packed");
        TraceWriter writer(*ws, id);
        const uint64_t base = writer.addArgs("{\"op\":\"fusion\",\"flops\":10}");
        const uint32_t numbers =
            writer.addArgsLayout({"\"flops\":", "\"offset\":", "\"ratio\":", "\"inf\":"});
        const uint32_t named = writer.addArgsLayout({"\"name\":", "\"id\":"});
        const double ratio = 0.1, infinite = std::numeric_limits<double>::infinity();
        ArgValue values[4];
        values[0] = {ArgValue::Kind::Unsigned, uint64_t(1) << 40, {}};
        values[1] = {ArgValue::Kind::Signed, uint64_t(int64_t(-300)), {}};
        values[2].kind = values[3].kind = ArgValue::Kind::Double;
        std::memcpy(&values[2].number, &ratio, 8);
        std::memcpy(&values[3].number, &infinite, 8);
        const uint64_t event = writer.addArgsPacked(base, numbers, values, 4);
        ArgValue text[2] = {{ArgValue::Kind::String, 0, "a \"quoted\"\n name"},
                            {ArgValue::Kind::Unsigned, 7, {}}};
        const uint64_t alone = writer.addArgsPacked(0, named, text, 2);
        // More values than fit the entry made on the stack: the general encoding.
        std::vector<std::string> manyKeys;
        std::vector<ArgValue> many;
        for (int i = 0; i < 20; ++i) {
            manyKeys.push_back("\"k" + std::to_string(i) + "\":");
            many.push_back({ArgValue::Kind::Signed, uint64_t(int64_t(-i)), {}});
        }
        const uint64_t wide =
            writer.addArgsPacked(base, writer.addArgsLayout(manyKeys), many.data(), many.size());
        writer.finish([](double) {});
        tx.commit();
        TraceStore store(*ws, id);
        QCOMPARE(
            store.args(event),
            std::string("{\"flops\":1099511627776,\"offset\":-300,\"ratio\":0.10000000000000001,"
                        "\"inf\":null,\"op\":\"fusion\"}"));
        QCOMPARE(store.args(alone),
                 std::string("{\"name\":\"a \\\"quoted\\\"\\n name\",\"id\":7}"));
        QCOMPARE(store.argsMember(event, "offset").value(), std::string("\"offset\":-300"));
        uint64_t holder = 0;
        QCOMPARE(store.argsMember(event, "op", &holder).value(), std::string("\"op\":\"fusion\""));
        QCOMPARE(holder, base);
        QVERIFY(!store.argsMember(alone, "op"));
        const std::string wideText = store.args(wide);
        QVERIFY(wideText.starts_with("{\"k0\":0,\"k1\":-1,"));
        QVERIFY(wideText.ends_with("\"k19\":-19,\"op\":\"fusion\",\"flops\":10}"));
        // The text a sink without packed storage keeps is the same.
        QCOMPARE(packedArgsText({"\"name\":", "\"id\":"}, text, 2),
                 std::string("{\"name\":\"a \\\"quoted\\\"\\n name\",\"id\":7}"));
    }

    // Enclosing ends bind to the deepest slice open at their time; a slice ending exactly then
    // does not enclose, unless it is a zero-length slice at that time. A source leaves at its
    // slice's end (rounded up to whole ns), a destination enters at its start.
    void flowBindingEnclosing() {
        // budget: ends held in memory by each sorter (1024 at the least)
        auto table = [](size_t budget, size_t padding) {
            auto flows = std::make_unique<FlowTable>(budget);
            auto enclosing = [](int64_t ts) { return FlowEnd{0, ts, FlowBinding::Enclosing, 0}; };
            const FlowEnd elsewhere{1, 5, FlowBinding::Enclosing, 0};
            flows->add(enclosing(130), elsewhere, 1);  // 0: in B, nested in A
            flows->add(elsewhere, enclosing(110), 1);  // 1: in A only (B starts at 120)
            flows->add(enclosing(200), elsewhere, 1);  // 2: where A ends: nothing encloses it
            flows->add(elsewhere, enclosing(300), 1);  // 3: the zero-length Z at 300, not P
            flows->add(enclosing(351), elsewhere, 1);  // 4: in Q, ending at 400.2 ns
            flows->add(elsewhere, enclosing(900), 1);  // 5: after every slice
            flows->add(elsewhere, enclosing(-5), 1);   // 6: before every slice
            // Flows on a third track (more than a budget of them: spilled runs to merge).
            for (size_t i = 0; i < padding; ++i)
                flows->add({2, int64_t(i % 7), FlowBinding::Enclosing, 0},
                           {2, int64_t(i), FlowBinding::Enclosing, 0}, 2);
            flows->seal();
            return flows;
        };
        const std::vector<SliceItem> items = {
            slice(100, 100, 0),         // A [100, 200)
            slice(120, 40, 1),          // B [120, 160)
            slice(250, 50, 0),          // P [250, 300)
            slice(300, 0, 0),           // Z, zero-length at 300
            slice(350, 50, 0, 0, 200),  // Q [350, 400.2)
        };
        for (const size_t padding : {size_t(0), size_t(3000)}) {
            auto flows = table(1024, padding);
            bindTrack(*flows, 0, items);
            bindTrack(*flows, 1, {slice(0, 10, 0)});
            const std::vector<BoundFlow> got = boundFlows(*flows);
            QCOMPARE(got.size(), 7 + padding);
            QCOMPARE(got[0].fromTs, int64_t(160));
            QCOMPARE(got[0].fromDepth, 1);
            QCOMPARE(got[0].toTs, int64_t(0));  // a destination enters at the start
            QCOMPARE(got[0].toDepth, 0);
            QCOMPARE(got[1].toTs, int64_t(100));
            QCOMPARE(got[1].toDepth, 0);
            QCOMPARE(got[2].fromTs, int64_t(200));
            QCOMPARE(got[2].fromDepth, -1);
            QCOMPARE(got[3].toTs, int64_t(300));
            QCOMPARE(got[3].toDepth, 0);
            QCOMPARE(got[4].fromTs, int64_t(401));
            QCOMPARE(got[4].fromDepth, 0);
            QCOMPARE(got[5].toTs, int64_t(900));
            QCOMPARE(got[5].toDepth, -1);
            QCOMPARE(got[6].toDepth, -1);
            QCOMPARE(got[6].fromTrack, 1u);
            QCOMPARE(got[6].toTrack, 0u);
            // 2, 5 and 6, and every flow on the track never bound.
            QCOMPARE(flows->unbound(), uint64_t(3 + padding));
            if (padding > 0) {
                QCOMPARE(got[7 + 2999].toTs, int64_t(2999));  // unbound: keep their times
                QCOMPARE(got[7 + 2999].fromTs, int64_t(2999 % 7));
                QCOMPARE(got[7 + 2999].name, 2u);
            }
        }
        // Track 1 never bound: its ends attach to nothing, and every flow counts as unbound.
        auto flows = table(1, 0);
        bindTrack(*flows, 0, items);
        const std::vector<BoundFlow> got = boundFlows(*flows);
        QCOMPARE(got[0].fromTs, int64_t(160));
        QCOMPARE(got[0].toTs, int64_t(5));
        QCOMPARE(got[0].toDepth, -1);
        QCOMPARE(flows->unbound(), uint64_t(7));
    }

    // NextSlice ends bind to the first slice starting at or after them (instants do not
    // count); Slice ends to the slice starting at their time with their args id, dense ids
    // grouped by id and sparse ones by time.
    void flowBindingNextAndExact() {
        FlowTable flows;
        const FlowEnd other{1, 0, FlowBinding::NextSlice, 0};
        auto next = [](int64_t ts) { return FlowEnd{0, ts, FlowBinding::NextSlice, 0}; };
        flows.add(other, next(5), 1);    // 0: the slice at 10 (the instant at 7 is skipped)
        flows.add(other, next(10), 1);   // 1: the slice at 10 itself
        flows.add(next(11), other, 1);   // 2: the child at 12, depth 1: leaves at its end, 14
        flows.add(other, next(500), 1);  // 3: nothing starts after 500
        flows.seal();
        SliceItem instant;
        instant.kind = ItemKind::Instant;
        instant.start = 7;
        bindTrack(flows, 0, {instant, slice(10, 20, 0), slice(12, 2, 1), slice(40, 5, 0)});
        const std::vector<BoundFlow> got = boundFlows(flows);
        QCOMPARE(got[0].toTs, int64_t(10));
        QCOMPARE(got[0].toDepth, 0);
        QCOMPARE(got[1].toTs, int64_t(10));
        QCOMPARE(got[2].fromTs, int64_t(14));
        QCOMPARE(got[2].fromDepth, 1);
        QCOMPARE(got[3].toTs, int64_t(500));
        QCOMPARE(got[3].toDepth, -1);

        for (const bool dense : {true, false}) {
            const uint64_t a = 7, b = dense ? 8 : 1'000'000;
            FlowTable exact;
            auto at = [](int64_t ts, uint64_t args) {
                return FlowEnd{0, ts, FlowBinding::Slice, args};
            };
            exact.add(at(100, a), at(100, b), 1);               // two slices start at 100: by args
            exact.add(at(100, b), at(200, a), 1);               // a's slice starts at 100, not 200
            exact.add(at(100, dense ? 9 : 99), at(100, a), 1);  // no slice carries 9 or 99
            exact.seal();
            bindTrack(exact, 0, {slice(100, 50, 0, a), slice(100, 20, 1, b), slice(200, 5, 0, b)});
            const std::vector<BoundFlow> e = boundFlows(exact);
            QCOMPARE(e[0].fromTs, int64_t(150));
            QCOMPARE(e[0].fromDepth, 0);
            QCOMPARE(e[0].toTs, int64_t(100));
            QCOMPARE(e[0].toDepth, 1);
            QCOMPARE(e[1].fromTs, int64_t(120));
            QCOMPARE(e[1].fromDepth, 1);
            QCOMPARE(e[1].toTs, int64_t(200));
            QCOMPARE(e[1].toDepth, -1);
            QCOMPARE(e[2].fromDepth, -1);
            QCOMPARE(e[2].toDepth, 0);
            QCOMPARE(exact.unbound(), uint64_t(2));
        }
    }

    // Ranged reads choose chunks by their times: a long slice in the first chunk is found from
    // a window near the end, chunks wholly before or after a window are skipped, and nothing
    // is found outside the track's time.
    void rangedReadsFindChunksByTime() {
        auto ws = Workspace::open(dir_.filePath("ranged.sqlite").toStdString());
        sql::Transaction tx(ws->db());
        ProfileInfo info;
        info.name = "ranged";
        info.kind = "trace";
        const int64_t id = ws->insertProfile(info);
        TraceWriter writer(*ws, id);
        const uint32_t track = writer.addTrack(TrackSpec{});
        const uint32_t longName = writer.intern("long"), shortName = writer.intern("short");
        const int64_t count = 3 * int64_t(kChunkItems);  // at least three chunks of level 0
        writer.addSlice(track, 0, 10 * count + 5, longName);
        for (int64_t i = 0; i < count; ++i) writer.addSlice(track, 10 * i + 1, 5, shortName);
        writer.finish([](double) {});
        tx.commit();
        TraceStore store(*ws, id);
        const int64_t late = 10 * (count - 1) + 2;  // inside the last short slice
        const std::vector<SliceItem> atLate = store.slices(track, late, late, 0);
        QCOMPARE(atLate.size(), size_t(2));
        QCOMPARE(atLate[0].name, longName);
        QCOMPARE(atLate[1].start, 10 * (count - 1) + 1);
        QCOMPARE(store.slices(track, 10 * 2500 + 7, 10 * 2600, 0).size(), size_t(1 + 99));
        QVERIFY(store.slices(track, -100, -1, 0).empty());
        QVERIFY(store.slices(track, 10 * count + 6, 10 * count + 100, 0).empty());
        // The same window again (the chunk times are kept) gives the same slices.
        QCOMPARE(store.slices(track, late, late, 0).size(), size_t(2));
    }

    // Through the writer: ends bind as their tracks are written, and flows left unbound are
    // counted in the summary.
    void flowsUnboundCountedByWriter() {
        auto ws = Workspace::open(dir_.filePath("flows.sqlite").toStdString());
        sql::Transaction tx(ws->db());
        ProfileInfo info;
        info.name = "flows";
        info.kind = "trace";
        const int64_t id = ws->insertProfile(info);
        TraceWriter writer(*ws, id);
        TrackSpec spec;
        const uint32_t a = writer.addTrack(spec), b = writer.addTrack(spec);
        const uint32_t name = writer.intern("flow");
        writer.addSlice(a, 100, 100, writer.intern("launch"));
        writer.addSlice(b, 250, 50, writer.intern("kernel"));
        writer.addSlice(b, 300, 0, writer.intern("Stream Wait Event"));
        writer.addFlow({a, 150, FlowBinding::Enclosing}, {b, 300, FlowBinding::Enclosing}, name);
        writer.addFlow({a, 150, FlowBinding::Enclosing}, {b, 260, FlowBinding::NextSlice}, name);
        writer.addFlow({a, 150, FlowBinding::Enclosing}, {b, 400, FlowBinding::NextSlice}, name);
        writer.addFlow({a, 50, FlowBinding::Enclosing}, {b, 200, FlowBinding::NextSlice}, name);
        const TraceSummary summary = writer.finish([](double) {});
        tx.commit();
        QCOMPARE(summary.flows, uint64_t(4));
        QCOMPARE(summary.unboundFlows, uint64_t(2));
        TraceStore store(*ws, id);
        const auto& rows = store.flows();
        QCOMPARE(rows.size(), size_t(4));
        // The launch's end to the zero-length wait at 300, not to the kernel ending then.
        QCOMPARE(rows[0].fromTs, int64_t(200));
        QCOMPARE(rows[0].fromDepth, 0);
        QCOMPARE(rows[0].toTs, int64_t(300));
        QCOMPARE(rows[0].toDepth, 0);
        QCOMPARE(rows[1].toTs, int64_t(300));  // the next slice: the wait
        QCOMPARE(rows[1].toDepth, 0);
        QCOMPARE(rows[2].toTs, int64_t(400));  // nothing starts at or after 400
        QCOMPARE(rows[2].toDepth, -1);
        QCOMPARE(rows[3].fromTs, int64_t(50));  // nothing encloses 50
        QCOMPARE(rows[3].fromDepth, -1);
        QCOMPARE(rows[3].toTs, int64_t(250));
        QCOMPARE(rows[3].toDepth, 0);
    }
};

QTEST_GUILESS_MAIN(TestTraceParts)
#include "test_trace_parts.moc"
