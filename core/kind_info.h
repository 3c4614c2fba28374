#pragma once

#include <QJsonObject>

#include <cstdint>

namespace stallscope {

class Workspace;

// `info` keys of CONTRACT §5 (tracks, slices, counters, flows, start, end, time_unit, top_ops)
// for the kinds that are tables rather than timelines, so scripts can read every profile alike:
//  - cpi: tracks = sources (hw and each model), slices = kernel stacks, counters = categories;
//    the range spans the summed cycles of the first source; top_ops are the costliest kernels.
//  - estimates: tracks = hardware targets, slices = rows, counters = estimators; the range spans
//    the summed measured (else predicted) µs; top_ops are regions by that time.
//  - noise: tracks = curves, slices = timed runs, counters = noise modes; the range spans the
//    summed run time; top_ops are regions by summed run time.
// SQL: call off the GUI thread.
QJsonObject cpiInfoJson(const Workspace& workspace, int64_t profileId, int topOps = 10);
QJsonObject estimatesInfoJson(const Workspace& workspace, int64_t profileId, int topOps = 10);
QJsonObject noiseInfoJson(const Workspace& workspace, int64_t profileId, int topOps = 10);

}  // namespace stallscope
