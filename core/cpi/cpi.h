#pragma once

#include <QJsonObject>
#include <cstdint>
#include <map>
#include <string>
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

// `cpi PROFILE --json` (CONTRACT §5): kernels, mape, plus mape_by_group, kernel_errors,
// categories, classes and suggestions.
QJsonObject cpiJson(const CpiData& data, const MapeReport& mape,
                    const std::vector<CpiSuggestion>& suggestions);

}  // namespace stallscope::cpi
