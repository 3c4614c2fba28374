// The step analysis as JSON (both ways: `steps --json` and the stored form), as `suggest`
// entries, and as the text table of `steps`.

#include <QJsonArray>
#include <QJsonDocument>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/errors.h"
#include "core/trace/steps/internal.h"

namespace stallscope::trace {

using steps::nearestRank;
using steps::percentText;
using steps::usText;

namespace {

QJsonObject categoriesJson(const std::array<int64_t, kStepCategoryCount>& ns) {
    QJsonObject o;
    for (size_t c = 0; c < kStepCategoryCount; ++c) o.insert(kCategoryNames[c], qint64(ns[c]));
    return o;
}

QJsonArray namesJson(const auto& names) {
    QJsonArray a;
    for (const char* n : names) a.append(n);
    return a;
}

int64_t num(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(key);
    if (!v.isDouble()) throw Failure(std::string("stored step analysis: missing ") + key);
    return v.toInteger();
}

}  // namespace

QJsonObject toJson(const StepAnalysis& a) {
    QJsonObject o;
    o.insert("version", StepAnalysis::kVersion);
    o.insert("step_source", stepSourceName(a.source));
    o.insert("device_activity", a.deviceActivity);
    if (!a.note.empty()) o.insert("note", QString::fromStdString(a.note));
    if (!a.stepOp.empty()) o.insert("step_op", QString::fromStdString(a.stepOp));
    o.insert("categories", namesJson(kCategoryNames));
    o.insert("host_categories", namesJson(kHostCategoryNames));
    QJsonArray devices;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        QJsonArray tracks;
        for (int64_t t : a.devices[d].tracks) tracks.append(qint64(t));
        devices.append(QJsonObject{{"index", qint64(d)},
                                   {"name", QString::fromStdString(a.devices[d].name)},
                                   {"process_track", qint64(a.devices[d].processTrack)},
                                   {"tracks", tracks}});
    }
    o.insert("devices", devices);

    QJsonArray steps;
    for (const DeviceStepBreakdown& b : a.breakdown) {
        const Step& s = a.steps[size_t(b.step)];
        QJsonObject e{
            {"index", s.index},
            {"name", QString::fromStdString(s.name)},
            {"start", qint64(b.start)},
            {"end", qint64(b.end)},
            {"duration", qint64(b.duration())},
            {"marker_track", qint64(s.markerTrack)},
            {"device", QString::fromStdString(a.devices[size_t(b.device)].name)},
            {"device_index", b.device},
            {"breakdown", categoriesJson(b.ns)},
            {"compute_split", QJsonObject{{"gemm", qint64(b.gemm)},
                                          {"attention", qint64(b.attention)},
                                          {"other", qint64(b.otherCompute)}}},
            {"memcpy_split", QJsonObject{{"h2d", qint64(b.h2d)},
                                         {"d2h", qint64(b.d2h)},
                                         {"d2d", qint64(b.d2d)},
                                         {"peer", qint64(b.peer)},
                                         {"other", qint64(b.otherCopy)}}},
            {"communication",
             QJsonObject{{"total", qint64(b.communicationTotal)},
                         {"hidden", qint64(b.communicationHidden)},
                         {"exposed", qint64(b.communicationTotal - b.communicationHidden)}}},
            {"memcpy_overlap",
             QJsonObject{{"total", qint64(b.memcpyTotal)}, {"hidden", qint64(b.memcpyHidden)}}},
            {"activities", qint64(b.activities)},
            {"kernels", qint64(b.kernels)}};
        if (b.start != s.start || b.end != s.end) {  // a host's own step within a run's step
            e.insert("step_start", qint64(s.start));
            e.insert("step_end", qint64(s.end));
        }
        steps.append(e);
    }
    o.insert("steps", steps);

    QJsonArray host;
    for (const HostStepBreakdown& h : a.host) {
        QJsonObject bd;
        for (size_t c = 0; c < kHostCategoryCount; ++c)
            bd.insert(kHostCategoryNames[c], qint64(h.ns[c]));
        host.append(QJsonObject{{"index", h.step}, {"breakdown", bd}});
    }
    o.insert("host", host);

    // Step time and its spread.
    std::vector<int64_t> durations;
    for (const Step& s : a.steps) durations.push_back(a.stepTime(s.index));
    std::sort(durations.begin(), durations.end());
    QJsonObject stepTime{{"count", qint64(durations.size())}};
    if (!durations.empty()) {
        const double mean =
            double(std::accumulate(durations.begin(), durations.end(), int64_t(0))) /
            double(durations.size());
        double var = 0;
        for (int64_t d : durations) var += (double(d) - mean) * (double(d) - mean);
        const double sd = std::sqrt(var / double(durations.size()));
        stepTime.insert("mean", qint64(std::llround(mean)));
        stepTime.insert("median", qint64(nearestRank(durations, 0.5)));
        stepTime.insert("min", qint64(durations.front()));
        stepTime.insert("max", qint64(durations.back()));
        stepTime.insert("stddev", qint64(std::llround(sd)));
        stepTime.insert("cv_pct", mean > 0 ? 100.0 * sd / mean : 0.0);
    }
    o.insert("step_time", stepTime);

    std::array<int64_t, kStepCategoryCount> totals{};
    int64_t commTotal = 0, commHidden = 0, copyTotal = 0, copyHidden = 0;
    for (const DeviceStepBreakdown& b : a.breakdown) {
        for (size_t c = 0; c < kStepCategoryCount; ++c) totals[c] += b.ns[c];
        commTotal += b.communicationTotal;
        commHidden += b.communicationHidden;
        copyTotal += b.memcpyTotal;
        copyHidden += b.memcpyHidden;
    }
    QJsonObject share;
    for (size_t c = 0; c < kStepCategoryCount; ++c)
        share.insert(kCategoryNames[c], a.sharePct(StepCategory(c)));
    o.insert("totals", QJsonObject{{"device_time", qint64(a.totalDeviceTime())},
                                   {"breakdown", categoriesJson(totals)},
                                   {"share_pct", share}});
    o.insert("overlap",
             QJsonObject{{"communication_total", qint64(commTotal)},
                         {"communication_hidden", qint64(commHidden)},
                         {"communication_exposed", qint64(commTotal - commHidden)},
                         {"communication_hidden_pct",
                          commTotal > 0 ? 100.0 * double(commHidden) / double(commTotal) : 0.0},
                         {"memcpy_total", qint64(copyTotal)},
                         {"memcpy_hidden", qint64(copyHidden)}});
    o.insert("launch_latency", QJsonObject{{"count", qint64(a.launchLatency.count)},
                                           {"negative", qint64(a.launchLatency.negative)},
                                           {"mean", qint64(a.launchLatency.mean)},
                                           {"p50", qint64(a.launchLatency.p50)},
                                           {"p95", qint64(a.launchLatency.p95)},
                                           {"max", qint64(a.launchLatency.max)}});
    o.insert("median_kernel", qint64(a.medianKernel));

    QJsonArray gaps;
    for (const IdleGap& gap : a.gaps)
        gaps.append(QJsonObject{{"step", gap.step},
                                {"device_index", gap.device},
                                {"start", qint64(gap.start)},
                                {"end", qint64(gap.end)},
                                {"duration", qint64(gap.duration())},
                                {"cause", kCategoryNames[size_t(gap.cause)]},
                                {"input", qint64(gap.input)},
                                {"host_wait", qint64(gap.hostWait)},
                                {"idle", qint64(gap.idle)},
                                {"host_activity", QString::fromStdString(gap.hostActivity)},
                                {"host_track", qint64(gap.hostTrack)}});
    o.insert("idle_gaps", gaps);
    QJsonObject gapCounts;
    for (size_t c = size_t(StepCategory::HostWait); c < kStepCategoryCount; ++c)
        gapCounts.insert(kCategoryNames[c], qint64(a.gapCounts[c]));
    o.insert("idle_gap_counts", gapCounts);

    QJsonArray recs;
    for (const StepRecommendation& rec : a.recommendations)
        recs.append(QJsonObject{{"kind", QString::fromStdString(rec.kind)},
                                {"text", QString::fromStdString(rec.text)},
                                {"share_pct", rec.sharePct},
                                {"evidence", rec.evidence},
                                {"start", qint64(rec.start)},
                                {"end", qint64(rec.end)},
                                {"track", qint64(rec.track)}});
    o.insert("recommendations", recs);
    return o;
}

StepAnalysis stepAnalysisFromJson(const QJsonObject& o) {
    if (num(o, "version") != StepAnalysis::kVersion)
        throw Failure("stored step analysis: another version");
    StepAnalysis a;
    a.deviceActivity = o.value("device_activity").toBool(true);
    a.note = o.value("note").toString().toStdString();
    const std::string source = o.value("step_source").toString().toStdString();
    for (StepSource s :
         {StepSource::StepOp, StepSource::ProfilerStep, StepSource::XlaSteps,
          StepSource::XlaModules, StepSource::IterationMarker, StepSource::WholeTrace})
        if (source == stepSourceName(s)) a.source = s;
    a.stepOp = o.value("step_op").toString().toStdString();
    for (const QJsonValue v : o.value("devices").toArray()) {
        const QJsonObject d = v.toObject();
        StepDevice dev;
        dev.name = d.value("name").toString().toStdString();
        dev.processTrack = num(d, "process_track");
        for (const QJsonValue t : d.value("tracks").toArray()) dev.tracks.push_back(t.toInteger());
        a.devices.push_back(std::move(dev));
    }
    for (const QJsonValue v : o.value("steps").toArray()) {
        const QJsonObject e = v.toObject();
        const int index = int(num(e, "index"));
        if (index == int(a.steps.size())) {
            Step s;
            s.index = index;
            s.name = e.value("name").toString().toStdString();
            s.start = e.contains("step_start") ? num(e, "step_start") : num(e, "start");
            s.end = e.contains("step_end") ? num(e, "step_end") : num(e, "end");
            s.markerTrack = num(e, "marker_track");
            a.steps.push_back(std::move(s));
        }
        DeviceStepBreakdown b;
        b.step = index;
        b.device = int(num(e, "device_index"));
        b.start = num(e, "start");
        b.end = num(e, "end");
        if (b.step >= int(a.steps.size()) || b.device >= int(a.devices.size()))
            throw Failure("stored step analysis: step or device out of range");
        const QJsonObject bd = e.value("breakdown").toObject();
        for (size_t c = 0; c < kStepCategoryCount; ++c) b.ns[c] = num(bd, kCategoryNames[c]);
        const QJsonObject cs = e.value("compute_split").toObject();
        b.gemm = num(cs, "gemm");
        b.attention = num(cs, "attention");
        b.otherCompute = num(cs, "other");
        const QJsonObject ms = e.value("memcpy_split").toObject();
        b.h2d = num(ms, "h2d");
        b.d2h = num(ms, "d2h");
        b.d2d = num(ms, "d2d");
        b.peer = num(ms, "peer");
        b.otherCopy = num(ms, "other");
        const QJsonObject comm = e.value("communication").toObject();
        b.communicationTotal = num(comm, "total");
        b.communicationHidden = num(comm, "hidden");
        const QJsonObject mo = e.value("memcpy_overlap").toObject();
        b.memcpyTotal = num(mo, "total");
        b.memcpyHidden = num(mo, "hidden");
        b.activities = num(e, "activities");
        b.kernels = num(e, "kernels");
        a.breakdown.push_back(b);
    }
    for (const QJsonValue v : o.value("host").toArray()) {
        const QJsonObject e = v.toObject();
        HostStepBreakdown h;
        h.step = int(num(e, "index"));
        const QJsonObject bd = e.value("breakdown").toObject();
        for (size_t c = 0; c < kHostCategoryCount; ++c) h.ns[c] = num(bd, kHostCategoryNames[c]);
        a.host.push_back(h);
    }
    const QJsonObject ll = o.value("launch_latency").toObject();
    a.launchLatency.count = uint64_t(num(ll, "count"));
    a.launchLatency.negative = uint64_t(num(ll, "negative"));
    a.launchLatency.mean = num(ll, "mean");
    a.launchLatency.p50 = num(ll, "p50");
    a.launchLatency.p95 = num(ll, "p95");
    a.launchLatency.max = num(ll, "max");
    a.medianKernel = num(o, "median_kernel");
    for (const QJsonValue v : o.value("idle_gaps").toArray()) {
        const QJsonObject e = v.toObject();
        IdleGap gap;
        gap.step = int(num(e, "step"));
        gap.device = int(num(e, "device_index"));
        gap.start = num(e, "start");
        gap.end = num(e, "end");
        gap.input = num(e, "input");
        gap.hostWait = num(e, "host_wait");
        gap.idle = num(e, "idle");
        const std::string cause = e.value("cause").toString().toStdString();
        for (size_t c = 0; c < kStepCategoryCount; ++c)
            if (cause == kCategoryNames[c]) gap.cause = StepCategory(c);
        gap.hostActivity = e.value("host_activity").toString().toStdString();
        gap.hostTrack = num(e, "host_track");
        a.gaps.push_back(std::move(gap));
    }
    const QJsonObject counts = o.value("idle_gap_counts").toObject();
    for (size_t c = size_t(StepCategory::HostWait); c < kStepCategoryCount; ++c)
        a.gapCounts[c] = uint64_t(num(counts, kCategoryNames[c]));
    for (const QJsonValue v : o.value("recommendations").toArray()) {
        const QJsonObject e = v.toObject();
        StepRecommendation rec;
        rec.kind = e.value("kind").toString().toStdString();
        rec.text = e.value("text").toString().toStdString();
        rec.sharePct = e.value("share_pct").toDouble();
        rec.evidence = e.value("evidence").toObject();
        rec.start = num(e, "start");
        rec.end = num(e, "end");
        rec.track = num(e, "track");
        a.recommendations.push_back(std::move(rec));
    }
    return a;
}

QJsonObject stepSuggestionsJson(const StepAnalysis& analysis) {
    QJsonArray out;
    const int64_t all = analysis.totalDeviceTime();
    for (const StepRecommendation& rec : analysis.recommendations)
        out.append(
            QJsonObject{{"kind", QString::fromStdString(rec.kind)},
                        {"text", QString::fromStdString(rec.text)},
                        {"share_pct", rec.sharePct},
                        {"saving_ns", qint64(std::llround(rec.sharePct / 100.0 * double(all)))},
                        {"evidence", rec.evidence},
                        {"start", qint64(rec.start)},
                        {"end", qint64(rec.end)},
                        {"track", qint64(rec.track)}});
    return QJsonObject{{"suggestions", out}};
}

std::string stepsTable(const StepAnalysis& a) {
    std::ostringstream out;
    out << "steps: " << a.steps.size() << " (" << stepSourceName(a.source);
    if (!a.stepOp.empty()) out << ": " << a.stepOp;
    out << "), devices: " << (a.deviceActivity ? a.devices.size() : 0) << "\n";
    if (!a.note.empty()) out << a.note << "\n";
    char line[512];
    // The device column fits the longest name (a run's devices carry their host), up to 48.
    int width = 18;
    for (const StepDevice& d : a.devices) width = std::max(width, int(d.name.size()));
    width = std::min(width, 48);
    std::snprintf(line, sizeof line, "%5s  %-*s %12s", "step", width, "device", "duration");
    out << line;
    for (const char* c : kCategoryNames) {
        std::snprintf(line, sizeof line, " %13s", c);
        out << line;
    }
    out << "\n";
    for (const DeviceStepBreakdown& b : a.breakdown) {
        const Step& s = a.steps[size_t(b.step)];
        std::snprintf(line, sizeof line, "%5d  %-*.*s %12s", s.index, width, width,
                      a.devices[size_t(b.device)].name.c_str(), usText(b.duration()).c_str());
        out << line;
        for (size_t c = 0; c < kStepCategoryCount; ++c) {
            const double pct =
                b.duration() > 0 ? 100.0 * double(b.ns[c]) / double(b.duration()) : 0.0;
            std::snprintf(line, sizeof line, " %12.1f%%", pct);
            out << line;
        }
        out << "\n";
    }
    out << "total";
    for (size_t c = 0; c < kStepCategoryCount; ++c)
        out << "  " << kCategoryNames[c] << " " << percentText(a.sharePct(StepCategory(c)));
    out << "\n";
    if (a.launchLatency.count > 0)
        out << "launch latency (launch -> start): p50 " << usText(a.launchLatency.p50) << ", p95 "
            << usText(a.launchLatency.p95) << " over " << a.launchLatency.count << " kernels\n";
    for (const StepRecommendation& rec : a.recommendations) out << "- " << rec.text << "\n";
    return out.str();
}

}  // namespace stallscope::trace
