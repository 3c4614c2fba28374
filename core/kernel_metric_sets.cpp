#include "core/kernel_metric_sets.h"

#include <cmath>
#include <vector>

#include "core/errors.h"

namespace stallscope {

namespace {

constexpr uint8_t kHasValue = 1;
constexpr uint8_t kHasText = 2;
constexpr uint8_t kIntegerValue = 4;  // with kHasValue: a zigzag varint instead of 8 bytes

// Counters (cycles, bytes, instructions, launch fields) are whole numbers: a varint is 1-5 bytes.
bool storedAsInteger(double v) {
    return v == std::floor(v) && std::abs(v) < 9.0e15 && !(v == 0 && std::signbit(v));
}

}  // namespace

MetricSetWriter::MetricSetWriter(sqlite3* db, int64_t profileId)
    : profileId_(profileId),
      insertName_(db,
                  "INSERT INTO kernel_metric_names(profile_id, id, name, unit) VALUES(?, ?, ?, ?)"),
      insertSet_(db,
                 "INSERT INTO kernel_metric_sets(profile_id, seq, kernel, source, metrics, data) "
                 "VALUES(?, ?, ?, ?, ?, ?)") {}

void MetricSetWriter::add(std::string_view kernel, std::string_view source, std::string_view name,
                          std::string_view unit, std::optional<double> value,
                          std::optional<std::string_view> text) {
    if (!open_ || kernel != kernel_ || source != source_) {
        finish();
        kernel_.assign(kernel);
        source_.assign(source);
        open_ = true;
    }
    key_.assign(name);
    key_.push_back('\x1f');
    key_.append(unit);
    auto [it, inserted] = nameIds_.try_emplace(key_, nameIds_.size());
    if (inserted) {
        insertName_.bind(1, profileId_)
            .bind(2, static_cast<int64_t>(it->second))
            .bind(3, name)
            .bind(4, unit);
        insertName_.exec();
    }
    blob_.varint(it->second);
    const bool integer = value && storedAsInteger(*value);
    const uint8_t flags = static_cast<uint8_t>((value ? kHasValue : 0) | (text ? kHasText : 0) |
                                               (integer ? kIntegerValue : 0));
    blob_.bytesAppend(std::string_view(reinterpret_cast<const char*>(&flags), 1));
    if (integer)
        blob_.zigzag(static_cast<int64_t>(*value));
    else if (value)
        blob_.real(*value);
    if (text) {
        const std::string_view t = *text;
        blob_.varint(t.size());
        blob_.bytesAppend(t);
    }
    ++setMetrics_;
    ++metrics_;
}

void MetricSetWriter::finish() {
    if (!open_) return;
    insertSet_.bind(1, profileId_)
        .bind(2, sets_++)
        .bind(3, std::string_view(kernel_))
        .bind(4, std::string_view(source_))
        .bind(5, setMetrics_)
        .bindBlob(6, blob_.bytes().data(), blob_.size());
    insertSet_.exec();
    blob_.clear();
    setMetrics_ = 0;
    open_ = false;
}

void forEachKernelMetric(sqlite3* db, int64_t profileId,
                         const std::function<void(const StoredMetric&)>& visit) {
    std::vector<std::pair<std::string, std::string>> names;  // by id: name, unit
    {
        sql::Statement st(db,
                          "SELECT id, name, unit FROM kernel_metric_names WHERE profile_id = ? "
                          "ORDER BY id");
        st.bind(1, profileId);
        while (st.step()) {
            const auto id = static_cast<size_t>(st.int64(0));
            if (id != names.size())
                throw Failure("kernel metric names: id " + std::to_string(id) + " out of sequence");
            names.emplace_back(st.text(1), st.text(2));
        }
    }
    sql::Statement st(db,
                      "SELECT kernel, source, data FROM kernel_metric_sets WHERE profile_id = ? "
                      "ORDER BY seq");
    st.bind(1, profileId);
    std::string kernel, source;
    while (st.step()) {
        kernel = st.text(0);
        source = st.text(1);
        ByteReader reader(st.blob(2));
        while (!reader.atEnd()) {
            const uint64_t id = reader.varint();
            if (id >= names.size())
                throw Failure("kernel metric set of '" + kernel + "': unknown metric id " +
                              std::to_string(id));
            const auto flags = static_cast<uint8_t>(reader.take(1)[0]);
            std::optional<double> value;
            if (flags & kHasValue)
                value =
                    (flags & kIntegerValue) ? static_cast<double>(reader.zigzag()) : reader.real();
            std::string_view text;
            if (flags & kHasText) text = reader.take(reader.varint());
            visit(StoredMetric{kernel, source, names[id].first, names[id].second, value, text});
        }
    }
}

}  // namespace stallscope
