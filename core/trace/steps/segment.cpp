// A device's (and the host's) timeline painted by class: at every moment the class that wins
// by priority, idle stretches split by what the host was doing.

#include <algorithm>
#include <optional>
#include <queue>

#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

namespace {

// A stretch of the device's timeline as the sweep paints it, before idle is split by cause.
struct Raw {
    int64_t start, end;
    uint8_t cls, active;
    int64_t minLaunch;  // earliest launch of activities starting at `start`
    int64_t launchTrack;
};

// Splits idle stretches by what the host was doing (input > runtime call or late launch > idle)
// and hands the result to `sink` in time order (a segment once it can no longer grow).
class IdleSplitter {
  public:
    // Runtime and sync calls are read as two lists, not one merged copy (a copy per device was
    // 50 MB at 10^7 slices): a cut inside their union splits a stretch that merges back below.
    IdleSplitter(const Gathered& g, const SegmentSink& sink, std::vector<GapInfo>& gaps)
        : input_(g.host[size_t(HostCategory::Input)]),
          runtime_(g.host[size_t(HostCategory::Runtime)]),
          sync_(g.host[size_t(HostCategory::Sync)]),
          sink_(sink),
          gaps_(gaps) {}

    // `r` is final; `next` is the stretch after it (nullptr: the last).
    void write(const Raw& r, const Raw* next) {
        if (r.cls != kSegIdle) {
            push({r.start, r.end, r.cls, r.active, -1});
            return;
        }
        // The next activity was launched after the device went idle: the host was late.
        const bool lateLaunch = next && next->minLaunch != INT64_MAX && next->minLaunch > r.start;
        const int32_t gapId = int32_t(gaps_.size());
        gaps_.push_back({next ? next->launchTrack : -1});
        // Cut points: edges of input and runtime intervals inside the gap.
        cuts_.assign({r.start, r.end});
        for (const PackedIntervals* list :
             std::array<const PackedIntervals*, 3>{&input_, &runtime_, &sync_})
            for (auto k = list->firstEndingAfter(r.start); k.valid() && k->start < r.end;
                 k.next()) {
                if (k->start > r.start) cuts_.push_back(k->start);
                if (k->end < r.end) cuts_.push_back(k->end);
            }
        std::sort(cuts_.begin(), cuts_.end());
        cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
        auto inputAt = input_.firstEndingAfter(r.start);
        auto runtimeAt = runtime_.firstEndingAfter(r.start);
        auto syncAt = sync_.firstEndingAfter(r.start);
        // Moves `at` past the intervals ending by t; whether t is inside the next one.
        const auto insideAt = [](PackedIntervals::Cursor& at, int64_t t) {
            while (at.valid() && at->end <= t) at.next();
            return at.valid() && at->start <= t;
        };
        for (size_t c = 0; c + 1 < cuts_.size(); ++c) {
            const int64_t a = cuts_[c], b = cuts_[c + 1];
            const bool inInput = insideAt(inputAt, a);
            const bool inRuntimeCall = insideAt(runtimeAt, a), inSync = insideAt(syncAt, a);
            const bool inRuntime = inRuntimeCall || inSync;
            const uint8_t cls = inInput                   ? kSegInput
                                : inRuntime || lateLaunch ? kSegHostWait
                                                          : kSegIdle;
            if (last_ && last_->gapId == gapId && last_->cls == cls)
                last_->end = b;
            else
                push({a, b, cls, 0, gapId});
        }
    }
    void finish() {
        if (last_) sink_(*last_);
        last_.reset();
    }

  private:
    void push(const Segment& s) {
        if (last_) sink_(*last_);
        last_ = s;
    }
    const PackedIntervals& input_;
    const PackedIntervals& runtime_;
    const PackedIntervals& sync_;
    const SegmentSink& sink_;
    std::optional<Segment> last_;  // may still grow (the same gap's next cut, same cause)
    std::vector<GapInfo>& gaps_;
    std::vector<int64_t> cuts_;
};

}  // namespace

// Paints a device's timeline over [from, to): the winning activity class at every moment,
// idle stretches split by cause. One sweep over the activities (by start) with a heap of the
// running ones' ends; each stretch is split and handed on as soon as the next one begins, so
// nothing the size of the trace is built (the edges and stretches were 580 MB at 10^7 slices,
// then the segments 300 MB).
void deviceSegments(const PackedActivities& acts, const Gathered& g, int64_t from, int64_t to,
                    std::vector<GapInfo>& gaps, const SegmentSink& sink) {
    IdleSplitter splitter(g, sink, gaps);
    std::optional<Raw> open;  // the stretch being painted: it may still grow
    std::array<int32_t, kDeviceClassCount> count{};
    int64_t t = from;
    auto paintUntil = [&](int64_t until, int64_t minLaunch, int64_t launchTrack) {
        if (until <= t) return;
        uint8_t cls = kSegIdle;
        for (uint8_t c = 0; c < kDeviceClassCount; ++c)
            if (count[c] > 0) {
                cls = c;
                break;
            }
        uint8_t active = 0;
        if (count[kGemm] + count[kAttention] + count[kOtherCompute] > 0) active |= kActiveCompute;
        if (count[kCommunication] > 0) active |= kActiveCommunication;
        for (uint8_t c = kH2D; c <= kOtherCopy; ++c)
            if (count[c] > 0) active |= kActiveCopy;
        if (open && open->cls == cls && open->active == active && open->end == t) {
            open->end = until;
        } else {
            const Raw next{t, until, cls, active, minLaunch, launchTrack};
            if (open) splitter.write(*open, &next);
            open = next;
        }
        t = until;
    };
    // Ends of the running activities, earliest first (with their class).
    using End = std::pair<int64_t, uint8_t>;
    std::priority_queue<End, std::vector<End>, std::greater<End>> running;
    const auto clamped = [&](int64_t x) { return std::clamp(x, from, to); };
    auto next = acts.begin();  // acts come sorted by start
    // The earliest launch of the activities that started at `t`: it dates the stretch from t.
    int64_t pendingLaunch = INT64_MAX, pendingTrack = -1;
    while (next.valid() || !running.empty()) {
        int64_t now = INT64_MAX;
        if (next.valid()) now = clamped(next->start);
        if (!running.empty()) now = std::min(now, clamped(running.top().first));
        paintUntil(now, pendingLaunch, pendingTrack);
        // What changes at `now`: activities starting and ending.
        pendingLaunch = INT64_MAX;
        pendingTrack = -1;
        for (; next.valid() && clamped(next->start) == now; next.next()) {
            const Activity& a = *next;
            ++count[a.cls];
            running.push({a.end, a.cls});
            if (a.launch != INT64_MIN && a.launch < pendingLaunch) {
                pendingLaunch = a.launch;
                pendingTrack = a.launchTrack;
            }
        }
        for (; !running.empty() && clamped(running.top().first) == now; running.pop())
            --count[running.top().second];
        t = std::max(t, now);
    }
    count.fill(0);
    paintUntil(to, INT64_MAX, -1);
    if (open) splitter.write(*open, nullptr);
    splitter.finish();
}

}  // namespace stallscope::trace::steps
