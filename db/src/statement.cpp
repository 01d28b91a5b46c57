#include "statement.hpp"

#include <sqlite3.h>

namespace gdn::db {

namespace {
DbError::Kind kind_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return DbError::Kind::Locked;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return DbError::Kind::NotADatabase;
    case SQLITE_CONSTRAINT: return DbError::Kind::Constraint;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_READONLY: return DbError::Kind::Io;
    default: return DbError::Kind::Other;
  }
}
}  // namespace

void throw_sqlite(sqlite3* db, int rc, const std::string& context) {
  std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  std::string where = file && *file ? std::string(" in '") + file + "'" : std::string();
  std::string hint;
  const DbError::Kind kind = kind_of(rc);
  if (kind == DbError::Kind::Locked)
    hint = " (another process holds the write lock past the busy timeout; is a sweep writing?)";
  if (kind == DbError::Kind::NotADatabase)
    hint = " (expected a gdnlab results database: the file is not SQLite or is corrupt)";
  throw DbError(kind, context + where + ": " + detail + hint);
}

Statement::Statement(const Database& db, std::string_view sql) : db_(db.handle()), sql_(sql) {
  const int rc = sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "preparing SQL [" + sql_ + "]");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "binding parameter " + std::to_string(index) + " of [" + sql_ + "]");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "binding parameter " + std::to_string(index) + " of [" + sql_ + "]");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "binding parameter " + std::to_string(index) + " of [" + sql_ + "]");
  return *this;
}

Statement& Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, "binding parameter " + std::to_string(index) + " of [" + sql_ + "]");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_, rc, "running SQL [" + sql_ + "]");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::optional<double> Statement::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}

std::optional<int> Statement::opt_int(int col) const {
  if (is_null(col)) return std::nullopt;
  return integer(col);
}

std::int64_t last_changes(const Database& db) { return sqlite3_changes64(db.handle()); }

std::int64_t query_int64(const Database& db, std::string_view sql) {
  Statement s(db, sql);
  if (!s.step()) throw DbError(DbError::Kind::Other, "query returned no row: " + std::string(sql));
  return s.int64(0);
}

}  // namespace gdn::db
