#pragma once

// Asynchronous transfers derived from trace profiles (XProf XSpace, PyTorch/Kineto), under the
// DMA model replays use (DOMAIN §1): each transfer is issued, becomes ready after its link's
// base latency, waits its turn on the link (FIFO), transfers at the link's bandwidth and
// completes; whoever waits for it stalls for the base-latency and transfer parts still ahead.
//
// Where a trace measures something it is used as measured: issue (the start op), wait (the
// done op or sync call), and completion whenever the wait blocked (the wait ended when the data
// arrived). The link model (base latency and bandwidth per link, fitted from those completions)
// fills in what the trace cannot tell (when a transfer that nobody waited for finished) and
// re-simulates a module run for what-ifs: the unmodified run first, whose error against the
// measured run time says how far the model can be trusted, then each suggested edit.
//
// Everything here is plain data: derive once (at import), store with the profile (the
// registered analysis "transfers", transfers_registration.h), read back in a worker, draw or
// print.
#include <QJsonObject>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope {
class Workspace;
namespace trace {
class TraceStore;
}
}  // namespace stallscope

namespace stallscope::transfers {

// A wait shorter than this did not block: the data was there (XLA's copy-done that finds its
// copy complete takes a few ns; a CUDA sync with nothing pending a few µs at most of its own).
constexpr int64_t kBlockedWaitNs = 1000;

// A memory-to-memory path transfers queue on: memory spaces for copies (XLA's S(n): "S(5)->S(0)";
// CUDA's "HtoD"), the collective and its group for collectives.
struct Link {
    std::string name;
    std::string device;  // the plane ("/device:TPU:0") or GPU ("GPU 0")
    std::string source, destination;
    double peakBytesPerNs = 0;  // = GB/s; 0 when the profile states no peak for this path
    std::string peakSource;     // where the peak comes from (a plane stat, a device property)
    // Fitted link model: FIFO at bytesPerNs after baseLatencyNs from each issue.
    double bytesPerNs = 0;
    int64_t baseLatencyNs = 0;
    uint32_t fitObservations = 0;      // completions the fit used
    bool bandwidthLowerBound = false;  // no wait ever blocked on it: only a lower bound
    uint64_t transfers = 0, bytes = 0;
    int64_t busyNs = 0;  // time the link was transferring (union over transfers)
    // What the link achieved while busy, and that against its peak (0 when no peak is known).
    double achievedBytesPerNs() const { return busyNs > 0 ? double(bytes) / double(busyNs) : 0; }
    double peakFraction() const {
        return peakBytesPerNs > 0 ? achievedBytesPerNs() / peakBytesPerNs : 0;
    }
};

// How the earliest legal issue time of a transfer is known.
enum class Backtail : uint8_t {
    ModuleStart,   // its source is a parameter: available when the module starts
    Producer,      // its source is an op's output: after that op ends
    PreviousSync,  // PyTorch without the writer in the trace: the previous sync on the stream
    Unknown,       // the producer is not in the trace: the issue cannot be moved
};
const char* backtailName(Backtail kind);

// Text that millions of transfers repeat ("copy-start.2", "f32"): one process-wide copy of
// each distinct text, held by pointer (8 bytes; a std::string is 32), equal texts at the same
// address. Immutable. (A 1 GB XSpace has 3M transfers of six names each: as strings they made
// most of a transfer's 392 bytes, and of the memory a derivation faults in and copies.)
class Name {
  public:
    Name() : text_(&emptyText()) {}
    Name(std::string_view text);
    Name(const std::string& text) : Name(std::string_view(text)) {}
    Name(const char* text) : Name(std::string_view(text)) {}
    const std::string& str() const { return *text_; }
    operator const std::string&() const { return *text_; }
    bool empty() const { return text_->empty(); }
    size_t size() const { return text_->size(); }
    const char* c_str() const { return text_->c_str(); }
    bool starts_with(std::string_view prefix) const { return text_->starts_with(prefix); }
    // The text's address: the same for equal texts (hash and compare by it).
    const std::string* key() const { return text_; }
    friend bool operator==(const Name& a, const Name& b) { return a.text_ == b.text_; }
    friend bool operator==(const Name& a, const std::string& b) { return *a.text_ == b; }
    friend bool operator==(const Name& a, const char* b) { return *a.text_ == b; }
    friend bool operator==(const Name& a, std::string_view b) { return *a.text_ == b; }

  private:
    static const std::string& emptyText();
    const std::string* text_;
};

// One transfer and its lifetime. Times are ns on the profile's clock.
struct Transfer {
    uint32_t id = 0;      // index in Analysis::transfers
    Name name;            // the issuing op ("copy-start.2") or runtime call
    Name waitName;        // the op or call that waited for it ("copy-done.2")
    Name opcode;          // "copy-start", "all-gather-start", "send", "cudaMemcpyAsync", ...
    Name elementType;     // of the data ("f32"), empty when unknown
    uint32_t link = 0;    // index in Analysis::links
    uint32_t module = 0;  // index in Analysis::modules
    uint64_t bytes = 0;
    int32_t issueStep = -1, waitStep = -1;  // positions in the module run's op sequence
    // Measured.
    int64_t issue = 0, wait = 0, waitEnd = 0;
    bool blocked = false;  // the wait lasted kBlockedWaitNs or more
    bool waited = true;    // false: nothing in the run waited for it (counted in unmatched)
    // Model (complete is measured when the wait blocked; else the link model's estimate,
    // never after the wait).
    int64_t ready = 0;          // issue + the link's base latency
    int64_t transferStart = 0;  // when it got the link
    int64_t complete = 0;
    bool completeMeasured = false;
    // The wait's stall split (DOMAIN §1): before `ready`, and after it; queueing is the part of
    // ready -> transferStart spent behind earlier transfers on the link; slack when it waited
    // for nothing (the wait could come earlier by that much).
    int64_t baseStall = 0, transferStall = 0, queueNs = 0, slack = 0;
    int64_t stall() const { return baseStall + transferStall; }
    // How early it could go.
    Name sourceOperand;  // what it reads ("param.1", "broadcast_add_fusion.2")
    Backtail backtailKind = Backtail::Unknown;
    Name backtailOp;  // the producer op, when there is one
    int32_t backtailStep = -1;
    int64_t backtail = 0;  // earliest legal issue (== issue when it cannot move)
    // Where the views find it (trace track ids, -1 when absent).
    int64_t issueTrack = -1, waitTrack = -1, inFlightTrack = -1;
    int64_t inFlightStart = 0, inFlightEnd = 0;  // the Async XLA Ops / GPU memcpy interval
};

// One execution of a module (an XLA program run; for PyTorch a host thread's span of transfers).
struct ModuleRun {
    std::string name;
    std::string device;
    int64_t track = -1;  // where the run is drawn (XLA Modules line, host thread)
    int64_t start = 0, end = 0;
    std::vector<uint32_t> transfers;
    int64_t stallNs = 0, baseStallNs = 0, transferStallNs = 0;
    int64_t computeNs = 0;  // ops that are neither issue nor wait
    // The unmodified run re-simulated with the link model: its length and the error against
    // the measured one.
    int64_t simulatedNs = 0;
    int64_t measuredNs() const { return end - start; }
    double errorPct() const {
        return measuredNs() > 0 ? 100.0 * double(simulatedNs - measuredNs()) / double(measuredNs())
                                : 0;
    }
};

// An edit with the saving the re-simulation predicts, summed over the runs of one program.
struct Suggestion {
    std::string kind;                 // "hoist", "reorder", "overlap", "transfer-bound"
    std::string program;              // the module's name
    std::vector<uint32_t> transfers;  // in the run the evidence quotes (the program's first)
    std::string toOp;            // hoist: the op the issue moves after ("" = the module's start)
    uint32_t runs = 0;           // runs of the program the edit applies to
    int64_t savingNs = 0;        // over those runs, re-simulated: simulated before - after
    int64_t savingPerRunNs = 0;  // savingNs / runs
    QJsonObject evidence;
    std::string text;
};

struct Analysis {
    std::string source;  // "xprof", "kineto"; empty when the profile has no transfers to read
    std::vector<Link> links;
    std::vector<ModuleRun> modules;
    std::vector<Transfer> transfers;
    std::vector<Suggestion> suggestions;  // best saving first
    // Pieces that did not make a transfer, by what was missing ("done_without_start", ...).
    std::map<std::string, uint64_t> unmatched;
    // Totals over module runs with transfers.
    int64_t totalNs = 0, stallNs = 0, baseStallNs = 0, transferStallNs = 0;
    // |sum simulated - sum measured| / sum measured over those runs, in %, and the median of
    // the per-run errors' magnitude.
    double modelErrorPct = 0, medianRunErrorPct = 0;
    // Why the trace has no transfers, when that is known ("no durations: ..."); else empty.
    std::string note;
};

// ---- Derivation input: a module run as a sequence of ops (not stored) ----

enum class Role : uint8_t { Compute, Issue, Wait };

// Names are views into storage that outlives model() (the trace store's strings, parsed HLO):
// a run's ops are many, and copying their names cost more than the model.
struct Step {
    Role role = Role::Compute;
    int64_t start = 0, end = 0;       // measured
    std::vector<uint32_t> transfers;  // Issue: the one it issues; Wait: those it waits for
    std::string_view name;
    std::span<const std::string_view> operands;  // HLO operand names, when known (dependencies)
    // A wait that also waits for work other than transfers (a CUDA sync waits for kernels):
    // it cannot end before this time however early its transfers complete.
    int64_t otherWorkEnd = INT64_MIN;
    // A wait's own latency after its transfers complete (a CUDA sync returns a few µs after
    // the GPU is done): it ends that long after them, however early they complete.
    int64_t returnNs = 0;
};

struct RunProgram {
    uint32_t module = 0;
    std::vector<Step> steps;  // in start order
};

// An edit to re-simulate: the steps in a new order (indices into RunProgram::steps) and a
// factor on each transfer's bytes (empty: unchanged).
struct SimEdit {
    std::vector<uint32_t> order;
    std::map<uint32_t, double> bytesScale;
};

// Completes `analysis` (whose links, modules and transfers hold the measured values) from the
// run programs: fits each link, computes every transfer's lifetime, backtails, the validation
// re-simulation and the suggestions.
void model(Analysis& analysis, const std::vector<RunProgram>& programs);

// Length of one run re-simulated with the fitted links (edit: none when order is empty).
int64_t simulate(const Analysis& analysis, const RunProgram& program, const SimEdit& edit = {});

// Slices derive() reads: an XProf profile's XLA Ops, Async XLA Ops and XLA Modules lines (when
// some op is named like an async one) and, for GPU planes without them, the runtime copies'
// host threads and streams; every slice of a Chrome/Kineto one; 0 for other formats. Known
// from the track list alone.
uint64_t derivationSlices(const trace::TraceStore& store);
// Whether an import derives the transfers (else the first request does, through ofProfile, as
// for profiles imported before transfers were derived). Kineto: always (+2-5 % on a 1 GB
// trace). XProf: when it reads at most kDeriveAtImportMaxSlices (a fraction of a second), or
// when its XLA lines are at most half of the profile's slices. Deriving costs about 1 µs a
// transfer and 0.03 µs a slice read; importing, 0.4-0.55 µs a slice: a real TPU profile (a
// quarter of its slices on XLA lines, one transfer in 11 slices) scaled to 1 GB imports in
// 18.5 s and derives in 3.3 s (+17-18 %); a generated one of nothing but XLA ops with
// transfers, 11 s and 3 s (+27 %): deferred, it imports as fast as ever.
constexpr uint64_t kDeriveAtImportMaxSlices = 1500000;
bool deriveAtImport(const trace::TraceStore& store, uint64_t maxSlices = kDeriveAtImportMaxSlices);

// Derives the transfers of a trace profile (XProf or Kineto, told by its tracks); an empty
// source when it has none. Reads level-0 slices and the args of the ops it needs.
Analysis derive(const trace::TraceStore& store);

// ---- JSON (CONTRACT §5 `dma` and `suggest` keys, times in ns) ----
QJsonObject dmaJson(const Analysis& analysis);
// The same document as QJsonDocument(dmaJson()).toJson() prints, written a transfer at a time:
// millions of transfers as one QJsonDocument took minutes and 11 GB.
void writeDmaJson(const Analysis& analysis, std::ostream& out);
QJsonObject suggestJson(const Analysis& analysis);
// The program a module run belongs to, the same in two profiles of it (before/after of two
// profiles: core/compare/transfer_compare.h).
std::string programOf(const std::string& runName);

// ---- Stored form ----
// "SSTX", the encoding version, then zstd frames of varint-packed records.
constexpr int kEncodingVersion = 4;
std::string encode(const Analysis& analysis);
Analysis decode(std::string_view bytes);  // throws Failure on a foreign or newer format
// What an import stores: derive() and encode() at once (the same bytes as encode(derive())),
// an XProf profile's devices encoded as merged without merging them first, and the figures
// the import notes.
struct StoredDerivation {
    std::string bytes;
    size_t transfers = 0;
    double modelErrorPct = 0;
    int64_t stallNs = 0, totalNs = 0;
};
StoredDerivation deriveForStorage(const trace::TraceStore& store);

}  // namespace stallscope::transfers
