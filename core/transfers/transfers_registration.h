#pragma once

// Transfers as a registered analysis (core/analysis): derived at import (deriveAtImport's cost
// rule) or on the first request, stored in the "SSTX" encoding of transfers.h.

#include "core/analysis/analysis.h"
#include "core/transfers/transfers.h"

namespace stallscope::transfers {

class TransfersAnalysis : public analysis::Typed<Analysis> {
  public:
    std::string_view name() const override { return "transfers"; }
    int version() const override;
    std::string_view reads() const override;
    bool appliesTo(const trace::TraceStore& store) const override;
    analysis::RunAt runAt(const trace::TraceStore& store) const override;
    Analysis compute(const trace::TraceStore& store) const override {
        return transfers::derive(store);
    }
    std::string encodeResult(const Analysis& result) const override {
        return transfers::encode(result);
    }
    Analysis decodeResult(std::string_view payload) const override {
        return transfers::decode(payload);
    }
    analysis::Encoded deriveForStorage(const trace::TraceStore& store) const override;
    QJsonObject noteOfResult(const Analysis& result) const override;
    QJsonObject deferredNote(const trace::TraceStore& store) const override;
};
const TransfersAnalysis& transfersAnalysis();

// The stored analysis, or derived now (and stored when the workspace is writable).
Analysis ofProfile(Workspace& workspace, int64_t profileId);

}  // namespace stallscope::transfers
