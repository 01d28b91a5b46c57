// Opening, creating and migrating results databases; refusing files that are not ours.
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "db_fixture.hpp"
#include "gdn/db/merge.hpp"
#include "gdn/db/model.hpp"
#include "gdn/db/selection.hpp"
#include "scenario.hpp"

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

// Every row of every query result as text, one line per row ("" for NULL).
std::vector<std::string> rows_text(const Database& db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  std::vector<std::string> out;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::string line;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      const auto* t = sqlite3_column_text(s, c);
      line += (c ? "|" : "") + std::string(t ? reinterpret_cast<const char*>(t) : "");
    }
    out.push_back(std::move(line));
  }
  sqlite3_finalize(s);
  return out;
}

// Row count of every table.
std::map<std::string, std::string> table_counts(const Database& db) {
  std::map<std::string, std::string> counts;
  for (const std::string& table :
       rows_text(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
    counts[table] = pragma_text(db, ("SELECT count(*) FROM \"" + table + "\"").c_str());
  return counts;
}

// The shape of every table as SQLite reports it: columns (type, NOT NULL, primary key),
// indexes (names, uniqueness, origin, columns) and foreign keys.
std::vector<std::string> schema_shape(const Database& db) {
  std::vector<std::string> out;
  for (const std::string& table :
       rows_text(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    auto add = [&](const std::string& what, const std::string& sql) {
      for (const std::string& row : rows_text(db, sql)) out.push_back(table + " " + what + " " + row);
    };
    add("column", "SELECT * FROM pragma_table_info('" + table + "')");
    add("fk", "SELECT * FROM pragma_foreign_key_list('" + table + "')");
    for (const std::string& index :
         rows_text(db, "SELECT name FROM pragma_index_list('" + table + "') ORDER BY name")) {
      add("index", "SELECT name, \"unique\", origin, partial FROM pragma_index_list('" + table +
                       "') WHERE name = '" + index + "'");
      add("index " + index, "SELECT * FROM pragma_index_info('" + index + "')");
    }
  }
  return out;
}

VariantRecord column_warps_variant(const std::string& name) {
  VariantRecord v;
  v.name = name;
  v.config.family = gdn::Family::Fused;
  v.config.block_v = 64;
  v.config.stages = 2;
  v.config.roles = gdn::WarpRoles::ColumnWarps;
  return v;
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
    // Version 1 has no local_bytes and no overrides: write a result the v1 way, in raw SQL
    // (main.<table>: an old file reads through temporary views of the current columns).
    v1.exec(
        "INSERT INTO devices VALUES (1, 'NVIDIA H200', 'GPU-1', 132, 9, 0, 1980, 3201, 1, 1, 'd', '13.0');"
        "INSERT INTO builds VALUES (1, 'abc', '', 'default', '2025-01-01T00:00:00Z');"
        "INSERT INTO main.variants VALUES (1, 'v', 'fwd', 'staged', 64, 2, 'cooperative', 0, 0, 1);"
        "INSERT INTO problems VALUES (1, 's', 'h', 0, 1, 1, 128, 128, 'bf16', 1, 1, 64, 64, '64');"
        "INSERT INTO sweeps VALUES (1, 1, 1, 'sp', 's', 'exhaustive', 0, 0, 'none', 1, 1, 1, 0.1, 10, 0, 0, '', 'finished', 't0', 't1');"
        "INSERT INTO main.results (sweep_id, variant_id, problem_id, outcome, message, errors_json, "
        "latency_p50_ms, sample_count, metrics_unavailable_reason) VALUES (1, 1, 1, 'Passed', '', '{}', 0.5, 1, 'none');");
    EXPECT_THROW(v1.exec("SELECT * FROM overrides"), DbError);
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
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

// A version-2 file with a sweep, samples and an override (what every committed database is).
Scenario write_version2_database(const std::string& path) {
  Database v2 = Database::open(path, {.migrate_to_version = 2});
  EXPECT_EQ(v2.schema_version(), 2);
  const Scenario sc = write_scenario(v2);
  const Selection sel = select_winners(v2, sc.sweep);
  EXPECT_FALSE(sel.buckets.empty());
  if (!sel.buckets.empty())
    set_override(v2, sc.sweep, sel.buckets[0].key, sel.buckets[0].variant, "pinned for the test");
  return sc;
}

TEST(Database, Version2RefusesColumnWarpsVariants) {
  ScratchDir dir;
  Database v2 = Database::open(dir.file("v2.db"), {.migrate_to_version = 2});
  try {
    ResultsWriter(v2).register_variant(column_warps_variant("gdn_fwd_cw"));
    FAIL() << "the version-2 roles CHECK should refuse column_warps";
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::Constraint) << e.what();
  }
}

TEST(Database, MigratesVersion2To3KeepingEveryRowAndReference) {
  ScratchDir dir;
  const std::string path = dir.file("v2.db");
  const Scenario sc = write_version2_database(path);
  std::map<std::string, std::string> counts_before;
  std::vector<std::string> variants_before, results_before, shape_before;
  {
    Database v2 = Database::open(path, {.migrate_to_version = 2});
    counts_before = table_counts(v2);
    variants_before = rows_text(v2, "SELECT * FROM variants ORDER BY id");
    results_before = rows_text(v2, "SELECT * FROM results ORDER BY id");
    shape_before = schema_shape(v2);
  }
  EXPECT_EQ(counts_before.at("variants"), "4");
  EXPECT_EQ(counts_before.at("results"), "20");
  EXPECT_EQ(counts_before.at("overrides"), "1");
  EXPECT_NE(counts_before.at("samples"), "0");

  Database db = Database::open(path, {.migrate_to_version = 3});
  EXPECT_EQ(db.schema_version(), 3);
  EXPECT_EQ(table_counts(db), counts_before);  // no table lost or added (no variants_v3 left)
  EXPECT_EQ(rows_text(db, "SELECT * FROM variants ORDER BY id"), variants_before);
  EXPECT_EQ(rows_text(db, "SELECT * FROM results ORDER BY id"), results_before);
  // Same columns, UNIQUE (name, pass) index and foreign keys as before; only the CHECK differs.
  EXPECT_EQ(schema_shape(db), shape_before);
  EXPECT_EQ(pragma_text(db, "PRAGMA foreign_keys"), "1");  // back on after the migration
  EXPECT_TRUE(rows_text(db, "PRAGMA foreign_key_check").empty());
  EXPECT_EQ(pragma_text(db, "PRAGMA integrity_check"), "ok");
  EXPECT_NE(pragma_text(db, "SELECT sql FROM sqlite_master WHERE name = 'variants'").find("'column_warps'"),
            std::string::npos);

  // results.variant_id still refers to variants: a referenced variant cannot go, and a result
  // of a variant that does not exist is refused.
  EXPECT_THROW(db.exec("DELETE FROM variants WHERE id = " + std::to_string(sc.a)), DbError);
  ResultsWriter w(db);
  EXPECT_THROW(insert(w, passed(sc.sweep, 999, sc.p[0], 1.0)), DbError);
  const auto old_row = result_by_id(db, 1);
  ASSERT_TRUE(old_row.has_value());
  EXPECT_EQ(old_row->variant.name, "gdn_fwd_A");
  EXPECT_EQ(old_row->variant.config.roles, gdn::WarpRoles::ProducerConsumer);
  EXPECT_EQ(list_overrides(db, sc.sweep).size(), 1u);

  // A column_warps variant is now accepted and reads back through the row codec.
  const std::int64_t cw = w.register_variant(column_warps_variant("gdn_fwd_sm90_fused_v64_s2_cw_cp0"));
  EXPECT_EQ(w.register_variant(column_warps_variant("gdn_fwd_sm90_fused_v64_s2_cw_cp0")), cw);
  const InsertedResult inserted = insert(w, passed(sc.sweep, cw, sc.p[0], 0.9));
  const auto row = result_by_id(db, inserted.result_id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->variant.name, "gdn_fwd_sm90_fused_v64_s2_cw_cp0");
  EXPECT_EQ(row->variant.config, column_warps_variant("").config);
  EXPECT_EQ(format_value(field_value(*row, Field::Roles)), "column_warps");
  ResultQuery q;
  q.sweep_id = sc.sweep;
  q.conditions = {{Field::Roles, CompareOp::Eq, std::string("column_warps")}};
  const auto rows = query_results(db, q);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].result.id, inserted.result_id);
}

// Version 4 keys overrides by the balance bucket too: the table is rebuilt, its rows kept with
// balance -1 (any), and such an override still applies to its bucket, now keyed with a balance.
TEST(Database, MigratesVersion3To4KeepingOverridesForEveryBalance) {
  ScratchDir dir;
  const std::string path = dir.file("v3.db");
  const Scenario sc = write_version2_database(path);
  std::string pinned;
  {
    Database v3 = Database::open(path, {.migrate_to_version = 3});
    ASSERT_EQ(list_overrides(v3, sc.sweep).size(), 1u);
    pinned = list_overrides(v3, sc.sweep)[0].variant;
  }
  Database db = Database::open(path, {.migrate_to_version = 4});
  EXPECT_EQ(db.schema_version(), 4);
  const std::vector<OverrideRecord> kept = list_overrides(db, sc.sweep);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].key.balance_bucket, gdn::dispatch::kUnknownBucket);
  EXPECT_EQ(kept[0].variant, pinned);
  EXPECT_EQ(kept[0].reason, "pinned for the test");
  EXPECT_TRUE(rows_text(db, "PRAGMA foreign_key_check").empty());
  EXPECT_EQ(pragma_text(db, "PRAGMA integrity_check"), "ok");
  const Selection sel = select_winners(db, sc.sweep);
  const auto overridden = std::count_if(sel.buckets.begin(), sel.buckets.end(),
                                        [](const BucketChoice& b) { return b.overridden; });
  EXPECT_EQ(overridden, 1);
  // A new override takes the bucket's own balance, and replaces nothing of the old one's.
  const BucketChoice& b = sel.buckets.back();
  ASSERT_NE(b.key.balance_bucket, gdn::dispatch::kUnknownBucket);
  set_override(db, sc.sweep, b.key, b.candidates.back().variant, "the slowest, on purpose");
  EXPECT_EQ(list_overrides(db, sc.sweep).size(), 2u);
  EXPECT_EQ(list_overrides(db, sc.sweep)[1].key, b.key);
}

// A sweep's results as a read-only open reads the file: as it is, at its own version.
std::vector<ResultRow> read_only_results(const std::string& path, std::int64_t sweep, int version) {
  const Database ro = Database::open(path, {.create_if_missing = false, .read_only = true});
  EXPECT_EQ(ro.schema_version(), version);
  ResultQuery q;
  q.sweep_id = sweep;
  return query_results(ro, q);
}

// Version 6: the dead config columns go, plan pins join the variants and the recorded plan
// the results; ids, references and every other value stay. Read-only, a version-4 file reads
// as it is (rule pins, no recorded plan).
TEST(Database, MigratesVersion4To6DroppingDeadColumnsAndAddingPlans) {
  ScratchDir dir;
  const std::string path = dir.file("v4.db");
  const Scenario sc = write_version2_database(path);
  std::vector<std::string> variants_before, results_before;
  std::size_t rows_before = 0;
  {
    Database v4 = Database::open(path, {.migrate_to_version = 4});
    variants_before = rows_text(v4, "SELECT id, name, pass, family, block_v, stages, roles, "
                                    "cp_segment_chunks FROM main.variants ORDER BY id");
    results_before = rows_text(v4, "SELECT id, variant_id, problem_id, latency_p50_ms FROM main.results ORDER BY id");
  }
  {
    const std::vector<ResultRow> rows = read_only_results(path, sc.sweep, 4);
    rows_before = rows.size();
    ASSERT_FALSE(rows.empty());
    for (const ResultRow& r : rows) {
      EXPECT_TRUE(gdn::all_rule(r.variant.pins)) << r.variant.name;
      EXPECT_EQ(r.result.plan, PlanRecord{}) << r.variant.name;
    }
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(rows_text(db, "SELECT id, name, pass, family, block_v, stages, roles, cp_segment_chunks "
                          "FROM variants ORDER BY id"),
            variants_before);
  EXPECT_EQ(rows_text(db, "SELECT id, variant_id, problem_id, latency_p50_ms FROM results ORDER BY id"),
            results_before);
  const std::vector<std::string> columns = rows_text(db, "SELECT name FROM pragma_table_info('variants')");
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "consumer_regs"), 0);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "chains_per_cta"), 0);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "pin_prepare_overlap"), 1);
  EXPECT_EQ(rows_text(db, "SELECT DISTINCT pin_prepare_heads FROM variants"), std::vector<std::string>{"-1"});
  EXPECT_TRUE(rows_text(db, "PRAGMA foreign_key_check").empty());
  ResultQuery q;
  q.sweep_id = sc.sweep;
  EXPECT_EQ(query_results(db, q).size(), rows_before);
  // A pinned candidate and a result with its plan round-trip.
  ResultsWriter w(db);
  VariantRecord pinned = fused_variant("gdn_fwd_A+ov1+fx16", 64, 2);
  pinned.pins.prepare_overlap = 1;
  pinned.pins.fixup_cols = 16;
  const std::int64_t v = w.register_variant(pinned);
  ResultRecord r = passed(sc.sweep, v, sc.p[0], 0.5);
  r.plan.prepare_overlap = 1;
  r.plan.fixup_cols = 16;
  r.plan.cp_segment_chunks = 64;
  insert(w, r);
  q.conditions.push_back({Field::VariantName, CompareOp::Eq, std::string("gdn_fwd_A+ov1+fx16")});
  const std::vector<ResultRow> back = query_results(db, q);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(gdn::same_pins(back[0].variant.pins, pinned.pins));
  EXPECT_EQ(back[0].result.plan, r.plan);
  EXPECT_EQ(back[0].variant.variant_name(), "gdn_fwd_A");
  // Its pins must match on a second registration under the same name.
  pinned.pins.fixup_cols = 32;
  EXPECT_THROW(w.register_variant(pinned), DbError);
}

TEST(Database, VersionsBeforePlansRefusePinnedCandidates) {
  for (int version : {4, 5}) {
    ScratchDir dir;
    Database old = Database::open(dir.file("old.db"), {.migrate_to_version = version});
    VariantRecord pinned = fused_variant("gdn_fwd_A+ov1", 64, 2);
    pinned.pins.prepare_overlap = 1;
    try {
      ResultsWriter(old).register_variant(pinned);
      FAIL() << "a version-" << version << " file has no pin columns";
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find("schema version 6"), std::string::npos) << e.what();
    }
  }
}

// A version-5 file (sharded sweeps, results.device_id, no plans) reads as it is read-only
// (rule pins, no recorded plan, the result's device kept) and migrates to version 6 keeping
// results.device_id and the shard tables.
TEST(Database, MigratesVersion5KeepingResultDevicesAndAddingPlans) {
  ScratchDir dir;
  const std::string path = dir.file("v5.db");
  const Scenario sc = write_version2_database(path);
  std::vector<std::string> results_before;
  std::int64_t result_id = 0;
  {
    Database v5 = Database::open(path, {.migrate_to_version = 5});
    ASSERT_EQ(v5.schema_version(), 5);
    result_id = std::stoll(rows_text(v5, "SELECT min(id) FROM main.results").at(0));
    v5.exec("UPDATE main.results SET device_id = (SELECT device_id FROM sweeps LIMIT 1) WHERE id = " +
            std::to_string(result_id));
    v5.exec("INSERT INTO sweep_shard (sweep_id, shard_index, shard_count) VALUES (" +
            std::to_string(sc.sweep) + ", 1, 2)");
    results_before = rows_text(v5, "SELECT id, variant_id, problem_id, latency_p50_ms, device_id, "
                                   "merged_shard_id FROM main.results ORDER BY id");
  }
  {
    const Database ro = Database::open(path, {.create_if_missing = false, .read_only = true});
    EXPECT_EQ(ro.schema_version(), 5);
    ResultQuery q;
    q.sweep_id = sc.sweep;
    const std::vector<ResultRow> rows = query_results(ro, q);
    ASSERT_FALSE(rows.empty());
    for (const ResultRow& r : rows) {
      EXPECT_TRUE(gdn::all_rule(r.variant.pins)) << r.variant.name;
      EXPECT_EQ(r.result.plan, PlanRecord{}) << r.variant.name;
    }
    EXPECT_EQ(result_devices(ro, sc.sweep).count(result_id), 1u);
    EXPECT_TRUE(sweep_shard(ro, sc.sweep).has_value());
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(rows_text(db, "SELECT id, variant_id, problem_id, latency_p50_ms, device_id, merged_shard_id "
                          "FROM results ORDER BY id"),
            results_before);
  EXPECT_EQ(result_devices(db, sc.sweep).count(result_id), 1u);
  ASSERT_TRUE(sweep_shard(db, sc.sweep).has_value());
  EXPECT_EQ(sweep_shard(db, sc.sweep)->count, 2);
  const std::vector<std::string> columns = rows_text(db, "SELECT name FROM pragma_table_info('results')");
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "plan_fixup_cols"), 1);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "device_id"), 1);
  EXPECT_EQ(rows_text(db, "SELECT DISTINCT pin_fixup_cols FROM variants"), std::vector<std::string>{"-1"});
  EXPECT_TRUE(rows_text(db, "PRAGMA foreign_key_check").empty());
}

// A migration that adds a plan field's pin (variants) and its recorded plan (results), from
// version `from`: kept at `from`, the file stores `kept` (a pin it has columns for) with its
// plan and refuses `pinned` (the new field's pin) with `refused`; read-only, it reads as it is
// (the new pin the rule, no recorded plan, `kept`'s pin as stored); migrated, every row stays
// as it was with the columns of every later version last (-1 on the variants, NULL on the
// results), references intact, and `pinned` with its plan round-trips, found by the new pin;
// the CHECK refuses `bad` for it.
struct PinMigration {
  int from;
  std::string_view field;  // the new plan field's name (gdn::kPlanFields)
  VariantRecord kept, pinned;
  PlanRecord kept_plan, pinned_plan;
  std::optional<int> PlanRecord::*plan;  // its recorded plan
};

void check_pin_migration(const PinMigration& m) {
  // The field's pin, its columns (pin_<name>, plan_<name>), the writer's refusal at `from` and
  // a value it does not take (past its largest).
  const gdn::PlanField* field = gdn::find_plan_field(m.field);
  ASSERT_NE(field, nullptr) << m.field;
  const auto pin = field->member;
  const Field pin_field = *parse_field("pin_" + std::string(m.field));
  const Field plan_field = *parse_field("plan_" + std::string(m.field));
  const std::string refused = std::string(m.field) + " needs schema version " + std::to_string(m.from + 1) +
                              ", the file has " + std::to_string(m.from);
  const int bad = *std::max_element(field->values.begin(), field->values.end()) + 1;
  ScratchDir dir;
  const std::string path = dir.file("old.db");
  const Scenario sc = write_version2_database(path);
  std::vector<std::string> variants_before, results_before;
  {
    Database old = Database::open(path, {.migrate_to_version = m.from});
    ASSERT_EQ(old.schema_version(), m.from);
    ResultsWriter w(old);
    try {
      w.register_variant(m.pinned);
      ADD_FAILURE() << "a version-" << m.from << " file has no column for " << m.pinned.name << "'s pin";
    } catch (const DbError& e) {
      EXPECT_NE(std::string(e.what()).find(refused), std::string::npos) << e.what();
    }
    ResultRecord r = passed(sc.sweep, w.register_variant(m.kept), sc.p[0], 0.5);
    r.plan = m.kept_plan;  // (what the file has no column for is not stored)
    insert(w, r);
    variants_before = rows_text(old, "SELECT * FROM main.variants ORDER BY id");
    results_before = rows_text(old, "SELECT * FROM main.results ORDER BY id");
  }
  {
    const std::vector<ResultRow> rows = read_only_results(path, sc.sweep, m.from);
    ASSERT_FALSE(rows.empty());
    bool saw_kept = false;
    for (const ResultRow& row : rows) {
      EXPECT_EQ(row.variant.pins.*pin, GDN_PLAN_RULE) << row.variant.name;
      EXPECT_FALSE((row.result.plan.*m.plan).has_value()) << row.variant.name;
      saw_kept |= row.variant.name == m.kept.name && gdn::same_pins(row.variant.pins, m.kept.pins);
    }
    EXPECT_TRUE(saw_kept);
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  std::string variant_columns, result_columns;
  for (int version = m.from + 1; version <= kSchemaVersion; ++version) variant_columns += "|-1", result_columns += "|";
  const std::vector<std::string> variants_after = rows_text(db, "SELECT * FROM variants ORDER BY id");
  const std::vector<std::string> results_after = rows_text(db, "SELECT * FROM results ORDER BY id");
  ASSERT_EQ(variants_after.size(), variants_before.size());
  for (std::size_t i = 0; i < variants_after.size(); ++i) EXPECT_EQ(variants_after[i], variants_before[i] + variant_columns);
  ASSERT_EQ(results_after.size(), results_before.size());
  for (std::size_t i = 0; i < results_after.size(); ++i) EXPECT_EQ(results_after[i], results_before[i] + result_columns);
  EXPECT_TRUE(rows_text(db, "PRAGMA foreign_key_check").empty());
  ResultsWriter w(db);
  const std::int64_t v = w.register_variant(m.pinned);
  ResultRecord r = passed(sc.sweep, v, sc.p[0], 0.5);
  r.plan = m.pinned_plan;
  insert(w, r);
  ResultQuery q;
  q.sweep_id = sc.sweep;
  q.conditions.push_back({pin_field, CompareOp::Eq, std::int64_t{m.pinned.pins.*pin}});
  const std::vector<ResultRow> back = query_results(db, q);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(gdn::same_pins(back[0].variant.pins, m.pinned.pins));
  EXPECT_EQ(back[0].result.plan, r.plan);
  EXPECT_EQ(std::get<std::int64_t>(field_value(back[0], plan_field)), *(m.pinned_plan.*m.plan));
  const std::string column = std::string(field_info(pin_field).name);
  EXPECT_THROW(db.exec("UPDATE variants SET " + column + " = " + std::to_string(bad) + " WHERE id = " + std::to_string(v)),
               DbError);
}

// Version 7: the backward recompute's CP segment length (kept at 6: local_heads stored).
TEST(Database, MigratesVersion6AddingTheRecomputeCpPinAndPlan) {
  PinMigration m{.from = 6, .field = "recompute_cp_chunks"};
  m.kept = fused_variant("gdn_bwd_A+lh2", 32, 2, gdn::Pass::Backward);
  m.kept.pins.local_heads = 2;
  m.kept_plan.local_heads = 2;
  m.pinned = fused_variant("gdn_bwd_A+rc16", 32, 2, gdn::Pass::Backward);
  m.pinned.pins.recompute_cp_chunks = 16;
  m.pinned_plan.recompute_cp_chunks = 16;
  m.pinned_plan.fixup_cols = 8;
  m.plan = &PlanRecord::recompute_cp_chunks;
  check_pin_migration(m);
}

// Version 8: the backward's CP pass 1 beside the recompute (kept at 7: the recompute's pin).
TEST(Database, MigratesVersion7AddingThePass1BesideRecomputePinAndPlan) {
  PinMigration m{.from = 7, .field = "pass1_beside_recompute"};
  m.kept = fused_variant("gdn_bwd_A+rc16", 32, 2, gdn::Pass::Backward);
  m.kept.pins.recompute_cp_chunks = 16;
  m.kept_plan.recompute_cp_chunks = 16;
  m.kept_plan.pass1_beside_recompute = 1;  // no column at version 7: not stored
  m.pinned = backward_variant("gdn_bwd_A_cp64+pb1", gdn::WarpRoles::ColumnWarps, 64, 64);
  m.pinned.pins.pass1_beside_recompute = 1;
  m.pinned_plan.cp_segment_chunks = 64;
  m.pinned_plan.recompute_cp_chunks = 64;
  m.pinned_plan.fixup_cols = 16;
  m.pinned_plan.pass1_beside_recompute = 1;
  m.plan = &PlanRecord::pass1_beside_recompute;
  check_pin_migration(m);
}

// Version 9: the fused backward's group sum beside it (kept at 8: the pass-1 pin).
TEST(Database, MigratesVersion8AddingTheGroupSumBesidePinAndPlan) {
  PinMigration m{.from = 8, .field = "group_sum_beside"};
  m.kept = backward_variant("gdn_bwd_P_cp64+pb1", gdn::WarpRoles::ProducerConsumer, 128, 64);
  m.kept.pins.pass1_beside_recompute = 1;
  m.kept_plan.pass1_beside_recompute = 1;
  m.kept_plan.group_sum_beside = 1;  // no column at version 8: not stored
  m.pinned = backward_variant("gdn_bwd_P_cp64+gb1", gdn::WarpRoles::ProducerConsumer, 128, 64);
  m.pinned.pins.group_sum_beside = 1;
  m.pinned_plan.cp_segment_chunks = 64;
  m.pinned_plan.recompute_cp_chunks = 64;
  m.pinned_plan.fixup_cols = 16;
  m.pinned_plan.pass1_beside_recompute = 0;
  m.pinned_plan.group_sum_beside = 1;
  m.plan = &PlanRecord::group_sum_beside;
  check_pin_migration(m);
}

TEST(Database, FreshAndMigratedDatabasesHaveTheSameSchema) {
  ScratchDir dir;
  { Database::open(dir.file("old.db"), {.migrate_to_version = 2}); }
  const Database migrated = Database::open(dir.file("old.db"));
  const Database fresh = Database::open(dir.file("new.db"));
  EXPECT_EQ(rows_text(migrated, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"),
            rows_text(fresh, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"));
}

TEST(Database, ReadOnlyOpenReadsVersion2WithoutMigrating) {
  ScratchDir dir;
  const std::string path = dir.file("v2.db");
  const Scenario sc = write_version2_database(path);
  {
    const Database ro = Database::open(path, {.create_if_missing = false, .read_only = true});
    EXPECT_EQ(ro.schema_version(), 2);  // read as it is: nothing written
    ResultQuery q;
    q.sweep_id = sc.sweep;
    EXPECT_EQ(query_results(ro, q).size(), 20u);
    EXPECT_EQ(list_overrides(ro, sc.sweep).size(), 1u);
  }
  EXPECT_EQ(Database::open(path, {.read_only = true}).schema_version(), 2);
  EXPECT_EQ(Database::open(path).schema_version(), kSchemaVersion);  // read-write migrates
}

// The committed databases (versions 2, 3 and 6) open read-only as the tools open them (export, gap,
// report, replay, dashboard) and migrate to the current version keeping every row.
TEST(Database, CommittedDatabasesOpenReadOnlyAndMigrate) {
  const char* committed[] = {"tests/data/smoke_h200.sqlite",  // ctest runs in the repository root
                             "tests/data/anchors_sweeps_h200.sqlite",
                             "bench/results/h200_2026-11-30_anchors_sweep.sqlite",
                             "bench/results/h200_2026-12-01_plan_sweeps.sqlite"};
  for (const char* file : committed) {
    SCOPED_TRACE(file);
    ASSERT_TRUE(std::filesystem::exists(file));
    ScratchDir dir;
    const std::string copy = dir.file("copy.sqlite");
    std::filesystem::copy_file(file, copy);
    std::map<std::string, std::string> counts_before;
    std::vector<std::string> variants_before;
    {
      const Database ro = Database::open(copy, {.create_if_missing = false, .read_only = true});
      EXPECT_GE(ro.schema_version(), kOldestReadableVersion);
      EXPECT_FALSE(list_sweeps(ro).empty());
      counts_before = table_counts(ro);
      variants_before = rows_text(ro, "SELECT * FROM variants ORDER BY id");
    }
    const Database db = Database::open(copy, {.create_if_missing = false});
    EXPECT_EQ(db.schema_version(), kSchemaVersion);
    // Every row kept; the tables of version 5 (sharded sweeps) are added empty to older files.
    auto counts_after = table_counts(db);
    for (const char* added : {"sweep_shard", "merged_shards"}) {
      if (counts_before.count(added) != 0) continue;
      EXPECT_EQ(counts_after[added], "0") << added;
      counts_after.erase(added);
    }
    EXPECT_EQ(counts_after, counts_before);
    EXPECT_EQ(rows_text(db, "SELECT * FROM variants ORDER BY id"), variants_before);
    EXPECT_TRUE(rows_text(db, "PRAGMA foreign_key_check").empty());
  }
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
  EXPECT_EQ(open_error_kind(dir.file("a.db"), {.migrate_to_version = kSchemaVersion + 1}, message),
            DbError::Kind::Invalid);
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

// Messages say what was being done, in words; users never see the SQL text.
TEST(DatabaseMessages, NameTheOperationNotTheSql) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  for (const auto& [sql, words] : std::vector<std::pair<std::string, std::string>>{
           {"INSERT INTO no_such_table VALUES (1)", "writing no_such_table"},
           {"SELECT x FROM nowhere", "reading nowhere"},
           {"UPDATE nothing SET a = 1", "updating nothing"},
           {"COMMIT", "committing a transaction"}}) {
    try {
      db.exec(sql);
      ADD_FAILURE() << sql << " did not fail";
    } catch (const DbError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(words), std::string::npos) << message;
      EXPECT_EQ(message.find(sql), std::string::npos) << message;
      EXPECT_EQ(message.find("SQL ["), std::string::npos) << message;
    }
  }
}

// A finished sweep leaves its database in rollback-journal mode (readable on read-only media
// without a -shm file); another open connection keeps WAL on.
TEST(DatabaseJournal, LeaveWalOnlyWhenAlone) {
  ScratchDir dir;
  const std::string path = dir.file("r.db");
  Database db = Database::open(path);
  {
    Database other = Database::open(path, {.read_only = true});
    other.schema_version();  // holds a read snapshot's shared memory
    EXPECT_FALSE(db.leave_wal());
  }
  EXPECT_TRUE(db.leave_wal());
  EXPECT_EQ(pragma_text(db, "PRAGMA journal_mode"), "delete");
}

}  // namespace
}  // namespace gdn::db::test
