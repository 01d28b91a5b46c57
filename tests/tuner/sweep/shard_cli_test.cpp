// Sharded sweeps through the command line: `gdnlab sweep --shard I/N` into one database per
// shard, `gdnlab merge` into one, compared with the same sweep run unsharded (replay runner).
#include <gtest/gtest.h>

#include <filesystem>

#include "gdn/db/database.hpp"
#include "gdn/db/merge.hpp"
#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {

class ShardCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("shard");
    rec = make_recorded_db(dir + "/recorded.db");
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  // Runs the sweep in `count` shards and merges them; returns the merged database.
  std::string sharded(const std::string& extra, int count) {
    std::string shards;
    for (int i = 1; i <= count; ++i) {
      const auto db = dir + "/shard" + std::to_string(i) + ".db";
      EXPECT_EQ(run_command(replay_sweep_cmd(rec, db, extra + " --shard " + std::to_string(i) + "/" +
                                                          std::to_string(count)), out), 0) << out;
      shards += " " + db;
    }
    const auto merged = dir + "/merged.db";
    EXPECT_EQ(run_command(gdnlab() + " merge --into " + merged + shards, out), 0) << out;
    return merged;
  }

  void expect_same_rows(const std::string& a, const std::string& b) {
    const auto ra = by_pair(all_results(a)), rb = by_pair(all_results(b));
    ASSERT_EQ(ra.size(), rb.size());
    ASSERT_EQ(all_results(a).size(), ra.size()) << "a pair stored twice";
    for (const auto& [key, row] : rb) {
      SCOPED_TRACE(key.first + " problem " + std::to_string(key.second));
      ASSERT_TRUE(ra.count(key));
      const auto& got = ra.at(key).result;
      EXPECT_EQ(got.outcome, row.result.outcome);
      EXPECT_EQ(got.message, row.result.message);
      EXPECT_EQ(got.latency_p50_ms, row.result.latency_p50_ms);
      EXPECT_EQ(got.sample_count, row.result.sample_count);
    }
  }

  std::string dir, out;
  RecordedDb rec;
};

}  // namespace

TEST_F(ShardCli, ExhaustiveShardsMergeIntoTheUnshardedSweep) {
  const auto whole = dir + "/whole.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, whole, "--strategy exhaustive"), out), 0) << out;
  const auto merged = sharded("--strategy exhaustive", 3);
  EXPECT_NE(out.find("all 3 shards merged, finished"), std::string::npos) << out;
  expect_same_rows(merged, whole);
  // Every shard measured something, and says which part it is.
  for (int i = 1; i <= 3; ++i) {
    std::int64_t sweep = 0;
    EXPECT_FALSE(all_results(dir + "/shard" + std::to_string(i) + ".db", &sweep).empty());
    ASSERT_EQ(run_command(gdnlab() + " report --db " + dir + "/shard" + std::to_string(i) + ".db", out), 0);
    EXPECT_NE(out.find("shard " + std::to_string(i) + "/3 of a sharded sweep"), std::string::npos) << out;
  }
  // report, export and gap read the merged database and say where its results came from.
  ASSERT_EQ(run_command(gdnlab() + " report --db " + merged, out), 0) << out;
  EXPECT_NE(out.find("merged from 3 of 3 shards"), std::string::npos) << out;
  EXPECT_NE(out.find("shard 3/3: "), std::string::npos) << out;
  ASSERT_EQ(run_command(gdnlab() + " export --db " + merged + " --out " + dir + "/export", out), 0) << out;
  EXPECT_NE(out.find("is merged from shards"), std::string::npos) << out;
  ASSERT_EQ(run_command(gdnlab() + " gap --db " + merged + " --table-sweep 1", out), 0) << out;
  EXPECT_NE(out.find("shard 1/3: "), std::string::npos) << out;
}

TEST_F(ShardCli, HalvingShardsByProblemAndMergesIntoTheUnshardedSweep) {
  const auto whole = dir + "/whole.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, whole, "--strategy halving --halving-eta 2 --seed 5"), out), 0) << out;
  expect_same_rows(sharded("--strategy halving --halving-eta 2 --seed 5", 2), whole);
}

TEST_F(ShardCli, MergeRefusesShardsOfAnotherSeedAndIsIdempotent) {
  const auto a = dir + "/a.db", b = dir + "/b.db", merged = dir + "/m.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, a, "--strategy random --budget 9 --seed 1 --shard 1/2"), out), 0) << out;
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, b, "--strategy random --budget 9 --seed 2 --shard 2/2"), out), 0) << out;
  EXPECT_EQ(run_command(gdnlab() + " merge --into " + merged + " " + a + " " + b, out), 2) << out;
  EXPECT_NE(out.find("gdnlab merge: error: '" + b + "' is not a shard of the same sweep as '" + a +
                     "': field seed differs ('" + a + "': 1; '" + b + "': 2)"),
            std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(merged));
  ASSERT_EQ(run_command(gdnlab() + " merge --into " + merged + " " + a, out), 0) << out;
  const auto first = all_results(merged).size();
  ASSERT_EQ(run_command(gdnlab() + " merge --into " + merged + " " + a + " " + a, out), 0) << out;
  EXPECT_NE(out.find("(0 added now)"), std::string::npos) << out;
  EXPECT_NE(out.find("shards not merged yet: 2 of 2"), std::string::npos) << out;
  EXPECT_EQ(all_results(merged).size(), first);
}

TEST_F(ShardCli, ResumeOrStartContinuesAShardAndMeasuresNothingTwice) {
  const auto db = dir + "/s.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--shard 2/3 --resume-or-start"), out), 0) << out;
  EXPECT_EQ(out.find("(resumed)"), std::string::npos) << out;
  const auto n = all_results(db).size();
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--shard 2/3 --resume-or-start"), out), 0) << out;
  EXPECT_NE(out.find("(resumed)"), std::string::npos) << out;
  EXPECT_NE(out.find("(0 committed now"), std::string::npos) << out;
  EXPECT_EQ(all_results(db).size(), n);
}

TEST_F(ShardCli, BadShardArgumentsAreRefusedBeforeTheDatabase) {
  const auto db = dir + "/never.db";
  for (const std::string bad : {"5/4", "0/2", "two/4", "3"}) {
    EXPECT_EQ(run_command(replay_sweep_cmd(rec, db, "--shard " + bad), out), 2) << bad;
    EXPECT_NE(out.find("gdnlab sweep: error: --shard: expected I/N with whole numbers 1 <= I <= N"),
              std::string::npos) << out;
    EXPECT_NE(out.find("got '" + bad + "'"), std::string::npos) << out;
  }
  EXPECT_EQ(run_command(replay_sweep_cmd(rec, db, "--resume --resume-or-start"), out), 2) << out;
  EXPECT_FALSE(std::filesystem::exists(db));
}

// A requeued task lands on another node: the shard continues on another GPU of the same kind,
// and the results measured there name it; a GPU of another kind is refused.
TEST_F(ShardCli, AShardResumesOnAnotherGpuOfTheSameKindAndNamesItPerResult) {
  const auto db = dir + "/s.db";
  const std::string cmd = replay_sweep_cmd(rec, db, "--shard 1/2 --resume-or-start");
  ASSERT_EQ(run_command(cmd, out), 0) << out;
  const auto n = all_results(db).size();
  ASSERT_GT(n, 3u);
  // As if the first run had stopped three results short on another GPU of the same kind.
  auto interrupt = [&](const std::string& device_change) {
    auto database = gdn::db::Database::open(db);
    database.exec("DELETE FROM results WHERE id IN (SELECT id FROM results ORDER BY id DESC LIMIT 3)");
    database.exec("UPDATE devices SET " + device_change + " WHERE id = (SELECT device_id FROM sweeps)");
    database.exec("UPDATE sweeps SET status = 'interrupted'");
  };
  interrupt("uuid = 'GPU-another-node'");
  ASSERT_EQ(run_command(cmd, out), 0) << out;
  EXPECT_NE(out.find("(resumed)"), std::string::npos) << out;
  EXPECT_NE(out.find("(3 committed now"), std::string::npos) << out;
  EXPECT_EQ(all_results(db).size(), n);
  std::int64_t sweep = 0;
  all_results(db, &sweep);
  {
    const auto database = gdn::db::Database::open(db, {.create_if_missing = false, .read_only = true});
    const auto devices = gdn::db::result_devices(database, sweep);
    ASSERT_EQ(devices.size(), 3u);
    for (const auto& [id, device] : devices) EXPECT_NE(device.uuid, "GPU-another-node");
  }
  ASSERT_EQ(run_command(gdnlab() + " report --db " + db, out), 0) << out;
  EXPECT_NE(out.find("3 results measured on "), std::string::npos) << out;
  // Merged, the three keep naming their GPU.
  const auto merged = dir + "/merged.db";
  ASSERT_EQ(run_command(gdnlab() + " merge --into " + merged + " " + db, out), 0) << out;
  {
    const auto database = gdn::db::Database::open(merged, {.create_if_missing = false, .read_only = true});
    EXPECT_EQ(gdn::db::result_devices(database, 1).size(), 3u);
  }
  // Another kind of GPU (here: another model name) does not continue the sweep.
  interrupt("name = 'NVIDIA H100 80GB HBM3'");
  EXPECT_EQ(run_command(cmd, out), 2) << out;
  EXPECT_NE(out.find("is of another kind, and results of two kinds of device are never mixed"), std::string::npos)
      << out;
}
