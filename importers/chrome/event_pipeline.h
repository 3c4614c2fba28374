#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "importers/chrome/chrome_json.h"

namespace stallscope::chrome {

// Parses a Chrome trace on worker threads, a window at a time, while the caller builds the trace
// from the windows already parsed. The input is cut into windows at what looks like the start of
// an event ('{' after "}," between events); each window is parsed on its own, on any worker.
// Only a window whose start is known to be right is used as parsed: the first, and each one
// after a window that ended exactly between two events. Otherwise the cut was not between events
// (a "}, {" inside a string or an array of objects, an event larger than a window, members after
// the events): the caller's thread parses on from where the window before stopped, through the
// next window's bytes. So the events and errors are those of one reader reading the whole file.
// Windows arrive in file order; an error arrives after the events before it.
class EventPipeline {
  public:
    // `reader` gives the input and, once next() returned null, holds the document's end state
    // (top-level members, display time unit, a missing bracket, trailing data).
    explicit EventPipeline(EventReader& reader, size_t workers = 2);
    ~EventPipeline();
    EventPipeline(const EventPipeline&) = delete;
    EventPipeline& operator=(const EventPipeline&) = delete;

    // The next batch (valid until the next call); null after the last. Throws the reading's
    // error.
    const EventBatch* next();

    // Windows parsed again on the caller's thread because their start was not an event's.
    uint64_t windowsReparsed() const { return reparsed_; }

  private:
    struct Window {
        uint64_t seq = 0;
        std::unique_ptr<EventReader> reader;  // owns the bytes and strings the events view
        EventBatch batch;
        std::exception_ptr error;      // the window's parse stopped here
        std::exception_ptr readError;  // the input failed after the window's bytes
        bool last = false;
        bool between = false;  // ended between two events
    };

    void work();
    // The next window's bytes from the input (under inputMutex_), read into `window`'s reused
    // buffers; false when none is left.
    bool cut(Window& window, std::vector<char> bytes);
    // A window done with: its buffers go to the next one cut (their pages are mapped already).
    void recycle(std::unique_ptr<Window> window);
    static void parse(Window& window);
    // The window `seq` once parsed; null when the input had fewer windows.
    std::unique_ptr<Window> take(uint64_t seq);
    // Parses on from `continued_`'s stop through `window`'s bytes.
    void continueThrough(const Window& window);

    EventReader& reader_;

    // The cutter's state: the input read so far, and the bytes after the last cut.
    std::mutex inputMutex_;
    std::vector<char> carry_;
    uint64_t carryBase_ = 0;
    uint64_t cutSeq_ = 0;
    bool inputDone_ = false;
    int objectForm_ = -1;  // the document's first character: '{' (1) or not (0); -1 unseen

    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<uint64_t, std::unique_ptr<Window>> ready_;
    std::vector<std::unique_ptr<Window>> spareWindows_;
    std::vector<std::vector<char>> spareBytes_;
    uint64_t issued_ = 0;  // windows workers took on
    uint64_t wanted_ = 0;  // the next window the caller takes
    bool stop_ = false;

    std::unique_ptr<Window> current_;    // handed out
    std::unique_ptr<Window> continued_;  // a window whose reader parses on into the next
    std::exception_ptr pendingError_;    // thrown at the call after its events
    bool finished_ = false;
    uint64_t reparsed_ = 0;
    std::vector<std::thread> workers_;
};

}  // namespace stallscope::chrome
