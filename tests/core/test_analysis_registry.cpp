// The registry of analyses and its one cache (core/analysis): every registered analysis goes
// derive -> store -> reopen -> equal on profiles of each dialect, and the cache's rules for
// older, newer and unreadable stored results hold for any analysis.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <set>

#include "core/analysis/cache.h"
#include "core/analysis/registry.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/sqlite.h"
#include "core/trace/trace_store.h"
#include "core/workspace.h"
#include "importers/import_service.h"

using namespace stallscope;

namespace {

const QString kSamples = QStringLiteral(STALLSCOPE_SHARED_DIR "/samples/");

QJsonObject slice(const char* name, const char* cat, int pid, int tid, double ts, double dur,
                  const QJsonObject& args = {}) {
    return QJsonObject{{"ph", "X"},  {"name", name}, {"cat", cat}, {"pid", pid},
                       {"tid", tid}, {"ts", ts},     {"dur", dur}, {"args", args}};
}

// Two profiler steps on a host thread, each launching a kernel and copying 1 MB to the device
// (waited by a stream sync): steps, transfers and (as one host) hosts all have work to do.
QByteArray kinetoTrace() {
    QJsonArray events;
    for (int step = 0; step < 2; ++step) {
        const double t0 = 1000.0 * step;
        const int c = 10 * step;
        events.append(slice(qPrintable(QString("ProfilerStep#%1").arg(step)), "user_annotation", 1,
                            1, t0, 900));
        events.append(
            slice("cudaLaunchKernel", "cuda_runtime", 1, 1, t0 + 10, 5, {{"correlation", c + 1}}));
        events.append(
            slice("cudaMemcpyAsync", "cuda_runtime", 1, 1, t0 + 20, 5, {{"correlation", c + 2}}));
        events.append(slice("cudaStreamSynchronize", "cuda_runtime", 1, 1, t0 + 30, 400,
                            {{"correlation", c + 3}}));
        events.append(slice("volta_sgemm_128x64_nn", "kernel", 0, 7, t0 + 40, 200,
                            {{"correlation", c + 1}, {"device", 0}, {"stream", 7}}));
        events.append(
            slice("Memcpy HtoD (Pinned -> Device)", "gpu_memcpy", 0, 7, t0 + 240, 180,
                  {{"correlation", c + 2}, {"bytes", 1000000}, {"device", 0}, {"stream", 7}}));
    }
    return QJsonDocument(QJsonObject{{"traceEvents", events}}).toJson();
}

// An analysis of the test's own: its result is the profile's slice count as text.
class CountingAnalysis : public analysis::Typed<std::string> {
  public:
    explicit CountingAnalysis(int version) : version_(version) {}
    std::string_view name() const override { return "test.count"; }
    int version() const override { return version_; }
    std::string_view reads() const override { return "the track list"; }
    bool appliesTo(const trace::TraceStore&) const override { return true; }
    analysis::RunAt runAt(const trace::TraceStore&) const override {
        return analysis::RunAt::FirstRequest;
    }
    std::string compute(const trace::TraceStore& store) const override {
        ++derivations;
        uint64_t n = 0;
        for (const trace::TrackRow& t : store.tracks()) n += t.slices;
        return "slices=" + std::to_string(n);
    }
    std::string encodeResult(const std::string& r) const override { return r; }
    std::string decodeResult(std::string_view payload) const override {
        if (!payload.starts_with("slices=")) throw Failure("not a count");
        return std::string(payload);
    }
    mutable int derivations = 0;

  private:
    int version_;
};

}  // namespace

class TestAnalysisRegistry : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    int64_t importPath(Workspace& ws, const QString& path) {
        Progress progress;
        return importFiles(ws, {{path.toStdString()}, "", ""}, progress).at(0).id;
    }

    // Every registered analysis that applies: derived and stored on the first request, read
    // back from a fresh connection byte for byte the same.
    void roundTripEveryAnalysis(const QString& path, int minimumApplying) {
        const std::string store =
            dir_.filePath(QFileInfo(path).fileName() + ".sqlite").toStdString();
        int64_t id = 0;
        std::map<std::string, std::string> first;
        int applying = 0;
        {
            auto ws = Workspace::open(store);
            id = importPath(*ws, path);
            const trace::TraceStore traceStore(*ws, id);
            for (const analysis::Definition* a : analysis::registry()) {
                if (!a->appliesTo(traceStore)) continue;
                ++applying;
                const bool atImport = a->runAt(traceStore) == analysis::RunAt::Import;
                const analysis::Obtained got = analysis::obtain(*ws, id, *a);
                QVERIFY(got.result);
                // What runs at import was stored by the import; the rest by this request.
                QCOMPARE(got.origin,
                         atImport ? analysis::Origin::Stored : analysis::Origin::Derived);
                const auto stored = analysis::readStored(*ws, id, a->name());
                QVERIFY2(stored, a->name().data());
                QCOMPARE(stored->version, a->version());
                first[std::string(a->name())] = a->encode(got.result.get());
                QVERIFY(stored->payload == first[std::string(a->name())]);
                // The import's own encoding is the same bytes as encoding the derived result.
                QVERIFY(a->deriveForStorage(traceStore).payload == first[std::string(a->name())]);
            }
        }
        QVERIFY2(applying >= minimumApplying, qPrintable(path));
        auto reopened = Workspace::open(store);
        for (const analysis::Definition* a : analysis::registry()) {
            const auto it = first.find(std::string(a->name()));
            if (it == first.end()) continue;
            const analysis::Obtained again = analysis::obtain(*reopened, id, *a);
            QCOMPARE(again.origin, analysis::Origin::Stored);
            QVERIFY2(a->encode(again.result.get()) == it->second, a->name().data());
        }
    }

  private slots:
    void registryNamesAreUniqueAndFindable() {
        std::set<std::string> names;
        for (const analysis::Definition* a : analysis::registry()) {
            QVERIFY(names.insert(std::string(a->name())).second);
            QCOMPARE(analysis::find(a->name()), a);
            QVERIFY(a->version() > 0);
            QVERIFY(!a->reads().empty());
        }
        QVERIFY(names.count("steps") && names.count("transfers") && names.count("hosts"));
        QCOMPARE(analysis::find("no such analysis"), nullptr);
    }

    void kinetoRoundTrip() {
        const QString path = dir_.filePath("kineto.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kinetoTrace());
        f.close();
        roundTripEveryAnalysis(path, 3);
    }

    void xprofRoundTrip() {
        const QString path = kSamples + "xprof/tpu_inference_2.xplane.pb";
        if (!QFile::exists(path)) QSKIP("../shared/samples is absent");
        roundTripEveryAnalysis(path, 3);
    }

    void chakraRoundTrip() {
        const QString path = kSamples + "chakra/all_gather.0.et";
        if (!QFile::exists(path)) QSKIP("../shared/samples is absent");
        roundTripEveryAnalysis(path, 2);
    }

    void multiHostRoundTrip() {
        const QString run = kSamples + "xprof/GPU-multi-worker";
        if (!QFileInfo(run).isDir()) QSKIP("../shared/samples is absent");
        roundTripEveryAnalysis(run, 3);
    }

    // The cache's rules, on an analysis of the test's own.
    void olderVersionIsDerivedAgainAndReplaced() {
        auto ws = Workspace::open(dir_.filePath("older.sqlite").toStdString());
        const QString path = dir_.filePath("k2.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kinetoTrace());
        f.close();
        const int64_t id = importPath(*ws, path);
        const CountingAnalysis v1(1), v2(2);
        QCOMPARE(analysis::obtain(*ws, id, v1).origin, analysis::Origin::Derived);
        QCOMPARE(analysis::obtain(*ws, id, v1).origin, analysis::Origin::Stored);
        QCOMPARE(v1.derivations, 1);
        const analysis::Obtained newer = analysis::obtain(*ws, id, v2);
        QCOMPARE(newer.origin, analysis::Origin::Derived);
        QVERIFY(newer.notice.empty());
        QCOMPARE(analysis::readStored(*ws, id, "test.count")->version, 2);
        QCOMPARE(*CountingAnalysis::cast(newer.result), std::string("slices=12"));
    }

    void newerVersionIsReadOnlyAndToldOnce() {
        auto ws = Workspace::open(dir_.filePath("newer.sqlite").toStdString());
        const QString path = dir_.filePath("k3.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kinetoTrace());
        f.close();
        const int64_t id = importPath(*ws, path);
        const CountingAnalysis v1(1);
        // A newer build stored a form this one reads: used as stored, nothing rewritten.
        analysis::writeStored(*ws, id, "test.count", 7, "slices=999");
        analysis::Obtained got = analysis::obtain(*ws, id, v1);
        QCOMPARE(got.origin, analysis::Origin::StoredByNewer);
        QCOMPARE(*CountingAnalysis::cast(got.result), std::string("slices=999"));
        QVERIFY2(got.notice.find("newer") != std::string::npos, got.notice.c_str());
        QCOMPARE(v1.derivations, 0);
        got = analysis::obtain(*ws, id, v1);
        QVERIFY(got.notice.empty());  // told once
        // A newer form this build cannot read: computed for the session, the stored one kept.
        const int64_t other = importPath(*ws, path);
        analysis::writeStored(*ws, other, "test.count", 8, "a form from the future");
        got = analysis::obtain(*ws, other, v1);
        QCOMPARE(got.origin, analysis::Origin::DerivedBesideNewer);
        QCOMPARE(*CountingAnalysis::cast(got.result), std::string("slices=12"));
        QVERIFY2(got.notice.find("not saved") != std::string::npos, got.notice.c_str());
        const auto kept = analysis::readStored(*ws, other, "test.count");
        QCOMPARE(kept->version, 8);
        QCOMPARE(kept->payload, std::string("a form from the future"));
    }

    void unreadableCurrentVersionIsDerivedAgain() {
        auto ws = Workspace::open(dir_.filePath("broken.sqlite").toStdString());
        const QString path = dir_.filePath("k4.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kinetoTrace());
        f.close();
        const int64_t id = importPath(*ws, path);
        const CountingAnalysis v1(1);
        analysis::writeStored(*ws, id, "test.count", 1, "garbage");
        QCOMPARE(analysis::obtain(*ws, id, v1).origin, analysis::Origin::Derived);
        QCOMPARE(analysis::readStored(*ws, id, "test.count")->payload, std::string("slices=12"));
    }

    // A read-only workspace derives for the request and stores nothing.
    void readOnlyWorkspaceStoresNothing() {
        const std::string store = dir_.filePath("ro.sqlite").toStdString();
        const QString path = dir_.filePath("k5.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kinetoTrace());
        f.close();
        int64_t id = 0;
        {
            auto ws = Workspace::open(store);
            id = importPath(*ws, path);
        }
        const CountingAnalysis v1(1);
        auto ro = Workspace::open(store, Workspace::Mode::ReadOnly);
        QCOMPARE(analysis::obtain(*ro, id, v1).origin, analysis::Origin::Derived);
        QVERIFY(!analysis::readStored(*ro, id, "test.count"));
    }

    // Payloads over a row's size are split into rows and read back whole.
    void largePayloadsSpanRows() {
        auto ws = Workspace::open(dir_.filePath("rows.sqlite").toStdString());
        const QString path = dir_.filePath("k6.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(kinetoTrace());
        f.close();
        const int64_t id = importPath(*ws, path);
        std::string big(analysis::kRowBytes + 12345, 'x');
        big[analysis::kRowBytes] = 'y';
        analysis::writeStored(*ws, id, "test.big", 1, big);
        sql::Statement rows(ws->db(), "SELECT count(*) FROM analyses WHERE name = 'test.big'");
        QVERIFY(rows.step());
        QCOMPARE(rows.int64(0), int64_t(2));
        QVERIFY(analysis::readStored(*ws, id, "test.big")->payload == big);
    }
};

QTEST_MAIN(TestAnalysisRegistry)
#include "test_analysis_registry.moc"
