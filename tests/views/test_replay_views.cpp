// Replay views: DMA geometry per WAIT case and backtails, hit-testing, suggestion ghosts,
// heatmap colours, rendered images at known pixels, level-of-detail folding and `render`.
#include <QApplication>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <random>

#include "core/replay/generate.h"
#include "core/replay/jsonl_writer.h"
#include "core/replay/simulate.h"
#include "core/replay/whatif.h"
#include "importers/replay/replay_reader.h"
#include "views/common/timeline_lod.h"
#include "views/common/timeline_view.h"
#include "views/replay/replay_dcache_view.h"
#include "views/replay/replay_document.h"
#include "views/replay/replay_overview.h"
#include "views/replay/replay_profile_tab.h"
#include "views/replay/replay_render.h"
#include "views/replay/replay_tracks.h"

using namespace stallscope;

namespace {

// Three DMAs on hbm->dcache (base latency 400, 64 B/cycle: 4096 B transfer in 64 cycles), one
// per WAIT case. DMA 3's ISSUE reads s5, loaded from the data DMA 1 brought in, so its backtail
// ends at DMA 1's WAIT.
const char* kTinyTrace =
    R"({"record":"machine","name":"tiny","clock_ghz":2.0,"spaces":[{"name":"hbm","bytes":1048576},{"name":"dcache","bytes":1048576}],"links":[{"src":"hbm","dst":"dcache","base_latency":400,"bytes_per_cycle":64}],"dcache":{"space":"dcache","page_bytes":512,"bucket_pages":256},"lightweight":["mov","add"]}
{"record":"hlo","id":1,"name":"fusion.load","category":"data"}
{"record":"hlo","id":2,"name":"matmul.main","category":"compute"}
{"record":"instr","i":0,"op":"add","unit":"scalar","hlo":1,"wr":["s1"]}
{"record":"instr","i":1,"op":"dma.issue","unit":"dma","hlo":1,"dma":{"id":1,"src":["hbm",0,4096],"dst":["dcache",0,4096]}}
{"record":"instr","i":2,"op":"dma.wait","unit":"dma","hlo":1,"wait":1}
{"record":"instr","i":3,"op":"dma.issue","unit":"dma","hlo":1,"dma":{"id":2,"src":["hbm",8192,4096],"dst":["dcache",8192,4096]}}
{"record":"instr","i":4,"op":"matmul","unit":"mxu","hlo":2,"cost":420,"busy":420,"mrd":[["dcache",0,4096]]}
{"record":"instr","i":5,"op":"dma.wait","unit":"dma","hlo":2,"wait":2}
{"record":"instr","i":6,"op":"sld","unit":"scalar","hlo":2,"rd":["s1"],"wr":["s5"],"mrd":[["dcache",0,64]]}
{"record":"instr","i":7,"op":"dma.issue","unit":"dma","hlo":2,"rd":["s5"],"dma":{"id":3,"src":["hbm",16384,4096],"dst":["dcache",16384,4096]}}
{"record":"instr","i":8,"op":"vadd","unit":"vpu","hlo":2,"cost":600,"busy":600,"mrd":[["dcache",8192,4096]]}
{"record":"instr","i":9,"op":"dma.wait","unit":"dma","hlo":2,"wait":3}
{"record":"instr","i":10,"op":"vadd","unit":"vpu","hlo":2,"cost":10,"busy":10,"mrd":[["dcache",16384,4096]]}
)";

ReplayDocumentPtr tinyDocument(const QString& dir) {
    const std::string path = (dir + "/tiny.jsonl").toStdString();
    std::ofstream(path) << kTinyTrace;
    InputFile input(path);
    return buildReplayDocument(readReplayJsonl(input), std::nullopt);
}

bool near(double a, double b, double tolerance = 0.01) {
    return std::abs(a - b) <= tolerance;
}

QColor pixel(const QImage& image, QPointF p) {
    return image.pixelColor(p.toPoint());
}

}  // namespace

class TestReplayViews : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void tinyTraceTimings();
    void dmaSegmentsForEachWaitCase();
    void backtailReachesTheEarliestLegalPoint();
    void hitTestingFindsTheDmaUnderTheMouse();
    void foldingPreservesCounts();
    void busyPrefixMatchesExactBusyTime();
    void renderedTimelineShowsSegmentsAtKnownPixels();
    void renderedUtilizationAndOverview();
    void heatmapCellColours();
    void dcacheSelectionUpdatesStatistics();
    void clickingASuggestionShowsItsGhost();
    void previewStacksTheResimulatedTimeline();
    void applyStoresADerivedProfile();
    void renderCommandWritesRequestedSize();
    void crowdedCompletionsBecomeAStrip();
    void dcacheStripLinesUpWithTheTimeline();
    void negativeTimesGetAMinusSign();

  private:
    QTemporaryDir dir_;
    ReplayDocumentPtr tiny_;
};

void TestReplayViews::initTestCase() {
    QVERIFY(dir_.isValid());
    tiny_ = tinyDocument(dir_.path());
}

void TestReplayViews::tinyTraceTimings() {
    // DOMAIN.md §1 by hand: issue n+1 = cycle(n) + cost(n) + stall(n).
    const auto& d = tiny_->analysis.sim.dmas;
    QCOMPARE(d[0].issueCycle, 1u);
    QCOMPARE(d[0].readyCycle, 401u);
    QCOMPARE(d[0].completeCycle, 465u);
    QCOMPARE(d[0].waitCycle, 2u);
    QCOMPARE(d[0].baseStall, 399u);     // wait before ready: green
    QCOMPARE(d[0].transferStall, 64u);  // and purple
    QCOMPARE(d[1].issueCycle, 466u);    // the WAIT at 2 resumes at 465, plus its cost
    QCOMPARE(d[1].completeCycle, 930u);
    QCOMPARE(d[1].waitCycle, 887u);  // 467 + 420
    QCOMPARE(d[1].baseStall, 0u);
    QCOMPARE(d[1].transferStall, 43u);  // purple only
    QCOMPARE(d[2].issueCycle, 932u);
    QCOMPARE(d[2].completeCycle, 1396u);
    QCOMPARE(d[2].waitCycle, 1533u);  // 933 + 600
    QCOMPARE(d[2].slack, 137u);       // no stall: hatched slack
    QCOMPARE(tiny_->totalCycles(), 1544.0);
}

void TestReplayViews::dmaSegmentsForEachWaitCase() {
    // 0.5 px per cycle from x = 100.
    const TimeMapping m{{0, 2000}, 100, 1000};
    const QRectF bar(100, 10, 1000, 12);
    const auto& d = tiny_->analysis.sim.dmas;
    // Base-latency + transfer stall.
    DmaSegments s = dmaSegments(d[0], 1, m, bar);
    QVERIFY(near(s.base.left(), 100.5) && near(s.base.right(), 300.5));
    QVERIFY(near(s.transfer.left(), 300.5) && near(s.transfer.right(), 332.5));
    QVERIFY(s.queue.isNull());
    QVERIFY(near(s.baseStall.left(), 101) && near(s.baseStall.right(), 300.5));
    QVERIFY(near(s.baseStall.top(), 16) && near(s.baseStall.height(), 6));  // lower half
    QVERIFY(near(s.transferStall.left(), 300.5) && near(s.transferStall.right(), 332.5));
    QVERIFY(s.slack.isNull());
    QVERIFY(near(s.waitX, 101));
    // Transfer stall only.
    s = dmaSegments(d[1], 466, m, bar);
    QVERIFY(s.baseStall.isNull());
    QVERIFY(near(s.transferStall.left(), 543.5) && near(s.transferStall.right(), 565));
    QVERIFY(s.slack.isNull());
    // Slack: no stall, hatched [complete, wait].
    s = dmaSegments(d[2], 932, m, bar);
    QVERIFY(s.baseStall.isNull() && s.transferStall.isNull());
    QVERIFY(near(s.slack.left(), 798) && near(s.slack.right(), 866.5));
    QVERIFY(s.backtail.isNull());  // backtail == issue: nothing to draw
}

void TestReplayViews::backtailReachesTheEarliestLegalPoint() {
    const auto& deps = tiny_->analysis.deps.dmas;
    // DMA 3's address comes from a load of DMA 1's data: legal once DMA 1 completed (465).
    QCOMPARE(deps[2].backtailCycle, 465u);
    QCOMPARE(deps[0].backtailCycle, 0u);
    const TimeMapping m{{0, 2000}, 100, 1000};
    const QRectF bar(100, 10, 1000, 12);
    const DmaSegments s =
        dmaSegments(tiny_->analysis.sim.dmas[2], double(deps[2].backtailCycle), m, bar);
    QVERIFY(near(s.backtail.x1(), 332.5));  // x(465)
    QVERIFY(near(s.backtail.x2(), 566));    // x(932), the ISSUE
    QVERIFY(near(s.backtail.y1(), 16));     // mid-height
}

void TestReplayViews::hitTestingFindsTheDmaUnderTheMouse() {
    TimelineView view;
    view.setAsynchronous(false);
    const ReplayTracks tracks = installReplayTracks(view, tiny_);
    view.resize(1200, 600);
    view.setWindow({0, 2000});
    view.prepareNow(view.viewport()->size());
    QCOMPARE(tracks.lanes.size(), size_t(1));
    const QRect laneRect = view.trackRect(tracks.lanes[0].get());
    QVERIFY(!laneRect.isEmpty());
    const TimeMapping m = view.mappingFor(view.viewport()->size());
    const double y = tracks.lanes[0]->barRect(laneRect, 0).center().y();
    // Middle of DMA 2's transfer stall.
    auto hit = view.itemAt(QPoint(int(m.x(900)), int(y)));
    QVERIFY(hit.has_value());
    QCOMPARE(hit->track, tracks.lanes[0].get());
    QCOMPARE(hit->item.id, int64_t(1));
    QCOMPARE(hit->item.start, 466.0);
    QCOMPARE(hit->item.end, 930.0);
    // DMA 3's slack belongs to DMA 3.
    hit = view.itemAt(QPoint(int(m.x(1450)), int(y)));
    QVERIFY(hit && hit->item.id == 2);
    // Past the last DMA: nothing.
    QVERIFY(!view.itemAt(QPoint(int(m.x(1800)), int(y))));
    // The HLO band: matmul.main run.
    const QRect hloRect = view.trackRect(tracks.hlo.get());
    hit = view.itemAt(QPoint(int(m.x(1000)), hloRect.center().y()));
    QVERIFY(hit && hit->track == tracks.hlo.get());
    QCOMPARE(hit->item.start, 467.0);
    QVERIFY(hit->track->details(hit->item).contains({"HLO op", "matmul.main"}));
    // Clicking selects and the details list every DMA field.
    view.select(hit->track, hit->item);
    QCOMPARE(view.selection()->item.start, 467.0);
    const DetailFields fields = tracks.lanes[0]->details(tracks.lanes[0]->itemFor(0));
    QVERIFY(fields.contains({"base-latency stall", "399"}));
    QVERIFY(fields.contains({"transfer stall", "64"}));
    QVERIFY(fields.contains({"wait cycle", "2"}));
}

void TestReplayViews::foldingPreservesCounts() {
    std::mt19937_64 random(7);
    std::vector<double> starts, ends;
    double t = 0;
    for (int i = 0; i < 20000; ++i) {
        t += double(random() % 50);
        const double length = double(random() % 30);
        starts.push_back(t);
        ends.push_back(t + length);
        t += length;
    }
    for (double minSpan : {0.5, 3.0, 40.0, 700.0, 1e6}) {
        for (TimeRange window :
             {TimeRange{0, t}, TimeRange{1000, 5000}, TimeRange{t / 2, t / 2 + 77}}) {
            size_t visible = 0;
            for (size_t i = 0; i < starts.size(); ++i)
                if (ends[i] > window.start && starts[i] <= window.end) ++visible;
            size_t counted = 0, items = 0;
            double lastEnd = -1;
            foldRow(starts, ends, window, minSpan,
                    [&](size_t first, size_t count, double s, double e) {
                        QVERIFY(count >= 1);
                        QCOMPARE(s, starts[first]);
                        QVERIFY(e >= ends[first + count - 1]);
                        QVERIFY(s >= lastEnd - 1e-9);  // items come in time order
                        lastEnd = e;
                        counted += count;
                        ++items;
                    });
            QCOMPARE(counted, visible);
            // Folded items are at least minSpan apart: the frame is O(window / minSpan).
            QVERIFY(items <= visible);
            // At most one folded and one wide item per minSpan of window.
            QVERIFY(double(items) <= 2 * (window.length() / minSpan) + 3);
        }
    }
}

void TestReplayViews::busyPrefixMatchesExactBusyTime() {
    BusyPrefix prefix(10, 100);
    prefix.addBusy(5, 25);
    prefix.addBusy(40, 41);
    prefix.finish();
    QCOMPARE(prefix.busyBetween(0, 1000), 21.0);
    QCOMPARE(prefix.busyBetween(0, 10), 5.0);
    QCOMPARE(prefix.busyBetween(10, 20), 10.0);
    QCOMPARE(prefix.busyBetween(40, 50), 1.0);
    // The unit track's exact path agrees with the instructions: mxu busy 420 of [466, 886).
    UnitTrack mxu(tiny_, 0);
    QCOMPARE(tiny_->units[0].name, QString("mxu"));
    QCOMPARE(mxu.busyBetween(0, 2000), 420.0);
    QCOMPARE(mxu.busyBetween(600, 700), 100.0);
    const auto frame = mxu.prepare({0, 2000}, 10);
    const auto* f = dynamic_cast<const UnitTrack::Frame*>(frame.get());
    QVERIFY(f);
    QCOMPARE(f->busy[50], 1.0f);  // [500, 510) fully busy
    QCOMPARE(f->busy[10], 0.0f);
    QCOMPARE(f->completions[46], 1u);  // DMA 1 completes at 465
}

void TestReplayViews::renderedTimelineShowsSegmentsAtKnownPixels() {
    RenderOptions options;
    options.size = QSize(1200, 500);
    options.from = 0;
    options.to = 2000;
    // Without --size the image is only as tall as its content: minimap, axis, every track,
    // legend and a 12 px margin.
    const QImage fitted = renderTimelineImage(tiny_, options);
    options.sizeGiven = true;
    const QImage image = renderTimelineImage(tiny_, options);
    QCOMPARE(image.size(), QSize(1200, 500));
    TimelineView view;
    view.setAsynchronous(false);
    const ReplayTracks tracks = installReplayTracks(view, tiny_);
    int trackHeights = 0;
    for (const auto& track : view.tracks()) trackHeights += track->height();
    QCOMPARE(fitted.size(), QSize(1200, TimelineView::kMinimapHeight + TimelineView::kAxisHeight +
                                            trackHeights + TimelineView::kLegendHeight + 12));
    view.setWindow({0, 2000});
    const TimeMapping m = view.mappingFor(options.size);
    const QRectF bar =
        tracks.lanes[0]->barRect(view.trackRect(tracks.lanes[0].get(), options.size), 0);
    const double lower = bar.bottom() - 2, upper = bar.top() + 2;
    QCOMPARE(pixel(image, {m.x(250), lower}), replaycolors::baseStall());      // green at WAIT
    QCOMPARE(pixel(image, {m.x(250), upper}), replaycolors::baseLatency());    // bar above it
    QCOMPARE(pixel(image, {m.x(430), lower}), replaycolors::transferStall());  // purple
    QCOMPARE(pixel(image, {m.x(430), upper}), replaycolors::transfer());
    QCOMPARE(pixel(image, {m.x(910), lower}), replaycolors::transferStall());  // DMA 2
    // DMA 3's backtail line left of its ISSUE, at mid-height.
    QCOMPARE(pixel(image, {m.x(700), bar.center().y()}), replaycolors::backtail());
    // mxu busy between 466 and 886, in the unit colour at the track bottom.
    const QRect mxu = view.trackRect(tracks.units[0].get(), options.size);
    QCOMPARE(pixel(image, {m.x(600), double(mxu.bottom() - 5)}), replaycolors::unit("mxu"));
    QVERIFY(pixel(image, {m.x(300), double(mxu.bottom() - 5)}) != replaycolors::unit("mxu"));
    // The dma view draws the lanes only: the first track is the lane.
    const QImage dmaOnly = renderTimelineImage(tiny_, options, {false, true, false});
    TimelineView dmaView;
    const ReplayTracks dmaTracks = installReplayTracks(dmaView, tiny_, {false, true, false});
    dmaView.setWindow({0, 2000});
    const QRectF dmaBar =
        dmaTracks.lanes[0]->barRect(dmaView.trackRect(dmaTracks.lanes[0].get(), options.size), 0);
    QCOMPARE(dmaBar.top(), double(TimelineView::kMinimapHeight + TimelineView::kAxisHeight +
                                  DmaLaneTrack::kTopPad + 2));
    QCOMPARE(pixel(dmaOnly, {m.x(250), dmaBar.bottom() - 2}), replaycolors::baseStall());
    image.save(dir_.path() + "/timeline.png");
}

void TestReplayViews::renderedUtilizationAndOverview() {
    RenderOptions options;
    options.size = QSize(1000, 400);
    options.from = 0;
    options.to = 2000;
    const QImage util = renderTimelineImage(tiny_, options, {false, false, true});
    TimelineView view;
    const ReplayTracks tracks = installReplayTracks(view, tiny_, {false, false, true});
    view.setWindow({0, 2000});
    const TimeMapping m = view.mappingFor(options.size);
    QCOMPARE(tracks.units.size(), size_t(3));  // mxu, vpu, scalar
    const QRect vpu = view.trackRect(tracks.units[1].get(), options.size);
    QCOMPARE(pixel(util, {m.x(1200), double(vpu.bottom() - 5)}), replaycolors::unit("vpu"));
    // DMA 3 completes at 1395: a completion tick at the top of each unit track.
    QCOMPARE(pixel(util, {std::round(m.x(1395)), double(vpu.top() + 4)}),
             replaycolors::completion());

    const QImage overview = renderOverviewImage(tiny_, {QSize(1100, 700)});
    // Card accents: total (dark), stall (purple), base (green), transfer (purple), slack (grey).
    const int cardWidth = (1100 - 32 - 48) / 5;
    QCOMPARE(overview.pixelColor(17, 40), QColor(60, 60, 60));
    QCOMPARE(overview.pixelColor(16 + 2 * (cardWidth + 12) + 1, 40), replaycolors::baseStall());
    ReplayOverview page;
    page.setDocument(tiny_);
    // Most stalled first: DMA 1 (463 cycles), then DMA 2 (43); DMA 3 has slack, no stall.
    QCOMPARE(page.topStalledDmas(), (std::vector<size_t>{0, 1}));
    const auto rows = page.rowsFor(QSize(1100, 700));
    QVERIFY(rows.size() >= 2);
    QSignalSpy activated(&page, &ReplayOverview::dmaActivated);
    page.resize(1100, 700);
    QTest::mouseClick(&page, Qt::LeftButton, {}, rows[1].rect.center());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.first().first().value<size_t>(), size_t(1));
}

void TestReplayViews::heatmapCellColours() {
    QCOMPARE(DcacheView::colorFor(0), QColor(68, 1, 84));
    QCOMPARE(DcacheView::colorFor(0.5), QColor(33, 145, 140));
    QCOMPARE(DcacheView::colorFor(1), QColor(253, 231, 37));
    DcacheView view;
    view.setDocument(tiny_);
    const QSize size(1200, 700);
    const QImage image = view.renderImage(size);
    const auto& dc = tiny_->analysis.dcache;
    QCOMPARE(dc.buckets, 8u);  // 1 MiB / 512 B = 2048 pages, 256 per bucket
    const auto layout = view.layoutFor(size);
    const TimeMapping m = view.mappingFor(size);
    const double rowHeight = double(layout.heatmap.height()) / dc.buckets;
    const auto cellCentre = [&](uint32_t bin, uint32_t bucket) {
        return QPointF(m.x((bin + 0.5) * dc.binCycles),
                       layout.heatmap.bottom() - (bucket + 0.5) * rowHeight);
    };
    // DMA 1's 8 pages arrive at 465; the matmul reads all of them at 467, the sld reads page 0
    // again at 931: at cycle 700 one page of bucket 0 is live.
    QCOMPARE(dc.binCycles, 2u);  // ceil(1544 / 1024)
    const uint32_t liveBin = static_cast<uint32_t>(700 / dc.binCycles);
    const double used = dc.bucketUsed[size_t(liveBin) * dc.buckets + 0];
    QCOMPARE(used, 1.0);
    // One page of 256 sits at sqrt(1/256) = 1/16 of the scale (square-root scale).
    QCOMPARE(DcacheView::scalePosition(used / 256.0), 1.0 / 16);
    QCOMPARE(pixel(image, cellCentre(liveBin, 0)), DcacheView::colorFor(1.0 / 16));
    QVERIFY(pixel(image, cellCentre(liveBin, 0)) != QColor(68, 1, 84));  // not like empty
    QCOMPARE(pixel(image, cellCentre(liveBin, 5)), QColor(68, 1, 84));   // nothing up there
    const auto cell = view.cellAt(cellCentre(liveBin, 0).toPoint(), size);
    QVERIFY(cell && cell->first == liveBin && cell->second == 0);
    QVERIFY(view.hoverText(cellCentre(liveBin, 0).toPoint(), size).contains("bucket 0"));
    // Wasted pages: nothing here is written and left unread, matching the analysis.
    double wasted = 0;
    for (double w : tiny_->wastedPages) wasted += w;
    QCOMPARE(wasted, double(dc.wastedPages));
    image.save(dir_.path() + "/dcache.png");
}

void TestReplayViews::dcacheSelectionUpdatesStatistics() {
    const auto doc =
        buildReplayDocument(replay::generateWorkload("fragmentation"), std::nullopt, false);
    DcacheView view;
    view.setDocument(doc);
    const auto whole = view.stats();
    QVERIFY(whole.wholeTrace);
    QCOMPARE(whole.medianUnusedPct, doc->analysis.dcache.medianUnusedPct);
    // A range of exactly one bin has that bin's values as its medians.
    const auto& dc = doc->analysis.dcache;
    const uint32_t bin = dc.bins / 3;
    view.setSelection(TimeRange{double(bin) * dc.binCycles, double(bin + 1) * dc.binCycles});
    const auto part = view.stats();
    QVERIFY(!part.wholeTrace);
    QCOMPARE(part.medianUnusedPct, dc.unusedPct[bin]);
    QCOMPARE(part.medianLargestFreePct, dc.largestFreePct[bin]);
    double wasted = 0;
    for (double w : doc->wastedPages) wasted += w;
    QCOMPARE(wasted, double(dc.wastedPages));
}

void TestReplayViews::clickingASuggestionShowsItsGhost() {
    const auto doc = buildReplayDocument(replay::generateWorkload("matmul-starved"), std::nullopt);
    QVERIFY(!doc->analysis.suggestions.empty());
    ReplayProfileTab tab(doc);
    tab.resize(1400, 800);
    tab.show();
    QSignalSpy ghosts(&tab, &ReplayProfileTab::ghostsReady);
    tab.showSuggestion(0);
    QVERIFY(ghosts.wait(20000));
    const auto& s = doc->analysis.suggestions[0];
    const size_t dma = s.dmaIndices.front();
    DmaLaneTrack* lane = tab.tracks().laneOf(dma);
    QVERIFY(lane);
    QCOMPARE(tab.timeline()->selection()->item.id, int64_t(dma));
    // The ghost sits at the re-simulated ISSUE cycle of the edited trace.
    const auto edited = replay::applyPlan(doc->trace, s.plan);
    const auto sim = replay::simulate(edited.trace);
    const size_t editedDma = edited.trace.dmaIndexById(doc->trace.dmas[dma].id);
    QVERIFY(editedDma != replay::kNone);
    const double expected = double(sim.dmas[editedDma].issueCycle);
    QVERIFY(!lane->ghosts().empty());
    QCOMPARE(lane->ghosts().front().dma, dma);
    QCOMPARE(lane->ghosts().front().issueCycle, expected);
    QVERIFY(expected < double(doc->analysis.sim.dmas[dma].issueCycle));  // hoisted earlier
    // DMA, its proposed position and its backtail are all in the visible range.
    const TimeRange w = tab.timeline()->window();
    QVERIFY(w.contains(expected));
    QVERIFY(w.contains(double(doc->analysis.sim.dmas[dma].issueCycle)));
    QVERIFY(w.contains(double(doc->analysis.sim.dmas[dma].completeCycle)));
    QVERIFY(w.contains(double(doc->analysis.deps.dmas[dma].backtailCycle)));
    // Drawn where the mapping puts that cycle.
    const QSize vp = tab.timeline()->viewport()->size();
    const QRect laneRect = tab.timeline()->trackRect(lane, vp);
    QVERIFY(!laneRect.isEmpty());
    const QRectF ghost =
        lane->ghostRect(lane->ghosts().front(), laneRect, tab.timeline()->mappingFor(vp));
    QVERIFY(near(ghost.left(), tab.timeline()->mappingFor(vp).x(expected)));
    const QImage image = tab.timeline()->renderImage(vp);
    QCOMPARE(pixel(image, {ghost.left() + 0.5, ghost.center().y() - 3}), replaycolors::highlight());
}

void TestReplayViews::previewStacksTheResimulatedTimeline() {
    const auto doc = buildReplayDocument(replay::generateWorkload("matmul-starved"), std::nullopt);
    ReplayProfileTab tab(doc);
    tab.resize(1400, 900);
    tab.show();
    QSignalSpy ready(&tab, &ReplayProfileTab::previewReady);
    tab.previewSuggestion(0);
    QVERIFY(ready.wait(30000));
    const auto& preview = *tab.lastPreview();
    QCOMPARE(preview.savingCycles, double(doc->analysis.suggestions[0].savingCycles));
    QCOMPARE(preview.edited->totalCycles(), doc->totalCycles() - preview.savingCycles);
    QVERIFY(tab.previewTimeline()->isVisible());
    QCOMPARE(tab.previewTimeline()->window(), tab.timeline()->window());
    QVERIFY(tab.previewLabel()->text().contains("saves"));
    // Linked axes: panning the original moves the preview and the heatmap.
    tab.timeline()->setWindow({1000, 5000});
    QCOMPARE(tab.previewTimeline()->window(), tab.timeline()->window());
    QCOMPARE(tab.dcache()->window(), tab.timeline()->window());
}

void TestReplayViews::applyStoresADerivedProfile() {
    const QString store = dir_.path() + "/apply.sqlite";
    const std::string jsonl = (dir_.path() + "/matmul.jsonl").toStdString();
    {
        std::ofstream out(jsonl);
        replay::writeJsonl(replay::generateWorkload("matmul-starved"), out);
    }
    QProcess import;
    import.start(STALLSCOPE_BINARY,
                 {"--store", store, "import", "--name", "mm", QString::fromStdString(jsonl)});
    QVERIFY(import.waitForFinished(60000));
    QCOMPARE(import.exitCode(), 0);
    auto workspace = Workspace::open(store.toStdString(), Workspace::Mode::ReadOnly);
    const ProfileInfo parent = workspace->resolveProfile("mm");
    workspace.reset();
    const auto doc = loadReplayDocument(store, parent);
    const ProfileInfo derived = applySuggestionAsProfile(store, *doc, 0);
    QCOMPARE(QString::fromStdString(derived.name), QString("mm (suggestion applied)"));
    QCOMPARE(derived.parentId.value_or(-1), parent.id);
    const auto again = applySuggestionAsProfile(store, *doc, 0);
    QCOMPARE(QString::fromStdString(again.name), QString("mm (suggestion applied) (2)"));
    const auto edited = loadReplayDocument(store, derived);
    QCOMPARE(edited->totalCycles(),
             doc->totalCycles() - double(doc->analysis.suggestions[0].savingCycles));
}

void TestReplayViews::renderCommandWritesRequestedSize() {
    const QString store = dir_.path() + "/render.sqlite";
    const QString trace = dir_.path() + "/allgather.jsonl";
    QProcess generate;
    generate.start(STALLSCOPE_BINARY, {"generate", "allgather", "--out", trace});
    QVERIFY(generate.waitForFinished(60000));
    QCOMPARE(generate.exitCode(), 0);
    QProcess import;
    import.start(STALLSCOPE_BINARY, {"--store", store, "import", "--name", "ag", trace});
    QVERIFY(import.waitForFinished(60000));
    QCOMPARE(import.exitCode(), 0);
    for (const QString view : {"timeline", "dma", "utilization", "dcache", "overview"}) {
        const QString out = dir_.path() + "/" + view + "-cli.png";
        QProcess render;
        render.start(STALLSCOPE_BINARY,
                     {"--store", store, "render", view, "ag", "--out", out, "--size", "900x480"});
        QVERIFY(render.waitForFinished(60000));
        QVERIFY2(render.exitCode() == 0, render.readAllStandardError().constData());
        const QImage image(out);
        QCOMPARE(image.size(), QSize(900, 480));
    }
    QProcess wrongKind;
    wrongKind.start(STALLSCOPE_BINARY, {"--store", store, "render", "nosuchview", "ag", "--out",
                                        dir_.path() + "/x.png"});
    QVERIFY(wrongKind.waitForFinished(60000));
    QCOMPARE(wrongKind.exitCode(), 2);
}

QTEST_MAIN(TestReplayViews)
// 499 DMAs complete over the fragmentation workload: at 1000 px they would be ticks closer than
// 4 px, so each unit track shows a 4 px strip at its top instead (nothing below it is red).
void TestReplayViews::crowdedCompletionsBecomeAStrip() {
    const ReplayDocumentPtr doc =
        buildReplayDocument(replay::generateWorkload("fragmentation"), std::nullopt);
    RenderOptions options;
    options.size = QSize(1000, 400);
    const QImage image = renderTimelineImage(doc, options, {false, false, true});
    TimelineView view;
    const ReplayTracks tracks = installReplayTracks(view, doc, {false, false, true});
    view.setWindow({0, doc->totalCycles()});
    const QRect mxu = view.trackRect(tracks.units[0].get(), options.size);
    const auto reddish = [](QColor c) {
        return c.red() > 150 && c.green() < 140 && c.blue() < 140;
    };
    int stripPixels = 0, tickTails = 0;
    for (int x = mxu.left(); x <= mxu.right(); ++x) {
        if (reddish(image.pixelColor(x, mxu.top() + 3))) ++stripPixels;
        if (reddish(image.pixelColor(x, mxu.top() + 6))) ++tickTails;
    }
    QVERIFY2(stripPixels > 200, qPrintable(QString::number(stripPixels)));
    QCOMPARE(tickTails, 0);
    // The tiny trace's three completions stay ticks (checked at known pixels above).
}

// The data-cache strip under the timeline shares its window and its x positions: a cycle is
// drawn at the same x in both (within a pixel), and zooming one zooms the other.
void TestReplayViews::dcacheStripLinesUpWithTheTimeline() {
    const auto doc = buildReplayDocument(replay::generateWorkload("fragmentation"), std::nullopt);
    ReplayProfileTab tab(doc);
    tab.resize(1400, 900);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    tab.pages()->setCurrentIndex(1);  // the Timeline page, laid out
    QApplication::processEvents();
    tab.timeline()->setWindow({100000, 200000});
    DcacheView* strip = tab.dcacheStrip();
    QCOMPARE(strip->window().start, 100000.0);
    QCOMPARE(strip->window().end, 200000.0);
    const TimeMapping onTimeline = tab.timeline()->mappingFor(tab.timeline()->viewport()->size());
    const TimeMapping onStrip = strip->mappingFor(strip->size());
    for (double t : {120000.0, 150000.0, 190000.0}) {
        const QPoint a =
            tab.timeline()->viewport()->mapTo(&tab, QPoint(int(std::lround(onTimeline.x(t))), 0));
        const QPoint b = strip->mapTo(&tab, QPoint(int(std::lround(onStrip.x(t))), 0));
        QVERIFY2(std::abs(a.x() - b.x()) <= 1,
                 qPrintable(QString("%1 vs %2").arg(a.x()).arg(b.x())));
    }
    // Compact: no colour scale, the statistics chart shorter than in the full view.
    QVERIFY(strip->layoutFor(strip->size()).scale.isEmpty());
    QVERIFY(strip->layoutFor(strip->size()).stats.height() <
            tab.dcache()->layoutFor(tab.dcache()->size()).stats.height());
}

void TestReplayViews::negativeTimesGetAMinusSign() {
    TimelineView view;
    TimeFormat format;
    format.primary = [](double t) { return QString::number(t); };
    format.secondary = [](double t) { return QString::number(t / 1000) + " µs"; };
    view.setTimeFormat(format);
    QCOMPARE(view.timeFormat().primary(-1500), QString::fromUtf8("−1500"));
    QCOMPARE(view.timeFormat().secondary(-1500), QString::fromUtf8("−1.5 µs"));
    QCOMPARE(view.timeFormat().primary(1500), QString("1500"));
}

#include "test_replay_views.moc"
