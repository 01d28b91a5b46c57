// The CP fix-up's column width (cp/fixup.cu: fixup_cols), host only: the narrowest of 8, 16,
// 32 columns whose CTAs (one per SM) fit the SMs in one wave, else 32.
#include <gtest/gtest.h>

#include "forward/kernels.cuh"

namespace {

using gdn::fused::fixup_cols;

TEST(FixupCols, NarrowestWidthWhoseCtasFitTheSms) {
  // 132 SMs: 8 heads x 16 blocks of 8 = 128 CTAs fit; 16 heads need 16 columns (128 CTAs);
  // 24 and 32 heads need 32 (96, 128 CTAs).
  EXPECT_EQ(fixup_cols(1, 8, 132), 8);
  EXPECT_EQ(fixup_cols(1, 16, 132), 16);
  EXPECT_EQ(fixup_cols(1, 24, 132), 32);
  EXPECT_EQ(fixup_cols(1, 32, 132), 32);
  // Sequences multiply the CTAs: two sequences of 8 heads need 16 columns.
  EXPECT_EQ(fixup_cols(2, 8, 132), 16);
  EXPECT_EQ(fixup_cols(1, 2, 132), 8);
}

TEST(FixupCols, WiderThanOneWaveStaysAtThirtyTwo) {
  EXPECT_EQ(fixup_cols(1, 64, 132), 32);  // 256 CTAs: two waves, the fewest at any width
  EXPECT_EQ(fixup_cols(8, 64, 132), 32);
  EXPECT_EQ(fixup_cols(1, 8, 64), 16);  // a smaller GPU: 8 heads x 8 blocks of 16 = 64 CTAs
}

}  // namespace
