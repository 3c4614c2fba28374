#pragma once

// Results of the registered analyses, stored with their profile (table `analyses`: profile,
// name, version, payload in rows of at most kRowBytes). This is the only code that writes them.
//
// What obtain() does with what is stored:
//   none, or an older version    derive; store when the workspace is writable
//   this version                 decode (a payload that does not decode is derived again)
//   a newer version              decode and use it read-only; when it does not decode, derive
//                                in memory and leave the stored one alone; either way the
//                                notice says so, once per process and profile
// Call off the GUI thread: deriving reads the whole profile.

#include <QJsonObject>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/analysis/analysis.h"
#include "core/workspace.h"

namespace stallscope::trace {
class TraceStore;
}

namespace stallscope::analysis {

struct StoredPayload {
    int version = 0;
    std::string payload;
};
std::optional<StoredPayload> readStored(const Workspace& workspace, int64_t profileId,
                                        std::string_view name);
// Replaces what is stored under the name. Inside the caller's transaction when one is open.
void writeStored(Workspace& workspace, int64_t profileId, std::string_view name, int version,
                 std::string_view payload);
constexpr size_t kRowBytes = size_t(64) << 20;

enum class Origin { Stored, Derived, StoredByNewer, DerivedBesideNewer };

struct Obtained {
    Result result;
    Origin origin = Origin::Derived;
    // For the user, the first time in this process a profile's result is of a newer version.
    std::string notice;
};
Obtained obtain(Workspace& workspace, int64_t profileId, const Definition& analysis);

// The typed result of an analysis (A derives from Typed<T>); the notice as obtain() gives it.
template <class A>
std::shared_ptr<const typename A::ResultType> get(Workspace& workspace, int64_t profileId,
                                                  const A& analysis,
                                                  std::string* notice = nullptr) {
    Obtained got = obtain(workspace, profileId, analysis);
    if (notice) *notice = std::move(got.notice);
    return A::cast(got.result);
}

// What is stored and decodes (of this version or a newer one), without deriving anything.
Result stored(const Workspace& workspace, int64_t profileId, const Definition& analysis);
// What is stored, else derived now and not stored (renders and comparisons on a workspace
// they only read).
Result storedOrDerived(const Workspace& workspace, int64_t profileId, const Definition& analysis);
template <class A>
std::shared_ptr<const typename A::ResultType> read(const Workspace& workspace, int64_t profileId,
                                                   const A& analysis) {
    return A::cast(storedOrDerived(workspace, profileId, analysis));
}

// The import: every registered analysis that applies to the profile and runs at import,
// derived and stored. Returns each one's note by name ({"transfers": {...}}), with
// "deferred" notes for those left to the first request.
QJsonObject deriveAtImport(Workspace& workspace, int64_t profileId, const trace::TraceStore& store);

}  // namespace stallscope::analysis
