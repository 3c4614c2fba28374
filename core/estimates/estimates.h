#pragma once

#include <QJsonObject>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stallscope {
class Workspace;
}

namespace stallscope::estimates {

// One row of CONTRACT §4: an estimator's predicted latency of a region on a hardware target.
struct EstimateRow {
    std::string workload, region, hardware, estimator;
    double predictedUs = 0;
    std::optional<double> measuredUs;
    std::optional<double> wallS;
    // buildEstimateData fills an empty measuredUs from another row of the same (workload,
    // region, hardware): a file may give the measurement once, for one estimator. Error, MAPE,
    // scatter and JSON all use measuredUs, so every estimator is judged against the same value.
    bool measuredShared = false;
    // Signed relative error in percent, when measured.
    std::optional<double> errorPct() const;
};

struct EstimateData {
    std::vector<EstimateRow> rows;        // file order
    std::vector<std::string> estimators;  // first-appearance order
    std::vector<std::string> hardware;    // first-appearance order: defines the transitions
    std::vector<std::string> workloads;
};

// Orders estimators, hardware and workloads by first appearance and shares measurements: a
// row without measured_us takes the first measurement given for its (workload, region,
// hardware).
EstimateData buildEstimateData(std::vector<EstimateRow> rows);
// SQL: call off the GUI thread.
EstimateData loadEstimates(const Workspace& workspace, int64_t profileId);

struct EstimatorMape {
    std::string estimator;
    std::string hardware;  // empty: over all hardware
    double mapePct = 0;
    int rows = 0;
};

// One hardware transition (StableHLO paper Table V). Speedup S(A->B) = T_A / T_B over the
// workload's total latency (sum of its regions); the relative speedup error is
// (S_pred - S_meas) / S_meas.
struct SpeedupError {
    std::string estimator, from, to;
    std::string workload;  // empty: mean over workloads
    double predictedSpeedup = 0, measuredSpeedup = 0;
    double errorPct = 0;     // signed; for the mean row: mean of the signed errors
    double absErrorPct = 0;  // for the mean row: mean of the absolute errors
    int workloads = 0;
};

// Table V's last row for one estimator, over every (workload, transition) speedup it has:
// mean_abs_error_pct = mean of |error| (errors of opposite sign do not cancel), and
// mean_error_pct = mean of the signed errors (the bias).
struct SpeedupSummary {
    std::string estimator;
    double meanAbsErrorPct = 0;
    double meanErrorPct = 0;
    int speedups = 0;  // (workload, transition) pairs
};

// Estimator cost against accuracy: total wall time of its runs and its MAPE.
struct EstimatorCost {
    std::string estimator;
    double wallS = 0;
    int timedRows = 0;
    double mapePct = 0;
    int rows = 0;
};

struct EstimateReport {
    std::vector<EstimatorMape> byEstimatorHardware;
    std::vector<EstimatorMape> byEstimator;
    std::vector<SpeedupError> speedups;          // per workload and transition
    std::vector<SpeedupError> speedupMeans;      // per estimator and transition, over workloads
    std::vector<SpeedupSummary> speedupMeanAbs;  // per estimator (Table V last row)
    std::vector<EstimatorCost> costs;
};

// MAPE, speedup errors and cost over the rows with a (given or shared) measurement.
EstimateReport analyzeEstimates(const EstimateData& data);

// `estimates PROFILE --json` (CONTRACT §5).
QJsonObject estimatesJson(const EstimateData& data, const EstimateReport& report);

}  // namespace stallscope::estimates
