// The staged variants in the registry: names, can_implement reasons, the config space, and
// (on a device) static resources with no local-memory spills.
#include <gtest/gtest.h>

#include <set>

#include "device_harness.hpp"
#include "gdn/variant.hpp"

namespace gdn::testing::gpu {
namespace {

gdn_problem basic_problem() {
  gdn_problem p;
  gdn_problem_init(&p, 1, 128, 2, 4, 128, 128);
  return p;
}

TEST(StagedRegistry, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const Variant* v : registry()) {
    EXPECT_TRUE(names.insert(v->name()).second) << "duplicate name " << v->name();
    EXPECT_EQ(find_variant(v->name()), v);
    EXPECT_TRUE(check_config(v->config()).ok) << v->name();
  }
  EXPECT_EQ(find_variant("no_such_variant"), nullptr);
  EXPECT_NE(find_variant("gdn_fwd_sm90_staged_v64_cp0"), nullptr);
  EXPECT_NE(find_variant("gdn_bwd_sm90_staged_v64_cp0"), nullptr);
}

TEST(StagedRegistry, CanImplementGivesReasons) {
  const Variant* v = find_variant("gdn_fwd_sm90_staged_v64_cp0");
  ASSERT_NE(v, nullptr);
  gdn_problem p = basic_problem();
  EXPECT_TRUE(v->can_implement(p).ok);
  p.K = 64;
  Implementable r = v->can_implement(p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("K = 64"), std::string::npos) << r.reason;
  p = basic_problem();
  p.qkv_dtype = GDN_FP32;
  r = v->can_implement(p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("qkv_dtype"), std::string::npos) << r.reason;
  p = basic_problem();
  p.beta_dtype = GDN_FP16;  // neither fp32 nor the bf16 of q
  r = v->can_implement(p);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("beta_dtype"), std::string::npos) << r.reason;
}

TEST(StagedRegistry, FullSpaceCoversBothFamiliesWithValidAndInvalidConfigs) {
  const auto space = full_config_space();
  int valid = 0, staged = 0, fused = 0;
  for (const KernelConfig& c : space) {
    valid += check_config(c).ok;
    staged += c.family == Family::Staged;
    fused += c.family == Family::Fused;
  }
  EXPECT_GT(staged, 0);
  EXPECT_GT(fused, 0);
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, static_cast<int>(space.size()));
  for (const Variant* v : registry()) {
    bool listed = false;
    for (const KernelConfig& c : space) listed = listed || c == v->config();
    EXPECT_TRUE(listed) << v->name() << " is not in the full space";
  }
}

TEST(StagedRegistry, ResourcesHaveNoSpills) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  for (const Variant* v : registry()) {
    const Variant::Resources r = v->resources();
    EXPECT_GT(r.registers, 0) << v->name();
    EXPECT_GT(r.shared_bytes, 0) << v->name();
    EXPECT_EQ(r.local_bytes, 0) << v->name() << " spills to local memory";
    std::printf("%s: %d regs, %d B smem, %d B local\n", v->name().c_str(), r.registers,
                r.shared_bytes, r.local_bytes);
  }
}

}  // namespace
}  // namespace gdn::testing::gpu
