// Private to db/src: a prepared statement with typed binds and columns. Every SQLite error
// becomes a DbError that names the file, the statement and SQLite's own message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gdn/db/database.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace gdn::db {

// What a statement does, in words for a message: "reading sweeps", "writing results",
// "committing a transaction" (messages never show the SQL text itself).
std::string describe_sql(std::string_view sql);

[[noreturn]] void throw_sqlite(sqlite3* db, int rc, const std::string& context);

class Statement {
 public:
  Statement(const Database& db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // 1-based parameter index, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind_null(int index);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // true while a row is available; false when done. Throws on error.
  bool step();
  void run();  // step until done, for statements without rows
  void reset();

  // 0-based column index, as in SQLite.
  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  int integer(int col) const { return static_cast<int>(int64(col)); }
  double real(int col) const;
  std::string text(int col) const;  // "" for NULL
  std::optional<double> opt_real(int col) const;
  std::optional<int> opt_int(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  std::string path_;
};

// Rows changed by the last INSERT/UPDATE/DELETE on this connection.
std::int64_t last_changes(const Database& db);

// Returns the single int64 of a one-row query (e.g. "SELECT count(*) ...").
std::int64_t query_int64(const Database& db, std::string_view sql);

}  // namespace gdn::db
