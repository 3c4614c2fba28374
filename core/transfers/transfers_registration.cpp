#include "core/transfers/transfers_registration.h"

#include "core/analysis/cache.h"
#include "core/trace/trace_store.h"

namespace stallscope::transfers {

namespace {

QJsonObject transferNote(size_t transfers, double modelErrorPct, int64_t stallNs, int64_t totalNs) {
    // What a one-line summary says of them, without decoding the stored analysis.
    return QJsonObject{{"transfers", qint64(transfers)},
                       {"model_error_pct", modelErrorPct},
                       {"stall_ns", qint64(stallNs)},
                       {"runs_ns", qint64(totalNs)}};
}

}  // namespace

int TransfersAnalysis::version() const {
    return kEncodingVersion;
}

std::string_view TransfersAnalysis::reads() const {
    return "XLA async op pairs and module runs (XLA Ops, Async XLA Ops, XLA Modules lines, "
           "HLO text of the plane), or runtime copy calls bound to device copies by correlation "
           "and the host's synchronize calls (Kineto, XProf GPU)";
}

bool TransfersAnalysis::appliesTo(const trace::TraceStore& store) const {
    return derivationSlices(store) > 0;
}

analysis::RunAt TransfersAnalysis::runAt(const trace::TraceStore& store) const {
    return deriveAtImport(store) ? analysis::RunAt::Import : analysis::RunAt::FirstRequest;
}

analysis::Encoded TransfersAnalysis::deriveForStorage(const trace::TraceStore& store) const {
    StoredDerivation derived = transfers::deriveForStorage(store);
    return {std::move(derived.bytes), transferNote(derived.transfers, derived.modelErrorPct,
                                                   derived.stallNs, derived.totalNs)};
}

QJsonObject TransfersAnalysis::noteOfResult(const Analysis& a) const {
    return transferNote(a.transfers.size(), a.modelErrorPct, a.stallNs, a.totalNs);
}

QJsonObject TransfersAnalysis::deferredNote(const trace::TraceStore& store) const {
    return QJsonObject{{"deferred", QString("%1 slices to read: derived on the first request")
                                        .arg(qint64(derivationSlices(store)))}};
}

const TransfersAnalysis& transfersAnalysis() {
    static const TransfersAnalysis instance;
    return instance;
}

Analysis ofProfile(Workspace& workspace, int64_t profileId) {
    return *analysis::get(workspace, profileId, transfersAnalysis());
}

}  // namespace stallscope::transfers
