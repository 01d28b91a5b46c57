// `gdnlab sweep --warmup/--min-samples/--max-samples/--target-spread/--time-cap-ms`, replayed
// from the bundled H200 recording: the sweep stores the protocol it used, the replay keeps the
// recorded samples that protocol's stop rule would have kept, halving's cheap rungs keep their
// quick protocol, and --resume continues only a sweep with the same protocol.
#include <gtest/gtest.h>

#include <filesystem>

#include "gdn/db/writer.hpp"
#include "gdn/profiler/stats.hpp"
#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;
using gdn::db::Outcome;

namespace {
const std::string kBundled = GDN_BUNDLED_H200_DB;
const std::string kShort = "--warmup 3 --min-samples 10 --max-samples 20 --target-spread 0.5 --time-cap-ms 2000";

std::string replay_cmd(const std::string& out_db, const std::string& extra) {
  return gdnlab() + " sweep --replay " + kBundled + " --shapes smoke --db " + out_db + " --no-progress " + extra;
}

gdn::db::SweepSummary newest_sweep(const std::string& path) {
  const auto database = gdn::db::Database::open(path, {.create_if_missing = false, .read_only = true});
  return gdn::db::list_sweeps(database).front();
}

class ProtocolOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(kBundled)) << kBundled;
    dir = temp_dir("protocol");
    db = dir + "/out.db";
    recorded = by_pair(all_results(kBundled));
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::vector<double> recorded_samples(const PairKey& key) {
    const auto database = gdn::db::Database::open(kBundled, {.create_if_missing = false, .read_only = true});
    return gdn::db::samples_of(database, recorded.at(key).result.id);
  }
  std::string dir, db, out;
  std::map<PairKey, gdn::db::ResultRow> recorded;
};
}  // namespace

TEST_F(ProtocolOptions, SweepStoresTheProtocolItUsed) {
  ASSERT_EQ(run_command(replay_cmd(db, kShort), out), 0) << out;
  const auto s = newest_sweep(db);
  EXPECT_EQ(s.sweep.protocol.warmup_iters, 3);
  EXPECT_EQ(s.sweep.protocol.min_samples, 10);
  EXPECT_EQ(s.sweep.protocol.max_samples, 20);
  EXPECT_EQ(s.sweep.protocol.target_rel_spread, 0.5);
  EXPECT_EQ(s.sweep.protocol.time_cap_ms, 2000.0);
  EXPECT_NE(s.sweep.args.find(kShort), std::string::npos) << s.sweep.args;
  // Without the options: the precise protocol, and no protocol option in the stored args.
  const auto plain = dir + "/plain.db";
  ASSERT_EQ(run_command(replay_cmd(plain, ""), out), 0) << out;
  const auto d = gdn::profiler::Protocol::precise();
  const auto p = newest_sweep(plain).sweep;
  EXPECT_EQ(p.protocol.warmup_iters, d.warmup_calls);
  EXPECT_EQ(p.protocol.min_samples, d.min_samples);
  EXPECT_EQ(p.protocol.max_samples, d.max_samples);
  EXPECT_EQ(p.protocol.target_rel_spread, d.target_rel_spread);
  EXPECT_EQ(p.protocol.time_cap_ms, d.time_cap_ms);
  EXPECT_EQ(p.args.find("--min-samples"), std::string::npos) << p.args;
}

TEST_F(ProtocolOptions, ReplayKeepsTheSamplesTheStopRuleWouldHaveTaken) {
  ASSERT_EQ(run_command(replay_cmd(db, kShort), out), 0) << out;
  const auto database = gdn::db::Database::open(db, {.create_if_missing = false, .read_only = true});
  int passed = 0;
  for (const auto& [key, row] : by_pair(all_results(db))) {
    if (row.result.outcome != Outcome::Passed) continue;
    ++passed;
    SCOPED_TRACE(key.first + " problem " + std::to_string(key.second));
    const auto samples = gdn::db::samples_of(database, row.result.id);
    EXPECT_EQ(row.result.sample_count, static_cast<int>(samples.size()));
    EXPECT_GE(samples.size(), 10u);
    EXPECT_LE(samples.size(), 20u);
    const auto all = recorded_samples(key);
    ASSERT_GE(all.size(), samples.size());
    EXPECT_EQ(samples, std::vector<double>(all.begin(), all.begin() + static_cast<long>(samples.size())));
    EXPECT_DOUBLE_EQ(*row.result.latency_p50_ms, gdn::profiler::quantiles(samples).p50);
    EXPECT_NE(row.result.message.find("replay under this sweep's protocol"), std::string::npos)
        << row.result.message;
  }
  EXPECT_GT(passed, 0);
}

TEST_F(ProtocolOptions, HalvingAppliesThemToTheFinalRungOnly) {
  ASSERT_EQ(run_command(replay_cmd(db, "--strategy halving --seed 3 " + kShort), out), 0) << out;
  int final_rung = 0, cheap = 0;
  for (const auto& row : all_results(db)) {
    if (row.result.outcome != Outcome::Passed) continue;
    SCOPED_TRACE(row.variant.name + " problem " + std::to_string(row.problem.row_index));
    if (row.result.message.find("successive halving: eliminated") != std::string::npos) {
      ++cheap;  // the quick protocol's rung 0 keeps 5 samples, whatever the options say
      EXPECT_EQ(row.result.message.find("replay under this sweep's protocol"), std::string::npos);
      EXPECT_EQ(row.result.sample_count % gdn::profiler::Protocol::quick().min_samples, 0);
    } else {
      ++final_rung;
      EXPECT_GE(row.result.sample_count, 10);
      EXPECT_LE(row.result.sample_count, 20);
    }
  }
  EXPECT_GT(final_rung, 0);
  EXPECT_GT(cheap, 0);
}

TEST_F(ProtocolOptions, ResumeMatchesOnTheProtocol) {
  ASSERT_EQ(run_command(replay_cmd(db, kShort), out), 0) << out;
  const auto first = newest_sweep(db);
  // Finished: the same protocol finds it (and says it finished); another one does not.
  EXPECT_EQ(run_command(replay_cmd(db, kShort + " --resume"), out), 2) << out;
  EXPECT_NE(out.find("already finished"), std::string::npos) << out;
  {
    auto database = gdn::db::Database::open(db, {.create_if_missing = false});
    gdn::db::ResultsWriter(database).set_sweep_status(first.sweep.id, gdn::db::SweepStatus::Interrupted);
  }
  for (const char* other : {"--resume", "--min-samples 11 --max-samples 20 --resume"}) {
    EXPECT_EQ(run_command(replay_cmd(db, other), out), 2) << other << "\n" << out;
    EXPECT_NE(out.find("--resume: no unfinished sweep"), std::string::npos) << out;
    EXPECT_NE(out.find("protocol: warm-up 3, samples 10..20, target spread 0.5, time cap 2000 ms"),
              std::string::npos) << out;
  }
  {
    const auto database = gdn::db::Database::open(db, {.create_if_missing = false, .read_only = true});
    EXPECT_EQ(gdn::db::list_sweeps(database).size(), 1u);  // refused resumes wrote nothing
  }
  ASSERT_EQ(run_command(replay_cmd(db, kShort + " --resume"), out), 0) << out;
  EXPECT_NE(out.find("(resumed)"), std::string::npos) << out;
  EXPECT_NE(out.find("0 committed now"), std::string::npos) << out;
  EXPECT_EQ(newest_sweep(db).sweep.id, first.sweep.id);
}
