#pragma once

// One way to run view work off the GUI thread (SQL, parsing, layout of large data):
//  - every job has an id; starting a job on a slot supersedes the one running there (its result
//    is dropped, never shown over a newer one);
//  - results reach the owner on the GUI thread and only while the owner lives (no destructor
//    waits for a worker; work must not touch the owner: capture copies and shared data);
//  - an exception thrown by the work becomes one error message that always reaches the user:
//    the slot's handler if it has one, otherwise JobErrors (the main window shows those).

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QtConcurrent>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace stallscope::async {

// Failures of jobs whose slot has no error handler; the main window shows them in its status bar.
class JobErrors : public QObject {
    Q_OBJECT
  public:
    static JobErrors& instance();
    void report(const QString& message) { emit failed(message); }
  signals:
    void failed(const QString& message);
};

using ErrorHandler = std::function<void(const QString& message)>;

// The text of the exception in flight (std::exception's what(), else a generic sentence).
QString currentExceptionText();

// A slot for one kind of background job of one owner (a view's load, a frame, a preview).
class JobSlot {
  public:
    explicit JobSlot(QObject* owner, ErrorHandler onError = {})
        : owner_(owner), onError_(std::move(onError)), state_(std::make_shared<State>()) {}
    JobSlot(const JobSlot&) = delete;
    JobSlot& operator=(const JobSlot&) = delete;
    ~JobSlot() { supersede(); }

    // Runs `work()` on the thread pool, then `done(result)` on the owner's thread (result by
    // value; `done()` for void work). Returns the job's id.
    template <typename Work, typename Done>
    uint64_t start(Work work, Done done) {
        using Result = std::invoke_result_t<Work&>;
        const uint64_t id = ++state_->newest;
        ++state_->running;
        auto outcome = QtConcurrent::run([work = std::move(work)]() mutable {
            auto result = std::make_shared<Outcome<Result>>();
            try {
                if constexpr (std::is_void_v<Result>) {
                    work();
                    result->value.emplace();
                } else {
                    result->value.emplace(work());
                }
            } catch (...) {
                result->error = currentExceptionText();
            }
            return result;
        });
        std::shared_ptr<State> state = state_;
        ErrorHandler onError = onError_;
        auto deliver = [state, id, done = std::move(done),
                        onError](std::shared_ptr<Outcome<Result>> result) mutable {
            --state->running;
            if (id != state->newest) return;  // superseded
            if (!result->value) return fail(onError, result->error);
            if constexpr (std::is_void_v<Result>)
                done();
            else
                done(std::move(*result->value));
        };
        // The continuation runs on the owner's thread, and directly when the work had already
        // finished: post the delivery so it never runs inside start() (a constructor would see
        // its result before its signals are connected).
        outcome.then(owner_.data(), [owner = owner_, deliver = std::move(deliver)](
                                        std::shared_ptr<Outcome<Result>> result) mutable {
            if (!owner) return;
            QMetaObject::invokeMethod(
                owner.data(),
                [deliver = std::move(deliver), result = std::move(result)]() mutable {
                    deliver(std::move(result));
                },
                Qt::QueuedConnection);
        });
        return id;
    }

    // Like start() for a future somebody else runs and shares (a document cache hands one load
    // to every view that wants it): `done(result)` when it finishes, superseding and errors as
    // for start(). A watcher, because a QFuture takes only one continuation.
    template <typename T, typename Done>
    uint64_t follow(QFuture<T> future, Done done) {
        const uint64_t id = ++state_->newest;
        ++state_->running;
        auto* watcher = new QFutureWatcher<T>(owner_.data());
        // The watcher posts finished() (even for a finished future), so it never runs inside
        // follow(); it dies with the owner, and with it the delivery.
        QObject::connect(
            watcher, &QFutureWatcherBase::finished, watcher,
            [watcher, state = state_, id, done = std::move(done), onError = onError_]() mutable {
                watcher->deleteLater();
                --state->running;
                if (id != state->newest) return;
                std::optional<T> value;
                try {
                    value.emplace(watcher->result());
                } catch (...) {
                    return fail(onError, currentExceptionText());
                }
                done(std::move(*value));
            });
        watcher->setFuture(std::move(future));
        return id;
    }

    // The newest job's id (0 before the first).
    uint64_t currentJob() const { return state_->newest; }
    // A job's result is still to come.
    bool isBusy() const { return state_->running > 0; }
    // Drops the result of the running job, if any.
    void supersede() { ++state_->newest; }

  private:
    static void fail(const ErrorHandler& onError, const QString& message) {
        if (onError)
            onError(message);
        else
            JobErrors::instance().report(message);
    }
    template <typename Result>
    struct Outcome {
        std::optional<std::conditional_t<std::is_void_v<Result>, std::monostate, Result>> value;
        QString error;
    };
    struct State {
        std::atomic<uint64_t> newest{0};
        std::atomic<int> running{0};
    };

    QPointer<QObject> owner_;
    ErrorHandler onError_;
    std::shared_ptr<State> state_;
};

}  // namespace stallscope::async
