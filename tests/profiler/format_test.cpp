#include <gtest/gtest.h>

#include <regex>

#include "gdn/profiler/device_info.hpp"
#include "gdn/profiler/launch.hpp"
#include "gdn/profiler/nvtx.hpp"
#include "gdn/profiler/pm_sampling.hpp"
#include "gdn/profiler/range_profiler.hpp"

namespace gp = gdn::profiler;

TEST(DeviceFormat, UuidLikeNvidiaSmi) {
  std::array<unsigned char, 16> b{};
  for (int i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(i * 17);
  EXPECT_EQ(gp::format_uuid(b), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

TEST(DeviceFormat, CudaVersion) {
  EXPECT_EQ(gp::format_cuda_version(13000), "13.0");
  EXPECT_EQ(gp::format_cuda_version(12080), "12.8");
}

TEST(DeviceFormat, DescribeNamesTheFacts) {
  gp::DeviceInfo d;
  d.ordinal = 0;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-1";
  d.sm_count = 132;
  d.l2_bytes = 60 << 20;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.cupti.reason = "built without CUPTI";
  const std::string text = gp::describe(d);
  EXPECT_NE(text.find("NVIDIA H200"), std::string::npos) << text;
  EXPECT_NE(text.find("132 SMs"), std::string::npos) << text;
  EXPECT_NE(text.find("L2 60 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("CUPTI: unavailable (built without CUPTI)"), std::string::npos) << text;
}

TEST(Nvtx, RangeTextNamesLevel) {
  EXPECT_EQ(gp::nvtx_range_text(gp::NvtxLevel::Sweep, "smoke"), "sweep: smoke");
  EXPECT_EQ(gp::nvtx_range_text(gp::NvtxLevel::Config, "gdn_fwd_sm90_c64"), "config: gdn_fwd_sm90_c64");
  EXPECT_EQ(gp::nvtx_range_text(gp::NvtxLevel::Phase, "timing"), "phase: timing");
}

TEST(Nvtx, RangesNestWithoutATool) {
  gp::NvtxRange sweep(gp::NvtxLevel::Sweep, "s");
  { gp::NvtxRange config(gp::NvtxLevel::Config, "c"); }
  SUCCEED();
}

// Without CUPTI every CUPTI feature must say so, not fail or pretend (no device needed).
TEST(WithoutCupti, ReportsBuiltWithoutCupti) {
  if (gp::built_with_cupti()) GTEST_SKIP() << "this build has CUPTI (GDN_WITH_CUPTI=ON)";
  const auto m = gp::profile_metrics([](cudaStream_t) {}, gp::MetricSet::Basic);
  EXPECT_FALSE(m.available);
  EXPECT_NE(m.unavailable_reason.find("built without CUPTI"), std::string::npos) << m.unavailable_reason;
  EXPECT_EQ(m.values.size(), gp::range_metrics(gp::MetricSet::Basic).size());
  const auto t = gp::sample_pm_timeline([](cudaStream_t) {});
  EXPECT_FALSE(t.available);
  EXPECT_NE(t.unavailable_reason.find("built without CUPTI"), std::string::npos);
}
