// gdnlab merge (db/src/merge.cpp): shard databases of one sweep into one, provenance refused
// field by field, idempotent, atomic; and the schema-5 migration that carries it.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>

#include "db_fixture.hpp"
#include "gdn/db/merge.hpp"
#include "gdn/db/model.hpp"
#include "gdn/db/report.hpp"
#include "statement_probe.hpp"

namespace gdn::db::test {
namespace {

constexpr int kVariants = 3;
constexpr int kProblems = 4;

// What a shard sweep is made of; each test changes one field to make a mismatching shard.
struct ShardSpecForTest {
  int index = 1;
  int count = 2;
  DeviceRecord device = h200();
  BuildRecord build = test::build();
  std::int64_t seed = 0;
  std::string args_tail;  // appended to the canonical arguments
  std::function<void(SweepRecord&)> edit;
};

// Pair (v, p) belongs to shard 1 + (v + p) % count; `up_to` stops early (an interrupted shard).
std::string write_shard(const std::string& path, const ShardSpecForTest& spec, int up_to = 1 << 30,
                        bool finished = true) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  Database db = Database::open(path);
  ResultsWriter w(db);
  SweepRecord s = sweep_of(w.register_device(spec.device), w.register_build(spec.build));
  s.seed = spec.seed;
  s.args = "gdnlab sweep --space default --shapes test --db " + path + " --strategy exhaustive --seed " +
           std::to_string(spec.seed) + spec.args_tail + " --shard " + std::to_string(spec.index) + "/" +
           std::to_string(spec.count);
  if (spec.edit) spec.edit(s);
  const auto sweep = w.begin_sweep(s);
  w.mark_shard({sweep, spec.index, spec.count});
  int written = 0;
  for (int v = 0; v < kVariants; ++v) {
    const auto vid = w.register_variant(fused_variant("gdn_fwd_test_v" + std::to_string(v), 64, 2 + v));
    for (int p = 0; p < kProblems; ++p) {
      if ((v + p) % spec.count != spec.index - 1 || written >= up_to) continue;
      const auto pid = w.register_problem(problem(p, 2, 8, 1, 1024 * (p + 1), 1024 * (p + 1)));
      if (v == 2 && p == 1)
        insert(w, failed(sweep, vid, pid, Outcome::Incorrect, "rel rms 0.2"));
      else
        insert(w, passed(sweep, vid, pid, 1.0 + v + 0.1 * p));
      ++written;
    }
  }
  w.set_sweep_status(sweep, finished ? SweepStatus::Finished : SweepStatus::Interrupted);
  return path;
}

std::int64_t count(const Database& db, const std::string& sql) { return std::stoll(query_text(db, sql)); }

std::int64_t count_rows(const std::string& path, const std::string& sql) {
  return count(Database::open(path, {.create_if_missing = false, .read_only = true}), sql);
}

class Merge : public ::testing::Test {
 protected:
  ScratchDir dir;
  std::string shard(int index, ShardSpecForTest spec = {}) {
    spec.index = index;
    return write_shard(dir.file("shard" + std::to_string(index) + ".sqlite"), spec);
  }
  MergeOutcome merge(const std::vector<std::string>& sources) {
    return merge_shards({dir.file("merged.sqlite"), sources});
  }
  // Expects the merge to be refused with a message naming the field and both values.
  void expect_refused(const std::vector<std::string>& sources, const std::string& field,
                      const std::string& first, const std::string& second) {
    try {
      merge(sources);
      ADD_FAILURE() << "merge of mismatched shards was accepted (field " << field << ")";
    } catch (const DbError& e) {
      EXPECT_EQ(e.kind(), DbError::Kind::Constraint) << e.what();
      const std::string what = e.what();
      EXPECT_NE(what.find("field " + field + " differs"), std::string::npos) << what;
      EXPECT_NE(what.find(first), std::string::npos) << what;
      EXPECT_NE(what.find(second), std::string::npos) << what;
    }
  }
};

TEST_F(Merge, UnionOfTheShardsWithSamplesAndTheShardOfEveryResult) {
  const auto a = shard(1), b = shard(2);
  const auto m = merge({a, b});
  EXPECT_TRUE(m.created);
  EXPECT_TRUE(m.complete);
  EXPECT_EQ(m.results, kVariants * kProblems);
  EXPECT_EQ(m.added, kVariants * kProblems);
  const std::string out = dir.file("merged.sqlite");
  EXPECT_EQ(count_rows(out, "SELECT count(*) FROM sweeps"), 1);
  EXPECT_EQ(count_rows(out, "SELECT count(*) FROM samples"), count_rows(a, "SELECT count(*) FROM samples") +
                                                                 count_rows(b, "SELECT count(*) FROM samples"));
  const Database db = Database::open(out, {.create_if_missing = false, .read_only = true});
  const auto summary = sweep_summary(db, m.sweep_id);
  EXPECT_EQ(summary.sweep.status, SweepStatus::Finished);
  EXPECT_EQ(summary.count(Outcome::Incorrect), 1);
  EXPECT_EQ(summary.sweep.args.find("--shard"), std::string::npos) << summary.sweep.args;
  EXPECT_NE(summary.sweep.args.find("--db " + out), std::string::npos) << summary.sweep.args;
  const auto origins = shard_origins(db, m.sweep_id);
  ASSERT_EQ(origins.size(), 2u);
  EXPECT_EQ(origins[0].shard.source_path, a);
  EXPECT_EQ(origins[1].shard.source_path, b);
  EXPECT_EQ(origins[0].results + origins[1].results, kVariants * kProblems);
  EXPECT_EQ(origins[0].device.name, "NVIDIA H200");
  // Every result knows its shard: (v + p) % 2 says which.
  const auto shards = result_shards(db, m.sweep_id);
  ResultQuery q;
  q.sweep_id = m.sweep_id;
  const auto rows = query_results(db, q);
  ASSERT_EQ(rows.size(), shards.size());
  for (const auto& row : rows) {
    const int v = row.variant.name.back() - '0';
    EXPECT_EQ(shards.at(row.result.id), 1 + (v + row.problem.row_index) % 2) << row.variant.name;
  }
  // report names the shards and, per problem, the shard of the best result.
  const std::string report = render_report(db, m.sweep_id, ReportFormat::Table);
  EXPECT_NE(report.find("merged from 2 of 2 shards"), std::string::npos) << report;
  EXPECT_NE(report.find("shard 2/2: "), std::string::npos) << report;
  EXPECT_NE(render_report(db, m.sweep_id, ReportFormat::Csv).find(",shard,"), std::string::npos);
}

TEST_F(Merge, MergingAShardTwiceAddsNothing) {
  const auto a = shard(1), b = shard(2);
  merge({a});
  const auto again = merge({a, a});
  EXPECT_EQ(again.added, 0);
  EXPECT_FALSE(again.complete);
  EXPECT_EQ(again.missing_shards, std::vector<int>{2});
  const auto rest = merge({a, b});
  EXPECT_EQ(rest.added, count_rows(b, "SELECT count(*) FROM results"));
  EXPECT_TRUE(rest.complete);
  const auto last = merge({b, a});
  EXPECT_EQ(last.added, 0);
  EXPECT_EQ(last.results, kVariants * kProblems);
  const std::string out = dir.file("merged.sqlite");
  EXPECT_EQ(count_rows(out, "SELECT count(*) FROM results"), kVariants * kProblems);
  EXPECT_EQ(count_rows(out, "SELECT count(*) FROM sweeps"), 1);
  EXPECT_EQ(count_rows(out, "SELECT count(*) FROM merged_shards"), 2);
}

TEST_F(Merge, AResumedShardAddsOnlyWhatItGained) {
  ShardSpecForTest spec;
  spec.index = 2;
  const std::string b = dir.file("shard2.sqlite");
  write_shard(b, spec, /*up_to=*/2, /*finished=*/false);
  const auto a = shard(1);
  const auto partial = merge({a, b});
  EXPECT_FALSE(partial.complete);
  EXPECT_TRUE(partial.missing_shards.empty());
  EXPECT_NE(format_merge(partial).find("not every shard sweep finished"), std::string::npos);
  // The same sweep continued (same id and start), now complete.
  {
    Database db = Database::open(b);
    ResultsWriter w(db);
    const auto sweep = list_sweeps(db).front().sweep.id;
    for (int v = 0; v < kVariants; ++v)
      for (int p = 0; p < kProblems; ++p) {
        if ((v + p) % 2 != 1) continue;
        const auto vid = w.register_variant(fused_variant("gdn_fwd_test_v" + std::to_string(v), 64, 2 + v));
        const auto pid = w.register_problem(problem(p, 2, 8, 1, 1024 * (p + 1), 1024 * (p + 1)));
        insert(w, passed(sweep, vid, pid, 1.0 + v + 0.1 * p));  // already present: nothing written
      }
    w.set_sweep_status(sweep, SweepStatus::Finished);
  }
  const auto full = merge({a, b});
  EXPECT_TRUE(full.complete);
  EXPECT_EQ(full.added, count_rows(b, "SELECT count(*) FROM results") - 2);
  EXPECT_EQ(full.results, kVariants * kProblems);
}

TEST_F(Merge, RefusesShardsOfAnotherBuild) {
  ShardSpecForTest other;
  other.build = test::build("def5678");
  expect_refused({shard(1), shard(2, other)}, "build", "abc1234", "def5678");
}

TEST_F(Merge, RefusesShardsWithAnotherSeed) {
  ShardSpecForTest other;
  other.seed = 7;
  expect_refused({shard(1), shard(2, other)}, "seed", "0", "7");
}

TEST_F(Merge, RefusesShardsOfAnotherSpaceStrategyOrProtocol) {
  ShardSpecForTest space;
  space.edit = [](SweepRecord& s) { s.space = "all"; };
  expect_refused({shard(1), shard(2, space)}, "space", "default", "all");
  ShardSpecForTest strategy;
  strategy.edit = [](SweepRecord& s) { s.strategy = "random"; };
  expect_refused({shard(1), shard(2, strategy)}, "strategy", "exhaustive", "random");
  ShardSpecForTest protocol;
  protocol.edit = [](SweepRecord& s) { s.protocol.min_samples = 50; };
  expect_refused({shard(1), shard(2, protocol)}, "protocol", "samples 20..200", "samples 50..200");
}

TEST_F(Merge, RefusesAnotherShardCountOrOtherArguments) {
  ShardSpecForTest three;
  three.count = 3;
  expect_refused({shard(1), shard(2, three)}, "shard count", "2", "3");
  ShardSpecForTest filtered;
  filtered.args_tail = " --variants *v64*";
  expect_refused({shard(1), shard(2, filtered)}, "arguments (without --db and --shard)", "--seed 0",
                 "--variants *v64*");
}

TEST_F(Merge, RefusesAnotherTypeOfDeviceButRecordsEachGpu) {
  ShardSpecForTest h100;
  h100.device.name = "NVIDIA H100 80GB HBM3";
  h100.device.sm_count = 132;
  expect_refused({shard(1), shard(2, h100)}, "device type", "NVIDIA H200", "NVIDIA H100");
  // Another GPU of the same type (another node of the cluster) is merged; each is recorded.
  ShardSpecForTest other_gpu;
  other_gpu.device.uuid = "GPU-1111-other";
  const auto m = merge({shard(1), shard(2, other_gpu)});
  const Database db = Database::open(dir.file("merged.sqlite"), {.create_if_missing = false, .read_only = true});
  const auto origins = shard_origins(db, m.sweep_id);
  ASSERT_EQ(origins.size(), 2u);
  EXPECT_EQ(origins[0].device.uuid, "GPU-0000-test");
  EXPECT_EQ(origins[1].device.uuid, "GPU-1111-other");
}

TEST_F(Merge, RefusesAShardThatDiffersFromWhatTheTargetHolds) {
  merge({shard(1)});
  ShardSpecForTest other;
  other.build = test::build("def5678");
  try {
    merge({shard(2, other)});
    ADD_FAILURE() << "a shard of another build was merged into the existing merge";
  } catch (const DbError& e) {
    // The target's merged sweep has the same arguments but another build.
    EXPECT_NE(std::string(e.what()).find("field build differs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("merged.sqlite"), std::string::npos) << e.what();
  }
  EXPECT_EQ(count_rows(dir.file("merged.sqlite"), "SELECT count(*) FROM merged_shards"), 1);
}

TEST_F(Merge, RefusesAnotherRunOfAnAlreadyMergedShard) {
  const auto a = shard(1);
  merge({a});
  // Shard 1 measured again from scratch (another sweep, started later) in another file.
  ShardSpecForTest rerun;
  rerun.edit = [](SweepRecord& s) { s.started_at = "2099-01-01T00:00:00Z"; };
  const auto again = write_shard(dir.file("shard1-rerun.sqlite"), rerun);
  try {
    merge({again});
    ADD_FAILURE() << "a second run of shard 1 was merged";
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("another run of it"), std::string::npos) << e.what();
  }
}

TEST_F(Merge, RefusedMergeLeavesNoNewFileAndAnExistingOneUnchanged) {
  ShardSpecForTest other;
  other.seed = 7;
  const auto a = shard(1), b = shard(2, other);
  EXPECT_THROW(merge({a, b}), DbError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("merged.sqlite")));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().string().find(".merging."), std::string::npos) << entry.path();
  // A failure half-way (the second shard's results do not fit the target) rolls back all of it.
  merge({a});
  const auto before = count_rows(dir.file("merged.sqlite"), "SELECT count(*) FROM results");
  // Same variant name, another config: the target refuses the row.
  const std::string c = dir.file("shard2-clash.sqlite");
  {
    write_shard(c, ShardSpecForTest{.index = 2});
    Database db = Database::open(c);
    db.exec("UPDATE variants SET stages = 9 WHERE name = 'gdn_fwd_test_v1'");
  }
  EXPECT_THROW(merge({c}), DbError);
  EXPECT_EQ(count_rows(dir.file("merged.sqlite"), "SELECT count(*) FROM results"), before);
  EXPECT_EQ(count_rows(dir.file("merged.sqlite"), "SELECT count(*) FROM merged_shards"), 1);
}

TEST_F(Merge, RefusesBadArguments) {
  EXPECT_THROW(merge_shards({dir.file("m.sqlite"), {}}), DbError);
  EXPECT_THROW(merge_shards({"", {shard(1)}}), DbError);
  // A database without a shard sweep.
  {
    Database db = Database::open(dir.file("plain.sqlite"));
    ResultsWriter w(db);
    w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  }
  try {
    merge({dir.file("plain.sqlite")});
    ADD_FAILURE();
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::Invalid);
    EXPECT_NE(std::string(e.what()).find("holds no shard sweep"), std::string::npos) << e.what();
  }
  // The target among the sources.
  merge({shard(1)});
  EXPECT_THROW(merge({dir.file("merged.sqlite")}), DbError);
}

TEST(Schema, Version4MigratesToTheCurrentVersionAndReadsUnmigratedReadOnly) {
  ScratchDir dir;
  const std::string path = dir.file("v4.db");
  {
    Database db = Database::open(path, {.migrate_to_version = 4});
    ResultsWriter w(db);
    const auto sweep = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
    insert(w, passed(sweep, w.register_variant(fused_variant("gdn_fwd_a", 64, 2)),
                     w.register_problem(problem(0, 2, 8, 1, 1024, 1024)), 1.0));
  }
  {
    const Database ro = Database::open(path, {.create_if_missing = false, .read_only = true});
    EXPECT_EQ(ro.schema_version(), 4);
    EXPECT_FALSE(sweep_shard(ro, 1).has_value());
    EXPECT_TRUE(shard_origins(ro, 1).empty());
    EXPECT_NE(render_report(ro, std::nullopt, ReportFormat::Table).find("sweep 1"), std::string::npos);
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_EQ(count(db, "SELECT count(*) FROM results WHERE merged_shard_id IS NULL"), 1);
  ResultsWriter(db).mark_shard({1, 2, 3});
  EXPECT_EQ(sweep_shard(db, 1)->count, 3);
  EXPECT_THROW(ResultsWriter(db).mark_shard({1, 1, 3}), DbError);
}

TEST(Transaction, NestsAsASavepoint) {
  ScratchDir dir;
  Database db = Database::open(dir.file("t.db"));
  Transaction outer(db);
  ResultsWriter w(db);
  w.register_device(h200());  // its own Transaction, nested
  {
    Transaction inner(db);
    w.register_build(build());
  }  // rolled back: the build only
  EXPECT_EQ(count(db, "SELECT count(*) FROM builds"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM devices"), 1);
  outer.commit();
  EXPECT_EQ(count(db, "SELECT count(*) FROM devices"), 1);
}

}  // namespace
}  // namespace gdn::db::test
