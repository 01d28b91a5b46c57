// gdn_fwd_dispatch_source without a device: NULL with a message, like gdn_fwd_variant_name
// (the device test, test_dispatch_gpu.cpp, checks the answers themselves).
#include <gtest/gtest.h>

#include <string>

#include "gdn/gdn.h"

namespace {

bool message_has(std::string_view part) {
  return std::string(gdn_last_error()).find(part) != std::string::npos;
}

gdn_problem batched(int64_t B, int64_t T) {
  gdn_problem p;
  gdn_problem_init(&p, B, T, 2, 8, 128, 128);
  return p;
}

TEST(DispatchSource, InvalidProblemIsNullAndNamesTheArgument) {
  EXPECT_EQ(gdn_fwd_dispatch_source(nullptr), nullptr);
  EXPECT_TRUE(message_has("gdn_fwd_dispatch_source")) << gdn_last_error();
  gdn_problem p = batched(1, 64);
  p.Hv = 3;  // Hv % Hk != 0
  EXPECT_EQ(gdn_fwd_dispatch_source(&p), nullptr);
  EXPECT_TRUE(message_has("Hv")) << gdn_last_error();
}

TEST(DispatchSource, WithoutADeviceIsNullWithAMessage) {
  if (gdn_device_available()) GTEST_SKIP() << "a usable CUDA device is present";
  const gdn_problem p = batched(1, 64);
  EXPECT_EQ(gdn_fwd_dispatch_source(&p), nullptr);
  EXPECT_TRUE(message_has("gdn_fwd_dispatch_source")) << gdn_last_error();
  EXPECT_TRUE(message_has("CUDA device")) << gdn_last_error();
}

}  // namespace
