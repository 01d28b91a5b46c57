// The prepare-tail rule (plan/prepare_tail.hpp) and its environment override, host only: the split
// chunk is the first of the one sequence's last segment, only for the 64-column column-warp
// loop with CP after a non-overlapped prepare; the rule asks that pass 1's last wave leave a
// third of its slots free; GDN_PREPARE_TAIL takes only its documented values.
#include <gtest/gtest.h>

#include "fused_test_config.hpp"
#include "plan/prepare_tail.hpp"

namespace gdn::fused {
namespace {

constexpr PrepareTailSetting kRule = PrepareTailSetting::Rule;
constexpr OverlapMode kNone = OverlapMode::None;

TEST(PrepareTail, SplitsAtTheLastSegmentWhenPassOneLeavesRoom) {
  const KernelConfig cw64 = fused_config(WarpRoles::ColumnWarps, 64, 64);
  // 1 x 32768 at 16/16 in 64-chunk segments: 416 pass-1 CTAs over 2 x 132, 112 slots of the
  // second wave free; the last segment is chunks 448 .. 511.
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 512, 16, 132, kNone, kRule), 448);
  // A partial last segment (500 chunks): it starts at 448 all the same.
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 500, 16, 132, kNone, kRule), 448);
  // Exactly one chunk past a segment boundary: the last segment is that chunk alone.
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 449, 16, 132, kNone, PrepareTailSetting::On), 448);
  // 1 x 16384 at 16/16: 160 CTAs in one wave, 104 free.
  ASSERT_EQ(first_loop_ctas(cw64, 1, 256, 16), 160);
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 256, 16, 132, kNone, kRule), 192);
  // 1 x 32768 at 2/8: 208 CTAs, 56 free (under a third of 264): not by the rule, yes when
  // asked for.
  ASSERT_EQ(first_loop_ctas(cw64, 1, 512, 8), 208);
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 512, 8, 132, kNone, kRule), 0);
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 512, 8, 132, kNone, PrepareTailSetting::On), 448);
  // 1 x 8192 at 8/24 in 32-chunk segments: 240 CTAs, 24 free.
  const KernelConfig cw64_cp32 = fused_config(WarpRoles::ColumnWarps, 64, 32);
  ASSERT_EQ(first_loop_ctas(cw64_cp32, 1, 128, 24), 240);
  EXPECT_EQ(prepare_tail_begin(cw64_cp32, 1, 128, 24, 132, kNone, kRule), 0);
  // The threshold, a third of the wave: 160 CTAs on 120 SMs leave 80 of 240 free, on 119
  // SMs 78 of 238.
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 256, 16, 120, kNone, kRule), 192);
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 256, 16, 119, kNone, kRule), 0);
  // A GPU of 208 SMs holds the 416 CTAs in one wave and leaves none free.
  EXPECT_EQ(prepare_tail_begin(cw64, 1, 512, 16, 208, kNone, kRule), 0);
}

TEST(PrepareTail, NeverWhereItCannotRunWhateverTheSetting) {
  for (const PrepareTailSetting s : {kRule, PrepareTailSetting::On}) {
    const KernelConfig cw64 = fused_config(WarpRoles::ColumnWarps, 64, 64);
    EXPECT_EQ(prepare_tail_begin(fused_config(WarpRoles::ColumnWarps, 64, 0), 1, 512, 16, 132, kNone, s), 0);
    EXPECT_EQ(prepare_tail_begin(fused_config(WarpRoles::ColumnWarps, 128, 64), 1, 512, 16, 132, kNone, s), 0);
    EXPECT_EQ(prepare_tail_begin(fused_config(WarpRoles::ProducerConsumer, 64, 64), 1, 512, 16, 132, kNone, s), 0);
    EXPECT_EQ(prepare_tail_begin(fused_config(WarpRoles::Cooperative, 64, 64), 1, 512, 16, 132, kNone, s), 0);
    KernelConfig staged = cw64;
    staged.family = Family::Staged;
    EXPECT_EQ(prepare_tail_begin(staged, 1, 512, 16, 132, kNone, s), 0);
    // Beside an overlapped prepare, for more than one sequence, or for one segment.
    EXPECT_EQ(prepare_tail_begin(cw64, 1, 512, 16, 132, OverlapMode::Shared, s), 0);
    EXPECT_EQ(prepare_tail_begin(cw64, 1, 512, 16, 132, OverlapMode::Exclusive, s), 0);
    EXPECT_EQ(prepare_tail_begin(cw64, 2, 1024, 16, 132, kNone, s), 0);
    EXPECT_EQ(prepare_tail_begin(cw64, 1, 64, 16, 132, kNone, s), 0);
  }
  EXPECT_EQ(prepare_tail_begin(fused_config(WarpRoles::ColumnWarps, 64, 64), 1, 512, 16, 132, kNone,
                               PrepareTailSetting::Off),
            0);
}

// The override takes the shared on/off values (plan/env_setting.hpp; their full parse test is
// CpFirstSegment.ParsesTheDocumentedValuesOnly).
TEST(PrepareTail, TheOverrideIsAnOnOffSetting) {
  EXPECT_EQ(parse_prepare_tail(nullptr), kRule);
  EXPECT_EQ(parse_prepare_tail("1"), PrepareTailSetting::On);
  EXPECT_FALSE(parse_prepare_tail("yes").has_value());
}

}  // namespace
}  // namespace gdn::fused
