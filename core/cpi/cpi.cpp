#include "core/cpi/cpi.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "core/kernel_metric_sets.h"
#include "core/sqlite.h"
#include "core/workspace.h"

namespace stallscope::cpi {

namespace {

struct CategoryInfo {
    const char* name;
    const char* gsiClass;
    const char* meaning;
};

// Known raw categories in stacking order. Nsight Compute warp states follow AMALI Table 1
// (selected = Base, wait = ComData, long/short_scoreboard = MemData, math_pipe_throttle =
// ComStruct, the L1/MIO queue throttles = MemStruct); the rest follow GSI's definitions.
const CategoryInfo kCategories[] = {
    // GSI classes themselves (what the class toggle shows).
    {"Base", "Base", "cycles issuing instructions"},
    {"Idle", "Idle", "not enough warps or instructions to issue"},
    {"Ctrl", "Ctrl", "control: instruction fetch, branches, divergence"},
    {"Sync", "Sync", "synchronization: barriers, fences, locks"},
    {"MemData", "MemData", "waiting for data from memory"},
    {"MemStruct", "MemStruct", "memory pipeline or queue full"},
    {"ComData", "ComData", "waiting for the result of a compute instruction"},
    {"ComStruct", "ComStruct", "compute pipeline busy"},
    // Nsight Compute warp states.
    {"selected", "Base", "issued an instruction"},
    {"not_selected", "ComStruct", "eligible but another warp was issued: issue-slot contention"},
    {"dispatch_stall", "ComStruct", "dispatcher could not issue: pipeline conflict"},
    {"math_pipe_throttle", "ComStruct",
     "math pipe busy: use a wider or different pipe, or balance instruction mix"},
    {"wait", "ComData", "fixed-latency dependency: increase instruction-level parallelism"},
    {"long_scoreboard", "MemData",
     "memory latency (L1TEX: global/local/texture): improve locality, coalesce or prefetch"},
    {"short_scoreboard", "MemData",
     "shared-memory/MIO latency: reduce bank conflicts or special-function use"},
    {"lg_throttle", "MemStruct",
     "local/global memory queue full: fewer, wider memory instructions"},
    {"mio_throttle", "MemStruct", "MIO queue full: shared-memory or special-instruction pressure"},
    {"tex_throttle", "MemStruct", "texture queue full: fewer texture fetches"},
    {"drain", "MemStruct", "waiting for memory stores to drain at exit"},
    {"no_instruction", "Ctrl", "instruction cache miss or fetch: smaller or hotter code"},
    {"no_instructions", "Ctrl", "instruction cache miss or fetch: smaller or hotter code"},
    {"imc_miss", "Ctrl", "immediate-constant cache miss"},
    {"branch_resolving", "Ctrl", "branch target computation: reduce divergent branches"},
    {"barrier", "Sync", "waiting at a block barrier: balance work between warps"},
    {"membar", "Sync", "waiting on a memory fence: drop unneeded fences"},
    {"warpgroup_arrive", "Sync", "waiting for a warpgroup arrive barrier"},
    {"sleeping", "Sync", "warp sleeping (nanosleep / yield)"},
    {"misc", "Idle", "miscellaneous hardware reasons"},
    // GPGPU-Sim warp-state buckets (shader_cycle_distro).
    {"W0_Idle", "Idle", "no valid instruction: idle or control hazard"},
    {"W0_Scoreboard", "MemData", "RAW hazard on the scoreboard, mostly pending loads"},
    {"Stall", "ComStruct", "pipeline stalled (structural hazard)"},
    {"load dependence", "MemData", "waiting on the result of a pending load"},
    // Sniper CPI-stack items (tools/cpistack_items.py names).
    {"base", "Base", "base CPI: dispatch-limited execution"},
    {"dispatch_width", "Base", "dispatch-width limit"},
    {"rs_full", "ComStruct", "reservation stations full"},
    {"depend-int", "ComData", "integer dependency chain"},
    {"depend-fp", "ComData", "floating-point dependency chain"},
    {"depend-branch", "ComData", "branch dependency chain"},
    {"issue-port0", "ComStruct", "issue port contention"},
    {"issue-port1", "ComStruct", "issue port contention"},
    {"issue-port2", "ComStruct", "issue port contention"},
    {"issue-port34", "ComStruct", "issue port contention"},
    {"issue-port5", "ComStruct", "issue port contention"},
    {"issue-port05", "ComStruct", "issue port contention"},
    {"issue-port015", "ComStruct", "issue port contention"},
    {"branch", "Ctrl", "branch mispredictions: make branches predictable"},
    {"serial", "Ctrl", "serializing instructions (fences, long-latency ops)"},
    {"smt", "ComStruct", "SMT sharing"},
    {"itlb", "Ctrl", "instruction TLB misses"},
    {"dtlb", "MemData", "data TLB misses: use larger pages"},
    {"ifetch", "Ctrl", "instruction cache misses"},
    {"mem-l1d", "MemData", "L1-D hits on the critical path"},
    {"mem-l2", "MemData", "L2 accesses: improve L1 locality"},
    {"mem-l3", "MemData", "L3 accesses: improve L2 locality"},
    {"mem-l4", "MemData", "L4 accesses"},
    {"mem-remote", "MemData", "remote cache accesses"},
    {"mem-nuca", "MemData", "NUCA cache accesses"},
    {"mem-dram-cache", "MemData", "DRAM cache accesses"},
    {"mem-dram", "MemData", "DRAM accesses: improve locality or prefetch"},
    {"sync-futex", "Sync", "futex waits"},
    {"sync-mutex", "Sync", "mutex waits: shorten critical sections"},
    {"sync-cond", "Sync", "condition-variable waits"},
    {"sync-barrier", "Sync", "barrier waits: balance the threads"},
    {"sync-join", "Sync", "thread join waits"},
    {"sync-pause", "Sync", "pause instructions"},
    {"sync-sleep", "Sync", "sleeping"},
    {"sync-syscall", "Sync", "system calls"},
    {"sync-unscheduled", "Sync", "thread not scheduled"},
    {"sync-memaccess", "Sync", "synchronizing memory accesses"},
    {"sync-recv", "Sync", "message receive waits"},
    {"dvfs-transition", "Idle", "frequency transitions"},
    {"imbalance-start", "Idle", "core idle before its thread started"},
    {"imbalance-end", "Idle", "core idle after its thread finished: load imbalance"},
    {"other", "Idle", "components the stack does not name"},
};

const std::unordered_map<std::string, size_t>& categoryIndex() {
    static const std::unordered_map<std::string, size_t> index = [] {
        std::unordered_map<std::string, size_t> m;
        for (size_t i = 0; i < std::size(kCategories); ++i) m.emplace(kCategories[i].name, i);
        return m;
    }();
    return index;
}

const CategoryInfo* findCategory(const std::string& name) {
    const auto& index = categoryIndex();
    const auto it = index.find(name);
    return it == index.end() ? nullptr : &kCategories[it->second];
}

// Issued-with-N-active-threads buckets of GPGPU-Sim ("W1".."W32") are issue cycles.
bool isGpgpusimIssueBucket(const std::string& name) {
    if (name.size() < 2 || name[0] != 'W') return false;
    return std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           name != "W0";
}

// Rank for stacking: known categories by table position, GPGPU-Sim issue buckets after Base,
// the shared-memory stall split next to "Stall", unknown ones last.
std::pair<int, std::string> stackRank(const std::string& name) {
    if (const CategoryInfo* info = findCategory(name))
        return {static_cast<int>(info - kCategories) * 100, ""};
    if (isGpgpusimIssueBucket(name))
        return {static_cast<int>(findCategory("Base") - kCategories) * 100 + 1 +
                    std::atoi(name.c_str() + 1),
                ""};
    if (name.starts_with("shd_mem:"))
        return {static_cast<int>(findCategory("Stall") - kCategories) * 100 + 50, name};
    return {1 << 30, name};
}

}  // namespace

const std::vector<std::string>& gsiClasses() {
    static const std::vector<std::string> classes{"Base",    "Idle",      "Ctrl",    "Sync",
                                                  "MemData", "MemStruct", "ComData", "ComStruct"};
    return classes;
}

std::string gsiClassOf(const std::string& category) {
    if (const CategoryInfo* info = findCategory(category)) return info->gsiClass;
    if (isGpgpusimIssueBucket(category)) return "Base";
    if (category.starts_with("shd_mem:")) return "MemStruct";
    // Unnamed Nsight Compute stall reasons from newer architectures: judge by their wording.
    if (category.find("throttle") != std::string::npos) return "MemStruct";
    if (category.find("scoreboard") != std::string::npos) return "MemData";
    if (category.starts_with("sync") || category.find("barrier") != std::string::npos)
        return "Sync";
    if (category.starts_with("mem")) return "MemData";
    return "Idle";
}

std::string categoryMeaning(const std::string& category) {
    if (const CategoryInfo* info = findCategory(category)) return info->meaning;
    if (isGpgpusimIssueBucket(category))
        return "issued with " + category.substr(1) + " active threads";
    if (category.starts_with("shd_mem:"))
        return "memory pipeline stall (" + category.substr(8) + ")";
    return "";
}

double KernelStack::total() const {
    double sum = 0;
    for (const auto& [category, value] : cycles) sum += value;
    return sum;
}

std::vector<std::string> orderCategories(const std::vector<std::string>& categories) {
    std::vector<std::string> out = categories;
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
        return stackRank(a) < stackRank(b);
    });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

CpiData buildCpiData(std::vector<KernelStack> stacks) {
    CpiData data;
    std::set<std::string> seenKernels, seenSources, seenCategories;
    for (const KernelStack& s : stacks) {
        if (seenKernels.insert(s.kernel).second) data.kernels.push_back(s.kernel);
        if (seenSources.insert(s.source).second) data.sources.push_back(s.source);
        for (const auto& [category, value] : s.cycles) seenCategories.insert(category);
    }
    // Hardware first: it is the reference every model is compared with.
    std::stable_partition(data.sources.begin(), data.sources.end(),
                          [](const std::string& s) { return s == kHardwareSource; });
    std::unordered_map<std::string, size_t> kernelOrder, sourceOrder;
    for (size_t i = 0; i < data.kernels.size(); ++i) kernelOrder[data.kernels[i]] = i;
    for (size_t i = 0; i < data.sources.size(); ++i) sourceOrder[data.sources[i]] = i;
    std::stable_sort(stacks.begin(), stacks.end(), [&](const KernelStack& a, const KernelStack& b) {
        const size_t ka = kernelOrder[a.kernel], kb = kernelOrder[b.kernel];
        return ka != kb ? ka < kb : sourceOrder[a.source] < sourceOrder[b.source];
    });
    data.stacks = std::move(stacks);
    data.categories =
        orderCategories(std::vector<std::string>(seenCategories.begin(), seenCategories.end()));
    return data;
}

CpiData loadCpiData(const Workspace& workspace, int64_t profileId) {
    // rowid order is import order, which is the order kernels appear in the file.
    sql::Statement st(workspace.db(),
                      "SELECT kernel, source, grp, category, cycles FROM cpi_stacks "
                      "WHERE profile_id = ? ORDER BY rowid");
    st.bind(1, profileId);
    std::vector<KernelStack> stacks;
    std::unordered_map<std::string, size_t> byKey;
    while (st.step()) {
        std::string kernel = st.text(0), source = st.text(1);
        std::string key = kernel;
        key.push_back('\x1f');
        key += source;
        auto [it, inserted] = byKey.emplace(std::move(key), stacks.size());
        if (inserted) stacks.push_back({std::move(kernel), std::move(source), st.text(2), {}});
        KernelStack& stack = stacks[it->second];
        if (stack.group.empty()) stack.group = st.text(2);
        stack.cycles[st.text(3)] += st.real(4);
    }
    return buildCpiData(std::move(stacks));
}

CpiData toGsiClasses(const CpiData& data) {
    std::vector<KernelStack> stacks;
    stacks.reserve(data.stacks.size());
    for (const KernelStack& s : data.stacks) {
        KernelStack folded{s.kernel, s.source, s.group, {}};
        for (const auto& [category, value] : s.cycles) folded.cycles[gsiClassOf(category)] += value;
        stacks.push_back(std::move(folded));
    }
    CpiData out = buildCpiData(std::move(stacks));
    // Class order is the GSI order, not alphabetical.
    std::vector<std::string> ordered;
    for (const std::string& c : gsiClasses())
        if (std::find(out.categories.begin(), out.categories.end(), c) != out.categories.end())
            ordered.push_back(c);
    out.categories = ordered;
    out.classes = true;
    return out;
}

MapeReport computeMape(const CpiData& data) {
    MapeReport report;
    std::unordered_map<std::string, const KernelStack*> hardware;
    for (const KernelStack& s : data.stacks)
        if (s.source == kHardwareSource) hardware[s.kernel] = &s;
    struct Sum {
        double abs = 0;
        int n = 0;
    };
    std::map<std::string, Sum> perModel;
    std::map<std::pair<std::string, std::string>, Sum> perGroup;
    for (const KernelStack& s : data.stacks) {
        if (s.source == kHardwareSource) continue;
        const auto hw = hardware.find(s.kernel);
        if (hw == hardware.end()) continue;
        const double measured = hw->second->total();
        if (!(measured > 0)) continue;
        const double predicted = s.total();
        const double error = (predicted - measured) / measured;
        const std::string group = hw->second->group.empty() ? s.group : hw->second->group;
        report.kernels.push_back({s.kernel, group, s.source, predicted, measured, error * 100});
        perModel[s.source].abs += std::abs(error);
        ++perModel[s.source].n;
        if (!group.empty()) {
            perGroup[{s.source, group}].abs += std::abs(error);
            ++perGroup[{s.source, group}].n;
        }
    }
    for (const std::string& source : data.sources) {
        if (source == kHardwareSource) continue;
        if (const auto it = perModel.find(source); it != perModel.end())
            report.overall.push_back(
                {source, "", it->second.abs / it->second.n * 100, it->second.n});
        for (const auto& [key, sum] : perGroup)
            if (key.first == source)
                report.byGroup.push_back({source, key.second, sum.abs / sum.n * 100, sum.n});
    }
    return report;
}

std::vector<CpiSuggestion> cpiSuggestions(const CpiData& data, int topKernels) {
    std::vector<CpiSuggestion> out;
    if (data.stacks.empty()) return out;
    const bool haveHw =
        std::find(data.sources.begin(), data.sources.end(), kHardwareSource) != data.sources.end();
    const std::string source = haveHw ? std::string(kHardwareSource) : data.sources.front();
    std::vector<const KernelStack*> kernels;
    for (const KernelStack& s : data.stacks)
        if (s.source == source) kernels.push_back(&s);
    std::stable_sort(
        kernels.begin(), kernels.end(),
        [](const KernelStack* a, const KernelStack* b) { return a->total() > b->total(); });
    if (static_cast<int>(kernels.size()) > topKernels) kernels.resize(topKernels);
    for (const KernelStack* k : kernels) {
        const double total = k->total();
        if (!(total > 0)) continue;
        // Issued cycles are useful work, not a stall to remove.
        std::vector<std::pair<double, std::string>> stalls;
        for (const auto& [category, value] : k->cycles)
            if (gsiClassOf(category) != "Base" && value > 0) stalls.push_back({value, category});
        std::sort(stalls.begin(), stalls.end(), std::greater<>());
        for (size_t i = 0; i < stalls.size() && i < 2; ++i) {
            const double share = stalls[i].first / total * 100;
            if (share < 10) break;  // a minor class is not worth a suggestion
            const std::string& category = stalls[i].second;
            const std::string meaning = categoryMeaning(category);
            char pct[32];
            std::snprintf(pct, sizeof pct, "%.0f%%", share);
            std::string text = k->kernel + ": " + category + " takes " + pct + " of " + source +
                               " cycles (" + gsiClassOf(category) + ")";
            if (!meaning.empty()) text += " — " + meaning;
            out.push_back({"cpi-stall", text, k->kernel, category, share});
        }
    }
    return out;
}

std::vector<KernelMetrics> loadKernelMetrics(const Workspace& workspace, int64_t profileId) {
    std::vector<KernelMetrics> out;
    std::unordered_map<std::string, size_t> byKey;  // kernel '\x1f' source -> index in out
    std::string key;
    forEachKernelMetric(workspace.db(), profileId, [&](const StoredMetric& m) {
        key = m.kernel;
        key.push_back('\x1f');
        key += m.source;
        auto [it, inserted] = byKey.emplace(key, out.size());
        if (inserted) out.push_back({m.kernel, m.source, {}});
        out[it->second].metrics.push_back({m.name, m.unit, m.value, std::string(m.text)});
    });
    return out;
}

std::optional<std::pair<std::string, double>> splitUnit(const std::string& unit) {
    static const std::set<std::string> bases{
        "byte", "byte/s", "byte/second", "cycle",       "cycle/second", "second", "s",
        "hz",   "Hz",     "inst",        "inst/second", "flop",         "flop/s"};
    if (bases.count(unit)) return std::pair{unit, 1.0};
    if (unit.size() < 2) return std::nullopt;
    double factor = 0;
    switch (unit[0]) {
        case 'K':
        case 'k':
            factor = 1e3;
            break;
        case 'M':
            factor = 1e6;
            break;
        case 'G':
            factor = 1e9;
            break;
        case 'T':
            factor = 1e12;
            break;
        case 'm':
            factor = 1e-3;
            break;
        case 'u':
            factor = 1e-6;
            break;
        case 'n':
            factor = 1e-9;
            break;
        case 'p':
            factor = 1e-12;
            break;
        default:
            return std::nullopt;
    }
    const std::string base = unit.substr(1);
    if (!bases.count(base)) return std::nullopt;
    return std::pair{base, factor};
}

namespace {

std::string formatNumber(double value) {
    char buffer[48];
    if (std::abs(value) < 1e15 && value == std::floor(value))
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
    else
        std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}

// Collects kernel_metrics rows cell by cell (names, units and rows interned) and lays them out
// as a matrix at the end, when every column and its units are known.
class MetricTableBuilder {
  public:
    void add(const std::string& kernel, const std::string& source, const std::string& name,
             const std::string& unit, std::optional<double> value, std::string_view text) {
        key_ = kernel;
        key_.push_back('\x1f');
        key_ += source;
        auto [row, newRow] = rows_.emplace(key_, table_.rows.size());
        if (newRow) table_.rows.push_back({kernel, source});
        auto [column, newColumn] = columns_.emplace(name, table_.names.size());
        if (newColumn) table_.names.push_back(name);
        auto [unitId, newUnit] = units_.emplace(unit, unitNames_.size());
        if (newUnit) unitNames_.push_back(unit);
        if (!value) texts_.emplace(cells_.size(), std::string(text));
        cells_.push_back({static_cast<uint32_t>(row->second), static_cast<uint32_t>(column->second),
                          static_cast<uint32_t>(unitId->second), value.value_or(NAN)});
    }

    MetricTable finish() {
        const size_t columns = table_.names.size();
        // Each column's unit: the most common unit among its numeric cells.
        std::vector<std::map<uint32_t, size_t>> unitCounts(columns);
        for (const Cell& c : cells_)
            if (!std::isnan(c.value)) ++unitCounts[c.column][c.unit];
        std::vector<uint32_t> columnUnit(columns, 0);
        table_.units.assign(columns, "");
        for (size_t c = 0; c < columns; ++c) {
            size_t best = 0;
            for (const auto& [unit, count] : unitCounts[c])
                if (count > best) {
                    best = count;
                    columnUnit[c] = unit;
                    table_.units[c] = unitNames_[unit];
                }
        }
        std::vector<std::optional<std::pair<std::string, double>>> split(unitNames_.size());
        for (size_t u = 0; u < unitNames_.size(); ++u) split[u] = splitUnit(unitNames_[u]);
        table_.values.assign(table_.rows.size() * columns, NAN);
        for (size_t i = 0; i < cells_.size(); ++i) {
            const Cell& c = cells_[i];
            const size_t index = static_cast<size_t>(c.row) * columns + c.column;
            if (std::isnan(c.value)) {
                table_.texts[index] = texts_[i];
                table_.values[index] = NAN;
                continue;
            }
            table_.texts.erase(index);
            const uint32_t want = columnUnit[c.column];
            if (c.unit == want) {
                table_.values[index] = c.value;
            } else if (split[c.unit] && split[want] && split[c.unit]->first == split[want]->first) {
                table_.values[index] = c.value * split[c.unit]->second / split[want]->second;
            } else {
                table_.values[index] = NAN;
                table_.texts[index] = formatNumber(c.value) + " " + unitNames_[c.unit];
            }
        }
        cells_.clear();
        return std::move(table_);
    }

  private:
    struct Cell {
        uint32_t row, column, unit;
        double value;  // NaN: text only
    };
    MetricTable table_;
    std::vector<Cell> cells_;
    std::unordered_map<size_t, std::string> texts_;
    std::unordered_map<std::string, size_t> rows_, columns_, units_;
    std::vector<std::string> unitNames_;
    std::string key_;
};

}  // namespace

std::string MetricTable::cellText(size_t row, size_t column) const {
    const size_t index = row * names.size() + column;
    if (const auto it = texts.find(index); it != texts.end()) return it->second;
    const double v = values[index];
    return std::isnan(v) ? std::string() : formatNumber(v);
}

MetricTable loadMetricTable(const Workspace& workspace, int64_t profileId) {
    MetricTableBuilder builder;
    forEachKernelMetric(workspace.db(), profileId, [&](const StoredMetric& m) {
        builder.add(m.kernel, m.source, m.name, m.unit, m.value, m.text);
    });
    return builder.finish();
}

MetricTable buildMetricTable(const std::vector<KernelMetrics>& metrics) {
    MetricTableBuilder builder;
    for (const KernelMetrics& k : metrics)
        for (const KernelMetric& m : k.metrics)
            builder.add(k.kernel, k.source, m.name, m.unit, m.value, m.text);
    return builder.finish();
}

QJsonObject cpiJson(const CpiData& data, const MapeReport& mape,
                    const std::vector<CpiSuggestion>& suggestions,
                    const std::vector<KernelMetrics>& metrics) {
    auto q = [](const std::string& s) { return QString::fromStdString(s); };
    QJsonArray kernels;
    for (const KernelStack& s : data.stacks) {
        QJsonObject stack;
        for (const std::string& category : data.categories) {
            const auto it = s.cycles.find(category);
            if (it != s.cycles.end()) stack.insert(q(category), it->second);
        }
        kernels.append(QJsonObject{{"kernel", q(s.kernel)},
                                   {"source", q(s.source)},
                                   {"group", q(s.group)},
                                   {"total_cycles", s.total()},
                                   {"stack", stack}});
    }
    QJsonArray overall, byGroup, errors, categories, suggestionArray;
    for (const ModelMape& m : mape.overall)
        overall.append(
            QJsonObject{{"model", q(m.model)}, {"mape_pct", m.mapePct}, {"kernels", m.kernels}});
    for (const ModelMape& m : mape.byGroup)
        byGroup.append(QJsonObject{{"model", q(m.model)},
                                   {"group", q(m.group)},
                                   {"mape_pct", m.mapePct},
                                   {"kernels", m.kernels}});
    for (const KernelError& e : mape.kernels)
        errors.append(QJsonObject{{"kernel", q(e.kernel)},
                                  {"group", q(e.group)},
                                  {"model", q(e.model)},
                                  {"predicted_cycles", e.predicted},
                                  {"measured_cycles", e.measured},
                                  {"error_pct", e.errorPct}});
    for (const std::string& c : data.categories)
        categories.append(QJsonObject{
            {"name", q(c)}, {"class", q(gsiClassOf(c))}, {"meaning", q(categoryMeaning(c))}});
    for (const CpiSuggestion& s : suggestions)
        suggestionArray.append(QJsonObject{{"kind", q(s.kind)},
                                           {"text", q(s.text)},
                                           {"kernel", q(s.kernel)},
                                           {"category", q(s.category)},
                                           {"share_pct", s.sharePct}});
    QJsonArray kernelMetrics;
    for (const KernelMetrics& k : metrics) {
        QJsonArray list;
        for (const KernelMetric& m : k.metrics) {
            QJsonObject metric{{"name", q(m.name)},
                               {"unit", q(m.unit)},
                               {"value", m.value ? QJsonValue(*m.value) : QJsonValue()}};
            if (!m.text.empty()) metric.insert("text", q(m.text));
            list.append(metric);
        }
        kernelMetrics.append(
            QJsonObject{{"kernel", q(k.kernel)}, {"source", q(k.source)}, {"metrics", list}});
    }
    return QJsonObject{{"kernels", kernels},
                       {"mape", overall},
                       {"mape_by_group", byGroup},
                       {"kernel_errors", errors},
                       {"categories", categories},
                       {"classes", data.classes},
                       {"suggestions", suggestionArray},
                       {"kernel_metrics", kernelMetrics}};
}

}  // namespace stallscope::cpi
