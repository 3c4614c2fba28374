#include "views/common/format.h"

#include <QLocale>
#include <QObject>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

#include "core/compare/percent.h"

namespace stallscope::format {

namespace {

const QLocale& english() {
    static const QLocale locale(QLocale::English, QLocale::UnitedStates);
    return locale;
}

QString withSign(double value, const QString& magnitude) {
    if (magnitude.count(QRegularExpression("[1-9]")) == 0) return magnitude;
    return (value < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + magnitude;
}

}  // namespace

double stepAtLeast(double raw) {
    if (!(raw > 0) || !std::isfinite(raw)) return 1;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double mantissa : {1.0, 2.0, 5.0, 10.0})
        if (mantissa * power >= raw) return mantissa * power;
    return 10 * power;
}

double nearestWholeStep(double rough) {
    if (!(rough > 0) || !std::isfinite(rough)) return 1;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    const double m = rough / power;
    return std::max(1.0, (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * power);
}

QString count(double value) {
    return english().toString(qint64(std::llround(value)));
}

QString localCount(double value) {
    return QLocale().toString(value, 'f', 0);
}

QString signedCount(double value, int decimals) {
    const QString magnitude =
        decimals == 0 ? count(std::abs(value)) : english().toString(std::abs(value), 'f', decimals);
    return withSign(value, magnitude);
}

QString signedPercent(double value) {
    return QString::fromStdString(signedPercentText(value));
}

QString percentOf(double part, double whole) {
    return QStringLiteral("%1%").arg(whole > 0 ? 100.0 * part / whole : 0.0, 0, 'f', 1);
}

QString shortNumber(double value) {
    const double a = std::abs(value);
    if (a >= 1e9) return QString::number(value / 1e9, 'g', 3) + "G";
    if (a >= 1e6) return QString::number(value / 1e6, 'g', 3) + "M";
    if (a >= 1e3) return QString::number(value / 1e3, 'g', 3) + "k";
    return QString::number(value, 'g', 3);
}

QString wrappable(const QString& text) {
    constexpr QChar kZeroWidthSpace(0x200b);
    constexpr int kLongestRun = 24;
    QString out;
    out.reserve(text.size() + text.size() / 8);
    int run = 0;  // characters since the last place a line may break
    for (const QChar c : text) {
        out += c;
        run = c.isSpace() ? 0 : run + 1;
        if (QStringLiteral("_/\\.-:,").contains(c) || run >= kLongestRun) {
            out += kZeroWidthSpace;
            run = 0;
        }
    }
    return out;
}

QString shortSigned(double value) {
    const QString magnitude = shortNumber(std::abs(value));
    if (magnitude == QLatin1String("0")) return magnitude;
    return (value < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + magnitude;
}

QString nanoseconds(double ns) {
    const double a = std::abs(ns);
    if (a >= 1e9) return QString::number(ns / 1e9, 'f', 3) + " s";
    if (a >= 1e6) return QString::number(ns / 1e6, 'f', a >= 1e8 ? 1 : 2) + " ms";
    if (a >= 1e3) return QString::number(ns / 1e3, 'f', a >= 1e5 ? 1 : 2) + " µs";
    // Picosecond-resolution times (XProf) keep their fraction.
    const double ps = std::round(ns * 1000.0);
    if (std::fmod(ps, 1000.0) == 0.0) return QString::number(ns, 'f', 0) + " ns";
    if (a < 1.0) return QString::number(ps, 'f', 0) + " ps";
    return QString::number(ps / 1000.0, 'f', 3) + " ns";
}

QString cycles(double cycles) {
    const double a = std::abs(cycles);
    if (a >= 1e9) return QString::number(cycles / 1e9, 'g', 4) + QLatin1Char('G');
    if (a >= 1e6) return QString::number(cycles / 1e6, 'g', 4) + QLatin1Char('M');
    if (a >= 1e4) return QString::number(cycles / 1e3, 'g', 4) + QLatin1Char('k');
    return QString::number(std::round(cycles), 'f', 0);
}

QString counterUnit(const QString& seriesName) {
    const QString name = seriesName.toLower();
    if (name.contains("bytes") || name.endsWith(" mem") || name.contains("memory")) return "B";
    if (name.contains('%') || name.contains("percent") || name.contains("utilization")) return "%";
    return {};
}

QString counterValue(double value, const QString& unit) {
    const double a = std::abs(value);
    auto trim = [](double v) { return QString::number(v, 'f', std::abs(v) >= 100 ? 0 : 1); };
    if (unit == "B") {
        static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int k = 0;
        double v = value;
        while (std::abs(v) >= 1024 && k < 5) {
            v /= 1024;
            ++k;
        }
        return (k == 0 ? QString::number(value, 'g', 6) : trim(v)) + " " + units[k];
    }
    QString text;
    if (a >= 1e12)
        text = trim(value / 1e12) + " T";
    else if (a >= 1e9)
        text = trim(value / 1e9) + " G";
    else if (a >= 1e6)
        text = trim(value / 1e6) + " M";
    else if (a >= 1e4)
        text = trim(value / 1e3) + " k";
    else
        text = QString::number(value, 'g', 4);
    return unit.isEmpty() ? text : (text.endsWith(' ') ? text + unit : text + " " + unit);
}

QString dataSize(int64_t bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat);
}

QString dataSizeWithBytes(int64_t bytes) {
    const QLocale locale;
    if (bytes < 1024) return QObject::tr("%1 bytes").arg(bytes);
    return QObject::tr("%1 (%2 bytes)")
        .arg(locale.formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat),
             locale.toString(static_cast<qlonglong>(bytes)));
}

}  // namespace stallscope::format
