// GPGPU-Sim / Accel-Sim simulation logs. At each kernel's end the simulator prints a block that
// starts with `kernel_name = ...`: per-kernel counters (gpu_sim_cycle, gpu_sim_insn) and shader
// counters that keep accumulating over the whole run (the warp-state distribution
// `Stall:… W0_Idle:… W0_Scoreboard:… W1:… W32:…` and gpgpu_stall_shd_mem[space][reason]).
// Per kernel we difference the accumulating ones and turn the distribution into a stack.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cctype>
#include <map>

#include "core/errors.h"
#include "importers/cpi/cpi_sink.h"
#include "importers/cpi/csv_records.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

constexpr const char* kSource = "gpgpusim";

// The counters that accumulate across kernels, as last printed.
struct Cumulative {
    std::map<std::string, double> warpStates;  // "Stall", "W0_Idle", "W0_Scoreboard", "W1".."W32"
    std::map<std::string, double> shdMem;      // "c_mem.bk_conf", ...
    double shdMemTotal = 0;
    double totalCycles = 0;                  // gpu_tot_sim_cycle
    std::map<std::string, double> counters;  // running counts (isRunningCount), by metric name
};

// One kernel's block as printed.
struct Block {
    std::string name, uid;
    std::string destroyed;  // the kernel whose streams were destroyed just before the block
    long long line = 0;
    std::optional<double> cycles, instructions, totCycles, shdMemTotal;
    std::map<std::string, double> warpStates, shdMem;
    long long warpLine = 0;
    std::vector<std::pair<std::string, double>> counters;  // every "name = number", in order
};

// Counters that went down were reset by the simulator (per-kernel statistics): take them as
// they are; otherwise the kernel's share is the increase.
double delta(double now, double before) {
    return now >= before ? now - before : now;
}

// Whether a printed counter keeps counting across kernels (GPGPU-Sim never resets its shader,
// cache and memory statistics), so a kernel's own value is the increase since the previous
// kernel. Not running totals: the per-kernel gpu_sim_* values, the explicit run totals
// gpu_tot_* (kept as printed, they say what they are), and anything that is a rate, ratio,
// average, maximum or latency rather than a count.
bool isRunningCount(std::string_view name) {
    if (name == "gpu_sim_cycle" || name == "gpu_sim_insn" || name == "gpu_ipc" ||
        name == "kernel_launch_uid" || name.starts_with("gpu_tot_"))
        return false;
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* part : {"latency", "rate", "ipc", "util", "occupancy", "ratio"})
        if (lower.find(part) != std::string::npos) return false;
    // Whole words between underscores or brackets: "max_icnt2sh_latency", "avg_...".
    size_t start = 0;
    while (start <= lower.size()) {
        size_t end = lower.find_first_of("_[]", start);
        if (end == std::string::npos) end = lower.size();
        const std::string_view word = std::string_view(lower).substr(start, end - start);
        for (const char* w : {"max", "min", "avg", "average", "bw", "percent", "freq", "frequency"})
            if (word == w) return false;
        start = end + 1;
    }
    return !lower.starts_with("max") && !lower.starts_with("average");
}

// `KEY = TEXT`, `KEY=TEXT` or `KEY =` with an empty text: Accel-Sim prints an empty
// kernel_name and kernel_launch_uid for some kernels of multi-stream runs, and several uids
// ("1 3") for others.
bool textLine(std::string_view trimmed, std::string_view key, std::string_view& text) {
    if (!trimmed.starts_with(key)) return false;
    const std::string_view rest = csv::trim(trimmed.substr(key.size()));
    if (!rest.starts_with('=')) return false;
    text = csv::trim(rest.substr(1));
    return true;
}

// "name = value" with a numeric value; false for anything else.
bool parseAssignment(std::string_view line, std::string& name, std::string_view& value) {
    const auto eq = line.find(" = ");
    const auto eq2 = eq == std::string_view::npos ? line.find('=') : eq;
    if (eq2 == std::string_view::npos || eq2 == 0) return false;
    const std::string_view key = csv::trim(line.substr(0, eq2));
    if (key.empty() || key.find(' ') != std::string_view::npos) return false;
    name.assign(key);
    value = csv::trim(line.substr(eq2 + (eq == std::string_view::npos ? 1 : 3)));
    return true;
}

// `gpgpu_stall_shd_mem[c_mem][bk_conf]` -> "c_mem.bk_conf"
std::optional<std::string> shdMemKey(const std::string& name) {
    static const std::string prefix = "gpgpu_stall_shd_mem[";
    if (!name.starts_with(prefix)) return std::nullopt;
    const auto close = name.find(']', prefix.size());
    if (close == std::string::npos || close + 1 >= name.size() || name[close + 1] != '[' ||
        name.back() != ']')
        return std::nullopt;
    return name.substr(prefix.size(), close - prefix.size()) + "." +
           name.substr(close + 2, name.size() - close - 3);
}

class GpgpusimLogImporter final : public Importer {
  public:
    std::string format() const override { return "gpgpusim-log"; }
    std::string kind() const override { return "cpi"; }
    std::string description() const override {
        return "GPGPU-Sim / Accel-Sim simulation log (per-kernel cycles and warp states)";
    }
    int detect(const Sniff& sniff) const override {
        const std::string_view head = sniff.head;
        if (head.find("GPGPU-Sim") != std::string_view::npos ||
            head.find("Accel-Sim") != std::string_view::npos ||
            head.find("accel-sim") != std::string_view::npos)
            return 85;
        if (head.find("gpu_sim_cycle = ") != std::string_view::npos) return 70;
        return 0;
    }

    void run(ImportContext& ctx) const override {
        const std::string& path = ctx.input.path();
        LineReader lines(ctx.input);
        CpiSink sink(ctx.workspace.db(), ctx.profileId);
        Cumulative before;
        // A plain Block plus a flag: GCC warns spuriously about std::optional<Block> here.
        Block block;
        bool haveBlock = false;
        bool inBlock = false;
        int64_t kernels = 0;
        int64_t textStatistics = 0;
        std::vector<std::string> textStatisticNames;
        std::string name, destroyed;
        std::string_view value, line;
        auto finish = [&] {
            if (haveBlock) writeKernel(block, before, sink, path, ++kernels);
            block = Block{};
            haveBlock = false;
        };
        while (lines.next(line)) {
            const long long lineNo = lines.lineNumber();
            if ((lineNo & 0xFFFF) == 0) ctx.progress.report(ctx.input.fraction(), "reading log");
            const std::string_view trimmed = csv::trim(line);
            // Every kernel_name line starts a kernel's statistics block, named or not.
            // Accel-Sim prints "Destroy streams for kernel N: ..." before the statistics of the
            // kernel that finished: what an unnamed block (no name, no uid) belongs to.
            if (trimmed.starts_with("Destroy streams for kernel ")) {
                const std::string_view rest = trimmed.substr(27);
                destroyed = std::string(rest.substr(0, rest.find(':')));
                continue;
            }
            std::string_view kernelName;
            if (textLine(trimmed, "kernel_name", kernelName)) {
                finish();
                haveBlock = true;
                block.name = kernelName;
                block.line = lineNo;
                block.destroyed = std::move(destroyed);
                destroyed.clear();
                inBlock = true;
                continue;
            }
            if (!inBlock) continue;
            // The statistics block ends where the simulator resumes its own messages.
            if (trimmed.starts_with("GPGPU-Sim") || trimmed.starts_with("Accel-Sim")) {
                inBlock = false;
                continue;
            }
            if (trimmed.starts_with("Stall:")) {
                parseWarpStates(trimmed, block, path, lineNo);
                continue;
            }
            std::string_view uid;
            if (textLine(trimmed, "kernel_launch_uid", uid)) {
                block.uid = uid;  // kept as text: "1 3" names two streams' launches
                continue;
            }
            if (!parseAssignment(trimmed, name, value)) continue;
            const auto number = csv::parseNumber(value);
            if (!number) {
                // The counters a stack needs must be numbers; others may be text.
                if (name == "gpu_sim_cycle" || name == "gpu_sim_insn" ||
                    name == "gpgpu_n_stall_shd_mem" || shdMemKey(name))
                    throw InputError(atLine(
                        path, lineNo, name + " = '" + std::string(value) + "' is not a number"));
                // Text-valued statistics ("12 (inst/sec)") are not metrics: counted, named.
                if (++textStatistics <= 5) textStatisticNames.push_back(name);
                continue;
            }
            if (name == "gpu_sim_cycle")
                block.cycles = *number;
            else if (name == "gpu_sim_insn")
                block.instructions = *number;
            else if (name == "gpu_tot_sim_cycle")
                block.totCycles = *number;
            else if (name == "gpgpu_n_stall_shd_mem")
                block.shdMemTotal = *number;
            else if (const auto key = shdMemKey(name)) {
                // GPGPU-Sim prints some [l_mem_ld] lines twice (the second pair holds l_mem_st
                // counts): keep both so the breakdown still adds up.
                std::string k = *key;
                if (block.shdMem.count(k)) k += " (2)";
                block.shdMem[k] = *number;
            }
            // A name printed twice in one block (GPGPU-Sim repeats some [l_mem_ld] lines) is
            // kept as a second metric.
            std::string metricName = name;
            for (int n = 2; std::any_of(block.counters.begin(), block.counters.end(),
                                        [&](const auto& c) { return c.first == metricName; });
                 ++n)
                metricName = name + " (" + std::to_string(n) + ")";
            block.counters.emplace_back(std::move(metricName), *number);
        }
        finish();
        sink.finish();
        if (kernels == 0)
            throw InputError(atLine(path, std::max(1LL, lines.lineNumber()),
                                    "no kernel statistics found (no 'kernel_name = ' block): "
                                    "is this a GPGPU-Sim log of a finished run?"));
        QJsonObject meta{{"kernels", static_cast<qint64>(kernels)},
                         {"stack",
                          "warp-state shares (Stall, W0_Idle, W0_Scoreboard, W1..W32) scaled to "
                          "gpu_sim_cycle; Stall split by gpgpu_stall_shd_mem when it fits"}};
        meta.insert("text_statistics_not_stored", static_cast<qint64>(textStatistics));
        QJsonArray warnings;
        if (textStatistics > 0) {
            QStringList names;
            for (const std::string& n : textStatisticNames) names << QString::fromStdString(n);
            warnings.append(QString("%1 statistics lines hold text, not a number, and were not "
                                    "stored (e.g. %2)")
                                .arg(textStatistics)
                                .arg(names.join(", ")));
        }
        meta.insert("warnings", warnings);
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }

  private:
    // `Stall:N<tab>W0_Idle:N<tab>W0_Scoreboard:N<tab>W1:N ...`; some builds add entries whose
    // name has spaces (`load dependence:N`), so a name runs up to its colon and a count up to the
    // next blank.
    static void parseWarpStates(std::string_view text, Block& block, const std::string& path,
                                long long lineNo) {
        block.warpStates.clear();
        block.warpLine = lineNo;
        size_t pos = text.find_first_not_of(" \t");
        while (pos != std::string_view::npos && pos < text.size()) {
            const size_t colon = text.find(':', pos);
            size_t end =
                colon == std::string_view::npos ? text.size() : text.find_first_of(" \t", colon);
            if (end == std::string_view::npos) end = text.size();
            const std::string_view entry = text.substr(pos, end - pos);
            const std::string_view name = colon == std::string_view::npos
                                              ? std::string_view()
                                              : csv::trim(text.substr(pos, colon - pos));
            const auto number = colon == std::string_view::npos
                                    ? std::nullopt
                                    : csv::parseNumber(text.substr(colon + 1, end - colon - 1));
            if (!number || name.empty())
                throw InputError(
                    atLine(path, lineNo,
                           "warp-state entry '" + std::string(entry) + "' is not NAME:COUNT"));
            block.warpStates[std::string(name)] = *number;
            pos = text.find_first_not_of(" \t", end);
        }
    }

    static void writeKernel(const Block& b, Cumulative& before, CpiSink& sink,
                            const std::string& path, int64_t ordinal) {
        // The uid as printed; else the kernel whose streams were destroyed just before (a
        // public multi-stream log's unnamed block follows "Destroy streams for kernel 1"); else
        // the block's ordinal. A kernel printed without a name shows as "(unnamed)".
        const std::string id = !b.uid.empty()         ? b.uid
                               : !b.destroyed.empty() ? b.destroyed
                                                      : std::to_string(ordinal);
        const std::string kernel =
            "#" + id + " " + (b.name.empty() ? std::string("(unnamed)") : b.name);
        double cycles = 0;
        if (b.cycles) {
            cycles = *b.cycles;
        } else if (b.totCycles) {
            cycles = delta(*b.totCycles, before.totalCycles);
        } else {
            throw InputError(
                atLine(path, b.line, "kernel '" + b.name + "' has no gpu_sim_cycle line"));
        }
        if (b.totCycles) before.totalCycles = *b.totCycles;
        // Running counts become this kernel's increase; the rest are stored as printed.
        for (const auto& [name, value] : b.counters) {
            if (!isRunningCount(name)) {
                sink.metric(kernel, kSource, name, "", value);
                continue;
            }
            const auto prior = before.counters.find(name);
            sink.metric(kernel, kSource, name, "",
                        delta(value, prior == before.counters.end() ? 0 : prior->second));
            before.counters[name] = value;
        }
        sink.metric(kernel, kSource, "cycles", "cycle", cycles);
        if (b.instructions) sink.metric(kernel, kSource, "instructions", "inst", *b.instructions);

        // This kernel's share of the accumulating counters.
        std::map<std::string, double> states, shdMem;
        for (const auto& [state, count] : b.warpStates) {
            const auto prior = before.warpStates.find(state);
            states[state] = delta(count, prior == before.warpStates.end() ? 0 : prior->second);
            sink.metric(kernel, kSource, "warp_state." + state, "scheduler-cycles", states[state]);
        }
        double shdMemSum = 0;
        for (const auto& [key, count] : b.shdMem) {
            const auto prior = before.shdMem.find(key);
            shdMem[key] = delta(count, prior == before.shdMem.end() ? 0 : prior->second);
            shdMemSum += shdMem[key];
        }
        if (!b.warpStates.empty()) before.warpStates = b.warpStates;
        if (!b.shdMem.empty()) before.shdMem = b.shdMem;
        if (b.shdMemTotal) before.shdMemTotal = *b.shdMemTotal;

        double stateTotal = 0;
        for (const auto& [state, count] : states) stateTotal += count;
        if (!(stateTotal > 0)) return;  // no distribution printed: metrics only
        // Scheduler-cycle counts summed over all schedulers: their shares of the kernel's cycles.
        const double scale = cycles / stateTotal;
        std::vector<std::pair<std::string, double>> parts;
        for (const auto& [state, count] : states) {
            if (count <= 0) continue;
            if (state == "Stall" && shdMemSum > 0 && shdMemSum <= count) {
                // Memory-pipeline stalls are part of the pipeline stalls: split them out.
                for (const auto& [key, part] : shdMem)
                    if (part > 0) parts.emplace_back("shd_mem:" + key, part * scale);
                if (count - shdMemSum > 0) parts.emplace_back("Stall", (count - shdMemSum) * scale);
                continue;
            }
            parts.emplace_back(state, count * scale);
        }
        // The shares' rounding goes to the largest part, so the stack sums to the printed
        // gpu_sim_cycle exactly (659, not 658.9999999999999).
        if (!parts.empty()) {
            double sum = 0;
            for (const auto& part : parts) sum += part.second;
            auto largest =
                std::max_element(parts.begin(), parts.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
            largest->second += cycles - sum;
        }
        for (const auto& [category, value] : parts)
            sink.stack(kernel, kSource, "", category, value);
    }
};

}  // namespace

const Importer& gpgpusimLogImporter() {
    static const GpgpusimLogImporter importer;
    return importer;
}

}  // namespace stallscope
