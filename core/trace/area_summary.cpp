#include "core/trace/area_summary.h"

#include <algorithm>
#include <unordered_map>

namespace stallscope::trace {

namespace {

struct Sums {
    uint64_t count = 0;
    double total = 0, inRange = 0, self = 0;
};

// One window [from, to] of a track's slices (sorted by start, then depth, as TraceStore::slices
// returns them) added to `byName`. A slice's parent is the last slice one row up that still
// covers its start. Time in the window is additive over windows; a slice is counted (count,
// total) only in the window it starts in (the first window also owns those starting before it,
// the last its end point).
uint64_t addWindow(const std::vector<SliceItem>& items, double from, double to, bool first,
                   bool last, std::unordered_map<uint32_t, Sums>& byName) {
    std::vector<double> clipped(items.size(), 0.0), children(items.size(), 0.0);
    std::vector<long> lastAtDepth;
    std::vector<bool> counted(items.size(), false);
    uint64_t slices = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        const SliceItem& s = items[i];
        if (s.kind != ItemKind::Slice) continue;
        const double start = double(s.start) + s.startPs * 1e-3;
        const double end = start + s.durNs();
        const bool inside = end > from && start < to;
        const bool pointInside =
            s.dur == 0 && s.durPs == 0 && start >= from && (start < to || (last && start == to));
        if (!inside && !pointInside) continue;
        counted[i] = true;
        clipped[i] = std::max(0.0, std::min(end, to) - std::max(start, from));
        if (s.depth >= lastAtDepth.size()) lastAtDepth.resize(s.depth + 1, -1);
        lastAtDepth[s.depth] = long(i);
        if (s.depth > 0) {
            const long parent = lastAtDepth[s.depth - 1];
            if (parent >= 0) {
                const SliceItem& p = items[size_t(parent)];
                const double parentEnd = double(p.start) + p.startPs * 1e-3 + p.durNs();
                if (parentEnd >= start) children[size_t(parent)] += clipped[i];
            }
        }
    }
    for (size_t i = 0; i < items.size(); ++i) {
        if (!counted[i]) continue;
        Sums& sums = byName[items[i].name];
        sums.inRange += clipped[i];
        sums.self += std::max(0.0, clipped[i] - children[i]);
        const double start = double(items[i].start) + items[i].startPs * 1e-3;
        if ((start >= from || first) && (start < to || last)) {
            ++sums.count;
            sums.total += items[i].durNs();
            ++slices;
        }
    }
    return slices;
}

}  // namespace

AreaSummary summarizeArea(const TraceStore& store, const std::vector<int64_t>& tracks, int64_t from,
                          int64_t to, const std::atomic<bool>* cancelled, uint64_t windowSlices) {
    AreaSummary summary;
    std::unordered_map<uint32_t, Sums> byName;
    for (const int64_t track : tracks) {
        if (cancelled && cancelled->load()) break;
        const TrackRow* row = store.track(track);
        if (!row || row->slices == 0) continue;
        // Windows of about `windowSlices` slices each (by the track's average density): a whole
        // process of 10^7 slices is read a bounded piece at a time, not gathered and sorted.
        const int64_t windows = std::clamp<int64_t>(
            int64_t(row->slices / std::max<uint64_t>(windowSlices, 1)) + 1, 1, to - from + 1);
        const int64_t step = (to - from + windows - 1) / windows;
        uint64_t n = 0;
        for (int64_t w = 0; w < windows && !(cancelled && cancelled->load()); ++w) {
            const int64_t a = from + w * step, b = std::min(to, a + step);
            if (a > b) break;
            const bool last = b == to;
            n += addWindow(store.slices(track, a, b, 0.0), double(a), double(b), w == 0, last,
                           byName);
            if (last) break;
        }
        summary.slices += n;
        summary.tracks += n > 0;
    }
    for (const auto& [name, sums] : byName) {
        summary.ops.push_back({store.text(name), sums.count, sums.total, sums.inRange, sums.self});
        summary.busy += sums.self;
    }
    std::sort(summary.ops.begin(), summary.ops.end(), [](const AreaOp& a, const AreaOp& b) {
        return a.self != b.self ? a.self > b.self : a.name < b.name;
    });
    return summary;
}

}  // namespace stallscope::trace
