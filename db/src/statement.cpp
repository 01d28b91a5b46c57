#include "statement.hpp"

#include <sqlite3.h>

#include <cctype>

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
std::string upper_word(std::string_view sql, std::size_t& at) {
  while (at < sql.size() && (sql[at] == ' ' || sql[at] == '\n' || sql[at] == '(')) ++at;
  std::string word;
  while (at < sql.size() && sql[at] != ' ' && sql[at] != '\n' && sql[at] != '(' && sql[at] != ';')
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[at++])));
  return word;
}

// The word after `keyword` (a table name), lower case as written; "" when absent.
std::string table_after(std::string_view sql, std::string_view keyword) {
  std::size_t at = 0;
  while (at < sql.size()) {
    const std::string w = upper_word(sql, at);
    if (w.empty()) ++at;
    else if (w == keyword) {
      std::size_t from = at;
      upper_word(sql, from);
      while (at < sql.size() && sql[at] == ' ') ++at;
      return std::string(sql.substr(at, from - at));
    }
  }
  return {};
}

}  // namespace

// Users see what was being done, in words ("writing results"), not the SQL text.
std::string describe_sql(std::string_view sql) {
  std::size_t at = 0;
  const std::string verb = upper_word(sql, at);
  auto on = [&](const char* what, std::string_view keyword) {
    const std::string table = table_after(sql, keyword);
    return table.empty() ? std::string(what) + " the database" : std::string(what) + " " + table;
  };
  if (verb == "SELECT" || verb == "WITH") return on("reading", "FROM");
  if (verb == "INSERT" || verb == "REPLACE") return on("writing", "INTO");
  if (verb == "UPDATE") return on("updating", "UPDATE");
  if (verb == "DELETE") return on("deleting from", "FROM");
  if (verb == "BEGIN") return "starting a transaction";
  if (verb == "COMMIT" || verb == "END") return "committing a transaction";
  if (verb == "ROLLBACK") return "rolling back a transaction";
  if (verb == "PRAGMA") return "reading or setting database options";
  if (verb == "CREATE" || verb == "ALTER" || verb == "DROP") return "changing the schema";
  return "querying the database";
}

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
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, describe_sql(sql_) + " (preparing the query)");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, describe_sql(sql_) + " (binding parameter " + std::to_string(index) + ")");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, describe_sql(sql_) + " (binding parameter " + std::to_string(index) + ")");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, describe_sql(sql_) + " (binding parameter " + std::to_string(index) + ")");
  return *this;
}

Statement& Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, describe_sql(sql_) + " (binding parameter " + std::to_string(index) + ")");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_, rc, describe_sql(sql_));
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
  if (!s.step()) throw DbError(DbError::Kind::Other, describe_sql(sql) + ": the query returned no row");
  return s.int64(0);
}

}  // namespace gdn::db
