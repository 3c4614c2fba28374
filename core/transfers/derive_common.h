#pragma once

// Helpers the XProf and Kineto derivations share (internal to core/transfers).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/transfers/transfers.h"

namespace stallscope::transfers::detail {

// The string (or number, as text) value of top-level member `key` of a JSON object's text;
// nullopt when absent. Keys inside string values are escaped, so a match is a real member.
std::optional<std::string> jsonMember(std::string_view json, std::string_view key);

// Links by (device, name), created on first use.
class LinkTable {
  public:
    explicit LinkTable(std::vector<Link>& links) : links_(links) {}
    uint32_t get(const std::string& device, const std::string& name, const std::string& source,
                 const std::string& destination);

  private:
    std::vector<Link>& links_;
    std::map<std::pair<std::string, std::string>, uint32_t> index_;
};

// Totals, model error and median run error from the modules and transfers.
void summarize(Analysis& analysis);
// Appends a modelled part (another device's links, runs and transfers), renumbering its ids.
void merge(Analysis& into, Analysis&& part);

Analysis deriveXprof(const trace::TraceStore& store);
Analysis deriveKineto(const trace::TraceStore& store);

}  // namespace stallscope::transfers::detail
