#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "importers/chrome/chrome_json.h"

namespace stallscope::chrome {

// Parses a Chrome trace on a worker thread, a window at a time, while the caller builds the
// trace from the batches already parsed: parsing and building each take about half of reading
// a trace, so on two cores the read takes about as long as the parse alone. Batches arrive in
// file order; the reader's error arrives after the batches before it.
class EventPipeline {
  public:
    // `reader` is used by the worker only until next() returned null (or the pipeline is
    // destroyed); then its end state (top-level members, trailing data) may be read.
    explicit EventPipeline(EventReader& reader);
    ~EventPipeline();
    EventPipeline(const EventPipeline&) = delete;
    EventPipeline& operator=(const EventPipeline&) = delete;

    // The next batch (valid until the next call); null after the last. Rethrows the reader's
    // error.
    const EventBatch* next();

  private:
    void parse();

    EventReader& reader_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::unique_ptr<EventBatch>> ready_;
    std::vector<std::unique_ptr<EventBatch>> spare_;  // consumed: their buffers are reused
    std::unique_ptr<EventBatch> current_;
    std::exception_ptr error_;
    bool finished_ = false;  // the worker parsed the last batch (or failed)
    bool stop_ = false;      // the caller is gone: the worker stops at the next batch
    std::thread worker_;
};

}  // namespace stallscope::chrome
