// The prepare-overlap rule (prepare_overlap.hpp) and its environment override, host only.
#include <gtest/gtest.h>

#include "prepare_overlap.hpp"

namespace gdn::fused {
namespace {

KernelConfig column_warps(int block_v, int cp) {
  KernelConfig c;
  c.family = Family::Fused;
  c.roles = WarpRoles::ColumnWarps;
  c.block_v = block_v;
  c.cp_segment_chunks = cp;
  return c;
}

TEST(PrepareOverlap, ParsesTheDocumentedValuesOnly) {
  EXPECT_EQ(parse_prepare_overlap(nullptr), PrepareOverlap::Rule);
  EXPECT_EQ(parse_prepare_overlap(""), PrepareOverlap::Rule);
  EXPECT_EQ(parse_prepare_overlap("0"), PrepareOverlap::Off);
  EXPECT_EQ(parse_prepare_overlap("1"), PrepareOverlap::On);
  for (const char* bad : {"2", "on", "off", "00", " 1", "1 ", "true"})
    EXPECT_FALSE(parse_prepare_overlap(bad).has_value()) << bad;
}

// The first loop launch: the Output pass without CP; CP pass 1's working CTAs with it.
TEST(PrepareOverlap, CountsTheFirstLoopLaunch) {
  // 1 x 16384 tokens (256 chunks), Hv 32: 32 heads x 2 V-blocks.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 0), 1, 256, 32), 64);
  EXPECT_EQ(first_loop_ctas(column_warps(128, 0), 4, 512, 64), 256);
  // 1 x 32768 (512 chunks) in 64-chunk segments: 7 non-last segments x Hv 8 x 4 [M | N] blocks.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 64), 1, 512, 8), 7 * 8 * 4);
  // Two sequences, one segment each: pass 1 has nothing to do.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 128), 2, 128, 48), 0);
}

TEST(PrepareOverlap, RuleOverlapsUpToOneLoopCtaPerSm) {
  const auto rule = PrepareOverlap::Rule;
  // 1 x 16384 at 32/32 heads: 64 CTAs on 132 SMs.
  EXPECT_TRUE(overlaps_prepare(column_warps(64, 0), 1, 256, 32, 132, rule));
  // 1 x 32768 at 16/64: 128 CTAs.
  EXPECT_TRUE(overlaps_prepare(column_warps(64, 0), 1, 512, 64, 132, rule));
  // 4 x 8192 at 16/64: 512 CTAs, four per SM.
  EXPECT_FALSE(overlaps_prepare(column_warps(64, 0), 4, 512, 64, 132, rule));
  // The same on a GPU with 512 SMs.
  EXPECT_TRUE(overlaps_prepare(column_warps(64, 0), 4, 512, 64, 512, rule));
  // CP pass 1 of 1 x 32768 at 2/8 in 64-chunk segments: 224 CTAs.
  EXPECT_FALSE(overlaps_prepare(column_warps(64, 64), 1, 512, 8, 132, rule));
  // CP pass 1 of 1 x 8192 at 2/8 in 32-chunk segments: 3 x 8 x 4 = 96 CTAs.
  EXPECT_TRUE(overlaps_prepare(column_warps(64, 32), 1, 128, 8, 132, rule));
  // No pass-1 work: nothing would launch beside the prepare kernel.
  EXPECT_FALSE(overlaps_prepare(column_warps(64, 128), 2, 128, 48, 132, rule));
}

TEST(PrepareOverlap, OnlyTheNarrowColumnWarpLoopCanAndTheSettingOverridesTheRule) {
  // The 128-column loop takes the whole register file; other layouts never poll.
  EXPECT_FALSE(overlaps_prepare(column_warps(128, 0), 1, 256, 8, 132, PrepareOverlap::On));
  KernelConfig coop = column_warps(64, 0);
  coop.roles = WarpRoles::Cooperative;
  EXPECT_FALSE(overlaps_prepare(coop, 1, 256, 8, 132, PrepareOverlap::On));
  KernelConfig staged = column_warps(64, 0);
  staged.family = Family::Staged;
  EXPECT_FALSE(overlaps_prepare(staged, 1, 256, 8, 132, PrepareOverlap::On));
  // Off and On win over the rule either way.
  EXPECT_FALSE(overlaps_prepare(column_warps(64, 0), 1, 256, 32, 132, PrepareOverlap::Off));
  EXPECT_TRUE(overlaps_prepare(column_warps(64, 0), 4, 512, 64, 132, PrepareOverlap::On));
}

}  // namespace
}  // namespace gdn::fused
