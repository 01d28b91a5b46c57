// The results database: one SQLite file, WAL journal, foreign keys on, a busy timeout so a
// reader (the dashboard) and the writer (a sweep) share it. Opening checks the file is ours
// (PRAGMA application_id) and brings its schema up to date (PRAGMA user_version migrations).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

struct sqlite3;

namespace gdn::db {

// "gdnl" in ASCII: PRAGMA application_id of every gdnlab results database.
inline constexpr std::int32_t kApplicationId = 0x67646E6C;
// Current schema version (PRAGMA user_version). History:
//   1: devices, builds, variants, problems, sweeps, results, samples, pm_samples
//   2: results.local_bytes (spill bytes) and the selection-override table
//   3: variants.roles also accepts 'column_warps' (the CHECK widened; table rebuilt)
//   4: overrides.balance_bucket (the dispatch key's balance; -1 on the rows before it: any)
//   5: sharded sweeps: sweep_shard (a sweep's --shard I/N), merged_shards and
//      results.merged_shard_id (which shard and device each merged result came from), and
//      results.device_id (a result measured on another GPU of the kind after a resume)
//   6: launch plans: variants.pin_* (the plan fields a sweep candidate pins; variants rebuilt
//      without consumer_regs and chains_per_cta) and results.plan_* (the plan each call ran with)
//   7: variants.pin_recompute_cp_chunks and results.plan_recompute_cp_chunks (the backward's
//      forward recompute in CP segments of its own)
//   8: variants.pin_pass1_beside_recompute and results.plan_pass1_beside_recompute (the
//      backward's CP pass 1 beside the forward recompute's state loop)
//   9: variants.pin_group_sum_beside and results.plan_group_sum_beside (the fused backward's
//      group sum beside it)
inline constexpr int kSchemaVersion = 9;
// The oldest schema version a read-only open reads as it is: the migrations after it widened
// a CHECK and added an override column that readers of older files take as -1 (any), so every
// table and column a reader needs is there. Older files are DbError::NeedsMigration when
// opened read-only (a read-write open migrates them).
inline constexpr int kOldestReadableVersion = 2;
static_assert(kOldestReadableVersion >= 1 && kOldestReadableVersion <= kSchemaVersion);

// Every database failure: the message names the file and what was expected vs found.
class DbError : public std::runtime_error {
 public:
  enum class Kind {
    Missing,         // file does not exist and creation was not asked for
    NotADatabase,    // not SQLite, or corrupt
    ForeignSchema,   // an SQLite file, but not a gdnlab results database
    TooNew,          // written by a newer gdnlab (user_version > kSchemaVersion)
    NeedsMigration,  // schema older than kOldestReadableVersion, opened read-only
    Locked,          // busy timeout expired
    Constraint,      // a row broke a constraint (bad value, unknown id)
    Invalid,         // a bad argument to the db API (names the argument)
    Io,              // export: file system errors
    Other,
  };
  DbError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct OpenOptions {
  bool create_if_missing = true;  // false: a missing file is DbError::Missing
  bool read_only = false;         // no migration, no writes (dashboard on someone else's file);
                                  // reads files of kOldestReadableVersion on as they are
  int busy_timeout_ms = 5000;     // how long to wait for another connection's write lock
  // Tests only: build the schema up to this version instead of kSchemaVersion (to make an
  // "old" database for migration tests). 0 = current.
  int migrate_to_version = 0;
};

// An existing file read as it is (no migration, no writes): what reports, exports, gaps,
// merges and replays open.
inline constexpr OpenOptions kReadExisting{.create_if_missing = false, .read_only = true};

class Database {
 public:
  // Opens (or creates) the file; throws DbError with a clear message on any problem.
  static Database open(const std::string& path, const OpenOptions& options = {});

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  int schema_version() const;  // PRAGMA user_version as stored

  // Runs SQL with no result rows (DDL, pragmas); throws DbError naming the statement.
  void exec(const std::string& sql);
  // Monotonic counter of committed changes by any connection (PRAGMA data_version plus this
  // connection's total_changes): lets the dashboard refresh only when a sweep wrote.
  std::int64_t change_counter() const;
  // Leaves WAL mode for a rollback journal when no other connection has the file open, so a
  // finished database is readable on read-only media (a WAL database needs its -shm file
  // created next to it even to be read). Returns false, leaving WAL on, when another
  // connection (a dashboard) has it open; never throws: it is tidying, not a result.
  bool leave_wal() noexcept;

  sqlite3* handle() const { return db_; }

 private:
  Database(sqlite3* db, std::string path, bool read_only);
  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
};

// RAII write transaction (BEGIN IMMEDIATE: takes the write lock up front so a long reader
// never makes a commit fail half-way). Rolls back unless commit() was called. Inside another
// transaction it is a savepoint: its commit keeps its writes for the outer commit, and its
// rollback undoes only them (so a whole merge is one transaction of many results).
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace gdn::db
