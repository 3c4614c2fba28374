#include "core/trace/trace_store.h"
#include "core/transfers/derive_common.h"

namespace stallscope::transfers::detail {
Analysis deriveKineto(const trace::TraceStore&) {
    return {};
}
}  // namespace stallscope::transfers::detail
