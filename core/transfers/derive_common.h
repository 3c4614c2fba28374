#pragma once

// Helpers the XProf and Kineto derivations share (internal to core/transfers).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/transfers/transfers.h"

namespace stallscope::trace {
class TraceStore;
struct TrackRow;
}  // namespace stallscope::trace

namespace stallscope::transfers::detail {

// The host of each track in a multi-host run profile (hosts.h): its host's index in the run,
// -1 in a one-host profile. Correlation ids and device numbers are per host (two ranks both
// have a GPU 0 and a correlation 1), so runtime-call derivations scope them by host.
class TrackHosts {
  public:
    explicit TrackHosts(const trace::TraceStore& store);
    int of(int64_t track) const;
    // What goes before a device or thread name: "rank1 " in a run profile, "" otherwise.
    std::string prefix(int host) const { return host < 0 ? std::string() : names_[host] + " "; }
    // A correlation id (>= 0) of `host`, unique across the run's hosts.
    static int64_t scoped(int host, int64_t id) {
        return host < 0 || id < 0 ? id
                                  : int64_t((uint64_t(host + 1) << 40) |
                                            (uint64_t(id) & ((uint64_t(1) << 40) - 1)));
    }

  private:
    std::vector<std::string> names_;
    std::vector<int> byTrack_;  // indexed by track id
};

// Links by (device, name), created on first use.
class LinkTable {
  public:
    explicit LinkTable(std::vector<Link>& links) : links_(links) {}
    uint32_t get(const std::string& device, const std::string& name, const std::string& source,
                 const std::string& destination);

  private:
    std::vector<Link>& links_;
    std::map<std::pair<std::string, std::string>, uint32_t> index_;
};

// model() in parts, for a derivation that builds one run's program at a time instead of
// holding them all (a step per op: millions). Constructed once the analysis holds every
// transfer (counts them per link, fits the links, computes the lifetimes); then per program
// backtails() and run() (simulation, suggestions); finish() last. Each program's backtails
// must be in before its run() and before any other program's run() that reads its
// transfers: model() does all backtails first; a derivation whose programs are one per run
// may do each right before its run().
class Modeller {
  public:
    explicit Modeller(Analysis& analysis);
    ~Modeller();
    Modeller(const Modeller&) = delete;
    Modeller& operator=(const Modeller&) = delete;
    void backtails(const RunProgram& program);
    void run(const RunProgram& program);
    // summarizeRuns: false when the analysis is a part merge() summarizes again.
    void finish(bool summarizeRuns = true);

  private:
    struct State;
    Analysis& a_;
    std::unique_ptr<State> state_;
};

// Totals, model error and median run error from the modules and transfers.
void summarize(Analysis& analysis);
// The modelled parts (devices' links, runs and transfers) as one analysis, in order, their ids
// renumbered.
Analysis merge(std::vector<Analysis>&& parts);
// merge() but for the transfers, which stay in their parts with the offsets their links,
// runs and ids take in the merged analysis (the shell): what storing needs, without moving
// millions of transfers into one vector first.
struct TransferPart {
    std::vector<Transfer> transfers;  // ids, links and runs as in their part
    uint32_t transferBase = 0, linkBase = 0, moduleBase = 0;
};
struct MergedParts {
    Analysis shell;  // all but the transfers (its runs name merged transfer ids)
    std::vector<TransferPart> transfers;
};
MergedParts mergeKeepingTransfers(std::vector<Analysis>&& parts);
// The merged analysis: the shell with the parts' transfers moved in, renumbered.
Analysis join(MergedParts&& merged);
// The shell's and the parts' transfers as encode() writes the merged analysis (equal bytes).
std::string encodeParts(const MergedParts& merged);
// An XProf profile's analysis as parts (deriveXprof merges them).
MergedParts deriveXprofParts(const trace::TraceStore& store);

Analysis deriveXprof(const trace::TraceStore& store);
// Slices deriveXprof reads: the XLA Ops, Async XLA Ops and XLA Modules lines when some op is
// named like an async one (else none of them), and the lines of xprofRuntimePlanes.
uint64_t xprofDerivationSlices(const trace::TraceStore& store);
// The XLA lines' part of it (where deriving costs most: their ops' transfers are modelled).
uint64_t xprofXlaSlices(const trace::TraceStore& store);
Analysis deriveKineto(const trace::TraceStore& store);
// The source of an XProf GPU plane's runtime copies before they join the XLA ones (merged as
// "xprof"): their in-flight intervals are measured on the link, as Kineto's.
constexpr const char* kXprofRuntimeSource = "xprof-runtime";
// XProf GPU planes without XLA Ops lines: runtime copies (CUPTI, ROCm) as Kineto's are read.
Analysis deriveXprofRuntime(const trace::TraceStore& store);
// The planes deriveXprofRuntime reads: those GPU planes and their hosts' host planes.
std::vector<const trace::TrackRow*> xprofRuntimePlanes(const trace::TraceStore& store);

}  // namespace stallscope::transfers::detail
