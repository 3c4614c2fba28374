#pragma once

#include <exception>
#include <functional>
#include <thread>
#include <utility>

namespace stallscope {

// Work run on a thread of its own beside the caller's: join() waits for it and rethrows what it
// threw. Joined when destroyed (an owner unwinding must not free what the work still reads).
class BesideThread {
  public:
    BesideThread() = default;
    BesideThread(const BesideThread&) = delete;
    BesideThread& operator=(const BesideThread&) = delete;
    ~BesideThread() {
        if (thread_.joinable()) thread_.join();
    }
    void start(std::function<void()> work) {
        join();
        thread_ = std::thread([this, work = std::move(work)] {
            try {
                work();
            } catch (...) {
                failure_ = std::current_exception();
            }
        });
    }
    void join() {
        if (thread_.joinable()) thread_.join();
        if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
    }

  private:
    std::thread thread_;
    std::exception_ptr failure_;
};

}  // namespace stallscope
