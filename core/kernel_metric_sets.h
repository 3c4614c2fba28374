#pragma once

// The packed layout of the kernel metric tables, part of the workspace schema (core/schema.cpp
// repacks older rows into it): kind-neutral, so the schema does not depend on core/cpi/.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/byte_codec.h"
#include "core/sqlite.h"

namespace stallscope {

// Kernel metrics (of CPI profiles) are stored one row per (kernel, source) run of metrics
// (kernel_metric_sets), the metrics packed into a blob that refers to a per-profile dictionary of
// (name, unit) pairs (kernel_metric_names). An Nsight Compute export repeats the same hundred
// metric names for every kernel: one SQL row per metric made a 100 MB CSV a 1.2 GB workspace and
// most of the import time was SQLite's per-row work.
//
// Blob: per metric, varint(name id), a flags byte (1: value follows, 2: text follows, 4: the
// value is a whole number), the value as a zigzag varint (whole) or 8 bytes, the text as
// varint(length) and its bytes.
class MetricSetWriter {
  public:
    MetricSetWriter(sqlite3* db, int64_t profileId);
    // Metrics of one kernel arrive together; a new (kernel, source) closes the open set.
    void add(std::string_view kernel, std::string_view source, std::string_view name,
             std::string_view unit, std::optional<double> value,
             std::optional<std::string_view> text);
    // Writes the open set; call once after the last add().
    void finish();
    int64_t metrics() const { return metrics_; }

  private:
    int64_t profileId_;
    sql::Statement insertName_;
    sql::Statement insertSet_;
    std::unordered_map<std::string, uint64_t> nameIds_;  // name '\x1f' unit -> id
    std::string key_;
    std::string kernel_, source_;
    bool open_ = false;
    int64_t setMetrics_ = 0;
    int64_t sets_ = 0;
    int64_t metrics_ = 0;
    ByteWriter blob_;
};

// One stored metric, as handed to forEachKernelMetric (views valid during the call).
struct StoredMetric {
    const std::string& kernel;
    const std::string& source;
    const std::string& name;
    const std::string& unit;
    std::optional<double> value;
    std::string_view text;  // empty when the metric has no text
};

// Every stored metric of a profile in import order. SQL: off the GUI thread.
void forEachKernelMetric(sqlite3* db, int64_t profileId,
                         const std::function<void(const StoredMetric&)>& visit);

}  // namespace stallscope
