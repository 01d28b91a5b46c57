// Range-profiler counters and PM sampling on kernels whose character is known: a streaming
// copy must look memory-bound, an FMA loop compute-bound.
#include <gtest/gtest.h>

#include <algorithm>

#include "gdn/profiler/pm_sampling.hpp"
#include "gdn/profiler/range_profiler.hpp"
#include "gpu_test_kernels.hpp"
#include "gpu_test_support.hpp"

namespace gp = gdn::profiler;
namespace gt = gdn::profiler::testing;

namespace {

constexpr std::size_t bytes = 256ull << 20;

std::string dump(const gp::MetricsResult& m) {
  std::string s = "available=" + std::to_string(m.available) + " reason='" + m.unavailable_reason +
                  "' passes=" + std::to_string(m.passes) + " kernels=" + std::to_string(m.kernels.size());
  for (const auto& v : m.values)
    s += "\n  " + v.key + " = " + (v.value ? std::to_string(*v.value) : "n/a") +
         (v.unavailable_reason.empty() ? "" : " (" + v.unavailable_reason + ")");
  return s;
}

// Without CUPTI the reason must say so; with it the profiler must work on the H200.
bool require_metrics(const gp::MetricsResult& m) {
  if (!gp::built_with_cupti()) {
    EXPECT_FALSE(m.available);
    EXPECT_NE(m.unavailable_reason.find("built without CUPTI"), std::string::npos) << m.unavailable_reason;
    return false;
  }
  EXPECT_TRUE(m.available) << "range profiler unavailable: " << m.unavailable_reason;
  return m.available;
}

double value(const gp::MetricsResult& m, const char* key) {
  const auto v = m.value(key);
  EXPECT_TRUE(v.has_value()) << key << " missing\n" << dump(m);
  return v.value_or(-1.0);
}

std::size_t index_of(gp::MetricSet set, std::string_view key) {
  const auto defs = gp::range_metrics(set);
  for (std::size_t i = 0; i < defs.size(); ++i)
    if (defs[i].key == key) return i;
  return defs.size();
}

}  // namespace

TEST(RangeProfilerGpu, BasicSetSeesACopyAsMemoryBound) {
  GDN_REQUIRE_GPU();
  gt::DeviceBuffer src(bytes), dst(bytes);
  const gp::MetricsResult m = gp::profile_metrics(
      [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), bytes, s); }, gp::MetricSet::Basic);
  SCOPED_TRACE(dump(m));
  if (!require_metrics(m)) return;
  EXPECT_EQ(m.passes, 1u) << "the basic set must fit one pass";
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.values.size(), gp::range_metrics(gp::MetricSet::Basic).size());
  EXPECT_GT(value(m, "dram_throughput_pct"), 30.0);
  EXPECT_LE(value(m, "dram_throughput_pct"), 100.5);
  EXPECT_GT(value(m, "sm_busy_pct"), 10.0);
  EXPECT_GT(value(m, "achieved_occupancy_pct"), 0.0);
  EXPECT_LT(value(m, "tensor_pipe_pct"), 1.0);
  EXPECT_EQ(value(m, "wgmma_inst"), 0.0);
  EXPECT_GT(value(m, "issue_active_pct"), 0.0);
  const double clock = value(m, "sm_clock_hz");
  EXPECT_GT(clock, 3e8);
  EXPECT_LT(clock, 3.5e9);
  int device = 0;
  cudaGetDevice(&device);
  const double bound_ns = 2.0 * bytes / gt::peak_dram_bytes_per_s(device) * 1e9;
  EXPECT_GT(value(m, "duration_ns"), 0.95 * bound_ns);
}

TEST(RangeProfilerGpu, FullSetAddsSpeedOfLight) {
  GDN_REQUIRE_GPU();
  gt::DeviceBuffer src(bytes), dst(bytes);
  const gp::MetricsResult m = gp::profile_metrics(
      [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), bytes, s); }, gp::MetricSet::Full);
  SCOPED_TRACE(dump(m));
  if (!require_metrics(m)) return;
  EXPECT_GT(m.passes, 1u);
  EXPECT_GT(value(m, "memory_throughput_pct"), 30.0);
  const double sm_sol = value(m, "sm_throughput_pct");
  EXPECT_GE(sm_sol, 0.0);
  EXPECT_LE(sm_sol, 100.5);
}

TEST(RangeProfilerGpu, MultiKernelCallAggregatesByDuration) {
  GDN_REQUIRE_GPU();
  gt::DeviceBuffer src(bytes), dst(bytes), out(64);
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const gp::MetricsResult m = gp::profile_metrics(
      [&](cudaStream_t s) {
        gt::launch_copy(src.get(), dst.get(), bytes, s);
        gt::launch_fma(static_cast<float*>(out.get()), 20000, sms * 16, s);
      },
      gp::MetricSet::Basic);
  SCOPED_TRACE(dump(m));
  if (!require_metrics(m)) return;
  ASSERT_EQ(m.kernels.size(), 2u);
  const std::size_t t = index_of(gp::MetricSet::Basic, "duration_ns");
  const std::size_t d = index_of(gp::MetricSet::Basic, "dram_throughput_pct");
  const auto& copy = m.kernels[0].values;
  const auto& fma = m.kernels[1].values;
  ASSERT_TRUE(copy[t] && fma[t] && copy[d] && fma[d]);
  EXPECT_GT(*copy[d], 5.0 * *fma[d]) << "copy should be far more DRAM-bound than the FMA loop";
  EXPECT_NEAR(value(m, "duration_ns"), *copy[t] + *fma[t], 1e-6 * (*copy[t] + *fma[t]));
  const double expected = (*copy[d] * *copy[t] + *fma[d] * *fma[t]) / (*copy[t] + *fma[t]);
  EXPECT_NEAR(value(m, "dram_throughput_pct"), expected, 1e-9 * expected + 1e-12);
}

TEST(RangeProfilerGpu, NoneSetMeasuresNothing) {
  GDN_REQUIRE_GPU();
  const gp::MetricsResult m = gp::profile_metrics([](cudaStream_t) {}, gp::MetricSet::None);
  EXPECT_FALSE(m.available);
  EXPECT_TRUE(m.values.empty());
  EXPECT_NE(m.unavailable_reason.find("none"), std::string::npos) << m.unavailable_reason;
}

TEST(PmSamplingGpu, TimelineOfRepeatedCopies) {
  GDN_REQUIRE_GPU();
  gt::DeviceBuffer src(bytes), dst(bytes);
  gp::PmOptions o;
  o.interval_ns = 100000;
  o.calls = 40;  // ~0.12 ms each on the H200: ~50 samples
  const gp::PmTimeline tl = gp::sample_pm_timeline(
      [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), bytes, s); }, o);
  if (!gp::built_with_cupti()) {
    EXPECT_NE(tl.unavailable_reason.find("built without CUPTI"), std::string::npos) << tl.unavailable_reason;
    return;
  }
  ASSERT_TRUE(tl.available) << "PM sampling unavailable: " << tl.unavailable_reason;
  EXPECT_EQ(tl.metric_keys.size(), gp::pm_sampling_metrics().size()) << tl.unavailable_reason;
  ASSERT_GE(tl.samples.size(), 5u) << "trimmed " << tl.trimmed_leading;
  EXPECT_EQ(tl.samples.front().t_ns, 0u);
  double best_dram = 0.0;
  const auto dram = std::find(tl.metric_keys.begin(), tl.metric_keys.end(), "dram_throughput_pct") -
                    tl.metric_keys.begin();
  for (std::size_t i = 0; i < tl.samples.size(); ++i) {
    ASSERT_EQ(tl.samples[i].values.size(), tl.metric_keys.size());
    if (i > 0) EXPECT_GT(tl.samples[i].t_ns, tl.samples[i - 1].t_ns) << "sample " << i;
    EXPECT_LE(tl.samples[i].duration_ns, 10 * o.interval_ns) << "sample " << i;
    best_dram = std::max(best_dram, tl.samples[i].values[static_cast<std::size_t>(dram)]);
  }
  EXPECT_GT(best_dram, 30.0) << "no sample saw the copies' DRAM traffic";
}
