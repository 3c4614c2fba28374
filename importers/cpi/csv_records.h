#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_stream.h"

namespace stallscope::csv {

// Streams RFC 4180 records from an InputFile: quoted fields with doubled quotes, commas and
// newlines inside quotes, CRLF. Fields are unquoted copies valid until the next call.
class RecordReader {
  public:
    explicit RecordReader(InputFile& input);
    // False at the end of the input. Blank lines are skipped, and so is a UTF-8 byte-order mark
    // at the start of the file (Excel writes one).
    bool next(std::vector<std::string>& fields);
    // Lines that start with `prefix` outside a quoted field are not records (e.g. ncu's
    // `==PROF==` and `==WARNING==` messages, which may hold commas and quotes).
    void skipLinesStartingWith(std::string prefix) { skipPrefix_ = std::move(prefix); }
    // Lines before the first one containing `marker` (outside any record) are not records
    // either: ncu's table printed to stdout comes after the application's own output.
    void skipLinesBefore(std::string marker) { preambleMarker_ = std::move(marker); }
    long long preambleLines() const { return preambleLines_; }
    // How many lines were skipped that way, and the first few of them.
    long long skippedLines() const { return skippedLines_; }
    const std::vector<std::string>& firstSkippedLines() const { return firstSkipped_; }
    // Line on which the last returned record started (1-based).
    long long line() const { return recordLine_; }
    const std::string& path() const { return input_.path(); }

  private:
    InputFile& input_;
    LineReader lines_;
    long long recordLine_ = 0;
    bool first_ = true;
    std::string skipPrefix_;
    std::string preambleMarker_;  // emptied once found
    long long preambleLines_ = 0;
    long long skippedLines_ = 0;
    std::vector<std::string> firstSkipped_;
};

// The UTF-8 byte-order mark, and `text` without it.
inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
std::string_view stripBom(std::string_view text);

// The first line of sniffed bytes, without a byte-order mark, split into fields.
std::vector<std::string> sniffHeader(std::string_view head);

// Splits one line (no embedded newlines) into fields; used by detection on sniffed bytes.
std::vector<std::string> splitLine(std::string_view line);

// Trims spaces and tabs.
std::string_view trim(std::string_view s);

// A number as tools print it: "13,485", "9,495.42", " 1.5e3 ". Nothing for "", "n/a", "N/A",
// "-" or anything else that is not a number.
std::optional<double> parseNumber(std::string_view text);

// Header lookup: index of a column by exact (trimmed, case-insensitive) name, or -1.
int columnIndex(const std::vector<std::string>& header, std::string_view name);

}  // namespace stallscope::csv
