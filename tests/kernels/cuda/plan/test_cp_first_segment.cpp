// The first-segment rule and its override (plan/cp_first_segment.hpp), host only: on for the
// column-warp loop with CP once pass 1 has more than two working CTAs per SM, off otherwise;
// GDN_CP_FIRST_SEGMENT decides instead when set, and takes only its documented values.
#include <gtest/gtest.h>

#include "fused_test_config.hpp"
#include "plan/cp_first_segment.hpp"
#include "plan/prepare_overlap.hpp"

namespace gdn::fused {
namespace {

constexpr FirstSegmentSetting kRule = FirstSegmentSetting::Rule;

TEST(CpFirstSegment, OnlyPastTwoPassOneCtasPerSm) {
  const KernelConfig cw64 = fused_config(WarpRoles::ColumnWarps, 64, 64);
  // 1 x 32768 at 16/16 in 64-chunk segments: 416 working CTAs in pass 1, over 2 x 132.
  ASSERT_EQ(first_loop_ctas(cw64, 1, 512, 16), 416);
  EXPECT_TRUE(first_segment_in_pass1(cw64, 1, 512, 16, 132, kRule));
  // The same on a GPU of 208 SMs or more: one wave of two CTAs per SM.
  EXPECT_FALSE(first_segment_in_pass1(cw64, 1, 512, 16, 208, kRule));
  EXPECT_TRUE(first_segment_in_pass1(cw64, 1, 512, 16, 207, kRule));
  // 1 x 32768 at 8/24 in 128-chunk segments: 240 CTAs (measured 22 % slower with it).
  EXPECT_FALSE(first_segment_in_pass1(fused_config(WarpRoles::ColumnWarps, 64, 128), 1, 512, 24, 132, kRule));
  // 1 x 8192 at 16/16 in 32-chunk segments: 160 CTAs (measured 9 % slower with it).
  EXPECT_FALSE(first_segment_in_pass1(fused_config(WarpRoles::ColumnWarps, 64, 32), 1, 128, 16, 132, kRule));
}

TEST(CpFirstSegment, NeverWithoutCpOrForOtherLoopsWhateverTheSetting) {
  for (const FirstSegmentSetting s : {kRule, FirstSegmentSetting::On}) {
    EXPECT_FALSE(first_segment_in_pass1(fused_config(WarpRoles::ColumnWarps, 64, 0), 1, 512, 64, 132, s));
    EXPECT_FALSE(first_segment_in_pass1(fused_config(WarpRoles::ProducerConsumer, 64, 64), 1, 512, 64, 132, s));
    EXPECT_FALSE(first_segment_in_pass1(fused_config(WarpRoles::Cooperative, 64, 64), 1, 512, 64, 132, s));
  }
}

TEST(CpFirstSegment, TheOverrideDecidesForTheColumnWarpLoop) {
  const KernelConfig cw = fused_config(WarpRoles::ColumnWarps, 64, 32);
  EXPECT_TRUE(first_segment_in_pass1(cw, 1, 128, 16, 132, FirstSegmentSetting::On));
  EXPECT_FALSE(first_segment_in_pass1(fused_config(WarpRoles::ColumnWarps, 64, 64), 1, 512, 16, 132,
                                      FirstSegmentSetting::Off));
}

TEST(CpFirstSegment, ParsesTheDocumentedValuesOnly) {
  EXPECT_EQ(parse_cp_first_segment(nullptr), kRule);
  EXPECT_EQ(parse_cp_first_segment(""), kRule);
  EXPECT_EQ(parse_cp_first_segment("0"), FirstSegmentSetting::Off);
  EXPECT_EQ(parse_cp_first_segment("1"), FirstSegmentSetting::On);
  for (const char* bad : {"2", "on", "00", " 1", "true", "-1"})
    EXPECT_FALSE(parse_cp_first_segment(bad).has_value()) << bad;
}

}  // namespace
}  // namespace gdn::fused
