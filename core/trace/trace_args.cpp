#include "core/trace/trace_args.h"

#include <charconv>
#include <cstdlib>

#include "core/trace/trace_store.h"

namespace stallscope::trace {

namespace {

// Past the member's key and colon; npos when the text is not a member.
size_t valueStart(std::string_view member) {
    if (member.empty() || member[0] != '"') return std::string_view::npos;
    size_t p = 1;
    for (; p < member.size() && member[p] != '"'; ++p)
        if (member[p] == '\\') ++p;
    p = member.find(':', p);
    if (p == std::string_view::npos) return p;
    for (++p; p < member.size() && (member[p] == ' ' || member[p] == '\t'); ++p) {
    }
    return p < member.size() ? p : std::string_view::npos;
}

void appendEscaped(std::string& out, std::string_view text, size_t& p) {
    const char c = text[p];
    switch (c) {
        case 'n':
            out.push_back('\n');
            return;
        case 't':
            out.push_back('\t');
            return;
        case 'r':
            out.push_back('\r');
            return;
        case 'b':
            out.push_back('\b');
            return;
        case 'f':
            out.push_back('\f');
            return;
        case 'u':
            // Tracers' names are ASCII; other code points keep their escape.
            if (p + 4 < text.size()) {
                const std::string hex(text.substr(p + 1, 4));
                char* end = nullptr;
                const unsigned long v = std::strtoul(hex.c_str(), &end, 16);
                if (end == hex.c_str() + 4 && v < 0x80) {
                    out.push_back(char(v));
                } else {
                    out += "\\u" + hex;
                }
                p += 4;
                return;
            }
            out.push_back(c);
            return;
        default:
            out.push_back(c);  // \" \\ \/
    }
}

}  // namespace

std::optional<std::string> memberValue(std::string_view member) {
    size_t p = valueStart(member);
    if (p == std::string_view::npos) return std::nullopt;
    if (member[p] != '"') {
        // A number, literal, object or array: as written, without trailing blanks.
        std::string_view raw = member.substr(p);
        while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r'))
            raw.remove_suffix(1);
        return std::string(raw);
    }
    std::string out;
    for (++p; p < member.size(); ++p) {
        const char c = member[p];
        if (c == '"') return out;
        if (c != '\\' || p + 1 >= member.size()) {
            out.push_back(c);
            continue;
        }
        ++p;
        appendEscaped(out, member, p);
    }
    return out;
}

bool TraceArgs::has(uint64_t argsId, std::string_view key) const {
    return argsId != 0 && store_.argsMember(argsId, key).has_value();
}

std::optional<std::string> TraceArgs::text(uint64_t argsId, std::string_view key) const {
    if (argsId == 0) return std::nullopt;
    const auto member = store_.argsMember(argsId, key);
    return member ? memberValue(*member) : std::nullopt;
}

std::optional<int64_t> TraceArgs::integer(uint64_t argsId, std::string_view key) const {
    if (argsId == 0) return std::nullopt;
    std::string scratch;
    const auto member = store_.argsMemberView(argsId, key, scratch);
    if (!member) return std::nullopt;
    const size_t valueAt = valueStart(*member);
    if (valueAt == std::string_view::npos) return std::nullopt;
    // A number is read where it stands (a launch's correlation id, read for millions of
    // kernels); a string's text is unescaped first.
    std::optional<std::string> unquoted;
    std::string_view value = member->substr(valueAt);
    if (value[0] == '"') {
        unquoted = memberValue(*member);
        value = unquoted ? std::string_view(*unquoted) : std::string_view();
    }
    if (value.empty()) return std::nullopt;
    int64_t out = 0;
    const char* begin = value.data();
    const char* end = begin + value.size();
    const auto [at, error] = std::from_chars(begin, end, out);
    if (error != std::errc() || at == begin) return std::nullopt;
    return out;
}

std::optional<double> TraceArgs::real(uint64_t argsId, std::string_view key) const {
    const auto value = text(argsId, key);
    if (!value || value->empty()) return std::nullopt;
    char* end = nullptr;
    const double out = std::strtod(value->c_str(), &end);
    if (end == value->c_str()) return std::nullopt;
    return out;
}

std::string TraceArgs::json(uint64_t argsId) const {
    return store_.args(argsId);
}

}  // namespace stallscope::trace
