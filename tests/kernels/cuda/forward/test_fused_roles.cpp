// The producer/consumer fused chunk loop (WarpRoles::ProducerConsumer) does the cooperative
// loop's products in the same order on the same data, only split over two warpgroups, so its
// outputs must equal its cooperative twin's (same block_v, stages, CP segment) bit for bit:
// any race between the warpgroups, or a barrier that pairs the wrong chunk, shows up as a
// difference. Also checked against the float64 oracle, on ragged packed batches (lengths 0,
// 1 and partial chunks, so chunk counts of both parities), both state layouts, with and
// without h0, GVA, and one long sequence.
#include <gtest/gtest.h>

#include <memory>

#include "device_harness.hpp"
#include "forward/variant.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/shapes.hpp"
#include "slice_check.hpp"

namespace gdn::testing::gpu {
namespace {

// v's cooperative twin (same block_v, stages, CP segment): the registered one, else one made
// here (the default build registers the 64-column producer/consumer variants without theirs).
const Variant* cooperative_twin(const Variant& v, std::unique_ptr<Variant>& made) {
  for (const Variant* w : variants_of(Pass::Forward)) {
    const KernelConfig& a = w->config();
    const KernelConfig& b = v.config();
    if (a.family == Family::Fused && a.roles == WarpRoles::Cooperative &&
        a.block_v == b.block_v && a.stages == b.stages &&
        a.cp_segment_chunks == b.cp_segment_chunks)
      return w;
  }
  KernelConfig twin = v.config();
  twin.roles = WarpRoles::Cooperative;
  if (!fused::fused_config_built(twin).ok) return nullptr;
  made = fused::make_fused_variant(twin);
  return made.get();
}

TEST(FusedRoles, ProducerConsumerEqualsCooperativeBitForBit) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  std::vector<const Variant*> pc;
  for (const Variant* v : variants_of(Pass::Forward))
    if (v->config().family == Family::Fused && v->config().roles == WarpRoles::ProducerConsumer)
      pc.push_back(v);
  if (pc.empty())
    GTEST_SKIP() << "no producer/consumer variant in this build (GDN_VARIANTS=all registers them)";
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  struct Case {
    const char* name;
    ref::Shape shape;
    bool with_h0;
  };
  ref::Shape ragged_vk = packed_shape({0, 1, 63, 64, 65, 1541, 130}, 2, 4, 128, 128);
  ragged_vk.layout = ref::StateLayout::VK;
  const Case cases[] = {
      {"ragged_kv_h0", packed_shape({0, 47, 1541, 0, 1, 3000, 64}, 2, 4, 128, 128), true},
      {"ragged_vk_no_h0", ragged_vk, false},
      {"long_8192_gva4", dense_shape(1, 8192, 1, 4, 128, 128), true},
  };
  WorstErrors worst;
  for (size_t i = 0; i < std::size(cases); ++i) {
    const RandomCase c =
        make_random_case(cases[i].shape, derive_seed(seed, i), CaseOptions::forward(cases[i].with_h0));
    const ref::FwdOutputs r = ref::oracle_forward(c.shape, c.inputs);
    const DeviceCase dc(c, i % 2 == 1);
    for (const Variant* v : pc) {
      SCOPED_TRACE(v->name() + " on " + cases[i].name);
      std::unique_ptr<Variant> made;
      const Variant* twin = cooperative_twin(*v, made);
      ASSERT_NE(twin, nullptr) << "this build's fused loop has no cooperative twin";
      ASSERT_TRUE(v->can_implement(dc.problem).ok) << v->can_implement(dc.problem).reason;
      const FwdRun got = run_forward(*v, dc);
      ASSERT_EQ(got.status, GDN_OK);
      const FwdRun base = run_forward(*twin, dc);
      ASSERT_EQ(base.status, GDN_OK);
      EXPECT_TRUE(same_bits(got.out, base.out)) << "differs from " << twin->name();
      const CheckReport vs_oracle = check_forward(c, r, got.out);
      EXPECT_TRUE(vs_oracle.passed()) << vs_oracle.summary();
      worst.note(vs_oracle);
      const FwdRun again = run_forward(*v, dc);
      EXPECT_TRUE(same_bits(got.out, again.out)) << "rerun differs: not deterministic";
    }
  }
  worst.print("FusedRoles");
}

}  // namespace
}  // namespace gdn::testing::gpu
