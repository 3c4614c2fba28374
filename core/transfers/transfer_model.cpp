// The link model on derived transfers: fit, lifetimes, backtails, re-simulation, suggestions.
#include <QJsonArray>
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <span>
#include <unordered_map>

#include "core/transfers/derive_common.h"
#include "core/transfers/transfers.h"

namespace stallscope::transfers {

const char* backtailName(Backtail kind) {
    switch (kind) {
        case Backtail::ModuleStart:
            return "module-start";
        case Backtail::Producer:
            return "producer";
        case Backtail::PreviousSync:
            return "previous-sync";
        case Backtail::Unknown:
            break;
    }
    return "unknown";
}

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The nearest-rank 10th percentile: what the fastest tenth of them reach.
double lowDecile(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[(v.size() + 9) / 10 - 1];
}

int64_t transferNs(const Link& link, double bytes) {
    return link.bytesPerNs > 0 ? int64_t(std::llround(bytes / link.bytesPerNs)) : 0;
}

// std::stable_sort, without its buffer for the few items a run has: an insertion sort (stable)
// up to a few dozen, the library's above.
template <typename Less>
void stableSort(std::span<uint32_t> items, Less less) {
    if (items.size() > 32) {
        std::stable_sort(items.begin(), items.end(), less);
        return;
    }
    for (size_t i = 1; i < items.size(); ++i) {
        const uint32_t item = items[i];
        size_t j = i;
        for (; j > 0 && less(item, items[j - 1]); --j) items[j] = items[j - 1];
        items[j] = item;
    }
}

// The transfers of each run per link (by link index), each link's in issue order (FIFO by
// arrival: one base latency per link, so arrival order is issue order). Grouped once for all
// the passes over the runs (issues never move), flat: runs are many and have few transfers.
class LinkLists {
  public:
    struct Group {
        uint32_t link;
        std::span<const uint32_t> list;
    };
    explicit LinkLists(const Analysis& a) {
        std::vector<std::array<uint32_t, 3>> groups;  // link, begin, end in ids_
        runBegin_.reserve(a.modules.size() + 1);
        for (const ModuleRun& run : a.modules) {
            runBegin_.push_back(groups.size());
            const size_t from = ids_.size();
            ids_.insert(ids_.end(), run.transfers.begin(), run.transfers.end());
            stableSort(std::span<uint32_t>(ids_).subspan(from), [&a](uint32_t x, uint32_t y) {
                const Transfer& tx = a.transfers[x];
                const Transfer& ty = a.transfers[y];
                if (tx.link != ty.link) return tx.link < ty.link;
                return tx.issue < ty.issue;
            });
            for (size_t i = from; i < ids_.size();) {
                const uint32_t link = a.transfers[ids_[i]].link;
                size_t j = i + 1;
                while (j < ids_.size() && a.transfers[ids_[j]].link == link) ++j;
                groups.push_back({link, uint32_t(i), uint32_t(j)});
                i = j;
            }
        }
        runBegin_.push_back(groups.size());
        groups_.reserve(groups.size());
        for (const auto& [link, begin, end] : groups)
            groups_.push_back({link, std::span<const uint32_t>(ids_).subspan(begin, end - begin)});
    }
    std::span<const Group> of(uint32_t module) const {
        return std::span<const Group>(groups_).subspan(runBegin_[module],
                                                       runBegin_[module + 1] - runBegin_[module]);
    }

  private:
    std::vector<uint32_t> ids_;
    std::vector<Group> groups_;
    std::vector<size_t> runBegin_;
};

// Copies this small are mostly per-copy cost on any GPU link (at 10 GB/s 64 KiB take 6.5 µs,
// a copy's fixed cost 1-10 µs): their bytes / time says little of the link's bandwidth.
constexpr double kOverheadBoundCopyBytes = 64 * 1024;

// The link model of copies measured on their link, from (bytes, ns) points. For 8+ points over
// sizes that differ (4x): ns = perCopy + bytes * perByte by least squares with neither part
// negative (a negative per-copy cost makes it the line through the origin: HTA's AlexNet, 256 B
// to 151 MB at 4.34 GB/s), trusted for the bandwidth when the bytes explain at least half of
// the largest copy's time; else (the slope is jitter: MI300X DtoD copies of 2 B to 4 MiB all
// take 3.4-5.4 µs, a 5,170 GB/s line) the copies are per-copy cost. Fewer or like-sized
// copies: their total bytes over their total time (a median of ns per byte read a mix of
// three 424 B and three 212 KB NCCL broadcasts as 0.11 GB/s), per-copy cost when the median
// copy is small. A per-copy-cost link takes as bandwidth the best rate any of the copies
// reached, a lower bound (a public TensorFlow profile's 80 copies of 2 B to 6 KB, 1-3 µs each,
// had read as a 0.004 GB/s link), and as per-copy cost the median of what that rate leaves of
// each copy's time.
struct OnLinkFit {
    double nsPerByte = 0, perCopyNs = 0;
    bool lowerBound = false;
};
OnLinkFit fitOnLink(const std::vector<std::pair<double, double>>& points) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0, smallest = 0, largest = 0;
    const double n = double(points.size());
    std::vector<double> sizes, durations;  // durations: for a per-copy cost without any rate
    double bestRate = 0;                   // bytes per ns
    for (const auto& [bytes, ns] : points) {
        sx += bytes;
        sy += ns;
        sxx += bytes * bytes;
        sxy += bytes * ns;
        smallest = smallest == 0 ? bytes : std::min(smallest, bytes);
        largest = std::max(largest, bytes);
        sizes.push_back(bytes);
        durations.push_back(ns);
        if (ns > 0) bestRate = std::max(bestRate, bytes / ns);
    }
    bool perCopyOnly = false;
    const double det = n * sxx - sx * sx;
    if (points.size() >= 8 && largest >= 4 * smallest && det > 1e-9 * n * sxx) {
        double perByte = (n * sxy - sx * sy) / det;
        double perCopy = (sy - perByte * sx) / n;
        if (perByte > 0 && perCopy < 0) {
            perByte = sxy / sxx;
            perCopy = 0;
        }
        if (perByte > 0 && largest * perByte >= perCopy) return {perByte, perCopy, false};
        perCopyOnly = true;
    } else {
        perCopyOnly = median(sizes) < kOverheadBoundCopyBytes;
    }
    if (!perCopyOnly && sx > 0 && sy > 0) return {sy / sx, 0.0, false};
    if (bestRate <= 0) return {0.0, median(durations), true};
    // The per-copy cost is what the best rate leaves of a copy's time (the median of it): the
    // copies' own time, not their time twice (a lone 1-byte copy modelled as twice its length).
    std::vector<double> rest;
    for (const auto& [bytes, ns] : points) rest.push_back(std::max(0.0, ns - bytes / bestRate));
    return {1.0 / bestRate, median(rest), true};
}

// Base latency and bandwidth per link from the completions the trace measured. A completion
// right after the previous one on the link (which was still transferring at this issue) is a
// queued transfer: its duration is bytes / bandwidth alone. One whose link was idle at its
// issue took base latency + bytes / bandwidth. Medians, not least squares: a few runs where
// the host was slow (other devices' copies on the same PCIe) must not move the typical run.
void fitLinks(Analysis& a, const LinkLists& byLink) {
    std::vector<std::vector<std::pair<double, double>>> queued(a.links.size()),
        head(a.links.size());
    // Every transfer that did not block was done by its wait: ns per byte at most this.
    std::vector<double> tightest(a.links.size(), 0);
    for (uint32_t run = 0; run < a.modules.size(); ++run) {
        for (const auto& [link, list] : byLink.of(run)) {
            for (size_t i = 0; i < list.size(); ++i) {
                const Transfer& t = a.transfers[list[i]];
                if (t.bytes == 0) continue;
                if (t.waited && !t.blocked && t.wait > t.issue) {
                    const double bound = double(t.wait - t.issue) / double(t.bytes);
                    tightest[link] = tightest[link] > 0 ? std::min(tightest[link], bound) : bound;
                }
                if (!t.completeMeasured) continue;
                const Transfer* prev = i > 0 ? &a.transfers[list[i - 1]] : nullptr;
                // (A wait within kBlockedWaitNs after this issue that did not block: the
                // link was idle then, give or take that.)
                const bool prevDone = !prev ||
                                      (prev->completeMeasured && prev->complete <= t.issue) ||
                                      (!prev->completeMeasured && prev->waited &&
                                       prev->wait <= t.issue + kBlockedWaitNs);
                if (prevDone) {
                    head[link].emplace_back(double(t.bytes), double(t.complete - t.issue));
                } else if (prev->completeMeasured && t.complete > prev->complete) {
                    queued[link].emplace_back(double(t.bytes), double(t.complete - prev->complete));
                }
            }
        }
    }
    // Kineto measures each copy on its link (the GPU memcpy activity): its bandwidth is that
    // interval's, and the base latency the time from the issue to it when the link was idle
    // (no earlier copy on it still running, over all runs). From completions alone, a copy
    // queued behind kernels on its stream (a public H100 trace: a median 84 ms) read as a link
    // of 6e-7 GB/s.
    std::vector<std::vector<std::pair<double, double>>> onLink(a.links.size());  // bytes, ns
    std::vector<std::vector<double>> toLink(a.links.size());
    if (a.source == "kineto" || a.source == detail::kXprofRuntimeSource) {
        std::vector<std::vector<const Transfer*>> measured(a.links.size());
        for (const Transfer& t : a.transfers)
            if (t.bytes > 0 && t.inFlightTrack >= 0 && t.inFlightEnd > t.inFlightStart)
                measured[t.link].push_back(&t);
        for (size_t l = 0; l < a.links.size(); ++l) {
            auto& list = measured[l];
            std::sort(list.begin(), list.end(), [](const Transfer* x, const Transfer* y) {
                return x->inFlightStart < y->inFlightStart;
            });
            int64_t busyUntil = INT64_MIN;
            for (const Transfer* t : list) {
                onLink[l].emplace_back(double(t->bytes), double(t->inFlightEnd - t->inFlightStart));
                if (busyUntil <= t->issue)
                    toLink[l].push_back(double(std::max<int64_t>(0, t->inFlightStart - t->issue)));
                busyUntil = std::max(busyUntil, t->inFlightEnd);
            }
        }
    }
    for (size_t l = 0; l < a.links.size(); ++l) {
        Link& link = a.links[l];
        link.fitObservations = uint32_t(queued[l].size() + head[l].size());
        double nsPerByte = 0, base = 0;
        if (!onLink[l].empty()) {
            // Duration on the link = a per-copy cost + bytes / bandwidth, fitted as a line
            // when the sizes differ (small copies are all per-copy cost: their bytes / time is
            // no bandwidth); the per-copy cost joins the base latency.
            link.fitObservations = uint32_t(onLink[l].size());
            base = toLink[l].empty() ? 0 : lowDecile(toLink[l]);
            const OnLinkFit fit = fitOnLink(onLink[l]);
            nsPerByte = fit.nsPerByte;
            base += fit.perCopyNs;
            link.bandwidthLowerBound = fit.lowerBound;
        } else if (!queued[l].empty()) {
            std::vector<double> rates;
            for (const auto& [bytes, ns] : queued[l]) rates.push_back(ns / bytes);
            nsPerByte = median(rates);
            std::vector<double> rest;
            for (const auto& [bytes, ns] : head[l]) rest.push_back(ns - bytes * nsPerByte);
            base = std::max(0.0, median(rest));
        } else if (!head[l].empty()) {
            // Only idle-link completions: base latency and bandwidth separate only when the
            // sizes differ (a line through them); else all of it is bandwidth.
            double sx = 0, sy = 0, sxx = 0, sxy = 0;
            const double n = double(head[l].size());
            for (const auto& [bytes, ns] : head[l]) {
                sx += bytes;
                sy += ns;
                sxx += bytes * bytes;
                sxy += bytes * ns;
            }
            const double det = n * sxx - sx * sx;
            if (det > 1e-9 * n * sxx) {
                nsPerByte = (n * sxy - sx * sy) / det;
                base = (sy - nsPerByte * sx) / n;
            }
            if (det <= 1e-9 * n * sxx || nsPerByte <= 0 || base < 0) {
                std::vector<double> rates;
                for (const auto& [bytes, ns] : head[l]) rates.push_back(ns / bytes);
                nsPerByte = median(rates);
                base = 0;
            }
        } else {
            link.bandwidthLowerBound = true;
            nsPerByte = tightest[l];
        }
        link.bytesPerNs = nsPerByte > 0 ? 1.0 / nsPerByte : 0;
        link.baseLatencyNs = int64_t(std::llround(base));
    }
}

// The stall of one wait split among the transfers it waits for (`ids`, in id order).
void splitWait(Analysis& a, std::vector<uint32_t>& ids) {
    std::sort(ids.begin(), ids.end(), [&](uint32_t x, uint32_t y) {
        return a.transfers[x].complete < a.transfers[y].complete;
    });
    int64_t cursor = INT64_MIN;
    for (uint32_t id : ids) {
        Transfer& t = a.transfers[id];
        if (cursor == INT64_MIN) cursor = t.wait;
        const int64_t until = std::min(t.waitEnd, t.complete);
        if (t.blocked && until > cursor) {
            t.baseStall = std::clamp<int64_t>(t.ready - cursor, 0, until - cursor);
            t.transferStall = until - cursor - t.baseStall;
            cursor = until;
        } else if (t.complete < t.wait) {
            t.slack = t.wait - t.complete;
        }
    }
}

// Lifetimes from the measured values and the fitted links; stall split; busy time per link.
void lifetimes(Analysis& a, const LinkLists& byLink) {
    std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(a.links.size());
    for (uint32_t run = 0; run < a.modules.size(); ++run) {
        for (const auto& [l, list] : byLink.of(run)) {
            const Link& link = a.links[l];
            int64_t linkFree = INT64_MIN;
            for (uint32_t id : list) {
                Transfer& t = a.transfers[id];
                t.ready = t.issue + link.baseLatencyNs;
                const int64_t own = transferNs(link, double(t.bytes));
                if (t.completeMeasured) {
                    // transferStart may be measured (a GPU memcpy's own interval).
                    if (t.transferStart == 0 || t.transferStart > t.complete)
                        t.transferStart = std::min(t.complete, std::max(t.ready, linkFree));
                } else {
                    t.transferStart = std::max(t.ready, linkFree);
                    t.complete = t.transferStart + own;
                    if (t.waited) t.complete = std::min(t.complete, t.wait);
                    t.transferStart = std::min(t.transferStart, t.complete);
                }
                linkFree = std::max(linkFree, t.complete);
                t.queueNs = std::max<int64_t>(0, t.transferStart - t.ready);
                busy[l].emplace_back(t.transferStart, t.complete);
            }
        }
    }
    // The wait's stall split among the transfers it waits for, in completion order: each gets
    // the stretch from the previous one's completion (or the wait's start) to its own, so one
    // sync waiting for several copies never counts a nanosecond twice.
    // Transfers grouped by their wait (each is in one group, so the groups' order does not
    // matter), each group's in id order.
    for (Transfer& t : a.transfers) t.baseStall = t.transferStall = t.slack = 0;
    std::vector<uint32_t> waited;
    for (const Transfer& t : a.transfers)
        if (t.waited) waited.push_back(t.id);
    auto sameWait = [&a](uint32_t x, uint32_t y) {
        const Transfer& tx = a.transfers[x];
        const Transfer& ty = a.transfers[y];
        return tx.module == ty.module && tx.waitStep == ty.waitStep;
    };
    std::stable_sort(waited.begin(), waited.end(), [&a](uint32_t x, uint32_t y) {
        const Transfer& tx = a.transfers[x];
        const Transfer& ty = a.transfers[y];
        if (tx.module != ty.module) return tx.module < ty.module;
        return tx.waitStep < ty.waitStep;
    });
    std::vector<uint32_t> ids;
    for (size_t from = 0; from < waited.size();) {
        size_t to = from + 1;
        while (to < waited.size() && sameWait(waited[to], waited[from])) ++to;
        ids.assign(waited.begin() + std::ptrdiff_t(from), waited.begin() + std::ptrdiff_t(to));
        from = to;
        splitWait(a, ids);
    }
    for (size_t l = 0; l < a.links.size(); ++l) {
        auto& spans = busy[l];
        std::sort(spans.begin(), spans.end());
        int64_t total = 0, from = INT64_MIN, to = INT64_MIN;
        for (const auto& [s, e] : spans) {
            if (s > to) {
                if (to > from) total += to - from;
                from = s;
                to = e;
            } else {
                to = std::max(to, e);
            }
        }
        if (to > from) total += to - from;
        a.links[l].busyNs = total;
    }
}

// Where the data a transfer reads comes from: a parameter (the module's start), an op's
// output earlier in the run, or nothing the trace shows (it cannot move).
bool isParameterName(const std::string& name) {
    return name.starts_with("param") || name.starts_with("Arg_") || name.starts_with("arg");
}

void backtails(Analysis& a, const RunProgram& program) {
    {
        const ModuleRun& run = a.modules[program.module];
        for (uint32_t id : run.transfers) {
            Transfer& t = a.transfers[id];
            if (t.sourceOperand.empty()) {
                // Set by the derivation; a sync inside the run ends where the run says.
                if (t.backtailKind == Backtail::PreviousSync && t.backtailStep >= 0 &&
                    size_t(t.backtailStep) < program.steps.size() &&
                    program.steps[size_t(t.backtailStep)].role == Role::Wait)
                    t.backtail = program.steps[size_t(t.backtailStep)].end;
                else if (t.backtailKind == Backtail::Unknown)
                    t.backtail = t.issue;
                continue;
            }
            t.backtailKind = Backtail::Unknown;
            t.backtail = t.issue;
            t.backtailStep = t.issueStep;
            for (int32_t s = t.issueStep - 1; s >= 0; --s) {
                if (program.steps[size_t(s)].name != t.sourceOperand) continue;
                t.backtailKind = Backtail::Producer;
                t.backtailOp = t.sourceOperand;
                t.backtailStep = s;
                t.backtail = std::min(t.issue, program.steps[size_t(s)].end);
                break;
            }
            if (t.backtailKind == Backtail::Unknown && isParameterName(t.sourceOperand)) {
                t.backtailKind = Backtail::ModuleStart;
                t.backtailStep = -1;
                t.backtail = run.start;
            }
        }
    }
}

// What the simulator keeps of each step: the idle time before it and its own length as
// measured, overlap with earlier steps removed (nested ops count once).
struct Timing {
    std::vector<int64_t> gap, own;
    int64_t trailing = 0;
};

void timingOf(const ModuleRun& run, const RunProgram& program, Timing& t) {
    t.gap.clear();
    t.own.clear();
    int64_t cursor = run.start;
    for (const Step& s : program.steps) {
        t.gap.push_back(std::max<int64_t>(0, s.start - cursor));
        t.own.push_back(std::max<int64_t>(0, s.end - std::max(s.start, cursor)));
        cursor = std::max(cursor, s.end);
    }
    t.trailing = std::max<int64_t>(0, run.end - cursor);
}

}  // namespace

namespace {

// simulate() with the run's timing computed once for all the edits tried on it.
int64_t simulateTimed(const Analysis& a, const RunProgram& program, const Timing& timing,
                      const SimEdit& edit) {
    const ModuleRun& run = a.modules[program.module];
    const bool identity = edit.order.empty();
    const size_t steps = identity ? program.steps.size() : edit.order.size();
    // Few links and transfers per run: flat lists beat hash maps here. Kept between calls (a
    // run is re-simulated once per edit tried, and runs are many).
    thread_local std::vector<std::pair<uint32_t, int64_t>> linkFree, complete;
    linkFree.clear();
    complete.clear();
    auto freeOf = [&](uint32_t link) -> int64_t& {
        for (auto& entry : linkFree)
            if (entry.first == link) return entry.second;
        return linkFree.emplace_back(link, run.start).second;
    };
    int64_t t = run.start;
    for (size_t k = 0; k < steps; ++k) {
        const uint32_t index = identity ? uint32_t(k) : edit.order[k];
        const Step& step = program.steps[index];
        t += timing.gap[index];
        if (step.role == Role::Issue) {
            for (uint32_t id : step.transfers) {
                const Transfer& x = a.transfers[id];
                const Link& link = a.links[x.link];
                const auto scale = edit.bytesScale.find(id);
                const double bytes =
                    double(x.bytes) * (scale == edit.bytesScale.end() ? 1.0 : scale->second);
                int64_t& free = freeOf(x.link);
                const int64_t start = std::max(t + link.baseLatencyNs, free);
                free = start + transferNs(link, bytes);
                complete.emplace_back(id, free);
            }
            t += timing.own[index];
        } else if (step.role == Role::Wait) {
            bool blocked = step.otherWorkEnd != INT64_MIN;
            for (uint32_t id : step.transfers) blocked = blocked || a.transfers[id].blocked;
            // A wait that did not block keeps its own (few ns) length.
            int64_t end = t + (blocked ? 0 : timing.own[index]);
            for (uint32_t id : step.transfers) {
                int64_t done = a.transfers[id].complete;  // issued before the run: as measured
                for (const auto& [issued, at] : complete)
                    if (issued == id) done = at;
                end = std::max(end, done + step.returnNs);
            }
            end = std::max(end, step.otherWorkEnd);
            t = end;
        } else {
            t += timing.own[index];
        }
    }
    return t + timing.trailing - run.start;
}

}  // namespace

int64_t simulate(const Analysis& a, const RunProgram& program, const SimEdit& edit) {
    Timing timing;
    timingOf(a.modules[program.module], program, timing);
    return simulateTimed(a, program, timing, edit);
}

namespace {

// Moves step `from` to just before position `before` of the identity order.
std::vector<uint32_t> moved(size_t steps, uint32_t from, uint32_t before) {
    std::vector<uint32_t> order(steps);
    std::iota(order.begin(), order.end(), 0u);
    order.erase(order.begin() + from);
    const uint32_t at = before > from ? before - 1 : before;
    order.insert(order.begin() + at, from);
    return order;
}

// An edit as the run that first saved anything describes it.
struct Candidate {
    std::string kind;
    std::vector<uint32_t> transfers;
    std::string toOp;
    int64_t saving = 0;
    QJsonObject evidence;
    std::string text;
};

// Edits summed per (program, edit) as the runs yield them: the saving over the runs it applies
// to, the evidence and transfers of its first run. A program runs thousands of times, so an
// edit is described (evidence, text) once: formatting it per run cost more than re-simulating.
class Candidates {
  public:
    explicit Candidates(Analysis& a) : a_(a) {}
    // Counts one run's saving for the edit whose key is the concatenation of `key` (the same
    // across runs of one program); true when the edit is new, and the caller describe()s it
    // next. The key is only put together for a saving: most runs' edits save nothing.
    bool count(uint32_t module, std::initializer_list<std::string_view> key, int64_t saving) {
        if (saving <= 0) return false;
        const std::string& program = a_.modules[module].name;
        key_.clear();
        for (const std::string_view part : key) key_ += part;
        auto& edits = index_[program];
        auto it = edits.find(key_);
        const bool fresh = it == edits.end();
        if (fresh) {
            it = edits.emplace(key_, a_.suggestions.size()).first;
            Suggestion s;
            s.program = program;
            a_.suggestions.push_back(std::move(s));
        }
        Suggestion& s = a_.suggestions[it->second];
        ++s.runs;
        s.savingNs += saving;
        return fresh;
    }
    // Describes the edit count() just found new.
    void describe(Candidate c) {
        Suggestion& s = a_.suggestions.back();
        s.kind = std::move(c.kind);
        s.transfers = std::move(c.transfers);
        s.toOp = std::move(c.toOp);
        s.evidence = std::move(c.evidence);
        s.text = std::move(c.text);
    }

  private:
    Analysis& a_;
    // Program -> edit key -> index in a_.suggestions.
    std::unordered_map<std::string, std::unordered_map<std::string, size_t>> index_;
    std::string key_;
};

QString ms(int64_t ns) {
    return QString::number(double(ns) / 1e6, 'f', 3) + " ms";
}
QString gbps(double bytesPerNs) {
    return QString::number(bytesPerNs, 'f', 2) + " GB/s";
}
QString bytesText(uint64_t bytes) {
    if (bytes >= 1000000000ull) return QString::number(double(bytes) / 1e9, 'f', 2) + " GB";
    if (bytes >= 1000000ull) return QString::number(double(bytes) / 1e6, 'f', 2) + " MB";
    return QString::number(qulonglong(bytes)) + " bytes";
}

void hoists(const Analysis& a, const RunProgram& p, const Timing& timing, int64_t before,
            Candidates& out) {
    for (uint32_t id : a.modules[p.module].transfers) {
        const Transfer& t = a.transfers[id];
        if (t.stall() <= 0 || t.issueStep < 0) continue;
        const uint32_t earliest = uint32_t(t.backtailStep + 1);  // -1 (module start) -> 0
        if (t.backtailKind == Backtail::Unknown || earliest >= uint32_t(t.issueStep)) continue;
        // SnR: to issue - stall, or the backtail if that is nearer; both re-simulated.
        uint32_t byStall = uint32_t(t.issueStep);
        while (byStall > earliest && p.steps[byStall - 1].start >= t.issue - t.stall()) --byStall;
        // The two targets in ascending order, once each (the first one saving most wins).
        const std::array<uint32_t, 2> targets{std::min(earliest, byStall),
                                              std::max(earliest, byStall)};
        Candidate best;
        for (size_t k = 0; k < targets.size(); ++k) {
            const uint32_t to = targets[k];
            if (k > 0 && to == targets[0]) continue;
            if (to >= uint32_t(t.issueStep)) continue;
            SimEdit edit;
            edit.order = moved(p.steps.size(), uint32_t(t.issueStep), to);
            const int64_t saving = before - simulateTimed(a, p, timing, edit);
            if (saving <= best.saving) continue;
            best.saving = saving;
            best.toOp = to == 0 ? std::string() : std::string(p.steps[to - 1].name);
        }
        if (!out.count(p.module, {"hoist ", t.name.str()}, best.saving)) continue;
        best.kind = "hoist";
        best.transfers = {id};
        best.evidence = QJsonObject{{"stall_ns", qint64(t.stall())},
                                    {"push_limit_ns", qint64(t.issue - t.backtail)},
                                    {"backtail_kind", backtailName(t.backtailKind)},
                                    {"bytes", qint64(t.bytes)}};
        best.text = QString(
                        "Issue %1 earlier, after %2 (its data is ready %3 before the issue): "
                        "its wait stalls %4")
                        .arg(QString::fromStdString(t.name),
                             best.toOp.empty() ? QString("the module's start")
                                               : QString::fromStdString(best.toOp),
                             ms(t.issue - t.backtail), ms(t.stall()))
                        .toStdString();
        out.describe(std::move(best));
    }
}

// A transfer queued behind one issued before it on the same link, yet waited for first:
// issue it first (when its data allows).
void reorders(const Analysis& a, const RunProgram& p, std::span<const LinkLists::Group> byLink,
              const Timing& timing, int64_t before, Candidates& out) {
    for (const auto& [l, list] : byLink) {
        for (size_t j = 1; j < list.size(); ++j) {
            const Transfer& late = a.transfers[list[j]];
            if (late.queueNs <= 0 || late.stall() <= 0 || !late.waited) continue;
            for (size_t i = 0; i < j; ++i) {
                const Transfer& early = a.transfers[list[i]];
                if (!(late.wait < early.wait) || early.issueStep < 0) continue;
                if (late.backtailKind == Backtail::Unknown || late.backtailStep >= early.issueStep)
                    continue;
                SimEdit edit;
                edit.order =
                    moved(p.steps.size(), uint32_t(late.issueStep), uint32_t(early.issueStep));
                const int64_t saving = before - simulateTimed(a, p, timing, edit);
                if (!out.count(p.module,
                               {"reorder ", late.name.str(), " before ", early.name.str()}, saving))
                    break;
                Candidate c;
                c.saving = saving;
                c.kind = "reorder";
                c.transfers = {list[j], list[i]};
                c.toOp = early.name;
                c.evidence = QJsonObject{{"queue_ns", qint64(late.queueNs)},
                                         {"stall_ns", qint64(late.stall())},
                                         {"link", QString::fromStdString(a.links[l].name)}};
                c.text =
                    QString(
                        "Issue %1 before %2 on link %3: it is waited for first but "
                        "queues %4 behind it")
                        .arg(QString::fromStdString(late.name), QString::fromStdString(early.name),
                             QString::fromStdString(a.links[l].name), ms(late.queueNs))
                        .toStdString();
                out.describe(std::move(c));
                break;
            }
        }
    }
}

// Compute after a blocked wait that needs nothing the wait brings (nor anything after it):
// it can run while the transfer is still on its way.
// A run's step and operand names as run-local numbers: the overlap search asks of every
// operand of every op after each stalled wait whether it was produced before the wait or moved
// above it. Runs of one program usually view the very same names (the same parsed HLO), so
// their numbering is kept per program and reused when every view is the same.
struct RunNames {
    static constexpr uint32_t kAbsent = UINT32_MAX;  // no step of the run has the name
    std::vector<std::string_view> stepNames;
    std::vector<std::span<const std::string_view>> stepOperands;
    std::vector<uint32_t> stepId;        // per step
    std::vector<uint32_t> firstStep;     // per name: the first step with it
    std::vector<uint32_t> operandIds;    // every step's operands in turn
    std::vector<uint32_t> operandBegin;  // per step, and the end

    bool views(const RunProgram& p) const {
        if (p.steps.size() != stepNames.size()) return false;
        for (size_t s = 0; s < p.steps.size(); ++s) {
            const Step& step = p.steps[s];
            if (step.name.data() != stepNames[s].data() ||
                step.name.size() != stepNames[s].size() ||
                step.operands.data() != stepOperands[s].data() ||
                step.operands.size() != stepOperands[s].size())
                return false;
        }
        return true;
    }
    void number(const RunProgram& p, std::unordered_map<std::string_view, uint32_t>& ids) {
        ids.clear();
        stepNames.clear();
        stepOperands.clear();
        stepId.clear();
        firstStep.clear();
        operandIds.clear();
        operandBegin.clear();
        for (uint32_t s = 0; s < p.steps.size(); ++s) {
            const Step& step = p.steps[s];
            stepNames.push_back(step.name);
            stepOperands.push_back(step.operands);
            const auto [it, fresh] = ids.try_emplace(step.name, uint32_t(firstStep.size()));
            if (fresh) firstStep.push_back(s);
            stepId.push_back(it->second);
        }
        for (const Step& step : p.steps) {
            operandBegin.push_back(uint32_t(operandIds.size()));
            for (const std::string_view operand : step.operands) {
                const auto it = ids.find(operand);
                operandIds.push_back(it == ids.end() ? kAbsent : it->second);
            }
        }
        operandBegin.push_back(uint32_t(operandIds.size()));
    }
};

// What overlaps() keeps between runs: numberings per program and buffers.
struct OverlapScratch {
    std::unordered_map<std::string, RunNames> byProgram;
    std::unordered_map<std::string_view, uint32_t> ids;
    std::vector<uint32_t> movedAt;  // per name: 1 + the wait it was moved above
    std::vector<uint32_t> independent;
};

// Compute after a blocked wait that needs nothing the wait brings (nor anything after it):
// it can run while the transfer is still on its way.
void overlaps(const Analysis& a, const RunProgram& p, const Timing& timing, int64_t before,
              Candidates& out, OverlapScratch& scratch) {
    const RunNames* names = nullptr;
    for (uint32_t w = 0; w < p.steps.size(); ++w) {
        const Step& wait = p.steps[w];
        if (wait.role != Role::Wait) continue;
        int64_t stall = 0;
        for (uint32_t id : wait.transfers) stall = std::max(stall, a.transfers[id].stall());
        if (stall <= 0) continue;
        if (!names) {
            RunNames& program = scratch.byProgram[a.modules[p.module].name];
            if (!program.views(p)) program.number(p, scratch.ids);
            names = &program;
            scratch.movedAt.assign(names->firstStep.size(), 0);
        }
        // An operand holds the op back when a step of the run produces it, none before the
        // wait (firstStep), and it was not moved above the wait along with the independent ops.
        std::vector<uint32_t>& independent = scratch.independent;
        independent.clear();
        for (uint32_t s = w + 1; s < p.steps.size(); ++s) {
            const Step& step = p.steps[s];
            bool free = step.role == Role::Compute && !step.operands.empty();
            for (uint32_t k = names->operandBegin[s]; free && k < names->operandBegin[s + 1]; ++k) {
                const uint32_t id = names->operandIds[k];
                if (id != RunNames::kAbsent && names->firstStep[id] >= w &&
                    scratch.movedAt[id] != w + 1)
                    free = false;
            }
            if (!free) continue;
            independent.push_back(s);
            scratch.movedAt[names->stepId[s]] = w + 1;
        }
        if (independent.empty()) continue;
        std::vector<uint32_t> order;
        for (uint32_t s = 0; s < w; ++s) order.push_back(s);
        for (uint32_t s : independent) order.push_back(s);
        order.push_back(w);
        // The rest in order (independent is ascending).
        size_t next = 0;
        for (uint32_t s = w + 1; s < p.steps.size(); ++s) {
            if (next < independent.size() && independent[next] == s) {
                ++next;
                continue;
            }
            order.push_back(s);
        }
        SimEdit edit;
        edit.order = std::move(order);
        const int64_t saving = before - simulateTimed(a, p, timing, edit);
        if (!out.count(p.module, {"overlap ", wait.name}, saving)) continue;
        Candidate c;
        c.saving = saving;
        c.kind = "overlap";
        c.transfers = wait.transfers;
        c.toOp = std::string(wait.name);
        int64_t work = 0;
        for (uint32_t s : independent) work += p.steps[s].end - p.steps[s].start;
        c.evidence = QJsonObject{{"stall_ns", qint64(stall)},
                                 {"independent_ops", qint64(independent.size())},
                                 {"independent_work_ns", qint64(work)}};
        c.text =
            QString(
                "Run %1 independent op(s) (%2 of work) before %3, while its transfer "
                "is in flight: it stalls %4")
                .arg(qint64(independent.size()))
                .arg(ms(work), QString::fromUtf8(wait.name.data(), qsizetype(wait.name.size())),
                     ms(stall))
                .toStdString();
        out.describe(std::move(c));
    }
}

// A link busy the whole time its waits stall: only fewer bytes or another link help.
void transferBound(const Analysis& a, const RunProgram& p, std::span<const LinkLists::Group> byLink,
                   const Timing& timing, int64_t before, Candidates& out) {
    for (const auto& [l, list] : byLink) {
        const Link& link = a.links[l];
        int64_t stall = 0, transferStall = 0, from = INT64_MAX, to = INT64_MIN, busy = 0;
        uint64_t bytes = 0;
        bool halvable = true;
        for (uint32_t id : list) {
            const Transfer& t = a.transfers[id];
            stall += t.stall();
            transferStall += t.transferStall;
            from = std::min(from, t.ready);
            to = std::max(to, t.complete);
            busy += t.complete - t.transferStart;
            bytes += t.bytes;
            halvable = halvable && (t.elementType == "f32" || t.elementType == "f64");
        }
        if (stall <= 0 || to <= from || link.bandwidthLowerBound) continue;
        const double busyFraction = double(busy) / double(to - from);
        if (busyFraction < 0.9 || transferStall < stall * 9 / 10) continue;
        SimEdit edit;
        for (uint32_t id : list) edit.bytesScale[id] = 0.5;
        const int64_t saving = before - simulateTimed(a, p, timing, edit);
        if (!out.count(p.module, {"transfer-bound ", link.name}, saving)) continue;
        Candidate c;
        c.saving = saving;
        c.kind = "transfer-bound";
        c.transfers.assign(list.begin(), list.end());
        c.evidence = QJsonObject{
            {"bytes", qint64(bytes)},
            {"link", QString::fromStdString(link.name)},
            {"busy_pct", 100.0 * busyFraction},
            {"achieved_gbps", link.bytesPerNs},
            {"peak_gbps", link.peakBytesPerNs},
            {"peak_pct",
             link.peakBytesPerNs > 0 ? 100.0 * link.bytesPerNs / link.peakBytesPerNs : 0.0},
            {"stall_ns", qint64(stall)},
            {"transfer_ns_per_run", qint64(busy)},
            {"halved_bytes_saving_ns", qint64(c.saving)}};
        QString peak =
            link.peakBytesPerNs > 0
                ? QString(" (%1 % of the %2 peak, %3)")
                      .arg(100.0 * link.bytesPerNs / link.peakBytesPerNs, 0, 'f', 1)
                      .arg(gbps(link.peakBytesPerNs), QString::fromStdString(link.peakSource))
                : QString(" (the profile states no peak for this link)");
        c.text = QString(
                     "Transfer-bound: %1 over link %2 at %3%4 take %5 of link time per run, "
                     "busy %6 % of the span and stalling %7. Fewer bytes or another link: "
                     "%8 halves them (%9 → %10 at %3) and saves %11 in the first run")
                     .arg(bytesText(bytes), QString::fromStdString(link.name),
                          gbps(link.bytesPerNs), peak, ms(busy))
                     .arg(100.0 * busyFraction, 0, 'f', 1)
                     .arg(ms(stall),
                          halvable ? QString("storing them as bf16 (from f32)")
                                   : QString("half the bytes"),
                          ms(busy), ms(busy / 2), ms(c.saving))
                     .toStdString();
        out.describe(std::move(c));
    }
}

// Sums, describes and orders the suggestions the runs yielded.
void finishSuggestions(Analysis& a) {
    for (Suggestion& s : a.suggestions) {
        s.savingPerRunNs = s.runs ? s.savingNs / s.runs : 0;
        s.evidence.insert("runs", qint64(s.runs));
        s.evidence.insert("saving_per_run_ns", qint64(s.savingPerRunNs));
        s.text += QString(" (%1 run(s) of %2: %3 saved in all, re-simulated)")
                      .arg(qint64(s.runs))
                      .arg(QString::fromStdString(s.program), ms(s.savingNs))
                      .toStdString();
    }
    std::stable_sort(
        a.suggestions.begin(), a.suggestions.end(),
        [](const Suggestion& x, const Suggestion& y) { return x.savingNs > y.savingNs; });
}

}  // namespace

namespace detail {

struct Modeller::State {
    explicit State(Analysis& a) : byLink(a), candidates(a) {}
    LinkLists byLink;
    Candidates candidates;
    OverlapScratch overlaps;
    Timing timing;
};

Modeller::Modeller(Analysis& a) : a_(a) {
    for (Link& link : a.links) link.transfers = link.bytes = 0;
    for (const Transfer& t : a.transfers) {
        ++a.links[t.link].transfers;
        a.links[t.link].bytes += t.bytes;
    }
    state_ = std::make_unique<State>(a);
    fitLinks(a, state_->byLink);
    lifetimes(a, state_->byLink);
    a.suggestions.clear();
}

Modeller::~Modeller() = default;

void Modeller::backtails(const RunProgram& program) {
    transfers::backtails(a_, program);
}

void Modeller::run(const RunProgram& p) {
    ModuleRun& run = a_.modules[p.module];
    int64_t compute = 0;
    for (const Step& s : p.steps)
        if (s.role == Role::Compute) compute += s.end - s.start;
    run.computeNs = compute;
    // Re-simulated as measured, then with each edit tried on it: the timing computed once.
    Timing& timing = state_->timing;
    timingOf(run, p, timing);
    const int64_t simulated = run.simulatedNs = simulateTimed(a_, p, timing, SimEdit{});
    const auto links = state_->byLink.of(p.module);
    Candidates& candidates = state_->candidates;
    hoists(a_, p, timing, simulated, candidates);
    reorders(a_, p, links, timing, simulated, candidates);
    overlaps(a_, p, timing, simulated, candidates, state_->overlaps);
    transferBound(a_, p, links, timing, simulated, candidates);
}

void Modeller::finish(bool summarizeRuns) {
    if (summarizeRuns) summarize(a_);
    finishSuggestions(a_);
}

}  // namespace detail

void model(Analysis& a, const std::vector<RunProgram>& programs) {
    detail::Modeller modeller(a);
    for (const RunProgram& p : programs) modeller.backtails(p);
    for (const RunProgram& p : programs) modeller.run(p);
    modeller.finish();
}

namespace detail {

// Each run's stall sums from its transfers.
void sumRuns(Analysis& a) {
    for (ModuleRun& run : a.modules) {
        run.stallNs = run.baseStallNs = run.transferStallNs = 0;
        for (uint32_t id : run.transfers) {
            const Transfer& t = a.transfers[id];
            run.stallNs += t.stall();
            run.baseStallNs += t.baseStall;
            run.transferStallNs += t.transferStall;
        }
    }
}

// The analysis' totals and model errors from its runs' sums.
void totalsFromRuns(Analysis& a) {
    a.totalNs = a.stallNs = a.baseStallNs = a.transferStallNs = 0;
    int64_t simTotal = 0;
    std::vector<double> errors;
    for (const ModuleRun& run : a.modules) {
        a.totalNs += run.measuredNs();
        a.stallNs += run.stallNs;
        a.baseStallNs += run.baseStallNs;
        a.transferStallNs += run.transferStallNs;
        simTotal += run.simulatedNs;
        errors.push_back(std::abs(run.errorPct()));
    }
    a.modelErrorPct =
        a.totalNs > 0 ? 100.0 * std::abs(double(simTotal - a.totalNs)) / double(a.totalNs) : 0;
    a.medianRunErrorPct = median(errors);
}

void summarize(Analysis& a) {
    sumRuns(a);
    totalsFromRuns(a);
}

MergedParts mergeKeepingTransfers(std::vector<Analysis>&& parts) {
    MergedParts out;
    Analysis& into = out.shell;
    size_t links = 0, modules = 0, suggestions = 0;
    for (Analysis& part : parts) {
        sumRuns(part);
        links += part.links.size();
        modules += part.modules.size();
        suggestions += part.suggestions.size();
    }
    into.links.reserve(links);
    into.modules.reserve(modules);
    into.suggestions.reserve(suggestions);
    uint32_t transferBase = 0;
    for (Analysis& part : parts) {
        TransferPart kept;
        kept.linkBase = uint32_t(into.links.size());
        kept.moduleBase = uint32_t(into.modules.size());
        kept.transferBase = transferBase;
        for (Link& link : part.links) into.links.push_back(std::move(link));
        for (ModuleRun& run : part.modules) {
            for (uint32_t& id : run.transfers) id += transferBase;
            into.modules.push_back(std::move(run));
        }
        for (Suggestion& s : part.suggestions) {
            for (uint32_t& id : s.transfers) id += transferBase;
            into.suggestions.push_back(std::move(s));
        }
        for (const auto& [what, count] : part.unmatched) into.unmatched[what] += count;
        transferBase += uint32_t(part.transfers.size());
        kept.transfers = std::move(part.transfers);
        part = Analysis();
        out.transfers.push_back(std::move(kept));
    }
    // Stable: at equal savings the parts' order, then each part's own.
    std::stable_sort(
        into.suggestions.begin(), into.suggestions.end(),
        [](const Suggestion& x, const Suggestion& y) { return x.savingNs > y.savingNs; });
    totalsFromRuns(into);
    return out;
}

Analysis merge(std::vector<Analysis>&& parts) {
    return join(mergeKeepingTransfers(std::move(parts)));
}

Analysis join(MergedParts&& merged) {
    Analysis into = std::move(merged.shell);
    size_t transfers = 0;
    for (const TransferPart& part : merged.transfers) transfers += part.transfers.size();
    into.transfers.reserve(transfers);
    for (TransferPart& part : merged.transfers) {
        for (Transfer& t : part.transfers) {
            t.id += part.transferBase;
            t.link += part.linkBase;
            t.module += part.moduleBase;
            into.transfers.push_back(t);
        }
        part.transfers = {};  // its memory back before the next part moves
    }
    return into;
}

}  // namespace detail

}  // namespace stallscope::transfers
