// The link model's fit: each link's base latency and bandwidth from the copies measured on it,
// and every transfer's lifetime under that model.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/transfers/derive_common.h"
#include "core/transfers/model_internal.h"

namespace stallscope::transfers::linkmodel {

namespace {

// The nearest-rank 10th percentile: what the fastest tenth of them reach.
double lowDecile(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[(v.size() + 9) / 10 - 1];
}

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace stallscope::transfers::linkmodel
