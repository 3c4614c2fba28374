#include "core/trace/dialect.h"

#include <QJsonArray>
#include <array>
#include <utility>

#include "core/trace/trace_store.h"

namespace stallscope::trace {

namespace {

constexpr std::array<std::pair<Dialect, std::string_view>, 4> kDialectNames{{
    {Dialect::Kineto, "kineto"},
    {Dialect::Xla, "xla"},
    {Dialect::Chakra, "chakra"},
    {Dialect::Chrome, "chrome"},
}};

constexpr std::array<std::pair<Evidence, std::string_view>, 4> kEvidenceNames{{
    {Evidence::ChromeThreads, "chrome_threads"},
    {Evidence::XlaOpLines, "xla_op_lines"},
    {Evidence::NodeGraph, "node_graph"},
    {Evidence::Durations, "durations"},
}};

// Profiles from before importers recorded a dialect: their format, as the import noted it.
Dialect dialectOfFormat(const QString& format) {
    if (format == QLatin1String("xprof-xspace")) return Dialect::Xla;
    if (format == QLatin1String("chakra-et")) return Dialect::Chakra;
    if (format.startsWith(QLatin1String("chrome"))) return Dialect::Chrome;
    return Dialect::Unknown;
}

}  // namespace

std::string_view dialectName(Dialect dialect) {
    for (const auto& [d, name] : kDialectNames)
        if (d == dialect) return name;
    return {};
}

Dialect dialectFromName(std::string_view name) {
    for (const auto& [d, known] : kDialectNames)
        if (known == name) return d;
    return Dialect::Unknown;
}

std::string_view evidenceName(Evidence e) {
    for (const auto& [known, name] : kEvidenceNames)
        if (known == e) return name;
    return {};
}

EvidenceSet defaultEvidence(Dialect dialect) {
    EvidenceSet out;
    switch (dialect) {
        case Dialect::Kineto:
        case Dialect::Chrome:
            return out.add(Evidence::ChromeThreads).add(Evidence::Durations);
        case Dialect::Xla:
            return out.add(Evidence::XlaOpLines).add(Evidence::Durations);
        case Dialect::Chakra:
            return out.add(Evidence::NodeGraph).add(Evidence::Durations);
        case Dialect::Unknown:
            break;
    }
    return out;
}

void recordDialect(QJsonObject& metadata, Dialect dialect, EvidenceSet evidence) {
    metadata.insert("dialect", QString::fromUtf8(dialectName(dialect).data(),
                                                 qsizetype(dialectName(dialect).size())));
    QJsonArray names;
    for (const auto& [e, name] : kEvidenceNames)
        if (evidence.has(e)) names.append(QString::fromUtf8(name.data(), qsizetype(name.size())));
    metadata.insert("evidence", names);
}

Dialect dialectOf(const QJsonObject& metadata) {
    const QString name = metadata.value("dialect").toString();
    if (!name.isEmpty()) return dialectFromName(name.toStdString());
    return dialectOfFormat(metadata.value("format").toString());
}

EvidenceSet evidenceOf(const QJsonObject& metadata) {
    if (!metadata.contains("evidence")) return defaultEvidence(dialectOf(metadata));
    EvidenceSet out;
    for (const QJsonValue v : metadata.value("evidence").toArray())
        for (const auto& [e, name] : kEvidenceNames)
            if (v.toString().toStdString() == name) out.add(e);
    return out;
}

Dialect dialectOf(const TraceStore& store) {
    return dialectOf(store.metadata());
}

EvidenceSet evidenceOf(const TraceStore& store) {
    return evidenceOf(store.metadata());
}

}  // namespace stallscope::trace
