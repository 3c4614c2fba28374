#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace stallscope::sql {

// Thin RAII wrappers over the SQLite C API; every failure throws stallscope::Failure with the
// database's own message.

class Statement {
  public:
    Statement(sqlite3* db, std::string_view sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement(Statement&& other) noexcept;

    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);
    Statement& bindBlob(int index, const void* data, size_t size);
    Statement& bindNull(int index);

    // Returns true while a row is available.
    bool step();
    // Runs to completion and resets, keeping bindings cleared for reuse.
    void exec();
    void reset();

    int64_t int64(int column) const;
    double real(int column) const;
    std::string text(int column) const;
    std::string_view blob(int column) const;
    bool isNull(int column) const;

  private:
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, std::string_view sql);

// Commits on commit(), rolls back when destroyed without it (exceptions, cancellation).
class Transaction {
  public:
    explicit Transaction(sqlite3* db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

  private:
    sqlite3* db_;
    bool done_ = false;
};

}  // namespace stallscope::sql
