#pragma once

// The kinds of profile a workspace holds and what each one can do, in one table. The command
// line (`info`, `compare`, the workspace summary) and the GUI ask this table instead of
// switching on the kind string; a new kind is one entry here (and one in
// views/common/view_kinds.cpp for its views).

#include <QJsonObject>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/workspace.h"

namespace stallscope {

// Kind names as stored in the profiles table and printed by `list` (CONTRACT §5).
namespace kinds {
inline constexpr std::string_view kReplay = "replay";
inline constexpr std::string_view kNoise = "noise";
inline constexpr std::string_view kCpi = "cpi";
inline constexpr std::string_view kEstimates = "estimates";
inline constexpr std::string_view kTrace = "trace";
}  // namespace kinds

// Options of `compare` (and `render compare`) that only some kinds take.
struct CompareOptions {
    // --op (trace): the op whose durations the CDFs show; empty: the largest total in A; "*": all.
    std::string cdfOp;
    // --align-op (replay): align B so this HLO op starts with A's.
    std::string alignOp;
};

struct ProfileKind {
    std::string_view name;
    // `info` keys of the kind (CONTRACT §5: tracks, slices, start, end, top_ops, ...), added to
    // the profile row's keys. SQL: call off the GUI thread.
    std::function<QJsonObject(const Workspace&, const ProfileInfo&)> info;
    // The workspace summary's text after "[id] name (kind)": what the kind's view shows first.
    std::function<std::string(const Workspace&, const ProfileInfo&)> summary;
    // Before (a) / after (b) deltas of two profiles of this kind; empty when the kind has none.
    std::function<QJsonObject(const Workspace&, const ProfileInfo& a, const ProfileInfo& b,
                              const CompareOptions&)>
        compare;
    // The `compare` options this kind takes ("--op", "--align-op").
    std::vector<std::string_view> compareOptions;

    bool compares() const { return static_cast<bool>(compare); }
};

// Every kind, in the order the workspace groups them: replay, noise, cpi, estimates, trace.
const std::vector<ProfileKind>& profileKinds();
// nullptr for a kind Stallscope does not know.
const ProfileKind* findProfileKind(std::string_view name);

// `compare A B`: checks that both are of one kind that compares and takes the given options, then
// compares them; "a" and "b" of the result carry each profile's id and name. Throws InputError
// with the command's messages ("compare profiles of the same kind", "--align-op applies to replay
// profiles, not cpi", "trace profiles have no before/after comparison").
QJsonObject compareProfiles(const Workspace& workspace, const ProfileInfo& a, const ProfileInfo& b,
                            const CompareOptions& options);

// A plain-text overview of every profile: the summary line of each kind.
std::string workspaceSummary(const Workspace& workspace);

}  // namespace stallscope
