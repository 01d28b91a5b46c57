// Exact context parallelism of the fused family: every CP variant matches the float64 oracle
// and the non-CP fused variant of its V-block width within the forward tolerance, on ragged
// packed batches whose sequences span many segments (lengths 0, 1, partial last chunks), in
// both state layouts, with and without h0; the column-warp ones also with each sequence's
// first segment run in pass 1 (GDN_CP_FIRST_SEGMENT=1; the rule takes it only for long
// single sequences with many heads), and the 64-column ones on single sequences also with the
// prepare split around pass 1 (GDN_PREPARE_TAIL=1: the last segment's chunks prepared beside
// pass 1; the rule takes it only where pass 1 has more than one wave).
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "device_harness.hpp"
#include "scoped_env.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/shapes.hpp"
#include "slice_check.hpp"

namespace gdn::testing::gpu {
namespace {

struct CpCase {
  std::string name;
  ref::Shape shape;
  bool with_h0;
  bool one_sequence = false;  // the prepare split around pass 1 can run (plan/prepare_tail.hpp)
};

std::vector<CpCase> cp_cases() {
  std::vector<CpCase> cases;
  // 1541 tokens = 24 full chunks + 5 rows: segment boundaries inside and at sequence ends.
  ref::Shape ragged = packed_shape({0, 47, 1541, 0, 1, 3000, 64}, 2, 4, 128, 128);
  cases.push_back({"ragged_kv_h0", ragged, true});
  ref::Shape ragged_vk = ragged;
  ragged_vk.layout = ref::StateLayout::VK;
  cases.push_back({"ragged_vk_no_h0", ragged_vk, false});
  cases.push_back({"long_8192_gva4", dense_shape(1, 8192, 1, 4, 128, 128), true, true});
  cases.push_back({"batch2_2100", dense_shape(2, 2100, 2, 2, 128, 128), true});
  // The fix-up's column widths (fixup_cols, 132 SMs): the ragged batch takes 32 columns, the
  // long sequence and the batch of two take 8, and 16 v-heads of one sequence take 16.
  cases.push_back({"heads16_2048", dense_shape(1, 2048, 4, 16, 128, 128), true, true});
  // One sequence ending in a partial chunk (47 chunks: the tail prepare's last item is short),
  // without h0.
  cases.push_back({"one_seq_3000_no_h0", dense_shape(1, 3000, 2, 4, 128, 128), false, true});
  return cases;
}

// The non-CP fused variant with the same V-block width and ring depth as v.
const Variant* non_cp_twin(const Variant& v) {
  for (const Variant* w : variants_of(Pass::Forward)) {
    const KernelConfig& a = w->config();
    const KernelConfig& b = v.config();
    if (a.family == Family::Fused && a.cp_segment_chunks == 0 && a.block_v == b.block_v &&
        a.stages == b.stages)
      return w;
  }
  return nullptr;
}

TEST(FusedContextParallel, MatchesOracleAndNonCpPath) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::vector<const Variant*> cp_variants;
  for (const Variant* v : variants_of(Pass::Forward))
    if (v->config().family == Family::Fused && v->config().cp_segment_chunks > 0)
      cp_variants.push_back(v);
  ASSERT_FALSE(cp_variants.empty()) << "no CP variant registered";
  WorstErrors worst;
  const std::vector<CpCase> cases = cp_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const RandomCase c =
        make_random_case(cases[i].shape, derive_seed(seed, i), CaseOptions::forward(cases[i].with_h0));
    const ref::FwdOutputs r = ref::oracle_forward(c.shape, c.inputs);
    const DeviceCase dc(c, i % 2 == 1);
    std::map<const Variant*, DeviceFwdResult> twins;
    for (const Variant* v : cp_variants)
      for (const auto& [first_segment, tail] :
           {std::pair{"0", "0"}, std::pair{"1", "0"}, std::pair{"0", "1"}, std::pair{"1", "1"}}) {
      const bool cw = v->config().roles == WarpRoles::ColumnWarps;
      if (first_segment[0] == '1' && !cw) continue;
      if (tail[0] == '1' && !(cw && v->config().block_v == 64 && cases[i].one_sequence)) continue;
      const ScopedEnv setting("GDN_CP_FIRST_SEGMENT", first_segment);
      const ScopedEnv tail_setting("GDN_PREPARE_TAIL", tail);
      SCOPED_TRACE(v->name() + " on " + cases[i].name + ", GDN_CP_FIRST_SEGMENT=" + first_segment +
                   ", GDN_PREPARE_TAIL=" + tail);
      ASSERT_TRUE(v->can_implement(dc.problem).ok) << v->can_implement(dc.problem).reason;
      const Variant* twin = non_cp_twin(*v);
      ASSERT_NE(twin, nullptr) << "no non-CP fused variant with block_v " << v->config().block_v;
      if (!twins.count(twin)) {
        const FwdRun base = run_forward(*twin, dc);
        ASSERT_EQ(base.status, GDN_OK);
        twins[twin] = base.out;
      }
      const FwdRun got = run_forward(*v, dc);
      ASSERT_EQ(got.status, GDN_OK);
      const CheckReport vs_oracle = check_forward(c, r, got.out);
      EXPECT_TRUE(vs_oracle.passed()) << vs_oracle.summary();
      worst.note(vs_oracle);
      // The non-CP run as the reference: the two paths differ only in rounding.
      const DeviceFwdResult& base = twins[twin];
      const OutputCheck o = check_output("o_vs_noncp", got.out.o, c.options.dtype,
                                         to_double(base.o, c.options.dtype), 5e-3);
      EXPECT_TRUE(o.passed()) << o.describe();
      if (!base.ht.empty()) {
        const OutputCheck ht = check_output("ht_vs_noncp", got.out.ht, to_double(base.ht), 5e-3);
        EXPECT_TRUE(ht.passed()) << ht.describe();
        std::printf("  %s %s (first segment in pass 1: %s, prepare tail: %s): o vs non-CP %.2e, "
                    "ht vs non-CP %.2e\n",
                    cases[i].name.c_str(), v->name().c_str(), first_segment, tail, o.rel_rms,
                    ht.rel_rms);
      }
      const FwdRun again = run_forward(*v, dc);
      EXPECT_TRUE(same_bits(got.out, again.out)) << "rerun differs: not deterministic";
      }
  }
  worst.print("FusedContextParallel");
}

TEST(FusedRegistry, DefaultBuildHasFusedVariantsThatExplainRefusals) {
  int fused = 0, cp = 0;
  for (const Variant* v : variants_of(Pass::Forward)) {
    if (v->config().family != Family::Fused) continue;
    ++fused;
    cp += v->config().cp_segment_chunks > 0;
    gdn_problem p;
    gdn_problem_init(&p, 1, 128, 2, 4, 128, 128);
    EXPECT_TRUE(v->can_implement(p).ok) << v->name() << ": " << v->can_implement(p).reason;
    p.V = 64;
    const Implementable r = v->can_implement(p);
    EXPECT_FALSE(r.ok) << v->name();
    EXPECT_NE(r.reason.find("V = 64"), std::string::npos) << r.reason;
    gdn_problem_init(&p, 1, 128, 2, 4, 128, 128);
    p.qkv_dtype = GDN_FP32;
    EXPECT_NE(v->can_implement(p).reason.find("qkv_dtype"), std::string::npos) << v->name();
  }
  EXPECT_GE(fused, 2);
  EXPECT_GE(cp, 1);
}

}  // namespace
}  // namespace gdn::testing::gpu
