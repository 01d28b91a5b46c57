// The prepare-overlap rule (plan/prepare_overlap.hpp) and its environment override, host only.
#include <gtest/gtest.h>

#include "fused_test_config.hpp"
#include "plan/prepare_overlap.hpp"

namespace gdn::fused {
namespace {

KernelConfig column_warps(int block_v, int cp) {
  return fused_config(WarpRoles::ColumnWarps, block_v, cp);
}

TEST(PrepareOverlap, ParsesTheDocumentedValuesOnly) {
  EXPECT_EQ(parse_prepare_overlap(nullptr), PrepareOverlap::Rule);
  EXPECT_EQ(parse_prepare_overlap(""), PrepareOverlap::Rule);
  EXPECT_EQ(parse_prepare_overlap("0"), PrepareOverlap::Off);
  EXPECT_EQ(parse_prepare_overlap("1"), PrepareOverlap::Shared);
  EXPECT_EQ(parse_prepare_overlap("2"), PrepareOverlap::Exclusive);
  for (const char* bad : {"3", "on", "off", "00", " 1", "1 ", "true", "-1", "exclusive"})
    EXPECT_FALSE(parse_prepare_overlap(bad).has_value()) << bad;
}

// The first loop launch: the Output pass without CP; CP pass 1's working CTAs with it.
TEST(PrepareOverlap, CountsTheFirstLoopLaunch) {
  // 1 x 16384 tokens (256 chunks), Hv 32: 32 heads x 2 V-blocks.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 0), 1, 256, 32), 64);
  EXPECT_EQ(first_loop_ctas(column_warps(128, 0), 4, 512, 64), 256);
  // 1 x 32768 (512 chunks) in 64-chunk segments: 7 non-last segments x Hv 8 x 4 [M | N]
  // blocks, but the first segment's 2 M blocks.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 64), 1, 512, 8), (7 * 4 - 2) * 8);
  // 3 sequences in 9 segments (estimated from 288 chunks in 32-chunk segments): 6 non-last.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 32), 3, 288, 2), (6 * 4 - 3 * 2) * 2);
  // 4 sequences, 5 segments: 1 non-last, a first one.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 32), 4, 160, 2), 2 * 2);
  // Two sequences, one segment each: pass 1 has nothing to do.
  EXPECT_EQ(first_loop_ctas(column_warps(64, 128), 2, 128, 48), 0);
}

TEST(PrepareOverlap, RuleIsExclusiveUpToHalfTheSmsAndSharedUpToAll) {
  const auto rule = PrepareOverlap::Rule;
  const KernelConfig cw64 = column_warps(64, 0);
  // 1 x 16384 at 32/32 heads: 64 CTAs on 132 SMs, at most one per two SMs.
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 256, 32, 132, rule), OverlapMode::Exclusive);
  // 66 CTAs: exactly half; 67: past it.
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 256, 33, 132, rule), OverlapMode::Exclusive);
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 256, 33, 131, rule), OverlapMode::Shared);
  // 1 x 32768 at 16/64: 128 CTAs, one per SM at most.
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 512, 64, 132, rule), OverlapMode::Shared);
  // 4 x 8192 at 16/64: 512 CTAs, four per SM.
  EXPECT_EQ(prepare_overlap_mode(cw64, 4, 512, 64, 132, rule), OverlapMode::None);
  // The same on GPUs with 512 and 1024 SMs.
  EXPECT_EQ(prepare_overlap_mode(cw64, 4, 512, 64, 512, rule), OverlapMode::Shared);
  EXPECT_EQ(prepare_overlap_mode(cw64, 4, 512, 64, 1024, rule), OverlapMode::Exclusive);
  // Units shorter than 64 chunks share: 1 x 2048 (32 chunks) at 8/32, 4 x 2048 at 2/8.
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 32, 32, 132, rule), OverlapMode::Shared);
  EXPECT_EQ(prepare_overlap_mode(cw64, 4, 128, 8, 132, rule), OverlapMode::Shared);
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 64, 32, 132, rule), OverlapMode::Exclusive);
  // CP pass 1 of 1 x 32768 at 2/8 in 64-chunk segments: 208 CTAs.
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 64), 1, 512, 8, 132, rule), OverlapMode::None);
  // CP pass 1 of 1 x 8192 at 2/8 in 16-chunk segments: (7 x 4 - 2) x 8 = 208 CTAs; in 32-chunk
  // ones (3 x 4 - 2) x 8 = 80.
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 16), 1, 128, 8, 132, rule), OverlapMode::None);
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 32), 1, 128, 8, 132, rule), OverlapMode::Shared);
  // ... at 2/4 in 32-chunk segments: 40 CTAs, but segments shorter than 64 chunks.
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 32), 1, 128, 4, 132, rule), OverlapMode::Shared);
  // ... at 2/8 in 64-chunk segments: (4 - 2) x 8 = 16 CTAs.
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 64), 1, 128, 8, 132, rule), OverlapMode::Exclusive);
  // No pass-1 work: nothing would launch beside the prepare kernel.
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 128), 2, 128, 48, 132, rule), OverlapMode::None);
}

TEST(PrepareOverlap, OnlyTheNarrowColumnWarpLoopCanAndTheSettingOverridesTheRule) {
  const KernelConfig cw64 = column_warps(64, 0);
  // The 128-column loop takes the whole register file; other layouts never poll.
  for (const auto setting : {PrepareOverlap::Shared, PrepareOverlap::Exclusive, PrepareOverlap::Rule}) {
    EXPECT_EQ(prepare_overlap_mode(column_warps(128, 0), 1, 256, 8, 132, setting), OverlapMode::None);
    KernelConfig coop = cw64;
    coop.roles = WarpRoles::Cooperative;
    EXPECT_EQ(prepare_overlap_mode(coop, 1, 256, 8, 132, setting), OverlapMode::None);
    KernelConfig staged = cw64;
    staged.family = Family::Staged;
    EXPECT_EQ(prepare_overlap_mode(staged, 1, 256, 8, 132, setting), OverlapMode::None);
  }
  // Off, Shared and Exclusive win over the rule either way.
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 256, 32, 132, PrepareOverlap::Off), OverlapMode::None);
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 256, 32, 132, PrepareOverlap::Shared), OverlapMode::Shared);
  EXPECT_EQ(prepare_overlap_mode(cw64, 4, 512, 64, 132, PrepareOverlap::Shared), OverlapMode::Shared);
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 512, 64, 132, PrepareOverlap::Exclusive),
            OverlapMode::Exclusive);  // 128 CTAs: 4 SMs left to the prepare
  // Exclusive needs an SM left to the prepare grid and a loop CTA to place: else shared.
  EXPECT_EQ(prepare_overlap_mode(cw64, 1, 512, 66, 132, PrepareOverlap::Exclusive), OverlapMode::Shared);
  EXPECT_EQ(prepare_overlap_mode(column_warps(64, 128), 2, 128, 48, 132, PrepareOverlap::Exclusive),
            OverlapMode::Shared);
}

}  // namespace
}  // namespace gdn::fused
