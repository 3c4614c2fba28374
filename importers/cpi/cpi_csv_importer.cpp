// CONTRACT §3: model and hardware CPI stacks as CSV (kernel, source, category, cycles[, group]).
#include <QJsonDocument>
#include <QJsonObject>
#include <set>

#include "core/errors.h"
#include "importers/cpi/cpi_sink.h"
#include "importers/cpi/csv_records.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

class CpiCsvImporter final : public Importer {
  public:
    std::string format() const override { return "cpi-csv"; }
    std::string kind() const override { return "cpi"; }
    std::string description() const override {
        return "CPI stacks, CSV: kernel, source (hw or model), category, cycles[, group]";
    }
    int detect(const Sniff& sniff) const override {
        const auto header = csv::sniffHeader(sniff.head);
        for (const char* column : {"kernel", "source", "category", "cycles"})
            if (csv::columnIndex(header, column) < 0) return 0;
        return 90;
    }
    void run(ImportContext& ctx) const override {
        const std::string& path = ctx.input.path();
        csv::RecordReader reader(ctx.input);
        std::vector<std::string> header, fields;
        if (!reader.next(header)) throw InputError(atLine(path, 1, "empty file: no header row"));
        const int kernel = csv::columnIndex(header, "kernel");
        const int source = csv::columnIndex(header, "source");
        const int category = csv::columnIndex(header, "category");
        const int cycles = csv::columnIndex(header, "cycles");
        const int group = csv::columnIndex(header, "group");
        for (auto [index, name] : {std::pair{kernel, "kernel"}, std::pair{source, "source"},
                                   std::pair{category, "category"}, std::pair{cycles, "cycles"}})
            if (index < 0)
                throw InputError(
                    atLine(path, reader.line(),
                           std::string("header lacks the required column '") + name + "'"));
        const size_t needed =
            static_cast<size_t>(std::max({kernel, source, category, cycles, group})) + 1;
        CpiSink sink(ctx.workspace.db(), ctx.profileId);
        std::set<std::string> kernels, sources;
        while (reader.next(fields)) {
            const long long line = reader.line();
            // Short rows lack a required column; long ones have a field the header does not name
            // (often an unquoted comma inside a kernel name).
            if (fields.size() < needed || fields.size() > header.size())
                throw InputError(atLine(path, line,
                                        "expected " + std::to_string(header.size()) +
                                            " fields (as in the header), found " +
                                            std::to_string(fields.size())));
            const std::string_view k = csv::trim(fields[kernel]);
            const std::string_view s = csv::trim(fields[source]);
            const std::string_view c = csv::trim(fields[category]);
            if (k.empty()) throw InputError(atLine(path, line, "empty kernel"));
            if (s.empty()) throw InputError(atLine(path, line, "empty source"));
            if (c.empty()) throw InputError(atLine(path, line, "empty category"));
            const auto value = csv::parseNumber(fields[cycles]);
            if (!value)
                throw InputError(
                    atLine(path, line, "cycles '" + fields[cycles] + "' is not a number"));
            if (*value < 0)
                throw InputError(
                    atLine(path, line, "cycles must not be negative (" + fields[cycles] + ")"));
            sink.stack(k, s, group >= 0 ? csv::trim(fields[group]) : std::string_view(), c, *value);
            kernels.emplace(k);
            sources.emplace(s);
            if ((line & 0x3FFF) == 0) ctx.progress.report(ctx.input.fraction(), "reading stacks");
        }
        if (sink.stackRows() == 0)
            throw InputError(atLine(path, reader.line(), "no stack rows after the header"));
        QJsonObject meta{{"kernels", static_cast<qint64>(kernels.size())},
                         {"sources", static_cast<qint64>(sources.size())},
                         {"rows", static_cast<qint64>(sink.stackRows())}};
        if (!sources.count("hw"))
            meta.insert("notice", "No source is 'hw': stacks are shown, MAPE needs measurements.");
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& cpiCsvImporter() {
    static const CpiCsvImporter importer;
    return importer;
}

}  // namespace stallscope
