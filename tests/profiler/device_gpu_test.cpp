#include <gtest/gtest.h>

#include <regex>

#include "gdn/profiler/device_info.hpp"
#include "gdn/profiler/launch.hpp"
#include "gdn/profiler/timing.hpp"
#include "gpu_test_support.hpp"

namespace gp = gdn::profiler;

TEST(DeviceInfoGpu, ReadsTheDevice) {
  GDN_REQUIRE_GPU();
  const gp::DeviceInfo d = gp::query_device(0);
  SCOPED_TRACE(gp::describe(d));
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(std::regex_match(d.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
      << d.uuid;
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GE(d.cc_major, 7);
  EXPECT_GT(d.sm_clock_peak_khz, 0);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GT(d.total_memory_bytes, 0u);
  EXPECT_GT(d.shared_per_block_optin_bytes, 0);
  EXPECT_GE(d.driver_version, d.runtime_version) << "driver older than the runtime";
  EXPECT_EQ(d.cupti.built_with_cupti, gp::built_with_cupti());
  if (gp::built_with_cupti()) {
    EXPECT_FALSE(d.cupti.chip_name.empty()) << d.cupti.reason;
    EXPECT_GT(d.cupti.cupti_api_version, 0u);
    EXPECT_TRUE(d.cupti.range_profiler_supported) << d.cupti.reason;
    EXPECT_TRUE(d.cupti.pm_sampling_supported) << d.cupti.reason;
    EXPECT_TRUE(d.cupti.counters_available) << d.cupti.reason;
  }
  const std::string text = gp::describe(d);
  EXPECT_NE(text.find(d.name), std::string::npos);
}

TEST(DeviceInfoGpu, AllDevicesListed) {
  GDN_REQUIRE_GPU();
  const auto all = gp::query_devices();
  ASSERT_EQ(static_cast<int>(all.size()), gp::cuda_device_count());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].ordinal, static_cast<int>(i));
}

TEST(DeviceInfoGpu, BadOrdinalNamesTheRange) {
  GDN_REQUIRE_GPU();
  const int n = gp::cuda_device_count();
  try {
    gp::query_device(n);
    FAIL() << "ordinal " << n << " accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device ordinal"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got " + std::to_string(n)), std::string::npos) << e.what();
  }
}

TEST(DeviceInfoGpu, NvmlClockReadable) {
  GDN_REQUIRE_GPU();
  const gp::ClockReading c = gp::read_sm_clock(0);
  ASSERT_TRUE(c.sm_clock_mhz.has_value()) << c.unavailable_reason;
  EXPECT_GT(*c.sm_clock_mhz, 0u);
}

// On a machine without a device the count is 0 and the reason says why (never throws).
TEST(DeviceCount, NeverThrows) {
  std::string why;
  const int n = gp::cuda_device_count(&why);
  if (n == 0) EXPECT_FALSE(why.empty());
  SUCCEED() << n << " device(s) " << why;
}
