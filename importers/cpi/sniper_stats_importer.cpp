// Sniper's sim.stats.sqlite3: counters per (prefix, object.metric, core), where the prefixes are
// snapshots (start, roi-begin, roi-end, stop) and zeros are left out. The CPI components
// (`*.cpi*`, femtoseconds) of roi-end minus roi-begin, converted to cycles at the core
// frequency from the sim.cfg beside the file, grouped the way Sniper's cpistack tool groups them.
#include <sqlite3.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>
#include <filesystem>
#include <fstream>
#include <map>

#include "cpi_sink.h"
#include "csv_records.h"
#include "errors.h"
#include "import_service.h"
#include "registry.h"

namespace stallscope {

namespace {

constexpr const char* kSource = "sniper";

// Sniper cpistack item of a CPI component (the stat name without its "cpi" prefix), after
// tools/cpistack_items.py with its defaults (simple memory levels, detailed sync).
std::string cpistackItem(const std::string& component) {
    static const std::map<std::string, std::string> exact{
        {"Issue", "dispatch_width"},
        {"Base", "base"},
        {"PathInt", "depend-int"},
        {"PathFP", "depend-fp"},
        {"PathBranch", "depend-branch"},
        {"PathP0", "issue-port0"},
        {"PathP1", "issue-port1"},
        {"PathP2", "issue-port2"},
        {"PathP34", "issue-port34"},
        {"PathP5", "issue-port5"},
        {"PathP05", "issue-port05"},
        {"PathP015", "issue-port015"},
        {"BranchPredictor", "branch"},
        {"Serialization", "serial"},
        {"LongLatency", "serial"},
        {"SMT", "smt"},
        {"ITLBMiss", "itlb"},
        {"DTLBMiss", "dtlb"},
        {"DataCacheL1I", "ifetch"},
        {"DataCacheL1", "mem-l1d"},
        {"DataCacheL1_S", "mem-l1d"},
        {"PathLoadX", "mem-l1d"},
        {"PathStore", "mem-l1d"},
        {"DataCacheL2", "mem-l2"},
        {"DataCacheL2_S", "mem-l2"},
        {"DataCacheL3", "mem-l3"},
        {"DataCacheL3_S", "mem-l3"},
        {"DataCacheL4", "mem-l4"},
        {"DataCacheL4_S", "mem-l4"},
        {"DataCachecache-remote", "mem-remote"},
        {"DataCachedram-cache", "mem-dram-cache"},
        {"DataCachedram", "mem-dram"},
        {"DataCachedram-local", "mem-dram"},
        {"DataCachedram-remote", "mem-dram"},
        {"DataCachemiss", "mem-dram"},
        {"DataCache????", "mem-dram"},
        {"DataCachepredicate-false", "mem-dram"},
        {"DataCacheunknown", "mem-dram"},
        // Sniper's item list has no entry for these; named here so they stay visible.
        {"DataCachenuca-cache", "mem-nuca"},
        {"SyncSyscall", "sync-syscall"},
        {"SyncFutex", "sync-futex"},
        {"SyncPthreadMutex", "sync-mutex"},
        {"SyncPthreadCond", "sync-cond"},
        {"SyncPthreadBarrier", "sync-barrier"},
        {"SyncJoin", "sync-join"},
        {"SyncPause", "sync-pause"},
        {"SyncSleep", "sync-sleep"},
        {"SyncUnscheduled", "sync-unscheduled"},
        {"SyncMemAccess", "sync-memaccess"},
        {"Recv", "sync-recv"},
        {"SyncDvfsTransition", "dvfs-transition"},
        {"StartTime", "imbalance-start"},
    };
    if (const auto it = exact.find(component); it != exact.end()) return it->second;
    if (component.starts_with("InstructionCache")) return "ifetch";
    return "other";
}

// perf_model/core/frequency (GHz) from an INI-style sim.cfg; one value or one per core.
std::vector<double> readFrequencies(const std::filesystem::path& cfg) {
    std::ifstream in(cfg);
    std::string line, section;
    while (std::getline(in, line)) {
        const std::string_view t = csv::trim(line);
        if (t.starts_with("[") && t.ends_with("]")) {
            section = std::string(t.substr(1, t.size() - 2));
            continue;
        }
        if (section != "perf_model/core" || !t.starts_with("frequency")) continue;
        const auto eq = t.find('=');
        if (eq == std::string_view::npos || csv::trim(t.substr(0, eq)) != "frequency") continue;
        std::vector<double> out;
        for (const std::string& part : csv::splitLine(t.substr(eq + 1)))
            if (const auto v = csv::parseNumber(part); v && *v > 0) out.push_back(*v);
        return out;
    }
    return {};
}

struct Database {
    sqlite3* db = nullptr;
    ~Database() { sqlite3_close(db); }
};

class SniperStatsImporter final : public Importer {
  public:
    std::string format() const override { return "sniper-stats"; }
    std::string kind() const override { return "cpi"; }
    std::string description() const override {
        return "Sniper sim.stats.sqlite3 (per-core CPI stack of the region of interest)";
    }
    int detect(const Sniff& sniff) const override {
        if (!sniff.head.starts_with(std::string_view("SQLite format 3\0", 16))) return 0;
        if (sniff.head.find("prefixes") != std::string_view::npos &&
            sniff.head.find("`values`") != std::string_view::npos)
            return 95;
        return sniff.path.ends_with("sim.stats.sqlite3") ? 60 : 0;
    }

    void run(ImportContext& ctx) const override {
        const std::string& path = ctx.input.path();
        // SQLite needs a file: a compressed database is unpacked to a temporary one first.
        QTemporaryFile unpacked;
        std::string dbPath = path;
        if (ctx.input.compression() != Compression::None) {
            if (!unpacked.open()) throw Failure("cannot create a temporary file to unpack " + path);
            char buffer[1 << 16];
            size_t n;
            while ((n = ctx.input.read(buffer, sizeof buffer)) > 0)
                unpacked.write(buffer, static_cast<qint64>(n));
            unpacked.flush();
            dbPath = unpacked.fileName().toStdString();
        }
        Database database;
        if (sqlite3_open_v2(dbPath.c_str(), &database.db, SQLITE_OPEN_READONLY, nullptr) !=
            SQLITE_OK)
            throw InputError(atOffset(
                path, 0, std::string("cannot open as SQLite: ") + sqlite3_errmsg(database.db)));
        try {
            read(ctx, database.db, path);
        } catch (const Failure& e) {
            // A damaged or foreign database surfaces as SQLite errors: that is bad input.
            throw InputError(atOffset(
                path, 0, std::string("not a readable Sniper stats database: ") + e.what()));
        }
    }

  private:
    static void read(ImportContext& ctx, sqlite3* db, const std::string& path) {
        std::map<std::string, int64_t> prefixes;
        {
            sql::Statement st(db, "SELECT prefixid, prefixname FROM prefixes");
            while (st.step()) prefixes[st.text(1)] = st.int64(0);
        }
        std::string beginName = "roi-begin", endName = "roi-end";
        if (!prefixes.count(beginName) || !prefixes.count(endName)) {
            beginName = "start";
            endName = "stop";
        }
        if (!prefixes.count(beginName) || !prefixes.count(endName))
            throw InputError(atOffset(path, 0,
                                      "no roi-begin/roi-end (or start/stop) snapshots in "
                                      "table 'prefixes'"));
        std::map<int64_t, std::string> names;
        {
            sql::Statement st(db, "SELECT nameid, objectname, metricname FROM names");
            while (st.step()) names[st.int64(0)] = st.text(1) + "." + st.text(2);
        }
        // core -> stat -> end - begin (absent rows are zero).
        std::map<int64_t, std::map<std::string, double>> diff;
        {
            sql::Statement st(db,
                              "SELECT prefixid, nameid, core, value FROM `values` "
                              "WHERE prefixid IN (?, ?)");
            st.bind(1, prefixes[beginName]).bind(2, prefixes[endName]);
            const int64_t endId = prefixes[endName];
            while (st.step()) {
                const auto name = names.find(st.int64(1));
                if (name == names.end()) continue;
                const double value = st.real(3);
                diff[st.int64(2)][name->second] += st.int64(0) == endId ? value : -value;
            }
        }
        ctx.progress.report(0.5, "reading Sniper statistics");

        const auto cfg = std::filesystem::path(path).parent_path() / "sim.cfg";
        std::vector<double> frequencies = readFrequencies(cfg);
        QJsonObject meta{{"snapshots", QString::fromStdString(beginName + " .. " + endName)}};
        if (frequencies.empty()) {
            frequencies = {1.0};
            meta.insert("notice",
                        "No sim.cfg with perf_model/core/frequency beside the file: "
                        "cycles assume 1 GHz (they equal nanoseconds).");
        } else {
            meta.insert("frequency_ghz", frequencies.front());
        }
        auto frequencyOf = [&](int64_t core) {
            return frequencies[std::min<size_t>(static_cast<size_t>(core), frequencies.size() - 1)];
        };

        // Sniper's Imbalance: each core's share of the slowest core's time it did not account.
        double maxElapsedCycles = 0;
        for (auto& [core, stats] : diff)
            maxElapsedCycles = std::max(maxElapsedCycles, stats["performance_model.elapsed_time"] *
                                                              frequencyOf(core) * 1e-6);
        CpiSink sink(ctx.workspace.db(), ctx.profileId);
        int64_t cores = 0;
        double worstOveraccount = 0;
        for (const auto& [core, stats] : diff) {
            const double fsToCycles = frequencyOf(core) * 1e-6;  // fs * GHz * 1e-6 = cycles
            std::map<std::string, double> stack;
            for (const auto& [stat, value] : stats) {
                const auto dot = stat.find(".cpi");
                if (dot == std::string::npos || stat.starts_with("thread.") ||
                    stat == "performance_model.cpiFastforwardTime")
                    continue;
                stack[cpistackItem(stat.substr(dot + 4))] += value * fsToCycles;
            }
            const double elapsed = stats.count("performance_model.elapsed_time")
                                       ? stats.at("performance_model.elapsed_time") * fsToCycles
                                       : 0;
            if (stack.empty() && elapsed == 0) continue;
            double accounted = 0;
            for (const auto& [item, cycles] : stack) accounted += cycles;
            const double imbalance = maxElapsedCycles - accounted;
            if (imbalance > 0.5) stack["imbalance-end"] += imbalance;
            worstOveraccount = std::max(worstOveraccount, -imbalance);

            const std::string kernel = "core " + std::to_string(core);
            for (const auto& [item, cycles] : stack)
                if (cycles != 0) sink.stack(kernel, kSource, "", item, cycles);
            for (const auto& [stat, value] : stats)
                sink.metric(kernel, kSource, stat,
                            stat.find("time") != std::string::npos ? "fs" : "", value);
            const double instructions = stats.count("performance_model.instruction_count")
                                            ? stats.at("performance_model.instruction_count")
                                            : 0;
            sink.metric(kernel, kSource, "frequency_ghz", "GHz", frequencyOf(core));
            sink.metric(kernel, kSource, "cycles", "cycle", elapsed);
            if (instructions > 0) sink.metric(kernel, kSource, "cpi", "", elapsed / instructions);
            ++cores;
        }
        if (cores == 0)
            throw InputError(atOffset(
                path, 0, "no per-core statistics between " + beginName + " and " + endName));
        meta.insert("cores", static_cast<qint64>(cores));
        if (worstOveraccount > 0.5) meta.insert("overaccounted_cycles", worstOveraccount);
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& sniperStatsImporter() {
    static const SniperStatsImporter importer;
    return importer;
}

}  // namespace stallscope
