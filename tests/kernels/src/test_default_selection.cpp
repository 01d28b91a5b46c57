// The default selection rule over fake variants (no device, no kernels): each step of the rule
// in default_selection.cpp has a test that fails if the step is dropped or inverted.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "default_selection.hpp"
#include "gdn/testing/fake_variant.hpp"

namespace {

using gdn::Family;
using gdn::KernelConfig;
using gdn::WarpRoles;
using gdn::detail::select_default_variant;
using gdn::detail::SelectionInput;

// A variant of the config's pass named by its config, implementable everywhere.
std::unique_ptr<gdn::testing::FakeVariant> fake(const KernelConfig& c) {
  return std::make_unique<gdn::testing::FakeVariant>(c.pass, c, gdn::config_name(c));
}

KernelConfig staged(int block_v) {
  KernelConfig c;
  c.family = Family::Staged;
  c.block_v = block_v;
  return c;
}

KernelConfig fused(int block_v, int cp = 0, WarpRoles roles = WarpRoles::ProducerConsumer) {
  KernelConfig c;
  c.family = Family::Fused;
  c.block_v = block_v;
  c.roles = roles;
  c.cp_segment_chunks = cp;
  return c;
}

// A chunked-backward config: the reverse chain's roles and V-block, the CP segment.
KernelConfig chain(int block_v, int cp, WarpRoles roles = WarpRoles::Cooperative) {
  KernelConfig c = fused(block_v, cp, roles);
  c.pass = gdn::Pass::Backward;
  return c;
}

class Space {
 public:
  // ctas_per_sm: what every variant reports as resident CTAs per SM (-1: unknown).
  explicit Space(const std::vector<KernelConfig>& configs, int ctas_per_sm = -1) {
    for (const KernelConfig& c : configs) {
      owned_.push_back(fake(c));
      gdn::Variant::Resources r;
      r.ctas_per_sm = ctas_per_sm;
      owned_.back()->set_resources(r);
      pointers_.push_back(owned_.back().get());
    }
  }
  // Each variant with its own resources.
  explicit Space(const std::vector<std::pair<KernelConfig, gdn::Variant::Resources>>& variants) {
    for (const auto& [c, r] : variants) {
      owned_.push_back(fake(c));
      owned_.back()->set_resources(r);
      pointers_.push_back(owned_.back().get());
    }
  }
  std::string pick(const SelectionInput& in) const {
    const gdn::Variant* v = select_default_variant(in, pointers_);
    return v == nullptr ? "none" : v->name();
  }

 private:
  std::vector<std::unique_ptr<gdn::testing::FakeVariant>> owned_;
  std::vector<const gdn::Variant*> pointers_;
};

constexpr int kSms = 132;

SelectionInput shape(int64_t num_seqs, int64_t longest, int Hv) {
  SelectionInput in;
  in.num_seqs = num_seqs;
  in.longest = longest;
  in.tokens = num_seqs * longest;  // every sequence as long as the longest
  in.Hv = Hv;
  in.V = 128;
  in.sm_count = kSms;
  return in;
}

TEST(DefaultSelection, NothingToChooseFrom) {
  EXPECT_EQ(select_default_variant(shape(1, 1024, 8), {}), nullptr);
}

TEST(DefaultSelection, PrefersTheFusedFamily) {
  const Space space({staged(64), fused(64)});
  EXPECT_EQ(space.pick(shape(8, 4096, 64)), gdn::config_name(fused(64)));
}

TEST(DefaultSelection, FallsBackToStagedWhenItIsAllThereIs) {
  const Space space({staged(32), staged(64)});
  EXPECT_EQ(space.pick(shape(8, 4096, 64)), gdn::config_name(staged(64)));  // 512 CTAs fill
}

TEST(DefaultSelection, TakesTheLargestBlockThatFillsThreeQuartersOfTheSms) {
  const Space space({fused(32), fused(64), fused(128)});
  // 16 x 64 = 1024 chains: even block_v = 128 (1024 CTAs) fills 132 SMs.
  EXPECT_EQ(space.pick(shape(16, 1024, 64)), gdn::config_name(fused(128)));
  // 1 x 32 chains: block_v 64 gives 64 CTAs (under 3/4 of 132), block_v 32 gives 128.
  EXPECT_EQ(space.pick(shape(1, 1024, 32)), gdn::config_name(fused(32)));
  // The 3/4 boundary (99 of 132): 2 x 48 chains at block_v 128 are 96 CTAs, too few; 2 x 50
  // are 100, enough.
  EXPECT_EQ(space.pick(shape(2, 1024, 48)), gdn::config_name(fused(64)));
  EXPECT_EQ(space.pick(shape(2, 1024, 50)), gdn::config_name(fused(128)));
}

TEST(DefaultSelection, TakesTheSmallestBlockWhenNoneFills) {
  const Space space({fused(128), fused(64), fused(32)});
  EXPECT_EQ(space.pick(shape(1, 1024, 8)), gdn::config_name(fused(32)));  // 32 CTAs at best
}

TEST(DefaultSelection, SplitsALongSequenceWhenTheSmsAreIdle) {
  const Space space({fused(32, 0), fused(32, 16), fused(32, 64)});
  // 1 x 8 chains x 4 V-blocks = 32 CTAs. 32768 tokens = 512 chunks; segments of 64 chunks
  // give 8 x 32 = 256 CTAs (fills), so the longest filling segment is 64, not 16.
  EXPECT_EQ(space.pick(shape(1, 32768, 8)), gdn::config_name(fused(32, 64)));
  // 4096 tokens = 64 chunks: a 64-chunk segment splits nothing, 16 gives 4 x 32 = 128 CTAs.
  EXPECT_EQ(space.pick(shape(1, 4096, 8)), gdn::config_name(fused(32, 16)));
  // 2048 tokens = 32 chunks: 16-chunk segments give 64 CTAs, under 3/4 of the SMs, yet the
  // shortest segment that still splits.
  EXPECT_EQ(space.pick(shape(1, 2048, 8)), gdn::config_name(fused(32, 16)));
}

TEST(DefaultSelection, KeepsContextParallelismOffWithAQuarterOfTheSmsBusy) {
  const Space space({fused(32, 0), fused(32, 64)});
  // 1 x 8 chains x 4 V-blocks = 32 CTAs, under 132 / 4: split.
  EXPECT_EQ(space.pick(shape(1, 32768, 8)), gdn::config_name(fused(32, 64)));
  // 2 x 8 x 4 = 64 CTAs: a quarter of the SMs busy; the transition pass would cost more.
  EXPECT_EQ(space.pick(shape(2, 32768, 8)), gdn::config_name(fused(32, 0)));
}

TEST(DefaultSelection, KeepsContextParallelismOffWhenTheSmsAreFull) {
  const Space space({fused(64, 0), fused(64, 16)});
  EXPECT_EQ(space.pick(shape(8, 32768, 64)), gdn::config_name(fused(64, 0)));
}

TEST(DefaultSelection, KeepsContextParallelismOffForShortSequences) {
  const Space space({fused(64, 0), fused(64, 16)});
  EXPECT_EQ(space.pick(shape(1, 512, 8)), gdn::config_name(fused(64, 0)));  // 8 chunks < 16
}

TEST(DefaultSelection, ReadsTheSmCount) {
  const Space space({fused(64), fused(128)});
  SelectionInput in = shape(1, 1024, 96);  // 96 chains
  EXPECT_EQ(space.pick(in), gdn::config_name(fused(64)));  // 96 < 3/4 x 132 at block_v 128
  in.sm_count = 114;                                         // an H100 PCIe: 96 >= 85.5
  EXPECT_EQ(space.pick(in), gdn::config_name(fused(128)));
}

TEST(DefaultSelection, FillsEveryResidentCtaSlotNotJustEverySm) {
  // 1 x 64 chains: block_v 64 gives 128 CTAs. One CTA per SM: 128 >= 3/4 x 132 fills.
  // Two per SM: 264 slots, 128 do not fill them, so the smaller block_v is taken.
  EXPECT_EQ(Space({fused(32), fused(64)}, 1).pick(shape(1, 1024, 64)),
            gdn::config_name(fused(64)));
  EXPECT_EQ(Space({fused(32), fused(64)}, 2).pick(shape(1, 1024, 64)),
            gdn::config_name(fused(32)));
  // 1 x 8 chains x 4 V-blocks: 64-chunk segments of 16384 tokens give 128 CTAs, enough for
  // one per SM but not for two, where 16-chunk segments (512 CTAs) are the longest that fill.
  const std::vector<KernelConfig> cp = {fused(32, 16), fused(32, 64)};
  EXPECT_EQ(Space(cp, 1).pick(shape(1, 16384, 8)), gdn::config_name(fused(32, 64)));
  EXPECT_EQ(Space(cp, 2).pick(shape(1, 16384, 8)), gdn::config_name(fused(32, 16)));
}

gdn::Variant::Resources resident(int ctas_per_sm, int threads) {
  gdn::Variant::Resources r;
  r.ctas_per_sm = ctas_per_sm;
  r.threads = threads;
  return r;
}

TEST(DefaultSelection, TakesTheWarpRolesWithMoreResidentWarps) {
  const KernelConfig coop = fused(64, 0, WarpRoles::Cooperative);
  const KernelConfig pc = fused(64, 0, WarpRoles::ProducerConsumer);
  // One cooperative CTA of 4 warps per SM against one producer/consumer CTA of 8: the latter,
  // whatever the CTA count and the registry order.
  const Space space({{coop, resident(1, 128)}, {pc, resident(1, 256)}});
  EXPECT_EQ(space.pick(shape(8, 8192, 64)), gdn::config_name(pc));  // 1024 CTAs
  EXPECT_EQ(space.pick(shape(1, 8192, 64)), gdn::config_name(pc));  // 128 CTAs
  // Reversed resources, reversed pick.
  const Space reversed({{pc, resident(1, 256)}, {coop, resident(3, 128)}});
  EXPECT_EQ(reversed.pick(shape(8, 8192, 64)), gdn::config_name(coop));
}

TEST(DefaultSelection, EqualWarpsTakeProducerConsumerOnlyAtOneCtaPerSm) {
  const KernelConfig coop = fused(32, 0, WarpRoles::Cooperative);
  const KernelConfig pc = fused(32, 0, WarpRoles::ProducerConsumer);
  // Two cooperative CTAs of 4 warps or one producer/consumer CTA of 8: 8 warps either way.
  const Space space({{coop, resident(2, 128)}, {pc, resident(1, 256)}});
  EXPECT_EQ(space.pick(shape(4, 8192, 8)), gdn::config_name(pc));     // 128 CTAs <= 132 SMs
  EXPECT_EQ(space.pick(shape(8, 1024, 8)), gdn::config_name(coop));   // 256 CTAs
  // Resources unknown (no device): the same CTA-count rule.
  const Space unknown({coop, pc});
  EXPECT_EQ(unknown.pick(shape(4, 8192, 8)), gdn::config_name(pc));
  EXPECT_EQ(unknown.pick(shape(8, 1024, 8)), gdn::config_name(coop));
}

TEST(DefaultSelection, TakesTheColumnWarpLoopWhenThereIsOne) {
  const KernelConfig cw = fused(64, 0, WarpRoles::ColumnWarps);
  const KernelConfig pc = fused(64, 0, WarpRoles::ProducerConsumer);
  const KernelConfig coop = fused(32, 0, WarpRoles::Cooperative);
  // Whatever the resources say about the others (more resident warps, registry order first).
  const Space space({{pc, resident(1, 256)}, {coop, resident(4, 128)}, {cw, resident(2, 128)}});
  EXPECT_EQ(space.pick(shape(1, 32768, 64)), gdn::config_name(cw));
  EXPECT_EQ(space.pick(shape(8, 1024, 8)), gdn::config_name(cw));
  // Without one, the other steps as before (64 columns fill 3/4 of the producer/consumer's
  // 132 slots with 128 CTAs).
  const Space without({{pc, resident(1, 256)}, {coop, resident(4, 128)}});
  EXPECT_EQ(without.pick(shape(8, 1024, 8)), gdn::config_name(pc));
}

TEST(DefaultSelection, ColumnWarpContextParallelismCountsOneCtaPerSm) {
  // 1 x 8 chains x 2 V-blocks of 64 columns: 16 CTAs. Against one CTA per SM (132 slots)
  // 64-chunk segments of 32768 tokens (8 x 16 = 128 CTAs) are the longest that fill 3/4;
  // counted at the loop's two CTAs per SM (264 slots) it would take 32-chunk segments.
  const auto cw = [](int cp) { return fused(64, cp, WarpRoles::ColumnWarps); };
  const auto pc = [](int cp) { return fused(64, cp, WarpRoles::ProducerConsumer); };
  const Space cw_space({{cw(32), resident(2, 128)}, {cw(64), resident(2, 128)}});
  EXPECT_EQ(cw_space.pick(shape(1, 32768, 8)), gdn::config_name(cw(64)));
  // The other layouts keep counting their resident CTAs.
  const Space pc_space({{pc(32), resident(2, 256)}, {pc(64), resident(2, 256)}});
  EXPECT_EQ(pc_space.pick(shape(1, 32768, 8)), gdn::config_name(pc(32)));
}

TEST(DefaultSelection, ColumnWarpContextParallelismFollowsTheAnchorSweep) {
  const auto cw = [](int cp) { return fused(64, cp, WarpRoles::ColumnWarps); };
  const Space space({{cw(0), resident(2, 128)}, {cw(4), resident(2, 128)},
                     {cw(16), resident(2, 128)}, {cw(64), resident(2, 128)},
                     {cw(128), resident(2, 128)}, {cw(256), resident(2, 128)}});
  // 1 x 2048 tokens at 8 heads: 16 CTAs, but 32 chunks are under 96: unsplit (4-chunk
  // segments, the old rule's pick, ran 2.6x slower).
  EXPECT_EQ(space.pick(shape(1, 2048, 8)), gdn::config_name(cw(0)));
  // 4 x 8192 at 8 heads: 64 CTAs, at most one per two SMs: the prepare kernel runs beside the
  // loop on the other SMs (exclusive overlap), and unsplit wins (committed sweep: 0.214 ms
  // against 0.232 in 64-chunk segments).
  EXPECT_EQ(space.pick(shape(4, 8192, 8)), gdn::config_name(cw(0)));
  // At 4 heads (32 CTAs, under 2/5 of the SMs busy) it splits. Every sequence's segments
  // count: 64-chunk segments give 4 x 2 x 8 = 64 CTAs, 16-chunk ones 256, the longest that
  // fill 3/4 of the SMs (counting the longest sequence's alone, 4-chunk ones would be taken).
  EXPECT_EQ(space.pick(shape(4, 8192, 4)), gdn::config_name(cw(16)));
  // One sequence of 32768 tokens: at 32 heads (64 CTAs) unsplit (0.77 ms against 0.98 in
  // 128-chunk segments), at 24 heads (48 CTAs) split (0.61 against 0.72 unsplit).
  EXPECT_EQ(space.pick(shape(1, 32768, 32)), gdn::config_name(cw(0)));
  EXPECT_NE(space.pick(shape(1, 32768, 24)), gdn::config_name(cw(0)));
  // 2 sequences (longest 24576 tokens, 32768 in all) at 16 heads: 64 CTAs, but along the
  // longest chain 32 x 512 / 384 = 43 of them busy: split, 128-chunk segments (4 x 32 = 128
  // CTAs; 1.37x faster than unsplit in the committed H200 sweep).
  SelectionInput two = shape(2, 24576, 16);
  two.tokens = 32768;
  EXPECT_EQ(space.pick(two), gdn::config_name(cw(128)));
  // 100 CTAs unsplit (over 3/4 of 132) keep it off.
  EXPECT_EQ(space.pick(shape(1, 32768, 50)), gdn::config_name(cw(0)));
}

// The chunked backward's steps 2' and 3', replayed on rows of the backward anchor sweep
// (bench/results/h200_2026-12-01_plan_sweeps.sqlite, sweep 1; ms of the pick / the fastest).
TEST(DefaultSelection, ChunkedBackwardFollowsTheBackwardAnchorSweep) {
  std::vector<std::pair<KernelConfig, gdn::Variant::Resources>> variants;
  for (int cp : {0, 16, 64}) variants.push_back({chain(16, cp), resident(2, 128)});
  for (int cp : {0, 8, 16, 32, 64, 128}) variants.push_back({chain(32, cp), resident(2, 128)});
  const Space space(variants);
  const auto name = [&](int cp) { return gdn::config_name(chain(32, cp)); };
  // 16/32 heads, 1 x 32768: 128 chain CTAs, half the slots: unsplit, 32 columns (6.94 ms, the
  // fastest 6.93; 16 columns 6.96).
  EXPECT_EQ(space.pick(shape(1, 32768, 32)), name(0));
  // 2/4 heads, 1 x 32768: 16 CTAs; 32-chunk segments are the longest to fill 3/4 of the 264
  // slots (16 segments x 16 = 256 CTAs): 1.10 ms, the fastest; unsplit 3.22.
  EXPECT_EQ(space.pick(shape(1, 32768, 4)), name(32));
  // 8/16 heads, 1 x 8192: 64 CTAs, under a quarter: 32-chunk segments (1.10 ms, the fastest).
  EXPECT_EQ(space.pick(shape(1, 8192, 16)), name(32));
  // 2/4 heads, eight sequences (longest 10180, 32768 tokens): 128 CTAs, but along the longest
  // chain 16 x 512 / 160 = 51 busy: split, counting every sequence's segments (32-chunk
  // segments: 1.20 ms; the fastest, 16-chunk ones, 1.17; unsplit 1.43).
  SelectionInput ragged = shape(8, 10180, 4);
  ragged.tokens = 32768;
  EXPECT_EQ(space.pick(ragged), name(32));
  // 16/32 heads, eight sequences of 1024: unsplit.
  EXPECT_EQ(space.pick(shape(8, 1024, 32)), name(0));
}

// The chunked backward's variants with the resources their kernels report: the mma.sync
// chain (cooperative, two CTAs of 128 threads per SM) at 16 and 32 columns, the wgmma chain
// (column-warp roles, 64 columns, one CTA of 512 threads per SM) and, with `fused_kernel`,
// the fused kernel (producer-consumer roles, 128 columns, one CTA of 512 threads per SM).
std::vector<std::pair<KernelConfig, gdn::Variant::Resources>> backward_variants(bool fused_kernel) {
  std::vector<std::pair<KernelConfig, gdn::Variant::Resources>> variants;
  const int all[] = {0, 8, 16, 32, 64, 128};
  for (int cp : {0, 16, 64}) variants.push_back({chain(16, cp, WarpRoles::Cooperative), resident(2, 128)});
  for (int cp : all) variants.push_back({chain(32, cp, WarpRoles::Cooperative), resident(2, 128)});
  for (int cp : all) variants.push_back({chain(64, cp, WarpRoles::ColumnWarps), resident(1, 512)});
  if (fused_kernel)
    for (int cp : all) variants.push_back({chain(128, cp, WarpRoles::ProducerConsumer), resident(1, 512)});
  return variants;
}

// The wgmma chain (column-warp roles, 64 columns, one CTA per SM) is preferred over the
// mma.sync chain, and steps 2' and 3' replayed on rows of its anchor sweep
// (bench/results/h200_2026-12-02_backward_sweep.sqlite; ms of the pick / the fastest).
TEST(DefaultSelection, ChunkedBackwardPrefersTheWgmmaChainAndFollowsItsSweep) {
  const Space space(backward_variants(false));
  const auto name = [&](int cp) { return gdn::config_name(chain(64, cp, WarpRoles::ColumnWarps)); };
  // 16/32 heads, 1 x 32768: 64 chain CTAs along 512 chunks: unsplit, the local kernel on the
  // other 68 SMs beside the chain (5.027 ms, the fastest; 128-chunk segments 5.206).
  EXPECT_EQ(space.pick(shape(1, 32768, 32)), name(0));
  // 8/16 heads, 1 x 32768: 128-chunk segments (2.677 ms, the fastest).
  EXPECT_EQ(space.pick(shape(1, 32768, 16)), name(128));
  // 2/4 heads, 1 x 32768: 32-chunk segments (0.793 ms, the fastest).
  EXPECT_EQ(space.pick(shape(1, 32768, 4)), name(32));
  // 4/8 heads, 1 x 8192: 16-chunk segments (0.470 ms, the fastest).
  EXPECT_EQ(space.pick(shape(1, 8192, 8)), name(16));
  // 2/4 heads, 1 x 8192: 8-chunk segments (0.299 ms, the fastest).
  EXPECT_EQ(space.pick(shape(1, 8192, 4)), name(8));
  // 16/32 heads, eight sequences (longest 2643, 8192 tokens): unsplit (1.474 ms; the fastest,
  // two prepare heads per CTA, 1.472).
  SelectionInput ragged = shape(8, 2643, 32);
  ragged.tokens = 8192;
  EXPECT_EQ(space.pick(ragged), name(0));
}

// Where the pool has the fused backward kernel (producer-consumer roles, 128 columns, one CTA
// per SM), it is preferred over both chains, and its step 3'' replayed on rows of its H100
// sweep (bench/results/h100_2026-12-08_fused_backward_load_groups/rows32_head.sqlite; ms of
// the pick / the fastest).
TEST(DefaultSelection, ChunkedBackwardPrefersTheFusedKernelAndFollowsItsSweep) {
  struct Row {
    int64_t num_seqs, longest, tokens;
    int32_t hv;
    int segment;  // the pick's cp_segment_chunks
  };
  const Row rows[] = {
      // 16/32 heads, 1 x 32768: 32 CTAs along 512 chunks: 128-chunk segments, 4 per sequence,
      // 128 CTAs (4.156 ms, the fastest).
      {1, 32768, 32768, 32, 128},
      // 8/16 heads, 1 x 32768: 64-chunk segments (2.216 ms, the fastest).
      {1, 32768, 32768, 16, 64},
      // 4/8 heads, 1 x 32768: 32-chunk segments (1.181 ms, the fastest).
      {1, 32768, 32768, 8, 32},
      // 16/32 heads, 1 x 8192: 32-chunk segments (1.139 ms, the fastest).
      {1, 8192, 8192, 32, 32},
      // 2/4 heads, 1 x 8192: 16 CTAs: no length fills the slots, the shortest that splits
      // (8 chunks: 0.267 ms, the fastest).
      {1, 8192, 8192, 4, 8},
      // 16/32 heads, four sequences (longest 3751, 8192 tokens): the CTAs busy along the
      // longest chain, 32 x 128 / 59 = 69, are over half the SMs: unsplit (1.159 ms, the
      // fastest).
      {4, 3751, 8192, 32, 0},
      // 16/32 heads, 21018 + 11750 tokens: 32 x 512 / 329 = 50 CTAs busy along the longest
      // chain, over the chain's quarter of the SMs but under half: split, 128-chunk segments
      // (4.858 ms; unsplit, where the chain's step 3' stops, 5.565; the fastest, 64-chunk
      // segments, 4.284).
      {2, 21018, 32768, 32, 128},
  };
  const Space space(backward_variants(true));
  for (const Row& r : rows) {
    SelectionInput in = shape(r.num_seqs, r.longest, r.hv);
    in.tokens = r.tokens;
    EXPECT_EQ(space.pick(in), gdn::config_name(chain(128, r.segment, WarpRoles::ProducerConsumer)))
        << r.num_seqs << " sequences, longest " << r.longest << ", " << r.hv << " value heads";
  }
  // Without the fused kernel in the pool, the chains' steps as before.
  EXPECT_EQ(Space(backward_variants(false)).pick(shape(1, 32768, 16)),
            gdn::config_name(chain(64, 128, WarpRoles::ColumnWarps)));
}

TEST(DefaultSelection, IsDeterministicAndUsesRegistryOrderLast) {
  KernelConfig a = fused(64);
  KernelConfig b = fused(64);
  b.stages = 3;
  const Space ab({a, b}), ba({b, a});
  EXPECT_EQ(ab.pick(shape(8, 4096, 64)), gdn::config_name(a));
  EXPECT_EQ(ba.pick(shape(8, 4096, 64)), gdn::config_name(b));
  EXPECT_EQ(ab.pick(shape(8, 4096, 64)), ab.pick(shape(8, 4096, 64)));
}

}  // namespace
