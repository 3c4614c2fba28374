// Nsight Compute CSV exports: `ncu --csv --page details` (one row per kernel and metric, with
// rule rows) and `--page raw` (a header of metric names, a units row, one row per kernel).
// Every metric goes to kernel_metrics; a CPI stack is built from the warp-state metrics when the
// file has them.
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <array>
#include <map>

#include "core/errors.h"
#include "importers/cpi/cpi_sink.h"
#include "importers/cpi/csv_records.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

constexpr const char* kSource = "hw";
constexpr const char* kCliSection = "Command line profiler metrics";

// Columns that identify a launch rather than measure it (they vary across ncu versions).
bool isIdentityColumn(std::string_view name) {
    static const std::array<std::string_view, 14> columns{
        "ID",          "Process ID", "Process Name", "Host Name",    "Kernel Name",
        "Kernel Time", "Context",    "Stream",       "Block Size",   "Grid Size",
        "Device",      "CC",         "API Stream",   "Function Name"};
    for (std::string_view c : columns)
        if (c == name) return true;
    return false;
}

// The warp-state metric families, best first. Each yields (reason, value) per kernel.
struct StallFamily {
    const char* prefix;
    const char* reasonEnd;  // the reason ends where this starts ("." when empty)
    const char* label;
};
const StallFamily kStallFamilies[] = {
    {"smsp__average_warps_issue_stalled_", "_per_issue_active",
     "smsp__average_warps_issue_stalled_*_per_issue_active"},
    {"smsp__warp_issue_stalled_", "_per_warp_active", "smsp__warp_issue_stalled_*_per_warp_active"},
    {"smsp__average_warp_latency_issue_stalled_", "", "smsp__average_warp_latency_issue_stalled_*"},
    {"smsp__pcsamp_warps_issue_stalled_", "", "smsp__pcsamp_warps_issue_stalled_*"},
};
constexpr int kFamilies = static_cast<int>(std::size(kStallFamilies));

// (family index, reason) of a warp-state metric, or family -1.
std::pair<int, std::string> stallReason(std::string_view metric) {
    for (int f = 0; f < kFamilies; ++f) {
        const StallFamily& family = kStallFamilies[f];
        if (!metric.starts_with(family.prefix)) continue;
        std::string_view rest = metric.substr(std::string_view(family.prefix).size());
        size_t end = *family.reasonEnd ? rest.find(family.reasonEnd) : rest.find('.');
        if (end == std::string_view::npos) {
            if (*family.reasonEnd) continue;
            end = rest.size();
        }
        std::string reason(rest.substr(0, end));
        // Sampled "not issued" variants count a subset of the same samples.
        if (reason.empty() || reason.ends_with("_not_issued")) return {-1, {}};
        if (reason == "no_instructions") reason = "no_instruction";
        return {f, reason};
    }
    return {-1, {}};
}

// Elapsed-cycle metrics, best first; the details page names it "Elapsed Cycles".
int cyclesRank(std::string_view metric) {
    static const std::array<std::string_view, 5> names{
        "gpc__cycles_elapsed.max", "sm__cycles_elapsed.max", "Elapsed Cycles",
        "sm__cycles_elapsed.avg", "gpu__cycles_elapsed.max"};
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == metric) return static_cast<int>(i);
    return -1;
}

double cycleUnitScale(std::string_view unit) {
    if (unit == "Kcycle") return 1e3;
    if (unit == "Mcycle") return 1e6;
    if (unit == "Gcycle") return 1e9;
    return 1;
}

// What one kernel contributed so far.
struct KernelState {
    std::string key;
    int bestCyclesRank = 1 << 20;
    std::optional<double> cycles;
    std::array<std::map<std::string, double>, kFamilies> stalls;
    // The metric each reason was read from: another variant of it (".pct" beside ".ratio")
    // counts the same stalls again.
    std::array<std::map<std::string, std::string>, kFamilies> sources;

    void start(std::string kernel) {
        key = std::move(kernel);
        bestCyclesRank = 1 << 20;
        cycles.reset();
        for (auto& family : stalls) family.clear();
        for (auto& family : sources) family.clear();
    }

    void consider(std::string_view metric, std::string_view unit, double value) {
        if (const int rank = cyclesRank(metric); rank >= 0 && rank < bestCyclesRank) {
            bestCyclesRank = rank;
            cycles = value * cycleUnitScale(unit);
        }
        if (auto [family, reason] = stallReason(metric); family >= 0) {
            const auto [source, fresh] = sources[family].try_emplace(reason, metric);
            if (fresh || source->second == metric) stalls[family][reason] += value;
        }
    }
};

struct Summary {
    int64_t kernels = 0;
    int64_t kernelsWithStacks = 0;
    int64_t kernelsWithoutCycles = 0;  // warp-state metrics but no elapsed cycles: no stack
    std::map<std::string, int64_t> familyUse;
};

// Writes the kernel's stack: each reason's share of the warp-state total times the kernel's
// elapsed cycles, so the stack adds up to the cycles Nsight Compute measured. Without elapsed
// cycles the warp-state values (ratios or sample counts) are not cycles: no stack is written,
// they stay in the kernel's metrics and the profile's notice says so.
void finishKernel(const KernelState& k, CpiSink& sink, Summary& summary) {
    if (k.key.empty()) return;
    ++summary.kernels;
    for (int f = 0; f < kFamilies; ++f) {
        // A reason split further ("long_scoreboard_pipe_l1tex" beside "long_scoreboard") is
        // part of the reason it extends: counted once, as that reason.
        std::map<std::string, double> reasons;
        for (const auto& entry : k.stalls[f]) {  // captured below: no structured binding
            const std::string& reason = entry.first;
            const bool part =
                std::any_of(k.stalls[f].begin(), k.stalls[f].end(), [&reason](const auto& other) {
                    return other.first.size() < reason.size() &&
                           reason.starts_with(other.first + "_");
                });
            if (!part) reasons.emplace(reason, entry.second);
        }
        double total = 0;
        for (const auto& [reason, value] : reasons) total += value;
        if (reasons.empty() || !(total > 0)) continue;
        if (!k.cycles) {
            ++summary.kernelsWithoutCycles;
            return;
        }
        for (const auto& [reason, value] : reasons)
            sink.stack(k.key, kSource, "", reason, value / total * *k.cycles);
        ++summary.kernelsWithStacks;
        ++summary.familyUse[kStallFamilies[f].label];
        return;
    }
}

std::string kernelKey(const std::vector<std::string>& fields, int idColumn, int nameColumn,
                      long long fallbackId) {
    const std::string name = nameColumn >= 0 && nameColumn < static_cast<int>(fields.size())
                                 ? std::string(csv::trim(fields[nameColumn]))
                                 : std::string();
    std::string id = idColumn >= 0 && idColumn < static_cast<int>(fields.size())
                         ? std::string(csv::trim(fields[idColumn]))
                         : std::to_string(fallbackId);
    // Launches of the same kernel stay apart: the ID is what ncu uses to tell them apart.
    return "#" + id + " " + name;
}

void storeValue(CpiSink& sink, const std::string& kernel, std::string_view name,
                std::string_view unit, const std::string& raw, KernelState& state,
                std::string_view stallName) {
    const std::string_view text = csv::trim(raw);
    if (const auto value = csv::parseNumber(text)) {
        sink.metric(kernel, kSource, name, unit, value);
        state.consider(stallName, unit, *value);
    } else {
        // "n/a", launch shapes like "(32, 4, 1)", names: kept as text.
        sink.metric(kernel, kSource, name, unit, std::nullopt, text);
    }
}

class NcuCsvImporter final : public Importer {
  public:
    std::string format() const override { return "ncu-csv"; }
    std::string kind() const override { return "cpi"; }
    std::string description() const override {
        return "Nsight Compute CSV (ncu --csv --page details or --page raw)";
    }
    int detect(const Sniff& sniff) const override {
        std::string_view head = csv::stripBom(sniff.head);
        while (!head.empty()) {
            const auto end = head.find('\n');
            const std::string_view line = head.substr(0, end);
            // The table's header: the first line naming the kernel column (ncu's table captured
            // from stdout follows the application's own output).
            if (!line.starts_with("==") && line.find("Kernel Name") != std::string_view::npos) {
                const auto header = csv::splitLine(line);
                if (csv::columnIndex(header, "Kernel Name") < 0) return 0;
                const bool details = csv::columnIndex(header, "Metric Name") >= 0 &&
                                     csv::columnIndex(header, "Metric Value") >= 0;
                return details || csv::columnIndex(header, "ID") >= 0 ? 95 : 60;
            }
            if (end == std::string_view::npos) break;
            head.remove_prefix(end + 1);
        }
        // Only ncu's own messages: an export without kernels, refused with that said.
        const std::string_view text = csv::stripBom(sniff.head);
        return text.starts_with("==PROF==") || text.starts_with("==WARNING==") ||
                       text.starts_with("==ERROR==")
                   ? 50
                   : 0;
    }

    void run(ImportContext& ctx) const override {
        const std::string& path = ctx.input.path();
        csv::RecordReader reader(ctx.input);
        // `==PROF==`, `==WARNING==` and `==ERROR==` lines come from ncu itself, not the table;
        // they may hold commas and quotes, so they are dropped before CSV parsing.
        reader.skipLinesStartingWith("==");
        reader.skipLinesBefore("Kernel Name");
        std::vector<std::string> header, fields;
        auto nextRecord = [&](std::vector<std::string>& out) { return reader.next(out); };
        if (!nextRecord(header)) {
            if (reader.skippedLines() > 0) {
                // ncu's own explanation, when it gave one ("No kernels were profiled.").
                const auto& lines = reader.firstSkippedLines();
                auto why = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
                    return !l.starts_with("==PROF==");
                });
                throw InputError(path +
                                 ": an Nsight Compute export without kernels: ncu printed only "
                                 "its own messages, no table of kernels" +
                                 (why != lines.end() ? " ('" + *why + "')" : std::string()));
            }
            if (reader.preambleLines() > 0)
                throw InputError(path + ": no Nsight Compute table: none of its " +
                                 std::to_string(reader.preambleLines()) +
                                 " lines is a header with a 'Kernel Name' column");
            throw InputError(atLine(path, std::max(1LL, reader.line()), "no CSV header row"));
        }
        if (csv::columnIndex(header, "Kernel Name") < 0)
            throw InputError(
                atLine(path, reader.line(), "header has no 'Kernel Name' column: not ncu CSV"));
        CpiSink sink(ctx.workspace.db(), ctx.profileId);
        Summary summary;
        const bool details = csv::columnIndex(header, "Metric Name") >= 0;
        if (details)
            readDetails(ctx, reader, nextRecord, header, fields, sink, summary);
        else
            readRaw(ctx, reader, nextRecord, header, fields, sink, summary);
        sink.finish();
        if (summary.kernels == 0)
            throw InputError(atLine(path, reader.line(), "no kernel rows after the header"));

        QJsonObject meta{{"page", details ? "details" : "raw"},
                         {"kernels", static_cast<qint64>(summary.kernels)},
                         {"kernels_with_stacks", static_cast<qint64>(summary.kernelsWithStacks)},
                         {"metrics", static_cast<qint64>(sink.metricRows())}};
        if (!summary.familyUse.empty()) {
            QJsonObject families;
            for (const auto& [label, count] : summary.familyUse)
                families.insert(QString::fromStdString(label), static_cast<qint64>(count));
            meta.insert("stall_metrics", families);
        }
        if (summary.kernelsWithoutCycles > 0) {
            meta.insert("kernels_without_cycles",
                        static_cast<qint64>(summary.kernelsWithoutCycles));
            meta.insert(
                "notice",
                QString("%1 of %2 kernels have warp-state metrics but no elapsed-cycle metric "
                        "(gpc__cycles_elapsed.max, sm__cycles_elapsed.max or 'Elapsed Cycles'): "
                        "their warp-state values are ratios, not cycles, so they are listed with "
                        "the kernel metrics and not drawn as CPI stacks. Collect "
                        "gpc__cycles_elapsed.max (section SpeedOfLight) to get their stacks.")
                    .arg(summary.kernelsWithoutCycles)
                    .arg(summary.kernels));
        } else if (summary.kernelsWithStacks == 0) {
            meta.insert("notice",
                        "No warp-state metrics in this file "
                        "(smsp__average_warp_latency_issue_stalled_*, "
                        "smsp__average_warps_issue_stalled_*_per_issue_active, "
                        "smsp__pcsamp_warps_issue_stalled_*): its kernel metrics were imported "
                        "and are listed per kernel, but no CPI stack can be built. Profile with "
                        "--section WarpStateStats (or --metrics for those names) and export with "
                        "--page raw.");
        }
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }

  private:
    template <typename Next>
    void readDetails(ImportContext& ctx, csv::RecordReader& reader, Next& nextRecord,
                     const std::vector<std::string>& header, std::vector<std::string>& fields,
                     CpiSink& sink, Summary& summary) const {
        const std::string& path = ctx.input.path();
        const int id = csv::columnIndex(header, "ID");
        const int name = csv::columnIndex(header, "Kernel Name");
        const int section = csv::columnIndex(header, "Section Name");
        const int metric = csv::columnIndex(header, "Metric Name");
        const int unit = csv::columnIndex(header, "Metric Unit");
        const int value = csv::columnIndex(header, "Metric Value");
        const int ruleName = csv::columnIndex(header, "Rule Name");
        const int ruleType = csv::columnIndex(header, "Rule Type");
        const int ruleText = csv::columnIndex(header, "Rule Description");
        const int speedup = csv::columnIndex(header, "Estimated Speedup");
        if (value < 0)
            throw InputError(atLine(path, reader.line(), "header has no 'Metric Value' column"));
        // Rows end early when the rule columns are empty (ncu leaves a trailing comma).
        const size_t needed = static_cast<size_t>(std::max({id, name, metric, value})) + 1;
        auto field = [&](int column) -> std::string_view {
            return column >= 0 && column < static_cast<int>(fields.size())
                       ? csv::trim(fields[column])
                       : std::string_view();
        };
        KernelState current;
        long long records = 0;
        while (nextRecord(fields)) {
            const long long line = reader.line();
            if (fields.size() < needed)
                throw InputError(atLine(path, line,
                                        "expected at least " + std::to_string(needed) +
                                            " fields, found " + std::to_string(fields.size())));
            std::string key = kernelKey(fields, id, name, summary.kernels);
            if (key != current.key) {
                finishKernel(current, sink, summary);
                current.start(std::move(key));
                for (size_t c = 0; c < header.size() && c < fields.size(); ++c)
                    if (isIdentityColumn(csv::trim(header[c])) && header[c] != "Kernel Name")
                        sink.metric(current.key, kSource, csv::trim(header[c]), "", std::nullopt,
                                    csv::trim(fields[c]));
            }
            const std::string_view metricName = field(metric);
            if (metricName.empty()) {
                if (field(ruleName).empty())
                    throw InputError(atLine(path, line, "row has neither a metric nor a rule"));
                const std::string ruleMetric =
                    "rule: " + std::string(field(section)) + " / " + std::string(field(ruleName));
                sink.metric(current.key, kSource, ruleMetric, field(ruleType),
                            csv::parseNumber(field(speedup)), field(ruleText));
            } else {
                const std::string_view sectionName = field(section);
                // Metrics of the same display name appear in several sections.
                const std::string stored =
                    sectionName.empty() || sectionName == kCliSection
                        ? std::string(metricName)
                        : std::string(sectionName) + " / " + std::string(metricName);
                storeValue(sink, current.key, stored, field(unit), std::string(field(value)),
                           current, metricName);
            }
            if ((++records & 0xFFF) == 0)
                ctx.progress.report(ctx.input.fraction(), "reading Nsight Compute metrics");
        }
        finishKernel(current, sink, summary);
    }

    template <typename Next>
    void readRaw(ImportContext& ctx, csv::RecordReader& reader, Next& nextRecord,
                 const std::vector<std::string>& header, std::vector<std::string>& fields,
                 CpiSink& sink, Summary& summary) const {
        const std::string& path = ctx.input.path();
        const int id = csv::columnIndex(header, "ID");
        const int name = csv::columnIndex(header, "Kernel Name");
        // Trailing commas give an unnamed last column: ignore it.
        size_t columns = header.size();
        while (columns > 0 && csv::trim(header[columns - 1]).empty()) --columns;
        std::vector<bool> identity(columns);
        for (size_t c = 0; c < columns; ++c) identity[c] = isIdentityColumn(csv::trim(header[c]));
        std::vector<std::string> units(columns);
        bool first = true;
        long long records = 0;
        while (nextRecord(fields)) {
            const long long line = reader.line();
            if (fields.size() < columns)
                throw InputError(atLine(path, line,
                                        "expected " + std::to_string(columns) + " fields, found " +
                                            std::to_string(fields.size())));
            // The units row follows the header and leaves the identity columns empty.
            const bool unitsRow = first && csv::trim(fields[name]).empty() &&
                                  (id < 0 || csv::trim(fields[id]).empty());
            first = false;
            if (unitsRow) {
                for (size_t c = 0; c < columns; ++c) units[c] = csv::trim(fields[c]);
                continue;
            }
            if (csv::trim(fields[name]).empty())
                throw InputError(atLine(path, line, "empty 'Kernel Name'"));
            KernelState state;
            state.key = kernelKey(fields, id, name, summary.kernels);
            for (size_t c = 0; c < columns; ++c) {
                const std::string_view column = csv::trim(header[c]);
                if (identity[c]) {
                    if (c != static_cast<size_t>(name))
                        sink.metric(state.key, kSource, column, "", std::nullopt,
                                    csv::trim(fields[c]));
                    continue;
                }
                // Columns a kernel did not collect are empty: nothing to store.
                if (csv::trim(fields[c]).empty()) continue;
                storeValue(sink, state.key, column, units[c], fields[c], state, column);
            }
            finishKernel(state, sink, summary);
            if ((++records & 0xFF) == 0)
                ctx.progress.report(ctx.input.fraction(), "reading Nsight Compute metrics");
        }
    }
};

}  // namespace

const Importer& ncuCsvImporter() {
    static const NcuCsvImporter importer;
    return importer;
}

}  // namespace stallscope
