#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gdn/profiler/metrics.hpp"

namespace gp = gdn::profiler;

namespace {
std::set<std::string> keys(std::span<const gp::MetricDef> defs) {
  std::set<std::string> out;
  for (const auto& d : defs) out.emplace(d.key);
  return out;
}
}  // namespace

TEST(MetricSets, NoneIsEmpty) { EXPECT_TRUE(gp::range_metrics(gp::MetricSet::None).empty()); }

TEST(MetricSets, BasicIsTheOnePassSetOfProfilingMd) {
  const auto basic = gp::range_metrics(gp::MetricSet::Basic);
  ASSERT_FALSE(basic.empty());
  EXPECT_EQ(basic[0].key, "duration_ns");  // the weight of the duration-weighted means
  EXPECT_EQ(keys(basic), (std::set<std::string>{"duration_ns", "sm_clock_hz", "sm_busy_pct",
                                                "achieved_occupancy_pct", "issue_active_pct",
                                                "dram_throughput_pct", "tensor_pipe_pct", "wgmma_inst"}));
  for (const auto& d : basic) {
    EXPECT_NE(d.cupti_name.find("sm__throughput"), 0u) << "SOL metric in the basic set: " << d.cupti_name;
    EXPECT_NE(d.cupti_name.find("gpu__compute_memory_throughput"), 0u) << d.cupti_name;
  }
}

TEST(MetricSets, FullAddsTheSolMetricsToBasic) {
  const auto basic = keys(gp::range_metrics(gp::MetricSet::Basic));
  const auto full = gp::range_metrics(gp::MetricSet::Full);
  EXPECT_EQ(full[0].key, "duration_ns");
  auto full_keys = keys(full);
  for (const auto& k : basic) EXPECT_TRUE(full_keys.count(k)) << k;
  EXPECT_TRUE(full_keys.count("sm_throughput_pct"));
  EXPECT_TRUE(full_keys.count("memory_throughput_pct"));
  EXPECT_EQ(full.size(), basic.size() + 2);
}

TEST(MetricSets, KeysUniqueAndAggregationMatchesUnit) {
  const auto full = gp::range_metrics(gp::MetricSet::Full);
  EXPECT_EQ(keys(full).size(), full.size());
  for (const auto& d : full) {
    // Extensive quantities add up over a call's kernels; rates and percentages do not.
    const bool extensive = d.unit == "ns" || d.unit == "inst";
    EXPECT_EQ(d.aggregation == gp::Aggregation::Sum, extensive) << d.key;
    EXPECT_FALSE(d.label.empty()) << d.key;
  }
}

TEST(MetricSets, PmSamplingSetIsSmallAndHasNoDuration) {
  const auto pm = gp::pm_sampling_metrics();
  EXPECT_EQ(keys(pm), (std::set<std::string>{"sm_busy_pct", "achieved_occupancy_pct",
                                             "dram_throughput_pct", "tensor_pipe_pct", "sm_clock_hz"}));
  // GH100 has no sm__pipe_tensor_op_gmma_cycles_active (docs/benchmarking.md).
  for (const auto& d : pm) EXPECT_EQ(d.cupti_name.find("gmma_cycles"), std::string_view::npos);
}

TEST(MetricSets, ParseAndFind) {
  EXPECT_EQ(gp::parse_metric_set("none"), gp::MetricSet::None);
  EXPECT_EQ(gp::parse_metric_set("basic"), gp::MetricSet::Basic);
  EXPECT_EQ(gp::parse_metric_set("full"), gp::MetricSet::Full);
  EXPECT_EQ(gp::to_string(gp::MetricSet::Full), "full");
  try {
    gp::parse_metric_set("all");
    FAIL() << "'all' accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("none|basic|full"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'all'"), std::string::npos) << e.what();
  }
  ASSERT_NE(gp::find_metric("dram_throughput_pct"), nullptr);
  EXPECT_EQ(gp::find_metric("dram_throughput_pct")->cupti_name, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(gp::find_metric("nope"), nullptr);
}
