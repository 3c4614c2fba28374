#pragma once

// Where the trace writer's output goes: the items of one (track, level) as chunks of
// kChunkItems in trace_chunks, and packed entries (strings, flows, op statistics) in a blob
// stream, kPackedRows to a zstd frame.

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/sqlite.h"
#include "core/trace/trace_format.h"
#include "core/workspace.h"

namespace stallscope::trace {

// A statement prepared and finalized under the writer's connection lock (the connection is
// opened without SQLite's mutex; a worker writing tracks and the importer take turns).
class LockedStatement {
  public:
    LockedStatement(std::mutex& db, sqlite3* connection, std::string_view sql);
    ~LockedStatement();
    LockedStatement(const LockedStatement&) = delete;
    LockedStatement& operator=(const LockedStatement&) = delete;
    sql::Statement& operator*() { return *statement_; }
    sql::Statement* operator->() { return &*statement_; }

  private:
    std::mutex& db_;
    std::optional<sql::Statement> statement_;
};

// The statement ChunkSink inserts with.
constexpr const char* kInsertChunkSql =
    "INSERT INTO trace_chunks(profile_id, track_id, level, seq, first_ns, end_ns, count, data) "
    "VALUES(?,?,?,?,?,?,?,?)";

// Writes the items of one (track, level) as chunks of kChunkItems, each with the time range it
// covers, under the connection lock.
class ChunkSink {
  public:
    ChunkSink(sql::Statement& insert, std::mutex& db, int64_t profile, uint32_t track, int level)
        : insert_(insert), db_(db), profile_(profile), track_(track), level_(level) {}
    void add(const SliceItem& item) {
        slices_.push_back(item);
        note(item.start, item.end());
        if (slices_.size() >= kChunkItems) flush();
    }
    void add(const CounterItem& item) {
        samples_.push_back(item);
        note(item.ts, item.ts);
        if (samples_.size() >= kChunkItems) flush();
    }
    void flush();
    int64_t written() const { return seq_; }

  private:
    void note(int64_t start, int64_t end) {
        first_ = std::min(first_, start);
        last_ = std::max(last_, end);
    }
    sql::Statement& insert_;
    std::mutex& db_;
    int64_t profile_;
    uint32_t track_;
    int level_;
    int64_t seq_ = 0;
    int64_t first_ = INT64_MAX, last_ = INT64_MIN;
    std::vector<SliceItem> slices_;
    std::vector<CounterItem> samples_;
    ByteWriter bytes_;
};

// Collects packed entries of one blob stream (strings, flows, op statistics) and stores them
// kPackedRows to a zstd-compressed blob: a row per entry cost about a microsecond each.
class PackedSink {
  public:
    PackedSink(Workspace& workspace, int64_t profile, std::string stream)
        : workspace_(workspace), profile_(profile), stream_(std::move(stream)) {}
    ByteWriter& buffer() { return raw_; }
    bool startsChunk() const { return entries_ == 0; }
    void endEntry() {
        if (++entries_ == kPackedRows) flush();
    }
    void finish() { flush(); }

  private:
    void flush();
    Workspace& workspace_;
    int64_t profile_;
    std::string stream_;
    ByteWriter raw_;
    std::string packed_;
    size_t entries_ = 0;
    int64_t seq_ = 0;
};

}  // namespace stallscope::trace
