#include "views/common/async_job.h"

#include <QUnhandledException>

namespace stallscope::async {

JobErrors& JobErrors::instance() {
    static JobErrors errors;
    return errors;
}

QString currentExceptionText() {
    try {
        throw;
    } catch (const QUnhandledException& wrapped) {
        // QtConcurrent::run wraps every exception that is not a QException: say the original's.
        if (const std::exception_ptr original = wrapped.exception()) {
            try {
                std::rethrow_exception(original);
            } catch (...) {
                return currentExceptionText();
            }
        }
        return QObject::tr("The background work failed with an unknown error.");
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    } catch (...) {
        return QObject::tr("The background work failed with an unknown error.");
    }
}

}  // namespace stallscope::async
