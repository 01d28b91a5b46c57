#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "gdn/profiler/range_profiler.hpp"

namespace gp = gdn::profiler;
using gp::Aggregation;

namespace {
constexpr std::array<gp::MetricDef, 3> defs{{
    {"duration_ns", "gpu__time_duration.sum", "Duration", "ns", Aggregation::Sum},
    {"dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM", "%",
     Aggregation::DurationWeightedMean},
    {"wgmma_inst", "sm__inst_executed_pipe_tensor_op_gmma.sum", "wgmma", "inst", Aggregation::Sum},
}};
gp::KernelMetrics kernel(std::optional<double> t, std::optional<double> dram, std::optional<double> inst) {
  return {"k", {t, dram, inst}};
}
}  // namespace

TEST(Aggregate, SumsExtensiveAndWeightsRatesByDuration) {
  // A long memory-bound kernel and a short one: the call is mostly the long one.
  const std::vector<gp::KernelMetrics> ks{kernel(300.0, 90.0, 0.0), kernel(100.0, 10.0, 64.0)};
  const auto v = gp::aggregate_kernel_metrics(defs, ks);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].key, "duration_ns");
  EXPECT_DOUBLE_EQ(*v[0].value, 400.0);
  EXPECT_DOUBLE_EQ(*v[1].value, (300.0 * 90.0 + 100.0 * 10.0) / 400.0);  // 70, not the plain 50
  EXPECT_DOUBLE_EQ(*v[2].value, 64.0);
  for (const auto& m : v) EXPECT_EQ(m.unavailable_reason, "") << m.key;
}

TEST(Aggregate, SingleKernelIsItsOwnValue) {
  const auto v = gp::aggregate_kernel_metrics(defs, std::vector{kernel(5.0, 42.0, 7.0)});
  EXPECT_DOUBLE_EQ(*v[1].value, 42.0);
}

TEST(Aggregate, MissingValuesAreExplained) {
  const std::vector<gp::KernelMetrics> ks{kernel(100.0, std::nullopt, std::nullopt),
                                          kernel(100.0, 50.0, std::nullopt)};
  const auto v = gp::aggregate_kernel_metrics(defs, ks);
  EXPECT_DOUBLE_EQ(*v[1].value, 50.0);
  EXPECT_NE(v[1].unavailable_reason.find("partial: 1 of 2"), std::string::npos) << v[1].unavailable_reason;
  EXPECT_FALSE(v[2].value.has_value());
  EXPECT_NE(v[2].unavailable_reason.find("no kernel reported"), std::string::npos);
}

TEST(Aggregate, NoKernels) {
  const auto v = gp::aggregate_kernel_metrics(defs, std::vector<gp::KernelMetrics>{});
  ASSERT_EQ(v.size(), 3u);
  for (const auto& m : v) {
    EXPECT_FALSE(m.value.has_value());
    EXPECT_EQ(m.unavailable_reason, "no kernel was profiled");
  }
}

TEST(Aggregate, RejectsMalformedInput) {
  EXPECT_THROW(gp::aggregate_kernel_metrics(defs, std::vector<gp::KernelMetrics>{{"k", {1.0}}}),
               std::invalid_argument);
  const std::array<gp::MetricDef, 1> no_duration{defs[1]};
  EXPECT_THROW(gp::aggregate_kernel_metrics(no_duration, std::vector{gp::KernelMetrics{"k", {1.0}}}),
               std::invalid_argument);
}

TEST(MetricsResultLookup, ByKey) {
  gp::MetricsResult r;
  r.values = {{"sm_busy_pct", 12.5, ""}, {"dram_throughput_pct", std::nullopt, "why"}};
  EXPECT_EQ(r.value("sm_busy_pct"), 12.5);
  EXPECT_FALSE(r.value("dram_throughput_pct").has_value());
  EXPECT_FALSE(r.value("unknown").has_value());
}
