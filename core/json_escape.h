#pragma once

// JSON string literals for the JSON Stallscope writes itself (trace arguments, replay JSON
// Lines): one escaper, so every writer quotes text the same way.

#include <string>
#include <string_view>

namespace stallscope::json {

// Appends `text` as a JSON string literal: quote and backslash escaped, \n \r \t by name, the
// other control characters (below 0x20) as \u00XX. Every other byte passes through as it is:
// UTF-8 stays UTF-8, and bytes that are not UTF-8 are kept unchanged (readers that need valid
// UTF-8 check it themselves).
void appendString(std::string& out, std::string_view text);

// A control character (below 0x20) as \u00XX.
void appendControlEscape(std::string& out, char c);

}  // namespace stallscope::json
