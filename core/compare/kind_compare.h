#pragma once

#include <QJsonObject>

#include "cpi/cpi.h"
#include "noise/absorption.h"

namespace stallscope {

// Before/after of CPI-stack profiles: per kernel and source, per-category cycle deltas.
// `stall` counts every category outside the GSI Base class.
QJsonObject compareCpi(const cpi::CpiData& a, const cpi::CpiData& b);

// Before/after of noise-injection profiles: curves matched by (machine, region, mode, params)
// with their plateau, k1 and k2; classifications side by side.
QJsonObject compareAbsorption(const noise::AbsorptionReport& a, const noise::AbsorptionReport& b);

}  // namespace stallscope
