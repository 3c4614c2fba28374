// Sniper's sim.stats.sqlite3: counters per (prefix, object.metric, core), where the prefixes are
// snapshots (start, roi-begin, roi-end, stop) and zeros are left out. The CPI components
// (`*.cpi*`, femtoseconds) of roi-end minus roi-begin, converted to cycles at the core
// frequency from the sim.cfg beside the file, then processed and grouped the way Sniper's own
// tools do (tools/cpistack_data.py and tools/cpistack_items.py): part of Base moves to the
// critical-path contributors (depend-*, issue-port*, mem-l1d, ...) by the
// interval_timer.cpContr_* counters, the dispatch-width share of Base becomes dispatch_width,
// and whatever the slowest core's time leaves unaccounted is imbalance-end. Items are not
// collapsed below a threshold (`cpistack.py --no-collapse`); the GSI class view aggregates.
#include <sqlite3.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/errors.h"
#include "importers/cpi/cpi_sink.h"
#include "importers/cpi/csv_records.h"
#include "importers/import_service.h"
#include "importers/registry.h"

namespace stallscope {

namespace {

constexpr const char* kSource = "sniper";

// Sniper cpistack item of a CPI component (the stat name without its "cpi" prefix, or one of
// the components cpistack_data.py adds: Issue, Path*, Imbalance), after tools/cpistack_items.py
// with its defaults: simple memory levels (L1_S folded into l1d, ...), detailed sync.
std::string cpistackItem(const std::string& component) {
    static const std::map<std::string, std::string> exact{
        {"Base", "base"},
        {"Issue", "dispatch_width"},
        {"RSFull", "rs_full"},
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
        {"Serialization", "serial"},
        {"LongLatency", "serial"},
        {"SMT", "smt"},
        {"BranchPredictor", "branch"},
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
        {"DataCachenuca-cache", "mem-nuca"},
        {"DataCachedram-cache", "mem-dram-cache"},
        {"DataCachedram", "mem-dram"},
        {"DataCachedram-local", "mem-dram"},
        {"DataCachedram-remote", "mem-dram"},
        {"DataCachemiss", "mem-dram"},
        {"DataCache????", "mem-dram"},
        {"DataCachepredicate-false", "mem-dram"},
        {"DataCacheprefetch-no-mapping", "mem-dram"},
        {"DataCacheunknown", "mem-dram"},
        {"SyncFutex", "sync-futex"},
        {"SyncPthreadMutex", "sync-mutex"},
        {"SyncPthreadCond", "sync-cond"},
        {"SyncPthreadBarrier", "sync-barrier"},
        {"SyncJoin", "sync-join"},
        {"SyncPause", "sync-pause"},
        {"SyncSleep", "sync-sleep"},
        {"SyncSyscall", "sync-syscall"},
        {"SyncUnscheduled", "sync-unscheduled"},
        {"SyncMemAccess", "sync-memaccess"},
        {"Recv", "sync-recv"},
        {"SyncDvfsTransition", "dvfs-transition"},
        {"StartTime", "imbalance-start"},
        {"Unknown", "imbalance-start"},
        {"Imbalance", "imbalance-end"},
    };
    if (const auto it = exact.find(component); it != exact.end()) return it->second;
    // Every instruction-cache level is instruction fetch.
    if (component.starts_with("InstructionCache")) return "ifetch";
    return "other";  // cpistack_items.py's catch-all for components it does not list
}

// The critical-path counters of cpistack_data.py (interval_timer.cpContr_<type>, in millionths
// of a cycle) and the component each one takes its share of Base to.
const std::map<std::string, std::string>& criticalPathComponents() {
    static const std::map<std::string, std::string> map{
        {"interval_timer.cpContr_generic", "PathInt"},
        {"interval_timer.cpContr_store", "PathStore"},
        {"interval_timer.cpContr_load_other", "PathLoadX"},
        {"interval_timer.cpContr_branch", "PathBranch"},
        {"interval_timer.cpContr_load_l1", "DataCacheL1"},
        {"interval_timer.cpContr_load_l2", "DataCacheL2"},
        {"interval_timer.cpContr_load_l3", "DataCacheL3"},
        {"interval_timer.cpContr_fp_addsub", "PathFP"},
        {"interval_timer.cpContr_fp_muldiv", "PathFP"},
        {"interval_timer.cpContr_port0", "PathP0"},
        {"interval_timer.cpContr_port1", "PathP1"},
        {"interval_timer.cpContr_port2", "PathP2"},
        {"interval_timer.cpContr_port34", "PathP34"},
        {"interval_timer.cpContr_port5", "PathP5"},
        {"interval_timer.cpContr_port05", "PathP05"},
        {"interval_timer.cpContr_port015", "PathP015"},
    };
    return map;
}

// `key` of `[section]` in an INI-style sim.cfg: one value or one per core (comma-separated).
std::vector<double> readConfigValues(const std::filesystem::path& cfg, std::string_view section,
                                     std::string_view key) {
    std::ifstream in(cfg);
    std::string line, current;
    while (std::getline(in, line)) {
        const std::string_view t = csv::trim(line);
        if (t.starts_with("[") && t.ends_with("]")) {
            current = std::string(t.substr(1, t.size() - 2));
            continue;
        }
        if (current != section || !t.starts_with(key)) continue;
        const auto eq = t.find('=');
        if (eq == std::string_view::npos || csv::trim(t.substr(0, eq)) != key) continue;
        std::vector<double> out;
        for (const std::string& part : csv::splitLine(t.substr(eq + 1)))
            if (const auto v = csv::parseNumber(part); v && *v > 0) out.push_back(*v);
        return out;
    }
    return {};
}

// core -> stat -> value at a snapshot, or their difference (absent rows are zero).
using CoreStats = std::map<int64_t, std::map<std::string, double>>;

double statOf(const CoreStats& snapshot, int64_t core, const std::string& stat) {
    const auto c = snapshot.find(core);
    if (c == snapshot.end()) return 0.0;
    const auto it = c->second.find(stat);
    return it == c->second.end() ? 0.0 : it->second;
}

// A per-core configuration value: the last one given serves the cores after it.
double perCore(const std::vector<double>& values, int64_t core) {
    return values[std::min<size_t>(static_cast<size_t>(core), values.size() - 1)];
}

// The two snapshots that bound the interval (roi-begin/roi-end, else start/stop), per core.
struct Snapshots {
    std::string beginName = "roi-begin", endName = "roi-end";
    std::set<std::string> registered;  // every stat Sniper registered, zero or not
    CoreStats atBegin, atEnd, diff;
};

Snapshots readSnapshots(sqlite3* db, const std::string& path) {
    Snapshots s;
    std::map<std::string, int64_t> prefixes;
    {
        sql::Statement st(db, "SELECT prefixid, prefixname FROM prefixes");
        while (st.step()) prefixes[st.text(1)] = st.int64(0);
    }
    if (!prefixes.count(s.beginName) || !prefixes.count(s.endName)) {
        s.beginName = "start";
        s.endName = "stop";
    }
    if (!prefixes.count(s.beginName) || !prefixes.count(s.endName))
        throw InputError(atOffset(path, 0,
                                  "no roi-begin/roi-end (or start/stop) snapshots in "
                                  "table 'prefixes'"));
    std::map<int64_t, std::string> names;
    {
        sql::Statement st(db, "SELECT nameid, objectname, metricname FROM names");
        while (st.step()) {
            names[st.int64(0)] = st.text(1) + "." + st.text(2);
            s.registered.insert(names[st.int64(0)]);
        }
    }
    {
        sql::Statement st(db,
                          "SELECT prefixid, nameid, core, value FROM `values` "
                          "WHERE prefixid IN (?, ?)");
        st.bind(1, prefixes[s.beginName]).bind(2, prefixes[s.endName]);
        const int64_t endId = prefixes[s.endName];
        while (st.step()) {
            const auto name = names.find(st.int64(1));
            if (name == names.end()) continue;
            auto& snapshot = st.int64(0) == endId ? s.atEnd : s.atBegin;
            snapshot[st.int64(2)][name->second] += st.real(3);
        }
    }
    for (const auto& [core, stats] : s.atEnd)
        for (const auto& [stat, value] : stats) s.diff[core][stat] += value;
    for (const auto& [core, stats] : s.atBegin)
        for (const auto& [stat, value] : stats) s.diff[core][stat] -= value;
    return s;
}

// The interval as every core sees it, and the figures across cores its stacks need.
struct Interval {
    double time0Begin = 0, time0End = 0;  // fs
    bool globalElapsed = false;           // each core's elapsed time is the interval's global time
    double maxTime = 0;                   // fs, of the slowest core
    double instructionSum = 0;
};

Interval intervalOf(const Snapshots& s) {
    Interval interval;
    // When the interval begins (cpistack_data.py via sniper_lib): the global barrier time at
    // the first snapshot, else the latest core's time; each core's time runs from there.
    if (s.registered.count("barrier.global_time")) {
        interval.time0Begin = statOf(s.atBegin, 0, "barrier.global_time");
    } else {
        for (const auto& [core, stats] : s.diff)
            interval.time0Begin = std::max(
                interval.time0Begin, statOf(s.atBegin, core, "performance_model.elapsed_time"));
    }
    // And when it ends. sniper_lib (whose figures sim.out prints as each core's Cycles and
    // IPC) gives every core the interval's global time as its elapsed time: a core that
    // started late or ran ahead would otherwise count time outside the interval (a public
    // 2-core run: 545,621 cycles for core 1 against sim.out's 257,911).
    if (s.registered.count("barrier.global_time")) {
        interval.time0End = statOf(s.atEnd, 0, "barrier.global_time");
    } else {
        for (const auto& [core, stats] : s.diff)
            interval.time0End = std::max(interval.time0End,
                                         statOf(s.atEnd, core, "performance_model.elapsed_time"));
    }
    interval.globalElapsed = s.registered.count("performance_model.idle_elapsed_time") > 0;
    for (const auto& [core, stats] : s.diff)
        interval.maxTime =
            std::max(interval.maxTime,
                     statOf(s.atEnd, core, "performance_model.elapsed_time") - interval.time0Begin);
    for (const auto& [core, stats] : s.diff)
        interval.instructionSum += statOf(s.diff, core, "performance_model.instruction_count");
    return interval;
}

// A core's CPI components in cycles, keyed like cpistack_data.py (the stat after ".cpi").
using Components = std::map<std::string, double>;

double componentOf(const Components& data, const char* key) {
    const auto it = data.find(key);
    return it == data.end() ? 0.0 : it->second;
}

Components cpiComponents(const std::map<std::string, double>& stats, double fsToCycles) {
    Components data;
    for (const auto& [stat, value] : stats) {
        const auto dot = stat.find(".cpi");
        if (dot == std::string::npos || stat.starts_with("thread.") ||
            stat == "performance_model.cpiFastforwardTime")
            continue;
        data[stat.substr(dot + 4)] += value * fsToCycles;
    }
    return data;
}

// What older Sniper versions reported differently, as cpistack_data.py repairs it.
void repairOldVersions(Components& data, const Snapshots& s, int64_t core, double fsToCycles) {
    const auto value = [&](const char* key) { return componentOf(data, key); };
    // A bug of old iGraphite copied SyncPthreadBarrier into SyncMemAccess.
    if (value("SyncMemAccess") == value("SyncPthreadBarrier")) data.erase("SyncMemAccess");
    // Old versions did not report StartTime: it is the idle time no sync explains.
    if (!s.registered.count("performance_model.cpiStartTime") &&
        s.registered.count("performance_model.idle_elapsed_time"))
        data["StartTime"] =
            statOf(s.diff, core, "performance_model.idle_elapsed_time") * fsToCycles -
            value("SyncFutex") - value("SyncPthreadMutex") - value("SyncPthreadCond") -
            value("SyncPthreadBarrier") - value("Recv");
}

// Base beyond the ideal instructions / dispatch width is split over the critical-path
// contributors in proportion to their cpContr counters; false when the core has none (or the
// dispatch width is unknown).
bool splitBaseByCriticalPath(Components& data, const std::map<std::string, double>& stats,
                             const CoreStats& diff, int64_t core, double instructions,
                             const std::vector<double>& dispatchWidths) {
    bool hasCpContr = false;
    for (const auto& [stat, v] : stats)
        if (stat.starts_with("interval_timer.cpContr_")) hasCpContr = true;
    if (!hasCpContr || dispatchWidths.empty()) return false;
    const double baseBest = instructions / perCore(dispatchWidths, core);
    const double baseAct = componentOf(data, "Base");
    const double scale = (baseAct - baseBest) / (baseAct != 0 ? baseAct : 1);
    for (const auto& [counter, component] : criticalPathComponents()) {
        const double share = statOf(diff, core, counter) / 1e6 * scale;
        data["Base"] -= share;
        data[component] += share;
    }
    return true;
}

// Cycles dispatch stopped for the dispatch width (a cycle count, not fs) move from Base.
void moveDispatchWidth(Components& data, const std::map<std::string, double>& stats) {
    for (const auto& [stat, v] : stats)
        if (stat.starts_with("interval_timer.detailed-cpiBase-") &&
            stat.find("DispatchWidth") != std::string::npos &&
            stat.find("DispatchRate") == std::string::npos) {
            data["Base"] -= v;
            data["Issue"] += v;
        }
}

// A sync wait that began before the interval counts cycles from before it: taken off the
// waits in proportion.
void trimWaitsBeforeInterval(Components& data, double coreBegin, double time0Begin,
                             double fsToCycles) {
    if (!(coreBegin < time0Begin)) return;
    const double extra = (time0Begin - coreBegin) * fsToCycles;
    double syncTotal = 0;
    for (const auto& [key, v] : data)
        if ((key.starts_with("Sync") || key == "StartTime") && v > extra) syncTotal += v;
    if (syncTotal > 0)
        for (auto& [key, v] : data)
            if ((key.starts_with("Sync") || key == "StartTime") && v > extra)
                v -= extra * v / syncTotal;
}

// The configuration from the sim.cfg beside the file.
struct Config {
    std::vector<double> frequencies;  // GHz, per core
    std::vector<double> dispatchWidths;
};

// What the cores' stacks add up to, for the profile metadata.
struct Totals {
    int64_t cores = 0;
    double worstOveraccount = 0;
    bool criticalPath = false;
};

// One core's stack and metrics into `sink`; false for a core with nothing in the interval.
bool addCore(CpiSink& sink, int64_t core, const std::map<std::string, double>& stats,
             const Snapshots& s, const Interval& interval, const Config& config, Totals& totals) {
    const double fsToCycles = perCore(config.frequencies, core) * 1e-6;  // fs * GHz * 1e-6
    Components data = cpiComponents(stats, fsToCycles);
    const double coreElapsed = statOf(s.diff, core, "performance_model.elapsed_time");
    if (data.empty() && coreElapsed == 0) return false;
    const double elapsed =
        (interval.globalElapsed ? interval.time0End - interval.time0Begin : coreElapsed) *
        fsToCycles;
    repairOldVersions(data, s, core, fsToCycles);
    const double instructions = interval.instructionSum > 0
                                    ? statOf(s.diff, core, "performance_model.instruction_count")
                                    : statOf(s.diff, core, "core.instructions");
    if (splitBaseByCriticalPath(data, stats, s.diff, core, instructions, config.dispatchWidths))
        totals.criticalPath = true;
    moveDispatchWidth(data, stats);
    trimWaitsBeforeInterval(data, statOf(s.atBegin, core, "performance_model.elapsed_time"),
                            interval.time0Begin, fsToCycles);
    std::map<std::string, double> stack;
    double accounted = 0;
    for (const auto& [key, cycles] : data) {
        stack[cpistackItem(key)] += cycles;
        accounted += cycles;
    }
    // Imbalance: the slowest core's time this core did not account for.
    const double imbalance = interval.maxTime * fsToCycles - accounted;
    if (imbalance > 0.5) stack["imbalance-end"] += imbalance;
    totals.worstOveraccount = std::max(totals.worstOveraccount, -imbalance);

    const std::string kernel = "core " + std::to_string(core);
    for (const auto& [item, cycles] : stack)
        if (std::abs(cycles) > 1e-9) sink.stack(kernel, kSource, "", item, cycles);
    for (const auto& [stat, v] : stats)
        sink.metric(kernel, kSource, stat, stat.find("time") != std::string::npos ? "fs" : "", v);
    sink.metric(kernel, kSource, "frequency_ghz", "GHz", perCore(config.frequencies, core));
    sink.metric(kernel, kSource, "cycles", "cycle", elapsed);
    if (instructions > 0) sink.metric(kernel, kSource, "cpi", "", elapsed / instructions);
    ++totals.cores;
    return true;
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
        const Snapshots snapshots = readSnapshots(db, path);
        ctx.progress.report(0.5, "reading Sniper statistics");

        const auto cfg = std::filesystem::path(path).parent_path() / "sim.cfg";
        Config config;
        config.frequencies = readConfigValues(cfg, "perf_model/core", "frequency");
        config.dispatchWidths =
            readConfigValues(cfg, "perf_model/core/interval_timer", "dispatch_width");
        QJsonObject meta{{"snapshots", QString::fromStdString(snapshots.beginName + " .. " +
                                                              snapshots.endName)}};
        if (config.frequencies.empty()) {
            config.frequencies = {1.0};
            meta.insert("notice",
                        "No sim.cfg with perf_model/core/frequency beside the file: "
                        "cycles assume 1 GHz (they equal nanoseconds).");
        } else {
            meta.insert("frequency_ghz", config.frequencies.front());
        }
        const Interval interval = intervalOf(snapshots);

        CpiSink sink(ctx.workspace.db(), ctx.profileId);
        Totals totals;
        for (const auto& [core, stats] : snapshots.diff)
            addCore(sink, core, stats, snapshots, interval, config, totals);
        sink.finish();
        if (totals.cores == 0)
            throw InputError(atOffset(path, 0,
                                      "no per-core statistics between " + snapshots.beginName +
                                          " and " + snapshots.endName));
        meta.insert("cores", static_cast<qint64>(totals.cores));
        meta.insert("grouping", totals.criticalPath
                                    ? "Sniper cpistack (critical-path split of base by "
                                      "interval_timer.cpContr_*, no collapse)"
                                    : "Sniper cpistack (no collapse)");
        if (!config.dispatchWidths.empty())
            meta.insert("dispatch_width", config.dispatchWidths.front());
        if (totals.worstOveraccount > 0.5)
            meta.insert("overaccounted_cycles", totals.worstOveraccount);
        ctx.metadataJson = QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString();
    }
};

}  // namespace

const Importer& sniperStatsImporter() {
    static const SniperStatsImporter importer;
    return importer;
}

}  // namespace stallscope
