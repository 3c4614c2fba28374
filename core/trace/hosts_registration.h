#pragma once

// The analysis across the hosts of a run (hosts.h) as a registered analysis: derived on the
// first request (a shard import asks for it at once: it is what `merge` reads), stored as the
// hosts' summaries; the rest is recomputed from them when read (instant).

#include <optional>
#include <vector>

#include "core/analysis/analysis.h"
#include "core/trace/hosts.h"

namespace stallscope::trace {

class HostsAnalysisSpec : public analysis::Typed<HostsAnalysis> {
  public:
    std::string_view name() const override { return "hosts"; }
    int version() const override { return HostsAnalysis::kVersion; }
    std::string_view reads() const override;
    bool appliesTo(const TraceStore& store) const override;
    analysis::RunAt runAt(const TraceStore&) const override {
        return analysis::RunAt::FirstRequest;
    }
    HostsAnalysis compute(const TraceStore& store) const override;
    std::string encodeResult(const HostsAnalysis& result) const override;
    HostsAnalysis decodeResult(std::string_view payload) const override;
};
const HostsAnalysisSpec& hostsAnalysis();

HostsAnalysis loadOrAnalyzeHosts(Workspace& workspace, int64_t profileId);

// A merged run's host summaries are the profile's data (its timelines are in the shards):
// written by `merge` in the blobs stream kMergedHostsStream, read by the analysis.
constexpr const char* kMergedHostsStream = "trace.hosts";
void storeMergedHosts(Workspace& workspace, int64_t profileId,
                      const std::vector<HostSummary>& hosts);
std::optional<std::vector<HostSummary>> loadMergedHosts(const Workspace& workspace,
                                                        int64_t profileId);

}  // namespace stallscope::trace
