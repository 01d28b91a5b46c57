// Sweep option validation: each bad argument names the option, what was expected and what
// was given.
#include <gtest/gtest.h>

#include <filesystem>

#include "gdn/tuner/sweep_options.hpp"

using namespace gdn::tuner;

namespace {
SweepOptions good() {
  SweepOptions o;
  o.shapes = "smoke";
  o.db_path = "/tmp/gdnlab_options_test_never_created.db";
  return o;
}
std::string error_of(const SweepOptions& o) {
  try {
    validate(o);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
void expect_error(const SweepOptions& o, const std::string& option, const std::string& given) {
  const auto msg = error_of(o);
  EXPECT_EQ(msg.rfind(option + ":", 0), 0u) << msg;
  EXPECT_NE(msg.find("expected"), std::string::npos) << msg;
  EXPECT_NE(msg.find(given), std::string::npos) << msg;
}
}  // namespace

TEST(SweepOptions, GoodOptionsPassAndTouchNothing) {
  EXPECT_EQ(error_of(good()), "");
  EXPECT_FALSE(std::filesystem::exists(good().db_path));
}

TEST(SweepOptions, EachBadArgumentIsNamed) {
  auto o = good();
  o.db_path.clear();
  expect_error(o, "--db", "nothing");
  o = good();
  o.db_path = "/tmp";
  expect_error(o, "--db", "directory");
  o = good();
  o.shapes.clear();
  expect_error(o, "--shapes", "nothing");
  o = good();
  o.space = "/no/such/space.txt";
  expect_error(o, "--space", "/no/such/space.txt");
  o = good();
  o.strategy.kind = StrategyKind::Random;
  expect_error(o, "--budget", "0");
  o = good();
  o.strategy.budget = 5;
  expect_error(o, "--budget", "5");
  o = good();
  o.timeout_s = -1;
  expect_error(o, "--timeout", "-1");
  o = good();
  o.gate_timeout_s = 0;
  expect_error(o, "--gate-timeout", "0");
  o = good();
  o.replay_db = "/no/such/recording.db";
  expect_error(o, "--replay", "/no/such/recording.db");
  o = good();
  o.replay_sweep = 3;
  expect_error(o, "--replay-sweep", "without --replay");
}

TEST(SweepOptions, GpuListParsing) {
  EXPECT_EQ(parse_gpu_list("0"), std::vector<int>{0});
  EXPECT_EQ(parse_gpu_list("0,2,1"), (std::vector<int>{0, 2, 1}));
  for (const char* bad : {"", "a", "0,", "-1", "0,0", "1.5", ",1"}) {
    try {
      parse_gpu_list(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--gpus:", 0), 0u) << e.what();
    }
  }
}

TEST(SweepOptions, CanonicalArgsIgnoreResumeAndGpus) {
  auto a = good(), b = good();
  b.resume = true;
  b.gpus = {1, 2};
  b.progress = false;
  EXPECT_EQ(canonical_args(a), canonical_args(b));
  b.strategy.seed = 9;
  EXPECT_NE(canonical_args(a), canonical_args(b));
}

TEST(SweepOptions, ProtocolOptionsAreValidatedByTheirOptionName) {
  auto o = good();
  o.precise.warmup_calls = -1;
  expect_error(o, "--warmup", "got -1");
  o = good();
  o.precise.min_samples = 0;
  expect_error(o, "--min-samples", "got 0");
  o = good();
  o.precise.min_samples = 40;
  o.precise.max_samples = 30;
  expect_error(o, "--max-samples", ">= --min-samples (40), got 30");
  o = good();
  o.precise.target_rel_spread = 0;
  expect_error(o, "--target-spread", "got 0");
  o = good();
  o.precise.time_cap_ms = -5;
  expect_error(o, "--time-cap-ms", "got -5");
}

TEST(SweepOptions, CanonicalArgsNameOnlyProtocolOptionsThatDiffer) {
  const auto base = canonical_args(good());
  EXPECT_EQ(base.find("--warmup"), std::string::npos) << base;
  EXPECT_EQ(base.find("--min-samples"), std::string::npos) << base;
  auto o = good();
  o.precise.warmup_calls = gdn::profiler::Protocol::precise().warmup_calls;  // the default, said aloud
  EXPECT_EQ(canonical_args(o), base);
  o.precise.warmup_calls = 3;
  o.precise.min_samples = 10;
  o.precise.max_samples = 200;
  o.precise.target_rel_spread = 0.01;
  o.precise.time_cap_ms = 1500;
  EXPECT_EQ(canonical_args(o),
            base + " --warmup 3 --min-samples 10 --max-samples 200 --target-spread 0.01 --time-cap-ms 1500");
}

TEST(SweepOptions, GlobFilters) {
  EXPECT_TRUE(glob_match("*fused*v64*", "gdn_fwd_sm90_fused_v64_s2_cp0"));
  EXPECT_FALSE(glob_match("*fused*v64*", "gdn_fwd_sm90_staged_v64_cp0"));
  EXPECT_TRUE(glob_match("gdn_fwd_sm90_staged_v?4_cp0", "gdn_fwd_sm90_staged_v64_cp0"));
  EXPECT_TRUE(passes_filter("", "anything"));
  EXPECT_TRUE(passes_filter("*staged*,*x2", "gdn_fwd_sm90_fused_v64_s2_pc_r232_cp16_x2"));
  EXPECT_FALSE(passes_filter("*staged*,*x2", "gdn_fwd_sm90_fused_v64_s2_cp0"));
}
