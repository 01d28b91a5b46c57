// One test per rule of gdn_validate_problem on sizes, heads, head dims, dtypes, layout and
// scale. Each asserts the status and that the message names the argument and the value given.
#include <cmath>
#include <limits>

#include "api_test_support.hpp"

namespace {

using gdn::api_test::fails_with;
using gdn::api_test::valid_batched_problem;

TEST(ValidateProblem, AcceptsAValidProblem) {
  const gdn_problem p = valid_batched_problem();
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(ValidateProblem, RejectsNullProblem) {
  EXPECT_TRUE(fails_with(gdn_validate_problem(nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_problem", "p:", "gdn_problem", "NULL"}));
}

TEST(ValidateProblem, RejectsNegativeBatch) {
  gdn_problem p = valid_batched_problem();
  p.B = -1;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->B", "B >= 0", "got -1"}));
}

TEST(ValidateProblem, RejectsNegativeTokens) {
  gdn_problem p = valid_batched_problem();
  p.T = -5;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->T", "T >= 0", "got -5"}));
}

TEST(ValidateProblem, AcceptsEmptyProblems) {
  gdn_problem p = valid_batched_problem();
  p.T = 0;
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
  p.B = 0;
  p.num_seqs = 0;
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(ValidateProblem, RejectsNonPositiveKeyHeads) {
  gdn_problem p = valid_batched_problem();
  p.Hk = 0;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->Hk", "positive", "got 0"}));
  p.Hk = -2;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->Hk", "got -2"}));
}

TEST(ValidateProblem, RejectsNonPositiveValueHeads) {
  gdn_problem p = valid_batched_problem();
  p.Hv = 0;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->Hv", "positive", "got 0"}));
}

TEST(ValidateProblem, RejectsValueHeadsNotAMultipleOfKeyHeads) {
  gdn_problem p = valid_batched_problem();
  p.Hk = 3;
  p.Hv = 8;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->Hv", "a multiple of p->Hk = 3", "got 8"}));
}

TEST(ValidateProblem, RejectsNonPositiveHeadDims) {
  gdn_problem p = valid_batched_problem();
  p.K = 0;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->K", "positive", "got 0"}));
  p = valid_batched_problem();
  p.V = -128;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->V", "positive", "got -128"}));
}

TEST(ValidateProblem, ReportsUnsupportedHeadDims) {
  gdn_problem p = valid_batched_problem();
  p.K = 64;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_UNSUPPORTED,
                         {"p->K", "128", "got 64"}));
  p = valid_batched_problem();
  p.V = 256;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_UNSUPPORTED,
                         {"p->V", "128", "got 256"}));
}

TEST(ValidateProblem, ReportsUnsupportedQkvDtype) {
  gdn_problem p = valid_batched_problem();
  p.qkv_dtype = GDN_FP32;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_UNSUPPORTED,
                         {"p->qkv_dtype", "GDN_BF16 or GDN_FP16", "GDN_FP32"}));
  p.qkv_dtype = GDN_FP16;
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(ValidateProblem, RejectsOutOfRangeQkvDtype) {
  gdn_problem p = valid_batched_problem();
  p.qkv_dtype = static_cast<gdn_dtype>(7);
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->qkv_dtype", "gdn_dtype", "got 7"}));
}

TEST(ValidateProblem, ReportsBetaDtypeOtherThanFp32OrQkv) {
  gdn_problem p = valid_batched_problem();  // bf16 q/k/v
  p.beta_dtype = GDN_FP16;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_UNSUPPORTED,
                         {"p->beta_dtype", "GDN_FP32 or the qkv dtype GDN_BF16", "GDN_FP16"}));
  p.beta_dtype = GDN_BF16;
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(ValidateProblem, RejectsOutOfRangeBetaDtype) {
  gdn_problem p = valid_batched_problem();
  p.beta_dtype = static_cast<gdn_dtype>(-1);
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->beta_dtype", "got -1"}));
}

TEST(ValidateProblem, RejectsOutOfRangeStateLayout) {
  gdn_problem p = valid_batched_problem();
  p.state_layout = static_cast<gdn_state_layout>(2);
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->state_layout", "GDN_STATE_KV (0) or GDN_STATE_VK (1)", "got 2"}));
  p.state_layout = GDN_STATE_VK;
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(ValidateProblem, RejectsNonFiniteScale) {
  gdn_problem p = valid_batched_problem();
  p.scale = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->scale", "finite", "got nan"}));
  p.scale = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->scale", "got inf"}));
}

TEST(ValidateProblem, RejectsTokenTensorsOverflowing64BitIndexing) {
  gdn_problem p = valid_batched_problem();
  p.B = 1;
  p.num_seqs = 1;
  p.T = int64_t{1} << 52;  // T * Hk * K * 2 bytes = 2^52 * 2 * 128 * 2 = 2^62 fits; Hv = 8 not
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->B * p->T * p->Hv * p->V", "fits in int64", "T = 4503599627370496",
                          "overflows"}));
  p.T = int64_t{1} << 62;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->B * p->T * p->Hk * p->K", "overflows"}));
}

TEST(ValidateProblem, RejectsBatchTimesTokensOverflowing) {
  gdn_problem p = valid_batched_problem();
  p.B = int64_t{1} << 40;
  p.T = int64_t{1} << 40;
  p.num_seqs = 0;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->B * p->T", "B = 1099511627776", "overflows"}));
}

TEST(ValidateProblem, RejectsStateOverflowing64BitIndexing) {
  gdn_problem p = valid_batched_problem();
  p.B = 1;
  p.T = 0;  // no tokens: only the states (one per sequence) are large
  p.cu_seqlens = gdn::api_test::fake_device_pointer(9);
  p.num_seqs = int64_t{1} << 50;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->num_seqs * p->Hv * p->K * p->V", "h0, ht", "overflows"}));
}

}  // namespace
