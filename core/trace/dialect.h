#pragma once

// What a trace profile is and what evidence it carries, as its importer recorded it (metadata
// "dialect" and "evidence"). Analyses ask for evidence here, never for an importer's name: a
// new format whose importer records the evidence an analysis needs gets that analysis.

#include <QJsonObject>
#include <cstdint>
#include <string_view>

namespace stallscope::trace {

class TraceStore;

enum class Dialect {
    Kineto,  // PyTorch profiler (Kineto) Chrome JSON: host ops, runtime calls, GPU streams
    Xla,     // XProf XSpace: device planes of XLA op lines, host threads
    Chakra,  // Chakra execution traces: one track of dependent nodes per rank
    Chrome,  // other Chrome Trace Event JSON (catapult, Perfetto exports, Bazel, ...)
    Unknown,
};
std::string_view dialectName(Dialect dialect);  // "kineto", "xla", "chakra", "chrome", ""
Dialect dialectFromName(std::string_view name);

// Evidence flags; a trace carries a set of them.
enum class Evidence : uint32_t {
    // Processes and threads as Chrome JSON lays them out: host threads, device streams named
    // or marked by stream/device args; runtime calls bound to device work by flows or
    // correlation ids (Kineto).
    ChromeThreads = 1u << 0,
    // Device planes with XLA op lines ("XLA Ops", "Async XLA Ops", "XLA Modules", "Steps").
    XlaOpLines = 1u << 1,
    // Every track a device of typed nodes with dependencies (node type in the args' "type").
    NodeGraph = 1u << 2,
    // Slices carry measured durations (a Chakra trace may state only sizes and op counts).
    Durations = 1u << 3,
};

class EvidenceSet {
  public:
    EvidenceSet() = default;
    explicit EvidenceSet(uint32_t bits) : bits_(bits) {}
    bool has(Evidence e) const { return (bits_ & uint32_t(e)) != 0; }
    EvidenceSet& add(Evidence e) {
        bits_ |= uint32_t(e);
        return *this;
    }
    EvidenceSet& remove(Evidence e) {
        bits_ &= ~uint32_t(e);
        return *this;
    }
    uint32_t bits() const { return bits_; }
    bool operator==(const EvidenceSet&) const = default;

  private:
    uint32_t bits_ = 0;
};
std::string_view evidenceName(Evidence e);  // "chrome_threads", "xla_op_lines", ...

// What a dialect carries unless its importer says otherwise.
EvidenceSet defaultEvidence(Dialect dialect);

// Recorded by importers into the profile's metadata.
void recordDialect(QJsonObject& metadata, Dialect dialect, EvidenceSet evidence);

// The profile's dialect and evidence. Profiles imported before importers recorded them are
// told by the format their importer noted (the one place that reads it).
Dialect dialectOf(const QJsonObject& metadata);
EvidenceSet evidenceOf(const QJsonObject& metadata);
Dialect dialectOf(const TraceStore& store);
EvidenceSet evidenceOf(const TraceStore& store);

}  // namespace stallscope::trace
