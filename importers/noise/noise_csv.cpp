// Noise-injection results, CSV (CONTRACT §2): one row per timed run, read as a stream.
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/checked_number.h"
#include "core/errors.h"
#include "core/sqlite.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

// Splits one CSV record (RFC 4180 quoting). Returns false when a quoted field is still open at
// the end of `text`, so the caller appends the next line and tries again.
bool splitRecord(std::string_view text, std::vector<std::string>& fields) {
    fields.clear();
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.push_back(std::move(field));
            field.clear();
        } else {
            field += c;
        }
    }
    if (quoted) return false;
    fields.push_back(std::move(field));
    return true;
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::optional<double> parseDouble(std::string_view text) {
    text = trimmed(text);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
        !std::isfinite(value))
        return std::nullopt;
    return value;
}

// Column positions of one file's header.
struct Columns {
    int region = -1, mode = -1, k = -1, timeNs = -1, cycles = -1;
    int machine = -1, rep = -1, body = -1, payload = -1, overhead = -1, cores = -1, perf = -1;
    std::vector<std::pair<int, std::string>> params;  // column, name after "param."
    std::vector<std::pair<int, std::string>> extra;   // unknown columns
    size_t count = 0;

    int time() const { return timeNs >= 0 ? timeNs : cycles; }
};

Columns parseHeader(const std::vector<std::string>& names) {
    Columns c;
    c.count = names.size();
    const std::map<std::string, int Columns::*> known{{"region", &Columns::region},
                                                      {"mode", &Columns::mode},
                                                      {"k", &Columns::k},
                                                      {"time_ns", &Columns::timeNs},
                                                      {"cycles", &Columns::cycles},
                                                      {"machine", &Columns::machine},
                                                      {"rep", &Columns::rep},
                                                      {"body_instr", &Columns::body},
                                                      {"payload_instr", &Columns::payload},
                                                      {"overhead_instr", &Columns::overhead},
                                                      {"cores", &Columns::cores},
                                                      {"perf", &Columns::perf}};
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string name(trimmed(names[i]));
        const int column = static_cast<int>(i);
        if (auto it = known.find(name); it != known.end())
            c.*(it->second) = column;
        else if (name.starts_with("param.") && name.size() > 6)
            c.params.emplace_back(column, name.substr(6));
        else if (!name.empty())
            c.extra.emplace_back(column, name);
    }
    return c;
}

// A header naming the required columns is what makes a CSV a noise-injection result.
bool looksLikeNoiseHeader(std::string_view head) {
    const std::string_view line = head.substr(0, head.find('\n'));
    std::vector<std::string> fields;
    if (!splitRecord(line, fields)) return false;
    const Columns c = parseHeader(fields);
    return c.region >= 0 && c.mode >= 0 && c.k >= 0 && c.time() >= 0;
}

std::string compactJson(const QJsonObject& o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString();
}

class NoiseCsvImporter final : public Importer {
  public:
    std::string format() const override { return "noise-csv"; }
    std::string kind() const override { return "noise"; }
    std::string description() const override {
        return "Noise-injection results, CSV (region, mode, k, time_ns|cycles, ...)";
    }
    int detect(const Sniff& sniff) const override {
        return looksLikeNoiseHeader(sniff.head) ? 80 : 0;
    }
    void run(ImportContext& ctx) const override;
};

void NoiseCsvImporter::run(ImportContext& ctx) const {
    const std::string& path = ctx.input.path();
    LineReader lines(ctx.input);
    std::string_view line;
    std::string record;
    std::vector<std::string> fields;

    // Reads the next non-blank record (joining lines inside quotes); false at the end.
    long long recordLine = 0;
    auto nextRecord = [&]() -> bool {
        while (lines.next(line)) {
            recordLine = lines.lineNumber();
            if (trimmed(line).empty()) continue;
            record.assign(line);
            while (!splitRecord(record, fields)) {
                if (!lines.next(line))
                    throw InputError(atLine(path, recordLine, "unterminated quoted field"));
                record += '\n';
                record.append(line);
            }
            return true;
        }
        return false;
    };

    if (!nextRecord()) throw InputError(atLine(path, 1, "empty file: a header row is required"));
    const Columns cols = parseHeader(fields);
    for (auto [column, name] :
         {std::pair{cols.region, "region"}, std::pair{cols.mode, "mode"}, std::pair{cols.k, "k"}})
        if (column < 0)
            throw InputError(
                atLine(path, recordLine, std::string("missing required column '") + name + "'"));
    if (cols.time() < 0)
        throw InputError(
            atLine(path, recordLine, "missing required column 'time_ns' (or 'cycles')"));
    const std::string timeUnit = cols.timeNs >= 0 ? "ns" : "cycles";
    const std::string timeName = cols.timeNs >= 0 ? "time_ns" : "cycles";

    sql::Statement insert(ctx.workspace.db(),
                          "INSERT INTO noise_runs(profile_id, line, machine, region, mode, k, "
                          "time, time_unit, rep, body_instr, payload_instr, overhead_instr, "
                          "cores, perf, params, extra) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    std::set<std::string> machines, regions, modes, paramNames;
    long long rows = 0;
    while (nextRecord()) {
        const long long lineNo = recordLine;
        auto fail = [&](const std::string& what) { throw InputError(atLine(path, lineNo, what)); };
        auto field = [&](int column) -> std::string_view {
            return column >= 0 && size_t(column) < fields.size() ? trimmed(fields[column])
                                                                 : std::string_view();
        };
        auto required = [&](int column, const char* name) {
            if (size_t(column) >= fields.size())
                fail(std::string("missing required column '") + name + "' (row has " +
                     std::to_string(fields.size()) + " of " + std::to_string(cols.count) +
                     " fields)");
            const std::string_view v = field(column);
            if (v.empty()) fail(std::string("empty required field '") + name + "'");
            return v;
        };
        auto number = [&](int column, const char* name) -> std::optional<double> {
            const std::string_view v = field(column);
            if (v.empty()) return std::nullopt;
            const auto value = parseDouble(v);
            if (!value) fail(std::string(name) + " '" + std::string(v) + "' is not a number");
            return value;
        };

        const std::string region(required(cols.region, "region"));
        const std::string mode(required(cols.mode, "mode"));
        required(cols.k, "k");
        const double k = *number(cols.k, "k");
        if (k < 0) fail("k must not be negative (got " + std::string(field(cols.k)) + ")");
        required(cols.time(), timeName.c_str());
        const double time = *number(cols.time(), timeName.c_str());
        if (time < 0)
            fail(timeName + " must not be negative (got " + std::string(field(cols.time())) + ")");
        const auto rep = number(cols.rep, "rep");
        const auto body = number(cols.body, "body_instr");
        const auto payload = number(cols.payload, "payload_instr");
        const auto overhead = number(cols.overhead, "overhead_instr");
        const auto cores = number(cols.cores, "cores");
        const auto perf = number(cols.perf, "perf");
        if (body && *body <= 0) fail("body_instr must be positive");

        QJsonObject params, extra;
        for (const auto& [column, name] : cols.params) {
            const std::string_view v = field(column);
            if (v.empty()) continue;
            const QString key = QString::fromStdString(name);
            if (const auto value = parseDouble(v))
                params.insert(key, *value);
            else
                params.insert(key, QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size())));
            paramNames.insert(name);
        }
        for (const auto& [column, name] : cols.extra) {
            const std::string_view v = field(column);
            if (!v.empty())
                extra.insert(QString::fromStdString(name),
                             QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size())));
        }
        if (cols.timeNs >= 0 && cols.cycles >= 0 && !field(cols.cycles).empty())
            extra.insert("cycles", QString::fromUtf8(field(cols.cycles).data(),
                                                     qsizetype(field(cols.cycles).size())));

        const std::string machine(field(cols.machine));
        insert.bind(1, ctx.profileId).bind(2, static_cast<int64_t>(lineNo));
        insert.bind(3, machine).bind(4, region).bind(5, mode).bind(6, k).bind(7, time);
        insert.bind(8, timeUnit);
        auto bindOptional = [&](int index, const std::optional<double>& v, bool integer) {
            if (!v)
                insert.bindNull(index);
            else if (integer) {
                const auto whole = integralIfInRange<int64_t>(std::round(*v));
                if (!whole) throw InputError(atLine(path, lineNo, "a repeat number beyond 2^63"));
                insert.bind(index, *whole);
            } else
                insert.bind(index, *v);
        };
        bindOptional(9, rep, true);
        bindOptional(10, body, false);
        bindOptional(11, payload, false);
        bindOptional(12, overhead, false);
        bindOptional(13, cores, true);
        bindOptional(14, perf, false);
        insert.bind(15, compactJson(params)).bind(16, compactJson(extra));
        insert.exec();

        machines.insert(machine);
        regions.insert(region);
        modes.insert(mode);
        if ((++rows & 0xFFF) == 0) ctx.progress.report(ctx.input.fraction(), "reading noise runs");
    }
    if (rows == 0) throw InputError(atLine(path, recordLine, "no runs after the header"));

    auto list = [](const std::set<std::string>& values) {
        QStringList out;
        for (const auto& v : values) out << QString::fromStdString(v);
        return QJsonValue::fromVariant(out);
    };
    QJsonObject meta{{"runs", rows},
                     {"machines", list(machines)},
                     {"regions", list(regions)},
                     {"modes", list(modes)},
                     {"params", list(paramNames)},
                     {"time_unit", QString::fromStdString(timeUnit)}};
    QStringList extraColumns;
    for (const auto& [column, name] : cols.extra) extraColumns << QString::fromStdString(name);
    meta.insert("extra_columns", QJsonValue::fromVariant(extraColumns));
    ctx.metadataJson = compactJson(meta);
}

}  // namespace

const Importer& noiseCsvImporter() {
    static const NoiseCsvImporter instance;
    return instance;
}

}  // namespace stallscope
