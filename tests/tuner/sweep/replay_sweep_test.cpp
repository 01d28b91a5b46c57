// The whole sweep pipeline (coordinator, worker processes, gate, strategies, commits) run
// through the replay runner over a database written by the db writer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;
using gdn::db::Outcome;

namespace {
class ReplaySweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("replay");
    rec = make_recorded_db(dir + "/recorded.db");
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir;
  RecordedDb rec;
  std::string out;
};
}  // namespace

TEST_F(ReplaySweep, ExhaustiveReproducesTheRecording) {
  const auto db = dir + "/out.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--strategy exhaustive"), out), 0) << out;
  EXPECT_NE(out.find("runner overhead per configuration"), std::string::npos) << out;
  const auto rows = by_pair(all_results(db));
  // Runnable variants on every problem; the rejected one once (its reason holds for all).
  ASSERT_EQ(rows.size(), (rec.variants.size() - 1) * 4 + 1);
  for (std::size_t v = 0; v < rec.variants.size(); ++v)
    for (int p = 0; p < 4; ++p) {
      if (rec.variants[v] == rec.rejected_variant && p > 0) {
        EXPECT_FALSE(rows.count({rec.variants[v], p}));
        continue;
      }
      const auto& r = rows.at({rec.variants[v], p}).result;
      SCOPED_TRACE(rec.variants[v] + " problem " + std::to_string(p));
      if (rec.variants[v] == rec.incorrect_variant && p < 2) {
        EXPECT_EQ(r.outcome, Outcome::Incorrect);  // the replayed gate failed for that family
        EXPECT_EQ(r.max_rel_rms, 0.31);
        EXPECT_NE(r.errors_json.find("0.31"), std::string::npos);
      } else if (rec.variants[v] == rec.unsupported_variant && p == 3) {
        EXPECT_EQ(r.outcome, Outcome::Unsupported);
      } else if (rec.variants[v] == rec.rejected_variant) {
        EXPECT_EQ(r.outcome, Outcome::CompileRejected);
        EXPECT_NE(r.message.find("invalid config"), std::string::npos) << r.message;
      } else if (rec.variants[v] == rec.crashed_variant && p == 2) {
        EXPECT_EQ(r.outcome, Outcome::Crashed);  // replayed as recorded, not re-judged
        EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
      } else {
        ASSERT_EQ(r.outcome, Outcome::Passed) << r.message;
        EXPECT_DOUBLE_EQ(*r.latency_p50_ms, rec.p50[v][p]);
        EXPECT_EQ(r.sample_count, 40);
        ASSERT_TRUE(r.max_rel_rms.has_value());  // gate figures travel with every result
        EXPECT_TRUE(r.metrics.sm_busy_pct.has_value());
        EXPECT_FALSE(r.metrics.sm_throughput_pct.has_value());  // SOL only with --metrics full
      }
    }
}

TEST_F(ReplaySweep, MetricsNoneLeavesCountersNullWithAReason) {
  const auto db = dir + "/out.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--metrics none --variants '*v32*'"), out), 0) << out;
  const auto rows = all_results(db);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_NE(r.variant.name.find("v32"), std::string::npos);
    EXPECT_FALSE(r.result.metrics.sm_busy_pct.has_value());
    EXPECT_FALSE(r.result.metrics.unavailable_reason.empty());
  }
}

TEST_F(ReplaySweep, HalvingIsDeterministicAndKeepsTheRecordedBest) {
  const auto a = dir + "/a.db", b = dir + "/b.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, a, "--strategy halving --seed 3"), out), 0) << out;
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, b, "--strategy halving --seed 3"), out), 0) << out;
  const auto ra = by_pair(all_results(a)), rb = by_pair(all_results(b));
  ASSERT_EQ(ra.size(), rb.size());
  for (const auto& [key, row] : ra) {
    ASSERT_TRUE(rb.count(key));
    EXPECT_EQ(row.result.outcome, rb.at(key).result.outcome);
    EXPECT_EQ(row.result.sample_count, rb.at(key).result.sample_count);
    EXPECT_EQ(row.result.latency_p50_ms, rb.at(key).result.latency_p50_ms);
  }
  for (int p = 0; p < 4; ++p) {
    // Fastest correct recorded variant for this problem.
    int best = -1;
    for (std::size_t v = 0; v < rec.variants.size(); ++v)
      if (rec.p50[v][p] > 0 && (best < 0 || rec.p50[v][p] < rec.p50[best][p])) best = static_cast<int>(v);
    const auto& r = ra.at({rec.variants[best], p}).result;
    EXPECT_EQ(r.outcome, Outcome::Passed);
    EXPECT_EQ(r.sample_count, 40) << "the winner gets the precise measurement";
    EXPECT_DOUBLE_EQ(*r.latency_p50_ms, rec.p50[best][p]);
    int precise = 0, cheap = 0;
    for (const auto& [key, row] : ra)
      if (key.second == p && row.result.outcome == Outcome::Passed)
        (row.result.sample_count == 40 ? precise : cheap) += 1;
    EXPECT_EQ(precise, 2) << "6 runnable variants, eta 3: two survive to the precise rung";
    EXPECT_GT(cheap, 0) << "eliminated variants keep their cheap measurement";
  }
}

TEST_F(ReplaySweep, PmTimelinesAreReplayedWhenAsked) {
  const auto with = dir + "/with.db", without = dir + "/without.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, with, "--pm-sampling --variants '*v32_s2*'"), out), 0) << out;
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, without, "--variants '*v32_s2*'"), out), 0) << out;
  gdn::db::OpenOptions oo;
  oo.read_only = true;
  oo.create_if_missing = false;
  const auto a = gdn::db::Database::open(with, oo), b = gdn::db::Database::open(without, oo);
  const auto ra = all_results(with), rb = all_results(without);
  ASSERT_FALSE(ra.empty());
  EXPECT_EQ(gdn::db::pm_timeline_of(a, ra[0].result.id).size(), 5u);
  EXPECT_TRUE(gdn::db::pm_timeline_of(b, rb[0].result.id).empty());
  EXPECT_EQ(gdn::db::samples_of(a, ra[0].result.id).size(), 40u);
}

TEST_F(ReplaySweep, HalvingRecordsWhyAVariantWasDropped) {
  const auto db = dir + "/out.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--strategy halving --seed 1"), out), 0) << out;
  std::size_t eliminated = 0;
  for (const auto& r : all_results(db))
    if (r.result.message.find("eliminated after rung 0") != std::string::npos) {
      ++eliminated;
      EXPECT_LT(r.result.sample_count, 40);
    }
  EXPECT_GT(eliminated, 0u);
}

TEST_F(ReplaySweep, RandomMeasuresExactlyTheBudget) {
  const auto db = dir + "/out.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--strategy random --budget 10 --seed 11"), out), 0) << out;
  EXPECT_EQ(all_results(db).size(), 10u + 1u) << "the budget counts measured pairs; the rejected variant is recorded once";
}

TEST_F(ReplaySweep, ReportAndExportReadTheSweep) {
  const auto db = dir + "/out.db";
  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, ""), out), 0) << out;
  ASSERT_EQ(run_command(gdnlab() + " report --db " + db + " --format csv", out), 0) << out;
  EXPECT_NE(out.find(rec.variants[0].substr(0, 12)), std::string::npos) << out;
  ASSERT_EQ(run_command(gdnlab() + " report --db " + db + " --format json --sweep 1", out), 0) << out;
  ASSERT_EQ(run_command(gdnlab() + " export --db " + db + " --out " + dir + "/table", out), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/table/dispatch.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/table/gdn_dispatch_table.hpp"));
}

// Plan candidates and the backward pass go through the whole pipeline: the replayed sweep
// keeps each candidate's pins and each result's plan, the export carries the winner's pins
// and a backward entry, and the gap takes the backward pass.
TEST(ReplayPlans, PinsPlansAndTheBackwardGoFromSweepToTable) {
  const std::string dir = temp_dir("replay_plans");
  const RecordedPlans rec = make_recorded_plans_db(dir + "/recorded.db");
  const std::string db = dir + "/out.db";
  std::string out;
  ASSERT_EQ(run_command(gdnlab() + " sweep --replay " + rec.path + " --db " + db + " --no-progress", out), 0)
      << out;
  std::map<std::string, gdn::db::ResultRow> by_name;
  for (const auto& r : all_results(db)) by_name.emplace(r.variant.name, r);
  ASSERT_EQ(by_name.size(), 3u);
  const auto& pinned = by_name.at(rec.pinned_candidate);
  EXPECT_EQ(pinned.result.outcome, Outcome::Passed) << pinned.result.message;
  EXPECT_EQ(pinned.variant.pins.prepare_heads, 2);
  EXPECT_EQ(pinned.variant.variant_name(), rec.rule_candidate);
  EXPECT_EQ(pinned.result.plan.prepare_heads, 2);
  EXPECT_EQ(pinned.result.plan.cp_segment_chunks, 16);
  const auto& backward = by_name.at(rec.backward);
  EXPECT_EQ(backward.variant.pass, gdn::Pass::Backward);
  EXPECT_EQ(backward.variant.config.pass, gdn::Pass::Backward);
  EXPECT_EQ(backward.result.outcome, Outcome::Passed) << backward.result.message;
  EXPECT_EQ(backward.result.plan.block_v, 64);

  ASSERT_EQ(run_command(gdnlab() + " export --db " + db + " --out " + dir + "/table", out), 0) << out;
  std::ifstream json_file(dir + "/table/dispatch.json");
  const std::string json((std::istreambuf_iterator<char>(json_file)), std::istreambuf_iterator<char>());
  const nlohmann::json table = nlohmann::json::parse(json);
  bool pinned_entry = false, backward_entry = false;
  for (const auto& e : table["entries"]) {
    pinned_entry |= e["variant"] == rec.rule_candidate && e["plan"] == nlohmann::json{{"prepare_heads", 2}};
    backward_entry |= e["pass"] == "bwd" && e["variant"] == rec.backward;
  }
  EXPECT_TRUE(pinned_entry) << json;
  EXPECT_TRUE(backward_entry) << json;
  ASSERT_EQ(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1 --pass bwd", out), 0) << out;
  EXPECT_NE(out.find("1 backward entries"), std::string::npos) << out;
  EXPECT_NE(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1 --pass sideways", out), 0);
  EXPECT_NE(out.find("--pass: expected fwd or bwd, got 'sideways'"), std::string::npos) << out;
  // A replay's candidates are the recorded ones: no plan space on top.
  EXPECT_NE(run_command(gdnlab() + " sweep --replay " + rec.path + " --db " + dir + "/again.db --plans axes", out), 0);
  EXPECT_NE(out.find("--plans"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}
