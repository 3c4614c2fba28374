#include "importers/chrome/chrome_json.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"
#include "core/import_buffers.h"
#include "core/json_escape.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace stallscope::chrome {

namespace {

constexpr size_t kMaxEventBytes = size_t(1) << 30;

// The scanners work on a window [p, e): reaching e throws EndOfWindow (the reader refills and
// retries the whole event); malformed text throws BadJson with the position.
struct EndOfWindow {};
struct BadJson {
    const char* at;
    std::string what;
};

// What ends a number or literal, by byte: one load instead of seven compares a character (the
// number scan was a tenth of the parse workers' time).
constexpr std::array<bool, 256> kDelimiters = [] {
    std::array<bool, 256> table{};
    for (const char c : {',', '}', ']', ':', ' ', '\n', '\r', '\t'}) table[uint8_t(c)] = true;
    return table;
}();

inline bool isDelimiter(char c) {
    return kDelimiters[uint8_t(c)];
}

inline void skipWs(const char*& p, const char* e) {
    while (p < e && isJsonSpace(*p)) ++p;
    if (p == e) throw EndOfWindow{};
}

// The first '"' or '\\' in [q, e), or e: sixteen bytes at a time (strings in traces are short,
// and a memchr call per string, twice, was a tenth of parsing an event).
inline const char* quoteOrBackslash(const char* q, const char* e) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    while (e - q >= 16) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
        const int found = _mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
        if (found != 0) return q + std::countr_zero(unsigned(found));
        q += 16;
    }
#endif
    while (q < e && *q != '"' && *q != '\\') ++q;
    return q;
}

// p at the opening quote; returns the closing quote. `escaped`: the string has a backslash.
inline const char* closingQuote(const char* p, const char* e, bool& escaped) {
    const char* q = p + 1;
    for (;;) {
        q = quoteOrBackslash(q, e);
        if (q == e) throw EndOfWindow{};
        if (*q == '"') return q;
        escaped = true;
        if (e - q <= 2) throw EndOfWindow{};
        q += 2;  // the backslash and the character it escapes
    }
}

inline const char* closingQuote(const char* p, const char* e) {
    bool escaped = false;
    return closingQuote(p, e, escaped);
}

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(char(cp));
    } else if (cp < 0x800) {
        out.push_back(char(0xc0 | (cp >> 6)));
        out.push_back(char(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        out.push_back(char(0xe0 | (cp >> 12)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(char(0x80 | (cp & 0x3f)));
    } else {
        out.push_back(char(0xf0 | (cp >> 18)));
        out.push_back(char(0x80 | ((cp >> 12) & 0x3f)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(char(0x80 | (cp & 0x3f)));
    }
}

uint32_t hex4(const char* p, const char* q) {
    if (q - p < 4) throw BadJson{p, "truncated \\u escape"};
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= uint32_t(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= uint32_t(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= uint32_t(c - 'A' + 10);
        else
            throw BadJson{p + i, "invalid \\u escape"};
    }
    return v;
}

void unescape(const char* s, const char* q, std::string& out) {
    out.clear();
    for (const char* p = s; p < q; ++p) {
        if (*p != '\\') {
            out.push_back(*p);
            continue;
        }
        ++p;
        switch (*p) {
            case '"':
                out.push_back('"');
                break;
            case '\\':
                out.push_back('\\');
                break;
            case '/':
                out.push_back('/');
                break;
            case 'b':
                out.push_back('\b');
                break;
            case 'f':
                out.push_back('\f');
                break;
            case 'n':
                out.push_back('\n');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'u': {
                uint32_t cp = hex4(p + 1, q);
                p += 4;
                if (cp >= 0xd800 && cp < 0xdc00 && q - p >= 7 && p[1] == '\\' && p[2] == 'u') {
                    const uint32_t low = hex4(p + 3, q);
                    if (low >= 0xdc00 && low < 0xe000) {
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                        p += 6;
                    }
                }
                appendUtf8(out, cp);
                break;
            }
            default:
                throw BadJson{p - 1, "invalid escape in a string"};
        }
    }
}

// A member name against a literal: a fixed-length compare the compiler inlines (string_view's ==
// called memcmp and strlen, a tenth of parsing an event).
template <size_t N>
inline bool equals(std::string_view text, const char (&literal)[N]) {
    return text.size() == N - 1 && std::memcmp(text.data(), literal, N - 1) == 0;
}

// p at '"'. Returns the content, unescaped into the string `scratch()` gives only when it has
// escapes (so a caller handing out scratch strings takes one only then).
template <class Scratch>
std::string_view readString(const char*& p, const char* e, Scratch&& scratch) {
    bool escaped = false;
    const char* q = closingQuote(p, e, escaped);
    const char* s = p + 1;
    p = q + 1;
    if (!escaped) return {s, size_t(q - s)};
    std::string& out = scratch();
    unescape(s, q, out);
    return out;
}

std::string_view readString(const char*& p, const char* e, std::string& scratch) {
    return readString(p, e, [&scratch]() -> std::string& { return scratch; });
}

// A number or literal: the text up to the next delimiter.
std::string_view readToken(const char*& p, const char* e) {
    const char* s = p;
    const char c = *p;
    if (!((c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n'))
        throw BadJson{p, std::string("unexpected character '") + c + "' where a value belongs"};
    while (p < e && !isDelimiter(*p)) ++p;
    if (p == e) throw EndOfWindow{};
    return {s, size_t(p - s)};
}

void skipValue(const char*& p, const char* e) {
    const char c = *p;
    if (c == '"') {
        p = closingQuote(p, e) + 1;
        return;
    }
    if (c != '{' && c != '[') {
        readToken(p, e);
        return;
    }
    int depth = 0;
    for (;;) {
        if (p == e) throw EndOfWindow{};
        const char ch = *p;
        if (ch == '"') {
            p = closingQuote(p, e) + 1;
            continue;
        }
        if (ch == '{' || ch == '[') {
            ++depth;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0) {
                ++p;
                return;
            }
        }
        ++p;
    }
}

// Text that real tracers write where JSON has no form for it: bare inf/nan numbers (Kineto's
// "memory bandwidth (GB/s)": inf of 2021) and raw control characters inside strings. Repaired in
// the stored copy: the number quoted, the character escaped.
struct Repair {
    const char* at;
    size_t length;  // a non-standard number's length; 1 for a control character
    bool number;
};

// Length of a non-standard number at q (inf, -inf, nan, NaN, Infinity, ...) followed by a
// delimiter, 0 when there is none. Throws EndOfWindow when the window ends inside one or right
// after it (the reader refills and retries the event).
size_t nonStandardNumber(const char* q, const char* e) {
    const size_t left = size_t(e - q);
    // Most values start with none of the words' letters: the eight compares below were a tenth
    // of parsing an event.
    const char first = left > 1 && *q == '-' ? q[1] : *q;
    if (first != 'I' && first != 'i' && first != 'n' && first != 'N' && !(left == 1 && *q == '-'))
        return 0;
    for (const char* word :
         {"-Infinity", "Infinity", "-inf", "inf", "-nan", "nan", "-NaN", "NaN"}) {
        const size_t n = std::strlen(word);
        if (left < n + 1) {
            if (std::memcmp(q, word, std::min(left, n)) == 0) throw EndOfWindow{};
            continue;
        }
        if (std::memcmp(q, word, n) == 0 && isDelimiter(q[n])) return n;
    }
    return 0;
}

// `raw` with its repairs applied (repairs in text order), into `out`.
void applyRepairs(std::string_view raw, const std::vector<Repair>& repairs, std::string& out) {
    out.clear();
    const char* from = raw.data();
    for (const Repair& r : repairs) {
        out.append(from, size_t(r.at - from));
        if (r.number) {
            out.push_back('"');
            out.append(r.at, r.length);
            out.push_back('"');
        } else {
            json::appendControlEscape(out, *r.at);
        }
        from = r.at + r.length;
    }
    out.append(from, size_t(raw.data() + raw.size() - from));
}

// Validates the JSON value at p and moves past it: a strict scanner (RFC 8259 grammar) for the
// members stored as they are ("args"), so a broken document is refused where it breaks instead
// of stored. Non-standard numbers and control characters in strings are listed in `repairs`
// instead of refused. Throws BadJson at the first error.
void skipValueStrict(const char*& p, const char* e, std::vector<Repair>& repairs) {
    constexpr size_t kMaxDepth = 512;
    char stack[kMaxDepth];
    size_t depth = 0;
    auto fail = [](const char* at, const char* what) { throw BadJson{at, what}; };
    auto string = [&](const char*& q) {
        ++q;  // opening quote
        for (;;) {
            if (q >= e) throw EndOfWindow{};
            const auto c = uint8_t(*q);
            if (c == '"') {
                ++q;
                return;
            }
            if (c < 0x20) {
                repairs.push_back({q, 1, false});
                ++q;
                continue;
            }
            if (c == '\\') {
                if (q + 1 >= e) throw EndOfWindow{};
                const char x = q[1];
                if (x == 'u') {
                    if (e - q < 6) throw EndOfWindow{};
                    hex4(q + 2, e);
                    q += 6;
                    continue;
                }
                if (!std::strchr("\"\\/bfnrt", x) || x == '\0')
                    fail(q, "invalid escape in a string");
                q += 2;
                continue;
            }
            ++q;
        }
    };
    auto number = [&](const char*& q) {
        const char* start = q;
        auto digits = [&]() {
            const char* d = q;
            while (q < e && *q >= '0' && *q <= '9') ++q;
            if (q == e) throw EndOfWindow{};
            return q - d;
        };
        if (*q == '-') ++q;
        if (q == e) throw EndOfWindow{};
        if (*q == '0') {
            ++q;
        } else if (digits() == 0) {
            fail(start, "invalid number");
        }
        if (q == e) throw EndOfWindow{};
        if (*q == '.') {
            ++q;
            if (digits() == 0) fail(start, "invalid number");
        }
        if (*q == 'e' || *q == 'E') {
            ++q;
            if (q < e && (*q == '+' || *q == '-')) ++q;
            if (digits() == 0) fail(start, "invalid number");
        }
        if (q == e) throw EndOfWindow{};
        if (!isDelimiter(*q)) fail(q, "invalid number");
    };
    auto literal = [&](const char*& q, const char* word) {
        const size_t n = std::strlen(word);
        if (size_t(e - q) < n + 1) throw EndOfWindow{};
        if (std::memcmp(q, word, n) != 0 || !isDelimiter(q[n]))
            fail(q, "unexpected characters where a value belongs");
        q += n;
    };
    for (;;) {
        // A value.
        skipWs(p, e);
        const char c = *p;
        if (c == '{' || c == '[') {
            if (depth == kMaxDepth) fail(p, "JSON nested deeper than 512 levels");
            stack[depth++] = c;
            ++p;
            skipWs(p, e);
            if (*p == (c == '{' ? '}' : ']')) {
                ++p;
                --depth;
            } else if (c == '{') {
                if (*p != '"') fail(p, "expected a member name");
                string(p);
                skipWs(p, e);
                if (*p != ':') fail(p, "expected ':' after a member name");
                ++p;
                continue;
            } else {
                continue;
            }
        } else if (c == '"') {
            string(p);
        } else if (const size_t n = nonStandardNumber(p, e)) {
            repairs.push_back({p, n, true});
            p += n;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            number(p);
        } else if (c == 't') {
            literal(p, "true");
        } else if (c == 'f') {
            literal(p, "false");
        } else if (c == 'n') {
            literal(p, "null");
        } else {
            fail(p, "unexpected character where a value belongs");
        }
        // After a value: close containers or move to the next element.
        for (;;) {
            if (depth == 0) return;
            skipWs(p, e);
            const char close = stack[depth - 1] == '{' ? '}' : ']';
            if (*p == close) {
                ++p;
                --depth;
                continue;
            }
            if (*p != ',')
                fail(p, stack[depth - 1] == '{' ? "expected ',' or '}' in an object"
                                                : "expected ',' or ']' in an array");
            ++p;
            if (stack[depth - 1] == '{') {
                skipWs(p, e);
                if (*p != '"') fail(p, "expected a member name");
                string(p);
                skipWs(p, e);
                if (*p != ':') fail(p, "expected ':' after a member name");
                ++p;
            }
            break;
        }
    }
}

}  // namespace

EventReader::EventReader(InputFile& input)
    : input_(input), buf_(std::max<size_t>(importBuffers().jsonWindow, 4096)) {}

void EventReader::fail(const char* at, const std::string& what) const {
    const uint64_t offset = base_ + uint64_t(at - buf_.data());
    std::string where = what;
    if (input_.compression() != Compression::None) where += " (offset in the decompressed JSON)";
    throw InputError(atOffset(input_.path(), static_cast<long long>(offset), where));
}

bool EventReader::fill() {
    if (eof_ || inMemory_) return false;
    if (pos_ > 0) {
        std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
        base_ += pos_;
        end_ -= pos_;
        pos_ = 0;
    }
    if (end_ == buf_.size()) {
        // One event larger than the window: grow it, within reason.
        if (buf_.size() >= kMaxEventBytes)
            throw InputError(atOffset(input_.path(), static_cast<long long>(base_),
                                      "one JSON value (an event or a top-level member) is "
                                      "larger than 1 GiB; not a trace Stallscope can hold"));
        buf_.resize(buf_.size() * 2);
    }
    const size_t got = input_.read(buf_.data() + end_, buf_.size() - end_);
    if (got == 0) {
        eof_ = true;
        return false;
    }
    end_ += got;
    return true;
}

bool EventReader::next(RawEvent& event) {
    return step(event, true) == Step::Event;
}

EventReader::Step EventReader::step(RawEvent& event, bool mayRefill) {
    bool startSeenAtEnd = false;
    for (;;) {
        const char* const begin = buf_.data();
        const char* const e = begin + end_;
        const char* p = begin + pos_;
        // An event cut off by the window's end is parsed again: its unescaped strings too.
        const size_t scratchBefore = scratchUsed_;
        try {
            switch (state_) {
                case State::Start:
                    // A UTF-8 byte order mark is allowed before the document.
                    if (end_ - pos_ < 3 && !eof_) throw EndOfWindow{};
                    if (end_ - pos_ >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
                    skipWs(p, e);
                    if (*p == '[') {
                        state_ = State::Events;
                    } else if (*p == '{') {
                        state_ = State::TopObject;
                        objectForm_ = true;
                    } else {
                        fail(p, "not Chrome trace JSON: expected '[' or '{'");
                    }
                    pos_ = size_t(p + 1 - begin);
                    continue;
                case State::TopObject:
                case State::AfterEvents: {
                    skipWs(p, e);
                    if (*p == '}') {
                        state_ = State::Trailing;
                        pos_ = size_t(p + 1 - begin);
                        continue;
                    }
                    if (*p == ',') {
                        pos_ = size_t(p + 1 - begin);
                        continue;
                    }
                    if (*p != '"') fail(p, "expected a member name in the top-level object");
                    const std::string keyText(readString(p, e, keyScratch_));
                    skipWs(p, e);
                    if (*p != ':') fail(p, "expected ':' after \"" + keyText + "\"");
                    ++p;
                    skipWs(p, e);
                    if (keyText == "traceEvents") {
                        if (*p != '[') fail(p, "\"traceEvents\" must be an array");
                        state_ = State::Events;
                        ++p;
                    } else if (*p == '{' || *p == '[') {
                        const char* valueStart = p;
                        skipValue(p, e);
                        // Kineto's rank and world size, for naming the hosts of a run.
                        if (keyText == "distributedInfo" && p - valueStart < (1 << 16))
                            topLevel_.emplace_back(keyText, std::string(valueStart, p));
                    } else {
                        std::string value;
                        if (*p == '"') {
                            std::string scratch;
                            value = std::string(readString(p, e, scratch));
                        } else {
                            value = std::string(readToken(p, e));
                        }
                        if (keyText == "displayTimeUnit")
                            displayTimeUnit_ = value;
                        else
                            topLevel_.emplace_back(keyText, value);
                    }
                    pos_ = size_t(p - begin);
                    continue;
                }
                case State::Events:
                    skipWs(p, e);
                    if (*p == ',') {
                        ++p;
                        skipWs(p, e);
                    } else if (afterEvent_ && *p != ']') {
                        fail(p, "expected ',' or ']' after an event");
                    }
                    if (*p == ']') {
                        state_ = objectForm_ ? State::AfterEvents : State::Trailing;
                        pos_ = size_t(p + 1 - begin);
                        continue;
                    }
                    if (*p != '{') fail(p, "expected an event object");
                    event = RawEvent{};
                    event.offset = base_ + uint64_t(p - begin);
                    parseEvent(p, e, event);
                    pos_ = size_t(p - begin);
                    afterEvent_ = true;
                    return Step::Event;
                case State::Trailing:
                    // Only whitespace may follow the document; anything else is reported.
                    skipWs(p, e);
                    trailingOffset_ = base_ + uint64_t(p - begin);
                    state_ = State::Done;
                    pos_ = size_t(p - begin);
                    continue;
                case State::Done:
                    return Step::End;
            }
        } catch (const EndOfWindow&) {
            scratchUsed_ = scratchBefore;
            if (!mayRefill && !eof_) return Step::NeedInput;
            if (fill()) continue;
            // A document shorter than a byte order mark waited for more input: it has all of it
            // now (so "p" is not JSON, not a value cut short, whatever the window).
            if (state_ == State::Start && !startSeenAtEnd) {
                startSeenAtEnd = true;
                continue;
            }
            if (state_ == State::Trailing) {
                state_ = State::Done;
                return Step::End;
            }
            // End of input: fine between events (a missing ']' is tolerated), an error inside.
            // fill() may have moved the window: look again from the current position.
            const char* q = buf_.data() + pos_;
            const char* const last = buf_.data() + end_;
            while (q < last && (isJsonSpace(*q) || *q == ',')) ++q;
            if (q != last)
                fail(q, state_ == State::Events ? "the JSON ends inside an event (truncated file?)"
                                                : "the JSON ends inside a value (truncated file?)");
            if (state_ == State::Start) fail(q, "empty document");
            missingClose_ = state_ != State::Done;
            state_ = State::Done;
            return Step::End;
        } catch (const BadJson& bad) {
            fail(bad.at, bad.what);
        }
    }
}

void EventReader::parseEvent(const char*& p, const char* e, RawEvent& ev) {
    if (!batchMode_) scratchUsed_ = 0;
    // A string takes a scratch slot only when it has escapes to undo (a window's reader held a
    // string per member of every event otherwise).
    auto nextScratch = [&]() -> std::string& {
        if (scratchUsed_ == scratch_.size()) scratch_.emplace_back();
        return scratch_[scratchUsed_++];
    };
    auto text = [&](const char*& q) -> std::string_view {
        return *q == '"' ? readString(q, e, nextScratch) : readToken(q, e);
    };
    auto timeValue = [&](const char*& q, const char* key, int64_t& ns, uint16_t& ps) {
        const char* at = q;
        std::string_view t = text(q);
        if (!decimalToTime(t, ns, ps))
            fail(at, std::string("\"") + key +
                         "\" is not a number of microseconds within +-292 years of 1970");
    };
    ++p;  // '{'
    skipWs(p, e);
    if (*p == '}') {
        ++p;
        return;
    }
    for (;;) {
        skipWs(p, e);
        if (*p != '"') fail(p, "expected a member name in an event");
        const char* q = closingQuote(p, e);
        const std::string_view key(p + 1, size_t(q - p - 1));
        p = q + 1;
        skipWs(p, e);
        if (*p != ':') fail(p, "expected ':' in an event");
        ++p;
        skipWs(p, e);
        switch (key.size()) {
            case 1:
                if (key[0] == 's')
                    ev.scope = text(p);
                else
                    skipValue(p, e);
                break;
            case 2:
                if (equals(key, "ph")) {
                    ev.ph = text(p);
                } else if (equals(key, "ts")) {
                    timeValue(p, "ts", ev.tsNs, ev.tsPs);
                    ev.hasTs = true;
                } else if (equals(key, "id")) {
                    ev.id = text(p);
                    ev.hasId = true;
                } else if (equals(key, "bp")) {
                    ev.bp = text(p);
                } else {
                    skipValue(p, e);
                }
                break;
            case 3:
                if (equals(key, "pid")) {
                    ev.pid = text(p);
                } else if (equals(key, "tid")) {
                    ev.tid = text(p);
                } else if (equals(key, "cat")) {
                    ev.cat = text(p);
                } else if (equals(key, "dur")) {
                    timeValue(p, "dur", ev.durNs, ev.durPs);
                    ev.hasDur = true;
                } else if (equals(key, "id2")) {
                    const char* s = p;
                    skipValue(p, e);
                    ev.id = std::string_view(s, size_t(p - s));
                    ev.hasId = true;
                } else {
                    skipValue(p, e);
                }
                break;
            default:
                if (equals(key, "name")) {
                    ev.name = text(p);
                } else if (equals(key, "args")) {
                    const char* s = p;
                    std::vector<Repair> repairs;
                    try {
                        skipValueStrict(p, e, repairs);
                    } catch (BadJson& bad) {
                        bad.what = "malformed JSON in \"args\": " + bad.what;
                        throw;
                    }
                    ev.args = std::string_view(s, size_t(p - s));
                    if (!repairs.empty()) {
                        if (scratchUsed_ == scratch_.size()) scratch_.emplace_back();
                        std::string& repaired = scratch_[scratchUsed_++];
                        applyRepairs(ev.args, repairs, repaired);
                        ev.args = repaired;
                        ev.repairs = uint32_t(repairs.size());
                    }
                } else if (equals(key, "bind_id")) {
                    ev.bindId = text(p);
                } else if (equals(key, "flow_in")) {
                    ev.flowIn = equals(text(p), "true");
                } else if (equals(key, "flow_out")) {
                    ev.flowOut = equals(text(p), "true");
                } else {
                    skipValue(p, e);
                }
        }
        skipWs(p, e);
        const char c = *p++;
        if (c == ',') continue;
        if (c == '}') return;
        fail(p - 1, "expected ',' or '}' after a member of an event");
    }
}

bool forEachMember(std::string_view json,
                   const std::function<void(std::string_view, std::string_view)>& visit) {
    const char* p = json.data();
    const char* e = p + json.size();
    std::string keyScratch;
    try {
        skipWs(p, e);
        if (*p != '{') return false;
        ++p;
        skipWs(p, e);
        if (*p == '}') return true;
        for (;;) {
            skipWs(p, e);
            if (*p != '"') return false;
            const std::string key(readString(p, e, keyScratch));
            skipWs(p, e);
            if (*p != ':') return false;
            ++p;
            skipWs(p, e);
            const char* s = p;
            skipValue(p, e);
            visit(key, std::string_view(s, size_t(p - s)));
            if (p == e) return false;
            skipWs(p, e);
            const char c = *p++;
            if (c == '}') return true;
            if (c != ',') return false;
        }
    } catch (const EndOfWindow&) {
        return false;
    } catch (const BadJson&) {
        return false;
    }
}

std::string scalarValue(std::string_view raw) {
    if (raw.size() >= 2 && raw.front() == '"') {
        const char* p = raw.data();
        std::string scratch;
        try {
            return std::string(readString(p, raw.data() + raw.size(), scratch));
        } catch (const EndOfWindow&) {
        } catch (const BadJson&) {
        }
    }
    return std::string(raw);
}

bool numberValue(std::string_view raw, double& out) {
    std::string text = raw.size() >= 2 && raw.front() == '"' ? scalarValue(raw) : std::string(raw);
    if (text.empty()) return false;
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(out);
}

}  // namespace stallscope::chrome
