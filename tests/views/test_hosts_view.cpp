// The Hosts tab of a multi-host run: a generated 4-rank Kineto run whose rank 2 is 40 % slower
// in step 3 (tests/tools/gen_multihost.py, which also writes the expected figures): the heat
// strip draws that cell red and the others near white, the straggler table names rank 2 first
// by excess, and activating the cell zooms the timeline to rank 2's step 3.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/trace/hosts_registration.h"
#include "core/workspace.h"
#include "importers/import_service.h"
#include "importers/run_import.h"
#include "views/common/table_kit.h"
#include "views/common/timeline_view.h"
#include "views/trace/hosts_panel.h"
#include "views/trace/hosts_trace_panel.h"
#include "views/trace/trace_view.h"

using namespace stallscope;

class TestHostsView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void heatStripNamesTheStraggler() {
        const QString run = dir_.filePath("run");
        const QString expectedPath = dir_.filePath("expected.json");
        QProcess gen;
        gen.start("python3", {STALLSCOPE_GEN_MULTIHOST, run, "--hosts", "4", "--steps", "5",
                              "--kernels", "20", "--straggler-rank", "2", "--straggler-step", "3",
                              "--straggler-pct", "40", "--expected", expectedPath});
        QVERIFY(gen.waitForFinished(60000));
        QCOMPARE(gen.exitCode(), 0);
        QFile expectedFile(expectedPath);
        QVERIFY(expectedFile.open(QIODevice::ReadOnly));
        const QJsonObject expected = QJsonDocument::fromJson(expectedFile.readAll()).object();

        const std::string wsPath = dir_.filePath("ws.sqlite").toStdString();
        int64_t id = 0;
        {
            auto ws = Workspace::open(wsPath);
            Progress progress;
            id = importFiles(*ws, ImportRequest{{run.toStdString()}, {}, {}, false}, progress)
                     .at(0)
                     .id;
        }
        TraceView view;
        view.resize(1400, 900);
        view.open(wsPath, id);
        QTRY_VERIFY_WITH_TIMEOUT(view.panel<HostsTracePanel>()->result() != nullptr, 30000);
        const trace::HostsAnalysis& hosts = *view.panel<HostsTracePanel>()->result();
        QCOMPARE(hosts.hosts.size(), size_t(4));
        QCOMPARE(hosts.steps.size(), size_t(5));
        HostsPanel* panel = view.panel<HostsTracePanel>()->hostsPanel();
        QVERIFY(panel);
        // The timeline heads each host and, inside it, each of its processes (indented).
        std::vector<const TimelineTrack*> headers;
        for (const auto& track : view.timeline()->tracks())
            if (track->isHeader()) headers.push_back(track.get());
        QVERIFY(headers.size() >= 8);  // 4 hosts, each with at least one process
        QCOMPARE(headers[0]->title(), QString("rank 0"));
        QCOMPARE(headers[0]->titleIndent(), 0);
        QCOMPARE(headers[1]->titleIndent(), 12);

        // The straggler of step 3 as the generator computed it.
        const QJsonObject want = expected.value("stragglers").toArray().at(3).toObject();
        QCOMPARE(want.value("host").toString(), QString("rank 2"));
        int rank2 = -1;
        for (size_t h = 0; h < hosts.hosts.size(); ++h)
            if (hosts.hosts[h].host.name == "rank 2") rank2 = int(h);
        QVERIFY(rank2 >= 0);
        const trace::Straggler& s3 = hosts.stragglers.at(3);
        QCOMPARE(s3.host, rank2);
        QCOMPARE(double(s3.stepTime), want.value("step_time").toDouble());

        // Drawn: the straggler's cell is red, a cell of another rank in that step near white.
        HostHeatmapWidget* heatmap = panel->heatmap();
        heatmap->resize(700, 300);
        const QImage image = heatmap->grab().toImage();
        const auto& cells = heatmap->heatmapLayout().cells;
        QCOMPARE(cells.size(), size_t(4));
        const QColor slow = image.pixelColor(cells[size_t(rank2)][3].center().toPoint());
        QVERIFY2(slow.red() > 200 && slow.green() < 120, qPrintable(slow.name()));
        const int other = rank2 == 0 ? 1 : 0;
        const QColor normal = image.pixelColor(cells[size_t(other)][3].center().toPoint());
        QVERIFY2(normal.red() > 200 && normal.green() > 200 && normal.blue() > 200,
                 qPrintable(normal.name()));
        QCOMPARE(heatmap->cellAt(cells[size_t(rank2)][3].center()), std::make_pair(rank2, 3));

        // The overview names the run's alignment and its slowest host.
        QVERIFY2(view.overviewHtml().contains("4 host(s), clocks aligned by kineto "
                                              "baseTimeNanoseconds; slowest: rank 2 in "
                                              "ProfilerStep#3"),
                 qPrintable(view.overviewHtml()));
        // The straggler table, biggest excess first once sorted by it.
        QTableWidget* table = panel->stragglerTable();
        QCOMPARE(table->rowCount(), 5);
        table->sortItems(4, Qt::DescendingOrder);
        QCOMPARE(table->item(0, 1)->text(), QString("rank 2"));

        // Per host: the generator's slices and median step time; a click on rank 2 shows its
        // slowest step, the planted step 3.
        QTableWidget* perHost = panel->hostTable();
        QCOMPARE(perHost->rowCount(), 4);
        const QJsonArray wantHosts = expected.value("hosts").toArray();
        for (int h = 0; h < 4; ++h) {
            const QJsonObject w = wantHosts[h].toObject();
            QCOMPARE(perHost->item(h, 0)->text(), w.value("name").toString());
            QCOMPARE(perHost->item(h, 1)->data(tablekit::kSortRole).toDouble(),
                     double(w.value("slices").toInteger()));
            QCOMPARE(perHost->item(h, 3)->data(tablekit::kSortRole).toDouble(),
                     double(w.value("step_time_median").toInteger()));
            double shares = 0;
            for (int c = 5; c < perHost->columnCount(); ++c)
                shares += perHost->item(h, c)->data(tablekit::kSortRole).toDouble();
            QVERIFY(std::abs(shares - 100.0) < 1e-6);
        }
        if (qEnvironmentVariableIsSet("STALLSCOPE_KEEP_RENDERS")) {
            panel->resize(1100, 360);
            panel->grab().save(qEnvironmentVariable("STALLSCOPE_KEEP_RENDERS") + "/hosts-tab.png");
        }
        QSignalSpy activated(panel, &HostsPanel::hostStepActivated);
        emit perHost->cellClicked(rank2, 0);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().at(0).toInt(), rank2);
        QCOMPARE(activated.first().at(1).toInt(), 3);

        // Activating the cell shows rank 2's step 3 on the timeline.
        emit heatmap->cellClicked(rank2, 3);
        const trace::HostStep& step =
            hosts.hosts[size_t(rank2)].steps.at(size_t(hosts.stepOfHost[3][size_t(rank2)]));
        const double origin = double(view.source()->origin());
        const TimeRange window = view.timeline()->window();
        QVERIFY(window.start <= double(step.start) - origin);
        QVERIFY(window.end >= double(step.start + step.duration) - origin);
        QVERIFY(window.length() < double(step.duration) * 1.2);
    }

    // A merged run holds only the hosts' summaries: clicking rank 2's step 3 asks for rank 2's
    // shard, and a view of that shard revealing (rank 2, ProfilerStep#3) zooms to that step.
    void mergedRunOpensTheHostFromItsShard() {
        const QString run = dir_.filePath("run");  // written by heatStripNamesTheStraggler
        QVERIFY(QFile::exists(run + "/rank-3.pt.trace.json"));
        auto shard = [&](const QString& name, std::vector<std::string> files) {
            const std::string path = dir_.filePath(name).toStdString();
            auto ws = Workspace::open(path);
            Progress progress;
            ImportRequest request{std::move(files), {}, {}};
            request.asOne = true;
            const int64_t id = importFiles(*ws, request, progress).at(0).id;
            trace::loadOrAnalyzeHosts(*ws, id);  // what merge reads
            return path;
        };
        auto rank = [&](int r) {
            return (run + QString("/rank-%1.pt.trace.json").arg(r)).toStdString();
        };
        const std::string first = shard("shard0.sqlite", {rank(0), rank(1)});
        const std::string second = shard("shard1.sqlite", {rank(2), rank(3)});
        const std::string mergedPath = dir_.filePath("merged.sqlite").toStdString();
        int64_t merged = 0;
        {
            auto ws = Workspace::open(mergedPath);
            Progress progress;
            merged = mergeShards(*ws, {first, second}, "run", progress).id;
        }
        TraceView view;
        view.resize(1400, 900);
        QSignalSpy requested(view.panel<HostsTracePanel>(),
                             &HostsTracePanel::hostTimelineRequested);
        view.open(mergedPath, merged);
        QTRY_VERIFY_WITH_TIMEOUT(view.panel<HostsTracePanel>()->result() != nullptr, 30000);
        QCOMPARE(view.panel<HostsTracePanel>()->result()->hosts.size(), size_t(4));
        emit view.panel<HostsTracePanel>()->hostsPanel()->heatmap()->cellClicked(2, 3);
        QCOMPARE(requested.count(), 1);
        const QList<QVariant> args = requested.first();
        QCOMPARE(args.at(0).toString(), QString::fromStdString(second));
        QCOMPARE(args.at(2).toString(), QString("rank 2"));
        QCOMPARE(args.at(3).toString(), QString("ProfilerStep#3"));

        TraceView shardView;
        shardView.resize(1400, 900);
        shardView.open(args.at(0).toString().toStdString(), args.at(1).toLongLong());
        shardView.panel<HostsTracePanel>()->revealHostStep(
            args.at(2).toString(), args.at(3).toString(), args.at(4).toInt());
        QTRY_VERIFY_WITH_TIMEOUT(shardView.panel<HostsTracePanel>()->result() != nullptr, 30000);
        const trace::HostsAnalysis& hosts = *shardView.panel<HostsTracePanel>()->result();
        QCOMPARE(hosts.hosts.size(), size_t(2));
        QCOMPARE(hosts.hosts[0].host.name, std::string("rank 2"));
        int step3 = -1;
        for (size_t i = 0; i < hosts.steps.size(); ++i)
            if (hosts.steps[i] == "ProfilerStep#3") step3 = int(i);
        QVERIFY(step3 >= 0);
        const trace::HostStep& step =
            hosts.hosts[0].steps.at(size_t(hosts.stepOfHost[size_t(step3)][0]));
        const double origin = double(shardView.source()->origin());
        const TimeRange window = shardView.timeline()->window();
        QVERIFY(window.start <= double(step.start) - origin);
        QVERIFY(window.end >= double(step.start + step.duration) - origin);
        QVERIFY(window.length() < double(step.duration) * 1.2);
    }
};

QTEST_MAIN(TestHostsView)
#include "test_hosts_view.moc"
