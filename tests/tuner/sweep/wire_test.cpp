// The worker pipe protocol: escaping, numbers, and request/output round trips.
#include <gtest/gtest.h>

#include <cmath>

#include "gdn/tuner/trial_io.hpp"
#include "gdn/tuner/wire.hpp"

using namespace gdn::tuner;

TEST(Wire, EscapesSurviveARoundTrip) {
  wire::Message m;
  m.verb = "result";
  m.set("message", std::string("tab\there\nnewline \\ back=slash\r"));
  m.set("empty", std::string());
  const auto line = wire::encode(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto back = wire::decode(line);
  EXPECT_EQ(back.str("message"), m.str("message"));
  EXPECT_EQ(back.str("empty"), "");
}

TEST(Wire, NumbersRoundTripExactly) {
  wire::Message m;
  m.verb = "x";
  const std::vector<double> v = {0.1, 1.0 / 3.0, 1e-300, -0.0, 123456789.123456789};
  m.set("v", v);
  m.set("nan", std::nan(""));
  const auto back = wire::decode(wire::encode(m));
  EXPECT_EQ(back.nums("v"), v);
  EXPECT_TRUE(std::isnan(back.num("nan")));
}

TEST(Wire, MalformedLinesNameTheProblem) {
  try {
    wire::decode("result\tnoequals");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("noequals"), std::string::npos);
  }
  EXPECT_THROW(wire::decode("result\tk=bad\\q"), std::runtime_error);
  wire::Message m = wire::decode("result\tcount=12x");
  try {
    m.integer("count");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos);
  }
  EXPECT_THROW(m.str("missing"), std::runtime_error);
}

TEST(TrialIo, RequestRoundTrip) {
  TrialRequest r;
  r.kind = RequestKind::Gate;
  r.id = 77;
  r.variant = "gdn_fwd_sm90_fused_v64_s2_pc_r232_cp16_x2";
  r.problem.shape_set_name = "smoke";
  r.problem.h_qk = 2;
  r.problem.h_v = 8;
  r.problem.k = r.problem.v = 128;
  r.problem.seqlens = "100,28,131";
  r.problem.num_seqs = 3;
  r.layout = "batched";
  r.rung = 2;
  r.metrics = gdn::profiler::MetricSet::Full;
  r.pm_sampling = true;
  r.precise.warmup_calls = 4;
  r.precise.min_samples = 12;
  r.precise.max_samples = 34;
  r.precise.target_rel_spread = 0.0125;
  r.precise.time_cap_ms = 1234.5;
  const auto b = decode_request(wire::decode(wire::encode(encode_request(r))));
  EXPECT_EQ(b.precise, r.precise);
  EXPECT_EQ(b.kind, RequestKind::Gate);
  EXPECT_EQ(b.id, 77u);
  EXPECT_EQ(b.variant, r.variant);
  EXPECT_EQ(problem_shape_key(b.problem), problem_shape_key(r.problem));
  EXPECT_EQ(b.layout, "batched");
  EXPECT_EQ(b.rung, 2);
  EXPECT_EQ(b.metrics, gdn::profiler::MetricSet::Full);
  EXPECT_TRUE(b.pm_sampling);
}

TEST(TrialIo, OutputRoundTripKeepsNullsAndTimeline) {
  TrialOutput o;
  o.id = 5;
  o.result.outcome = gdn::db::Outcome::Passed;
  o.result.message = "timing: cupti";
  o.result.errors_json = R"({"o": {"rel_rms": 0.001}})";
  o.result.max_rel_rms = 0.001;
  o.result.latency_p50_ms = 0.25;
  o.result.sample_count = 3;
  o.result.metrics.sm_busy_pct = 91.5;
  o.result.metrics.unavailable_reason = "dram_throughput_pct: missing";
  o.result.registers = 168;
  o.samples_ms = {0.24, 0.25, 0.26};
  o.pm_timeline = {{0, 0, 80.0, std::nullopt, 10.0, std::nullopt, 1.9e9}, {1, 100000, 81.0, 40.0, 11.0, 5.0, std::nullopt}};
  o.worker_busy_ms = 12.5;
  o.worker_exiting = true;
  o.result.plan.block_v = 32;
  o.result.plan.local_heads = 2;
  o.result.plan.recompute_cp_chunks = 64;
  o.result.plan.pass1_beside_recompute = 1;
  o.result.plan.group_sum_beside = 0;
  const auto b = decode_output(wire::decode(wire::encode(encode_output(o))));
  EXPECT_EQ(b.result.plan, o.result.plan);
  EXPECT_FALSE(b.result.plan.fixup_cols.has_value());
  EXPECT_EQ(b.result.outcome, gdn::db::Outcome::Passed);
  EXPECT_EQ(b.result.errors_json, o.result.errors_json);
  EXPECT_EQ(b.result.latency_p50_ms, 0.25);
  EXPECT_FALSE(b.result.latency_p20_ms.has_value());
  EXPECT_EQ(b.result.metrics.sm_busy_pct, 91.5);
  EXPECT_FALSE(b.result.metrics.dram_pct.has_value());
  EXPECT_EQ(b.result.metrics.unavailable_reason, o.result.metrics.unavailable_reason);
  EXPECT_EQ(b.result.registers, 168);
  EXPECT_FALSE(b.result.shared_bytes.has_value());
  EXPECT_EQ(b.samples_ms, o.samples_ms);
  ASSERT_EQ(b.pm_timeline.size(), 2u);
  EXPECT_EQ(b.pm_timeline[1].t_ns, 100000);
  EXPECT_FALSE(b.pm_timeline[0].dram_pct.has_value());
  EXPECT_EQ(b.pm_timeline[1].dram_pct, 40.0);
  EXPECT_FALSE(b.pm_timeline[1].gpc_clock_hz.has_value());
  EXPECT_TRUE(b.worker_exiting);
  EXPECT_DOUBLE_EQ(b.worker_busy_ms, 12.5);
}

TEST(TrialIo, UnknownOutcomeIsRejected) {
  TrialOutput o;
  auto m = encode_output(o);
  for (auto& [k, v] : m.fields)
    if (k == "outcome") v = "Exploded";
  EXPECT_THROW(decode_output(m), std::runtime_error);
}
