// Trace storage: nesting, level-of-detail folding, spilled runs, op statistics, find, args.
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "core/errors.h"
#include "core/sqlite.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"
#include "core/workspace.h"

using namespace stallscope;
using namespace stallscope::trace;

namespace {

// Writes the same random nested trace with the given in-memory budget; returns the profile id.
int64_t writeTrace(Workspace& ws, size_t budget, int slicesPerTrack, TraceSummary* summary) {
    sql::Transaction tx(ws.db());
    ProfileInfo info;
    info.name = ws.uniqueName("model");
    info.kind = "trace";
    const int64_t id = ws.insertProfile(info);
    TraceWriter writer(ws, id, budget);
    TrackSpec process;
    process.kind = TrackKind::Process;
    process.name = "p";
    const uint32_t p = writer.addTrack(process);
    std::mt19937_64 rng(7);
    for (int t = 0; t < 2; ++t) {
        TrackSpec thread;
        thread.parent = p;
        thread.name = "t" + std::to_string(t);
        const uint32_t track = writer.addTrack(thread);
        // Parents of 1000 ns holding two children of 100-300 ns, emitted children first
        // (as Chrome X events often are) so the writer has to sort.
        for (int i = 0; i < slicesPerTrack / 3; ++i) {
            const int64_t start = int64_t(i) * 2000;
            const int64_t a = 100 + int64_t(rng() % 200), b = 100 + int64_t(rng() % 200);
            writer.addSlice(track, start + 600, b, writer.intern("child b"));
            writer.addSlice(track, start + 100, a, writer.intern("child a"));
            writer.addSlice(track, start, 1000, writer.intern(i % 2 ? "odd" : "even"),
                            i == 0 ? writer.addArgs(R"({"first":true})") : 0);
        }
    }
    TrackSpec counter;
    counter.parent = p;
    counter.kind = TrackKind::Counter;
    counter.name = "c";
    const uint32_t c = writer.addTrack(counter);
    for (int i = 0; i < 5000; ++i) writer.addCounter(c, int64_t(i) * 100, double(i % 10));
    *summary = writer.finish([](double) {});
    tx.commit();
    return id;
}

// How writeInterleaved hands its slices over: to the sorter, or as direct tracks (finished one
// by one as they are complete, or all at finish()), with slices that force a direct track back
// to the sorter.
struct Handover {
    bool direct = false;
    bool finishEach = false;  // finishTracks for each track once its last slice is added
    bool lateSlice = false;   // track 0 gets a slice before its last one at the end
    bool instant = false;     // track 1 gets an instant
    int rounds = 9000;
    bool announce = false;  // track 0 announced (reserveSlices) with all its slices
};

// Three tracks whose slices come interleaved but each track in time order (as XProf lines and
// their lanes do): spilled runs are grouped by track instead of sorted.
int64_t writeInterleaved(Workspace& ws, size_t budget, Handover handover = {}) {
    sql::Transaction tx(ws.db());
    ProfileInfo info;
    info.name = ws.uniqueName("interleaved");
    info.kind = "trace";
    const int64_t id = ws.insertProfile(info);
    TraceWriter writer(ws, id, budget);
    writer.setDirectTracks(handover.direct);
    std::vector<uint32_t> tracks;
    for (int t = 0; t < 3; ++t) {
        TrackSpec thread;
        thread.name = "t" + std::to_string(t);
        tracks.push_back(writer.addTrack(thread));
    }
    if (handover.announce) writer.reserveSlices(tracks[0], size_t(handover.rounds));
    std::mt19937_64 rng(11);
    std::vector<int64_t> next(3, 0);
    for (int i = 0; i < handover.rounds; ++i) {
        const size_t t = rng() % 3;
        const int finishAt = handover.rounds * 2 / 3;
        if (handover.finishEach && i > finishAt && t == 2) continue;  // track 2 is complete
        const int64_t start = next[t];
        // A parent and, every other time, a child starting with it (same start, shorter).
        writer.addSlice(tracks[t], start, 500, writer.intern("parent"), 0, uint16_t(i % 7));
        if (i % 2 == 0) writer.addSlice(tracks[t], start, 200, writer.intern("child"));
        next[t] = start + 500 + int64_t(rng() % 100);
        if (handover.finishEach && i == finishAt) writer.finishTracks({tracks[2]});
    }
    if (handover.lateSlice)
        writer.addSlice(tracks[0], 1000, 10, writer.intern("late"), writer.addArgs("{\"a\":1}"));
    if (handover.instant) writer.addInstant(tracks[1], 2000, writer.intern("mark"));
    if (handover.finishEach) writer.finishTracks({tracks[0], tracks[1]});
    writer.finish([](double) {});
    tx.commit();
    return id;
}

// Track `track` of two profiles holds the same items at `resolution` (0: the slices; above, a
// level's folded items too) and, when asked, the same args.
void compareSlices(const TraceStore& a, const TraceStore& b, int64_t track, bool withArgs,
                   double resolution = 0) {
    const auto ta = a.slices(track, 0, INT64_MAX / 2, resolution);
    const auto tb = b.slices(track, 0, INT64_MAX / 2, resolution);
    QCOMPARE(tb.size(), ta.size());
    for (size_t i = 0; i < ta.size(); ++i) {
        QCOMPARE(tb[i].start, ta[i].start);
        QCOMPARE(tb[i].dur, ta[i].dur);
        QCOMPARE(tb[i].startPs, ta[i].startPs);
        QCOMPARE(tb[i].depth, ta[i].depth);
        QCOMPARE(tb[i].count, ta[i].count);
        QCOMPARE(int(tb[i].kind), int(ta[i].kind));
        QCOMPARE(b.text(tb[i].name), a.text(ta[i].name));
        if (withArgs) QCOMPARE(b.args(tb[i].args), a.args(ta[i].args));
    }
}

}  // namespace

class TestTraceModel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void nestingStatsAndSpill() {
        auto ws = Workspace::open(dir_.filePath("a.sqlite").toStdString());
        TraceSummary inMemory, spilled;
        const int64_t a = writeTrace(*ws, size_t(1) << 20, 30000, &inMemory);
        const int64_t b = writeTrace(*ws, 1024, 30000, &spilled);  // many spilled runs
        QCOMPARE(inMemory.slices, uint64_t(60000));
        QCOMPARE(spilled.slices, uint64_t(60000));
        QCOMPARE(inMemory.maxDepth, 1u);
        QCOMPARE(inMemory.overlapping, uint64_t(0));
        TraceStore sa(*ws, a), sb(*ws, b);
        const auto t0a = sa.slices(1, 0, INT64_MAX / 2, 0);
        const auto t0b = sb.slices(1, 0, INT64_MAX / 2, 0);
        QCOMPARE(t0a.size(), size_t(30000));
        QCOMPARE(t0b.size(), t0a.size());
        for (size_t i = 0; i < t0a.size(); ++i) {
            QCOMPARE(t0b[i].start, t0a[i].start);
            QCOMPARE(t0b[i].depth, t0a[i].depth);
        }
        QCOMPARE(t0a[0].depth, 0u);
        QCOMPARE(sa.text(t0a[0].name), std::string("even"));
        QCOMPARE(t0a[1].depth, 1u);
        QCOMPARE(sa.args(t0a[0].args), std::string(R"({"first":true})"));
        // Op statistics: 10000 "even"+"odd" parents of 1000 ns each per track.
        const auto ops = sa.opStats();
        const auto even =
            std::find_if(ops.begin(), ops.end(), [](const OpStat& s) { return s.name == "even"; });
        QCOMPARE(even->count, uint64_t(10000));
        QCOMPARE(even->total, int64_t(10000) * 1000);
        QCOMPARE(even->p50, int64_t(1000));
        QCOMPARE(even->p95, int64_t(1000));
        const auto childA = std::find_if(ops.begin(), ops.end(),
                                         [](const OpStat& s) { return s.name == "child a"; });
        QVERIFY(childA->p50 >= 100 && childA->p50 < 300);
        QVERIFY(childA->p95 >= childA->p50);
        // Self time of parents = duration minus their two children.
        int64_t childTotal = 0;
        for (const auto& s : ops)
            if (s.name.starts_with("child")) childTotal += s.total;
        int64_t parentSelf = 0;
        for (const auto& s : ops)
            if (s.name == "even" || s.name == "odd") parentSelf += s.self;
        QCOMPARE(parentSelf, int64_t(20000) * 1000 - childTotal);
    }

    void interleavedTracksSpillGrouped() {
        auto ws = Workspace::open(dir_.filePath("i.sqlite").toStdString());
        const int64_t a = writeInterleaved(*ws, size_t(1) << 20);
        const int64_t b = writeInterleaved(*ws, 1024);  // many runs, each grouped by track
        TraceStore sa(*ws, a), sb(*ws, b);
        for (int64_t track = 0; track < 3; ++track) {
            QVERIFY(sa.track(track)->slices > 2000);
            compareSlices(sa, sb, track, false);
        }
    }

    void directTracksMatchSorted() {
        // Direct tracks (held as added, written on a worker once finished) store exactly what
        // the sorter does, including when a track falls back to the sorter: a slice out of
        // order, an instant, more slices held than the budget.
        auto ws = Workspace::open(dir_.filePath("direct.sqlite").toStdString());
        uint64_t compared = 0;
        const auto compare = [&](int64_t a, int64_t b) {
            TraceStore sa(*ws, a), sb(*ws, b);
            compared = 0;
            for (int64_t track = 0; track < 3; ++track) {
                compareSlices(sa, sb, track, true);
                QCOMPARE(sb.track(track)->maxDepth, sa.track(track)->maxDepth);
                QCOMPARE(sb.track(track)->levels, sa.track(track)->levels);
                QVERIFY(sa.track(track)->levels.size() > 2);
                const size_t items = sa.slices(track, 0, INT64_MAX / 2, 0).size();
                compared += items;
                // The higher levels too (built from the held slices of a direct track).
                for (const double resolution : {20000.0, 500000.0}) {
                    QVERIFY(sa.slices(track, 0, INT64_MAX / 2, resolution).size() < items / 4);
                    compareSlices(sa, sb, track, false, resolution);
                }
            }
            const auto oa = sa.opStats(), ob = sb.opStats();
            QCOMPARE(ob.size(), oa.size());
            for (size_t i = 0; i < oa.size(); ++i) {
                QCOMPARE(ob[i].name, oa[i].name);
                QCOMPARE(ob[i].count, oa[i].count);
                QCOMPARE(ob[i].total, oa[i].total);
                QCOMPARE(ob[i].self, oa[i].self);
                QCOMPARE(ob[i].p50, oa[i].p50);
                QCOMPARE(ob[i].p95, oa[i].p95);
            }
        };
        const size_t budget = size_t(1) << 20;
        Handover handover;
        handover.rounds = 90000;
        handover.finishEach = true;
        const int64_t sorted = writeInterleaved(*ws, budget, handover);
        handover.direct = true;
        compare(sorted, writeInterleaved(*ws, budget, handover));
        QCOMPARE(compared, uint64_t(119863));
        // Held past the budget: every track goes to the sorter (spilled runs) part way; one
        // announced larger than the budget goes there from its first slice.
        compare(sorted, writeInterleaved(*ws, 1024, handover));
        QCOMPARE(compared, uint64_t(119863));
        handover.announce = true;
        compare(sorted, writeInterleaved(*ws, 1024, handover));
        handover.announce = false;
        QCOMPARE(compared, uint64_t(119863));
        handover.lateSlice = handover.instant = true;
        handover.direct = false;
        const int64_t sortedLate = writeInterleaved(*ws, budget, handover);
        handover.direct = true;
        compare(sortedLate, writeInterleaved(*ws, budget, handover));
        QCOMPARE(compared, uint64_t(119865));
        // Not finished early: written from their held slices by finish().
        handover.finishEach = handover.direct = false;
        const int64_t sortedAll = writeInterleaved(*ws, budget, handover);
        handover.direct = true;
        compare(sortedAll, writeInterleaved(*ws, budget, handover));
        QCOMPARE(compared, uint64_t(135002));
        // A track finished early is closed: a slice added to it afterwards is refused.
        sql::Transaction tx(ws->db());
        ProfileInfo info;
        info.name = "closed";
        info.kind = "trace";
        TraceWriter writer(*ws, ws->insertProfile(info));
        writer.setDirectTracks(true);
        const uint32_t t = writer.addTrack(TrackSpec{});
        writer.addSlice(t, 0, 10, writer.intern("a"));
        writer.finishTracks({t});
        QVERIFY_THROWS_EXCEPTION(Failure, writer.addSlice(t, 20, 10, writer.intern("b")));
    }

    void lodPreservesCountsAndBoundsItems() {
        auto ws = Workspace::open(dir_.filePath("b.sqlite").toStdString());
        TraceSummary summary;
        const int64_t id = writeTrace(*ws, size_t(1) << 20, 300000, &summary);
        TraceStore store(*ws, id);
        const TrackRow* t = store.track(1);
        QVERIFY(t->levels.size() > 2);
        for (const double resolution : {0.0, 50.0, 1000.0, 20000.0, 1e6, 1e9}) {
            const auto items = store.slices(1, t->start, t->end, resolution);
            uint64_t count = 0;
            for (const auto& it : items) count += it.count;
            QCOMPARE(count, t->slices);  // folding never loses a slice
            if (resolution >= 1000.0) {
                // O(pixels x depth): at most a few items per bucket of the level per depth.
                const double buckets =
                    double(t->end - t->start) / double(lodWidth(store.levelFor(*t, resolution)));
                QVERIFY2(double(items.size()) <= 4 * (buckets + 1) * (t->maxDepth + 1),
                         qPrintable(QString("%1 items at %2").arg(items.size()).arg(resolution)));
            }
        }
        // A window in the middle at 1600 px returns only what overlaps it.
        const int64_t from = 100'000'000, to = 101'000'000;
        const auto window = store.slices(1, from, to, double(to - from) / 1600);
        QVERIFY(!window.empty());
        for (const auto& it : window) QVERIFY(it.start <= to && it.end() >= from);
        // The same window's level 0 a chunk at a time: every stored item overlapping it (found
        // here by filtering the whole level), in the order `slices` returns them, no chunk
        // empty; a window after the track visits nothing.
        const int64_t wideTo = from + 20'000'000;
        std::vector<SliceItem> whole, chunked;
        store.forEachChunk(1, [&](const std::vector<SliceItem>& chunk) {
            for (const SliceItem& it : chunk)
                if (it.start <= wideTo && it.end() >= from) whole.push_back(it);
        });
        size_t visits = 0;
        store.forEachChunkIn(1, from, wideTo, [&](const std::vector<SliceItem>& chunk) {
            QVERIFY(!chunk.empty());
            ++visits;
            chunked.insert(chunked.end(), chunk.begin(), chunk.end());
        });
        QVERIFY2(visits > 1, qPrintable(QString::number(visits)));
        QCOMPARE(chunked.size(), whole.size());
        const auto sorted = store.slices(1, from, wideTo, 0);
        QCOMPARE(sorted.size(), chunked.size());
        for (size_t i = 0; i < chunked.size(); ++i) {
            QCOMPARE(chunked[i].start, sorted[i].start);
            QCOMPARE(chunked[i].name, sorted[i].name);
            QCOMPARE(chunked[i].depth, sorted[i].depth);
        }
        size_t after = 0;
        store.forEachChunkIn(1, t->end + 1, t->end + 1000,
                             [&](const std::vector<SliceItem>&) { ++after; });
        QCOMPARE(after, size_t(0));
        QVERIFY2(chunked.size() > 1000, qPrintable(QString::number(chunked.size())));
        // Counters: samples, and per-bucket min/max at coarse resolution.
        const auto raw = store.counters(3, 0, 10'000, 0);
        QCOMPARE(raw.size(), size_t(101));
        const auto coarse = store.counters(3, 0, 500'000, 100'000);
        QVERIFY(coarse.size() < 40);
        QCOMPARE(coarse[1].min, 0.0);
        QCOMPARE(coarse[1].max, 9.0);
    }

    void findNextAndPrevious() {
        auto ws = Workspace::open(dir_.filePath("c.sqlite").toStdString());
        TraceSummary summary;
        const int64_t id = writeTrace(*ws, size_t(1) << 20, 30000, &summary);
        TraceStore store(*ws, id);
        auto next = store.find("ODD", 0, true);  // case-insensitive substring
        QVERIFY(next);
        QCOMPARE(next->slice.start, int64_t(2000));
        next = store.find("odd", 2000, true);
        QCOMPARE(next->slice.start, int64_t(6000));
        const auto previous = store.find("odd", 6000, false);
        QCOMPARE(previous->slice.start, int64_t(2000));
        QVERIFY(!store.find("no such op", 0, true));
        const QJsonObject info = store.infoJson();
        QCOMPARE(info.value("slices").toInt(), 60000);
        QCOMPARE(info.value("counters").toInt(), 5000);
        QCOMPARE(info.value("tracks").toInt(), 4);
    }

    void picosecondsNestAndRoundTrip() {
        // Parent 10.100-10.600 ns, child 10.200-10.500 ns, then a 0.3 ns slice at 10.600: in
        // whole ns the child would end at the parent's end and the last slice would vanish.
        auto ws = Workspace::open(dir_.filePath("d.sqlite").toStdString());
        sql::Transaction tx(ws->db());
        ProfileInfo info;
        info.name = "ps";
        info.kind = "trace";
        const int64_t id = ws->insertProfile(info);
        TraceWriter writer(*ws, id);
        TrackSpec spec;
        const uint32_t t = writer.addTrack(spec);
        writer.addSlice(t, 10, 0, writer.intern("child"), 0, 200, 300);
        writer.addSlice(t, 10, 0, writer.intern("parent"), 0, 100, 500);
        writer.addSlice(t, 10, 0, writer.intern("after"), 0, 600, 300);
        writer.addSlice(t, 20, 5, writer.intern("whole"));
        const TraceSummary summary = writer.finish([](double) {});
        tx.commit();
        QCOMPARE(summary.overlapping, uint64_t(0));
        QCOMPARE(summary.end, int64_t(25));
        TraceStore store(*ws, id);
        const auto items = store.slices(int64_t(t), 0, 100, 0);
        QCOMPARE(items.size(), size_t(4));
        QCOMPARE(store.text(items[0].name), std::string("parent"));
        QCOMPARE(int(items[0].startPs), 100);
        QCOMPARE(int(items[0].durPs), 500);
        QCOMPARE(items[0].depth, 0u);
        QCOMPARE(store.text(items[1].name), std::string("child"));
        QCOMPARE(items[1].depth, 1u);
        QCOMPARE(items[1].durNs(), 0.3);
        QCOMPARE(store.text(items[2].name), std::string("after"));
        QCOMPARE(items[2].depth, 0u);  // 10.6 ns: the parent has ended
        QCOMPARE(int(items[2].startPs), 600);
        QCOMPARE(items[2].end(), int64_t(11));  // 10.9 ns, rounded up
        QCOMPARE(items[3].dur, int64_t(5));     // whole-ns slices carry no remainder
        QVERIFY(!items[3].hasPs());
        // Encoding: a whole-ns slice costs nothing extra; one with picoseconds, two varints.
        ByteWriter plain, precise;
        encodeSlices({items[3]}, plain);
        encodeSlices({items[2]}, precise);
        std::vector<SliceItem> back;
        decodeSlices(precise.bytes(), back);
        QCOMPARE(back.at(0).startPs, items[2].startPs);
        QCOMPARE(back.at(0).durPs, items[2].durPs);
        QCOMPARE(back.at(0).kind, ItemKind::Slice);
        QCOMPARE(plain.size(), size_t(6));     // start, dur, name, depth, tag, args: a byte each
        QCOMPARE(precise.size(), size_t(10));  // plus 600 and 300 ps, two bytes each
        // Statistics: exact totals in ps rounded to ns.
        const auto ops = store.opStats();
        const auto parent = std::find_if(ops.begin(), ops.end(),
                                         [](const OpStat& o) { return o.name == "parent"; });
        QCOMPARE(parent->total, int64_t(1));  // 0.5 ns rounds up
    }
};

QTEST_GUILESS_MAIN(TestTraceModel)
#include "test_trace_model.moc"
