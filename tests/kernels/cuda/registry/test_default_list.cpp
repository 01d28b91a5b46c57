// The default variant list (kDefaultFusedConfigs) must give the default rule the same choice as
// the GDN_VARIANTS=all build, so a shape the committed table does not cover runs the same
// variant in both builds (the table's own variants are checked by CommittedTable). Checked over
// fake variants that carry each layout's resources as measured on the H200
// (bench/results/h200_2026-11-30_s3/resources.txt and ctest_gpu.log; the column-warp loop
// from session 4) on a grid of shapes and
// SM counts, without a device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "default_selection.hpp"
#include "forward/variant.hpp"
#include "gdn/testing/fake_variant.hpp"
#include "gdn/variant.hpp"
#include "registry/kernel_resources.hpp"

namespace {

using gdn::KernelConfig;
using gdn::WarpRoles;

// sm_90: 228 KiB shared per SM, 1 KiB reserved per CTA, 64 Ki registers, 2048 threads, 32 CTAs.
constexpr gdn::SmLimits kHopper{233472, 1024, 65536, 2048, 32};

// Registers and shared bytes of each chunk-loop layout on the H200 (session 3 build; the
// column-warp loop: session 6, ptxas -v and FusedCwSmem: wgmma, TMA, producer warpgroup).
gdn::Variant::Resources h200_resources(const KernelConfig& c) {
  gdn::Variant::Resources r;
  const bool pc = c.roles == WarpRoles::ProducerConsumer;
  r.threads = pc ? 256 : 128;
  if (c.roles == WarpRoles::ColumnWarps) {
    r.threads = 128 + c.block_v / 16 * 32;  // a producer warpgroup and the math warpgroups
    r.registers = c.block_v == 64 ? 128 : 168;  // at launch (setmaxnreg moves them after)
    r.shared_bytes = c.block_v == 64 ? 108544 : 133120;
  } else if (pc) {
    r.registers = c.block_v == 32 ? 168 : 251;
    r.shared_bytes = c.block_v == 32 ? 139776 : 180736;
  } else {
    r.registers = c.block_v == 32 ? 210 : 249;
    r.shared_bytes = c.block_v == 32 ? (c.stages == 2 ? 114176 : 163584)
                                     : (c.stages == 2 ? 134656 : 188160);
  }
  r.local_bytes = 0;
  r.ctas_per_sm = gdn::resident_ctas_per_sm(kHopper, r.registers, r.shared_bytes, r.threads);
  return r;
}

class FakeSpace {
 public:
  explicit FakeSpace(const std::vector<KernelConfig>& configs) {
    for (const KernelConfig& c : configs) {
      owned_.push_back(std::make_unique<gdn::testing::FakeVariant>(gdn::Pass::Forward, c, gdn::config_name(c)));
      owned_.back()->set_resources(h200_resources(c));
      view_.push_back(owned_.back().get());
    }
  }
  std::string pick(const gdn::detail::SelectionInput& in) const {
    const gdn::Variant* v = gdn::detail::select_default_variant(in, view_);
    return v ? v->name() : "none";
  }
  std::size_t size() const { return view_.size(); }

 private:
  std::vector<std::unique_ptr<gdn::testing::FakeVariant>> owned_;
  std::vector<const gdn::Variant*> view_;
};

std::vector<KernelConfig> all_build_fused() {  // what GDN_VARIANTS=all registers, in its order
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : gdn::full_config_space())
    if (c.family == gdn::Family::Fused && gdn::fused::fused_config_built(c).ok) out.push_back(c);
  return out;
}

TEST(DefaultList, TheDefaultRulePicksTheSameVariantAsInTheAllBuild) {
  const FakeSpace all(all_build_fused());
  const FakeSpace defaults(std::vector<KernelConfig>(std::begin(gdn::fused::kDefaultFusedConfigs),
                                                     std::end(gdn::fused::kDefaultFusedConfigs)));
  ASSERT_GT(all.size(), defaults.size());
  int checked = 0;
  for (int sms : {132, 114, 78})
    for (int64_t seqs : {1, 2, 3, 4, 8, 16, 64})
      for (int64_t longest : {64, 200, 1024, 4096, 8192, 16384, 32768, 65536, 262144})
        for (int hv : {1, 2, 4, 8, 16, 24, 32, 48, 64, 128}) {
          gdn::detail::SelectionInput in;
          in.num_seqs = seqs;
          in.longest = longest;
          in.Hv = hv;
          in.V = 128;
          in.sm_count = sms;
          EXPECT_EQ(defaults.pick(in), all.pick(in))
              << seqs << " sequences, longest " << longest << ", " << hv << " v-heads, " << sms << " SMs";
          ++checked;
        }
  EXPECT_EQ(checked, 3 * 7 * 9 * 10);
}

}  // namespace
