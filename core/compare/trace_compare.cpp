#include "core/compare/trace_compare.h"

#include <QJsonArray>
#include <algorithm>
#include <climits>
#include <cmath>

#include "core/compare/percent.h"
#include "core/trace/trace_store.h"

namespace stallscope::trace {

TraceDurations collectDurations(const TraceStore& store) {
    TraceDurations out;
    out.span = store.end() - store.start();
    std::vector<std::vector<int64_t>> byName;
    std::vector<std::pair<int64_t, int64_t>> topLevel;
    for (const TrackRow& track : store.tracks()) {
        if (track.slices == 0) continue;
        for (const SliceItem& s : store.slices(track.id, INT64_MIN / 2, INT64_MAX / 2, 0)) {
            if (s.kind != ItemKind::Slice) continue;
            if (s.name >= byName.size()) byName.resize(size_t(s.name) + 1);
            byName[s.name].push_back(s.dur);
            ++out.slices;
            if (s.depth == 0) topLevel.emplace_back(s.start, s.end());
        }
    }
    for (size_t id = 0; id < byName.size(); ++id) {
        if (byName[id].empty()) continue;
        std::vector<int64_t>& d = out.byOp[store.text(uint32_t(id))];
        d.insert(d.end(), byName[id].begin(), byName[id].end());
    }
    for (auto& [name, d] : out.byOp) std::sort(d.begin(), d.end());
    // Busy time: the union of top-level slices over all tracks (overlaps count once).
    std::sort(topLevel.begin(), topLevel.end());
    int64_t runStart = 0, runEnd = 0;
    bool open = false;
    for (const auto& [start, end] : topLevel) {
        if (open && start <= runEnd) {
            runEnd = std::max(runEnd, end);
            continue;
        }
        if (open) out.busy += runEnd - runStart;
        runStart = start;
        runEnd = end;
        open = true;
    }
    if (open) out.busy += runEnd - runStart;
    // The same union binned for the minimap (times relative to the start).
    out.busyDensity.assign(TraceDurations::kDensityBins, 0.0);
    const double binWidth = std::max(1.0, double(out.span)) / double(TraceDurations::kDensityBins);
    const int64_t origin = store.start();
    auto addRun = [&](int64_t from, int64_t to) {
        const double s = double(from - origin), e = double(to - origin);
        for (auto bin = size_t(std::max(0.0, s / binWidth));
             bin < TraceDurations::kDensityBins && double(bin) * binWidth < e; ++bin) {
            const double lo = std::max(s, double(bin) * binWidth);
            const double hi = std::min(e, double(bin + 1) * binWidth);
            if (hi > lo) out.busyDensity[bin] += hi - lo;
        }
    };
    open = false;
    for (const auto& [start, end] : topLevel) {
        if (open && start <= runEnd) {
            runEnd = std::max(runEnd, end);
            continue;
        }
        if (open) addRun(runStart, runEnd);
        runStart = start;
        runEnd = end;
        open = true;
    }
    if (open) addRun(runStart, runEnd);
    return out;
}

int64_t nearestRank(const std::vector<int64_t>& sorted, double fraction) {
    if (sorted.empty()) return 0;
    const auto rank = size_t(std::ceil(fraction * double(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

OpSummary summarize(const std::vector<int64_t>& sorted) {
    OpSummary s;
    s.count = sorted.size();
    for (int64_t d : sorted) s.total += d;
    s.mean = s.count ? double(s.total) / double(s.count) : 0.0;
    s.p50 = nearestRank(sorted, 0.5);
    s.p95 = nearestRank(sorted, 0.95);
    return s;
}

double percentChange(double before, double after) {
    return stallscope::percentChange(before, after);
}

double OpDelta::deltaPct() const {
    if (a.count == 0) return b.count == 0 ? 0.0 : 100.0;
    if (b.count == 0) return -100.0;
    return percentChange(double(a.total), double(b.total));
}

bool OpDelta::changed() const {
    return a.count != b.count || std::abs(deltaPct()) >= 1.0;
}

namespace {

// At most `points` steps of the empirical CDF of `values` (sorted), always including the maximum.
std::vector<CdfPoint> cdfOf(std::vector<double>& values, size_t points) {
    std::sort(values.begin(), values.end());
    std::vector<CdfPoint> out;
    const size_t n = values.size();
    if (n == 0) return out;
    const size_t steps = std::min(n, std::max<size_t>(points, 2));
    for (size_t k = 1; k <= steps; ++k) {
        const size_t index = (k * n + steps - 1) / steps - 1;  // ceil(k n / steps) - 1
        const double v = values[index];
        const auto atOrBelow =
            size_t(std::upper_bound(values.begin(), values.end(), v) - values.begin());
        const double fraction = double(atOrBelow) / double(n);
        if (!out.empty() && out.back().value == v) continue;
        out.push_back({v, fraction});
    }
    return out;
}

}  // namespace

double cdfAt(const std::vector<CdfPoint>& curve, double value) {
    double fraction = 0;
    for (const CdfPoint& p : curve) {
        if (p.value > value) break;
        fraction = p.fraction;
    }
    return fraction;
}

QString signedPercent(double pct) {
    return QString::fromStdString(signedPercentText(pct));
}

std::string defaultCdfOp(const TraceDurations& a) {
    std::string best;
    int64_t bestTotal = -1;
    for (const auto& [name, d] : a.byOp) {  // by name: the first of equal totals wins
        int64_t total = 0;
        for (int64_t v : d) total += v;
        if (total > bestTotal) {
            best = name;
            bestTotal = total;
        }
    }
    return best;
}

void setCdfOp(TraceComparison& c, const std::string& cdfOp, size_t cdfPoints) {
    // Normalize each slice by the median of its op in A; ops absent from A (or with a zero
    // median) have no reference and stay out of both curves.
    c.cdfOp = cdfOp.empty() ? defaultCdfOp(c.a) : cdfOp;
    const bool all = c.cdfOp == kAllOps;
    std::vector<double> normA, normB;
    for (const auto& [name, before] : c.a.byOp) {
        if (!all && name != c.cdfOp) continue;
        const int64_t median = nearestRank(before, 0.5);
        if (median <= 0) continue;
        for (int64_t d : before) normA.push_back(double(d) / double(median));
        const auto after = c.b.byOp.find(name);
        if (after == c.b.byOp.end()) continue;
        for (int64_t d : after->second) normB.push_back(double(d) / double(median));
    }
    c.cdfA = cdfOf(normA, cdfPoints);
    c.cdfB = cdfOf(normB, cdfPoints);
}

TraceComparison compareTraces(TraceDurations a, TraceDurations b, const std::string& cdfOp,
                              size_t cdfPoints) {
    TraceComparison c;
    std::map<std::string, OpDelta> ops;
    for (const auto& [name, d] : a.byOp) {
        ops[name].name = name;
        ops[name].a = summarize(d);
        c.opTimeA += ops[name].a.total;
    }
    for (const auto& [name, d] : b.byOp) {
        ops[name].name = name;
        ops[name].b = summarize(d);
        c.opTimeB += ops[name].b.total;
    }
    for (auto& [name, delta] : ops) {
        if (delta.changed()) ++c.opsChanged;
        c.ops.push_back(std::move(delta));
    }
    std::stable_sort(c.ops.begin(), c.ops.end(), [](const OpDelta& x, const OpDelta& y) {
        return std::llabs(x.deltaTotal()) > std::llabs(y.deltaTotal());
    });

    c.a = std::move(a);
    c.b = std::move(b);
    setCdfOp(c, cdfOp, cdfPoints);
    c.summary = QStringLiteral("B vs A: %1 total time, %2 op time, %3 idle time, %4 ops changed")
                    .arg(signedPercent(percentChange(double(c.a.span), double(c.b.span))),
                         signedPercent(percentChange(double(c.opTimeA), double(c.opTimeB))),
                         signedPercent(percentChange(double(c.a.idle()), double(c.b.idle()))))
                    .arg(c.opsChanged);
    return c;
}

namespace {

QJsonObject opJson(const OpSummary& s) {
    return QJsonObject{{"count", qint64(s.count)},
                       {"total", qint64(s.total)},
                       {"mean", s.mean},
                       {"p50", qint64(s.p50)},
                       {"p95", qint64(s.p95)}};
}

QJsonArray cdfJson(const std::vector<CdfPoint>& curve) {
    QJsonArray out;
    for (const CdfPoint& p : curve) out.append(QJsonArray{p.value, p.fraction});
    return out;
}

}  // namespace

QJsonObject comparisonJson(const TraceComparison& c) {
    auto side = [](const TraceDurations& d, int64_t opTime) {
        return QJsonObject{{"total", qint64(d.span)},
                           {"stall", qint64(d.idle())},
                           {"busy", qint64(d.busy)},
                           {"op_time", qint64(opTime)},
                           {"slices", qint64(d.slices)}};
    };
    QJsonObject result;
    result.insert("kind", "trace");
    result.insert("time_unit", "ns");
    result.insert("a", side(c.a, c.opTimeA));
    result.insert("b", side(c.b, c.opTimeB));
    result.insert(
        "delta", QJsonObject{{"total", qint64(c.b.span - c.a.span)},
                             {"total_pct", percentChange(double(c.a.span), double(c.b.span))},
                             {"stall", qint64(c.b.idle() - c.a.idle())},
                             {"stall_pct", percentChange(double(c.a.idle()), double(c.b.idle()))},
                             {"op_time", qint64(c.opTimeB - c.opTimeA)},
                             {"op_time_pct", percentChange(double(c.opTimeA), double(c.opTimeB))}});
    QJsonArray ops;
    for (const OpDelta& op : c.ops)
        ops.append(QJsonObject{{"name", QString::fromStdString(op.name)},
                               {"a", opJson(op.a)},
                               {"b", opJson(op.b)},
                               {"delta", qint64(op.deltaTotal())},
                               {"delta_pct", op.deltaPct()},
                               {"changed", op.changed()}});
    result.insert("ops", ops);
    result.insert("ops_changed", c.opsChanged);
    result.insert("percentiles", kPercentileRule);
    result.insert(
        "cdf", QJsonObject{{"op", QString::fromStdString(c.cdfOp)},
                           {"normalized_to", c.cdfOp == kAllOps ? "median duration of each op in A"
                                                                : "median duration of the op in A"},
                           {"a", cdfJson(c.cdfA)},
                           {"b", cdfJson(c.cdfB)}});
    result.insert("summary", c.summary);
    return result;
}

}  // namespace stallscope::trace
