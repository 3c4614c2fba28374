#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_stream.h"

namespace stallscope::chrome {

// One trace event as read, before any interpretation. Views point into the reader's buffer
// (or its unescape scratch) and stay valid until the next call to next().
struct RawEvent {
    std::string_view ph, name, cat, id, bp, scope, pid, tid, bindId;
    std::string_view args;  // raw JSON text of "args", empty when absent
    bool hasTs = false, hasDur = false, hasId = false;
    bool flowIn = false, flowOut = false;
    int64_t tsNs = 0, durNs = 0;   // whole ns (floor)
    uint16_t tsPs = 0, durPs = 0;  // sub-ns remainders, 0..999 ps
    uint64_t offset = 0;           // decompressed byte offset of the event's '{'
    // Values in "args" that JSON has no form for (inf, nan, raw control characters in strings),
    // stored repaired: the number as a string, the character escaped.
    uint32_t repairs = 0;
};

// The events of one read window, parsed together (their bytes and unescaped strings are held by
// whoever hands the batch out).
struct EventBatch {
    std::vector<RawEvent> events;
    double fraction = 0;  // of the input file read when the batch was cut
};

class EventPipeline;

// Streams the events of a Chrome Trace Event JSON document (array form `[...]` or object form
// `{"traceEvents":[...], ...}`) with bounded memory: the buffer holds a window of the input and
// grows only to fit one event. A SAX-style scanner written for this format: no DOM, no copies
// of strings without escapes.
class EventReader {
  public:
    explicit EventReader(InputFile& input);
    // False after the last event. Throws InputError naming the file and byte offset.
    bool next(RawEvent& event);

    // After the end: whether the closing bracket (or brace) was missing.
    bool missingClose() const { return missingClose_; }
    // After the end: decompressed offset of the first non-whitespace byte after the document's
    // closing bracket (or brace), -1 when there is none. What follows is not read.
    int64_t trailingOffset() const { return trailingOffset_; }
    const std::string& displayTimeUnit() const { return displayTimeUnit_; }
    // Top-level scalar members of the object form (traceName, schemaVersion, ...).
    const std::vector<std::pair<std::string, std::string>>& topLevel() const { return topLevel_; }
    uint64_t bytesConsumed() const { return base_ + pos_; }

  private:
    friend class EventPipeline;
    enum class State { Start, TopObject, Events, AfterEvents, Trailing, Done };
    enum class Step { Event, End, NeedInput };

    // A reader of one window of `input` held in memory (EventPipeline): `bytes` start at
    // decompressed offset `base`, either at the document's start or at an event's '{' inside
    // the events array (whose form, `objectForm`, the cutter saw). `last`: no input follows.
    EventReader(InputFile& input, std::vector<char> bytes, uint64_t base, bool documentStart,
                bool objectForm, bool last);
    // Parses the window's events into `events` until it runs out (or an error: thrown).
    void parseWindow(std::vector<RawEvent>& events);
    // The window ended between two events, right after the ',' that separates them.
    bool endsBetweenEvents() const;
    // Appends the next window's bytes (the reader goes on where it stopped).
    void appendWindow(std::string_view bytes, bool last);
    std::string_view windowBytes() const { return {buf_.data(), end_}; }
    // What a finished window reader learnt about the document, added to this one's.
    void adoptEndState(const EventReader& window);

    // The next event; NeedInput when the window ends before it and may not be refilled.
    Step step(RawEvent& event, bool mayRefill);

    bool fill();  // false at the end of the input
    [[noreturn]] void fail(const char* at, const std::string& what) const;
    void parseEvent(const char*& p, const char* end, RawEvent& event);

    InputFile& input_;
    std::vector<char> buf_;
    size_t pos_ = 0, end_ = 0;
    uint64_t base_ = 0;  // decompressed offset of buf_[0]
    bool eof_ = false;
    State state_ = State::Start;
    bool missingClose_ = false;
    int64_t trailingOffset_ = -1;
    bool objectForm_ = false;
    bool afterEvent_ = false;
    std::string displayTimeUnit_;
    std::vector<std::pair<std::string, std::string>> topLevel_;
    std::deque<std::string> scratch_;  // stable addresses: events hold views into it
    size_t scratchUsed_ = 0;
    bool batchMode_ = false;  // events keep their scratch strings until the batch is cut
    bool inMemory_ = false;   // a window reader: never reads the input
    std::string keyScratch_;  // a top-level member's name
};

// JSON's whitespace (the reader's and the window cutter's).
inline bool isJsonSpace(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Microseconds as decimal text (a JSON number or its text) -> floor whole ns + 0..999 ps.
bool decimalToTime(std::string_view text, int64_t& ns, uint16_t& ps);

// Helpers over a complete JSON text (an event's args): no streaming needed.
// Calls visit(key, rawValue) for each member of an object; returns false if `json` is not an
// object.
bool forEachMember(std::string_view json,
                   const std::function<void(std::string_view key, std::string_view value)>& visit);
// The unescaped text of a JSON string value, or the raw text of any other scalar.
std::string scalarValue(std::string_view raw);
// A JSON number (or a string holding one); false otherwise.
bool numberValue(std::string_view raw, double& out);

}  // namespace stallscope::chrome
