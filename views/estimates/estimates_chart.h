#pragma once

#include <QPainter>
#include <QRectF>
#include <vector>

#include "core/estimates/estimates.h"

namespace stallscope::charts {

// A drawn point of the scatter, for hover and tests.
struct ScatterPoint {
    QPointF position;
    size_t row = 0;  // index into EstimateData::rows
};

// Predicted against measured latency, log-log, one colour per estimator and one marker shape
// per hardware target, with the y = x line.
void paintEstimateScatter(QPainter& painter, const QRectF& area,
                          const estimates::EstimateData& data,
                          std::vector<ScatterPoint>* points = nullptr);

// MAPE per estimator (bars, legend) on each hardware target (groups), y axis in percent.
void paintEstimateMape(QPainter& painter, const QRectF& area, const estimates::EstimateData& data,
                       const estimates::EstimateReport& report);

// Relative speedup errors across hardware transitions (paper Table V): one row per transition
// and estimator (mean over workloads), then each estimator's mean absolute error, and its cost
// (wall time) against its MAPE.
void paintSpeedupTable(QPainter& painter, const QRectF& area,
                       const estimates::EstimateReport& report);

}  // namespace stallscope::charts
