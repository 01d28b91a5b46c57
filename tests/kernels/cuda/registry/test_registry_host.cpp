// The registry's host side, without a device: every compiled variant accepts a supported
// problem and refuses unsupported head dims and dtypes with a reason naming the field.
#include <gtest/gtest.h>

#include <string>

#include "forward/variant.hpp"
#include "gdn/variant.hpp"

namespace {

gdn_problem supported() {
  gdn_problem p;
  gdn_problem_init(&p, 1, 130, 2, 8, 128, 128);
  return p;
}

void expect_refused(const gdn_problem& p, const std::string& field) {
  for (const gdn::Variant* v : gdn::registry()) {
    const gdn::Implementable r = v->can_implement(p);
    EXPECT_FALSE(r.ok) << v->name();
    EXPECT_EQ(r.reason.rfind(field, 0), 0u) << v->name() << ": " << r.reason;
  }
}

}  // namespace

// What GDN_VARIANTS=all registers: every fused config of the full space the compiled chunk loop
// implements. At least 24 (issue 4); the others are refused with a reason.
TEST(RegistryHost, FullSpaceHasAtLeast24BuiltFusedVariants) {
  int built = 0;
  for (const gdn::KernelConfig& c : gdn::full_config_space()) {
    if (c.family != gdn::Family::Fused) continue;
    const gdn::Implementable r = gdn::fused::fused_config_built(c);
    if (r.ok) {
      ++built;
      EXPECT_TRUE(gdn::check_config(c).ok) << gdn::config_name(c);
    } else {
      EXPECT_FALSE(r.reason.empty()) << gdn::config_name(c);
    }
  }
  EXPECT_GE(built, 24);
  // Every registered fused variant (whatever GDN_VARIANTS chose) is one of them.
  for (const gdn::Variant* v : gdn::registry())
    if (v->config().family == gdn::Family::Fused)
      EXPECT_TRUE(gdn::fused::fused_config_built(v->config()).ok) << v->name();
}

TEST(RegistryHost, EveryVariantAcceptsASupportedProblem) {
  ASSERT_FALSE(gdn::registry().empty());
  for (const gdn::Variant* v : gdn::registry()) {
    const gdn::Implementable r = v->can_implement(supported());
    EXPECT_TRUE(r.ok) << v->name() << ": " << r.reason;
  }
}

// 64 Hk K must fit the prepare kernel's 32-bit row offsets: Hk = 262144 at K = 128 is refused,
// naming Hk; one less is not refused for that reason.
TEST(RegistryHost, HeadCountsPastThe32BitRowOffsetsAreRefused) {
  gdn_problem p = supported();
  p.Hk = 262144;
  p.Hv = 262144;
  expect_refused(p, "Hk:");
  p.Hk = p.Hv = 262143;
  for (const gdn::Variant* v : gdn::registry())
    EXPECT_EQ(v->can_implement(p).reason.rfind("Hk:", 0), std::string::npos) << v->name();
}

TEST(RegistryHost, HeadDimsOtherThan128AreRefused) {
  gdn_problem p = supported();
  p.K = 64;
  expect_refused(p, "K, V:");
  p = supported();
  p.V = 256;
  expect_refused(p, "K, V:");
}

TEST(RegistryHost, Fp32InputsAreRefused) {
  gdn_problem p = supported();
  p.qkv_dtype = GDN_FP32;
  p.beta_dtype = GDN_FP32;
  expect_refused(p, "qkv_dtype:");
}

TEST(RegistryHost, BetaInAThirdDtypeIsRefused) {
  gdn_problem p = supported();
  p.beta_dtype = GDN_FP16;  // neither fp32 nor the bf16 of q, k, v
  expect_refused(p, "beta_dtype:");
}

// Past 2^31 - 1 tokens the column-warp loop's 32-bit TMA coordinates would wrap: its variants
// refuse the problem (naming B x T and the limit) and every other variant still takes it.
TEST(RegistryHost, ColumnWarpVariantsRefuseMoreTokensThanTmaCoordinatesReach) {
  gdn_problem p = supported();
  p.B = 2;
  p.T = int64_t{1} << 30;  // 2^31 tokens
  int column_warp = 0;
  for (const gdn::Variant* v : gdn::registry()) {
    if (v->pass() != gdn::Pass::Forward) continue;
    const gdn::Implementable r = v->can_implement(p);
    if (v->config().roles == gdn::WarpRoles::ColumnWarps && v->config().family == gdn::Family::Fused) {
      ++column_warp;
      EXPECT_FALSE(r.ok) << v->name();
      EXPECT_EQ(r.reason.rfind("B x T:", 0), 0u) << r.reason;
      EXPECT_NE(r.reason.find("2147483647"), std::string::npos) << r.reason;
      EXPECT_NE(r.reason.find("2147483648"), std::string::npos) << r.reason;
    } else {
      EXPECT_TRUE(r.ok) << v->name() << ": " << r.reason;
    }
  }
  p.T = (int64_t{1} << 30) - 1;  // 2^31 - 2 tokens: within reach
  for (const gdn::Variant* v : gdn::registry())
    if (v->pass() == gdn::Pass::Forward) EXPECT_TRUE(v->can_implement(p).ok) << v->name();
  EXPECT_GT(column_warp, 0) << "the build registers column-warp variants";
}

TEST(RegistryHost, ResourcesAreKnownExactlyWhenADeviceIs) {
  const bool device = gdn_device_available() != 0;
  for (const gdn::Variant* v : gdn::registry()) {
    SCOPED_TRACE(v->name());
    const gdn::Variant::Resources r = v->resources();
    const bool described = v->describe().find(" regs, ") != std::string::npos;
    if (device) {
      EXPECT_GT(r.registers, 0);
      EXPECT_GT(r.shared_bytes, 0);
      EXPECT_GE(r.local_bytes, 0);
      EXPECT_TRUE(described);
    } else {
      EXPECT_EQ(r.registers, -1);
      EXPECT_EQ(r.shared_bytes, -1);
      EXPECT_EQ(r.local_bytes, -1);
      EXPECT_FALSE(described);
    }
  }
}
