#pragma once

// async::JobSlot can run `done` (and its error handler) inside start(): when the work finishes
// before start() attaches its continuation, Qt 6.4's QFuture::then(context) calls a context on
// the same thread directly. Code that emits signals from `done`, or changes what called start(),
// starts its jobs through startQueued() instead: the result always arrives from the event loop,
// after start()'s caller has returned, and only while no newer job was started on the slot.

#include <QMetaObject>
#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>
#include <utility>

#include "views/common/async_job.h"

namespace stallscope::async {

// `slot` must belong to `owner` (a member of it), so it lives while `owner` does.
template <typename Work, typename Done>
uint64_t startQueued(JobSlot& slot, QObject* owner, Work work, Done done) {
    auto id = std::make_shared<uint64_t>(0);
    *id = slot.start(std::move(work),
                     [&slot, owner, id, done = std::move(done)](auto... result) mutable {
                         QMetaObject::invokeMethod(
                             owner,
                             [&slot, id, done, ... values = std::move(result)]() mutable {
                                 if (slot.currentJob() == *id) done(std::move(values)...);
                             },
                             Qt::QueuedConnection);
                     });
    return *id;
}

// An error handler for a JobSlot of `owner` that reports from the event loop too.
inline ErrorHandler queuedErrors(QObject* owner, ErrorHandler handler) {
    return [owner, handler = std::move(handler)](const QString& message) {
        QMetaObject::invokeMethod(
            owner, [handler, message] { handler(message); }, Qt::QueuedConnection);
    };
}

}  // namespace stallscope::async
