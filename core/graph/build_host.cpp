// Host threads tiled into nodes: every nanosecond from a thread's first slice to its last is in
// one node, cut at runtime calls, input-pipeline spans and step markers; a node is the innermost
// of those over it (a call, else input, else host work).

#include <algorithm>
#include <functional>

#include "core/graph/build_internal.h"
#include "core/nearly_sorted.h"
#include "core/trace/steps/internal.h"

namespace stallscope::graph::build {

namespace {

// Runtime and driver calls by name (cudaLaunchKernel, cuLaunchKernel, hipMemcpyAsync, ...):
// the host ops that hold them (aten::item) are host work.
bool isRuntimeApi(std::string_view name) {
    return name.starts_with("cuda") || name.starts_with("hip") ||
           (name.size() > 2 && name.starts_with("cu") && name[2] >= 'A' && name[2] <= 'Z');
}

// Busy: a stretch of the thread covered by some op or call (the rest is idle: the thread waits).
// Copies the host waits for (cudaMemcpy, hipMemcpyWithStream, cuMemcpyDtoH_v2): they return
// after the device work before them and the copy itself.
bool isBlockingCopy(std::string_view name) {
    return isRuntimeApi(name) && name.find("Memcpy") != std::string_view::npos &&
           name.find("Async") == std::string_view::npos &&
           name.find("Peer") == std::string_view::npos;
}

enum class ItemType : uint8_t { Root, Marker, Busy, Input, Call };

struct Item {
    int64_t start, end;
    ItemType type;
    uint32_t name;
    uint32_t call;  // ItemType::Call: index into calls
};

// What an item makes of the time it covers (markers only cut; they take their parent's).
struct Label {
    NodeKind kind = NodeKind::Host;
    uint32_t name = kNone;
    uint32_t call = kNone;
    bool idle = true;  // under no op or call
};

// The stretches covered by `spans` (merged, sorted).
std::vector<std::pair<int64_t, int64_t>> merged(std::vector<std::pair<int64_t, int64_t>> spans) {
    sortNearlySorted(spans, std::less<>());  // they come by start, but for a few
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& [a, b] : spans) {
        if (!out.empty() && a <= out.back().second)
            out.back().second = std::max(out.back().second, b);
        else
            out.emplace_back(a, b);
    }
    return out;
}

}  // namespace

int64_t medianOf(std::vector<int64_t> v, int64_t fallback) {
    if (v.empty()) return fallback;
    const size_t mid = (v.size() + 1) / 2 - 1;
    std::nth_element(v.begin(), v.begin() + ptrdiff_t(mid), v.end());
    return v[mid];
}

void KinetoBuilder::classifyTracks() {
    for (const trace::TrackRow& t : store_.tracks()) {
        if (t.slices == 0 || t.kind == trace::TrackKind::Counter) continue;
        const std::string n = trace::steps::lower(t.name);
        bool device = n.starts_with("stream ") || n.starts_with("stream#");
        if (!device) {
            // Kineto traces without thread names: GPU activities carry stream and device.
            const std::vector<trace::SliceItem> first = trace::steps::firstChunk(store_, t.id);
            for (size_t i = 0, seen = 0; !device && i < first.size() && seen < 8; ++i) {
                if (first[i].args == 0) continue;
                ++seen;
                device =
                    args_.has(first[i].args, "stream") &&
                    (args_.has(first[i].args, "device") || args_.has(first[i].args, "context"));
            }
        }
        (device ? deviceTracks_ : hostTracks_).push_back(&t);
    }
}

// What a host slice's name makes it, decided once per name (a trace holds millions of slices
// and a few thousand names).
KinetoBuilder::NameRole KinetoBuilder::roleOf(uint32_t name) {
    if (name >= roles_.size()) roles_.resize(store_.textCount(), NameRole::Unknown);
    if (name >= roles_.size()) return NameRole::Other;
    NameRole& role = roles_[name];
    if (role != NameRole::Unknown) return role;
    const std::string& text = store_.text(name);
    const uint8_t cls = trace::steps::classifyHostName(text);
    if (text.starts_with("ProfilerStep#"))
        role = NameRole::Marker;
    else if (cls == trace::steps::kHostIgnored)
        role = NameRole::Ignored;
    else if (cls == uint8_t(trace::HostCategory::Input))
        role = NameRole::Input;
    else if ((cls == uint8_t(trace::HostCategory::Runtime) ||
              cls == uint8_t(trace::HostCategory::Sync)) &&
             isRuntimeApi(text))
        role = cls == uint8_t(trace::HostCategory::Sync) || isBlockingCopy(text)
                   ? NameRole::SyncCall
                   : NameRole::Call;
    else
        role = NameRole::Other;
    return role;
}

void KinetoBuilder::markIdle(uint32_t node) {
    // Grown by doubling: by a fixed step, a lane of millions of nodes copied the bits each time.
    if (node >= idle_.size()) idle_.resize(std::max<size_t>(node + 1024, 2 * idle_.size()), false);
    idle_[node] = true;
}

void KinetoBuilder::tileHostLane(const trace::TrackRow& track) {
    std::vector<Item> items;
    int64_t first = INT64_MAX, last = INT64_MIN;
    bool useful = false;
    const uint32_t lane = uint32_t(g_.lanes.size());
    std::vector<std::pair<int64_t, int64_t>> spans;
    std::vector<std::pair<int64_t, uint32_t>>& callEnds = callsByEnd_[track.id];
    // At most a slice each and a busy stretch each (and the root); calls at most a slice each.
    const size_t most = mostSlicesOf(track);
    items.reserve(2 * most + 1);
    spans.reserve(most);
    callEnds.reserve(most);
    if (calls_.capacity() < calls_.size() + most)  // doubling at least: many lanes add up
        calls_.reserve(std::max(calls_.size() + most, 2 * calls_.capacity()));
    readTrack(track.id, [&](const std::vector<trace::SliceItem>& chunk) {
        for (const trace::SliceItem& s : chunk) {
            if (s.kind != trace::ItemKind::Slice || s.unended) continue;
            const int64_t end = s.preciseEnd().ns;
            first = std::min(first, s.start);
            last = std::max(last, end);
            const NameRole role = roleOf(s.name);
            if (role == NameRole::Marker) {
                items.push_back({s.start, end, ItemType::Marker, s.name, kNone});
                markers_.push_back({s.start, end, s.name, lane});
                useful = true;
                continue;
            }
            if (role != NameRole::Ignored && end > s.start) spans.emplace_back(s.start, end);
            if (role == NameRole::Input) {
                items.push_back({s.start, end, ItemType::Input, s.name, kNone});
            } else if (role == NameRole::Call || role == NameRole::SyncCall) {
                items.push_back({s.start, end, ItemType::Call, s.name, uint32_t(calls_.size())});
                calls_.push_back({s.start, end, s.args, kNone, kNone, role == NameRole::SyncCall});
                callEnds.emplace_back(end, uint32_t(calls_.size() - 1));
                useful = true;
            }
        }
    });
    sortNearlySorted(callEnds, std::less<>());  // by start, all but calls nested in calls
    if (!useful) {
        // Nothing of this thread matters to the device: its calls (none) are forgotten.
        markers_.erase(std::remove_if(markers_.begin(), markers_.end(),
                                      [lane](const Marker& m) { return m.lane == lane; }),
                       markers_.end());
        return;
    }
    items.push_back({first, last, ItemType::Root, kNone, kNone});
    for (const auto& [a, b] : merged(std::move(spans)))
        items.push_back({a, b, ItemType::Busy, kNone, kNone});
    // Outer before inner: by start, longer first, then root, marker, input, call.
    // (They come so but for the root and busy stretches added last, and a few.)
    sortNearlySorted(items, [](const Item& a, const Item& b) {
        if (a.start != b.start) return a.start < b.start;
        if (a.end != b.end) return a.end > b.end;
        return uint8_t(a.type) < uint8_t(b.type);
    });
    g_.lanes.push_back({track.id, hostOf(track.id), false, track.name});
    std::vector<std::pair<int64_t, Label>> stack;  // (end, label)
    int64_t t = first;
    // Where the thread came from: nothing yet, unless another thread handed it its first work
    // (linkHandoffs).
    markIdle(uint32_t(g_.nodes.size()));
    g_.nodes.push_back({.start = first, .end = first, .lane = lane});
    auto place = [&](int64_t until, const Label& label) {
        if (until < t || (until == t && label.call == kNone)) return;
        Node node;
        node.start = t;
        node.end = until;
        node.own = until - t;
        node.lane = lane;
        node.kind = label.kind;
        node.name = label.name;
        const uint32_t index = uint32_t(g_.nodes.size());
        if (label.idle) markIdle(index);
        if (label.call != kNone) {
            Call& call = calls_[label.call];
            if (call.firstNode == kNone) call.firstNode = index;
            call.lastNode = index;
        }
        g_.nodes.push_back(node);
        t = until;
    };
    for (const Item& item : items) {
        while (!stack.empty() && stack.back().first <= item.start) {
            place(stack.back().first, stack.back().second);
            stack.pop_back();
        }
        if (!stack.empty()) place(item.start, stack.back().second);
        Label label = stack.empty() ? Label{} : stack.back().second;
        // A step marker is top-level: what it holds is idle until an op says otherwise (a
        // previous op's end rounded a nanosecond past the marker's start must not make it busy).
        if (item.type == ItemType::Marker)
            label = Label{};
        else if (item.type == ItemType::Busy)
            label.idle = false;
        else if (item.type == ItemType::Input && label.call == kNone)
            label = {NodeKind::Input, item.name, kNone, false};
        else if (item.type == ItemType::Call)
            label = {calls_[item.call].sync ? NodeKind::Sync : NodeKind::Runtime, item.name,
                     item.call, false};
        // A zero-length call is still a node: it may launch or wait.
        if (item.type == ItemType::Call && item.end == item.start) {
            place(item.start, label);
            continue;
        }
        stack.emplace_back(item.end, label);
    }
    while (!stack.empty()) {
        place(stack.back().first, stack.back().second);
        stack.pop_back();
    }
}

}  // namespace stallscope::graph::build
