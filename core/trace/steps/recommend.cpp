// What to change, in words, with the evidence and the share of step time each could recover
// (docs/steps.md lists the rules).

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

void Figures::append(const Figures& other) {
    negative_.insert(negative_.end(), other.negative_.begin(), other.negative_.end());
    short_.insert(short_.end(), other.short_.begin(), other.short_.end());
    long_.insert(long_.end(), other.long_.begin(), other.long_.end());
}

int64_t Figures::nth(size_t k) {
    // Negative ones before all the others, longer ones after (push_back).
    if (k < negative_.size()) {
        std::nth_element(negative_.begin(), negative_.begin() + ptrdiff_t(k), negative_.end());
        return negative_[k];
    }
    k -= negative_.size();
    if (k < short_.size()) {
        std::nth_element(short_.begin(), short_.begin() + ptrdiff_t(k), short_.end());
        return short_[k];
    }
    k -= short_.size();
    if (k >= long_.size()) throw std::out_of_range("figures: rank past the last");
    std::nth_element(long_.begin(), long_.begin() + ptrdiff_t(k), long_.end());
    return long_[k];
}

int64_t Figures::nearestRank(double q) {
    if (empty()) return 0;
    const size_t rank = size_t(std::ceil(q * double(size())));
    return nth(std::clamp<size_t>(rank, 1, size()) - 1);
}

int64_t Figures::sum() const {
    int64_t total = std::accumulate(negative_.begin(), negative_.end(), int64_t(0));
    total = std::accumulate(short_.begin(), short_.end(), total);
    return std::accumulate(long_.begin(), long_.end(), total);
}

std::string percentText(double pct) {
    char buf[32];
    std::snprintf(buf, sizeof buf, pct < 9.95 ? "%.1f %%" : "%.0f %%", pct);
    return buf;
}

std::string usText(int64_t ns) {
    char buf[32];
    if (ns >= 1000000)
        std::snprintf(buf, sizeof buf, "%.1f ms", double(ns) / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.1f µs", double(ns) / 1e3);
    return buf;
}

namespace {

// "the GPU waits", "the GPUs wait", "the TPUs idle" ... for the recommendations' sentences.
struct Subject {
    std::string noun;
    bool plural;
    std::string verb(const std::string& plain) const {
        return noun + " " + (plural ? plain : plain + "s");
    }
};

Subject deviceSubject(const std::vector<StepDevice>& devices) {
    std::string kind = "device";
    for (const StepDevice& d : devices) {
        if (has(d.name, "GPU")) kind = "GPU";
        if (has(d.name, "TPU")) kind = "TPU";
        if (d.name.starts_with("rank")) kind = "rank";
    }
    return {"the " + kind + (devices.size() == 1 ? "" : "s"), devices.size() != 1};
}

class Recommender {
  public:
    Recommender(StepAnalysis& r, const std::vector<TimedSlice>& syncCalls, const Findings& found)
        : r_(r),
          syncCalls_(syncCalls),
          found_(found),
          all_(r.totalDeviceTime()),
          devices_(deviceSubject(r.devices)) {}

    void run() {
        if (all_ <= 0) return;
        inputBound();
        syncStall();
        launchBound();
        exposedCommunication();
        memcpyBound();
        smallKernels();
        deviceIdle();
        std::stable_sort(r_.recommendations.begin(), r_.recommendations.end(),
                         [](const StepRecommendation& a, const StepRecommendation& b) {
                             return a.sharePct > b.sharePct;
                         });
    }

  private:
    double pct(int64_t ns) const { return 100.0 * double(ns) / double(all_); }
    // The longest gap of a cause (gaps are longest first).
    const IdleGap* longestGap(StepCategory cause) const {
        for (const IdleGap& gap : r_.gaps)
            if (gap.cause == cause) return &gap;
        return nullptr;
    }
    void place(StepRecommendation& rec, const IdleGap* gap) const {
        if (!gap) return;
        rec.start = gap->start;
        rec.end = gap->end;
        const StepDevice& d = r_.devices[size_t(gap->device)];
        rec.track = d.tracks.empty() ? -1 : d.tracks.front();
    }
    void inputBound();
    void syncStall();
    void launchBound();
    void exposedCommunication();
    void memcpyBound();
    void smallKernels();
    void deviceIdle();

    StepAnalysis& r_;
    const std::vector<TimedSlice>& syncCalls_;
    const Findings& found_;
    const int64_t all_;
    const Subject devices_;
};

void Recommender::inputBound() {
    const int64_t input = r_.total(StepCategory::Input);
    if (pct(input) >= 5.0) {
        StepRecommendation rec;
        rec.kind = "input_bound";
        rec.sharePct = pct(input);
        rec.text = percentText(rec.sharePct) + " of step time " + devices_.verb("wait") +
                   " for the input pipeline (DataLoader): raise num_workers, pin memory, "
                   "prefetch (prefetch_factor, persistent_workers)";
        rec.evidence = QJsonObject{{"input_ns", qint64(input)},
                                   {"step_time_ns", qint64(all_)},
                                   {"steps", qint64(r_.steps.size())},
                                   {"gaps", qint64(r_.gapCounts[size_t(StepCategory::Input)])}};
        place(rec, longestGap(StepCategory::Input));
        r_.recommendations.push_back(std::move(rec));
    }
}

void Recommender::syncStall() {
    if (pct(found_.syncWait) >= 2.0) {
        StepRecommendation rec;
        rec.kind = "sync_stall";
        rec.sharePct = pct(found_.syncWait);
        uint64_t calls = 0;
        int64_t blocked = 0;
        const TimedSlice* longestCall = nullptr;
        std::unordered_map<std::string, uint64_t> names;
        int64_t outerEnd = INT64_MIN;  // calls nested in a counted one are part of it
        for (const TimedSlice& s : syncCalls_) {
            if (s.start < outerEnd) continue;
            const bool inStep = std::any_of(r_.steps.begin(), r_.steps.end(), [&](const Step& st) {
                return s.start < st.end && s.end > st.start;
            });
            if (!inStep) continue;
            outerEnd = s.end;
            ++calls;
            blocked += s.end - s.start;
            ++names[s.name];
            if (!longestCall || s.end - s.start > longestCall->end - longestCall->start)
                longestCall = &s;
        }
        QJsonObject byName;
        for (const auto& [name, n] : names) byName.insert(QString::fromStdString(name), qint64(n));
        rec.text = percentText(rec.sharePct) + " of step time " + devices_.verb("idle") +
                   " around host synchronisations inside the step (" + std::to_string(calls) +
                   " calls such as cudaStreamSynchronize or .item()): drop them or move them "
                   "out of the step (non_blocking copies, keep values on the device)";
        rec.evidence = QJsonObject{{"device_idle_ns", qint64(found_.syncWait)},
                                   {"sync_calls", qint64(calls)},
                                   {"host_blocked_ns", qint64(blocked)},
                                   {"calls", byName}};
        if (longestCall) {
            rec.start = longestCall->start;
            rec.end = longestCall->end;
            rec.track = longestCall->track;
        }
        r_.recommendations.push_back(std::move(rec));
    }
}

void Recommender::launchBound() {
    const int64_t launchWait = r_.total(StepCategory::HostWait) - found_.syncWait;
    if (pct(launchWait) >= 10.0) {
        StepRecommendation rec;
        rec.kind = "launch_bound";
        rec.sharePct = pct(launchWait);
        const double kernelsPerStep =
            r_.steps.empty() || r_.devices.empty()
                ? 0.0
                : double(found_.computeKernels) / double(r_.steps.size() * r_.devices.size());
        const bool shortKernelsDominate = r_.medianKernel > 0 && r_.medianKernel < 50000;
        rec.text = percentText(rec.sharePct) + " of step time " + devices_.verb("wait") +
                   " for the host to launch work" +
                   (shortKernelsDominate
                        ? " (median kernel " + usText(r_.medianKernel) + ", " +
                              std::to_string(int64_t(kernelsPerStep + 0.5)) + " kernels per step)"
                        : std::string()) +
                   ": capture the step in CUDA graphs, fuse kernels (torch.compile), move host "
                   "work out of the step";
        rec.evidence = QJsonObject{{"host_wait_ns", qint64(launchWait)},
                                   {"median_kernel_ns", qint64(r_.medianKernel)},
                                   {"kernels_per_step", kernelsPerStep},
                                   {"launch_latency_p50_ns", qint64(r_.launchLatency.p50)},
                                   {"launch_latency_p95_ns", qint64(r_.launchLatency.p95)},
                                   {"gaps", qint64(r_.gapCounts[size_t(StepCategory::HostWait)])}};
        place(rec, longestGap(StepCategory::HostWait));
        r_.recommendations.push_back(std::move(rec));
    }
}

void Recommender::exposedCommunication() {
    int64_t commTotal = 0, commHidden = 0;
    for (const DeviceStepBreakdown& b : r_.breakdown) {
        commTotal += b.communicationTotal;
        commHidden += b.communicationHidden;
    }
    const int64_t exposed = r_.total(StepCategory::Communication);
    if (pct(exposed) >= 5.0) {
        StepRecommendation rec;
        rec.kind = "exposed_communication";
        rec.sharePct = pct(exposed);
        const double hiddenPct =
            commTotal > 0 ? 100.0 * double(commHidden) / double(commTotal) : 0.0;
        rec.text = percentText(rec.sharePct) + " of step time " + devices_.verb("communicate") +
                   " with no compute beside it (" + percentText(hiddenPct) +
                   " of communication is hidden): overlap it with compute (DDP bucket_cap_mb, "
                   "FSDP prefetch, async collectives) or shrink it";
        rec.evidence = QJsonObject{{"communication_ns", qint64(commTotal)},
                                   {"hidden_ns", qint64(commHidden)},
                                   {"exposed_ns", qint64(exposed)},
                                   {"hidden_pct", hiddenPct}};
        rec.start = found_.longest[0];
        rec.end = found_.longest[1];
        rec.track = found_.longestCommTrack;
        r_.recommendations.push_back(std::move(rec));
    }
}

void Recommender::memcpyBound() {
    const int64_t copies = r_.total(StepCategory::Memcpy) + r_.total(StepCategory::Memset);
    if (pct(copies) >= 10.0) {
        int64_t h2d = 0, d2h = 0, d2d = 0, peer = 0, other = 0;
        for (const DeviceStepBreakdown& b : r_.breakdown) {
            h2d += b.h2d;
            d2h += b.d2h;
            d2d += b.d2d;
            peer += b.peer;
            other += b.otherCopy;
        }
        StepRecommendation rec;
        rec.kind = "memcpy_bound";
        rec.sharePct = pct(copies);
        std::string split;
        for (const auto& [label, ns] :
             {std::pair{"H2D", h2d}, std::pair{"D2H", d2h}, std::pair{"D2D", d2d},
              std::pair{"peer", peer}, std::pair{"other copies", other}})
            if (ns > 0)
                split += (split.empty() ? "" : ", ") + std::string(label) + " " + usText(ns);
        const bool xla = r_.source == StepSource::XlaModules || r_.source == StepSource::XlaSteps;
        rec.text = percentText(rec.sharePct) + " of step time " + devices_.noun +
                   " only copy or set memory" + (split.empty() ? "" : " (" + split + ")") +
                   (xla ? ": keep the operands in device memory (no host offload in the step), "
                          "issue the copies earlier or overlap them with compute; the Transfers "
                          "analysis gives each copy's link, bandwidth and re-simulated saving"
                        : ": pin host memory and copy with non_blocking=True, keep tensors on "
                          "the device, avoid .cpu() and .item() in the step");
        rec.evidence = QJsonObject{{"memcpy_ns", qint64(r_.total(StepCategory::Memcpy))},
                                   {"memset_ns", qint64(r_.total(StepCategory::Memset))},
                                   {"h2d_ns", qint64(h2d)},
                                   {"d2h_ns", qint64(d2h)},
                                   {"d2d_ns", qint64(d2d)},
                                   {"peer_ns", qint64(peer)},
                                   {"other_copy_ns", qint64(other)}};
        rec.start = found_.longest[2];
        rec.end = found_.longest[3];
        rec.track = found_.longestCopyTrack;
        r_.recommendations.push_back(std::move(rec));
    }
}

void Recommender::smallKernels() {
    // Many short kernels: their launch and tail overheads add up; fusion recovers at most the
    // idle between them, which launch_bound already counts, so this one claims nothing extra.
    if (found_.computeKernels >= 100 && found_.shortKernels * 2 >= found_.computeKernels &&
        found_.computeTime > 0) {
        StepRecommendation rec;
        rec.kind = "small_kernels";
        rec.sharePct = 0;
        rec.text =
            std::to_string(found_.shortKernels) + " of " + std::to_string(found_.computeKernels) +
            " kernels run under 10 µs (" +
            percentText(100.0 * double(found_.shortKernelTime) / double(found_.computeTime)) +
            " of compute time): fuse them (torch.compile, fused optimizers) or batch "
            "more work per kernel";
        rec.evidence = QJsonObject{{"kernels", qint64(found_.computeKernels)},
                                   {"short_kernels", qint64(found_.shortKernels)},
                                   {"short_kernel_ns", qint64(found_.shortKernelTime)},
                                   {"median_kernel_ns", qint64(r_.medianKernel)}};
        r_.recommendations.push_back(std::move(rec));
    }
}

void Recommender::deviceIdle() {
    const int64_t idle = r_.total(StepCategory::Idle);
    if (pct(idle) >= 20.0) {
        StepRecommendation rec;
        rec.kind = "device_idle";
        rec.sharePct = pct(idle);
        rec.text = percentText(rec.sharePct) + " of step time " + devices_.verb("idle") +
                   " with nothing launched late and no input or runtime call on the "
                   "host: they wait on other streams or devices, or the step has no work for "
                   "them";
        rec.evidence = QJsonObject{{"idle_ns", qint64(idle)},
                                   {"gaps", qint64(r_.gapCounts[size_t(StepCategory::Idle)])}};
        place(rec, longestGap(StepCategory::Idle));
        r_.recommendations.push_back(std::move(rec));
    }
}

}  // namespace

void recommend(StepAnalysis& r, const std::vector<TimedSlice>& syncCalls, const Findings& found) {
    Recommender(r, syncCalls, found).run();
}

}  // namespace stallscope::trace::steps
