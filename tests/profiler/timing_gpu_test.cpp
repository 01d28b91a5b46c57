// Timing a copy of known size: the result must respect the DRAM bound and be of the right
// magnitude (a unit slip reads 1000x off). These check plausibility, not a speed goal.
#include <gtest/gtest.h>

#include <algorithm>

#include "gdn/profiler/timing.hpp"
#include "gpu_test_kernels.hpp"
#include "gpu_test_support.hpp"

namespace gp = gdn::profiler;
namespace gt = gdn::profiler::testing;

namespace {

constexpr std::size_t big_bytes = 256ull << 20;  // read 256 MiB + write 256 MiB

gp::Protocol test_protocol() {
  gp::Protocol p;
  p.min_samples = 10;
  p.max_samples = 200;
  p.target_rel_spread = 0.02;
  p.time_cap_ms = 3000.0;
  return p;
}

// Lower bound of one big copy in ms from the device's peak DRAM bandwidth (0 if unknown).
double copy_bound_ms(std::size_t bytes) {
  int device = 0;
  cudaGetDevice(&device);
  const double peak = gt::peak_dram_bytes_per_s(device);
  return peak > 0 ? 2.0 * static_cast<double>(bytes) / peak * 1e3 : 0.0;
}

std::string summary(const gp::Timing& t) {
  return "method=" + std::string(gp::to_string(t.method)) + " count=" + std::to_string(t.count) +
         " p20/p50/p80=" + std::to_string(t.quantiles.p20) + "/" + std::to_string(t.quantiles.p50) +
         "/" + std::to_string(t.quantiles.p80) + " ms spread=" + std::to_string(t.rel_spread) +
         " stop=" + std::string(gp::to_string(t.stop_reason)) + " kernels/call=" +
         std::to_string(t.kernels_per_call) + " dropped=" + std::to_string(t.dropped_records) +
         " incomplete=" + std::to_string(t.incomplete_samples) + " fallback='" + t.fallback_reason + "'";
}

void expect_consistent(const gp::Timing& t) {
  EXPECT_EQ(t.count, static_cast<int>(t.samples_ms.size())) << summary(t);
  EXPECT_GE(t.count, 1) << summary(t);
  EXPECT_NE(t.stop_reason, gp::StopReason::NotYet) << summary(t);
  if (t.stop_reason == gp::StopReason::Converged) {
    EXPECT_GE(t.count, t.protocol.min_samples) << summary(t);
    EXPECT_LE(t.rel_spread, t.protocol.target_rel_spread) << summary(t);
  }
  EXPECT_LE(t.quantiles.p20, t.quantiles.p50);
  EXPECT_LE(t.quantiles.p50, t.quantiles.p80);
  EXPECT_GT(t.wall_ms, 0.0);
}

}  // namespace

TEST(TimingGpu, CopyWithDefaultSourceIsPlausible) {
  GDN_REQUIRE_GPU();
  gt::DeviceBuffer src(big_bytes), dst(big_bytes);
  const gp::Timing t = gp::time_kernel(
      [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), big_bytes, s); }, test_protocol());
  SCOPED_TRACE(summary(t));
  expect_consistent(t);
  if (gp::built_with_cupti()) {
    EXPECT_EQ(t.method, gp::TimingMethod::CuptiActivity) << "CUPTI timing fell back: " << t.fallback_reason;
    EXPECT_EQ(t.fallback_reason, "");
    EXPECT_EQ(t.kernels_per_call, 1);
    EXPECT_EQ(t.dropped_records, 0u);
    ASSERT_EQ(t.kernel_busy_ms.size(), t.samples_ms.size());
    for (std::size_t i = 0; i < t.samples_ms.size(); ++i) EXPECT_NEAR(t.kernel_busy_ms[i], t.samples_ms[i], 1e-9);
  }
  const double bound = copy_bound_ms(big_bytes);
  ASSERT_GT(bound, 0.0) << "device reports no memory clock / bus width";
  // Never faster than the DRAM peak (5 % slack for the attribute's rounding) ...
  EXPECT_GE(t.quantiles.p20, 0.95 * bound) << "faster than peak DRAM bandwidth: bound " << bound << " ms";
  // ... and not absurdly slower: a streaming copy reaches well over 5 % of peak.
  EXPECT_LE(t.quantiles.p50, 20.0 * bound) << "bound " << bound << " ms";
  int device = 0, l2 = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  EXPECT_GE(t.protocol.l2_flush_bytes, static_cast<std::size_t>(l2));
}

TEST(TimingGpu, GraphReplayEventsAgreeWithCuptiOnALongKernel) {
  GDN_REQUIRE_GPU();
  gt::DeviceBuffer src(big_bytes), dst(big_bytes);
  auto call = [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), big_bytes, s); };
  gp::Protocol p = test_protocol();
  p.source = gp::TimingSource::GraphReplay;
  const gp::Timing events = gp::time_kernel(call, p);
  SCOPED_TRACE("events: " + summary(events));
  expect_consistent(events);
  EXPECT_EQ(events.method, gp::TimingMethod::GraphReplayEvents);
  p.source = gp::TimingSource::CuptiActivity;
  const gp::Timing records = gp::time_kernel(call, p);
  SCOPED_TRACE("records: " + summary(records));
  // ~0.1 ms or more per copy: event overhead (a few us) is small against it.
  const double ratio = events.quantiles.p50 / records.quantiles.p50;
  EXPECT_GT(ratio, 0.8);
  EXPECT_LT(ratio, 1.5);
}

TEST(TimingGpu, SmallCopyReadsMicrosecondsNotMilliseconds) {
  GDN_REQUIRE_GPU();
  constexpr std::size_t bytes = 1u << 20;
  gt::DeviceBuffer src(bytes), dst(bytes);
  const gp::Timing t = gp::time_kernel(
      [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), bytes, s); }, test_protocol());
  SCOPED_TRACE(summary(t));
  expect_consistent(t);
  EXPECT_GT(t.quantiles.p50, 0.0003);  // > 0.3 us
  // docs/benchmarking.md: 1.3 us by CUPTI records on the H200; events read ~6 us.
  EXPECT_LT(t.quantiles.p50, gp::built_with_cupti() ? 0.05 : 0.1);
}

TEST(TimingGpu, MultiKernelCallIsOneSample) {
  GDN_REQUIRE_GPU();
  if (!gp::built_with_cupti()) GTEST_SKIP() << "kernel grouping needs CUPTI records";
  constexpr std::size_t bytes = 64ull << 20;
  gt::DeviceBuffer src(bytes), dst(bytes), out(64);
  auto one = [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), bytes, s); };
  auto three = [&](cudaStream_t s) {
    gt::launch_copy(src.get(), dst.get(), bytes, s);
    gt::launch_fma(static_cast<float*>(out.get()), 2000, 264, s);
    gt::launch_copy(dst.get(), src.get(), bytes, s);
  };
  const gp::Timing single = gp::time_kernel(one, test_protocol());
  const gp::Timing triple = gp::time_kernel(three, test_protocol());
  SCOPED_TRACE("single: " + summary(single) + " | triple: " + summary(triple));
  expect_consistent(triple);
  EXPECT_EQ(triple.kernels_per_call, 3);
  EXPECT_EQ(triple.incomplete_samples, 0);
  ASSERT_EQ(triple.kernel_busy_ms.size(), triple.samples_ms.size());
  // Busy time cannot exceed the call's span by more than the overlap of back-to-back kernel
  // records: on the H200 a kernel's start stamp preceded its predecessor's end by up to 0.3 us.
  const double overlap_ms = 1e-3 * (triple.kernels_per_call - 1);
  for (std::size_t i = 0; i < triple.samples_ms.size(); ++i)
    EXPECT_LE(triple.kernel_busy_ms[i], triple.samples_ms[i] + overlap_ms);
  EXPECT_GT(triple.quantiles.p50, 1.5 * single.quantiles.p50);  // two copies + fma
}

TEST(TimingGpu, NonCapturableCallFallsBackToDirectLaunches) {
  GDN_REQUIRE_GPU();
  constexpr std::size_t bytes = 4u << 20;
  gt::DeviceBuffer src(bytes), dst(bytes);
  // Synchronising inside the call is illegal under stream capture.
  auto call = [&](cudaStream_t s) {
    gt::launch_copy(src.get(), dst.get(), bytes, s);
    cudaStreamSynchronize(s);
  };
  gp::Protocol p = test_protocol();
  p.source = gp::TimingSource::GraphReplay;
  const gp::Timing t = gp::time_kernel(call, p);
  SCOPED_TRACE(summary(t));
  EXPECT_EQ(t.method, gp::TimingMethod::StreamEvents);
  EXPECT_NE(t.fallback_reason.find("graph capture failed"), std::string::npos);
  expect_consistent(t);
}

TEST(TimingGpu, FailingLaunchThrowsMeasurementErrorNamingTheCudaError) {
  GDN_REQUIRE_GPU();
  try {
    gp::time_kernel([](cudaStream_t s) { gt::launch_invalid(s); }, test_protocol());
    FAIL() << "an invalid launch was timed";
  } catch (const gp::MeasurementError& e) {
    // The runtime's verdict on an impossible launch differs by version (CUDA 13.0 on the H200
    // says cudaErrorInvalidValue); what matters is that the error is carried and named.
    EXPECT_NE(e.code(), cudaSuccess) << e.what();
    EXPECT_NE(std::string(e.what()).find(cudaGetErrorName(e.code())), std::string::npos) << e.what();
  }
}

TEST(TimingGpu, FlushBufferSmallerThanL2IsRejected) {
  GDN_REQUIRE_GPU();
  gp::Protocol p = test_protocol();
  p.l2_flush_bytes = 4096;
  try {
    gp::time_kernel([](cudaStream_t) {}, p);
    FAIL() << "a 4 KiB flush buffer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Protocol.l2_flush_bytes"), std::string::npos) << e.what();
  }
}

TEST(TimingGpu, SmClockIsReadWithTheTiming) {
  GDN_REQUIRE_GPU();
  constexpr std::size_t bytes = 64ull << 20;
  gt::DeviceBuffer src(bytes), dst(bytes);
  const gp::Timing t = gp::time_kernel(
      [&](cudaStream_t s) { gt::launch_copy(src.get(), dst.get(), bytes, s); }, test_protocol());
  ASSERT_TRUE(t.clock.sm_clock_mhz.has_value()) << "NVML clock unavailable: " << t.clock.unavailable_reason;
  EXPECT_GE(*t.clock.sm_clock_mhz, 100u);
  EXPECT_LE(*t.clock.sm_clock_mhz, 3000u);
}
