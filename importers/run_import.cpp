// Multi-host runs (issue 15): the per-host files of one distributed job (an XProf run directory,
// one Kineto trace per rank) become one trace profile. Each file is read below a host track of
// its own, the hosts' clocks are aligned once all are read (the writer shifts each host's tracks
// when it writes them), and the profile's metadata keeps each host's provenance.
#include "importers/run_import.h"

#include <xxhash.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/analysis/cache.h"
#include "core/errors.h"
#include "core/kinds.h"
#include "core/sqlite.h"
#include "core/trace/dialect.h"
#include "core/trace/host_recording.h"
#include "core/trace/hosts.h"
#include "core/trace/hosts_registration.h"
#include "core/trace/trace_store.h"
#include "core/trace/trace_writer.h"

namespace stallscope {

namespace {

namespace fs = std::filesystem;
constexpr size_t kSniffBytes = 4096;

// "34.83.195.179_6003.xplane.pb" -> "34.83.195.179_6003"; "rank-3.pt.trace.json.gz" -> "rank-3".
std::string hostStem(const std::string& path) {
    std::string name = fs::path(path).filename().string();
    for (const char* suffix : {".gz", ".zst", ".zstd", ".json", ".trace", ".pt", ".pb", ".xplane"})
        if (name.size() > std::strlen(suffix) && name.ends_with(suffix))
            name.resize(name.size() - std::strlen(suffix));
    // Kineto: "<worker>.<pid>.<ms>.pt.trace.json": the worker part names the rank.
    return name.empty() ? "host" : name;
}

// Orders names with their digit runs compared as numbers ("rank-2" before "rank-10").
bool naturalLess(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(uint8_t(a[i])) && std::isdigit(uint8_t(b[j]))) {
            size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(uint8_t(a[ie]))) ++ie;
            while (je < b.size() && std::isdigit(uint8_t(b[je]))) ++je;
            const std::string_view da = std::string_view(a).substr(i, ie - i);
            const std::string_view db = std::string_view(b).substr(j, je - j);
            const size_t za = da.find_first_not_of('0'), zb = db.find_first_not_of('0');
            const std::string_view na = za == std::string_view::npos ? "" : da.substr(za);
            const std::string_view nb = zb == std::string_view::npos ? "" : db.substr(zb);
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

// The step a slice name marks, when it is a step marker: `ProfilerStep#N` (Kineto) or a plain
// number (XProf's Steps line, where events are named by step id). -1: not a step.
int64_t stepKeyOf(std::string_view name, bool onStepsLine) {
    std::string_view digits;
    if (name.starts_with("ProfilerStep#"))
        digits = name.substr(13);
    else if (onStepsLine)
        digits = name;
    if (digits.empty()) return -1;
    int64_t key = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), key);
    return ec == std::errc() && end == digits.data() + digits.size() ? key : -1;
}

// Collects the first start of every step a host's slices mark (its own clock) as they are
// recorded: names classified once, Steps lines known by track.
class StepMarkers {
  public:
    StepMarkers(trace::HostRecording& recording, std::map<int64_t, int64_t>& starts) {
        recording.setSliceObserver(
            [this, &recording, &starts](uint32_t track, int64_t start, uint32_t name) {
                if (track >= stepsLine_.size()) stepsLine_.resize(track + 1, -1);
                if (stepsLine_[track] < 0)
                    stepsLine_[track] = recording.track(track).name == "Steps";
                std::vector<int64_t>& keys = stepsLine_[track] ? keyOfNameOnSteps_ : keyOfName_;
                if (name >= keys.size()) keys.resize(name + 1, -2);
                if (keys[name] == -2)
                    keys[name] = stepKeyOf(recording.text(name), stepsLine_[track] == 1);
                if (keys[name] < 0) return;
                auto [it, added] = starts.try_emplace(keys[name], start);
                if (!added) it->second = std::min(it->second, start);
            });
    }
    StepMarkers(const StepMarkers&) = delete;
    StepMarkers& operator=(const StepMarkers&) = delete;

  private:
    std::vector<int64_t> keyOfName_;         // per name id: -2 unknown, -1 none
    std::vector<int8_t> stepsLine_;          // per track: -1 unknown, 0, 1
    std::vector<int64_t> keyOfNameOnSteps_;  // per name id on a Steps line
};

// Threads reading hosts: STALLSCOPE_IMPORT_WORKERS when set (1 reads one host at a time, as
// tests compare), else one per core.
size_t importWorkers() {
    if (const char* forced = std::getenv("STALLSCOPE_IMPORT_WORKERS")) {
        const long n = std::strtol(forced, nullptr, 10);
        if (n > 0) return size_t(n);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

std::string describeFormat(const Importer* importer) {
    if (importer->format() == "xprof-xspace") return "XProf XSpace";
    if (importer->format() == "chrome-json") return "Chrome/Kineto JSON";
    return importer->format();
}

// Lists up to three names and how many more.
std::string someNames(const std::vector<std::string>& paths) {
    std::string out;
    for (size_t i = 0; i < paths.size() && i < 3; ++i)
        out += (i ? ", " : "") + fs::path(paths[i]).filename().string();
    if (paths.size() > 3) out += ", ... (" + std::to_string(paths.size()) + " files)";
    return out;
}

// "xxh128-run:<hex>" over the hosts' file hashes in order: the same files make the same run,
// however it was imported (one process, or shards merged).
std::string runHash(const std::vector<std::string>& hostHashes) {
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    for (const std::string& h : hostHashes) XXH3_128bits_update(state, h.data(), h.size());
    const XXH128_hash_t digest = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    char hex[40];
    std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(digest.high64),
                  static_cast<unsigned long long>(digest.low64));
    return std::string("xxh128-run:") + hex;
}

// Host names: what the files say, unless two say the same (XProf's demo run is one file copied
// twice); then the file names, made unique.
std::vector<std::string> uniqueHostNames(const std::vector<std::string>& given,
                                         const std::vector<std::string>& paths) {
    std::set<std::string> seen;
    bool unique = true;
    for (const std::string& name : given) unique = seen.insert(name).second && unique;
    if (unique) return given;
    std::vector<std::string> out;
    std::map<std::string, int> uses;
    for (const std::string& path : paths) {
        std::string name = hostStem(path);
        if (++uses[name] > 1) name += " (" + std::to_string(uses[name]) + ")";
        out.push_back(name);
    }
    return out;
}

// A host file of a run: its provenance, what it says about its clock, and where its tracks went.
struct RunHost {
    std::string path, fileName, hash, compression, clockSource;
    uint64_t size = 0;
    uint32_t track = 0, trackEnd = 0;
    int64_t firstPid = 0, offset = 0;
    std::optional<int64_t> clockBase;
    std::map<int64_t, int64_t> stepStarts;  // step key -> first start, own clock
    QJsonObject metadata;
};

// A host as read, waiting to be replayed into the writer.
struct ParsedHost {
    std::unique_ptr<trace::HostRecording> recording;
    std::function<void(trace::TraceSink&, QJsonObject&, int64_t)> renumberPids;
    int64_t pidsUsed = 0;
    std::string hostName;
};

// Hosts are read on worker threads, each into a recording of its own (the writer and the
// workspace are not thread-safe); the importing thread takes the recordings in host order, so
// the profile is the one a sequential import makes. At most `workers + 1` hosts are read or
// waiting (their recordings are held in memory). The workers are stopped and joined when this
// is destroyed, whatever the exit.
class HostReaders {
  public:
    HostReaders(const Importer& importer, std::vector<RunHost>& hosts, size_t workers)
        : importer_(importer),
          hosts_(hosts),
          inFlight_(workers + 1),
          parsed_(hosts.size()),
          hostFraction_(hosts.size()) {
        try {
            for (size_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
        } catch (...) {
            stopAndJoin();
            throw;
        }
    }
    ~HostReaders() { stopAndJoin(); }
    HostReaders(const HostReaders&) = delete;
    HostReaders& operator=(const HostReaders&) = delete;

    // Host h once it is read, reporting the reading's progress while waiting; rethrows the
    // first error any host met.
    std::unique_ptr<ParsedHost> take(size_t h, Progress& progress) {
        std::unique_lock lock(mutex_);
        while (!parsed_[h] && !firstError_) {
            if (changed_.wait_for(lock, std::chrono::milliseconds(100)) ==
                std::cv_status::timeout) {
                lock.unlock();
                reportReading(progress);
                lock.lock();
            }
        }
        if (firstError_) std::rethrow_exception(firstError_);
        return std::move(parsed_[h]);
    }
    // The host last taken is replayed: a worker may read one more.
    void replayed(Progress& progress) {
        {
            std::lock_guard lock(mutex_);
            ++replayed_;
        }
        changed_.notify_all();
        reportReading(progress);
    }

  private:
    void reportReading(Progress& progress) {
        const size_t hosts = hosts_.size();
        double done = 0;
        for (size_t h = 0; h < hosts; ++h)
            done += h < replayed_ ? 1.0 : hostFraction_[h].load(std::memory_order_relaxed);
        progress.report(0.85 * done / double(hosts), "reading hosts (" + std::to_string(replayed_) +
                                                         "/" + std::to_string(hosts) + " done)");
    }

    std::unique_ptr<ParsedHost> read(size_t h) {
        RunHost& host = hosts_[h];
        auto recording = std::make_unique<trace::HostRecording>();
        StepMarkers markers(*recording, host.stepStarts);
        trace::TrackSpec spec;
        spec.kind = trace::TrackKind::Process;
        spec.name = hostStem(host.path);
        spec.pid = "host " + std::to_string(h);
        spec.sortIndex = int64_t(h);
        const uint32_t hostTrack = recording->addTrack(std::move(spec));
        InputFile input(host.path);
        host.size = input.fileSize();
        host.compression = compressionName(input.compression());
        Progress hostProgress([&](double fraction, const std::string&) {
            hostFraction_[h].store(fraction, std::memory_order_relaxed);
            std::lock_guard lock(mutex_);
            if (stop_) throw Cancelled();
        });
        HostImportContext ctx{*recording, input, hostProgress, hostTrack, 0};
        importer_.readHost(ctx);
        recording->setSliceObserver({});
        char sink[1 << 16];
        while (input.read(sink, sizeof sink) > 0) {
        }
        host.hash = input.contentHash();
        host.clockBase = ctx.clockBaseNs;
        host.clockSource = ctx.clockSource;
        host.metadata = std::move(ctx.metadata);
        auto out = std::make_unique<ParsedHost>();
        out->recording = std::move(recording);
        out->renumberPids = std::move(ctx.renumberPids);
        out->pidsUsed = std::max<int64_t>(ctx.pidsUsed, 0);
        out->hostName = std::move(ctx.hostName);
        return out;
    }

    void work() {
        for (;;) {
            size_t h = 0;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] {
                    return stop_ || nextToRead_ >= hosts_.size() ||
                           nextToRead_ < replayed_ + inFlight_;
                });
                if (stop_ || nextToRead_ >= hosts_.size()) return;
                h = nextToRead_++;
            }
            try {
                std::unique_ptr<ParsedHost> result = read(h);
                std::lock_guard lock(mutex_);
                parsed_[h] = std::move(result);
            } catch (...) {
                std::lock_guard lock(mutex_);
                if (!firstError_ && !stop_) firstError_ = std::current_exception();
                stop_ = true;
            }
            changed_.notify_all();
        }
    }

    void stopAndJoin() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (std::thread& t : threads_) t.join();
        threads_.clear();
    }

    const Importer& importer_;
    std::vector<RunHost>& hosts_;
    const size_t inFlight_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::unique_ptr<ParsedHost>> parsed_;
    std::vector<std::atomic<double>> hostFraction_;
    size_t nextToRead_ = 0, replayed_ = 0;
    bool stop_ = false;
    std::exception_ptr firstError_;
    std::vector<std::thread> threads_;
};

// Replays the hosts into `writer` in host order as they are read, each host's process ids after
// the previous host's; returns the hosts' total file size.
uint64_t replayHosts(HostReaders& readers, std::vector<RunHost>& hosts, trace::TraceWriter& writer,
                     Progress& progress) {
    uint64_t totalSize = 0;
    int64_t nextPid = 0;
    for (size_t h = 0; h < hosts.size(); ++h) {
        std::unique_ptr<ParsedHost> host = readers.take(h, progress);
        RunHost& info = hosts[h];
        if (!host->hostName.empty()) host->recording->track(0).name = host->hostName;
        if (host->renumberPids && nextPid != 0)
            host->renumberPids(*host->recording, info.metadata, nextPid);
        info.firstPid = nextPid;
        nextPid += host->pidsUsed;
        info.track = host->recording->replayInto(writer, [&] { progress.checkCancelled(); });
        info.trackEnd = uint32_t(writer.trackCount());
        totalSize += info.size;
        host.reset();
        readers.replayed(progress);
    }
    return totalSize;
}

// Names the host tracks, unique across the run.
void nameHosts(const std::vector<RunHost>& hosts, trace::TraceWriter& writer) {
    std::vector<std::string> given, paths;
    for (const RunHost& host : hosts) {
        given.push_back(writer.track(host.track).name);
        paths.push_back(host.path);
    }
    const std::vector<std::string> names = uniqueHostNames(given, paths);
    for (size_t h = 0; h < hosts.size(); ++h) writer.track(hosts[h].track).name = names[h];
}

// Clock alignment, first that applies: every host carries a clock base on a shared clock
// (XProf profile_start_time, Kineto baseTimeNanoseconds); the first step every host ran
// starts together; the hosts' own clocks. Sets each host's offset; returns what aligned them.
std::string alignClocks(std::vector<RunHost>& hosts) {
    std::string alignment = "none: the hosts' own clocks (no clock base or common step)";
    const bool allBases = std::all_of(hosts.begin(), hosts.end(),
                                      [](const RunHost& h) { return h.clockBase.has_value(); });
    if (allBases) {
        int64_t earliest = INT64_MAX;
        for (const RunHost& host : hosts) earliest = std::min(earliest, *host.clockBase);
        for (RunHost& host : hosts) host.offset = *host.clockBase - earliest;
        alignment = hosts.front().clockSource;
    } else if (hosts.size() > 1) {
        std::optional<int64_t> common;
        for (const auto& entry : hosts.front().stepStarts) {
            const int64_t key = entry.first;
            const bool everywhere = std::all_of(hosts.begin(), hosts.end(), [&](const RunHost& h) {
                return h.stepStarts.count(key) > 0;
            });
            if (everywhere) {
                common = key;
                break;
            }
        }
        if (common) {
            const int64_t reference = hosts.front().stepStarts.at(*common);
            for (RunHost& host : hosts) host.offset = reference - host.stepStarts.at(*common);
            alignment = "first common step (" + std::to_string(*common) + ")";
        }
    }
    return alignment;
}

// Provenance per host, plane details with the plane's host (process ids are unique across
// the run, so views find a plane by its pid as in a one-host profile), the hosts' warnings
// under their names, and the hosts' file hashes in order.
QJsonArray hostEntries(std::vector<RunHost>& hosts, trace::TraceWriter& writer, QJsonArray& planes,
                       QJsonArray& warnings, std::vector<std::string>& hashes) {
    QJsonArray hostArray;
    for (size_t h = 0; h < hosts.size(); ++h) {
        RunHost& host = hosts[h];
        hashes.push_back(host.hash);
        const QString hostName = QString::fromStdString(writer.track(host.track).name);
        for (const QJsonValue plane : host.metadata.value("plane_details").toArray()) {
            QJsonObject p = plane.toObject();
            p.insert("host", hostName);
            planes.append(p);
        }
        host.metadata.remove("plane_details");
        for (const QJsonValue w : host.metadata.value("warnings").toArray())
            warnings.append(hostName + ": " + w.toString());
        QJsonObject o{{"name", hostName},
                      {"index", qint64(h)},
                      {"track", qint64(host.track)},
                      {"path", QString::fromStdString(fs::absolute(host.path).string())},
                      {"size", qint64(host.size)},
                      {"hash", QString::fromStdString(host.hash)},
                      {"compression", QString::fromStdString(host.compression)},
                      {"offset_ns", qint64(host.offset)},
                      {"first_pid", qint64(host.firstPid)},
                      {"import", host.metadata}};
        if (host.clockBase) {
            o.insert("clock_base_ns", QString::number(*host.clockBase));
            o.insert("clock_source", QString::fromStdString(host.clockSource));
        }
        hostArray.append(o);
    }
    return hostArray;
}

// The dialect of a run of hosts, each host's import metadata in its entry's "import": the first
// host's dialect and the evidence every host carries.
void copyDialect(const QJsonArray& hostArray, QJsonObject& meta) {
    if (hostArray.isEmpty()) return;
    const QJsonObject first = hostArray.first().toObject().value("import").toObject();
    if (!first.contains("dialect")) return;
    trace::EvidenceSet evidence = trace::evidenceOf(first);
    for (const QJsonValue host : hostArray)
        evidence = trace::EvidenceSet(
            evidence.bits() & trace::evidenceOf(host.toObject().value("import").toObject()).bits());
    trace::recordDialect(meta, trace::dialectOf(first), evidence);
}

// The run profile's metadata; `hashes` gets the hosts' file hashes in order.
QJsonObject runMetadata(const Importer& importer, std::vector<RunHost>& hosts,
                        trace::TraceWriter& writer, const trace::TraceSummary& summary,
                        const std::string& alignment, const RunOptions& options,
                        std::vector<std::string>& hashes) {
    QJsonArray planes, warnings;
    const QJsonArray hostArray = hostEntries(hosts, writer, planes, warnings, hashes);
    QJsonObject meta;
    meta.insert("format", QString::fromStdString(importer.format()));
    // A run is of its hosts' dialect (one format), with the evidence they all carry.
    copyDialect(hostArray, meta);
    if (!options.skipped.empty()) {
        QJsonArray names;
        for (const std::string& path : options.skipped)
            names.append(QString::fromStdString(fs::path(path).filename().string()));
        warnings.append(QString("%1 files of the directory left out: the profiler's own "
                                "conversions of hosts whose XSpace is imported (%2)")
                            .arg(qint64(options.skipped.size()))
                            .arg(QString::fromStdString(someNames(options.skipped))));
        meta.insert("skipped_files", names);
    }
    meta.insert(
        trace::kRunMetadataKey,
        QJsonObject{{"hosts", qint64(hosts.size())},
                    {"alignment", QString::fromStdString(alignment)},
                    {"source", QString::fromStdString(fs::absolute(options.source).string())}});
    meta.insert("hosts", hostArray);
    if (!planes.isEmpty()) {
        meta.insert("plane_details", planes);
        meta.insert("planes", qint64(planes.size()));
    }
    meta.insert("trace", trace::summaryJson(summary));
    if (summary.unboundFlows > 0)
        warnings.append(QString("%1 flows have an end with no slice to attach to")
                            .arg(qint64(summary.unboundFlows)));
    meta.insert("warnings", warnings);
    return meta;
}
}  // namespace

const Importer* detectFile(const std::string& path, const std::string& format) {
    if (!format.empty()) {
        const Importer* forced = findImporter(format);
        if (!forced) throw InputError("unknown --format '" + format + "'");
        return forced;
    }
    InputFile input(path);
    const std::string head(input.peek(kSniffBytes));
    Sniff sniff{path, head, input.compression(), [&input](size_t n) { return input.peek(n); }};
    return detectImporter(sniff);
}

std::vector<RunMember> runMembers(const std::string& dir, const std::string& format,
                                  std::vector<std::string>* skipped) {
    std::vector<std::string> files;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
        if (entry.is_regular_file()) files.push_back(entry.path().string());
    if (error) throw InputError(dir + ": cannot list the directory: " + error.message());
    std::sort(files.begin(), files.end(), naturalLess);
    // Members by content: files no importer recognises (XProf's cached tool data, notes) are
    // left out; a run of one kind is required.
    std::map<std::string, std::vector<std::string>> byFormat;
    std::map<std::string, const Importer*> importerOf;
    for (const std::string& path : files) {
        const Importer* importer = nullptr;
        try {
            importer = detectFile(path, "");
        } catch (const InputError&) {
            continue;  // not a profile
        }
        if (!format.empty() && importer->format() != format) continue;
        byFormat[importer->format()].push_back(path);
        importerOf[importer->format()] = importer;
    }
    if (byFormat.empty())
        throw InputError(dir + ": is a directory without profile files" +
                         (format.empty() ? std::string() : " of format " + format));
    // XProf's conversions of its own hosts beside their XSpaces: the XSpaces are the run.
    if (const auto xspaces = byFormat.find("xprof-xspace");
        byFormat.size() > 1 && xspaces != byFormat.end()) {
        std::set<std::string> hosts;
        for (const std::string& path : xspaces->second) hosts.insert(hostStem(path));
        bool conversions = true;
        for (const auto& [f, paths] : byFormat)
            if (f != "xprof-xspace")
                for (const std::string& path : paths)
                    conversions = conversions && hosts.count(hostStem(path)) > 0;
        if (conversions) {
            for (const auto& [f, paths] : byFormat)
                if (f != "xprof-xspace" && skipped)
                    skipped->insert(skipped->end(), paths.begin(), paths.end());
            const std::vector<std::string> keep = xspaces->second;
            const Importer* importer = importerOf["xprof-xspace"];
            byFormat.clear();
            importerOf.clear();
            byFormat["xprof-xspace"] = keep;
            importerOf["xprof-xspace"] = importer;
        }
    }
    if (byFormat.size() > 1) {
        std::string kinds;
        for (const auto& [f, paths] : byFormat)
            kinds += (kinds.empty() ? "" : "; ") + describeFormat(importerOf[f]) + ": " +
                     someNames(paths);
        throw InputError(dir + ": is a directory that mixes kinds of profiles (" + kinds +
                         "); a run is one kind: pick one with --format or import the files "
                         "separately");
    }
    std::vector<RunMember> out;
    for (const std::string& path : byFormat.begin()->second)
        out.push_back({path, importerOf.begin()->second});
    return out;
}

std::vector<RunMember> runMembers(const std::vector<std::string>& files,
                                  const std::string& format) {
    std::vector<RunMember> out;
    std::map<std::string, std::vector<std::string>> byFormat;
    std::map<std::string, const Importer*> importerOf;
    for (const std::string& path : files) {
        if (fs::is_directory(path))
            throw InputError(path + ": is a directory; --as-one takes the host files themselves");
        const Importer* importer = detectFile(path, format);
        byFormat[importer->format()].push_back(path);
        importerOf[importer->format()] = importer;
        out.push_back({path, importer});
    }
    if (byFormat.size() > 1) {
        std::string kinds;
        for (const auto& [f, paths] : byFormat)
            kinds += (kinds.empty() ? "" : "; ") + describeFormat(importerOf[f]) + ": " +
                     someNames(paths);
        throw InputError("--as-one: the files are of different kinds (" + kinds +
                         "); the hosts of one run are one kind");
    }
    return out;
}

ImportedProfile importRun(Workspace& workspace, const std::vector<RunMember>& members,
                          const RunOptions& options, Progress& progress) {
    if (members.empty()) throw InputError("import: a run needs at least one host file");
    const Importer* importer = members.front().importer;
    if (!importer->readsHosts())
        throw InputError(members.front().path + ": " + importer->format() +
                         " files cannot be the hosts of a run (formats that can: xprof-xspace, "
                         "chrome-json; Chakra ranks are grouped from the rank-0 file)");

    ProfileInfo info;
    info.name =
        workspace.uniqueName(options.name.empty() ? hostStem(options.source) : options.name);
    info.kind = kinds::kTrace;
    info.sourcePath = fs::absolute(options.source).string();
    const int64_t id = workspace.insertProfile(info);

    std::vector<RunHost> hosts(members.size());
    for (size_t h = 0; h < members.size(); ++h) {
        hosts[h].path = members[h].path;
        hosts[h].fileName = fs::path(hosts[h].path).filename().string();
        if (members[h].importer != importer)
            throw InputError(hosts[h].path + ": not of the run's kind (" + importer->format() +
                             ")");
    }

    const size_t workers = std::min(importWorkers(), members.size());
    HostReaders readers(*importer, hosts, workers);
    trace::TraceWriter writer(workspace, id);
    writer.setWriteThreads(workers);
    const uint64_t totalSize = replayHosts(readers, hosts, writer, progress);
    nameHosts(hosts, writer);
    const std::string alignment = alignClocks(hosts);
    for (const RunHost& host : hosts)
        if (host.offset != 0)
            for (uint32_t t = host.track; t < host.trackEnd; ++t)
                writer.setTimeOffset(t, host.offset);

    const trace::TraceSummary summary =
        writer.finish([&](double f) { progress.report(0.85 + 0.14 * f, "building timeline"); });
    std::vector<std::string> hashes;
    const QJsonObject meta =
        runMetadata(*importer, hosts, writer, summary, alignment, options, hashes);
    sql::Statement update(workspace.db(),
                          "UPDATE profiles SET source_size = ?, source_hash = ?, metadata = ? "
                          "WHERE id = ?");
    update.bind(1, int64_t(totalSize))
        .bind(2, runHash(hashes))
        .bind(3, QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString())
        .bind(4, id);
    update.exec();
    return {id, info.kind, info.name};
}

ImportedProfile mergeShards(Workspace& workspace, const std::vector<std::string>& shards,
                            const std::string& name, Progress& progress) {
    if (shards.empty()) throw InputError("merge: give at least one SHARD");
    if (workspace.readOnly())
        throw InputError(workspace.path() + ": workspace is read-only; cannot merge into it");
    struct Source {
        trace::HostSummary summary;
        size_t shard = 0;
    };
    std::vector<Source> sources;
    std::string format;
    QJsonObject dialectOfShards;  // the first shard's dialect and evidence
    for (size_t i = 0; i < shards.size(); ++i) {
        const std::string shardPath = fs::absolute(shards[i]).lexically_normal().string();
        if (shardPath == fs::absolute(workspace.path()).lexically_normal().string())
            throw InputError(shards[i] + ": a shard cannot be the merge's own output");
        const auto shard = Workspace::openExisting(shards[i]);
        size_t runs = 0;
        for (const ProfileInfo& p : shard->profiles()) {
            if (p.kind != kinds::kTrace) continue;
            ++runs;
            const QJsonObject meta =
                QJsonDocument::fromJson(QByteArray::fromStdString(p.metadataJson)).object();
            if (trace::isMergedProfile(meta))
                throw InputError(shards[i] + ": profile " + p.name +
                                 " is itself a merge; merge the shards it came from");
            const QString shardFormat = meta.value("format").toString();
            if (format.empty()) {
                format = shardFormat.toStdString();
                if (meta.contains("dialect"))
                    trace::recordDialect(dialectOfShards, trace::dialectOf(meta),
                                         trace::evidenceOf(meta));
            }
            if (shardFormat.toStdString() != format)
                throw InputError(shards[i] + ": profile " + p.name + " is " +
                                 shardFormat.toStdString() + ", the other shards " + format +
                                 "; a run is one kind");
            std::vector<trace::HostSummary> summaries;
            if (const auto stored = trace::HostsAnalysisSpec::cast(
                    analysis::stored(*shard, p.id, trace::hostsAnalysis()))) {
                summaries = stored->hosts;
            } else {
                const trace::TraceStore store(*shard, p.id);
                summaries = trace::analyzeHosts(store).hosts;
                if (!trace::isRunProfile(meta) && !summaries.empty()) {
                    summaries.front().host.name = p.name;
                    summaries.front().host.path = p.sourcePath;
                    summaries.front().host.hash = p.sourceHash;
                    summaries.front().host.size = p.sourceSize;
                }
            }
            for (trace::HostSummary& s : summaries) {
                s.host.shard = shardPath;
                s.host.shardProfile = p.id;
                s.host.shardTrack = s.host.track;
                s.host.track = -1;
                sources.push_back({std::move(s), i});
            }
        }
        if (runs == 0) throw InputError(shards[i] + ": no trace profile in the shard");
        progress.report(0.9 * double(i + 1) / double(shards.size()), "reading shards");
    }
    // The order a run directory's hosts take: by file name.
    std::stable_sort(sources.begin(), sources.end(), [](const Source& a, const Source& b) {
        return naturalLess(fs::path(a.summary.host.path).filename().string(),
                           fs::path(b.summary.host.path).filename().string());
    });
    std::vector<std::string> given, paths, hashes;
    for (const Source& s : sources) {
        given.push_back(s.summary.host.name);
        paths.push_back(s.summary.host.path);
        hashes.push_back(s.summary.host.hash);
    }
    const std::vector<std::string> names = uniqueHostNames(given, paths);

    sql::Transaction tx(workspace.db());
    ProfileInfo info;
    info.name = workspace.uniqueName(name.empty() ? "merged run" : name);
    info.kind = kinds::kTrace;
    info.sourcePath = fs::absolute(shards.front()).string();
    const int64_t id = workspace.insertProfile(info);
    QJsonArray hostArray, shardArray;
    std::vector<trace::HostSummary> summaries;
    int64_t totalSize = 0;
    for (size_t h = 0; h < sources.size(); ++h) {
        trace::HostSummary s = std::move(sources[h].summary);
        s.host.name = names[h];
        s.host.index = int(h);
        totalSize += s.host.size;
        hostArray.append(QJsonObject{{"name", QString::fromStdString(s.host.name)},
                                     {"index", qint64(h)},
                                     {"path", QString::fromStdString(s.host.path)},
                                     {"size", qint64(s.host.size)},
                                     {"hash", QString::fromStdString(s.host.hash)},
                                     {"offset_ns", qint64(s.host.offsetNs)},
                                     {"shard", QString::fromStdString(s.host.shard)},
                                     {"shard_profile", qint64(s.host.shardProfile)},
                                     {"shard_track", qint64(s.host.shardTrack)}});
        summaries.push_back(std::move(s));
    }
    for (const std::string& shard : shards)
        shardArray.append(QString::fromStdString(fs::absolute(shard).string()));
    QJsonObject meta = dialectOfShards;
    meta.insert("format", QString::fromStdString(format));
    meta.insert(
        trace::kRunMetadataKey,
        QJsonObject{{"hosts", qint64(summaries.size())},
                    {"merged", true},
                    {"shards", shardArray},
                    {"alignment",
                     "per shard (each shard aligns its own hosts); the "
                     "summaries do not depend on it"},
                    {"source", shardArray.isEmpty() ? QString() : shardArray.at(0).toString()}});
    meta.insert("hosts", hostArray);
    meta.insert("warnings", QJsonArray{"merged from shards: the hosts' timelines stay in their "
                                       "shard workspaces (hosts[].shard)"});
    sql::Statement update(workspace.db(),
                          "UPDATE profiles SET source_size = ?, source_hash = ?, metadata = ? "
                          "WHERE id = ?");
    update.bind(1, totalSize)
        .bind(2, runHash(hashes))
        .bind(3, QJsonDocument(meta).toJson(QJsonDocument::Compact).toStdString())
        .bind(4, id);
    update.exec();
    trace::storeMergedHosts(workspace, id, summaries);
    progress.checkCancelled();
    tx.commit();
    progress.report(1.0, "merged");
    return {id, info.kind, info.name};
}

}  // namespace stallscope
