#include "schema.hpp"

#include <sqlite3.h>

#include <string>

#include "statement.hpp"

namespace gdn::db {

namespace {

// Version 1: the results schema. Enums are text with CHECK so the file reads well in the
// sqlite3 shell and a bad value is refused at insert, not discovered at query time.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE devices (
  id             INTEGER PRIMARY KEY,
  name           TEXT    NOT NULL,
  uuid           TEXT    NOT NULL,
  sm_count       INTEGER NOT NULL CHECK (sm_count >= 0),
  cc_major       INTEGER NOT NULL,
  cc_minor       INTEGER NOT NULL,
  sm_clock_mhz   INTEGER NOT NULL,
  mem_clock_mhz  INTEGER NOT NULL,
  memory_bytes   INTEGER NOT NULL,
  l2_bytes       INTEGER NOT NULL,
  driver_version TEXT    NOT NULL,
  cuda_version   TEXT    NOT NULL,
  UNIQUE (uuid, name, sm_count, cc_major, cc_minor, sm_clock_mhz, mem_clock_mhz, memory_bytes,
          l2_bytes, driver_version, cuda_version)
) STRICT;

CREATE TABLE builds (
  id          INTEGER PRIMARY KEY,
  git_sha     TEXT NOT NULL CHECK (git_sha <> ''),
  flags       TEXT NOT NULL,
  variant_set TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  UNIQUE (git_sha, flags, variant_set)
) STRICT;

CREATE TABLE variants (
  id                INTEGER PRIMARY KEY,
  name              TEXT    NOT NULL CHECK (name <> ''),
  pass              TEXT    NOT NULL CHECK (pass IN ('fwd', 'bwd')),
  family            TEXT    NOT NULL CHECK (family IN ('staged', 'fused')),
  block_v           INTEGER NOT NULL,
  stages            INTEGER NOT NULL,
  roles             TEXT    NOT NULL CHECK (roles IN ('cooperative', 'producer_consumer')),
  consumer_regs     INTEGER NOT NULL,
  cp_segment_chunks INTEGER NOT NULL,
  chains_per_cta    INTEGER NOT NULL,
  UNIQUE (name, pass)
) STRICT;

CREATE TABLE problems (
  id             INTEGER PRIMARY KEY,
  shape_set_name TEXT    NOT NULL,
  shape_set_hash TEXT    NOT NULL,
  row_index      INTEGER NOT NULL,
  h_qk           INTEGER NOT NULL CHECK (h_qk > 0),
  h_v            INTEGER NOT NULL CHECK (h_v > 0),
  k              INTEGER NOT NULL CHECK (k > 0),
  v              INTEGER NOT NULL CHECK (v > 0),
  dtype          TEXT    NOT NULL CHECK (dtype IN ('bf16', 'fp16', 'fp32')),
  batch          INTEGER NOT NULL CHECK (batch > 0),
  num_seqs       INTEGER NOT NULL CHECK (num_seqs >= 0),
  total_tokens   INTEGER NOT NULL CHECK (total_tokens >= 0),
  max_seqlen     INTEGER NOT NULL CHECK (max_seqlen >= 0),
  seqlens        TEXT    NOT NULL,
  UNIQUE (shape_set_hash, row_index)
) STRICT;

CREATE TABLE sweeps (
  id                INTEGER PRIMARY KEY,
  device_id         INTEGER NOT NULL REFERENCES devices (id),
  build_id          INTEGER NOT NULL REFERENCES builds (id),
  space             TEXT    NOT NULL,
  shapes            TEXT    NOT NULL,
  strategy          TEXT    NOT NULL,
  budget            INTEGER NOT NULL,
  seed              INTEGER NOT NULL,
  metrics_level     TEXT    NOT NULL,
  warmup_iters      INTEGER NOT NULL,
  min_samples       INTEGER NOT NULL,
  max_samples       INTEGER NOT NULL,
  target_rel_spread REAL    NOT NULL,
  time_cap_ms       REAL    NOT NULL,
  l2_flush_bytes    INTEGER NOT NULL,
  use_graphs        INTEGER NOT NULL CHECK (use_graphs IN (0, 1)),
  args              TEXT    NOT NULL,
  status            TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
  started_at        TEXT    NOT NULL,
  finished_at       TEXT
) STRICT;

CREATE TABLE results (
  id                         INTEGER PRIMARY KEY,
  sweep_id                   INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  variant_id                 INTEGER NOT NULL REFERENCES variants (id),
  problem_id                 INTEGER NOT NULL REFERENCES problems (id),
  outcome                    TEXT    NOT NULL CHECK (outcome IN ('Passed', 'Incorrect',
                               'CompileRejected', 'LaunchFailed', 'Timeout', 'Unsupported',
                               'Crashed')),
  message                    TEXT    NOT NULL,
  max_rel_rms                REAL,
  errors_json                TEXT    NOT NULL,
  latency_p20_ms             REAL,
  latency_p50_ms             REAL,
  latency_p80_ms             REAL,
  sample_count               INTEGER NOT NULL CHECK (sample_count >= 0),
  rel_spread                 REAL,
  clock_mhz                  REAL,
  sm_busy_pct                REAL,
  achieved_occupancy_pct     REAL,
  issue_active_pct           REAL,
  dram_pct                   REAL,
  tensor_pipe_pct            REAL,
  sm_throughput_pct          REAL,
  memory_sol_pct             REAL,
  gpc_clock_hz               REAL,
  metrics_unavailable_reason TEXT    NOT NULL,
  registers                  INTEGER,
  shared_bytes               INTEGER,
  -- a Passed result is a timed result
  CHECK (outcome <> 'Passed' OR latency_p50_ms IS NOT NULL),
  UNIQUE (sweep_id, variant_id, problem_id)
) STRICT;
CREATE INDEX results_by_sweep_problem ON results (sweep_id, problem_id);

CREATE TABLE samples (
  result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
  idx       INTEGER NOT NULL,
  ms        REAL    NOT NULL,
  PRIMARY KEY (result_id, idx)
) STRICT, WITHOUT ROWID;

CREATE TABLE pm_samples (
  result_id        INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
  idx              INTEGER NOT NULL,
  t_ns             INTEGER NOT NULL,
  sm_busy_pct      REAL,
  dram_pct         REAL,
  tensor_pipe_pct  REAL,
  issue_active_pct REAL,
  gpc_clock_hz     REAL,
  PRIMARY KEY (result_id, idx)
) STRICT, WITHOUT ROWID;
)sql";

// Version 2: spill bytes per result (ptxas -warn-spills showed spills matter for the fused
// family) and manual selection overrides, keyed like dispatch-table buckets.
constexpr const char* kVersion2 = R"sql(
ALTER TABLE results ADD COLUMN local_bytes INTEGER;

CREATE TABLE overrides (
  id                  INTEGER PRIMARY KEY,
  sweep_id            INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  pass                TEXT    NOT NULL CHECK (pass IN ('fwd', 'bwd')),
  h_qk                INTEGER NOT NULL,
  h_v                 INTEGER NOT NULL,
  k                   INTEGER NOT NULL,
  v                   INTEGER NOT NULL,
  dtype               TEXT    NOT NULL CHECK (dtype IN ('bf16', 'fp16', 'fp32')),
  num_seqs_bucket     INTEGER NOT NULL,
  total_tokens_bucket INTEGER NOT NULL,
  max_seqlen_bucket   INTEGER NOT NULL,
  variant             TEXT    NOT NULL CHECK (variant <> ''),
  reason              TEXT    NOT NULL CHECK (reason <> ''),
  created_at          TEXT    NOT NULL,
  UNIQUE (sweep_id, pass, h_qk, h_v, k, v, dtype, num_seqs_bucket, total_tokens_bucket,
          max_seqlen_bucket)
) STRICT;
)sql";

// Version 3: variants.roles also accepts 'column_warps' (gdn::WarpRoles::ColumnWarps). SQLite
// cannot alter a CHECK, so the table is rebuilt (the procedure of sqlite.org/lang_altertable.html,
// section 7): same columns, constraints and ids, rows copied, then renamed over the old one.
// results.variant_id names the table, not the copy, so it refers to the new table afterwards.
// migrate() runs every migration with foreign keys off and checks them before the commit.
// Reads are unchanged: a version-2 file reads as is (kOldestReadableVersion).
constexpr const char* kVersion3 = R"sql(
CREATE TABLE variants_v3 (
  id                INTEGER PRIMARY KEY,
  name              TEXT    NOT NULL CHECK (name <> ''),
  pass              TEXT    NOT NULL CHECK (pass IN ('fwd', 'bwd')),
  family            TEXT    NOT NULL CHECK (family IN ('staged', 'fused')),
  block_v           INTEGER NOT NULL,
  stages            INTEGER NOT NULL,
  roles             TEXT    NOT NULL CHECK (roles IN ('cooperative', 'producer_consumer',
                                                      'column_warps')),
  consumer_regs     INTEGER NOT NULL,
  cp_segment_chunks INTEGER NOT NULL,
  chains_per_cta    INTEGER NOT NULL,
  UNIQUE (name, pass)
) STRICT;
INSERT INTO variants_v3 (id, name, pass, family, block_v, stages, roles, consumer_regs,
                         cp_segment_chunks, chains_per_cta)
  SELECT id, name, pass, family, block_v, stages, roles, consumer_regs, cp_segment_chunks,
         chains_per_cta
  FROM variants;
DROP TABLE variants;
ALTER TABLE variants_v3 RENAME TO variants;
)sql";

// Version 4: overrides are keyed by the dispatch key's balance bucket too
// (gdn/dispatch_table.hpp). The UNIQUE key changes, so the table is rebuilt as in version
// 3; the rows before it get -1 (kUnknownBucket), which selection applies to every balance of
// their bucket, as their bucket held them all.
constexpr const char* kVersion4 = R"sql(
CREATE TABLE overrides_v4 (
  id                  INTEGER PRIMARY KEY,
  sweep_id            INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  pass                TEXT    NOT NULL CHECK (pass IN ('fwd', 'bwd')),
  h_qk                INTEGER NOT NULL,
  h_v                 INTEGER NOT NULL,
  k                   INTEGER NOT NULL,
  v                   INTEGER NOT NULL,
  dtype               TEXT    NOT NULL CHECK (dtype IN ('bf16', 'fp16', 'fp32')),
  num_seqs_bucket     INTEGER NOT NULL,
  total_tokens_bucket INTEGER NOT NULL,
  max_seqlen_bucket   INTEGER NOT NULL,
  balance_bucket      INTEGER NOT NULL DEFAULT -1,
  variant             TEXT    NOT NULL CHECK (variant <> ''),
  reason              TEXT    NOT NULL CHECK (reason <> ''),
  created_at          TEXT    NOT NULL,
  UNIQUE (sweep_id, pass, h_qk, h_v, k, v, dtype, num_seqs_bucket, total_tokens_bucket,
          max_seqlen_bucket, balance_bucket)
) STRICT;
INSERT INTO overrides_v4 (id, sweep_id, pass, h_qk, h_v, k, v, dtype, num_seqs_bucket,
                          total_tokens_bucket, max_seqlen_bucket, balance_bucket, variant, reason,
                          created_at)
  SELECT id, sweep_id, pass, h_qk, h_v, k, v, dtype, num_seqs_bucket, total_tokens_bucket,
         max_seqlen_bucket, -1, variant, reason, created_at
  FROM overrides;
DROP TABLE overrides;
ALTER TABLE overrides_v4 RENAME TO overrides;
)sql";

// Version 5: sharded sweeps (gdn/db/merge.hpp). sweep_shard marks a sweep that measures part
// I of N of a sweep (`gdnlab sweep --shard I/N`); merged_shards lists the shards merged into a
// sweep of a merged database, with the file, sweep and device each came from, and
// results.merged_shard_id says which of them every merged result came from (NULL: measured by
// the sweep itself); results.device_id names the GPU of a result measured on another GPU of
// the sweep's kind after a resume (NULL: the sweep's, or its shard's, device). Added tables and a nullable column only: readers of the columns before it
// read a version-5 file unchanged, and older files read as they are (kOldestReadableVersion).
constexpr const char* kVersion5 = R"sql(
CREATE TABLE sweep_shard (
  sweep_id    INTEGER PRIMARY KEY REFERENCES sweeps (id) ON DELETE CASCADE,
  shard_index INTEGER NOT NULL,
  shard_count INTEGER NOT NULL,
  CHECK (shard_index >= 1 AND shard_index <= shard_count)
) STRICT;

CREATE TABLE merged_shards (
  id                INTEGER PRIMARY KEY,
  sweep_id          INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  shard_index       INTEGER NOT NULL,
  shard_count       INTEGER NOT NULL,
  device_id         INTEGER NOT NULL REFERENCES devices (id),
  source_path       TEXT    NOT NULL CHECK (source_path <> ''),
  source_sweep_id   INTEGER NOT NULL,
  source_started_at TEXT    NOT NULL,
  source_status     TEXT    NOT NULL CHECK (source_status IN ('running', 'finished',
                                                              'interrupted')),
  merged_at         TEXT    NOT NULL,
  CHECK (shard_index >= 1 AND shard_index <= shard_count),
  UNIQUE (sweep_id, shard_index)
) STRICT;

ALTER TABLE results ADD COLUMN merged_shard_id INTEGER
  REFERENCES merged_shards (id) ON DELETE SET NULL;
CREATE INDEX results_by_merged_shard ON results (merged_shard_id);
ALTER TABLE results ADD COLUMN device_id INTEGER REFERENCES devices (id);
)sql";

// Version 6: launch plans (gdn/launch_plan.hpp). A variant row is a sweep candidate: a compiled
// variant and the plan fields it pins (pin_*, -1 = the default rule; its name is the variant's
// name and the pins' suffix, gdn_fwd_..._cp16+ov2). A result records the plan its call ran
// with (plan_*, NULL where the pass has no such field). The config columns consumer_regs and
// chains_per_cta go: no kernel implemented them. The variants table is rebuilt as in version 3
// (same ids, so results keep their references; rows differing only in the dropped columns
// already had distinct names).
constexpr const char* kVersion6 = R"sql(
CREATE TABLE variants_v6 (
  id                   INTEGER PRIMARY KEY,
  name                 TEXT    NOT NULL CHECK (name <> ''),
  pass                 TEXT    NOT NULL CHECK (pass IN ('fwd', 'bwd')),
  family               TEXT    NOT NULL CHECK (family IN ('staged', 'fused')),
  block_v              INTEGER NOT NULL,
  stages               INTEGER NOT NULL,
  roles                TEXT    NOT NULL CHECK (roles IN ('cooperative', 'producer_consumer',
                                                         'column_warps')),
  cp_segment_chunks    INTEGER NOT NULL,
  pin_prepare_overlap  INTEGER NOT NULL DEFAULT -1 CHECK (pin_prepare_overlap BETWEEN -1 AND 2),
  pin_cp_first_segment INTEGER NOT NULL DEFAULT -1 CHECK (pin_cp_first_segment BETWEEN -1 AND 1),
  pin_prepare_split    INTEGER NOT NULL DEFAULT -1 CHECK (pin_prepare_split BETWEEN -1 AND 1),
  pin_prepare_heads    INTEGER NOT NULL DEFAULT -1 CHECK (pin_prepare_heads BETWEEN -1 AND 8
                                                          AND pin_prepare_heads <> 0),
  pin_fixup_cols       INTEGER NOT NULL DEFAULT -1 CHECK (pin_fixup_cols IN (-1, 8, 16, 32)),
  pin_local_heads      INTEGER NOT NULL DEFAULT -1 CHECK (pin_local_heads BETWEEN -1 AND 8
                                                          AND pin_local_heads <> 0),
  UNIQUE (name, pass)
) STRICT;
INSERT INTO variants_v6 (id, name, pass, family, block_v, stages, roles, cp_segment_chunks)
  SELECT id, name, pass, family, block_v, stages, roles, cp_segment_chunks FROM variants;
DROP TABLE variants;
ALTER TABLE variants_v6 RENAME TO variants;

ALTER TABLE results ADD COLUMN plan_cp_segment_chunks INTEGER;
ALTER TABLE results ADD COLUMN plan_prepare_overlap INTEGER;
ALTER TABLE results ADD COLUMN plan_first_segment INTEGER;
ALTER TABLE results ADD COLUMN plan_prepare_split_chunk INTEGER;
ALTER TABLE results ADD COLUMN plan_prepare_heads INTEGER;
ALTER TABLE results ADD COLUMN plan_tail_prepare_heads INTEGER;
ALTER TABLE results ADD COLUMN plan_fixup_cols INTEGER;
ALTER TABLE results ADD COLUMN plan_block_v INTEGER;
ALTER TABLE results ADD COLUMN plan_local_heads INTEGER;
)sql";

// Version 7: the backward's forward recompute runs CP segments of its own when the variant has
// none (gdn_launch_options::recompute_cp_chunks): its pin (-1 = the rule; 0 = no CP) and the
// segment length each result's recompute ran with (NULL where the pass has none). Added columns
// only, at the end of their tables: rows and ids stay, the variants read as the rule.
constexpr const char* kVersion7 = R"sql(
ALTER TABLE variants ADD COLUMN pin_recompute_cp_chunks INTEGER NOT NULL DEFAULT -1
  CHECK (pin_recompute_cp_chunks IN (-1, 0, 16, 32, 64, 128));
ALTER TABLE results ADD COLUMN plan_recompute_cp_chunks INTEGER;
)sql";

// Version 8: the backward's CP pass 1 may run beside the forward recompute's state loop
// (gdn_launch_options::pass1_beside_recompute): its pin (-1 = the rule) and whether each
// result's plan ran it so (NULL where the pass has no such pass 1). Added columns only.
constexpr const char* kVersion8 = R"sql(
ALTER TABLE variants ADD COLUMN pin_pass1_beside_recompute INTEGER NOT NULL DEFAULT -1
  CHECK (pin_pass1_beside_recompute IN (-1, 0, 1));
ALTER TABLE results ADD COLUMN plan_pass1_beside_recompute INTEGER;
)sql";

// Version 9: the fused backward's group sum may run beside it
// (gdn_launch_options::group_sum_beside): its pin (-1 = the rule) and whether each result's
// plan ran it so (NULL before it; 0 or 1 on every backward result after). Added columns only.
constexpr const char* kVersion9 = R"sql(
ALTER TABLE variants ADD COLUMN pin_group_sum_beside INTEGER NOT NULL DEFAULT -1
  CHECK (pin_group_sum_beside IN (-1, 0, 1));
ALTER TABLE results ADD COLUMN plan_group_sum_beside INTEGER;
)sql";

// A file of version 2 to 8 opened read-only is read as it is (no migration without write
// access): temporary views named like the tables, which SQLite resolves before the file's own,
// give it the current columns (versions 2 to 5: no pins, no recorded plans; version 6: no
// recompute CP pin or plan; version 7: no pass-1 pin or plan; version 8: no group-sum pin or
// plan).
constexpr const char* kCompatViewsBefore6 = R"sql(
CREATE TEMP VIEW variants AS
  SELECT id, name, pass, family, block_v, stages, roles, cp_segment_chunks,
         -1 AS pin_prepare_overlap, -1 AS pin_cp_first_segment, -1 AS pin_prepare_split,
         -1 AS pin_prepare_heads, -1 AS pin_fixup_cols, -1 AS pin_local_heads,
         -1 AS pin_recompute_cp_chunks, -1 AS pin_pass1_beside_recompute,
         -1 AS pin_group_sum_beside
  FROM main.variants;
CREATE TEMP VIEW results AS
  SELECT *, NULL AS plan_cp_segment_chunks, NULL AS plan_prepare_overlap,
         NULL AS plan_first_segment, NULL AS plan_prepare_split_chunk, NULL AS plan_prepare_heads,
         NULL AS plan_tail_prepare_heads, NULL AS plan_fixup_cols, NULL AS plan_block_v,
         NULL AS plan_local_heads, NULL AS plan_recompute_cp_chunks,
         NULL AS plan_pass1_beside_recompute, NULL AS plan_group_sum_beside
  FROM main.results;
)sql";
constexpr const char* kCompatViewsOf6 = R"sql(
CREATE TEMP VIEW variants AS
  SELECT *, -1 AS pin_recompute_cp_chunks, -1 AS pin_pass1_beside_recompute,
         -1 AS pin_group_sum_beside FROM main.variants;
CREATE TEMP VIEW results AS
  SELECT *, NULL AS plan_recompute_cp_chunks, NULL AS plan_pass1_beside_recompute,
         NULL AS plan_group_sum_beside FROM main.results;
)sql";
constexpr const char* kCompatViewsOf7 = R"sql(
CREATE TEMP VIEW variants AS
  SELECT *, -1 AS pin_pass1_beside_recompute, -1 AS pin_group_sum_beside FROM main.variants;
CREATE TEMP VIEW results AS
  SELECT *, NULL AS plan_pass1_beside_recompute, NULL AS plan_group_sum_beside FROM main.results;
)sql";
constexpr const char* kCompatViewsOf8 = R"sql(
CREATE TEMP VIEW variants AS SELECT *, -1 AS pin_group_sum_beside FROM main.variants;
CREATE TEMP VIEW results AS SELECT *, NULL AS plan_group_sum_beside FROM main.results;
)sql";

// kMigrations[i] produces version i + 1.
constexpr const char* kMigrations[] = {kVersion1, kVersion2, kVersion3, kVersion4, kVersion5,
                                       kVersion6, kVersion7, kVersion8, kVersion9};
static_assert(std::size(kMigrations) == static_cast<std::size_t>(kSchemaVersion),
              "one migration per schema version");

// Turns foreign-key enforcement off for its lifetime and restores what it was (also when a
// migration throws: declared before the Transaction, it is restored after the rollback).
class ForeignKeysOff {
 public:
  explicit ForeignKeysOff(Database& db)
      : db_(db), was_on_(query_int64(db, "PRAGMA foreign_keys") != 0) {
    db_.exec("PRAGMA foreign_keys = OFF");
  }
  ForeignKeysOff(const ForeignKeysOff&) = delete;
  ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;
  ~ForeignKeysOff() {
    if (was_on_) sqlite3_exec(db_.handle(), "PRAGMA foreign_keys = ON", nullptr, nullptr, nullptr);
  }

 private:
  Database& db_;
  bool was_on_;
};

// A migration must leave every reference resolving; the Transaction rolls back otherwise.
void check_foreign_keys(const Database& db, int version) {
  Statement s(db, "PRAGMA foreign_key_check");
  if (s.step())
    throw DbError(DbError::Kind::Constraint,
                  "migrating '" + db.path() + "' to schema version " + std::to_string(version) +
                      ": table " + s.text(0) + " row " + std::to_string(s.int64(1)) +
                      " refers to a missing row of " + s.text(2));
}

}  // namespace

void add_compat_views(Database& db, int version) {
  if (version < 6) db.exec(kCompatViewsBefore6);
  else if (version == 6) db.exec(kCompatViewsOf6);
  else if (version == 7) db.exec(kCompatViewsOf7);
  else if (version == 8) db.exec(kCompatViewsOf8);
}

void migrate(Database& db, int from_version, int to_version) {
  if (to_version < 1 || to_version > kSchemaVersion)
    throw DbError(DbError::Kind::Invalid,
                  "migrate: target schema version must be in [1, " +
                      std::to_string(kSchemaVersion) + "], got " + std::to_string(to_version));
  for (int version = from_version + 1; version <= to_version; ++version) {
    // Foreign keys off while a table is rebuilt (a DROP of a referenced table fails with them
    // on, deferred or not); the pragma is a no-op inside a transaction, so it is set around it.
    ForeignKeysOff fk_off(db);
    Transaction tx(db);
    // Another connection may have migrated the file since it was opened: the write lock is
    // held now, so the version read here is the one this migration would replace.
    if (query_int64(db, "PRAGMA user_version") >= version) continue;
    db.exec(kMigrations[version - 1]);
    check_foreign_keys(db, version);
    if (version == 1) db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    db.exec("PRAGMA user_version = " + std::to_string(version));
    tx.commit();
  }
}

}  // namespace gdn::db
