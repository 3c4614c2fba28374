#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/errors.h"
#include "core/input_stream.h"

using namespace stallscope;

namespace {
void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QByteArray zstdBytes(const QByteArray& plain) {
    QByteArray out(static_cast<qsizetype>(ZSTD_compressBound(plain.size())), '\0');
    out.resize(static_cast<qsizetype>(
        ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 3)));
    return out;
}

QByteArray gzipBytes(const QByteArray& plain) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    QByteArray out(static_cast<qsizetype>(deflateBound(&z, plain.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    z.avail_in = static_cast<uInt>(plain.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(static_cast<qsizetype>(z.total_out));
    deflateEnd(&z);
    return out;
}

QByteArray sampleText() {
    QByteArray text;
    for (int i = 0; i < 20000; ++i) text += "line " + QByteArray::number(i) + "\r\n";
    text += "last line without newline";
    return text;
}
}  // namespace

class TestInputStream : public QObject {
    Q_OBJECT
  private slots:
    void readsEachCompression_data() {
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<int>("compression");
        QTest::newRow("plain") << "txt" << int(Compression::None);
        QTest::newRow("gzip") << "txt.gz" << int(Compression::Gzip);
        QTest::newRow("zstd") << "txt.zst" << int(Compression::Zstd);
    }
    void readsEachCompression() {
        QFETCH(QString, suffix);
        QFETCH(int, compression);
        QTemporaryDir dir;
        const QString path = dir.path() + "/in." + suffix;
        const QByteArray plain = sampleText();
        writeFile(path, compression == int(Compression::Gzip)   ? gzipBytes(plain)
                        : compression == int(Compression::Zstd) ? zstdBytes(plain)
                                                                : plain);
        InputFile in(path.toStdString());
        QCOMPARE(int(in.compression()), compression);
        QCOMPARE(QByteArray(in.peek(6).data(), 6), QByteArray("line 0"));
        LineReader lines(in);
        std::string_view line;
        int count = 0;
        std::string last;
        while (lines.next(line)) {
            if (count == 1234) QCOMPARE(std::string(line), std::string("line 1234"));  // no \r
            last = line;
            ++count;
        }
        QCOMPARE(count, 20001);
        QCOMPARE(last, std::string("last line without newline"));
        QCOMPARE(in.fraction(), 1.0);
    }

    void hashesRawBytesAcrossChunks() {
        // 3 MiB spans several 1 MiB raw reads; the streamed hash must equal a one-shot hash of
        // the bytes on disk (the compressed bytes for a .zst file, not the content).
        QTemporaryDir dir;
        QByteArray bytes;
        for (int i = 0; i < 3 * 1024 * 1024 + 17; ++i) bytes += char((i * 131) >> 3);
        for (const bool compressed : {false, true}) {
            const QByteArray onDisk = compressed ? zstdBytes(bytes) : bytes;
            const QString path = dir.path() + (compressed ? "/h.zst" : "/h.bin");
            writeFile(path, onDisk);
            InputFile in(path.toStdString());
            QCOMPARE(readAll(in).size(), size_t(bytes.size()));
            const XXH128_hash_t expected = XXH3_128bits(onDisk.data(), size_t(onDisk.size()));
            const QString hex = QString("xxh128:%1%2")
                                    .arg(expected.high64, 16, 16, QChar('0'))
                                    .arg(expected.low64, 16, 16, QChar('0'));
            QCOMPARE(QString::fromStdString(in.contentHash()), hex);
        }
        // A known answer: XXH3-128 of "abc" (xxhsum -H2).
        writeFile(dir.path() + "/abc", "abc");
        InputFile abc((dir.path() + "/abc").toStdString());
        readAll(abc);
        QCOMPARE(QString::fromStdString(abc.contentHash()),
                 QString("xxh128:06b05ab6733a618578af5f94892f3950"));
    }

    void rejectsBadFiles_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing") << "missing"
                                 << "cannot open";
        QTest::newRow("directory") << "directory"
                                   << "is a directory";
        QTest::newRow("empty") << "empty"
                               << "file is empty";
        QTest::newRow("truncated zstd") << "zstd"
                                        << "truncated zstd stream";
        QTest::newRow("truncated gzip") << "gzip"
                                        << "truncated gzip stream";
        QTest::newRow("corrupt zstd") << "corrupt"
                                      << "corrupt zstd stream";
    }
    void rejectsBadFiles() {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QString path = dir.path() + "/f";
        if (kind == "directory") path = dir.path();
        if (kind == "empty") writeFile(path, "");
        if (kind == "zstd") writeFile(path, zstdBytes(sampleText()).left(300));
        if (kind == "gzip") writeFile(path, gzipBytes(sampleText()).left(300));
        if (kind == "corrupt") {
            QByteArray bytes = zstdBytes(sampleText());
            for (int i = 20; i < 60; ++i) bytes[i] = char(0xFF);
            writeFile(path, bytes);
        }
        try {
            InputFile in(path.toStdString());
            readAll(in);
            QFAIL("bad input accepted");
        } catch (const InputError& e) {
            const QString message = e.what();
            QVERIFY2(message.contains(expected), e.what());
            QVERIFY2(message.startsWith(path), e.what());
            if (kind == "zstd" || kind == "gzip" || kind == "corrupt")
                QVERIFY2(message.contains("byte "), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestInputStream)
#include "test_input_stream.moc"
