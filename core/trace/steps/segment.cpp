// A device's (and the host's) timeline painted by class: at every moment the class that wins
// by priority, idle stretches split by what the host was doing.

#include <algorithm>

#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

// Paints a device's timeline over [from, to): the winning activity class at every moment,
// idle stretches split by cause.
std::vector<Segment> deviceSegments(const std::vector<Activity>& acts, const Gathered& g,
                                    int64_t from, int64_t to, std::vector<GapInfo>& gaps) {
    struct Event {
        int64_t t;
        int32_t delta;
        uint32_t act;
    };
    std::vector<Event> events;
    events.reserve(acts.size() * 2);
    for (uint32_t i = 0; i < acts.size(); ++i) {
        events.push_back({acts[i].start, +1, i});
        events.push_back({acts[i].end, -1, i});
    }
    std::sort(events.begin(), events.end(),
              [](const Event& a, const Event& b) { return a.t < b.t; });

    struct Raw {
        int64_t start, end;
        uint8_t cls, active;
        int64_t minLaunch;  // earliest launch of activities starting at `start`
        int64_t launchTrack;
    };
    std::vector<Raw> raw;
    std::array<int32_t, kDeviceClassCount> count{};
    int64_t t = from;
    size_t e = 0;
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
        if (!raw.empty() && raw.back().cls == cls && raw.back().active == active &&
            raw.back().end == t)
            raw.back().end = until;
        else
            raw.push_back({t, until, cls, active, minLaunch, launchTrack});
        t = until;
    };
    int64_t pendingLaunch = INT64_MAX, pendingTrack = -1;
    while (e < events.size()) {
        const int64_t now = std::clamp(events[e].t, from, to);
        paintUntil(now, pendingLaunch, pendingTrack);
        pendingLaunch = INT64_MAX;
        pendingTrack = -1;
        for (; e < events.size() && std::clamp(events[e].t, from, to) == now; ++e) {
            const Activity& a = acts[events[e].act];
            count[a.cls] += events[e].delta;
            if (events[e].delta > 0 && a.launch != INT64_MIN && a.launch < pendingLaunch) {
                pendingLaunch = a.launch;
                pendingTrack = a.launchTrack;
            }
        }
        t = std::max(t, now);
    }
    count.fill(0);
    paintUntil(to, INT64_MAX, -1);

    // Idle stretches split by what the host does (input > runtime call or late launch > idle).
    const std::vector<Interval>& input = g.host[size_t(HostCategory::Input)];
    std::vector<Interval> runtime = g.host[size_t(HostCategory::Runtime)];
    runtime.insert(runtime.end(), g.host[size_t(HostCategory::Sync)].begin(),
                   g.host[size_t(HostCategory::Sync)].end());
    mergeIntervals(runtime);
    std::vector<Segment> out;
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
        const Raw& r = raw[i];
        if (r.cls != kSegIdle) {
            out.push_back({r.start, r.end, r.cls, r.active, -1});
            continue;
        }
        // The next activity was launched after the device went idle: the host was late.
        const bool lateLaunch = i + 1 < raw.size() && raw[i + 1].minLaunch != INT64_MAX &&
                                raw[i + 1].minLaunch > r.start;
        const int64_t gapId = int64_t(gaps.size());
        gaps.push_back({i + 1 < raw.size() ? raw[i + 1].launchTrack : -1});
        // Cut points: edges of input and runtime intervals inside the gap.
        std::vector<int64_t> cuts{r.start, r.end};
        for (const std::vector<Interval>* list :
             std::array<const std::vector<Interval>*, 2>{&input, &runtime})
            for (size_t k = firstEndingAfter(*list, r.start);
                 k < list->size() && (*list)[k].start < r.end; ++k) {
                if ((*list)[k].start > r.start) cuts.push_back((*list)[k].start);
                if ((*list)[k].end < r.end) cuts.push_back((*list)[k].end);
            }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        size_t inputAt = firstEndingAfter(input, r.start);
        size_t runtimeAt = firstEndingAfter(runtime, r.start);
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
            const int64_t a = cuts[c], b = cuts[c + 1];
            while (inputAt < input.size() && input[inputAt].end <= a) ++inputAt;
            while (runtimeAt < runtime.size() && runtime[runtimeAt].end <= a) ++runtimeAt;
            const bool inInput = inputAt < input.size() && input[inputAt].start <= a;
            const bool inRuntime = runtimeAt < runtime.size() && runtime[runtimeAt].start <= a;
            const uint8_t cls = inInput                   ? kSegInput
                                : inRuntime || lateLaunch ? kSegHostWait
                                                          : kSegIdle;
            if (!out.empty() && out.back().gapId == gapId && out.back().cls == cls)
                out.back().end = b;
            else
                out.push_back({a, b, cls, 0, gapId});
        }
    }
    return out;
}

}  // namespace stallscope::trace::steps
