#include <zstd.h>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <set>
#include <sstream>

#include "core/checked_number.h"
#include "core/errors.h"
#include "core/replay/codec.h"
#include "core/sqlite.h"
#include "core/workspace.h"
#include "importers/import_service.h"

using namespace stallscope;

namespace {

// The example of CONTRACT.md §1, verbatim.
const char* const kContractExample =
    R"({"record":"machine","name":"toy-tpu","clock_ghz":1.0,"spaces":[{"name":"hbm","bytes":17179869184},{"name":"dcache","bytes":16777216}],"links":[{"src":"hbm","dst":"dcache","base_latency":400,"bytes_per_cycle":64},{"src":"dcache","dst":"hbm","base_latency":400,"bytes_per_cycle":64}],"dcache":{"space":"dcache","page_bytes":512,"bucket_pages":256},"lightweight":["mov","add","sub","shl","shr","and","or","lea"]}
{"record":"hlo","id":7,"name":"all-gather.3","category":"collective"}
{"record":"instr","i":0,"op":"sld","unit":"scalar","hlo":7,"rd":["s1"],"wr":["s2"],"mrd":[["dcache",4096,64]]}
{"record":"instr","i":1,"op":"add","unit":"scalar","rd":["s2"],"wr":["s3"]}
{"record":"instr","i":2,"op":"dma.issue","unit":"dma","rd":["s3"],"dma":{"id":3,"src":["hbm",65536,4096],"dst":["dcache",8192,4096]}}
{"record":"instr","i":3,"op":"matmul","unit":"mxu","cost":1,"busy":8,"mrd":[["dcache",0,4096]],"mwr":[["dcache",32768,4096]]}
{"record":"instr","i":4,"op":"dma.wait","unit":"dma","wait":3}
)";

QString write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
}

QByteArray machineLine() {
    return QByteArray(kContractExample).split('\n').first() + "\n";
}

// A long but valid trace: DMA issue/wait pairs around scalar work.
QByteArray bigTrace(int instrs) {
    QByteArray out = machineLine();
    int dma = 0;
    for (int i = 0; i < instrs; ++i) {
        QByteArray line;
        if (i % 4 == 1) {
            line = R"({"record":"instr","i":)" + QByteArray::number(i) +
                   R"(,"op":"dma.issue","unit":"dma","dma":{"id":)" + QByteArray::number(++dma) +
                   R"(,"src":["hbm",0,512],"dst":["dcache",1024,512]}})";
        } else if (i % 4 == 3) {
            line = R"({"record":"instr","i":)" + QByteArray::number(i) +
                   R"(,"op":"dma.wait","unit":"dma","wait":)" + QByteArray::number(dma) + "}";
        } else {
            line = R"({"record":"instr","i":)" + QByteArray::number(i) +
                   R"(,"op":"add","unit":"scalar","rd":["s1"],"wr":["s2"]})";
        }
        out += line + "\n";
    }
    return out;
}

int count(Workspace& ws, const char* sql) {
    sql::Statement st(ws.db(), sql);
    return st.step() ? static_cast<int>(st.int64(0)) : -1;
}

}  // namespace

class TestImport : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Workspace> ws_;

  private slots:
    void init() {
        QFile::remove(dir_.path() + "/ws.sqlite");
        ws_ = Workspace::open((dir_.path() + "/ws.sqlite").toStdString());
    }

    void importsContractExample() {
        const QString path = write(dir_.path() + "/toy.jsonl", kContractExample);
        Progress progress;
        const auto imported = importFiles(*ws_, {{path.toStdString()}, "", ""}, progress);
        QCOMPARE(imported.size(), size_t(1));
        QCOMPARE(QString::fromStdString(imported[0].kind), QString("replay"));
        QCOMPARE(QString::fromStdString(imported[0].name), QString("toy"));
        const auto trace = replay::loadInstructionStream(*ws_, imported[0].id);
        QCOMPARE(trace.instrs.size(), size_t(5));
        QCOMPARE(trace.dmas.size(), size_t(1));
        QCOMPARE(trace.dmas[0].id, int64_t(3));
        QCOMPARE(trace.dmas[0].issueInstr, 2u);
        QCOMPARE(trace.dmas[0].waitInstr, 4u);
        QCOMPARE(trace.dmas[0].dst.address, uint64_t(8192));
        QCOMPARE(trace.instrs[3].busy, 8u);
        QCOMPARE(trace.opName(trace.instrs[0]), std::string("sld"));
        QCOMPARE(trace.hlos.at(trace.instrs[0].hlo).name, std::string("all-gather.3"));
        QVERIFY(trace.isLightweight(trace.instrs[1].op));
        QVERIFY(!trace.isLightweight(trace.instrs[0].op));
        const ProfileInfo info = ws_->resolveProfile("toy");
        QCOMPARE(info.sourceSize, int64_t(QByteArray(kContractExample).size()));
        QVERIFY(info.sourceHash.starts_with("xxh128:"));
        QCOMPARE(info.sourceHash.size(), size_t(7 + 32));
        QVERIFY(QString::fromStdString(info.metadataJson).contains("\"instructions\":5"));

        // The same file again gives a second profile with a distinct name.
        const auto again = importFiles(*ws_, {{path.toStdString()}, "", ""}, progress);
        QCOMPARE(QString::fromStdString(again[0].name), QString("toy (2)"));
    }

    void detectsFormatsByContent() {
        const std::string jsonl = kContractExample;
        Sniff plain{"/x/trace.bin", jsonl, Compression::None};
        QCOMPARE(QString::fromStdString(detectImporter(plain)->format()), QString("replay-jsonl"));
        Sniff binary{"/x/trace.jsonl", "SSREPLAY\x01", Compression::Zstd};
        QCOMPARE(QString::fromStdString(detectImporter(binary)->format()),
                 QString("replay-binary"));
        Sniff unknown{"/x/notes.txt", "hello world", Compression::None};
        try {
            detectImporter(unknown);
            QFAIL("unknown content was accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains("/x/notes.txt: unknown format"), e.what());
        }
    }

    // One synthetic head per registered format (no sample files needed), detected from content
    // (plus the name where the format has no magic). A new format without a row here fails.
    void detectsEveryRegisteredFormat() {
        struct Case {
            std::string format, path, head;
        };
        const std::string sqliteHeader("SQLite format 3\0", 16);
        const std::vector<Case> cases{
            {"replay-jsonl", "/x/a.bin", kContractExample},
            {"replay-binary", "/x/a.jsonl", "SSREPLAY\x01"},
            {"noise-csv", "/x/a.txt", "region,mode,k,time_ns\nloop,fp_add64,0,10\n"},
            {"cpi-csv", "/x/a.txt", "kernel,source,category,cycles\ngemm,hw,selected,10\n"},
            {"ncu-csv", "/x/a.txt",
             "==PROF== Connected\n\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n"},
            {"gpgpusim-log", "/x/run.txt", "GPGPU-Sim: *** simulation thread starting ***\n"},
            {"sniper-stats", "/x/db",
             sqliteHeader + "CREATE TABLE prefixes; CREATE TABLE `values`"},
            {"estimates-csv", "/x/a.txt",
             "workload,region,hardware,estimator,predicted_us\nllm,attn,a100,roofline,3\n"},
            {"chrome-json", "/x/a.txt", R"({"traceEvents":[{"ph":"X","name":"a"}]})"},
            {"xprof-xspace", "/x/host.xplane.pb", std::string("\x0a\x05\x08\x01\x12\x01p", 7)},
            {"chakra-et", "/x/ring.0.et", std::string("\x07\x0a\x05\x30\x2e\x30\x2e\x34", 8)},
        };
        std::set<std::string> covered;
        for (const Case& c : cases) {
            const Importer* found = detectImporter(Sniff{c.path, c.head, Compression::None});
            QCOMPARE(QString::fromStdString(found->format()), QString::fromStdString(c.format));
            covered.insert(c.format);
        }
        for (const Importer* imp : importers())
            QVERIFY2(covered.count(imp->format()), imp->format().c_str());
    }

    // A storage failure half-way through (SQLite refuses the third chunk) rolls back the whole
    // import: the earlier profile and its rows stay exactly as they were.
    void storageFailureHalfWayRollsBack() {
        Progress progress;
        importFiles(*ws_,
                    {{write(dir_.path() + "/small.jsonl", kContractExample).toStdString()}, "", ""},
                    progress);
        const int profilesBefore = count(*ws_, "SELECT count(*) FROM profiles");
        const int blobsBefore = count(*ws_, "SELECT count(*) FROM blobs");
        sql::exec(ws_->db(),
                  "CREATE TEMP TRIGGER fail_third_chunk BEFORE INSERT ON blobs WHEN NEW.seq = 2 "
                  "BEGIN SELECT RAISE(ABORT, 'injected storage failure'); END");
        const QString big = write(dir_.path() + "/big.jsonl", bigTrace(200000));
        try {
            importFiles(*ws_, {{big.toStdString()}, "", ""}, progress);
            QFAIL("the injected failure did not stop the import");
        } catch (const std::exception& e) {
            QVERIFY2(QString(e.what()).contains("injected storage failure"), e.what());
        }
        sql::exec(ws_->db(), "DROP TRIGGER fail_third_chunk");
        QCOMPARE(count(*ws_, "SELECT count(*) FROM profiles"), profilesBefore);
        QCOMPARE(count(*ws_, "SELECT count(*) FROM blobs"), blobsBefore);
        QCOMPARE(QString::fromStdString(ws_->profiles().at(0).name), QString("small"));
    }

    void binaryAndZstdRoundTrip() {
        const QString jsonlPath = write(dir_.path() + "/rt.jsonl", bigTrace(2000));
        Progress progress;
        const auto a = importFiles(*ws_, {{jsonlPath.toStdString()}, "", ""}, progress);
        const auto trace = replay::loadInstructionStream(*ws_, a[0].id);
        const std::string binPath = (dir_.path() + "/rt.ssrp").toStdString();
        {
            std::ofstream out(binPath, std::ios::binary);
            replay::writeBinary(trace, out);
        }
        QFile plain(jsonlPath);
        QVERIFY(plain.open(QIODevice::ReadOnly));
        const QByteArray text = plain.readAll();
        QByteArray packed(static_cast<qsizetype>(ZSTD_compressBound(text.size())), '\0');
        packed.resize(static_cast<qsizetype>(
            ZSTD_compress(packed.data(), packed.size(), text.data(), text.size(), 1)));
        const QString zstPath = write(dir_.path() + "/rt2.jsonl.zst", packed);
        const auto b = importFiles(*ws_, {{binPath, zstPath.toStdString()}, "", ""}, progress);
        QCOMPARE(b.size(), size_t(2));
        for (const auto& p : b) {
            const auto other = replay::loadInstructionStream(*ws_, p.id);
            QCOMPARE(other.instrs.size(), trace.instrs.size());
            QCOMPARE(other.dmas.size(), trace.dmas.size());
            QCOMPARE(other.regRefs, trace.regRefs);
            QCOMPARE(other.strings, trace.strings);
            QCOMPARE(other.dmas.back().waitInstr, trace.dmas.back().waitInstr);
        }
        // 2000 instructions stored compactly.
        QVERIFY(replay::storedInstructionStreamBytes(*ws_, a[0].id) < 2000 * 16);
    }

    void badTracesNameTheLine_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("expected");
        const QByteArray m = machineLine();
        QTest::newRow("undeclared link")
            << m + R"({"record":"instr","i":0,"op":"dma.issue","dma":{"id":1,"src":["dcache",0,64],"dst":["dcache",64,64]}})"
                   "\n"
            << ":2: DMA 1 uses undeclared link dcache->dcache";
        QTest::newRow("unknown wait") << m + R"({"record":"instr","i":0,"op":"dma.wait","wait":9})"
                                             "\n"
                                      << ":2: WAIT of unknown DMA 9";
        QTest::newRow("waited twice")
            << m + R"({"record":"instr","i":0,"op":"dma.issue","dma":{"id":1,"src":["hbm",0,64],"dst":["dcache",0,64]}})"
                   "\n"
                   R"({"record":"instr","i":1,"op":"dma.wait","wait":1})"
                   "\n"
                   R"({"record":"instr","i":2,"op":"dma.wait","wait":1})"
                   "\n"
            << ":4: WAIT of DMA 1, already waited";
        QTest::newRow("gap") << m + R"({"record":"instr","i":0,"op":"add"})"
                                    "\n"
                                    R"({"record":"instr","i":2,"op":"add"})"
                                    "\n"
                             << ":3: instruction index 2 where 1 was expected";
        QTest::newRow("outside space")
            << m + R"({"record":"instr","i":0,"op":"sld","mrd":[["dcache",16777200,64]]})"
                   "\n"
            << ":2: memory read [dcache, 16777200, 64] lies outside its space";
        QTest::newRow("malformed json") << m + R"({"record":"instr","i":0,"op":"add"})"
                                               "\n"
                                               R"({"record":"instr","i":1,"op":)"
                                               "\n"
                                        << ":3: malformed JSON";
        QTest::newRow("no machine") << QByteArray(R"({"record":"instr","i":0,"op":"add"})"
                                                  "\n")
                                    << ":1: instruction before the machine record";
        // Numbers the machine record needs as whole numbers in range (fuzzing found the
        // negative size converted to an unsigned one: undefined behaviour).
        QByteArray negative = m;
        negative.replace("\"bytes\":16777216", "\"bytes\":-7179869184");
        QTest::newRow("negative space size")
            << negative << ":1: space bytes must be a whole number from 0 to 2^64";
        QByteArray fraction = m;
        fraction.replace("\"base_latency\":400,", "\"base_latency\":400.5,");
        QTest::newRow("fractional latency")
            << fraction << ":1: link hbm->dcache needs a base_latency from 0 to 2^32 cycles";
        QByteArray hugePage = m;
        hugePage.replace("\"page_bytes\":512", "\"page_bytes\":1e12");
        QTest::newRow("page size beyond 2^32")
            << hugePage << ":1: dcache page_bytes and bucket_pages must be positive whole numbers";
    }

    // Doubles become integers only when they are whole and fit.
    void checkedNumbers() {
        QCOMPARE(integralIfInRange<uint32_t>(400.0), std::optional<uint32_t>(400));
        QCOMPARE(integralIfInRange<uint32_t>(400.5), std::optional<uint32_t>());
        QCOMPARE(integralIfInRange<uint64_t>(-1.0), std::optional<uint64_t>());
        QCOMPARE(integralIfInRange<uint32_t>(4294967296.0), std::optional<uint32_t>());
        QCOMPARE(integralIfInRange<int64_t>(-9223372036854775808.0),
                 std::optional<int64_t>(INT64_MIN));
        QCOMPARE(integralIfInRange<int64_t>(9223372036854775808.0), std::optional<int64_t>());
        QCOMPARE(integralIfInRange<int32_t>(std::numeric_limits<double>::infinity()),
                 std::optional<int32_t>());
        QCOMPARE(integralIfInRange<int32_t>(std::nan("")), std::optional<int32_t>());
    }
    void badTracesNameTheLine() {
        QFETCH(QByteArray, body);
        QFETCH(QString, expected);
        const QString path = write(dir_.path() + "/bad.jsonl", body);
        Progress progress;
        try {
            importFiles(*ws_, {{path.toStdString()}, "", ""}, progress);
            QFAIL("bad trace accepted");
        } catch (const InputError& e) {
            QVERIFY2(QString(e.what()).contains(expected), e.what());
            QVERIFY2(QString(e.what()).startsWith(path), e.what());
        }
        QCOMPARE(count(*ws_, "SELECT count(*) FROM profiles"), 0);
        QCOMPARE(count(*ws_, "SELECT count(*) FROM blobs"), 0);
    }

    void failureHalfWayRollsBackEverything() {
        const QString good = write(dir_.path() + "/good.jsonl", bigTrace(5000));
        QByteArray broken = bigTrace(5000);
        broken.replace(R"("i":4000,)", R"("i":4001,)");  // a gap far into the second file
        const QString bad = write(dir_.path() + "/broken.jsonl", broken);
        Progress progress;
        QVERIFY_THROWS_EXCEPTION(
            InputError,
            importFiles(*ws_, {{good.toStdString(), bad.toStdString()}, "", ""}, progress));
        QCOMPARE(count(*ws_, "SELECT count(*) FROM profiles"), 0);
        QCOMPARE(count(*ws_, "SELECT count(*) FROM blobs"), 0);
        QVERIFY(ws_->uniqueName("good") == "good");
    }

    void cancellationMidImportLeavesNothing() {
        const QString big = write(dir_.path() + "/big.jsonl", bigTrace(400000));
        Progress earlier;
        importFiles(*ws_,
                    {{write(dir_.path() + "/small.jsonl", kContractExample).toStdString()}, "", ""},
                    earlier);
        int reports = 0;
        Progress progress([&](double, const std::string&) { ++reports; });
        progress.cancelAtReport(3);
        QVERIFY_THROWS_EXCEPTION(Cancelled,
                                 importFiles(*ws_, {{big.toStdString()}, "", ""}, progress));
        QCOMPARE(reports, 2);  // the third report raised the cancellation
        QCOMPARE(count(*ws_, "SELECT count(*) FROM profiles"), 1);
        QCOMPARE(QString::fromStdString(ws_->profiles()[0].name), QString("small"));
        const int blobsOfSmall = count(*ws_, "SELECT count(*) FROM blobs");
        QCOMPARE(blobsOfSmall, 1);
    }
};

QTEST_GUILESS_MAIN(TestImport)
#include "test_import.moc"
