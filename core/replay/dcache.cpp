#include "core/replay/dcache.h"

#include <algorithm>
#include <queue>

namespace stallscope::replay {

namespace {

// Segment tree over pages with range cover counts: the used page count and the longest run of
// uncovered pages, the classic "union of intervals" tree (covers are never pushed down).
class FreeRunTree {
  public:
    explicit FreeRunTree(uint32_t pages) : pages_(pages) {
        size_t size = 1;
        while (size < pages) size <<= 1;
        nodes_.resize(2 * size);
        build(1, 0, pages);
    }
    void add(uint32_t begin, uint32_t end, int delta) {
        if (begin < end) add(1, 0, pages_, begin, end, delta);
    }
    uint32_t used() const { return nodes_[1].used; }
    uint32_t largestFree() const { return nodes_[1].best; }

  private:
    struct Node {
        int32_t cover = 0;
        uint32_t len = 0, pre = 0, suf = 0, best = 0, used = 0;
    };
    void build(size_t node, uint32_t lo, uint32_t hi) {
        Node& n = nodes_[node];
        n.len = n.pre = n.suf = n.best = hi - lo;
        if (hi - lo > 1) {
            const uint32_t mid = lo + (hi - lo) / 2;
            build(2 * node, lo, mid);
            build(2 * node + 1, mid, hi);
        }
    }
    void pull(size_t node, uint32_t lo, uint32_t hi) {
        Node& n = nodes_[node];
        if (n.cover > 0) {
            n.pre = n.suf = n.best = 0;
            n.used = n.len;
            return;
        }
        if (hi - lo == 1) {
            n.pre = n.suf = n.best = 1;
            n.used = 0;
            return;
        }
        const Node& l = nodes_[2 * node];
        const Node& r = nodes_[2 * node + 1];
        n.used = l.used + r.used;
        n.pre = l.pre == l.len ? l.len + r.pre : l.pre;
        n.suf = r.suf == r.len ? r.len + l.suf : r.suf;
        n.best = std::max({l.best, r.best, l.suf + r.pre});
    }
    void add(size_t node, uint32_t lo, uint32_t hi, uint32_t begin, uint32_t end, int delta) {
        if (end <= lo || hi <= begin) return;
        if (begin <= lo && hi <= end) {
            nodes_[node].cover += delta;
        } else {
            const uint32_t mid = lo + (hi - lo) / 2;
            add(2 * node, lo, mid, begin, end, delta);
            add(2 * node + 1, mid, hi, begin, end, delta);
        }
        pull(node, lo, hi);
    }
    uint32_t pages_;
    std::vector<Node> nodes_;
};

struct PageState {
    uint64_t written = 0;
    uint64_t lastRead = 0;
    uint8_t state = 0;  // 0 nothing, 1 written and unread, 2 holds data that was read
};

// Collects per-page intervals into runs of consecutive pages with identical intervals.
class RunCollector {
  public:
    explicit RunCollector(std::vector<OccupiedRun>& out) : out_(out) {}
    void add(uint32_t page, uint64_t begin, uint64_t end) {
        if (open_ && current_.pageEnd == page && current_.begin == begin && current_.end == end) {
            ++current_.pageEnd;
            return;
        }
        flush();
        current_ = {page, page + 1, begin, end};
        open_ = true;
    }
    void flush() {
        if (open_) out_.push_back(current_);
        open_ = false;
    }

  private:
    std::vector<OccupiedRun>& out_;
    OccupiedRun current_;
    bool open_ = false;
};

double lowerWeightedMedian(const std::vector<uint64_t>& weightByValue, uint32_t pages) {
    uint64_t total = 0;
    for (uint64_t w : weightByValue) total += w;
    if (total == 0 || pages == 0) return 100.0;
    uint64_t cumulative = 0;
    for (size_t v = 0; v < weightByValue.size(); ++v) {
        cumulative += weightByValue[v];
        if (2 * cumulative >= total) return 100.0 * static_cast<double>(v) / pages;
    }
    return 100.0;
}

// The data-cache's pages, buckets and time bins.
void setGeometry(DcacheAnalysis& out, const InstructionStream& trace, const Simulation& sim,
                 const DcacheOptions& options) {
    const DcacheGeometry& geo = *trace.machine.dcache;
    out.present = true;
    out.space = geo.space;
    out.pageBytes = std::max<uint32_t>(geo.pageBytes, 1);
    out.bucketPages = std::max<uint32_t>(geo.bucketPages, 1);
    const uint64_t spaceBytes = trace.machine.spaces[geo.space].bytes;
    out.pages = static_cast<uint32_t>((spaceBytes + out.pageBytes - 1) / out.pageBytes);
    out.buckets = (out.pages + out.bucketPages - 1) / out.bucketPages;
    out.bins = std::max<uint32_t>(options.bins, 1);
    out.binCycles = std::max<uint64_t>(1, (sim.totalCycles + out.bins - 1) / out.bins);
}

// What the page walk leaves: runs of consecutive pages with identical intervals.
struct PageRuns {
    std::vector<OccupiedRun> live;    // [write, last read + 1) of data that was read
    std::vector<OccupiedRun> wasted;  // [write, write + 1) of page-writes never read
};

// Each page's state as the trace's reads and writes reach it in cycle order; a page's data is
// closed (live or wasted) when it is overwritten or the trace ends. Counts page-writes and
// wasted pages in the analysis.
class PageWalk {
  public:
    explicit PageWalk(DcacheAnalysis& out) : out_(out), state_(out.pages) {}

    void write(const Region& r, uint64_t at) {
        uint32_t first, last;
        pageRange(r, first, last);
        for (uint32_t p = first; p < last; ++p) {
            closePage(p);
            state_[p] = {at, at, 1};
            ++out_.pageWrites;
        }
        live_.flush();
        wasted_.flush();
    }
    void read(const Region& r, uint64_t at) {
        uint32_t first, last;
        pageRange(r, first, last);
        for (uint32_t p = first; p < last; ++p) {
            PageState& s = state_[p];
            if (s.state == 0) s.written = 0;  // live-in data: present from the start
            s.state = 2;
            s.lastRead = std::max(s.lastRead, at);
        }
    }
    // Closes every page at the end of the trace.
    PageRuns finish() {
        for (uint32_t p = 0; p < out_.pages; ++p) closePage(p);
        live_.flush();
        wasted_.flush();
        return std::move(runs_);
    }

  private:
    void pageRange(const Region& r, uint32_t& first, uint32_t& last) const {
        first = static_cast<uint32_t>(std::min<uint64_t>(r.address / out_.pageBytes, out_.pages));
        last = static_cast<uint32_t>(
            std::min<uint64_t>((r.end() + out_.pageBytes - 1) / out_.pageBytes, out_.pages));
    }
    void closePage(uint32_t p) {
        PageState& s = state_[p];
        if (s.state == 2) live_.add(p, s.written, s.lastRead + 1);
        if (s.state == 1) {
            ++out_.wastedPages;
            wasted_.add(p, s.written, s.written + 1);
        }
    }
    DcacheAnalysis& out_;
    std::vector<PageState> state_;
    PageRuns runs_;
    RunCollector live_{runs_.live}, wasted_{runs_.wasted};
};

// Replays the trace's data-cache reads and writes in cycle order through a PageWalk.
PageRuns walkPages(const InstructionStream& trace, const Simulation& sim, DcacheAnalysis& out) {
    PageWalk walk(out);
    // DMAs write their destination when they complete, out of program order: keep a queue.
    using Pending = std::pair<uint64_t, uint32_t>;  // complete cycle, dma index
    std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
    for (size_t i = 0; i < trace.instrs.size(); ++i) {
        const Instr& in = trace.instrs[i];
        const uint64_t now = sim.cycle[i];
        while (!pending.empty() && pending.top().first <= now) {
            walk.write(trace.dmas[pending.top().second].dst, pending.top().first);
            pending.pop();
        }
        for (const Region& r : trace.memRead(in))
            if (r.space == out.space) walk.read(r, now);
        if (in.kind == InstrKind::DmaIssue) {
            const Dma& dma = trace.dmas[in.dma];
            const uint64_t complete = sim.dmas[in.dma].completeCycle;
            if (dma.src.space == out.space) walk.read(dma.src, complete);
            if (dma.dst.space == out.space) pending.emplace(complete, in.dma);
        }
        for (const Region& r : trace.memWritten(in))
            if (r.space == out.space) walk.write(r, now);
    }
    while (!pending.empty()) {
        walk.write(trace.dmas[pending.top().second].dst, pending.top().first);
        pending.pop();
    }
    return walk.finish();
}

// Heatmap: integrate each live run over (bucket x bin), full bins through a difference array.
void binLiveRuns(DcacheAnalysis& out, const std::vector<OccupiedRun>& liveRuns) {
    const uint64_t total = out.totalCycles;
    const uint32_t bins = out.bins, buckets = out.buckets;
    out.bucketUsed.assign(size_t(bins) * buckets, 0.0);
    std::vector<double> fullDiff(size_t(bins + 1) * buckets, 0.0);
    for (const OccupiedRun& run : liveRuns) {
        const uint64_t b = std::min(run.begin, total), e = std::min(run.end, total);
        if (b >= e) continue;
        for (uint32_t bucket = run.pageBegin / out.bucketPages;
             bucket * out.bucketPages < run.pageEnd; ++bucket) {
            const uint32_t lo = std::max(run.pageBegin, bucket * out.bucketPages);
            const uint32_t hi = std::min(run.pageEnd, (bucket + 1) * out.bucketPages);
            const double count = hi - lo;
            const uint64_t firstBin = b / out.binCycles, lastBin = (e - 1) / out.binCycles;
            if (firstBin == lastBin) {
                out.bucketUsed[firstBin * buckets + bucket] += count * double(e - b);
                continue;
            }
            out.bucketUsed[firstBin * buckets + bucket] +=
                count * double((firstBin + 1) * out.binCycles - b);
            out.bucketUsed[lastBin * buckets + bucket] +=
                count * double(e - lastBin * out.binCycles);
            if (lastBin > firstBin + 1) {
                fullDiff[(firstBin + 1) * buckets + bucket] += count;
                fullDiff[lastBin * buckets + bucket] -= count;
            }
        }
    }
    std::vector<double> running(buckets, 0.0);
    for (uint32_t bin = 0; bin < bins; ++bin) {
        const uint64_t begin = uint64_t(bin) * out.binCycles;
        const uint64_t len = begin < total ? std::min(total, begin + out.binCycles) - begin : 0;
        for (uint32_t bucket = 0; bucket < buckets; ++bucket) {
            running[bucket] += fullDiff[size_t(bin) * buckets + bucket];
            double& cell = out.bucketUsed[size_t(bin) * buckets + bucket];
            cell += running[bucket] * double(out.binCycles);
            cell = len ? cell / double(len) : 0.0;
        }
    }
}

// Page-writes never read per (bin, bucket), counted in the bin of the write (the last bin for a
// write at the end of the trace).
void binWastedRuns(DcacheAnalysis& out, const std::vector<OccupiedRun>& wastedRuns) {
    out.bucketWasted.assign(size_t(out.bins) * out.buckets, 0.0);
    for (const OccupiedRun& run : wastedRuns) {
        const uint64_t bin = std::min<uint64_t>(run.begin / out.binCycles, out.bins - 1);
        for (uint32_t p = run.pageBegin; p < run.pageEnd; ++p)
            out.bucketWasted[bin * out.buckets + p / out.bucketPages] += 1;
    }
}

// Sweep the live runs through time: used pages and largest free run per constant interval,
// averaged per bin and as lower time-weighted medians.
void sweepFreeSpace(DcacheAnalysis& out, const std::vector<OccupiedRun>& liveRuns) {
    const uint64_t total = out.totalCycles;
    const uint32_t pages = out.pages, bins = out.bins;
    struct Event {
        uint64_t at;
        int32_t delta;
        uint32_t pageBegin, pageEnd;
    };
    std::vector<Event> events;
    events.reserve(liveRuns.size() * 2);
    for (const OccupiedRun& run : liveRuns) {
        events.push_back({run.begin, +1, run.pageBegin, run.pageEnd});
        events.push_back({run.end, -1, run.pageBegin, run.pageEnd});
    }
    std::sort(events.begin(), events.end(),
              [](const Event& a, const Event& b) { return a.at < b.at; });
    FreeRunTree tree(pages);
    std::vector<uint64_t> unusedWeight(pages + 1, 0), freeRunWeight(pages + 1, 0);
    std::vector<double> unusedSum(bins, 0.0), freeRunSum(bins, 0.0);
    auto account = [&](uint64_t from, uint64_t to) {
        to = std::min(to, total);
        if (from >= to) return;
        const uint32_t unused = pages - tree.used();
        const uint32_t freeRun = tree.largestFree();
        unusedWeight[unused] += to - from;
        freeRunWeight[freeRun] += to - from;
        while (from < to) {
            const uint64_t bin = from / out.binCycles;
            const uint64_t binEnd = std::min(to, (bin + 1) * out.binCycles);
            unusedSum[bin] += double(unused) * double(binEnd - from);
            freeRunSum[bin] += double(freeRun) * double(binEnd - from);
            from = binEnd;
        }
    };
    uint64_t now = 0;
    for (size_t k = 0; k < events.size();) {
        const uint64_t at = events[k].at;
        account(now, at);
        now = std::max(now, at);
        for (; k < events.size() && events[k].at == at; ++k)
            tree.add(events[k].pageBegin, events[k].pageEnd, events[k].delta);
    }
    account(now, total);
    out.unusedPct.assign(bins, 0.0);
    out.largestFreePct.assign(bins, 0.0);
    for (uint32_t bin = 0; bin < bins; ++bin) {
        const uint64_t begin = uint64_t(bin) * out.binCycles;
        if (begin >= total || pages == 0) break;
        const double len = double(std::min(total, begin + out.binCycles) - begin);
        out.unusedPct[bin] = 100.0 * unusedSum[bin] / len / pages;
        out.largestFreePct[bin] = 100.0 * freeRunSum[bin] / len / pages;
    }
    out.medianUnusedPct = lowerWeightedMedian(unusedWeight, pages);
    out.medianLargestFreePct = lowerWeightedMedian(freeRunWeight, pages);
}

// Occupancy index for free-region queries: live and wasted runs.
void indexOccupancy(DcacheAnalysis& out, PageRuns runs) {
    out.runs = std::move(runs.live);
    out.runs.insert(out.runs.end(), runs.wasted.begin(), runs.wasted.end());
    std::sort(out.runs.begin(), out.runs.end(),
              [](const OccupiedRun& a, const OccupiedRun& b) { return a.begin < b.begin; });
    size_t size = 1;
    while (size < out.runs.size()) size <<= 1;
    out.maxEndTree.assign(2 * size, 0);
    for (size_t k = 0; k < out.runs.size(); ++k) out.maxEndTree[size + k] = out.runs[k].end;
    for (size_t k = size - 1; k >= 1; --k)
        out.maxEndTree[k] = std::max(out.maxEndTree[2 * k], out.maxEndTree[2 * k + 1]);
}

}  // namespace

DcacheAnalysis analyzeDcache(const InstructionStream& trace, const Simulation& sim,
                             const DcacheOptions& options) {
    DcacheAnalysis out;
    out.totalCycles = sim.totalCycles;
    if (!trace.machine.dcache) return out;
    setGeometry(out, trace, sim, options);
    PageRuns runs = walkPages(trace, sim, out);
    binLiveRuns(out, runs.live);
    binWastedRuns(out, runs.wasted);
    sweepFreeSpace(out, runs.live);
    indexOccupancy(out, std::move(runs));
    return out;
}

template <class F>
void DcacheAnalysis::forEachOverlapping(uint64_t from, uint64_t to, F&& f) const {
    auto overlaps = [&](const OccupiedRun& run) { return run.begin <= to && run.end > from; };
    for (const OccupiedRun& run : reserved)
        if (overlaps(run) && !f(run)) return;
    const size_t size = maxEndTree.size() / 2;
    const auto limit = static_cast<size_t>(
        std::upper_bound(runs.begin(), runs.end(), to,
                         [](uint64_t t, const OccupiedRun& r) { return t < r.begin; }) -
        runs.begin());
    if (limit == 0) return;
    // Depth-first over the max-end tree, pruning subtrees that end before `from` or start at
    // runs beginning after `to`.
    size_t stack[128];
    size_t depth = 0;
    stack[depth++] = 1;
    while (depth > 0) {
        const size_t node = stack[--depth];
        if (maxEndTree[node] <= from) continue;
        size_t leftmost = node;
        while (leftmost < size) leftmost <<= 1;
        if (leftmost - size >= limit) continue;
        if (node >= size) {
            if (overlaps(runs[node - size]) && !f(runs[node - size])) return;
            continue;
        }
        stack[depth++] = 2 * node + 1;
        stack[depth++] = 2 * node;
    }
}

std::vector<uint8_t> DcacheAnalysis::occupiedPages(uint64_t from, uint64_t to) const {
    std::vector<int32_t> diff(pages + 1, 0);
    forEachOverlapping(from, to, [&](const OccupiedRun& run) {
        if (run.pageBegin < run.pageEnd) {
            ++diff[run.pageBegin];
            --diff[run.pageEnd];
        }
        return true;
    });
    std::vector<uint8_t> occupied(pages, 0);
    int32_t depth = 0;
    for (uint32_t p = 0; p < pages; ++p) {
        depth += diff[p];
        occupied[p] = depth > 0;
    }
    return occupied;
}

bool DcacheAnalysis::isFree(uint64_t address, uint64_t bytes, uint64_t from, uint64_t to) const {
    if (!present) return true;
    const uint64_t first = address / pageBytes;
    const uint64_t last = std::min<uint64_t>((address + bytes + pageBytes - 1) / pageBytes, pages);
    bool free = true;
    forEachOverlapping(from, to, [&](const OccupiedRun& run) {
        if (run.pageBegin < last && run.pageEnd > first) free = false;
        return free;
    });
    return free;
}

std::optional<uint64_t> DcacheAnalysis::findFree(uint64_t bytes, uint64_t from, uint64_t to) const {
    if (!present) return std::nullopt;
    const uint64_t needed = std::max<uint64_t>(1, (bytes + pageBytes - 1) / pageBytes);
    const std::vector<uint8_t> occupied = occupiedPages(from, to);
    uint64_t runStart = 0, runLength = 0;
    for (uint32_t p = 0; p < pages; ++p) {
        if (occupied[p]) {
            runLength = 0;
            continue;
        }
        if (runLength == 0) runStart = p;
        if (++runLength >= needed) return runStart * pageBytes;
    }
    return std::nullopt;
}

uint64_t DcacheAnalysis::largestFree(uint64_t from, uint64_t to) const {
    if (!present) return 0;
    const std::vector<uint8_t> occupied = occupiedPages(from, to);
    uint64_t best = 0, run = 0;
    for (uint32_t p = 0; p < pages; ++p) {
        run = occupied[p] ? 0 : run + 1;
        best = std::max(best, run);
    }
    return best * pageBytes;
}

void DcacheAnalysis::reserve(uint64_t address, uint64_t bytes, uint64_t from, uint64_t to) {
    if (!present) return;
    const auto first = static_cast<uint32_t>(std::min<uint64_t>(address / pageBytes, pages));
    const auto last = static_cast<uint32_t>(
        std::min<uint64_t>((address + bytes + pageBytes - 1) / pageBytes, pages));
    reserved.push_back({first, last, from, to + 1});
}

}  // namespace stallscope::replay
