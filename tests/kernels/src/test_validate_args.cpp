// Pointer rules of gdn_validate_fwd / gdn_validate_bwd, and the workspace rules.
#include <cstddef>
#include <cstring>

#include "api_test_support.hpp"
#include "workspace.hpp"

namespace {

using gdn::api_test::fails_with;
using gdn::api_test::fake_device_pointer;
using gdn::api_test::valid_batched_problem;
using gdn::api_test::valid_bwd_args;
using gdn::api_test::valid_fwd_args;

TEST(ValidateFwdArgs, AcceptsRequiredPointersWithOptionalStatesAbsent) {
  const gdn_problem p = valid_batched_problem();
  const gdn_fwd_args a = valid_fwd_args();  // h0, ht, workspace NULL
  EXPECT_EQ(gdn_validate_fwd(&p, &a), GDN_OK) << gdn_last_error();
}

TEST(ValidateFwdArgs, RejectsNullArgs) {
  const gdn_problem p = valid_batched_problem();
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_fwd", "a:", "gdn_fwd_args", "NULL"}));
}

TEST(ValidateFwdArgs, ChecksTheProblemFirst) {
  gdn_problem p = valid_batched_problem();
  p.Hv = 7;
  const gdn_fwd_args a = valid_fwd_args();
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &a), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_fwd", "p->Hv", "got 7"}));
}

struct PointerCase {
  const char* argument;
  size_t offset;       // of the pointer member in the args struct
  const char* tensor;  // a fragment of the expected tensor description
};

class FwdRequiredPointer : public ::testing::TestWithParam<PointerCase> {};

TEST_P(FwdRequiredPointer, RejectsNull) {
  const gdn_problem p = valid_batched_problem();
  gdn_fwd_args a = valid_fwd_args();
  const void* null = nullptr;
  std::memcpy(reinterpret_cast<char*>(&a) + GetParam().offset, &null, sizeof null);
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &a), GDN_ERROR_INVALID_ARGUMENT,
                         {GetParam().argument, GetParam().tensor, "512 tokens", "got NULL"}));
}

INSTANTIATE_TEST_SUITE_P(
    EachPointer, FwdRequiredPointer,
    ::testing::Values(PointerCase{"a->q", offsetof(gdn_fwd_args, q), "[B, T, Hk, K] bf16"},
                      PointerCase{"a->k", offsetof(gdn_fwd_args, k), "[B, T, Hk, K] bf16"},
                      PointerCase{"a->v", offsetof(gdn_fwd_args, v), "[B, T, Hv, V] bf16"},
                      PointerCase{"a->g", offsetof(gdn_fwd_args, g), "[B, T, Hv] fp32"},
                      PointerCase{"a->beta", offsetof(gdn_fwd_args, beta), "[B, T, Hv] fp32"},
                      PointerCase{"a->o", offsetof(gdn_fwd_args, o), "[B, T, Hv, V] bf16"}),
    [](const auto& info) { return std::string(info.param.argument).substr(3); });

class FwdAlignedPointer : public ::testing::TestWithParam<PointerCase> {};

TEST_P(FwdAlignedPointer, RejectsAnAddressOffA16ByteBoundary) {
  const gdn_problem p = valid_batched_problem();
  gdn_fwd_args a = valid_fwd_args();
  void* ptr = nullptr;
  std::memcpy(&ptr, reinterpret_cast<char*>(&a) + GetParam().offset, sizeof ptr);
  ptr = static_cast<char*>(ptr) + 2;  // one bf16 element in: a sliced tensor
  std::memcpy(reinterpret_cast<char*>(&a) + GetParam().offset, &ptr, sizeof ptr);
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &a), GDN_ERROR_INVALID_ARGUMENT,
                         {GetParam().argument, "16-byte aligned", GetParam().tensor,
                          "2 bytes past a 16-byte boundary"}));
}

INSTANTIATE_TEST_SUITE_P(
    EachVectorTensor, FwdAlignedPointer,
    ::testing::Values(PointerCase{"a->q", offsetof(gdn_fwd_args, q), "[B, T, Hk, K] bf16"},
                      PointerCase{"a->k", offsetof(gdn_fwd_args, k), "[B, T, Hk, K] bf16"},
                      PointerCase{"a->v", offsetof(gdn_fwd_args, v), "[B, T, Hv, V] bf16"},
                      PointerCase{"a->o", offsetof(gdn_fwd_args, o), "[B, T, Hv, V] bf16"}),
    [](const auto& info) { return std::string(info.param.argument).substr(3); });

class BwdRequiredPointer : public ::testing::TestWithParam<PointerCase> {};

TEST_P(BwdRequiredPointer, RejectsNull) {
  const gdn_problem p = valid_batched_problem();
  gdn_bwd_args a = valid_bwd_args();
  const void* null = nullptr;
  std::memcpy(reinterpret_cast<char*>(&a) + GetParam().offset, &null, sizeof null);
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, &a), GDN_ERROR_INVALID_ARGUMENT,
                         {GetParam().argument, GetParam().tensor, "got NULL"}));
}

INSTANTIATE_TEST_SUITE_P(
    EachPointer, BwdRequiredPointer,
    ::testing::Values(PointerCase{"a->q", offsetof(gdn_bwd_args, q), "[B, T, Hk, K]"},
                      PointerCase{"a->k", offsetof(gdn_bwd_args, k), "[B, T, Hk, K]"},
                      PointerCase{"a->v", offsetof(gdn_bwd_args, v), "[B, T, Hv, V]"},
                      PointerCase{"a->g", offsetof(gdn_bwd_args, g), "[B, T, Hv] fp32"},
                      PointerCase{"a->beta", offsetof(gdn_bwd_args, beta), "[B, T, Hv]"},
                      PointerCase{"a->d_o", offsetof(gdn_bwd_args, d_o), "[B, T, Hv, V]"},
                      PointerCase{"a->dq", offsetof(gdn_bwd_args, dq), "[B, T, Hk, K]"},
                      PointerCase{"a->dk", offsetof(gdn_bwd_args, dk), "[B, T, Hk, K]"},
                      PointerCase{"a->dv", offsetof(gdn_bwd_args, dv), "[B, T, Hv, V]"},
                      PointerCase{"a->dg", offsetof(gdn_bwd_args, dg), "[B, T, Hv] fp32"},
                      PointerCase{"a->dbeta", offsetof(gdn_bwd_args, dbeta), "[B, T, Hv]"}),
    [](const auto& info) { return std::string(info.param.argument).substr(3); });

TEST(ValidateBwdArgs, AcceptsOptionalStatesAbsent) {
  const gdn_problem p = valid_batched_problem();
  const gdn_bwd_args a = valid_bwd_args();  // h0, dht, dh0 NULL
  EXPECT_EQ(gdn_validate_bwd(&p, &a), GDN_OK) << gdn_last_error();
}

TEST(ValidateBwdArgs, RejectsNullArgs) {
  const gdn_problem p = valid_batched_problem();
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_bwd", "a:", "gdn_bwd_args", "NULL"}));
}

TEST(ValidateArgs, AllowsNullTokenTensorsWhenThereAreNoTokens) {
  gdn_problem p = valid_batched_problem();
  p.T = 0;  // frameworks hand out NULL data pointers for empty tensors
  const gdn_fwd_args fwd{};
  const gdn_bwd_args bwd{};
  EXPECT_EQ(gdn_validate_fwd(&p, &fwd), GDN_OK) << gdn_last_error();
  EXPECT_EQ(gdn_validate_bwd(&p, &bwd), GDN_OK) << gdn_last_error();
}

TEST(ValidateArgs, RejectsWorkspaceBytesWithNullWorkspace) {
  const gdn_problem p = valid_batched_problem();
  gdn_fwd_args fwd = valid_fwd_args();
  fwd.workspace_bytes = 4096;
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"a->workspace_bytes", "0 when the workspace pointer is NULL",
                          "got 4096 bytes"}));
  gdn_bwd_args bwd = valid_bwd_args();
  bwd.workspace_bytes = 1;
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, &bwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"a->workspace_bytes", "got 1 bytes"}));
}

TEST(CheckWorkspace, RejectsAWorkspaceSmallerThanTheVariantNeeds) {
  const gdn_status s = gdn::detail::check_workspace("gdn_fwd", fake_device_pointer(1), 1000,
                                                    4096, "gdn_fwd_sm90_staged_v64_cp0");
  EXPECT_TRUE(fails_with(s, GDN_ERROR_WORKSPACE,
                         {"gdn_fwd", "a->workspace_bytes", "at least 4096 bytes",
                          "gdn_fwd_sm90_staged_v64_cp0", "got 1000 bytes"}));
}

TEST(CheckWorkspace, AcceptsEnoughOrLibraryAllocated) {
  EXPECT_EQ(gdn::detail::check_workspace("gdn_fwd", fake_device_pointer(1), 4096, 4096, "v"),
            GDN_OK);
  EXPECT_EQ(gdn::detail::check_workspace("gdn_fwd", nullptr, 0, 1 << 20, "v"), GDN_OK);
}

}  // namespace
