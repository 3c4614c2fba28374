#include "core/trace/chunk_sinks.h"

namespace stallscope::trace {

LockedStatement::LockedStatement(std::mutex& db, sqlite3* connection, std::string_view sql)
    : db_(db) {
    std::lock_guard lock(db_);
    statement_.emplace(connection, sql);
}

LockedStatement::~LockedStatement() {
    std::lock_guard lock(db_);
    statement_.reset();
}

void ChunkSink::flush() {
    const size_t n = slices_.size() + samples_.size();
    if (n == 0) return;
    bytes_.clear();
    if (!slices_.empty()) encodeSlices(slices_, bytes_);
    if (!samples_.empty()) encodeCounters(samples_, bytes_);
    std::lock_guard lock(db_);
    insert_.bind(1, profile_).bind(2, int64_t(track_)).bind(3, level_).bind(4, seq_++);
    insert_.bind(5, first_).bind(6, last_).bind(7, int64_t(n));
    insert_.bindBlob(8, bytes_.bytes().data(), bytes_.size());
    insert_.exec();
    slices_.clear();
    samples_.clear();
    first_ = INT64_MAX;
    last_ = INT64_MIN;
}

void PackedSink::flush() {
    if (entries_ == 0) return;
    packChunk(raw_.bytes(), packed_);
    workspace_.appendBlob(profile_, stream_, seq_++, packed_.data(), packed_.size());
    raw_.clear();
    entries_ = 0;
}

}  // namespace stallscope::trace
