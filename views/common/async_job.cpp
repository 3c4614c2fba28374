#include "views/common/async_job.h"

namespace stallscope::async {

JobErrors& JobErrors::instance() {
    static JobErrors errors;
    return errors;
}

QString currentExceptionText() {
    try {
        throw;
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    } catch (...) {
        return QObject::tr("The background work failed with an unknown error.");
    }
}

}  // namespace stallscope::async
