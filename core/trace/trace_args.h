#pragma once

// The one typed reader of slice arguments over a TraceStore. Arguments are stored as the JSON
// object the importer wrote (an overlay's own members before its shared base's); this reads one
// member by key and decodes its value, instead of searching the JSON text.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stallscope::trace {

class TraceStore;

class TraceArgs {
  public:
    explicit TraceArgs(const TraceStore& store) : store_(store) {}

    bool has(uint64_t argsId, std::string_view key) const;
    // A string member unescaped; another value (number, object, array) as written.
    std::optional<std::string> text(uint64_t argsId, std::string_view key) const;
    // A number member (integral, or a string of digits as some tracers write ids).
    std::optional<int64_t> integer(uint64_t argsId, std::string_view key) const;
    std::optional<double> real(uint64_t argsId, std::string_view key) const;
    // The whole object ("{}" style JSON text; "" when the slice has none).
    std::string json(uint64_t argsId) const;

  private:
    const TraceStore& store_;
};

// The value of one member as stored ("\"key\":value"): a string unescaped (\uXXXX below 0x80
// decoded, others kept), anything else as written.
std::optional<std::string> memberValue(std::string_view member);

}  // namespace stallscope::trace
