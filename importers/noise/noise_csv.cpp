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

// The records of one file: non-blank lines, a quoted field joining the lines it spans.
class RecordReader {
  public:
    RecordReader(InputFile& input, const std::string& path) : lines_(input), path_(path) {}
    // Reads the next record into fields(); false at the end.
    bool next() {
        while (lines_.next(line_)) {
            recordLine_ = lines_.lineNumber();
            if (trimmed(line_).empty()) continue;
            record_.assign(line_);
            while (!splitRecord(record_, fields_)) {
                if (!lines_.next(line_))
                    throw InputError(atLine(path_, recordLine_, "unterminated quoted field"));
                record_ += '\n';
                record_.append(line_);
            }
            return true;
        }
        return false;
    }
    const std::vector<std::string>& fields() const { return fields_; }
    // The line the last record starts on (the last line read, at the end).
    long long line() const { return recordLine_; }

  private:
    LineReader lines_;
    const std::string& path_;
    std::string_view line_;
    std::string record_;
    std::vector<std::string> fields_;
    long long recordLine_ = 0;
};

void requireColumns(const Columns& cols, const std::string& path, long long line) {
    for (auto [column, name] :
         {std::pair{cols.region, "region"}, std::pair{cols.mode, "mode"}, std::pair{cols.k, "k"}})
        if (column < 0)
            throw InputError(
                atLine(path, line, std::string("missing required column '") + name + "'"));
    if (cols.time() < 0)
        throw InputError(atLine(path, line, "missing required column 'time_ns' (or 'cycles')"));
}

// The fields of one record by column; a failure names the record's line.
struct RowFields {
    const std::vector<std::string>& fields;
    const Columns& cols;
    const std::string& path;
    long long line;

    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(atLine(path, line, what));
    }
    std::string_view field(int column) const {
        return column >= 0 && size_t(column) < fields.size() ? trimmed(fields[column])
                                                             : std::string_view();
    }
    std::string_view required(int column, const char* name) const {
        if (size_t(column) >= fields.size())
            fail(std::string("missing required column '") + name + "' (row has " +
                 std::to_string(fields.size()) + " of " + std::to_string(cols.count) + " fields)");
        const std::string_view v = field(column);
        if (v.empty()) fail(std::string("empty required field '") + name + "'");
        return v;
    }
    std::optional<double> number(int column, const char* name) const {
        const std::string_view v = field(column);
        if (v.empty()) return std::nullopt;
        const auto value = parseDouble(v);
        if (!value) fail(std::string(name) + " '" + std::string(v) + "' is not a number");
        return value;
    }
};

// One run as a row of noise_runs.
struct NoiseRow {
    std::string machine, region, mode;
    double k = 0, time = 0;
    std::optional<double> rep, body, payload, overhead, cores, perf;
    QJsonObject params, extra;
};

NoiseRow parseRow(const RowFields& row, const std::string& timeName,
                  std::set<std::string>& paramNames) {
    const Columns& cols = row.cols;
    NoiseRow r;
    r.region = std::string(row.required(cols.region, "region"));
    r.mode = std::string(row.required(cols.mode, "mode"));
    row.required(cols.k, "k");
    r.k = *row.number(cols.k, "k");
    if (r.k < 0) row.fail("k must not be negative (got " + std::string(row.field(cols.k)) + ")");
    row.required(cols.time(), timeName.c_str());
    r.time = *row.number(cols.time(), timeName.c_str());
    if (r.time < 0)
        row.fail(timeName + " must not be negative (got " + std::string(row.field(cols.time())) +
                 ")");
    r.rep = row.number(cols.rep, "rep");
    r.body = row.number(cols.body, "body_instr");
    r.payload = row.number(cols.payload, "payload_instr");
    r.overhead = row.number(cols.overhead, "overhead_instr");
    r.cores = row.number(cols.cores, "cores");
    r.perf = row.number(cols.perf, "perf");
    if (r.body && *r.body <= 0) row.fail("body_instr must be positive");

    for (const auto& [column, name] : cols.params) {
        const std::string_view v = row.field(column);
        if (v.empty()) continue;
        const QString key = QString::fromStdString(name);
        if (const auto value = parseDouble(v))
            r.params.insert(key, *value);
        else
            r.params.insert(key, QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size())));
        paramNames.insert(name);
    }
    for (const auto& [column, name] : cols.extra) {
        const std::string_view v = row.field(column);
        if (!v.empty())
            r.extra.insert(QString::fromStdString(name),
                           QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size())));
    }
    if (cols.timeNs >= 0 && cols.cycles >= 0 && !row.field(cols.cycles).empty())
        r.extra.insert("cycles", QString::fromUtf8(row.field(cols.cycles).data(),
                                                   qsizetype(row.field(cols.cycles).size())));
    r.machine = std::string(row.field(cols.machine));
    return r;
}

void insertRun(sql::Statement& insert, int64_t profileId, const RowFields& row, const NoiseRow& r,
               const std::string& timeUnit) {
    insert.bind(1, profileId).bind(2, static_cast<int64_t>(row.line));
    insert.bind(3, r.machine).bind(4, r.region).bind(5, r.mode).bind(6, r.k).bind(7, r.time);
    insert.bind(8, timeUnit);
    auto bindOptional = [&](int index, const std::optional<double>& v, bool integer) {
        if (!v)
            insert.bindNull(index);
        else if (integer) {
            const auto whole = integralIfInRange<int64_t>(std::round(*v));
            if (!whole) row.fail("a repeat number beyond 2^63");
            insert.bind(index, *whole);
        } else
            insert.bind(index, *v);
    };
    bindOptional(9, r.rep, true);
    bindOptional(10, r.body, false);
    bindOptional(11, r.payload, false);
    bindOptional(12, r.overhead, false);
    bindOptional(13, r.cores, true);
    bindOptional(14, r.perf, false);
    insert.bind(15, compactJson(r.params)).bind(16, compactJson(r.extra));
    insert.exec();
}

// What the profile's metadata says of its runs.
struct RunSummary {
    long long rows = 0;
    std::set<std::string> machines, regions, modes, paramNames;
};

std::string noiseMetadata(const RunSummary& runs, const Columns& cols,
                          const std::string& timeUnit) {
    auto list = [](const std::set<std::string>& values) {
        QStringList out;
        for (const auto& v : values) out << QString::fromStdString(v);
        return QJsonValue::fromVariant(out);
    };
    QJsonObject meta{{"runs", runs.rows},
                     {"machines", list(runs.machines)},
                     {"regions", list(runs.regions)},
                     {"modes", list(runs.modes)},
                     {"params", list(runs.paramNames)},
                     {"time_unit", QString::fromStdString(timeUnit)}};
    QStringList extraColumns;
    for (const auto& [column, name] : cols.extra) extraColumns << QString::fromStdString(name);
    meta.insert("extra_columns", QJsonValue::fromVariant(extraColumns));
    return compactJson(meta);
}

void NoiseCsvImporter::run(ImportContext& ctx) const {
    const std::string& path = ctx.input.path();
    RecordReader records(ctx.input, path);
    if (!records.next()) throw InputError(atLine(path, 1, "empty file: a header row is required"));
    const Columns cols = parseHeader(records.fields());
    requireColumns(cols, path, records.line());
    const std::string timeUnit = cols.timeNs >= 0 ? "ns" : "cycles";
    const std::string timeName = cols.timeNs >= 0 ? "time_ns" : "cycles";

    sql::Statement insert(ctx.workspace.db(),
                          "INSERT INTO noise_runs(profile_id, line, machine, region, mode, k, "
                          "time, time_unit, rep, body_instr, payload_instr, overhead_instr, "
                          "cores, perf, params, extra) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    RunSummary runs;
    while (records.next()) {
        const RowFields row{records.fields(), cols, path, records.line()};
        const NoiseRow r = parseRow(row, timeName, runs.paramNames);
        insertRun(insert, ctx.profileId, row, r, timeUnit);
        runs.machines.insert(r.machine);
        runs.regions.insert(r.region);
        runs.modes.insert(r.mode);
        if ((++runs.rows & 0xFFF) == 0)
            ctx.progress.report(ctx.input.fraction(), "reading noise runs");
    }
    if (runs.rows == 0) throw InputError(atLine(path, records.line(), "no runs after the header"));
    ctx.metadataJson = noiseMetadata(runs, cols, timeUnit);
}

}  // namespace

const Importer& noiseCsvImporter() {
    static const NoiseCsvImporter instance;
    return instance;
}

}  // namespace stallscope
