// Every real sample file through auto-detection and its importer, as a user's `stallscope import`
// runs it, checked against facts computed independently (real_corpus.tsv beside this file: a new
// real file is one line there). Rows whose file is absent are skipped, as is the whole test when
// ../shared/samples is not there.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kSamples = QStringLiteral(STALLSCOPE_SHARED_DIR "/samples/");

struct Fact {
    QString path, expected;
};

// PATH into a JSON value: keys joined by '.', [N] for an index, [key=value] for the element of
// an array whose member `key` reads as `value`. Returns an undefined value when it leads nowhere.
QJsonValue lookUp(QJsonValue at, const QString& path) {
    static const QRegularExpression step(
        QStringLiteral(R"(([^.\[\]]+)|\[([^\]=]+)=([^\]]*)\]|\[(\d+)\])"));
    auto it = step.globalMatch(path);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        if (!m.captured(1).isEmpty()) {
            if (!at.isObject()) return QJsonValue(QJsonValue::Undefined);
            at = at.toObject().value(m.captured(1));
        } else if (!m.captured(4).isEmpty()) {
            const QJsonArray array = at.toArray();
            const int index = m.captured(4).toInt();
            if (index >= array.size()) return QJsonValue(QJsonValue::Undefined);
            at = array.at(index);
        } else {
            QJsonValue found(QJsonValue::Undefined);
            for (const QJsonValue& element : at.toArray()) {
                const QJsonValue member = element.toObject().value(m.captured(2));
                const QString text = member.isString()
                                         ? member.toString()
                                         : QString::number(member.toDouble(), 'g', 17);
                if (text == m.captured(3)) {
                    found = element;
                    break;
                }
            }
            at = found;
        }
        if (at.isUndefined()) return at;
    }
    return at;
}

// Numbers compare as numbers (exactly: every fact is a count or an integer time), the rest as text.
bool matches(const QJsonValue& actual, const QString& expected) {
    bool isNumber = false;
    const double number = expected.toDouble(&isNumber);
    if (isNumber && actual.isDouble()) return actual.toDouble() == number;
    if (actual.isString()) return actual.toString() == expected;
    if (actual.isBool()) return (actual.toBool() ? "true" : "false") == expected;
    return false;
}

QString show(const QJsonValue& v) {
    if (v.isUndefined()) return QStringLiteral("(absent)");
    if (v.isString()) return v.toString();
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 17);
    if (v.isBool()) return v.toBool() ? "true" : "false";
    return QString::fromUtf8(
        QJsonDocument(v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject()))
            .toJson(QJsonDocument::Compact)
            .left(200));
}

}  // namespace

class TestRealCorpus : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString stallscope(const QStringList& args, const QString& store, int& status) {
        QProcess p;
        p.start(STALLSCOPE_BINARY, QStringList{"--store", store} + args);
        if (!p.waitForFinished(240000)) qFatal("stallscope did not finish");
        status = p.exitCode();
        return QString::fromUtf8(p.readAllStandardOutput()) +
               QString::fromUtf8(p.readAllStandardError());
    }

  private slots:
    void importsEveryFileExactly_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QStringList>("facts");
        QFile table(QStringLiteral(STALLSCOPE_CORPUS_TABLE));
        QVERIFY2(table.open(QIODevice::ReadOnly), "real_corpus.tsv is missing");
        int rows = 0;
        while (!table.atEnd()) {
            const QString line = QString::fromUtf8(table.readLine()).trimmed();
            if (line.isEmpty() || line.startsWith('#')) continue;
            const QStringList fields = line.split('\t');
            QVERIFY2(fields.size() >= 3, qPrintable("a corpus row needs a file, a format and "
                                                    "facts: " +
                                                    line));
            QTest::newRow(qPrintable(fields[0])) << fields[0] << fields[1] << fields.mid(2);
            ++rows;
        }
        QVERIFY(rows >= 15);
    }

    void importsEveryFileExactly() {
        QFETCH(QString, file);
        QFETCH(QString, format);
        QFETCH(QStringList, facts);
        if (!QFile::exists(kSamples)) QSKIP("../shared/samples is absent");
        const QString path = kSamples + file;
        if (!QFile::exists(path)) QSKIP(qPrintable(file + " is absent"));
        // One workspace per file: facts such as ids and names do not depend on the others.
        const QString store = dir_.filePath(QString(file).replace('/', '_') + ".sqlite");
        int status = -1;
        const QString imported = stallscope({"import", path}, store, status);
        QVERIFY2(status == 0, qPrintable(imported));
        const QString id = imported.section('\t', 0, 0);
        const QString info = stallscope({"info", id, "--json"}, store, status);
        QCOMPARE(status, 0);
        const QJsonObject root = QJsonDocument::fromJson(info.toUtf8()).object();
        QCOMPARE(root.value("metadata").toObject().value("format").toString(), format);
        for (const QString& fact : facts) {
            const qsizetype eq = fact.lastIndexOf('=');
            QVERIFY2(eq > 0, qPrintable("a fact is PATH=VALUE: " + fact));
            const QString key = fact.left(eq), expected = fact.mid(eq + 1);
            const QJsonValue actual = lookUp(root, key);
            QVERIFY2(
                matches(actual, expected),
                qPrintable(file + ": " + key + " is " + show(actual) + ", expected " + expected));
        }
    }
};

QTEST_GUILESS_MAIN(TestRealCorpus)
#include "test_real_corpus.moc"
