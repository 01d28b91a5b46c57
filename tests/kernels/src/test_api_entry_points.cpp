// The entry points around validation: defaults, status strings, the thread-local last error,
// and what gdn_fwd / gdn_bwd / the queries answer on a machine without a usable device.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <set>
#include <string>
#include <thread>

#include "api_test_support.hpp"
#include "gdn/variant.hpp"

namespace {

using gdn::api_test::fails_with;
using gdn::api_test::valid_batched_problem;
using gdn::api_test::valid_bwd_args;
using gdn::api_test::valid_fwd_args;

TEST(ProblemInit, FillsDefaults) {
  gdn_problem p;
  gdn_problem_init(&p, 3, 100, 4, 16, 128, 128);
  EXPECT_EQ(p.B, 3);
  EXPECT_EQ(p.T, 100);
  EXPECT_EQ(p.num_seqs, 3);
  EXPECT_EQ(p.cu_seqlens, nullptr);
  EXPECT_EQ(p.cu_seqlens_host, nullptr);
  EXPECT_EQ(p.max_seqlen_hint, 0);
  EXPECT_EQ(p.Hk, 4);
  EXPECT_EQ(p.Hv, 16);
  EXPECT_EQ(p.qkv_dtype, GDN_BF16);
  EXPECT_EQ(p.beta_dtype, GDN_FP32);
  EXPECT_EQ(p.state_layout, GDN_STATE_KV);
  EXPECT_FLOAT_EQ(p.scale, 1.0f / std::sqrt(128.0f));
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(StatusStrings, AreDistinctAndReadable) {
  std::set<std::string> seen;
  for (gdn_status s : {GDN_OK, GDN_ERROR_INVALID_ARGUMENT, GDN_ERROR_UNSUPPORTED,
                       GDN_ERROR_NOT_AVAILABLE, GDN_ERROR_CUDA, GDN_ERROR_WORKSPACE,
                       GDN_ERROR_INTERNAL}) {
    const std::string text = gdn_status_string(s);
    EXPECT_FALSE(text.empty());
    EXPECT_TRUE(seen.insert(text).second) << "duplicate status string: " << text;
  }
  EXPECT_STREQ(gdn_status_string(static_cast<gdn_status>(99)), "unknown status");
}

TEST(LastError, IsPerThread) {
  gdn_problem p = valid_batched_problem();
  p.Hk = 0;
  ASSERT_EQ(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT);
  const std::string mine = gdn_last_error();
  std::string other_thread_before, other_thread_after;
  std::thread worker([&] {
    other_thread_before = gdn_last_error();
    gdn_problem q = valid_batched_problem();
    q.T = -1;
    gdn_validate_problem(&q);
    other_thread_after = gdn_last_error();
  });
  worker.join();
  EXPECT_EQ(other_thread_before, "");
  EXPECT_NE(other_thread_after.find("p->T"), std::string::npos) << other_thread_after;
  EXPECT_EQ(gdn_last_error(), mine);
}

TEST(Version, IsReported) { EXPECT_STRNE(gdn_version(), ""); }

TEST(EntryPoints, ValidateBeforeAnythingElse) {
  gdn_problem p = valid_batched_problem();
  p.K = 96;
  const gdn_fwd_args fwd = valid_fwd_args();
  const gdn_bwd_args bwd = valid_bwd_args();
  EXPECT_TRUE(fails_with(gdn_fwd(&p, &fwd, nullptr), GDN_ERROR_UNSUPPORTED,
                         {"gdn_fwd", "p->K", "got 96"}));
  EXPECT_TRUE(fails_with(gdn_bwd(&p, &bwd, nullptr), GDN_ERROR_UNSUPPORTED,
                         {"gdn_bwd", "p->K", "got 96"}));
  EXPECT_TRUE(fails_with(gdn_fwd(nullptr, &fwd, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd", "p:", "NULL"}));
  p = valid_batched_problem();
  EXPECT_TRUE(fails_with(gdn_fwd(&p, nullptr, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd", "a:", "NULL"}));
}

// The plan pins of a call (a->launch): each field GDN_PLAN_RULE or a value it takes; anything
// else is rejected before the device is looked at, naming the field, its values and the value
// given, by gdn_fwd and gdn_bwd alike.
TEST(EntryPoints, RejectInvalidLaunchOptions) {
  const gdn_problem p = valid_batched_problem();
  struct Case {
    std::int32_t gdn_launch_options::*field;
    int value;
    std::string name, values;
  };
  const Case cases[] = {
      {&gdn_launch_options::prepare_overlap, 3, "prepare_overlap", "2 (SMs of its own)"},
      {&gdn_launch_options::cp_first_segment, 2, "cp_first_segment", "0 or 1"},
      {&gdn_launch_options::prepare_split, -2, "prepare_split", "0 or 1"},
      {&gdn_launch_options::prepare_heads, 0, "prepare_heads", "1 to 8"},
      {&gdn_launch_options::fixup_cols, 12, "fixup_cols", "8, 16 or 32"},
      {&gdn_launch_options::local_heads, 9, "local_heads", "1 to 8"},
      {&gdn_launch_options::recompute_cp_chunks, 24, "recompute_cp_chunks", "0 (no CP), 16, 32, 64 or 128"},
      {&gdn_launch_options::pass1_beside_recompute, 2, "pass1_beside_recompute", "0 or 1"},
      {&gdn_launch_options::group_sum_beside, -2, "group_sum_beside", "0 or 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    gdn_launch_options o;
    gdn_launch_options_init(&o);
    o.*c.field = c.value;
    gdn_fwd_args fwd = valid_fwd_args();
    fwd.launch = &o;
    gdn_bwd_args bwd = valid_bwd_args();
    bwd.launch = &o;
    EXPECT_TRUE(fails_with(gdn_fwd(&p, &fwd, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                           {"gdn_fwd", "a->launch->" + c.name, c.values, "got " + std::to_string(c.value)}));
    EXPECT_TRUE(fails_with(gdn_bwd(&p, &bwd, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                           {"gdn_bwd", "a->launch->" + c.name}));
  }
}

// A heads pin must divide the problem's group of value heads per k head.
TEST(EntryPoints, RejectPrepareHeadsThatDoNotDivideTheGroup) {
  const gdn_problem p = valid_batched_problem();
  ASSERT_EQ(p.Hv / p.Hk, 4);  // 2 / 8 heads
  gdn_launch_options o;
  gdn_launch_options_init(&o);
  o.prepare_heads = 3;
  gdn_fwd_args fwd = valid_fwd_args();
  fwd.launch = &o;
  EXPECT_TRUE(fails_with(gdn_fwd(&p, &fwd, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd", "a->launch->prepare_heads", "divisor of Hv / Hk"}));
  gdn_launch_options_init(&o);
  o.local_heads = 3;
  gdn_bwd_args bwd = valid_bwd_args();
  bwd.launch = &o;
  EXPECT_TRUE(fails_with(gdn_bwd(&p, &bwd, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_bwd", "a->launch->local_heads", "divisor of Hv / Hk"}));
}

// The options start at the rule, and the rule is accepted (the call then fails only for want
// of a device, or runs).
TEST(EntryPoints, LaunchOptionsInitIsTheRule) {
  gdn_launch_options o;
  o.prepare_overlap = 5;
  gdn_launch_options_init(&o);
  EXPECT_EQ(o.prepare_overlap, GDN_PLAN_RULE);
  EXPECT_EQ(o.cp_first_segment, GDN_PLAN_RULE);
  EXPECT_EQ(o.prepare_split, GDN_PLAN_RULE);
  EXPECT_EQ(o.prepare_heads, GDN_PLAN_RULE);
  EXPECT_EQ(o.fixup_cols, GDN_PLAN_RULE);
  EXPECT_EQ(o.local_heads, GDN_PLAN_RULE);
  EXPECT_EQ(o.recompute_cp_chunks, GDN_PLAN_RULE);
  EXPECT_EQ(o.pass1_beside_recompute, GDN_PLAN_RULE);
  EXPECT_EQ(o.group_sum_beside, GDN_PLAN_RULE);
  const gdn_problem p = valid_batched_problem();
  EXPECT_EQ(gdn_validate_fwd(&p, nullptr), GDN_ERROR_INVALID_ARGUMENT);
  gdn_fwd_args fwd = valid_fwd_args();
  fwd.launch = &o;
  EXPECT_EQ(gdn_validate_fwd(&p, &fwd), GDN_OK) << gdn_last_error();
}

TEST(EntryPoints, WorkspaceSizeOfAnInvalidProblemIsZeroWithAMessage) {
  gdn_problem p = valid_batched_problem();
  p.Hv = 5;
  EXPECT_EQ(gdn_fwd_workspace_size(&p), 0u);
  EXPECT_TRUE(fails_with(GDN_ERROR_INVALID_ARGUMENT, GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd_workspace_size", "p->Hv", "got 5"}));
  EXPECT_EQ(gdn_bwd_workspace_size(nullptr), 0u);
  EXPECT_TRUE(fails_with(GDN_ERROR_INVALID_ARGUMENT, GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_bwd_workspace_size", "p:", "NULL"}));
}

// The workspace size needs no device: the largest need over the compiled variants.
TEST(EntryPoints, WorkspaceSizeCoversEveryImplementableVariant) {
  const gdn_problem p = valid_batched_problem();
  size_t largest = 0, compiled = 0;
  for (const gdn::Variant* v : gdn::registry()) {
    if (v->pass() != gdn::Pass::Forward) continue;
    ++compiled;
    if (v->can_implement(p).ok) largest = std::max(largest, v->workspace_bytes(p));
  }
  EXPECT_EQ(gdn_fwd_workspace_size(&p), largest);
  if (compiled == 0)
    EXPECT_NE(std::string(gdn_last_error()).find("no kernel variant compiled for the forward"),
              std::string::npos)
        << gdn_last_error();
}

class WithoutDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gdn_device_available()) GTEST_SKIP() << "a usable CUDA device is present";
  }
};

TEST_F(WithoutDevice, ForwardReportsNotAvailable) {
  const gdn_problem p = valid_batched_problem();
  const gdn_fwd_args a = valid_fwd_args();
  EXPECT_TRUE(fails_with(gdn_fwd(&p, &a, nullptr), GDN_ERROR_NOT_AVAILABLE,
                         {"gdn_fwd", "CUDA device"}));
}

TEST_F(WithoutDevice, BackwardReportsNotAvailable) {
  const gdn_problem p = valid_batched_problem();
  const gdn_bwd_args a = valid_bwd_args();
  EXPECT_TRUE(fails_with(gdn_bwd(&p, &a, nullptr), GDN_ERROR_NOT_AVAILABLE,
                         {"gdn_bwd", "CUDA device"}));
}

TEST_F(WithoutDevice, VariantNameIsNullWithAMessage) {
  const gdn_problem p = valid_batched_problem();
  EXPECT_EQ(gdn_fwd_variant_name(&p), nullptr);
  EXPECT_TRUE(fails_with(GDN_ERROR_NOT_AVAILABLE, GDN_ERROR_NOT_AVAILABLE,
                         {"gdn_fwd_variant_name", "CUDA device"}));
}

TEST_F(WithoutDevice, DeviceAvailableSaysWhy) {
  EXPECT_EQ(gdn_device_available(), 0);
  EXPECT_NE(std::string(gdn_last_error()).find("CUDA device"), std::string::npos)
      << gdn_last_error();
}

}  // namespace
