// A multi-host run analysed host by host, joined: devices of every host, steps matched by
// name (or position), and per kind of recommendation the host where it weighs most.

#include <QJsonArray>
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/trace/hosts.h"
#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

namespace {

// Steps of a run's hosts matched by name when every host names its steps uniquely (the same
// ProfilerStep#N on every rank), else by position. Returns per host the joined index of each
// of its steps, and the joined steps in order of first appearance.
std::vector<std::vector<int>> matchHostSteps(const std::vector<StepAnalysis>& hosts,
                                             std::vector<Step>& joined) {
    bool byName = true;
    for (const StepAnalysis& h : hosts) {
        std::unordered_set<std::string> names;
        for (const Step& s : h.steps) byName = byName && names.insert(s.name).second;
    }
    std::vector<std::vector<int>> index(hosts.size());
    std::unordered_map<std::string, int> joinedOfName;
    for (size_t h = 0; h < hosts.size(); ++h)
        for (size_t i = 0; i < hosts[h].steps.size(); ++i) {
            const Step& s = hosts[h].steps[i];
            int j = int(i);
            if (byName) {
                const auto [it, added] = joinedOfName.try_emplace(s.name, int(joined.size()));
                j = it->second;
            }
            if (j >= int(joined.size())) {
                Step first = s;
                first.index = j;
                joined.push_back(first);
            }
            Step& into = joined[size_t(j)];
            into.start = std::min(into.start, s.start);
            into.end = std::max(into.end, s.end);
            index[h].push_back(j);
        }
    return index;
}

}  // namespace

// Joins the hosts' analyses (see analyzeSteps).
StepAnalysis joinHosts(std::vector<StepAnalysis> hosts, const std::vector<RunHost>& runHosts,
                       std::vector<KernelFigures>& figures) {
    StepAnalysis r;
    r.source = hosts.front().source;
    r.stepOp = hosts.front().stepOp;
    for (const StepAnalysis& h : hosts) {
        r.deviceActivity = r.deviceActivity && h.deviceActivity;
        if (r.note.empty()) r.note = h.note;
    }
    const std::vector<std::vector<int>> stepOf = matchHostSteps(hosts, r.steps);
    std::vector<int> firstDevice;
    for (size_t h = 0; h < hosts.size(); ++h) {
        firstDevice.push_back(int(r.devices.size()));
        for (StepDevice d : hosts[h].devices) {
            if (!d.name.starts_with(runHosts[h].name)) d.name = runHosts[h].name + " " + d.name;
            r.devices.push_back(std::move(d));
        }
    }
    const size_t devices = r.devices.size();
    r.breakdown.resize(r.steps.size() * devices);
    for (size_t j = 0; j < r.steps.size(); ++j)
        for (size_t d = 0; d < devices; ++d) {  // a host without the step: an empty span
            DeviceStepBreakdown& b = r.breakdown[j * devices + d];
            b.step = int(j);
            b.device = int(d);
            b.start = b.end = r.steps[j].start;
        }
    r.host.resize(r.steps.size());
    for (size_t j = 0; j < r.steps.size(); ++j) r.host[j].step = int(j);
    Figures latencies, computeDurations;
    for (size_t h = 0; h < hosts.size(); ++h) {
        StepAnalysis& a = hosts[h];
        for (DeviceStepBreakdown b : a.breakdown) {
            b.step = stepOf[h][size_t(b.step)];
            b.device += firstDevice[h];
            r.breakdown[size_t(b.step) * devices + size_t(b.device)] = b;
        }
        for (const HostStepBreakdown& hs : a.host) {
            HostStepBreakdown& into = r.host[size_t(stepOf[h][size_t(hs.step)])];
            for (size_t c = 0; c < kHostCategoryCount; ++c) into.ns[c] += hs.ns[c];
        }
        for (IdleGap gap : a.gaps) {
            gap.step = stepOf[h][size_t(gap.step)];
            gap.device += firstDevice[h];
            r.gaps.push_back(std::move(gap));
        }
        for (size_t c = 0; c < kStepCategoryCount; ++c) r.gapCounts[c] += a.gapCounts[c];
        r.launchLatency.negative += a.launchLatency.negative;
        latencies.append(figures[h].latencies);
        computeDurations.append(figures[h].computeDurations);
    }
    std::stable_sort(r.gaps.begin(), r.gaps.end(), [](const IdleGap& x, const IdleGap& y) {
        return x.duration() > y.duration();
    });
    if (r.gaps.size() > StepAnalysis::kMaxGaps) r.gaps.resize(StepAnalysis::kMaxGaps);
    setKernelFigures(r, latencies, computeDurations);

    // Per kind, the host where it weighs most speaks for the run; its share is what every
    // host's recommendation of that kind recovers, over the run's device time.
    const double runTime = double(std::max<int64_t>(r.totalDeviceTime(), 1));
    std::map<std::string, std::pair<double, std::vector<size_t>>> kinds;  // recovered ns, hosts
    std::map<std::string, std::pair<double, StepRecommendation>> strongest;
    for (size_t h = 0; h < hosts.size(); ++h) {
        const double hostTime = double(hosts[h].totalDeviceTime());
        for (const StepRecommendation& rec : hosts[h].recommendations) {
            const double recovered = rec.sharePct / 100.0 * hostTime;
            auto& [ns, which] = kinds[rec.kind];
            ns += recovered;
            which.push_back(h);
            auto it = strongest.find(rec.kind);
            if (it == strongest.end() || recovered > it->second.first) {
                StepRecommendation named = rec;
                named.text = runHosts[h].name + ": " + rec.text;
                strongest[rec.kind] = {recovered, std::move(named)};
            }
        }
    }
    for (auto& [kind, entry] : strongest) {
        StepRecommendation rec = std::move(entry.second);
        const auto& [recovered, which] = kinds[kind];
        rec.sharePct = 100.0 * recovered / runTime;
        QJsonArray names;
        for (size_t h : which) names.append(QString::fromStdString(runHosts[h].name));
        rec.evidence.insert("hosts", names);
        if (which.size() > 1)
            rec.text += " (" + std::to_string(which.size()) + " hosts; " +
                        percentText(rec.sharePct) + " of the run's device time in all)";
        r.recommendations.push_back(std::move(rec));
    }
    std::stable_sort(r.recommendations.begin(), r.recommendations.end(),
                     [](const StepRecommendation& x, const StepRecommendation& y) {
                         return x.sharePct > y.sharePct;
                     });
    return r;
}

}  // namespace stallscope::trace::steps
