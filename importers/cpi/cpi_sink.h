#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/kernel_metric_sets.h"
#include "core/sqlite.h"

namespace stallscope {

// Prepared inserts into cpi_stacks and the kernel metric sets for one profile (inside the
// import's transaction). Call finish() after the last row.
class CpiSink {
  public:
    CpiSink(sqlite3* db, int64_t profileId);

    void stack(std::string_view kernel, std::string_view source, std::string_view group,
               std::string_view category, double cycles);
    void metric(std::string_view kernel, std::string_view source, std::string_view name,
                std::string_view unit, std::optional<double> value,
                std::optional<std::string_view> text = std::nullopt);

    // Writes what is still buffered (the last kernel's metrics).
    void finish() { metrics_.finish(); }

    int64_t stackRows() const { return stackRows_; }
    int64_t metricRows() const { return metrics_.metrics(); }

  private:
    int64_t profileId_;
    sql::Statement stack_;
    MetricSetWriter metrics_;
    int64_t stackRows_ = 0;
};

}  // namespace stallscope
