// The critical path as JSON text, written directly: building it as QJsonObjects took 3.3 s and
// hundreds of MB for the 333,302 segments of a 10^6-slice trace (and 5 GB at 10^7). The same
// members a QJsonObject would have, keys in its (sorted) order.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/critical_path.h"
#include "core/json_escape.h"

namespace stallscope::graph {

namespace {

using json::appendString;

void appendMember(std::string& out, std::string_view key, bool& first) {
    if (!first) out += ',';
    first = false;
    appendString(out, key);
    out += ':';
}

}  // namespace

std::string criticalPathJsonText(const CriticalPath& p, int64_t profileId,
                                 std::string_view profileName) {
    std::string out;
    out.reserve(64 + 96 * [&] {
        size_t n = 0;
        for (const StepPath& s : p.steps) n += s.segments.size();
        return n;
    }());
    out += '{';
    bool first = true;
    appendMember(out, "by_kind", first);
    std::vector<std::pair<std::string_view, int64_t>> byKind;
    for (size_t k = 0; k < kPathKinds.size(); ++k) byKind.emplace_back(kPathKinds[k], p.byKind[k]);
    std::sort(byKind.begin(), byKind.end());
    out += '{';
    bool firstKind = true;
    for (const auto& [kind, ns] : byKind) {
        appendMember(out, kind, firstKind);
        out += std::to_string(ns);
    }
    out += '}';
    if (profileId >= 0) {
        appendMember(out, "id", first);
        out += std::to_string(profileId);
        appendMember(out, "name", first);
        appendString(out, profileName);
    }
    if (!p.note.empty()) {
        appendMember(out, "note", first);
        appendString(out, p.note);
    }
    appendMember(out, "savings", first);
    out += '[';
    for (size_t i = 0; i < p.savings.size(); ++i) {
        const StepSaving& s = p.savings[i];
        if (i) out += ',';
        bool f = true;
        out += '{';
        appendMember(out, "edit", f);
        appendString(out, s.edit);
        appendMember(out, "kind", f);
        appendString(out, s.kind);
        appendMember(out, "measured_ns", f);
        out += std::to_string(s.measured);
        appendMember(out, "predicted_ns", f);
        out += std::to_string(s.predicted);
        appendMember(out, "saving_ns", f);
        out += std::to_string(s.saving());
        out += '}';
    }
    out += ']';
    appendMember(out, "steps", first);
    out += '[';
    for (size_t i = 0; i < p.steps.size(); ++i) {
        const StepPath& s = p.steps[i];
        if (i) out += ',';
        bool f = true;
        out += '{';
        appendMember(out, "duration_ns", f);
        out += std::to_string(s.duration);
        appendMember(out, "host", f);
        out += std::to_string(s.host);
        appendMember(out, "name", f);
        appendString(out, s.name);
        appendMember(out, "segments", f);
        out += '[';
        for (size_t j = 0; j < s.segments.size(); ++j) {
            const PathSegment& seg = s.segments[j];
            if (j) out += ',';
            out += "{\"dur_ns\":" + std::to_string(seg.dur) +
                   ",\"host\":" + std::to_string(seg.host) + ",\"kind\":";
            appendString(out, seg.kind);
            out += ",\"name\":";
            appendString(out, seg.name);
            out += ",\"start_ns\":" + std::to_string(seg.start) +
                   ",\"track\":" + std::to_string(seg.track) + '}';
        }
        out += "]}";
    }
    out += ']';
    appendMember(out, "version", first);
    out += std::to_string(CriticalPath::kVersion);
    if (!p.why.empty()) {
        appendMember(out, "why", first);
        appendString(out, p.why);
    }
    out += '}';
    return out;
}

}  // namespace stallscope::graph
