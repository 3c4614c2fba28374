#include "importers/cpi/csv_records.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/errors.h"

namespace stallscope::csv {

namespace {

// Appends the fields of `line` to `fields`, continuing the last field when `inQuotes`.
// Returns whether the line ended inside a quoted field.
bool splitInto(std::string_view line, std::vector<std::string>& fields, bool inQuotes) {
    if (!inQuotes) fields.emplace_back();
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        std::string& field = fields.back();
        if (inQuotes) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    field.push_back('"');
                    ++i;
                } else {
                    inQuotes = false;
                }
            } else {
                field.push_back(c);
            }
        } else if (c == ',') {
            fields.emplace_back();
        } else if (c == '"' && std::all_of(field.begin(), field.end(),
                                           [](char ch) { return ch == ' ' || ch == '\t'; })) {
            field.clear();
            inQuotes = true;
        } else {
            field.push_back(c);
        }
    }
    return inQuotes;
}

}  // namespace

RecordReader::RecordReader(InputFile& input) : input_(input), lines_(input) {}

bool RecordReader::next(std::vector<std::string>& fields) {
    fields.clear();
    std::string_view line;
    while (lines_.next(line)) {
        if (first_) {
            line = stripBom(line);
            first_ = false;
        }
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        if (!skipPrefix_.empty() && line.starts_with(skipPrefix_)) {
            if (++skippedLines_ <= 8) firstSkipped_.emplace_back(trim(line));
            continue;
        }
        if (!preambleMarker_.empty()) {
            if (line.find(preambleMarker_) == std::string_view::npos) {
                ++preambleLines_;
                continue;
            }
            preambleMarker_.clear();
        }
        recordLine_ = lines_.lineNumber();
        bool open = splitInto(line, fields, false);
        while (open) {
            if (!lines_.next(line))
                throw InputError(atLine(input_.path(), recordLine_,
                                        "quoted field is not closed before the end of the file"));
            fields.back().push_back('\n');
            open = splitInto(line, fields, true);
        }
        return true;
    }
    return false;
}

std::string_view stripBom(std::string_view text) {
    if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
    return text;
}

std::vector<std::string> sniffHeader(std::string_view head) {
    head = stripBom(head);
    return splitLine(head.substr(0, head.find('\n')));
}

std::vector<std::string> splitLine(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<std::string> fields;
    splitInto(line, fields, false);
    return fields;
}

std::string_view trim(std::string_view s) {
    const auto begin = s.find_first_not_of(" \t\r");
    if (begin == std::string_view::npos) return {};
    const auto end = s.find_last_not_of(" \t\r");
    return s.substr(begin, end - begin + 1);
}

std::optional<double> parseNumber(std::string_view text) {
    text = trim(text);
    if (text.empty()) return std::nullopt;
    // Thousands separators: digits grouped by commas ("13,485", "9,495.42").
    std::string cleaned;
    if (text.find(',') != std::string_view::npos) {
        cleaned.reserve(text.size());
        for (char c : text)
            if (c != ',') cleaned.push_back(c);
        text = cleaned;
    }
    if (text.front() == '+') text.remove_prefix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    if (!std::isfinite(value)) return std::nullopt;
    return value;
}

int columnIndex(const std::vector<std::string>& header, std::string_view name) {
    for (size_t i = 0; i < header.size(); ++i) {
        const std::string_view h = trim(header[i]);
        if (h.size() == name.size() &&
            std::equal(h.begin(), h.end(), name.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            }))
            return static_cast<int>(i);
    }
    return -1;
}

}  // namespace stallscope::csv
