// The critical path as stored in the analysis cache: a compressed binary form. It was JSON,
// read back through QJsonDocument: 12.5 s and 2 GB for the 3.3 M segments of a 10^7-slice trace,
// as long as deriving the path.
//
// Layout (varints; signed values zigzag): the strings, each once (count, then length + bytes);
// why and note (string indices); by_kind; the steps (count; per step: name, host, duration,
// segment count; per segment: kind, name, start after the previous segment's end, duration,
// track, host); the savings (count; kind, edit, measured, predicted).

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/byte_codec.h"
#include "core/errors.h"
#include "core/graph/critical_path.h"
#include "core/trace/trace_format.h"

namespace stallscope::graph {

namespace {

// Each distinct string once, by index in first-use order.
class StringTable {
  public:
    uint64_t indexOf(std::string_view s) {
        const auto [it, fresh] = index_.try_emplace(s, strings_.size());
        if (fresh) strings_.push_back(s);
        return it->second;
    }
    void writeTo(ByteWriter& out) const {
        out.varint(strings_.size());
        for (const std::string_view s : strings_) {
            out.varint(s.size());
            out.bytesAppend(s);
        }
    }

  private:
    std::unordered_map<std::string_view, uint64_t> index_;
    std::vector<std::string_view> strings_;
};

class StringsRead {
  public:
    explicit StringsRead(ByteReader& in) {
        const uint64_t count = in.varint();
        if (count > in.remaining()) throw Failure("stored critical path: malformed string table");
        strings_.reserve(size_t(count));
        for (uint64_t i = 0; i < count; ++i) strings_.emplace_back(in.take(in.varint()));
    }
    const std::string& at(uint64_t index) const {
        if (index >= strings_.size()) throw Failure("stored critical path: string out of range");
        return strings_[size_t(index)];
    }

  private:
    std::vector<std::string> strings_;
};

}  // namespace

std::string encodeCriticalPath(const CriticalPath& p) {
    StringTable strings;
    ByteWriter body;
    body.varint(strings.indexOf(p.why));
    body.varint(strings.indexOf(p.note));
    for (const int64_t ns : p.byKind) body.zigzag(ns);
    body.varint(p.steps.size());
    for (const StepPath& step : p.steps) {
        body.varint(strings.indexOf(step.name));
        body.zigzag(step.host);
        body.zigzag(step.duration);
        body.varint(step.segments.size());
        int64_t previousEnd = 0;
        for (const PathSegment& seg : step.segments) {
            body.varint(strings.indexOf(seg.kind));
            body.varint(strings.indexOf(seg.name));
            body.zigzag(seg.start - previousEnd);
            body.zigzag(seg.dur);
            body.zigzag(seg.track);
            body.zigzag(seg.host);
            previousEnd = seg.start + seg.dur;
        }
    }
    body.varint(p.savings.size());
    for (const StepSaving& s : p.savings) {
        body.varint(strings.indexOf(s.kind));
        body.varint(strings.indexOf(s.edit));
        body.zigzag(s.measured);
        body.zigzag(s.predicted);
    }
    ByteWriter whole;
    strings.writeTo(whole);
    whole.bytesAppend(body.bytes());
    std::string packed;
    trace::packChunk(whole.bytes(), packed);
    return packed;
}

CriticalPath decodeCriticalPath(std::string_view payload) {
    const std::string raw = trace::unpackChunk(payload);
    ByteReader in(raw);
    const StringsRead strings(in);
    CriticalPath p;
    p.why = strings.at(in.varint());
    p.note = strings.at(in.varint());
    for (int64_t& ns : p.byKind) ns = in.zigzag();
    const uint64_t steps = in.varint();
    if (steps > in.remaining()) throw Failure("stored critical path: malformed");
    p.steps.reserve(size_t(steps));
    for (uint64_t i = 0; i < steps; ++i) {
        StepPath& step = p.steps.emplace_back();
        step.name = strings.at(in.varint());
        step.host = int(in.zigzag());
        step.duration = in.zigzag();
        const uint64_t segments = in.varint();
        if (segments > in.remaining()) throw Failure("stored critical path: malformed");
        step.segments.reserve(size_t(segments));
        int64_t previousEnd = 0;
        for (uint64_t k = 0; k < segments; ++k) {
            PathSegment& seg = step.segments.emplace_back();
            seg.kind = strings.at(in.varint());
            seg.name = strings.at(in.varint());
            // Wrapping arithmetic: a corrupt payload must not overflow a signed sum.
            seg.start = int64_t(uint64_t(previousEnd) + uint64_t(in.zigzag()));
            seg.dur = in.zigzag();
            seg.track = in.zigzag();
            seg.host = int(in.zigzag());
            previousEnd = int64_t(uint64_t(seg.start) + uint64_t(seg.dur));
        }
    }
    const uint64_t savings = in.varint();
    if (savings > in.remaining()) throw Failure("stored critical path: malformed");
    for (uint64_t i = 0; i < savings; ++i) {
        StepSaving& s = p.savings.emplace_back();
        s.kind = strings.at(in.varint());
        s.edit = strings.at(in.varint());
        s.measured = in.zigzag();
        s.predicted = in.zigzag();
    }
    if (!in.atEnd()) throw Failure("stored critical path: trailing bytes");
    return p;
}

}  // namespace stallscope::graph
