#include "core/trace/hosts_registration.h"

#include <QJsonArray>
#include <QJsonDocument>

#include "core/analysis/cache.h"
#include "core/errors.h"
#include "core/sqlite.h"
#include "core/trace/trace_format.h"
#include "core/trace/trace_store.h"

namespace stallscope::trace {

namespace {

std::string packSummaries(const std::vector<HostSummary>& hosts) {
    QJsonArray list;
    for (const HostSummary& s : hosts) list.append(summaryToJson(s));
    const QByteArray json =
        QJsonDocument(QJsonObject{{"version", HostsAnalysis::kVersion}, {"hosts", list}})
            .toJson(QJsonDocument::Compact);
    std::string packed;
    packChunk(std::string_view(json.constData(), size_t(json.size())), packed);
    return packed;
}

std::vector<HostSummary> unpackSummaries(std::string_view packed) {
    const std::string raw = unpackChunk(packed);
    QJsonParseError error{};
    const QJsonObject o =
        QJsonDocument::fromJson(QByteArray(raw.data(), qsizetype(raw.size())), &error).object();
    if (error.error != QJsonParseError::NoError || !o.value("hosts").isArray())
        throw Failure("stored host summaries: not JSON");
    std::vector<HostSummary> out;
    for (const QJsonValue v : o.value("hosts").toArray())
        out.push_back(summaryFromJson(v.toObject()));
    return out;
}

}  // namespace

std::string_view HostsAnalysisSpec::reads() const {
    return "the run's hosts from the metadata, each host's steps (the step analysis within its "
           "host track) and per-op totals; a merged run: the summaries `merge` stored";
}

bool HostsAnalysisSpec::appliesTo(const TraceStore&) const {
    return true;  // a one-host profile is one host (a shard of one file)
}

HostsAnalysis HostsAnalysisSpec::compute(const TraceStore& store) const {
    if (isMergedProfile(store.metadata())) {
        auto merged = loadMergedHosts(store.workspace(), store.profileId());
        if (!merged)
            throw Failure("merged profile " + std::to_string(store.profileId()) +
                          " has no stored host summaries");
        return combineHosts(std::move(*merged));
    }
    return analyzeHosts(store);
}

std::string HostsAnalysisSpec::encodeResult(const HostsAnalysis& result) const {
    return packSummaries(result.hosts);
}

HostsAnalysis HostsAnalysisSpec::decodeResult(std::string_view payload) const {
    return combineHosts(unpackSummaries(payload));
}

const HostsAnalysisSpec& hostsAnalysis() {
    static const HostsAnalysisSpec instance;
    return instance;
}

HostsAnalysis loadOrAnalyzeHosts(Workspace& workspace, int64_t profileId) {
    return *analysis::get(workspace, profileId, hostsAnalysis());
}

void storeMergedHosts(Workspace& workspace, int64_t profileId,
                      const std::vector<HostSummary>& hosts) {
    const std::string packed = packSummaries(hosts);
    sql::Statement drop(workspace.db(), "DELETE FROM blobs WHERE profile_id = ? AND stream = ?");
    drop.bind(1, profileId).bind(2, std::string(kMergedHostsStream));
    drop.exec();
    workspace.appendBlob(profileId, kMergedHostsStream, 0, packed.data(), packed.size());
}

std::optional<std::vector<HostSummary>> loadMergedHosts(const Workspace& workspace,
                                                        int64_t profileId) {
    const std::vector<std::string> blobs = workspace.readBlobs(profileId, kMergedHostsStream);
    if (blobs.size() != 1) return std::nullopt;
    return unpackSummaries(blobs[0]);
}

}  // namespace stallscope::trace
