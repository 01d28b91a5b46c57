// Raw SQL probes for tests: row counts and integrity checks without going through the model.
#pragma once

#include <sqlite3.h>

#include <string>

#include "gdn/db/database.hpp"

namespace gdn::db::test {

inline std::string query_text(const Database& db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return "(prepare failed)";
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return out;
}

inline std::int64_t count_rows(const Database& db, const std::string& table) {
  return std::stoll(query_text(db, "SELECT count(*) FROM " + table));
}

inline std::string integrity_check(const Database& db) { return query_text(db, "PRAGMA integrity_check"); }

}  // namespace gdn::db::test
