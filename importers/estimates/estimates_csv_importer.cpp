// CONTRACT §4: cross-fidelity estimates as CSV (workload, region, hardware, estimator,
// predicted_us, measured_us (may be empty), optional wall_s).
#include <QJsonDocument>
#include <QJsonObject>
#include <set>

#include "core/errors.h"
#include "core/sqlite.h"
#include "importers/cpi/csv_records.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

class EstimatesCsvImporter final : public Importer {
  public:
    std::string format() const override { return "estimates-csv"; }
    std::string kind() const override { return "estimates"; }
    std::string description() const override {
        return "Estimates, CSV: workload, region, hardware, estimator, predicted_us, "
               "measured_us[, wall_s]";
    }
    int detect(const Sniff& sniff) const override {
        const auto header = csv::sniffHeader(sniff.head);
        for (const char* column : {"workload", "region", "hardware", "estimator", "predicted_us"})
            if (csv::columnIndex(header, column) < 0) return 0;
        return 90;
    }
    void run(ImportContext& ctx) const override {
        const std::string& path = ctx.input.path();
        csv::RecordReader reader(ctx.input);
        std::vector<std::string> header, fields;
        if (!reader.next(header)) throw InputError(atLine(path, 1, "empty file: no header row"));
        int required[5];
        const char* names[5] = {"workload", "region", "hardware", "estimator", "predicted_us"};
        for (int i = 0; i < 5; ++i) {
            required[i] = csv::columnIndex(header, names[i]);
            if (required[i] < 0)
                throw InputError(
                    atLine(path, reader.line(),
                           std::string("header lacks the required column '") + names[i] + "'"));
        }
        const int measured = csv::columnIndex(header, "measured_us");
        const int wall = csv::columnIndex(header, "wall_s");
        int needed = std::max(measured, wall);
        for (int index : required) needed = std::max(needed, index);
        sql::Statement insert(ctx.workspace.db(),
                              "INSERT INTO estimates(profile_id, workload, region, hardware, "
                              "estimator, predicted_us, measured_us, wall_s) "
                              "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
        auto optionalNumber = [&](int column, const char* what, long long line) {
            std::optional<double> value;
            if (column < 0 || csv::trim(fields[column]).empty()) return value;
            value = csv::parseNumber(fields[column]);
            if (!value)
                throw InputError(atLine(
                    path, line, std::string(what) + " '" + fields[column] + "' is not a number"));
            if (*value < 0)
                throw InputError(atLine(path, line, std::string(what) + " must not be negative"));
            return value;
        };
        int64_t rows = 0, measuredRows = 0;
        std::set<std::string> estimators, hardware;
        while (reader.next(fields)) {
            const long long line = reader.line();
            if (static_cast<int>(fields.size()) <= needed || fields.size() > header.size())
                throw InputError(atLine(path, line,
                                        "expected " + std::to_string(header.size()) +
                                            " fields (as in the header), found " +
                                            std::to_string(fields.size())));
            for (int i = 0; i < 4; ++i)
                if (csv::trim(fields[required[i]]).empty())
                    throw InputError(atLine(path, line, std::string("empty ") + names[i]));
            const auto predicted = csv::parseNumber(fields[required[4]]);
            if (!predicted)
                throw InputError(atLine(
                    path, line, "predicted_us '" + fields[required[4]] + "' is not a number"));
            if (*predicted < 0)
                throw InputError(atLine(path, line, "predicted_us must not be negative"));
            const auto measuredUs = optionalNumber(measured, "measured_us", line);
            const auto wallS = optionalNumber(wall, "wall_s", line);
            insert.bind(1, ctx.profileId);
            for (int i = 0; i < 4; ++i) insert.bind(2 + i, csv::trim(fields[required[i]]));
            insert.bind(6, *predicted);
            if (measuredUs)
                insert.bind(7, *measuredUs);
            else
                insert.bindNull(7);
            if (wallS)
                insert.bind(8, *wallS);
            else
                insert.bindNull(8);
            insert.exec();
            ++rows;
            if (measuredUs) ++measuredRows;
            estimators.emplace(csv::trim(fields[required[3]]));
            hardware.emplace(csv::trim(fields[required[2]]));
            if ((line & 0x3FFF) == 0)
                ctx.progress.report(ctx.input.fraction(), "reading estimates");
        }
        if (rows == 0) throw InputError(atLine(path, reader.line(), "no rows after the header"));
        QJsonObject meta{{"rows", static_cast<qint64>(rows)},
                         {"measured_rows", static_cast<qint64>(measuredRows)},
                         {"estimators", static_cast<qint64>(estimators.size())},
                         {"hardware", static_cast<qint64>(hardware.size())}};
        if (measuredRows == 0)
            meta.insert("notice", "No row has measured_us: MAPE and speedup errors are empty.");
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& estimatesCsvImporter() {
    static const EstimatesCsvImporter importer;
    return importer;
}

}  // namespace stallscope
