#pragma once

#include <QJsonObject>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace stallscope {
class Workspace;
}

namespace stallscope::cpi {

// The source name of measured stacks (CONTRACT §3); every other source is a model.
inline constexpr const char* kHardwareSource = "hw";

// The seven GSI stall classes plus Base (issued cycles), in stacking order (bottom first).
const std::vector<std::string>& gsiClasses();

// Maps a raw category of any importer (Nsight Compute warp state, GPGPU-Sim warp-state bucket,
// Sniper CPI component) to its GSI class. A name that already is a class maps to itself;
// unknown names map to "Idle" only when nothing better is known (see cpi.cpp).
std::string gsiClassOf(const std::string& category);

// One-line meaning of a raw category or class, for legends, tooltips and suggestions.
std::string categoryMeaning(const std::string& category);

// The cycles of one kernel as one source saw them, split by category.
struct KernelStack {
    std::string kernel;
    std::string source;
    std::string group;
    std::map<std::string, double> cycles;  // category -> cycles
    double total() const;
};

struct CpiData {
    std::vector<KernelStack> stacks;      // in the order kernels first appear, hw before models
    std::vector<std::string> kernels;     // distinct, first-appearance order
    std::vector<std::string> sources;     // distinct, "hw" first
    std::vector<std::string> categories;  // distinct, in stacking order (see orderCategories)
    bool classes = false;                 // categories are GSI classes
};

// Stacking order: issued/base work at the bottom, then the known categories in a fixed order,
// then unknown ones alphabetically. Keeps colours and positions stable across views.
std::vector<std::string> orderCategories(const std::vector<std::string>& categories);

// Reads the profile's stacks (any kind that stored cpi_stacks rows). SQL: call off the GUI thread.
CpiData loadCpiData(const Workspace& workspace, int64_t profileId);
// Builds CpiData from rows (used by loadCpiData and tests).
CpiData buildCpiData(std::vector<KernelStack> stacks);
// The same stacks with every raw category folded into its GSI class.
CpiData toGsiClasses(const CpiData& data);

struct ModelMape {
    std::string model;
    std::string group;  // empty: over all kernels
    double mapePct = 0;
    int kernels = 0;  // kernels with both a measurement and this model's prediction
};

struct KernelError {
    std::string kernel;
    std::string group;
    std::string model;
    double predicted = 0;
    double measured = 0;
    double errorPct = 0;  // signed: (predicted - measured) / measured * 100
};

struct MapeReport {
    std::vector<ModelMape> overall;  // one per model, in source order
    std::vector<ModelMape> byGroup;  // one per (model, group) with a non-empty group
    std::vector<KernelError> kernels;
};

// MAPE of each model's per-kernel total cycles against "hw": mean of |pred - hw| / hw.
// Kernels with a zero or missing hardware total are left out.
MapeReport computeMape(const CpiData& data);

// One suggestion for the suggestions dock: what dominates the costliest kernels and what that
// usually means.
struct CpiSuggestion {
    std::string kind;  // "cpi-stall"
    std::string text;
    std::string kernel;
    std::string category;
    double sharePct = 0;
};

// Names the dominant stall categories (issued cycles excluded) of the `topKernels` costliest
// kernels of the measured source (or of the first source when there is no "hw").
std::vector<CpiSuggestion> cpiSuggestions(const CpiData& data, int topKernels = 3);

// One metric of one kernel as its importer stored it (Nsight Compute metrics and launch
// fields, GPGPU-Sim counters, Sniper statistics).
struct KernelMetric {
    std::string name;
    std::string unit;
    std::optional<double> value;  // nothing for text values ("n/a", "(32, 4, 1)", rule text)
    std::string text;
};

struct KernelMetrics {
    std::string kernel;
    std::string source;
    std::vector<KernelMetric> metrics;  // import order
};

// Every stored metric per (kernel, source), kernels in import order. SQL: off the GUI thread.
std::vector<KernelMetrics> loadKernelMetrics(const Workspace& workspace, int64_t profileId);

// A unit as [prefix][base] ("Mbyte" = 1e6 byte, "usecond" = 1e-6 second): the base and the
// factor to it; nothing for units without a known base ("%", "warp", "").
std::optional<std::pair<std::string, double>> splitUnit(const std::string& unit);

// Kernel x metric matrix for the metrics table: one row per (kernel, source), one column per
// metric name (first-appearance order) in one unit. Nsight Compute scales units per kernel
// ("Kbyte" for one, "Mbyte" for another): values are converted to the column's most common
// unit when only the prefix differs; a value that cannot be converted keeps its own unit in
// its text.
struct MetricTable {
    struct Row {
        std::string kernel;
        std::string source;
    };
    std::vector<Row> rows;
    std::vector<std::string> names;
    std::vector<std::string> units;  // per column
    std::vector<double> values;      // rows x names, row-major; NaN where absent or not a number
    std::unordered_map<size_t, std::string> texts;  // cell index -> text to show instead
    size_t columns() const { return names.size(); }
    double value(size_t row, size_t column) const { return values[row * names.size() + column]; }
    // What a table cell shows: the number, the text, or "" when the kernel lacks the metric.
    std::string cellText(size_t row, size_t column) const;
};

// Streams the kernel_metrics rows into a MetricTable without holding them all as strings.
MetricTable loadMetricTable(const Workspace& workspace, int64_t profileId);
MetricTable buildMetricTable(const std::vector<KernelMetrics>& metrics);

// `cpi PROFILE --json` (CONTRACT §5): kernels, mape, plus mape_by_group, kernel_errors,
// categories, classes and suggestions; with `metrics`, also kernel_metrics: every kernel's
// stored metrics ([{kernel, source, metrics: [{name, unit, value, text?}]}]), so a profile
// without stacks (an Nsight Compute export without warp-state metrics) still lists its kernels.
QJsonObject cpiJson(const CpiData& data, const MapeReport& mape,
                    const std::vector<CpiSuggestion>& suggestions,
                    const std::vector<KernelMetrics>& metrics = {});

}  // namespace stallscope::cpi
