#include "core/analysis/registry.h"

#include "core/graph/critical_path.h"
#include "core/trace/hosts_registration.h"
#include "core/trace/step_registration.h"
#include "core/transfers/transfers_registration.h"

namespace stallscope::analysis {

// Import runs them in this order; a new analysis is one line here.
const std::vector<const Definition*>& registry() {
    static const std::vector<const Definition*> all{
        &transfers::transfersAnalysis(),
        &trace::stepsAnalysis(),
        &trace::hostsAnalysis(),
        &graph::criticalPathAnalysis(),
    };
    return all;
}

const Definition* find(std::string_view name) {
    for (const Definition* a : registry())
        if (a->name() == name) return a;
    return nullptr;
}

}  // namespace stallscope::analysis
