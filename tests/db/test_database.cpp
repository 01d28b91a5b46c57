// Opening, creating and migrating results databases; refusing files that are not ours.
#include <sqlite3.h>

#include <fstream>

#include "db_fixture.hpp"
#include "gdn/db/model.hpp"
#include "gdn/db/selection.hpp"

namespace gdn::db::test {
namespace {

std::string pragma_text(const Database& db, const char* pragma) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db.handle(), pragma, -1, &s, nullptr);
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return out;
}

bool has_column(const Database& db, const char* table, const char* column) {
  const std::string sql = std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = '" + column + "'";
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &s, nullptr);
  const bool found = sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  return found;
}

DbError::Kind open_error_kind(const std::string& path, const OpenOptions& options, std::string& message) {
  try {
    Database::open(path, options);
  } catch (const DbError& e) {
    message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "opening '" << path << "' should have failed";
  return DbError::Kind::Other;
}

TEST(Database, CreatesCurrentSchemaWithWalAndApplicationId) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(pragma_text(db, "PRAGMA application_id"), std::to_string(kApplicationId));
  EXPECT_EQ(pragma_text(db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(pragma_text(db, "PRAGMA foreign_keys"), "1");
  for (const char* table : {"devices", "builds", "variants", "problems", "sweeps", "results",
                            "samples", "pm_samples", "overrides"})
    EXPECT_TRUE(has_column(db, table, table == std::string("samples") || table == std::string("pm_samples") ? "idx" : "id"))
        << table;
  EXPECT_TRUE(has_column(db, "results", "local_bytes"));
}

TEST(Database, ReopeningKeepsDataAndVersion) {
  ScratchDir dir;
  {
    Database db = Database::open(dir.file("r.db"));
    ResultsWriter(db).register_device(h200());
  }
  Database db = Database::open(dir.file("r.db"), {.create_if_missing = false});
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(pragma_text(db, "SELECT count(*) FROM devices"), "1");
}

TEST(Database, MigratesVersion1ToCurrentKeepingResults) {
  ScratchDir dir;
  const std::string path = dir.file("old.db");
  {
    Database v1 = Database::open(path, {.migrate_to_version = 1});
    ASSERT_EQ(v1.schema_version(), 1);
    EXPECT_FALSE(has_column(v1, "results", "local_bytes"));
    // Version 1 has no local_bytes and no overrides: write a result the v1 way, in raw SQL.
    v1.exec(
        "INSERT INTO devices VALUES (1, 'NVIDIA H200', 'GPU-1', 132, 9, 0, 1980, 3201, 1, 1, 'd', '13.0');"
        "INSERT INTO builds VALUES (1, 'abc', '', 'default', '2025-01-01T00:00:00Z');"
        "INSERT INTO variants VALUES (1, 'v', 'fwd', 'staged', 64, 2, 'cooperative', 0, 0, 1);"
        "INSERT INTO problems VALUES (1, 's', 'h', 0, 1, 1, 128, 128, 'bf16', 1, 1, 64, 64, '64');"
        "INSERT INTO sweeps VALUES (1, 1, 1, 'sp', 's', 'exhaustive', 0, 0, 'none', 1, 1, 1, 0.1, 10, 0, 0, '', 'finished', 't0', 't1');"
        "INSERT INTO results (sweep_id, variant_id, problem_id, outcome, message, errors_json, "
        "latency_p50_ms, sample_count, metrics_unavailable_reason) VALUES (1, 1, 1, 'Passed', '', '{}', 0.5, 1, 'none');");
    EXPECT_THROW(v1.exec("SELECT * FROM overrides"), DbError);
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), 2);
  EXPECT_TRUE(has_column(db, "results", "local_bytes"));
  const auto row = result_by_id(db, 1);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->result.latency_p50_ms, 0.5);
  EXPECT_FALSE(row->result.local_bytes.has_value());  // the new column is NULL for old rows
  EXPECT_TRUE(list_overrides(db, 1).empty());  // the v2 table exists and is empty
}

TEST(Database, ReadOnlyOpenOfOldSchemaAsksForMigration) {
  ScratchDir dir;
  const std::string path = dir.file("old.db");
  { Database::open(path, {.migrate_to_version = 1}); }
  std::string message;
  EXPECT_EQ(open_error_kind(path, {.read_only = true}, message), DbError::Kind::NeedsMigration);
  EXPECT_NE(message.find("schema version 1"), std::string::npos) << message;
}

TEST(Database, RejectsForeignSqliteDatabase) {
  ScratchDir dir;
  const std::string path = dir.file("foreign.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE customers (id INTEGER, name TEXT)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  std::string message;
  EXPECT_EQ(open_error_kind(path, {}, message), DbError::Kind::ForeignSchema);
  EXPECT_NE(message.find("not a gdnlab results database"), std::string::npos) << message;
  EXPECT_NE(message.find("customers"), std::string::npos) << message;
  // The foreign file was not touched: no gdnlab tables were added.
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(raw, "SELECT count(*) FROM sqlite_master", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 1);
  sqlite3_finalize(s);
  sqlite3_close(raw);
}

TEST(Database, RejectsNewerSchema) {
  ScratchDir dir;
  const std::string path = dir.file("new.db");
  { Database::open(path).exec("PRAGMA user_version = 99"); }
  std::string message;
  EXPECT_EQ(open_error_kind(path, {}, message), DbError::Kind::TooNew);
  EXPECT_NE(message.find("99"), std::string::npos) << message;
}

TEST(Database, CorruptFileGivesClearMessage) {
  ScratchDir dir;
  const std::string path = dir.file("corrupt.db");
  std::ofstream(path) << std::string(4096, 'x') << "this is not a database";
  std::string message;
  EXPECT_EQ(open_error_kind(path, {}, message), DbError::Kind::NotADatabase);
  EXPECT_NE(message.find("not an SQLite database or is corrupt"), std::string::npos) << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(Database, MissingFileWithoutCreateIsAnError) {
  ScratchDir dir;
  std::string message;
  EXPECT_EQ(open_error_kind(dir.file("absent.db"), {.create_if_missing = false}, message),
            DbError::Kind::Missing);
  EXPECT_NE(message.find("does not exist"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("absent.db")));
  EXPECT_EQ(open_error_kind(dir.file("absent.db"), {.read_only = true}, message), DbError::Kind::Missing);
}

TEST(Database, BadOpenArgumentsNameTheArgument) {
  ScratchDir dir;
  std::string message;
  EXPECT_EQ(open_error_kind("", {}, message), DbError::Kind::Invalid);
  EXPECT_NE(message.find("database path"), std::string::npos);
  EXPECT_EQ(open_error_kind(dir.file("a.db"), {.migrate_to_version = 7}, message), DbError::Kind::Invalid);
  EXPECT_NE(message.find("migrate_to_version"), std::string::npos);
  EXPECT_EQ(open_error_kind(dir.path().string(), {}, message), DbError::Kind::Invalid);
  EXPECT_NE(message.find("is a directory"), std::string::npos);
}

TEST(Database, TransactionRollsBackUnlessCommitted) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  {
    Transaction tx(db);
    db.exec("INSERT INTO builds (git_sha, flags, variant_set, created_at) VALUES ('a', '', 'd', 't')");
  }
  EXPECT_EQ(pragma_text(db, "SELECT count(*) FROM builds"), "0");
  {
    Transaction tx(db);
    db.exec("INSERT INTO builds (git_sha, flags, variant_set, created_at) VALUES ('a', '', 'd', 't')");
    tx.commit();
  }
  EXPECT_EQ(pragma_text(db, "SELECT count(*) FROM builds"), "1");
}

TEST(Database, SecondWriterTimesOutWithLockedMessage) {
  ScratchDir dir;
  const std::string path = dir.file("r.db");
  Database a = Database::open(path);
  Database b = Database::open(path, {.busy_timeout_ms = 50});
  Transaction hold(a);
  try {
    Transaction blocked(b);
    FAIL() << "the second write transaction should time out";
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::Locked);
    EXPECT_NE(std::string(e.what()).find("write lock"), std::string::npos) << e.what();
  }
}

TEST(Database, ReaderSeesWritersCommitsThroughChangeCounter) {
  ScratchDir dir;
  const std::string path = dir.file("r.db");
  Database writer_db = Database::open(path);
  Database reader = Database::open(path, {.read_only = true});
  const auto before = reader.change_counter();
  ResultsWriter(writer_db).register_device(h200());
  EXPECT_NE(reader.change_counter(), before);
  EXPECT_EQ(pragma_text(reader, "SELECT count(*) FROM devices"), "1");
}

}  // namespace
}  // namespace gdn::db::test
