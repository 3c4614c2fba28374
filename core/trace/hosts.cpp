#include "core/trace/hosts.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "core/sqlite.h"
#include "core/trace/op_statistics.h"
#include "core/trace/trace_format.h"

namespace stallscope::trace {

namespace {

// Nearest rank: the ceil(n/2)-th smallest, as `steps` does.
int64_t medianOf(std::vector<int64_t> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t rank = std::max<size_t>(1, (values.size() + 1) / 2);
    return values[rank - 1];
}

int64_t num(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(key);
    if (v.isString()) return v.toString().toLongLong();
    return v.toInteger();
}

// Tracks below `top` (itself included); top -1: every track.
std::vector<const TrackRow*> tracksBelow(const TraceStore& store, int64_t top) {
    std::vector<const TrackRow*> out;
    for (const TrackRow& t : store.tracks()) {
        bool inside = top < 0;
        for (const TrackRow* p = &t; p && !inside;
             p = p->parent >= 0 ? store.track(p->parent) : nullptr)
            inside = p->id == top;
        if (inside) out.push_back(&t);
    }
    return out;
}

HostSummary summarize(const TraceStore& store, const RunHost& host, int64_t top) {
    HostSummary s;
    s.host = host;
    StepOptions options;
    options.withinTrack = top;
    const StepAnalysis steps = analyzeSteps(store, options);
    s.stepSource = stepSourceName(steps.source);
    const size_t devices = steps.devices.size();
    s.devices = 0;
    for (const StepDevice& d : steps.devices)
        if (!d.tracks.empty()) ++s.devices;
    for (const Step& step : steps.steps) {
        HostStep hs;
        hs.name = step.name;
        hs.start = step.start;
        hs.duration = step.duration();
        for (size_t d = 0; d < devices; ++d) {
            const size_t at = size_t(step.index) * devices + d;
            if (at >= steps.breakdown.size()) break;
            for (size_t c = 0; c < kStepCategoryCount; ++c)
                hs.breakdown[c] += steps.breakdown[at].ns[c];
        }
        s.steps.push_back(std::move(hs));
    }
    // Per-op totals over the host's slices (level 0: every slice, exact durations).
    std::unordered_map<uint32_t, std::pair<int64_t, uint64_t>> totals;
    sql::Statement read(store.workspace().db(),
                        "SELECT data FROM trace_chunks WHERE profile_id = ? AND track_id = ? AND "
                        "level = 0 ORDER BY seq");
    std::vector<SliceItem> items;
    // Ops are what the devices ran (kernels, XLA ops); a host without devices counts every
    // slice. Step markers are steps, not ops.
    std::unordered_set<int64_t> deviceTracks;
    for (const StepDevice& d : steps.devices) deviceTracks.insert(d.tracks.begin(), d.tracks.end());
    std::unordered_set<std::string> stepNames;
    for (const Step& step : steps.steps) stepNames.insert(step.name);
    for (const TrackRow* t : tracksBelow(store, top)) {
        s.slices += t->slices;
        if (t->slices == 0 || t->kind == TrackKind::Counter) continue;
        if (!deviceTracks.empty() && !deviceTracks.count(t->id)) continue;
        read.bind(1, store.profileId()).bind(2, t->id);
        while (read.step()) {
            items.clear();
            decodeSlices(read.blob(0), items);
            for (const SliceItem& item : items) {
                if (item.kind != ItemKind::Slice || item.unended) continue;
                auto& [total, count] = totals[item.name];
                total += OpStatistics::roundedNs(item.dur, item.durPs);
                ++count;
            }
        }
        read.reset();
    }
    for (const auto& [name, tc] : totals)
        if (!stepNames.count(store.text(name)))
            s.ops.push_back({store.text(name), tc.first, tc.second});
    std::sort(s.ops.begin(), s.ops.end(),
              [](const HostOpTotal& a, const HostOpTotal& b) { return a.name < b.name; });
    return s;
}

QJsonObject breakdownJson(const std::array<int64_t, kStepCategoryCount>& ns) {
    QJsonObject o;
    for (size_t c = 0; c < kStepCategoryCount; ++c) o.insert(kCategoryNames[c], qint64(ns[c]));
    return o;
}

std::string timeText(int64_t ns) {
    char buf[32];
    const double v = double(ns);
    if (std::llabs(ns) >= 1000000000)
        std::snprintf(buf, sizeof buf, "%.3f s", v / 1e9);
    else if (std::llabs(ns) >= 1000000)
        std::snprintf(buf, sizeof buf, "%.2f ms", v / 1e6);
    else if (std::llabs(ns) >= 1000)
        std::snprintf(buf, sizeof buf, "%.1f us", v / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
    return buf;
}

}  // namespace

bool isRunProfile(const QJsonObject& metadata) {
    return metadata.contains(kRunMetadataKey);
}

bool isMergedProfile(const QJsonObject& metadata) {
    return metadata.value(kRunMetadataKey).toObject().value("merged").toBool();
}

std::vector<RunHost> runHosts(const QJsonObject& metadata) {
    std::vector<RunHost> out;
    if (!isRunProfile(metadata)) return out;
    for (const QJsonValue v : metadata.value("hosts").toArray()) {
        const QJsonObject o = v.toObject();
        RunHost h;
        h.index = int(out.size());
        h.name = o.value("name").toString().toStdString();
        h.track = o.contains("track") ? num(o, "track") : -1;
        h.path = o.value("path").toString().toStdString();
        h.hash = o.value("hash").toString().toStdString();
        h.size = num(o, "size");
        h.offsetNs = num(o, "offset_ns");
        h.shard = o.value("shard").toString().toStdString();
        h.shardProfile = num(o, "shard_profile");
        h.shardTrack = o.contains("shard_track") ? num(o, "shard_track") : -1;
        out.push_back(std::move(h));
    }
    return out;
}

std::vector<const TrackRow*> processTracks(const TraceStore& store) {
    const std::vector<RunHost> hosts = runHosts(store.metadata());
    if (hosts.empty()) return store.children(-1);
    std::vector<const TrackRow*> out;
    for (const TrackRow* top : store.children(-1)) {
        const bool isHost = std::any_of(hosts.begin(), hosts.end(),
                                        [&](const RunHost& h) { return h.track == top->id; });
        if (!isHost) {
            out.push_back(top);
            continue;
        }
        for (const TrackRow* process : store.children(top->id)) out.push_back(process);
    }
    return out;
}

int64_t HostSummary::stepTimeMedian() const {
    std::vector<int64_t> durations;
    for (const HostStep& s : steps) durations.push_back(s.duration);
    return medianOf(std::move(durations));
}

HostSummary summarizeHost(const TraceStore& store, const RunHost& host) {
    if (host.track < 0)
        throw InputError("host " + host.name +
                         " has no timeline in this profile (merged from "
                         "shards: its timeline is in " +
                         host.shard + ")");
    return summarize(store, host, host.track);
}

HostSummary summarizeProfile(const TraceStore& store, const std::string& name) {
    RunHost host;
    host.name = name;
    return summarize(store, host, -1);
}

HostsAnalysis combineHosts(std::vector<HostSummary> hosts) {
    HostsAnalysis a;
    a.hosts = std::move(hosts);
    const size_t n = a.hosts.size();
    for (size_t h = 0; h < n; ++h) a.hosts[h].host.index = int(h);

    // Steps: by name when each host names its steps uniquely, else by position.
    a.matchedByName = n > 0;
    for (const HostSummary& s : a.hosts) {
        std::set<std::string> names;
        for (const HostStep& st : s.steps) names.insert(st.name);
        if (names.size() != s.steps.size() || s.steps.empty()) a.matchedByName = false;
    }
    if (a.matchedByName) {
        std::map<std::string, int> indexOf;
        for (const HostSummary& s : a.hosts)
            for (const HostStep& st : s.steps)
                if (indexOf.emplace(st.name, int(a.steps.size())).second)
                    a.steps.push_back(st.name);
        a.stepOfHost.assign(a.steps.size(), std::vector<int>(n, -1));
        for (size_t h = 0; h < n; ++h)
            for (size_t k = 0; k < a.hosts[h].steps.size(); ++k)
                a.stepOfHost[size_t(indexOf[a.hosts[h].steps[k].name])][h] = int(k);
    } else {
        size_t most = 0;
        for (const HostSummary& s : a.hosts) most = std::max(most, s.steps.size());
        a.stepOfHost.assign(most, std::vector<int>(n, -1));
        for (size_t k = 0; k < most; ++k) {
            a.steps.push_back("step " + std::to_string(k));
            for (size_t h = 0; h < n; ++h)
                if (k < a.hosts[h].steps.size()) a.stepOfHost[k][h] = int(k);
        }
    }

    // The slowest host of each step, against the step's median across hosts.
    for (size_t k = 0; k < a.steps.size(); ++k) {
        std::vector<int64_t> durations;
        int slowest = -1;
        int64_t longest = -1;
        for (size_t h = 0; h < n; ++h) {
            const int at = a.stepOfHost[k][h];
            if (at < 0) continue;
            const int64_t d = a.hosts[h].steps[size_t(at)].duration;
            durations.push_back(d);
            if (d > longest) {
                longest = d;
                slowest = int(h);
            }
        }
        if (durations.size() < 2) continue;
        Straggler s;
        s.step = int(k);
        s.stepName = a.steps[k];
        s.host = slowest;
        s.hostName = a.hosts[size_t(slowest)].host.name;
        s.stepTime = longest;
        s.medianStepTime = medianOf(durations);
        s.excessPct = s.medianStepTime > 0
                          ? double(longest - s.medianStepTime) / double(s.medianStepTime) * 100.0
                          : 0.0;
        a.stragglers.push_back(std::move(s));
    }

    // Ops whose per-host total varies most (absolute spread: a relative one would favour ops
    // of a few microseconds).
    std::map<std::string, std::vector<int64_t>> perHost;
    for (size_t h = 0; h < n; ++h)
        for (const HostOpTotal& op : a.hosts[h].ops) {
            std::vector<int64_t>& totals = perHost[op.name];
            totals.resize(n, 0);
            totals[h] = op.total;
        }
    if (n >= 2) {
        for (auto& [name, totals] : perHost) {
            OpVariation v;
            v.name = name;
            v.perHost = std::move(totals);
            v.min = *std::min_element(v.perHost.begin(), v.perHost.end());
            v.max = *std::max_element(v.perHost.begin(), v.perHost.end());
            v.median = medianOf(v.perHost);
            v.slowestHost =
                int(std::max_element(v.perHost.begin(), v.perHost.end()) - v.perHost.begin());
            v.spreadPct = v.median > 0 ? double(v.spread()) / double(v.median) * 100.0 : 0.0;
            if (v.spread() > 0) a.variableOps.push_back(std::move(v));
        }
        std::sort(a.variableOps.begin(), a.variableOps.end(),
                  [](const OpVariation& x, const OpVariation& y) {
                      return x.spread() != y.spread() ? x.spread() > y.spread() : x.name < y.name;
                  });
        if (a.variableOps.size() > HostsAnalysis::kMaxOps)
            a.variableOps.resize(HostsAnalysis::kMaxOps);
    }
    return a;
}

HostsAnalysis analyzeHosts(const TraceStore& store) {
    const std::vector<RunHost> hosts = runHosts(store.metadata());
    std::vector<HostSummary> summaries;
    if (hosts.empty()) {
        summaries.push_back(summarizeProfile(store, "profile"));
    } else {
        for (const RunHost& h : hosts) summaries.push_back(summarizeHost(store, h));
    }
    return combineHosts(std::move(summaries));
}

QJsonObject summaryToJson(const HostSummary& s) {
    QJsonArray steps, ops;
    for (const HostStep& st : s.steps) {
        QJsonArray b;
        for (int64_t v : st.breakdown) b.append(qint64(v));
        steps.append(QJsonObject{{"name", QString::fromStdString(st.name)},
                                 {"start", qint64(st.start)},
                                 {"duration", qint64(st.duration)},
                                 {"breakdown", b}});
    }
    for (const HostOpTotal& op : s.ops)
        ops.append(QJsonArray{QString::fromStdString(op.name), qint64(op.total), qint64(op.count)});
    return QJsonObject{{"name", QString::fromStdString(s.host.name)},
                       {"track", qint64(s.host.track)},
                       {"path", QString::fromStdString(s.host.path)},
                       {"hash", QString::fromStdString(s.host.hash)},
                       {"size", qint64(s.host.size)},
                       {"offset_ns", qint64(s.host.offsetNs)},
                       {"shard", QString::fromStdString(s.host.shard)},
                       {"shard_profile", qint64(s.host.shardProfile)},
                       {"shard_track", qint64(s.host.shardTrack)},
                       {"slices", qint64(s.slices)},
                       {"devices", s.devices},
                       {"step_source", QString::fromStdString(s.stepSource)},
                       {"steps", steps},
                       {"ops", ops}};
}

HostSummary summaryFromJson(const QJsonObject& o) {
    if (!o.contains("name") || !o.value("steps").isArray())
        throw Failure("stored host summary is malformed");
    HostSummary s;
    s.host.name = o.value("name").toString().toStdString();
    s.host.track = num(o, "track");
    s.host.path = o.value("path").toString().toStdString();
    s.host.hash = o.value("hash").toString().toStdString();
    s.host.size = num(o, "size");
    s.host.offsetNs = num(o, "offset_ns");
    s.host.shard = o.value("shard").toString().toStdString();
    s.host.shardProfile = num(o, "shard_profile");
    s.host.shardTrack = num(o, "shard_track");
    s.slices = uint64_t(num(o, "slices"));
    s.devices = int(num(o, "devices"));
    s.stepSource = o.value("step_source").toString().toStdString();
    for (const QJsonValue v : o.value("steps").toArray()) {
        const QJsonObject st = v.toObject();
        HostStep hs;
        hs.name = st.value("name").toString().toStdString();
        hs.start = num(st, "start");
        hs.duration = num(st, "duration");
        const QJsonArray b = st.value("breakdown").toArray();
        for (size_t c = 0; c < kStepCategoryCount && c < size_t(b.size()); ++c)
            hs.breakdown[c] = b.at(qsizetype(c)).toInteger();
        s.steps.push_back(std::move(hs));
    }
    for (const QJsonValue v : o.value("ops").toArray()) {
        const QJsonArray op = v.toArray();
        if (op.size() != 3) throw Failure("stored host summary: malformed op total");
        s.ops.push_back({op.at(0).toString().toStdString(), op.at(1).toInteger(),
                         uint64_t(op.at(2).toInteger())});
    }
    return s;
}

QJsonObject toJson(const HostsAnalysis& a) {
    QJsonArray hosts, steps, stragglers, ops;
    for (const HostSummary& s : a.hosts) {
        std::array<int64_t, kStepCategoryCount> total{};
        int64_t sum = 0, longest = 0;
        for (const HostStep& st : s.steps) {
            for (size_t c = 0; c < kStepCategoryCount; ++c) total[c] += st.breakdown[c];
            sum += st.duration;
            longest = std::max(longest, st.duration);
        }
        QJsonObject o{
            {"name", QString::fromStdString(s.host.name)},
            {"source", QString::fromStdString(s.host.path)},
            {"slices", qint64(s.slices)},
            {"steps", qint64(s.steps.size())},
            {"step_time_median", qint64(s.stepTimeMedian())},
            {"step_time_mean", s.steps.empty() ? 0.0 : double(sum) / double(s.steps.size())},
            {"step_time_max", qint64(longest)},
            {"step_source", QString::fromStdString(s.stepSource)},
            {"devices", s.devices},
            {"offset_ns", qint64(s.host.offsetNs)},
            {"breakdown", breakdownJson(total)}};
        if (!s.host.hash.empty()) o.insert("hash", QString::fromStdString(s.host.hash));
        if (s.host.track >= 0) o.insert("track", qint64(s.host.track));
        if (!s.host.shard.empty()) {
            o.insert("shard", QString::fromStdString(s.host.shard));
            o.insert("shard_profile", qint64(s.host.shardProfile));
            o.insert("shard_track", qint64(s.host.shardTrack));
        }
        hosts.append(o);
    }
    for (size_t k = 0; k < a.steps.size(); ++k) {
        QJsonArray times;
        std::vector<int64_t> present;
        for (size_t h = 0; h < a.hosts.size(); ++h) {
            const int at = a.stepOfHost[k][h];
            if (at < 0) {
                times.append(QJsonValue());
                continue;
            }
            const int64_t d = a.hosts[h].steps[size_t(at)].duration;
            times.append(qint64(d));
            present.push_back(d);
        }
        steps.append(QJsonObject{{"step", qint64(k)},
                                 {"name", QString::fromStdString(a.steps[k])},
                                 {"host_times", times},
                                 {"median", qint64(medianOf(present))}});
    }
    std::vector<int> stragglerSteps(a.hosts.size(), 0);
    for (const Straggler& s : a.stragglers) {
        ++stragglerSteps[size_t(s.host)];
        stragglers.append(QJsonObject{{"step", s.step},
                                      {"step_name", QString::fromStdString(s.stepName)},
                                      {"host", QString::fromStdString(s.hostName)},
                                      {"host_index", s.host},
                                      {"step_time", qint64(s.stepTime)},
                                      {"median_step_time", qint64(s.medianStepTime)},
                                      {"excess_ns", qint64(s.stepTime - s.medianStepTime)},
                                      {"excess_pct", s.excessPct}});
    }
    for (const OpVariation& v : a.variableOps) {
        QJsonObject perHost;
        for (size_t h = 0; h < a.hosts.size() && h < v.perHost.size(); ++h)
            perHost.insert(QString::fromStdString(a.hosts[h].host.name), qint64(v.perHost[h]));
        ops.append(QJsonObject{
            {"name", QString::fromStdString(v.name)},
            {"spread_ns", qint64(v.spread())},
            {"spread_pct", v.spreadPct},
            {"min", qint64(v.min)},
            {"max", qint64(v.max)},
            {"median", qint64(v.median)},
            {"slowest_host", QString::fromStdString(a.hosts[size_t(v.slowestHost)].host.name)},
            {"per_host", perHost}});
    }
    QJsonObject out{{"version", HostsAnalysis::kVersion},
                    {"hosts", hosts},
                    {"steps", steps},
                    {"steps_matched_by", a.matchedByName ? "name" : "position"},
                    {"stragglers", stragglers},
                    {"variable_ops", ops}};
    if (!ops.isEmpty()) out.insert("op_varying_most", ops.at(0));
    // The slowest host of the run: the most time over the steps' medians, summed over steps.
    std::vector<int64_t> excess(a.hosts.size(), 0);
    for (size_t k = 0; k < a.steps.size(); ++k) {
        std::vector<int64_t> present;
        for (size_t h = 0; h < a.hosts.size(); ++h)
            if (a.stepOfHost[k][h] >= 0)
                present.push_back(a.hosts[h].steps[size_t(a.stepOfHost[k][h])].duration);
        if (present.size() < 2) continue;
        const int64_t median = medianOf(present);
        for (size_t h = 0; h < a.hosts.size(); ++h)
            if (a.stepOfHost[k][h] >= 0)
                excess[h] += std::max<int64_t>(
                    0, a.hosts[h].steps[size_t(a.stepOfHost[k][h])].duration - median);
    }
    int worst = -1;
    for (size_t h = 0; h < a.hosts.size(); ++h)
        if (excess[h] > 0 && (worst < 0 || excess[h] > excess[size_t(worst)])) worst = int(h);
    if (worst >= 0)
        out.insert(
            "slowest_host",
            QJsonObject{{"host", QString::fromStdString(a.hosts[size_t(worst)].host.name)},
                        {"excess_ns", qint64(excess[size_t(worst)])},
                        {"straggler_steps", stragglerSteps[size_t(worst)]},
                        {"step_time_median", qint64(a.hosts[size_t(worst)].stepTimeMedian())}});
    return out;
}

std::string hostsTable(const HostsAnalysis& a) {
    std::ostringstream out;
    out << "hosts: " << a.hosts.size() << ", steps matched across hosts: " << a.steps.size()
        << " (by " << (a.matchedByName ? "name" : "position") << ")\n";
    char line[512];
    std::snprintf(line, sizeof line, "%-28s %10s %6s %14s %14s  %s\n", "host", "slices", "steps",
                  "median step", "max step", "compute / comm. / idle");
    out << line;
    for (const HostSummary& s : a.hosts) {
        std::array<int64_t, kStepCategoryCount> total{};
        int64_t longest = 0;
        for (const HostStep& st : s.steps) {
            for (size_t c = 0; c < kStepCategoryCount; ++c) total[c] += st.breakdown[c];
            longest = std::max(longest, st.duration);
        }
        int64_t all = 0;
        for (int64_t v : total) all += v;
        auto pct = [&](StepCategory c) {
            return all ? 100.0 * double(total[size_t(c)]) / double(all) : 0.0;
        };
        std::snprintf(
            line, sizeof line, "%-28s %10llu %6zu %14s %14s  %.1f %% / %.1f %% / %.1f %%\n",
            s.host.name.c_str(), static_cast<unsigned long long>(s.slices), s.steps.size(),
            timeText(s.stepTimeMedian()).c_str(), timeText(longest).c_str(),
            pct(StepCategory::Compute), pct(StepCategory::Communication), pct(StepCategory::Idle));
        out << line;
    }
    if (!a.stragglers.empty()) {
        out << "slowest host per step:\n";
        for (const Straggler& s : a.stragglers) {
            std::snprintf(line, sizeof line, "  %-24s %-28s %14s  +%.1f %% over the median %s\n",
                          s.stepName.c_str(), s.hostName.c_str(), timeText(s.stepTime).c_str(),
                          s.excessPct, timeText(s.medianStepTime).c_str());
            out << line;
        }
    }
    if (!a.variableOps.empty()) {
        const OpVariation& v = a.variableOps.front();
        out << "op whose per-host time varies most: " << v.name << " (" << timeText(v.min) << " to "
            << timeText(v.max) << ", slowest on " << a.hosts[size_t(v.slowestHost)].host.name
            << ")\n";
    }
    return out.str();
}

}  // namespace stallscope::trace
