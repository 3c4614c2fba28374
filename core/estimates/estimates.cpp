#include "core/estimates/estimates.h"

#include <QJsonArray>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/sqlite.h"
#include "core/workspace.h"

namespace stallscope::estimates {

std::optional<double> EstimateRow::errorPct() const {
    if (!measuredUs || !(*measuredUs > 0)) return std::nullopt;
    return (predictedUs - *measuredUs) / *measuredUs * 100;
}

EstimateData buildEstimateData(std::vector<EstimateRow> rows) {
    EstimateData data;
    using RegionKey = std::tuple<std::string, std::string, std::string>;  // workload, region, hw
    std::map<RegionKey, double> measured;
    for (const EstimateRow& r : rows)
        if (r.measuredUs)
            measured.emplace(RegionKey{r.workload, r.region, r.hardware}, *r.measuredUs);
    for (EstimateRow& r : rows) {
        if (r.measuredUs) continue;
        if (const auto m = measured.find({r.workload, r.region, r.hardware}); m != measured.end()) {
            r.measuredUs = m->second;
            r.measuredShared = true;
        }
    }
    std::set<std::string> estimators, hardware, workloads;
    for (const EstimateRow& r : rows) {
        if (estimators.insert(r.estimator).second) data.estimators.push_back(r.estimator);
        if (hardware.insert(r.hardware).second) data.hardware.push_back(r.hardware);
        if (workloads.insert(r.workload).second) data.workloads.push_back(r.workload);
    }
    data.rows = std::move(rows);
    return data;
}

EstimateData loadEstimates(const Workspace& workspace, int64_t profileId) {
    sql::Statement st(workspace.db(),
                      "SELECT workload, region, hardware, estimator, predicted_us, measured_us, "
                      "wall_s FROM estimates WHERE profile_id = ? ORDER BY rowid");
    st.bind(1, profileId);
    std::vector<EstimateRow> rows;
    while (st.step()) {
        EstimateRow r{st.text(0), st.text(1), st.text(2), st.text(3), st.real(4), {}, {}};
        if (!st.isNull(5)) r.measuredUs = st.real(5);
        if (!st.isNull(6)) r.wallS = st.real(6);
        rows.push_back(std::move(r));
    }
    return buildEstimateData(std::move(rows));
}

EstimateReport analyzeEstimates(const EstimateData& data) {
    EstimateReport report;

    struct Sum {
        double abs = 0;
        int n = 0;
    };
    std::map<std::pair<std::string, std::string>, Sum> perPair;
    std::map<std::string, Sum> perEstimator;
    std::map<std::string, std::pair<double, int>> wall;  // estimator -> (seconds, timed rows)
    // Per (estimator, workload, hardware): summed predicted and measured latency, counting only
    // regions that have a measurement so both sums cover the same regions.
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> totals;
    for (const EstimateRow& r : data.rows) {
        if (r.wallS) {
            wall[r.estimator].first += *r.wallS;
            ++wall[r.estimator].second;
        }
        // The row's measurement, given or shared (buildEstimateData): the same one the row's
        // error_pct and scatter point use.
        if (!r.measuredUs || !(*r.measuredUs > 0)) continue;
        const double measuredUs = *r.measuredUs;
        const double error = std::abs(r.predictedUs - measuredUs) / measuredUs;
        perPair[{r.estimator, r.hardware}].abs += error;
        ++perPair[{r.estimator, r.hardware}].n;
        perEstimator[r.estimator].abs += error;
        ++perEstimator[r.estimator].n;
        auto& t = totals[{r.estimator, r.workload, r.hardware}];
        t.first += r.predictedUs;
        t.second += measuredUs;
    }
    for (const std::string& e : data.estimators) {
        for (const std::string& h : data.hardware)
            if (const auto it = perPair.find({e, h}); it != perPair.end())
                report.byEstimatorHardware.push_back(
                    {e, h, it->second.abs / it->second.n * 100, it->second.n});
        const auto it = perEstimator.find(e);
        EstimatorCost cost{e, wall[e].first, wall[e].second, 0, 0};
        if (it != perEstimator.end()) {
            report.byEstimator.push_back(
                {e, "", it->second.abs / it->second.n * 100, it->second.n});
            cost.mapePct = it->second.abs / it->second.n * 100;
            cost.rows = it->second.n;
        }
        report.costs.push_back(cost);
    }

    // Transitions between consecutive hardware targets, in the order the file introduces them.
    for (const std::string& e : data.estimators) {
        SpeedupSummary summary{e, 0, 0, 0};
        for (size_t h = 0; h + 1 < data.hardware.size(); ++h) {
            const std::string& from = data.hardware[h];
            const std::string& to = data.hardware[h + 1];
            SpeedupError mean{e, from, to, "", 0, 0, 0, 0, 0};
            for (const std::string& w : data.workloads) {
                const auto a = totals.find({e, w, from});
                const auto b = totals.find({e, w, to});
                if (a == totals.end() || b == totals.end()) continue;
                if (!(b->second.first > 0) || !(b->second.second > 0)) continue;
                const double predicted = a->second.first / b->second.first;
                const double measuredSpeedup = a->second.second / b->second.second;
                const double error = (predicted - measuredSpeedup) / measuredSpeedup * 100;
                report.speedups.push_back(
                    {e, from, to, w, predicted, measuredSpeedup, error, std::abs(error), 1});
                mean.predictedSpeedup += predicted;
                mean.measuredSpeedup += measuredSpeedup;
                mean.errorPct += error;
                mean.absErrorPct += std::abs(error);
                ++mean.workloads;
                summary.meanErrorPct += error;
                summary.meanAbsErrorPct += std::abs(error);
                ++summary.speedups;
            }
            if (mean.workloads == 0) continue;
            mean.predictedSpeedup /= mean.workloads;
            mean.measuredSpeedup /= mean.workloads;
            mean.errorPct /= mean.workloads;
            mean.absErrorPct /= mean.workloads;
            report.speedupMeans.push_back(mean);
        }
        if (summary.speedups > 0) {
            summary.meanErrorPct /= summary.speedups;
            summary.meanAbsErrorPct /= summary.speedups;
            report.speedupMeanAbs.push_back(summary);
        }
    }
    return report;
}

QJsonObject estimatesJson(const EstimateData& data, const EstimateReport& report) {
    auto q = [](const std::string& s) { return QString::fromStdString(s); };
    auto opt = [](const std::optional<double>& v) { return v ? QJsonValue(*v) : QJsonValue(); };
    QJsonArray rows, mape, mapeByEstimator, speedups, speedupMeans, meanAbs, costs;
    for (const EstimateRow& r : data.rows)
        rows.append(QJsonObject{{"workload", q(r.workload)},
                                {"region", q(r.region)},
                                {"hardware", q(r.hardware)},
                                {"estimator", q(r.estimator)},
                                {"predicted_us", r.predictedUs},
                                {"measured_us", opt(r.measuredUs)},
                                {"measured_shared", r.measuredShared},
                                {"wall_s", opt(r.wallS)},
                                {"error_pct", opt(r.errorPct())}});
    for (const EstimatorMape& m : report.byEstimatorHardware)
        mape.append(QJsonObject{{"estimator", q(m.estimator)},
                                {"hardware", q(m.hardware)},
                                {"mape_pct", m.mapePct},
                                {"rows", m.rows}});
    for (const EstimatorMape& m : report.byEstimator)
        mapeByEstimator.append(
            QJsonObject{{"estimator", q(m.estimator)}, {"mape_pct", m.mapePct}, {"rows", m.rows}});
    auto speedupJson = [&](const SpeedupError& s) {
        QJsonObject o{{"estimator", q(s.estimator)},
                      {"from", q(s.from)},
                      {"to", q(s.to)},
                      {"predicted_speedup", s.predictedSpeedup},
                      {"measured_speedup", s.measuredSpeedup},
                      {"error_pct", s.errorPct},
                      {"abs_error_pct", s.absErrorPct}};
        if (s.workload.empty())
            o.insert("workloads", s.workloads);
        else
            o.insert("workload", q(s.workload));
        return o;
    };
    for (const SpeedupError& s : report.speedupMeans) speedupMeans.append(speedupJson(s));
    for (const SpeedupError& s : report.speedups) speedups.append(speedupJson(s));
    // mean_abs_error_pct: mean of |relative speedup error| over the estimator's (workload,
    // transition) pairs; mean_error_pct: the signed mean of the same errors (bias).
    for (const SpeedupSummary& s : report.speedupMeanAbs)
        meanAbs.append(QJsonObject{{"estimator", q(s.estimator)},
                                   {"mean_abs_error_pct", s.meanAbsErrorPct},
                                   {"mean_error_pct", s.meanErrorPct},
                                   {"speedups", s.speedups}});
    for (const EstimatorCost& c : report.costs)
        costs.append(QJsonObject{{"estimator", q(c.estimator)},
                                 {"wall_s", c.wallS},
                                 {"timed_rows", c.timedRows},
                                 {"mape_pct", c.rows ? QJsonValue(c.mapePct) : QJsonValue()},
                                 {"rows", c.rows}});
    return QJsonObject{{"rows", rows},
                       {"mape", mape},
                       {"mape_by_estimator", mapeByEstimator},
                       {"speedup_errors", speedupMeans},
                       {"speedup_errors_by_workload", speedups},
                       {"speedup_mean_abs", meanAbs},
                       {"cost", costs}};
}

}  // namespace stallscope::estimates
