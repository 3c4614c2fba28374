#pragma once

// What the absorption view's files share (internal to views/noise): number and text formats,
// group membership and the comparison table's columns.

#include <QString>
#include <QStringList>
#include <string>

#include "views/noise/absorption_view.h"

namespace stallscope::absorption_parts {

inline QString number(double v) {
    return QString::number(v, 'g', 4);
}

inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

inline bool inGroup(const noise::Curve& c, const CurveGroup& g) {
    return c.machine == g.machine && c.region == g.region && c.params == g.params;
}

inline const QStringList kTableHeader{"machine",     "region",  "params",  "cores",
                                      "performance", "FP abs.", "L1 abs.", "mem abs.",
                                      "int abs.",    "class",   "evidence"};

inline QStringList rowCells(const ComparisonRow& r) {
    return {r.machine, r.region, r.params,  r.cores, r.performance, r.fp,
            r.l1,      r.memory, r.integer, r.cls,   r.evidence};
}

}  // namespace stallscope::absorption_parts
