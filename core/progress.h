#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "core/errors.h"

namespace stallscope {

// Progress and cancellation shared between a worker and whoever watches it (CLI bar, GUI status
// bar). The worker calls report(); the watcher calls cancel() from any thread. report() throws
// Cancelled once cancel() was called, so workers stop at their next progress point.
class Progress {
  public:
    using Listener = std::function<void(double fraction, const std::string& stage)>;

    Progress() = default;
    explicit Progress(Listener listener) : listener_(std::move(listener)) {}

    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
    bool isCancelled() const { return cancelled_.load(std::memory_order_relaxed); }
    void checkCancelled() const {
        if (isCancelled()) throw Cancelled();
    }

    // fraction in [0, 1].
    void report(double fraction, const std::string& stage) {
        if (cancelAfterReports_ > 0 && --cancelAfterReports_ == 0) cancel();
        checkCancelled();
        if (listener_) listener_(fraction, stage);
    }

    // Fault injection for tests: behave as if the user cancelled at the n-th report().
    void cancelAtReport(int n) { cancelAfterReports_ = n; }

  private:
    Listener listener_;
    std::atomic<bool> cancelled_{false};
    int cancelAfterReports_ = 0;
};

}  // namespace stallscope
