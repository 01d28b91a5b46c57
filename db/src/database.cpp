#include "gdn/db/database.hpp"

#include <sqlite3.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "schema.hpp"
#include "statement.hpp"

namespace gdn::db {

namespace {

std::string hex32(std::int32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(v));
  return buf;
}

// First read of the file: this is where SQLite notices a non-database or corrupt header.
struct FileIdentity {
  std::int32_t application_id = 0;
  int user_version = 0;
  std::vector<std::string> tables;
};

FileIdentity read_identity(const Database& db) {
  FileIdentity id;
  try {
    id.application_id = static_cast<std::int32_t>(query_int64(db, "PRAGMA application_id"));
    id.user_version = static_cast<int>(query_int64(db, "PRAGMA user_version"));
    Statement s(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (s.step()) id.tables.push_back(s.text(0));
  } catch (const DbError& e) {
    if (e.kind() == DbError::Kind::NotADatabase)
      throw DbError(DbError::Kind::NotADatabase,
                    "cannot open results database '" + db.path() +
                        "': the file is not an SQLite database or is corrupt (" + e.what() + ")");
    throw;
  }
  return id;
}

std::string list_tables(const std::vector<std::string>& tables) {
  std::string out;
  for (std::size_t i = 0; i < tables.size() && i < 8; ++i) out += (i ? ", " : "") + tables[i];
  if (tables.size() > 8) out += ", ...";
  return out;
}

void check_identity(const FileIdentity& id, const std::string& path) {
  const bool empty_file = id.application_id == 0 && id.user_version == 0 && id.tables.empty();
  if (empty_file) return;
  if (id.application_id != kApplicationId)
    throw DbError(DbError::Kind::ForeignSchema,
                  "'" + path + "' is an SQLite database but not a gdnlab results database "
                  "(expected PRAGMA application_id " + hex32(kApplicationId) + ", found " +
                  hex32(id.application_id) + "; tables: " +
                  (id.tables.empty() ? std::string("none") : list_tables(id.tables)) + ")");
  if (id.user_version > kSchemaVersion)
    throw DbError(DbError::Kind::TooNew,
                  "results database '" + path + "' has schema version " +
                      std::to_string(id.user_version) + ", newer than this gdnlab supports (" +
                      std::to_string(kSchemaVersion) + "); use a newer gdnlab");
}

// Whether `path` must be opened immutable to be read at all: its folder cannot be written (read-
// only media, a read-only mount) and no write-ahead log holds data the main file lacks. SQLite
// otherwise creates the -shm (and -wal) file of a WAL database even for reading, and fails with
// "attempt to write a readonly database".
bool needs_immutable_open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::absolute(path, ec).parent_path();
  if (ec || ::access(dir.c_str(), W_OK) == 0) return false;
  const fs::path wal = path + "-wal";
  return !fs::exists(wal, ec) || fs::file_size(wal, ec) == 0;
}

// SQLite URI of a file path ('%', '?' and '#' escaped), with the immutable parameter.
std::string immutable_uri(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string abs = fs::absolute(path, ec).string();
  std::string uri = "file:";
  for (const char c : abs) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[static_cast<unsigned char>(c) >> 4];
      uri += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Database::Database(sqlite3* db, std::string path, bool read_only)
    : db_(db), path_(std::move(path)), read_only_(read_only) {}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      read_only_(other.read_only_) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    read_only_ = other.read_only_;
  }
  return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

Database Database::open(const std::string& path, const OpenOptions& options) {
  if (path.empty()) throw DbError(DbError::Kind::Invalid, "database path: expected a file path, got an empty string");
  if (options.busy_timeout_ms < 0)
    throw DbError(DbError::Kind::Invalid, "busy_timeout_ms: expected >= 0, got " +
                                              std::to_string(options.busy_timeout_ms));
  const int target = options.migrate_to_version == 0 ? kSchemaVersion : options.migrate_to_version;
  if (target < 1 || target > kSchemaVersion)
    throw DbError(DbError::Kind::Invalid, "migrate_to_version: expected 0 or 1.." +
                                              std::to_string(kSchemaVersion) + ", got " +
                                              std::to_string(options.migrate_to_version));
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (!exists && (!options.create_if_missing || options.read_only))
    throw DbError(DbError::Kind::Missing, "results database '" + path + "' does not exist");
  if (exists && std::filesystem::is_directory(path, ec))
    throw DbError(DbError::Kind::Invalid, "results database '" + path + "' is a directory, expected a file");

  sqlite3* raw = nullptr;
  const bool immutable = options.read_only && needs_immutable_open(path);
  const int flags = options.read_only ? SQLITE_OPEN_READONLY
                                      : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const std::string name = immutable ? immutable_uri(path) : path;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0),
                                 nullptr);
  Database db(raw, path, options.read_only);  // owns raw even when opening failed
  if (rc != SQLITE_OK) throw_sqlite(raw, rc, "opening results database '" + path + "'");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);

  const FileIdentity id = read_identity(db);
  check_identity(id, path);
  if (id.user_version < target) {
    // Read-only: a file at least kOldestReadableVersion is read as it is, unmigrated.
    if (options.read_only && id.user_version < kOldestReadableVersion)
      throw DbError(DbError::Kind::NeedsMigration,
                    "results database '" + path + "' has schema version " +
                        std::to_string(id.user_version) + " (current " +
                        std::to_string(kSchemaVersion) +
                        ") and was opened read-only; open it once read-write to migrate it");
  }
  db.exec("PRAGMA foreign_keys = ON");
  if (!options.read_only) {
    // WAL: the dashboard reads while a sweep writes; NORMAL sync is durable against a killed
    // process (kill -9), which is the failure the sweep must survive.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    if (id.user_version < target) migrate(db, id.user_version, target);
  }
  // A file left at an older version (read-only, or migrate_to_version) reads with the current
  // columns through temporary views; writes name main.<table> (writer.cpp).
  if (const int version = db.schema_version(); version < kSchemaVersion) add_compat_views(db, version);
  return db;
}

int Database::schema_version() const {
  return static_cast<int>(query_int64(*this, "PRAGMA user_version"));
}

void Database::exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) throw_sqlite(db_, rc, describe_sql(sql));
}

std::int64_t Database::change_counter() const {
  return query_int64(*this, "PRAGMA data_version") + sqlite3_total_changes64(db_);
}

bool Database::leave_wal() noexcept {
  if (read_only_ || !db_) return false;
  // No waiting: a dashboard holding the file keeps it in WAL mode, which is fine.
  sqlite3_busy_timeout(db_, 0);
  sqlite3_stmt* st = nullptr;
  bool left = false;
  if (sqlite3_prepare_v2(db_, "PRAGMA journal_mode = DELETE", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    const auto* mode = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    left = mode && std::string(mode) == "delete";
  }
  sqlite3_finalize(st);
  return left;
}

Transaction::Transaction(Database& db) : db_(db) {
  if (db.read_only())
    throw DbError(DbError::Kind::Invalid,
                  "write transaction on '" + db.path() + "': the database was opened read-only");
  nested_ = sqlite3_get_autocommit(db.handle()) == 0;
  db_.exec(nested_ ? "SAVEPOINT gdn_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_) return;
  if (nested_) {
    sqlite3_exec(db_.handle(), "ROLLBACK TO gdn_nested", nullptr, nullptr, nullptr);
    sqlite3_exec(db_.handle(), "RELEASE gdn_nested", nullptr, nullptr, nullptr);
  } else {
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  db_.exec(nested_ ? "RELEASE gdn_nested" : "COMMIT");
  done_ = true;
}

}  // namespace gdn::db
