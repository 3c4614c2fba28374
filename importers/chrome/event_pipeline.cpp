#include "importers/chrome/event_pipeline.h"

#include <cstring>
#include <string_view>
#include <utility>

#include "core/errors.h"
#include "core/import_buffers.h"

namespace stallscope::chrome {

namespace {

// Windows cut ahead of the caller: enough to keep the workers busy through an uneven window, few
// enough to bound memory (a 4 MiB window holds about 40,000 events).
constexpr uint64_t kWindowsAhead = 3;

// The largest value read (as the reader's own window allows): a window that finds no event start
// grows to a little more, then is cut where it ends; a window parsed on past it is refused.
constexpr size_t kMaxValueBytes = size_t(1) << 30;
constexpr size_t kMaxWindowBytes = kMaxValueBytes + (size_t(64) << 20);

// The last '{' at or after `from` that follows "}" and "," (whitespace between): the start of an
// event, if the text there is between events. 0 when there is none.
size_t lastEventStart(const std::vector<char>& bytes, size_t from) {
    size_t end = bytes.size();
    while (end > from) {
        const void* found = ::memrchr(bytes.data() + from, '{', end - from);
        if (!found) return 0;
        const size_t brace = size_t(static_cast<const char*>(found) - bytes.data());
        size_t i = brace;
        while (i > 0 && isJsonSpace(bytes[i - 1])) --i;
        if (i > 0 && bytes[i - 1] == ',') {
            --i;
            while (i > 0 && isJsonSpace(bytes[i - 1])) --i;
            if (i > 0 && bytes[i - 1] == '}') return brace;
        }
        end = brace;
    }
    return 0;
}

}  // namespace

// The window readers the pipeline's workers and its caller use.
EventReader::EventReader(InputFile& input, std::vector<char> bytes, uint64_t base,
                         bool documentStart, bool objectForm, bool last)
    : input_(input),
      buf_(std::move(bytes)),
      end_(buf_.size()),
      base_(base),
      eof_(last),
      state_(documentStart ? State::Start : State::Events),
      objectForm_(objectForm),
      batchMode_(true),
      inMemory_(true) {}

void EventReader::parseWindow(std::vector<RawEvent>& events) {
    // Parsed in place (an event is about 200 bytes, copied once each before); the one being
    // parsed is not an event until step() says so.
    try {
        for (;;) {
            RawEvent& event = events.emplace_back();
            if (step(event, false) != Step::Event) {
                events.pop_back();
                return;
            }
        }
    } catch (...) {
        events.pop_back();
        throw;
    }
}

bool EventReader::endsBetweenEvents() const {
    if (state_ != State::Events) return false;
    size_t i = pos_;
    while (i < end_ && isJsonSpace(buf_[i])) ++i;
    if (i == end_ || buf_[i] != ',') return false;
    for (++i; i < end_; ++i)
        if (!isJsonSpace(buf_[i])) return false;
    return true;
}

void EventReader::appendWindow(std::string_view bytes, bool last) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    base_ += pos_;
    end_ -= pos_;
    pos_ = 0;
    if (end_ >= kMaxValueBytes)
        throw InputError(atOffset(input_.path(), static_cast<long long>(base_),
                                  "one JSON value (an event or a top-level member) is larger "
                                  "than 1 GiB; not a trace Stallscope can hold"));
    buf_.resize(end_ + bytes.size());
    std::memcpy(buf_.data() + end_, bytes.data(), bytes.size());
    end_ = buf_.size();
    eof_ = last;
}

void EventReader::adoptEndState(const EventReader& window) {
    topLevel_.insert(topLevel_.end(), window.topLevel_.begin(), window.topLevel_.end());
    if (!window.displayTimeUnit_.empty()) displayTimeUnit_ = window.displayTimeUnit_;
    missingClose_ = missingClose_ || window.missingClose_;
    if (window.trailingOffset_ >= 0) trailingOffset_ = window.trailingOffset_;
}

EventPipeline::EventPipeline(EventReader& reader, size_t workers) : reader_(reader) {
    for (size_t w = 0; w < std::max<size_t>(workers, 1); ++w)
        workers_.emplace_back([this] { work(); });
}

EventPipeline::~EventPipeline() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

bool EventPipeline::cut(Window& window, std::vector<char> bytes) {
    if (inputDone_) return false;
    window.seq = cutSeq_++;
    InputFile& input = reader_.input_;
    const size_t chunk = std::max<size_t>(importBuffers().jsonWindow, 4096);
    bytes.assign(carry_.begin(), carry_.end());
    const uint64_t base = carryBase_;
    size_t at = 0;  // where the window ends; 0 while no event start is found
    size_t read = bytes.size();
    try {
        for (size_t searched = 1; at == 0;) {
            const size_t before = bytes.size();
            bytes.resize(before + chunk);
            size_t got = 0;
            while (got < chunk) {
                const size_t n = input.read(bytes.data() + before + got, chunk - got);
                if (n == 0) break;
                got += n;
                read = before + got;
            }
            bytes.resize(before + got);
            if (objectForm_ < 0 && base == 0) {
                std::string_view text(bytes.data(), bytes.size());
                if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
                const size_t first = text.find_first_not_of(" \t\r\n");
                if (first != std::string_view::npos) objectForm_ = text[first] == '{' ? 1 : 0;
            }
            if (got < chunk) {
                window.last = true;  // the input ended: the rest is the last window
                break;
            }
            at = lastEventStart(bytes, searched);
            searched = bytes.size();
            if (at == 0 && bytes.size() >= kMaxWindowBytes) at = bytes.size();
        }
    } catch (...) {
        // The bytes read before the failure are parsed first, as one reader would.
        window.readError = std::current_exception();
        bytes.resize(read);
        at = 0;
    }
    if (window.readError) {
        inputDone_ = true;
        window.batch.fraction = input.fraction();
        window.reader = std::unique_ptr<EventReader>(
            new EventReader(input, std::move(bytes), base, base == 0, objectForm_ == 1, false));
        return true;
    }
    if (!window.last) {
        carry_.assign(bytes.begin() + std::ptrdiff_t(at), bytes.end());
        carryBase_ = base + at;
        bytes.resize(at);
    }
    inputDone_ = window.last;
    window.batch.fraction = input.fraction();
    window.reader = std::unique_ptr<EventReader>(
        new EventReader(input, std::move(bytes), base, base == 0, objectForm_ == 1, window.last));
    return true;
}

void EventPipeline::recycle(std::unique_ptr<Window> window) {
    if (!window) return;
    std::vector<char> bytes;
    if (window->reader) bytes = std::move(window->reader->buf_);
    window->reader.reset();
    window->batch.events.clear();
    window->error = window->readError = nullptr;
    window->last = window->between = false;
    std::lock_guard lock(mutex_);
    spareWindows_.push_back(std::move(window));
    if (bytes.capacity() > 0) spareBytes_.push_back(std::move(bytes));
}

void EventPipeline::parse(Window& window) {
    try {
        window.reader->parseWindow(window.batch.events);
        window.between = !window.last && window.reader->endsBetweenEvents();
    } catch (...) {
        window.error = std::current_exception();
    }
}

void EventPipeline::work() {
    for (;;) {
        std::unique_ptr<Window> window;
        std::vector<char> bytes;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [this] { return stop_ || issued_ - wanted_ < kWindowsAhead; });
            if (stop_) return;
            ++issued_;
            if (!spareWindows_.empty()) {
                window = std::move(spareWindows_.back());
                spareWindows_.pop_back();
            }
            if (!spareBytes_.empty()) {
                bytes = std::move(spareBytes_.back());
                spareBytes_.pop_back();
            }
        }
        if (!window) window = std::make_unique<Window>();
        {
            std::lock_guard input(inputMutex_);
            if (!cut(*window, std::move(bytes))) return;
        }
        parse(*window);
        std::lock_guard lock(mutex_);
        const uint64_t seq = window->seq;
        ready_[seq] = std::move(window);
        changed_.notify_all();
    }
}

std::unique_ptr<EventPipeline::Window> EventPipeline::take(uint64_t seq) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stop_ || ready_.count(seq) > 0; });
    const auto it = ready_.find(seq);
    if (it == ready_.end()) return nullptr;
    std::unique_ptr<Window> window = std::move(it->second);
    ready_.erase(it);
    wanted_ = seq + 1;
    changed_.notify_all();
    return window;
}

void EventPipeline::continueThrough(const Window& window) {
    EventReader& reader = *continued_->reader;
    continued_->batch.events.clear();
    reader.scratchUsed_ = 0;  // the events handed out before are done with
    continued_->last = window.last;
    continued_->between = false;
    try {
        reader.appendWindow(window.reader->windowBytes(), window.last);
        reader.parseWindow(continued_->batch.events);
        continued_->between = !window.last && reader.endsBetweenEvents();
    } catch (...) {
        continued_->error = std::current_exception();
    }
    continued_->batch.fraction = window.batch.fraction;
}

const EventBatch* EventPipeline::next() {
    recycle(std::move(current_));
    for (;;) {
        if (pendingError_) {
            finished_ = true;
            std::rethrow_exception(std::exchange(pendingError_, nullptr));
        }
        if (finished_) return nullptr;
        std::unique_ptr<Window> window = take(wanted_);
        if (!window) {
            finished_ = true;
            return nullptr;
        }
        const std::exception_ptr readError = window->readError;
        Window* parsed = window.get();
        if (continued_) {
            // This window's start was not an event's: its own parse is dropped, its bytes go on
            // the reader of the window before.
            ++reparsed_;
            continueThrough(*window);
            recycle(std::move(window));
            parsed = continued_.get();
        } else {
            continued_ = std::move(window);
        }
        // The document may end before the input does: what follows is not read (as one reader
        // stops there), nor is a failure to read it.
        const bool documentEnded = parsed->reader->state_ == EventReader::State::Done;
        const bool ends = parsed->error || parsed->between || parsed->last || documentEnded;
        // The input failed after these bytes: its error comes after their events (and after
        // their own error, which is earlier in the file).
        if (parsed->error)
            pendingError_ = parsed->error;
        else if (readError && !documentEnded)
            pendingError_ = readError;
        if (ends || readError) reader_.adoptEndState(*parsed->reader);
        finished_ = parsed->last || documentEnded;
        // A window that ended inside a value stays: the next one's bytes continue it.
        if (ends) current_ = std::move(continued_);
        if (!parsed->batch.events.empty()) return &parsed->batch;
    }
}

}  // namespace stallscope::chrome
