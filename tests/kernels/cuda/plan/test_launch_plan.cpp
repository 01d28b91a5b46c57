// The launch plan (gdn/launch_plan.hpp), host only: the default rules of the forward plan
// (prepare overlap, CP first segment, prepare split, prepare heads, fix-up width), the pins
// that override them, the backward plan, and the pins' names and checks.
#include <gtest/gtest.h>

#include "gdn/launch_plan.hpp"

namespace gdn {
namespace {

KernelConfig fused_config(WarpRoles roles, int block_v, int cp) {
  KernelConfig c;
  c.family = Family::Fused;
  c.roles = roles;
  c.block_v = block_v;
  c.cp_segment_chunks = cp;
  return c;
}
KernelConfig column_warps(int block_v, int cp) {
  return fused_config(WarpRoles::ColumnWarps, block_v, cp);
}

gdn_launch_options pin(std::int32_t gdn_launch_options::*field, int value) {
  gdn_launch_options o = kRulePins;
  o.*field = value;
  return o;
}

// The plan of a problem of `seqs` sequences over `chunks` chunks (table size), Hv value heads
// in groups of `group`, on `sms` SMs.
ForwardPlan fwd(const KernelConfig& c, std::int64_t seqs, std::int64_t chunks, int hv, int sms,
                const gdn_launch_options& pins = kRulePins, int group = 1) {
  return plan_forward(c, PlanShape{seqs, chunks, hv, hv / group}, PlanDevice{sms}, &pins);
}
std::int64_t ctas(const KernelConfig& c, std::int64_t seqs, std::int64_t chunks, int hv) {
  return fwd(c, seqs, chunks, hv, 132).first_loop_ctas;
}
OverlapMode overlap(const KernelConfig& c, std::int64_t seqs, std::int64_t chunks, int hv,
                    int sms, int pin_value = GDN_PLAN_RULE) {
  return fwd(c, seqs, chunks, hv, sms, pin(&gdn_launch_options::prepare_overlap, pin_value))
      .prepare_overlap;
}
bool first_segment(const KernelConfig& c, std::int64_t seqs, std::int64_t chunks, int hv, int sms,
                   int pin_value = GDN_PLAN_RULE) {
  return fwd(c, seqs, chunks, hv, sms, pin(&gdn_launch_options::cp_first_segment, pin_value))
      .first_segment_in_pass1;
}
// The split chunk with the overlap pinned to `overlap_pin` (the rule when GDN_PLAN_RULE).
std::int64_t split(const KernelConfig& c, std::int64_t seqs, std::int64_t chunks, int hv, int sms,
                   int pin_value = GDN_PLAN_RULE, int overlap_pin = 0) {
  gdn_launch_options o = pin(&gdn_launch_options::prepare_split, pin_value);
  o.prepare_overlap = overlap_pin;
  return fwd(c, seqs, chunks, hv, sms, o).prepare_split_chunk;
}
int fixup(std::int64_t seqs, int hv, int sms) {
  return fwd(column_warps(64, 64), seqs, 512, hv, sms).fixup_cols;
}

// The first loop launch: the Output pass without CP; CP pass 1's working CTAs with it.
TEST(LaunchPlan, CountsTheFirstLoopLaunch) {
  // 1 x 16384 tokens (256 chunks), Hv 32: 32 heads x 2 V-blocks.
  EXPECT_EQ(ctas(column_warps(64, 0), 1, 256, 32), 64);
  EXPECT_EQ(ctas(column_warps(128, 0), 4, 512, 64), 256);
  // 1 x 32768 (512 chunks) in 64-chunk segments: 7 non-last segments x Hv 8 x 4 [M | N]
  // blocks, but the first segment's 2 M blocks.
  EXPECT_EQ(ctas(column_warps(64, 64), 1, 512, 8), (7 * 4 - 2) * 8);
  // 3 sequences in 9 segments (estimated from 288 chunks in 32-chunk segments): 6 non-last.
  EXPECT_EQ(ctas(column_warps(64, 32), 3, 288, 2), (6 * 4 - 3 * 2) * 2);
  // 4 sequences, 5 segments: 1 non-last, a first one.
  EXPECT_EQ(ctas(column_warps(64, 32), 4, 160, 2), 2 * 2);
  // Two sequences, one segment each: pass 1 has nothing to do.
  EXPECT_EQ(ctas(column_warps(64, 128), 2, 128, 48), 0);
}

TEST(LaunchPlan, OverlapIsExclusiveUpToHalfTheSmsAndSharedUpToAll) {
  const KernelConfig cw64 = column_warps(64, 0);
  // 1 x 16384 at 32/32 heads: 64 CTAs on 132 SMs, at most one per two SMs.
  EXPECT_EQ(overlap(cw64, 1, 256, 32, 132), OverlapMode::Exclusive);
  // 66 CTAs: exactly half; 67: past it.
  EXPECT_EQ(overlap(cw64, 1, 256, 33, 132), OverlapMode::Exclusive);
  EXPECT_EQ(overlap(cw64, 1, 256, 33, 131), OverlapMode::Shared);
  // 1 x 32768 at 16/64: 128 CTAs, one per SM at most.
  EXPECT_EQ(overlap(cw64, 1, 512, 64, 132), OverlapMode::Shared);
  // 4 x 8192 at 16/64: 512 CTAs, four per SM.
  EXPECT_EQ(overlap(cw64, 4, 512, 64, 132), OverlapMode::None);
  // The same on GPUs with 512 and 1024 SMs.
  EXPECT_EQ(overlap(cw64, 4, 512, 64, 512), OverlapMode::Shared);
  EXPECT_EQ(overlap(cw64, 4, 512, 64, 1024), OverlapMode::Exclusive);
  // Units shorter than 64 chunks share: 1 x 2048 (32 chunks) at 8/32, 4 x 2048 at 2/8.
  EXPECT_EQ(overlap(cw64, 1, 32, 32, 132), OverlapMode::Shared);
  EXPECT_EQ(overlap(cw64, 4, 128, 8, 132), OverlapMode::Shared);
  EXPECT_EQ(overlap(cw64, 1, 64, 32, 132), OverlapMode::Exclusive);
  // CP pass 1 of 1 x 32768 at 2/8 in 64-chunk segments: 208 CTAs.
  EXPECT_EQ(overlap(column_warps(64, 64), 1, 512, 8, 132), OverlapMode::None);
  // CP pass 1 of 1 x 8192 at 2/8 in 16-chunk segments: (7 x 4 - 2) x 8 = 208 CTAs; in 32-chunk
  // ones (3 x 4 - 2) x 8 = 80.
  EXPECT_EQ(overlap(column_warps(64, 16), 1, 128, 8, 132), OverlapMode::None);
  EXPECT_EQ(overlap(column_warps(64, 32), 1, 128, 8, 132), OverlapMode::Shared);
  // ... at 2/4 in 32-chunk segments: 40 CTAs, but segments shorter than 64 chunks.
  EXPECT_EQ(overlap(column_warps(64, 32), 1, 128, 4, 132), OverlapMode::Shared);
  // ... at 2/8 in 64-chunk segments: (4 - 2) x 8 = 16 CTAs.
  EXPECT_EQ(overlap(column_warps(64, 64), 1, 128, 8, 132), OverlapMode::Exclusive);
  // No pass-1 work: nothing would launch beside the prepare kernel.
  EXPECT_EQ(overlap(column_warps(64, 128), 2, 128, 48, 132), OverlapMode::None);
}

TEST(LaunchPlan, OnlyTheNarrowColumnWarpLoopOverlapsAndAPinOverridesTheRule) {
  const KernelConfig cw64 = column_warps(64, 0);
  // The 128-column loop takes the whole register file; other layouts never poll.
  for (const int p : {1, 2, GDN_PLAN_RULE}) {
    EXPECT_EQ(overlap(column_warps(128, 0), 1, 256, 8, 132, p), OverlapMode::None);
    EXPECT_EQ(overlap(fused_config(WarpRoles::Cooperative, 64, 0), 1, 256, 8, 132, p), OverlapMode::None);
    KernelConfig staged = cw64;
    staged.family = Family::Staged;
    EXPECT_EQ(overlap(staged, 1, 256, 8, 132, p), OverlapMode::None);
  }
  EXPECT_EQ(overlap(cw64, 1, 256, 32, 132, 0), OverlapMode::None);
  EXPECT_EQ(overlap(cw64, 1, 256, 32, 132, 1), OverlapMode::Shared);
  EXPECT_EQ(overlap(cw64, 4, 512, 64, 132, 1), OverlapMode::Shared);
  EXPECT_EQ(overlap(cw64, 1, 512, 64, 132, 2), OverlapMode::Exclusive);  // 4 SMs left
  // Exclusive needs an SM left to the prepare grid and a loop CTA to place: else shared.
  EXPECT_EQ(overlap(cw64, 1, 512, 66, 132, 2), OverlapMode::Shared);
  EXPECT_EQ(overlap(column_warps(64, 128), 2, 128, 48, 132, 2), OverlapMode::Shared);
}

TEST(LaunchPlan, FirstSegmentOnlyPastTwoPassOneCtasPerSm) {
  const KernelConfig cw64 = column_warps(64, 64);
  // 1 x 32768 at 16/16 in 64-chunk segments: 416 working CTAs in pass 1, over 2 x 132.
  ASSERT_EQ(ctas(cw64, 1, 512, 16), 416);
  EXPECT_TRUE(first_segment(cw64, 1, 512, 16, 132));
  // The same on a GPU of 208 SMs or more: one wave of two CTAs per SM.
  EXPECT_FALSE(first_segment(cw64, 1, 512, 16, 208));
  EXPECT_TRUE(first_segment(cw64, 1, 512, 16, 207));
  // 1 x 32768 at 8/24 in 128-chunk segments: 240 CTAs (measured 22 % slower with it).
  EXPECT_FALSE(first_segment(column_warps(64, 128), 1, 512, 24, 132));
  // 1 x 8192 at 16/16 in 32-chunk segments: 160 CTAs (measured 9 % slower with it).
  EXPECT_FALSE(first_segment(column_warps(64, 32), 1, 128, 16, 132));
  // A pin decides for the column-warp loop with CP, and only there.
  EXPECT_TRUE(first_segment(column_warps(64, 32), 1, 128, 16, 132, 1));
  EXPECT_FALSE(first_segment(cw64, 1, 512, 16, 132, 0));
  for (const int p : {GDN_PLAN_RULE, 1}) {
    EXPECT_FALSE(first_segment(column_warps(64, 0), 1, 512, 64, 132, p));
    EXPECT_FALSE(first_segment(fused_config(WarpRoles::ProducerConsumer, 64, 64), 1, 512, 64, 132, p));
    EXPECT_FALSE(first_segment(fused_config(WarpRoles::Cooperative, 64, 64), 1, 512, 64, 132, p));
  }
}

TEST(LaunchPlan, SplitsThePrepareAtTheLastSegmentWhenPassOneLeavesRoom) {
  const KernelConfig cw64 = column_warps(64, 64);
  const int rule = GDN_PLAN_RULE;
  // 1 x 32768 at 16/16 in 64-chunk segments: 416 pass-1 CTAs over 2 x 132, 112 slots of the
  // second wave free; the last segment is chunks 448 .. 511.
  EXPECT_EQ(split(cw64, 1, 512, 16, 132, rule, rule), 448);
  // A partial last segment (500 chunks): it starts at 448 all the same.
  EXPECT_EQ(split(cw64, 1, 500, 16, 132), 448);
  // Exactly one chunk past a segment boundary: the last segment is that chunk alone.
  EXPECT_EQ(split(cw64, 1, 449, 16, 132, 1), 448);
  // 1 x 16384 at 16/16: 160 CTAs in one wave, 104 free.
  EXPECT_EQ(split(cw64, 1, 256, 16, 132), 192);
  // 1 x 32768 at 2/8: 208 CTAs, 56 free (under a third of 264): not by the rule, yes pinned.
  EXPECT_EQ(split(cw64, 1, 512, 8, 132), 0);
  EXPECT_EQ(split(cw64, 1, 512, 8, 132, 1), 448);
  // 1 x 8192 at 8/24 in 32-chunk segments: 240 CTAs, 24 free.
  EXPECT_EQ(split(column_warps(64, 32), 1, 128, 24, 132), 0);
  // The threshold, a third of the wave: 160 CTAs on 120 SMs leave 80 of 240 free, on 119
  // SMs 78 of 238.
  EXPECT_EQ(split(cw64, 1, 256, 16, 120), 192);
  EXPECT_EQ(split(cw64, 1, 256, 16, 119), 0);
  // A GPU of 208 SMs holds the 416 CTAs in one wave and leaves none free.
  EXPECT_EQ(split(cw64, 1, 512, 16, 208), 0);
}

TEST(LaunchPlan, NeverSplitsWhereTheSplitCannotRun) {
  const KernelConfig cw64 = column_warps(64, 64);
  for (const int p : {GDN_PLAN_RULE, 1}) {
    EXPECT_EQ(split(column_warps(64, 0), 1, 512, 16, 132, p), 0);
    EXPECT_EQ(split(column_warps(128, 64), 1, 512, 16, 132, p), 0);
    EXPECT_EQ(split(fused_config(WarpRoles::ProducerConsumer, 64, 64), 1, 512, 16, 132, p), 0);
    EXPECT_EQ(split(fused_config(WarpRoles::Cooperative, 64, 64), 1, 512, 16, 132, p), 0);
    KernelConfig staged = cw64;
    staged.family = Family::Staged;
    EXPECT_EQ(split(staged, 1, 512, 16, 132, p), 0);
    // Beside an overlapped prepare, for more than one sequence, or for one segment.
    EXPECT_EQ(split(cw64, 1, 512, 16, 132, p, 1), 0);
    EXPECT_EQ(split(cw64, 1, 512, 16, 132, p, 2), 0);
    EXPECT_EQ(split(cw64, 2, 1024, 16, 132, p), 0);
    EXPECT_EQ(split(cw64, 1, 64, 16, 132, p), 0);
  }
  EXPECT_EQ(split(cw64, 1, 512, 16, 132, 0), 0);
}

TEST(LaunchPlan, FixupTakesTheNarrowestWidthWhoseCtasFitTheSms) {
  // 132 SMs: 8 heads x 16 blocks of 8 = 128 CTAs fit; 16 heads need 16 columns (128 CTAs);
  // 24 and 32 heads need 32 (96, 128 CTAs).
  EXPECT_EQ(fixup(1, 8, 132), 8);
  EXPECT_EQ(fixup(1, 16, 132), 16);
  EXPECT_EQ(fixup(1, 24, 132), 32);
  EXPECT_EQ(fixup(1, 32, 132), 32);
  // Sequences multiply the CTAs: two sequences of 8 heads need 16 columns.
  EXPECT_EQ(fixup(2, 8, 132), 16);
  EXPECT_EQ(fixup(1, 2, 132), 8);
  // Wider than one wave stays at 32; a smaller GPU needs wider CTAs.
  EXPECT_EQ(fixup(1, 64, 132), 32);
  EXPECT_EQ(fixup(8, 64, 132), 32);
  EXPECT_EQ(fixup(1, 8, 64), 16);
  // Pinned; and no fix-up without CP.
  EXPECT_EQ(fwd(column_warps(64, 64), 1, 512, 8, 132, pin(&gdn_launch_options::fixup_cols, 32)).fixup_cols, 32);
  EXPECT_EQ(fwd(column_warps(64, 0), 1, 512, 8, 132, pin(&gdn_launch_options::fixup_cols, 32)).fixup_cols, 0);
}

TEST(LaunchPlan, PrepareHeadsFollowTheSlotsOfTheirGrid) {
  // 1 x 2048 (32 chunks) at 2/8 (groups of 4), 132 SMs, the prepare alone (the 128-column
  // loop: no overlap): 256 items at 1 head take 1 round of 528 slots (cost 2), at 2 heads 128
  // items 1 round (cost 3): one head.
  EXPECT_EQ(fwd(column_warps(128, 0), 1, 32, 8, 132, kRulePins, 4).prepare_heads, 1);
  // 1 x 65536 (1024 chunks) at 2/8: 8192 items take 16 rounds at 1 head (cost 32), 2048 at 4
  // heads 4 rounds (cost 20), 4096 at 2 heads 8 rounds (cost 24): four heads.
  EXPECT_EQ(fwd(column_warps(128, 0), 1, 1024, 8, 132, kRulePins, 4).prepare_heads, 4);
  // The tail grid beside pass 1 has two CTAs per SM: fewer slots, more heads.
  const ForwardPlan split_plan = fwd(column_warps(64, 64), 1, 512, 16, 132, kRulePins, 4);
  ASSERT_EQ(split_plan.prepare_split_chunk, 448);
  EXPECT_EQ(split_plan.tail_prepare_heads, 4);
  // A pin sets both grids' heads.
  const ForwardPlan pinned = fwd(column_warps(64, 64), 1, 512, 16, 132,
                                 pin(&gdn_launch_options::prepare_heads, 2), 4);
  EXPECT_EQ(pinned.prepare_heads, 2);
  EXPECT_EQ(pinned.tail_prepare_heads, 2);
}

TEST(LaunchPlan, NullPinsAreTheRule) {
  const KernelConfig c = column_warps(64, 64);
  const PlanShape s{1, 512, 16, 4};
  EXPECT_EQ(plan_forward(c, s, PlanDevice{132}, nullptr), plan_forward(c, s, PlanDevice{132}, &kRulePins));
}

TEST(LaunchPlan, TheBackwardPlanCarriesTheConfigsSegmentsAndVBlock) {
  KernelConfig c;
  c.pass = Pass::Backward;
  c.block_v = 32;
  const BackwardPlan plan = plan_backward(c, PlanShape{1, 512, 8, 2}, PlanDevice{132});
  EXPECT_EQ(plan.block_v, 32);
  EXPECT_EQ(plan.cp_segment_chunks, 0);
  const gdn_launch_options two_heads = pin(&gdn_launch_options::prepare_heads, 2);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 8, 2}, PlanDevice{132}, &two_heads).prepare_heads, 2);
  // The fix-up width: none without CP; with CP the forward's rule (8 columns while the CTAs fit
  // the SMs), or the pin.
  EXPECT_EQ(plan.fixup_cols, 0);
  c.family = Family::Fused;
  c.cp_segment_chunks = 16;
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 8, 2}, PlanDevice{132}).fixup_cols, 8);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 32, 16}, PlanDevice{132}).fixup_cols, 32);
  const gdn_launch_options sixteen = pin(&gdn_launch_options::fixup_cols, 16);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 8, 2}, PlanDevice{132}, &sixteen).fixup_cols, 16);
}

// Local-gradient CTAs walk the most heads of a group that still leave 4 waves of CTAs (one per
// SM); a pin overrides the rule.
TEST(LaunchPlan, LocalHeadsWalkTheGroupWhileTheCtasFillFourWaves) {
  KernelConfig c;
  c.pass = Pass::Backward;
  c.family = Family::Fused;
  c.block_v = 32;
  const PlanDevice h200{132};
  // 16/32 heads (group 2), 1 x 32768 tokens: 512 chunks x 16 CTAs per chunk fill the waves.
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 32, 16}, h200).local_heads, 2);
  // 2/16 heads (group 8): at 512 chunks the whole group (1024 CTAs >= 4 x 132); at 256 chunks
  // 8 heads leave 512 CTAs, 4 heads 1024.
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 16, 2}, h200).local_heads, 8);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 256, 16, 2}, h200).local_heads, 4);
  // One short sequence: too few chunks for any walk.
  EXPECT_EQ(plan_backward(c, PlanShape{1, 16, 8, 2}, h200).local_heads, 1);
  // Group 1: nothing to walk.
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 16, 16}, h200).local_heads, 1);
  const gdn_launch_options one = pin(&gdn_launch_options::local_heads, 1);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 32, 16}, h200, &one).local_heads, 1);
  EXPECT_TRUE(plan_field_applies(c, *find_plan_field("local_heads")));
  EXPECT_FALSE(plan_field_applies(column_warps(64, 0), *find_plan_field("local_heads")));
  // The fused kernel has no local-gradient kernel to walk heads in.
  KernelConfig fused = c;
  fused.roles = WarpRoles::ProducerConsumer;
  fused.block_v = 128;
  EXPECT_FALSE(plan_field_applies(fused, *find_plan_field("local_heads")));
  EXPECT_TRUE(plan_field_applies(fused, *find_plan_field("recompute_cp_chunks")));
}

// The forward recompute of the chunked backward: the config's CP segments when it has CP; else
// its own, by the default selection's column-warp CP step over two 64-column CTAs per SM (CP
// when the CTAs busy along the longest chain leave more than half of them idle and the longest
// sequence has 64 chunks or more; the longest segment filling 3/4 of them); a pin overrides the
// rule of a config without CP and nothing else.
int recompute(const KernelConfig& c, PlanShape s, const gdn_launch_options& pins = kRulePins) {
  return plan_backward(c, s, PlanDevice{132}, &pins).recompute_cp_chunks;
}
TEST(LaunchPlan, TheRecomputeRunsCpOfItsOwnWhenItsCtasLeaveTheSmsIdle) {
  KernelConfig c;
  c.pass = Pass::Backward;
  c.family = Family::Fused;
  c.block_v = 32;
  // {N, table chunks, Hv, Hk, longest chunks}
  // 16/32 heads, 1 x 32768 tokens: 64 CTAs; 4 segments of 128 chunks give 256 (>= 3/4 of 264).
  EXPECT_EQ(recompute(c, PlanShape{1, 512, 32, 16, 512}), 128);
  // 8/16: 32 CTAs per segment, 8 segments of 64 chunks to fill the slots; 2/8: 16 of 32.
  EXPECT_EQ(recompute(c, PlanShape{1, 512, 16, 8, 512}), 64);
  EXPECT_EQ(recompute(c, PlanShape{1, 512, 8, 2, 512}), 32);
  // 1 x 8192 at 16/32: 128-chunk segments do not split it, 64 leave 128 CTAs: 32-chunk ones.
  EXPECT_EQ(recompute(c, PlanShape{1, 128, 32, 16, 128}), 32);
  // A sequence of 4096 tokens (64 chunks) at 16/32: only 16-chunk segments fill the slots.
  EXPECT_EQ(recompute(c, PlanShape{1, 64, 32, 16, 64}), 16);
  // Shorter than 64 chunks: unsplit, as the forward's column-warp loop.
  EXPECT_EQ(recompute(c, PlanShape{1, 63, 8, 2, 63}), 0);
  // 16/32 at 4 x 8192: 256 CTAs already busy: unsplit. At 2 x 16384, 128 CTAs (under 132): CP.
  EXPECT_EQ(recompute(c, PlanShape{4, 512, 32, 16, 128}), 0);
  EXPECT_EQ(recompute(c, PlanShape{2, 512, 32, 16, 256}), 128);
  // Ragged: 8 sequences at 16/32, one of 448 chunks and seven of 16 (560 chunks): along the long
  // chain only 80 CTAs are busy: CP, which the sequence count alone (512 CTAs) would not show.
  EXPECT_EQ(recompute(c, PlanShape{8, 560, 32, 16, 448}), 128);
  // The longest not known (packed, no host copy, no hint): equal lengths, 4 x 128 chunks.
  EXPECT_EQ(recompute(c, PlanShape{4, 512, 32, 16, 0}), 0);
  EXPECT_EQ(recompute(c, PlanShape{1, 512, 32, 16, 0}), 128);
  // The fix-up the recompute's CP runs: the forward's width rule, or the pin; none unsplit.
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 32, 16, 512}, PlanDevice{132}).fixup_cols, 32);
  EXPECT_EQ(plan_backward(c, PlanShape{4, 512, 32, 16, 128}, PlanDevice{132}).fixup_cols, 0);
  // Pins: any value of the field, 0 (no CP) included, on the config without CP.
  for (int value : {0, 16, 32, 64, 128})
    EXPECT_EQ(recompute(c, PlanShape{4, 512, 32, 16, 128}, pin(&gdn_launch_options::recompute_cp_chunks, value)),
              value);
  const gdn_launch_options unsplit = pin(&gdn_launch_options::recompute_cp_chunks, 0);
  EXPECT_EQ(recompute(c, PlanShape{1, 512, 32, 16, 512}, unsplit), 0);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 32, 16, 512}, PlanDevice{132}, &unsplit).fixup_cols, 0);
  // A config with CP recomputes in its own segments, whatever the pin; the chain's CP stays the
  // config's (0 above).
  KernelConfig cp32 = c;
  cp32.cp_segment_chunks = 32;
  EXPECT_EQ(recompute(cp32, PlanShape{4, 512, 32, 16, 128}), 32);
  EXPECT_EQ(recompute(cp32, PlanShape{1, 512, 32, 16, 512}, pin(&gdn_launch_options::recompute_cp_chunks, 128)), 32);
  EXPECT_EQ(plan_backward(c, PlanShape{1, 512, 32, 16, 512}, PlanDevice{132}).cp_segment_chunks, 0);
  // The staged backward has no recompute loop.
  KernelConfig staged;
  staged.pass = Pass::Backward;
  EXPECT_EQ(recompute(staged, PlanShape{1, 512, 32, 16, 512}), 0);
  EXPECT_EQ(recompute(staged, PlanShape{1, 512, 32, 16, 512}, pin(&gdn_launch_options::recompute_cp_chunks, 64)), 0);
  // The pin is swept where it applies: the chunked backward without CP.
  const PlanField& field = *find_plan_field("recompute_cp_chunks");
  EXPECT_TRUE(plan_field_applies(c, field));
  EXPECT_FALSE(plan_field_applies(cp32, field));
  EXPECT_FALSE(plan_field_applies(staged, field));
  EXPECT_FALSE(plan_field_applies(column_warps(64, 0), field));
  EXPECT_TRUE(plan_field_applies(c, *find_plan_field("fixup_cols")));
  EXPECT_FALSE(plan_field_applies(staged, *find_plan_field("fixup_cols")));
}

// The reverse chain's CP pass 1 beside the forward recompute's state loop: only the wgmma chain
// with CP has that pass 1 (column-warp roles, and the fused kernel, whose pass 1 it is); the
// rule keeps pass 1 after the recompute; a pin turns it on or off there and nowhere else.
TEST(LaunchPlan, Pass1BesideTheRecomputeOnlyWhereTheWgmmaChainRunsCp) {
  const auto beside = [](const KernelConfig& c, const gdn_launch_options& pins = kRulePins) {
    return plan_backward(c, PlanShape{1, 512, 32, 16, 512}, PlanDevice{132}, &pins).pass1_beside_recompute;
  };
  const gdn_launch_options on = pin(&gdn_launch_options::pass1_beside_recompute, 1);
  const gdn_launch_options off = pin(&gdn_launch_options::pass1_beside_recompute, 0);
  const PlanField& field = *find_plan_field("pass1_beside_recompute");
  for (WarpRoles roles : {WarpRoles::ColumnWarps, WarpRoles::ProducerConsumer}) {
    KernelConfig c;
    c.pass = Pass::Backward;
    c.family = Family::Fused;
    c.roles = roles;
    c.block_v = roles == WarpRoles::ColumnWarps ? 64 : 128;
    c.cp_segment_chunks = 128;
    SCOPED_TRACE(roles == WarpRoles::ColumnWarps ? "column warps" : "fused kernel");
    EXPECT_FALSE(beside(c));
    EXPECT_TRUE(beside(c, on));
    EXPECT_FALSE(beside(c, off));
    EXPECT_TRUE(plan_field_applies(c, field));
    // Without CP there is no pass 1, even where the recompute runs CP of its own.
    c.cp_segment_chunks = 0;
    EXPECT_FALSE(beside(c, on));
    EXPECT_FALSE(plan_field_applies(c, field));
  }
  // The cooperative chain reads inputs a launch before it forms; the staged backward has no
  // recompute loop; the forward no reverse chain.
  KernelConfig cooperative;
  cooperative.pass = Pass::Backward;
  cooperative.family = Family::Fused;
  cooperative.block_v = 16;
  cooperative.cp_segment_chunks = 64;
  KernelConfig staged;
  staged.pass = Pass::Backward;
  staged.cp_segment_chunks = 64;
  for (const KernelConfig& c : {cooperative, staged, column_warps(64, 64)}) {
    EXPECT_FALSE(beside(c, on));
    EXPECT_FALSE(plan_field_applies(c, field));
  }
}

// The group sum beside the fused backward kernel: only the fused kernel (producer-consumer
// roles), only with groups (Hv > Hk); the rule keeps the group-sum launch; pinned on, the grid
// is four CTAs per SM the fused CTAs (items x Hv) leave, at least four.
TEST(LaunchPlan, GroupSumBesideTheFusedKernelOnlyWithGroups) {
  KernelConfig c;
  c.pass = Pass::Backward;
  c.family = Family::Fused;
  c.roles = WarpRoles::ProducerConsumer;
  c.block_v = 128;
  c.cp_segment_chunks = 128;
  const gdn_launch_options on = pin(&gdn_launch_options::group_sum_beside, 1);
  const gdn_launch_options off = pin(&gdn_launch_options::group_sum_beside, 0);
  const auto plan = [](const KernelConfig& k, const PlanShape& s, const gdn_launch_options& pins) {
    return plan_backward(k, s, PlanDevice{132}, &pins);
  };
  // 16/32 heads, 1 x 32768 tokens in 128-chunk segments: 4 x 32 fused CTAs leave 4 SMs.
  EXPECT_FALSE(plan(c, PlanShape{1, 512, 32, 16, 512}, kRulePins).group_sum_beside);
  EXPECT_EQ(plan(c, PlanShape{1, 512, 32, 16, 512}, kRulePins).group_sum_ctas, 0);
  EXPECT_FALSE(plan(c, PlanShape{1, 512, 32, 16, 512}, off).group_sum_beside);
  const BackwardPlan beside = plan(c, PlanShape{1, 512, 32, 16, 512}, on);
  EXPECT_TRUE(beside.group_sum_beside);
  EXPECT_EQ(beside.group_sum_ctas, 4 * (132 - 4 * 32));
  // 8/16 at 1 x 32768: 4 x 16 CTAs leave 68 SMs; without CP, one sequence: 116.
  EXPECT_EQ(plan(c, PlanShape{1, 512, 16, 8, 512}, on).group_sum_ctas, 4 * 68);
  KernelConfig unsplit = c;
  unsplit.cp_segment_chunks = 0;
  EXPECT_EQ(plan(unsplit, PlanShape{1, 512, 16, 8, 512}, on).group_sum_ctas, 4 * 116);
  // More fused CTAs than SMs (16/32 at 8 x 4096 unsplit: 256): four CTAs.
  EXPECT_EQ(plan(unsplit, PlanShape{8, 512, 32, 16, 64}, on).group_sum_ctas, 4);
  // One value head per q/k head: no group sum at all.
  EXPECT_FALSE(plan(c, PlanShape{1, 512, 16, 16, 512}, on).group_sum_beside);
  // Only the fused kernel publishes its chunks.
  const PlanField& field = *find_plan_field("group_sum_beside");
  EXPECT_TRUE(plan_field_applies(c, field));
  EXPECT_TRUE(plan_field_applies(unsplit, field));
  KernelConfig chain = c;
  chain.roles = WarpRoles::ColumnWarps;
  chain.block_v = 64;
  EXPECT_FALSE(plan(chain, PlanShape{1, 512, 32, 16, 512}, on).group_sum_beside);
  EXPECT_FALSE(plan_field_applies(chain, field));
  EXPECT_FALSE(plan_field_applies(column_warps(64, 64), field));
}

// The segment choice the default selection and the recompute share: the longest filling
// segment, else the shortest that splits, else off (or the only value there is).
TEST(LaunchPlan, SegmentFillingSlots) {
  const int all[] = {0, 16, 32, 64, 128};
  // 1 sequence of 512 chunks, 64 CTAs per segment, 264 slots: 128 fills (256 >= 198).
  EXPECT_EQ(segment_filling_slots(all, SegmentFill{1, 512, 512, 64, 264}), 128);
  // 16 CTAs per segment: 32-chunk segments (16 x 16 = 256) are the longest that fill.
  EXPECT_EQ(segment_filling_slots(all, SegmentFill{1, 512, 512, 16, 264}), 32);
  // Nothing fills (2 CTAs per segment): the shortest that splits.
  EXPECT_EQ(segment_filling_slots(all, SegmentFill{1, 512, 512, 2, 264}), 16);
  // Nothing splits a 16-chunk sequence: off, or the first value when off is not offered.
  EXPECT_EQ(segment_filling_slots(all, SegmentFill{1, 16, 16, 64, 264}), 0);
  const int on[] = {32, 64};
  EXPECT_EQ(segment_filling_slots(on, SegmentFill{1, 16, 16, 64, 264}), 32);
  // Many short sequences keep their segments: N x CTAs count even when the chunks are few.
  EXPECT_EQ(segment_filling_slots(all, SegmentFill{4, 100, 130, 64, 264}), 64);
}

TEST(LaunchPlan, ShapeOfAProblem) {
  gdn_problem p;
  gdn_problem_init(&p, 2, 100, 2, 8, 128, 128);
  EXPECT_EQ(plan_shape(p).num_seqs, 2);
  EXPECT_EQ(plan_shape(p).max_chunks, 4);  // 2 x ceil(100 / 64)
  EXPECT_EQ(plan_shape(p).longest_chunks, 2);
  p.B = 1;
  p.T = 200;
  p.num_seqs = 3;
  const int offsets[] = {0, 10, 20, 200};
  p.cu_seqlens = offsets;  // only its presence matters here
  EXPECT_EQ(plan_shape(p).num_seqs, 3);
  EXPECT_EQ(plan_shape(p).max_chunks, (200 + 63 * 3) / 64);
  // The longest sequence: not known without a host copy or a hint; the hint; the host copy.
  EXPECT_EQ(plan_shape(p).longest_chunks, 0);
  p.max_seqlen_hint = 190;
  EXPECT_EQ(plan_shape(p).longest_chunks, 3);
  p.cu_seqlens_host = offsets;
  p.cu_seqlens_dtype = GDN_INT32;
  EXPECT_EQ(plan_shape(p).longest_chunks, 3);  // 180 tokens
  const std::int64_t offsets64[] = {0, 130, 140, 200};
  p.cu_seqlens_host = offsets64;
  p.cu_seqlens_dtype = GDN_INT64;
  EXPECT_EQ(plan_shape(p).longest_chunks, 3);  // 130 tokens
  const std::int64_t short_first[] = {0, 10, 75, 200};
  p.cu_seqlens_host = short_first;
  EXPECT_EQ(plan_shape(p).longest_chunks, 2);  // 125 tokens
}

TEST(LaunchPins, SuffixRoundTripsAndNamesEveryPinnedField) {
  EXPECT_EQ(pins_suffix(kRulePins), "");
  gdn_launch_options o = kRulePins;
  o.prepare_overlap = 2;
  o.prepare_heads = 4;
  o.fixup_cols = 16;
  o.local_heads = 2;
  o.recompute_cp_chunks = 0;
  EXPECT_EQ(pins_suffix(o), "+ov2+ph4+fx16+lh2+rc0");
  o.pass1_beside_recompute = 1;
  EXPECT_EQ(pins_suffix(o), "+ov2+ph4+fx16+lh2+rc0+pb1");
  o.group_sum_beside = 0;
  EXPECT_EQ(pins_suffix(o), "+ov2+ph4+fx16+lh2+rc0+pb1+gb0");
  gdn_launch_options back{};
  std::string error;
  ASSERT_TRUE(parse_pins_suffix("+ov2+ph4+fx16+lh2+rc0+pb1+gb0", &back, &error)) << error;
  EXPECT_TRUE(same_pins(back, o));
  ASSERT_TRUE(parse_pins_suffix("", &back, &error));
  EXPECT_TRUE(all_rule(back));
  for (const char* bad : {"ov2", "+ov3", "+zz1", "+ph4+ov2", "+ov2+ov1", "+ph", "+ph9", "+fx12", "+fs1x",
                          "+rc8", "+rc-1", "+rc64+lh2", "+pb2", "+pb1+rc0", "+gb1+pb1", "+gb-1"})
    EXPECT_FALSE(parse_pins_suffix(bad, &back, &error)) << bad;
  EXPECT_FALSE(parse_pins_suffix("+ph9", &back, &error));
  EXPECT_NE(error.find("prepare_heads"), std::string::npos) << error;
  ASSERT_TRUE(parse_pins_suffix("+rc64", &back, &error)) << error;
  EXPECT_EQ(back.recompute_cp_chunks, 64);
  EXPECT_FALSE(parse_pins_suffix("+rc48", &back, &error));
  EXPECT_NE(error.find("recompute_cp_chunks ('+rc'): expected 0 (no CP), 16, 32, 64 or 128"), std::string::npos)
      << error;
  // Fields by name, and by token where asked; plan_field_takes follows the values.
  EXPECT_EQ(find_plan_field("pb", true), find_plan_field("pass1_beside_recompute"));
  EXPECT_EQ(find_plan_field("pb"), nullptr);
  EXPECT_EQ(find_plan_field("", true), nullptr);
  EXPECT_TRUE(plan_field_takes(*find_plan_field("rc", true), 64));
  EXPECT_FALSE(plan_field_takes(*find_plan_field("rc", true), 48));
  // An unknown token lists the tokens in their order.
  EXPECT_FALSE(parse_pins_suffix("+zz1", &back, &error));
  EXPECT_NE(error.find("(tokens, in order: ov, fs, ps, ph, fx, lh, rc, pb, gb)"), std::string::npos) << error;
  EXPECT_FALSE(parse_pins_suffix("+pb2", &back, &error));
  EXPECT_NE(error.find("pass1_beside_recompute ('+pb'): expected 0 or 1"), std::string::npos) << error;
}

TEST(LaunchPins, ChecksNameTheFieldAndTheValue) {
  EXPECT_EQ(check_launch_options(kRulePins, 4), "");
  const std::string bad_overlap = check_launch_options(pin(&gdn_launch_options::prepare_overlap, 3), 4);
  EXPECT_NE(bad_overlap.find("prepare_overlap"), std::string::npos);
  EXPECT_NE(bad_overlap.find("got 3"), std::string::npos);
  EXPECT_NE(check_launch_options(pin(&gdn_launch_options::fixup_cols, 12), 4).find("fixup_cols"),
            std::string::npos);
  // Heads must divide the group.
  EXPECT_EQ(check_launch_options(pin(&gdn_launch_options::prepare_heads, 2), 4), "");
  const std::string bad_heads = check_launch_options(pin(&gdn_launch_options::prepare_heads, 3), 4);
  EXPECT_NE(bad_heads.find("divisor of Hv / Hk = 4"), std::string::npos) << bad_heads;
  EXPECT_EQ(check_launch_options(pin(&gdn_launch_options::local_heads, 4), 4), "");
  const std::string bad_local = check_launch_options(pin(&gdn_launch_options::local_heads, 3), 4);
  EXPECT_NE(bad_local.find("local_heads: expected a divisor of Hv / Hk = 4"), std::string::npos) << bad_local;
  for (int value : {0, 16, 32, 64, 128})
    EXPECT_EQ(check_launch_options(pin(&gdn_launch_options::recompute_cp_chunks, value), 4), "") << value;
  for (int value : {-2, 1, 8, 24, 256}) {
    const std::string bad_recompute = check_launch_options(pin(&gdn_launch_options::recompute_cp_chunks, value), 4);
    EXPECT_NE(bad_recompute.find("recompute_cp_chunks: expected GDN_PLAN_RULE (-1) or 0 (no CP), 16, 32, 64 or 128"),
              std::string::npos) << bad_recompute;
    EXPECT_NE(bad_recompute.find("got " + std::to_string(value)), std::string::npos) << bad_recompute;
  }
  for (int value : {0, 1})
    EXPECT_EQ(check_launch_options(pin(&gdn_launch_options::pass1_beside_recompute, value), 4), "") << value;
  const std::string bad_beside = check_launch_options(pin(&gdn_launch_options::pass1_beside_recompute, 2), 4);
  EXPECT_NE(bad_beside.find("pass1_beside_recompute: expected GDN_PLAN_RULE (-1) or 0 or 1"), std::string::npos)
      << bad_beside;
  EXPECT_NE(bad_beside.find("got 2"), std::string::npos) << bad_beside;
  const std::string bad_sum = check_launch_options(pin(&gdn_launch_options::group_sum_beside, 3), 4);
  EXPECT_NE(bad_sum.find("group_sum_beside: expected GDN_PLAN_RULE (-1) or 0 or 1"), std::string::npos) << bad_sum;
  EXPECT_NE(bad_sum.find("got 3"), std::string::npos) << bad_sum;
}

TEST(LaunchPins, FieldsApplyWhereTheirMechanismExists) {
  const PlanField& overlap_field = *find_plan_field("prepare_overlap");
  const PlanField& split_field = *find_plan_field("prepare_split");
  const PlanField& fixup_field = *find_plan_field("fixup_cols");
  EXPECT_TRUE(plan_field_applies(column_warps(64, 0), overlap_field));
  EXPECT_FALSE(plan_field_applies(column_warps(128, 0), overlap_field));
  EXPECT_FALSE(plan_field_applies(column_warps(64, 0), split_field));
  EXPECT_TRUE(plan_field_applies(column_warps(64, 16), split_field));
  EXPECT_TRUE(plan_field_applies(column_warps(128, 16), fixup_field));
  KernelConfig staged;
  EXPECT_FALSE(plan_field_applies(staged, fixup_field));
  EXPECT_TRUE(plan_field_applies(staged, *find_plan_field("prepare_heads")));
  EXPECT_EQ(find_plan_field("consumer_regs"), nullptr);
}

}  // namespace
}  // namespace gdn
