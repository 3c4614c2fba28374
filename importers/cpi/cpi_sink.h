#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sqlite.h"

namespace stallscope {

// Prepared inserts into cpi_stacks and kernel_metrics for one profile (inside the import's
// transaction).
class CpiSink {
  public:
    CpiSink(sqlite3* db, int64_t profileId);

    void stack(std::string_view kernel, std::string_view source, std::string_view group,
               std::string_view category, double cycles);
    void metric(std::string_view kernel, std::string_view source, std::string_view name,
                std::string_view unit, std::optional<double> value,
                std::optional<std::string_view> text = std::nullopt);

    int64_t stackRows() const { return stackRows_; }
    int64_t metricRows() const { return metricRows_; }

  private:
    int64_t profileId_;
    sql::Statement stack_;
    sql::Statement metric_;
    int64_t stackRows_ = 0;
    int64_t metricRows_ = 0;
};

}  // namespace stallscope
