// The prepare kernel beside the column-warp loop (persistent grid, per-chunk ready counts,
// chunks taken in the loop's order or chunk by chunk when the units are too ragged; sharing
// the loop's SMs, or leaving SMs to the loop and taking its items from a queue): the
// outputs are bit-identical to the loop launched after the prepare kernel has completed, and
// match the float64 oracle, for every registered 64-column column-warp variant (with and
// without CP), on shapes that take each prepare order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "device_harness.hpp"
#include "scoped_env.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/shapes.hpp"
#include "slice_check.hpp"

namespace gdn::testing::gpu {
namespace {

struct OverlapCase {
  std::string name;
  ref::Shape shape;
};

std::vector<OverlapCase> overlap_cases() {
  return {
      // One sequence: the loop's units are the sequence (no CP) or its segments (CP).
      {"single_3000_gva2", dense_shape(1, 3000, 2, 4, 128, 128)},
      // Equal sequences: ordered by offset within the sequence, then sequence.
      {"batch3_1100", dense_shape(3, 1100, 1, 3, 128, 128)},
      // Ragged, with partial last chunks and an empty sequence: ordered (without CP), with
      // empty (offset, sequence) slots.
      {"ragged", packed_shape({1500, 1300, 0, 700}, 2, 4, 128, 128)},
      // One long sequence among many one-chunk ones: more than half the (offset, sequence)
      // slots would be empty, so the prepare kernel goes chunk by chunk.
      {"skewed", packed_shape({2500, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64}, 1, 2, 128, 128)},
  };
}

// GDN_PREPARE_OVERLAP for one scope.
struct OverlapSetting : ScopedEnv {
  explicit OverlapSetting(const char* value) : ScopedEnv("GDN_PREPARE_OVERLAP", value) {}
};

TEST(FusedPrepareOverlap, SameBitsBesideAndAfterThePrepareKernel) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  std::vector<const Variant*> narrow_cw;
  for (const Variant* v : variants_of(Pass::Forward)) {
    const KernelConfig& c = v->config();
    if (c.family == Family::Fused && c.roles == WarpRoles::ColumnWarps && c.block_v == 64)
      narrow_cw.push_back(v);
  }
  if (narrow_cw.empty()) GTEST_SKIP() << "skipped: this build registers no 64-column column-warp variant";
  WorstErrors worst;
  const std::vector<OverlapCase> cases = overlap_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const RandomCase c = make_random_case(cases[i].shape, derive_seed(seed, i), CaseOptions::forward(true));
    const ref::FwdOutputs r = ref::oracle_forward(c.shape, c.inputs);
    const DeviceCase dc(c, i % 2 == 0);
    for (const Variant* v : narrow_cw) {
      SCOPED_TRACE(v->name() + " on " + cases[i].name);
      ASSERT_TRUE(v->can_implement(dc.problem).ok) << v->can_implement(dc.problem).reason;
      FwdRun after, beside, alone, by_rule;
      {
        const OverlapSetting off("0");
        after = run_forward(*v, dc);
      }
      {
        const OverlapSetting on("1");
        beside = run_forward(*v, dc);
      }
      {
        const OverlapSetting exclusive("2");
        alone = run_forward(*v, dc);
      }
      {
        const OverlapSetting rule(nullptr);
        by_rule = run_forward(*v, dc);
      }
      ASSERT_EQ(after.status, GDN_OK);
      ASSERT_EQ(beside.status, GDN_OK);
      ASSERT_EQ(alone.status, GDN_OK);
      ASSERT_EQ(by_rule.status, GDN_OK);
      const CheckReport vs_oracle = check_forward(c, r, beside.out);
      EXPECT_TRUE(vs_oracle.passed()) << vs_oracle.summary();
      worst.note(vs_oracle);
      EXPECT_TRUE(same_bits(after.out, beside.out)) << "beside the prepare kernel differs from after it";
      EXPECT_TRUE(same_bits(after.out, alone.out))
          << "beside the prepare kernel on SMs of its own differs from after it";
      EXPECT_TRUE(same_bits(after.out, by_rule.out)) << "the rule's choice differs from after it";
    }
  }
  worst.print("FusedPrepareOverlap");
}

}  // namespace
}  // namespace gdn::testing::gpu
