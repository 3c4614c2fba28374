#include "importers/cpi/cpi_sink.h"

namespace stallscope {

CpiSink::CpiSink(sqlite3* db, int64_t profileId)
    : profileId_(profileId),
      stack_(db,
             "INSERT INTO cpi_stacks(profile_id, kernel, source, grp, category, cycles) "
             "VALUES(?, ?, ?, ?, ?, ?)"),
      metrics_(db, profileId) {}

void CpiSink::stack(std::string_view kernel, std::string_view source, std::string_view group,
                    std::string_view category, double cycles) {
    stack_.bind(1, profileId_)
        .bind(2, kernel)
        .bind(3, source)
        .bind(4, group)
        .bind(5, category)
        .bind(6, cycles);
    stack_.exec();
    ++stackRows_;
}

void CpiSink::metric(std::string_view kernel, std::string_view source, std::string_view name,
                     std::string_view unit, std::optional<double> value,
                     std::optional<std::string_view> text) {
    metrics_.add(kernel, source, name, unit, value, text);
}

}  // namespace stallscope
