// Pointer rules of gdn_validate_fwd / gdn_validate_bwd, and the workspace rules.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

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

// Every pointer, forward and backward, is checked for the alignment its kernels read it with:
// one byte past it is refused, naming the argument (dq at +1 and q at +2 reached gdn_bwd).
struct MisalignedCase {
  const char* argument;
  size_t offset;      // of the pointer member
  unsigned align;     // the alignment required
};

// Fills every optional pointer too, so each one's check runs.
gdn_fwd_args full_fwd_args() {
  gdn_fwd_args a = valid_fwd_args();
  a.h0 = static_cast<const float*>(fake_device_pointer(20));
  a.ht = static_cast<float*>(fake_device_pointer(21));
  a.workspace = fake_device_pointer(22);
  a.workspace_bytes = 4096;
  return a;
}

gdn_bwd_args full_bwd_args() {
  gdn_bwd_args a = valid_bwd_args();
  a.h0 = static_cast<const float*>(fake_device_pointer(20));
  a.dht = static_cast<const float*>(fake_device_pointer(21));
  a.dh0 = static_cast<float*>(fake_device_pointer(23));
  a.workspace = fake_device_pointer(22);
  a.workspace_bytes = 4096;
  return a;
}

template <typename Args>
Args shifted_by_one(Args a, size_t offset) {
  char* ptr = nullptr;
  std::memcpy(&ptr, reinterpret_cast<char*>(&a) + offset, sizeof ptr);
  ptr += 1;
  std::memcpy(reinterpret_cast<char*>(&a) + offset, &ptr, sizeof ptr);
  return a;
}

// `good` validates; with the pointer of `c` one byte off it is refused, naming it.
template <typename Args>
void expect_misalignment_refused(gdn_status (*validate)(const gdn_problem*, const Args*), const char* where,
                                 const Args& good, const MisalignedCase& c) {
  const gdn_problem p = valid_batched_problem();
  ASSERT_EQ(validate(&p, &good), GDN_OK) << gdn_last_error();
  const Args a = shifted_by_one(good, c.offset);
  EXPECT_TRUE(fails_with(validate(&p, &a), GDN_ERROR_INVALID_ARGUMENT,
                         {where, c.argument, std::to_string(c.align) + "-byte aligned", "1 bytes past"}));
}

class FwdMisaligned : public ::testing::TestWithParam<MisalignedCase> {};
TEST_P(FwdMisaligned, IsRejectedNamingTheArgument) {
  expect_misalignment_refused(gdn_validate_fwd, "gdn_validate_fwd", full_fwd_args(), GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    EachPointer, FwdMisaligned,
    ::testing::Values(MisalignedCase{"a->q", offsetof(gdn_fwd_args, q), 16},
                      MisalignedCase{"a->k", offsetof(gdn_fwd_args, k), 16},
                      MisalignedCase{"a->v", offsetof(gdn_fwd_args, v), 16},
                      MisalignedCase{"a->g", offsetof(gdn_fwd_args, g), 4},
                      MisalignedCase{"a->beta", offsetof(gdn_fwd_args, beta), 4},
                      MisalignedCase{"a->h0", offsetof(gdn_fwd_args, h0), 16},
                      MisalignedCase{"a->o", offsetof(gdn_fwd_args, o), 16},
                      MisalignedCase{"a->ht", offsetof(gdn_fwd_args, ht), 16},
                      MisalignedCase{"a->workspace", offsetof(gdn_fwd_args, workspace), 16}),
    [](const auto& info) { return std::string(info.param.argument).substr(3); });

class BwdMisaligned : public ::testing::TestWithParam<MisalignedCase> {};
TEST_P(BwdMisaligned, IsRejectedNamingTheArgument) {
  expect_misalignment_refused(gdn_validate_bwd, "gdn_validate_bwd", full_bwd_args(), GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    EachPointer, BwdMisaligned,
    ::testing::Values(MisalignedCase{"a->q", offsetof(gdn_bwd_args, q), 16},
                      MisalignedCase{"a->k", offsetof(gdn_bwd_args, k), 16},
                      MisalignedCase{"a->v", offsetof(gdn_bwd_args, v), 16},
                      MisalignedCase{"a->g", offsetof(gdn_bwd_args, g), 4},
                      MisalignedCase{"a->beta", offsetof(gdn_bwd_args, beta), 4},
                      MisalignedCase{"a->h0", offsetof(gdn_bwd_args, h0), 16},
                      MisalignedCase{"a->d_o", offsetof(gdn_bwd_args, d_o), 16},
                      MisalignedCase{"a->dht", offsetof(gdn_bwd_args, dht), 16},
                      MisalignedCase{"a->dq", offsetof(gdn_bwd_args, dq), 16},
                      MisalignedCase{"a->dk", offsetof(gdn_bwd_args, dk), 16},
                      MisalignedCase{"a->dv", offsetof(gdn_bwd_args, dv), 16},
                      MisalignedCase{"a->dg", offsetof(gdn_bwd_args, dg), 4},
                      MisalignedCase{"a->dbeta", offsetof(gdn_bwd_args, dbeta), 4},
                      MisalignedCase{"a->dh0", offsetof(gdn_bwd_args, dh0), 16},
                      MisalignedCase{"a->workspace", offsetof(gdn_bwd_args, workspace), 16}),
    [](const auto& info) { return std::string(info.param.argument).substr(3); });

TEST(ValidateArgs, ChecksTheAlignmentOfCuSeqlensByItsDtype) {
  gdn::api_test::PackedProblem packed;
  const gdn_fwd_args a = valid_fwd_args();
  ASSERT_EQ(gdn_validate_fwd(&packed.p, &a), GDN_OK) << gdn_last_error();
  packed.p.cu_seqlens = static_cast<const char*>(packed.p.cu_seqlens) + 2;
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&packed.p, &a), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens", "4-byte aligned", "2 bytes past"}));
}

TEST(ValidateArgs, Fp16BetaNeedsTwoByteAlignmentOnly) {
  gdn_problem p = valid_batched_problem();
  p.beta_dtype = GDN_BF16;
  gdn_fwd_args a = valid_fwd_args();
  a.beta = static_cast<const char*>(a.beta) + 2;  // a sliced bf16 beta: fine
  EXPECT_EQ(gdn_validate_fwd(&p, &a), GDN_OK) << gdn_last_error();
}

// An output may not share memory with any other tensor of the call; inputs may.
TEST(ValidateArgs, RejectsOutputsSharingMemory) {
  const gdn_problem p = valid_batched_problem();
  gdn_fwd_args fwd = full_fwd_args();
  fwd.o = const_cast<void*>(fwd.q);
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_fwd", "a->o", "memory of its own", "the same address as a->q"}));
  fwd = full_fwd_args();
  fwd.ht = const_cast<float*>(fwd.h0);
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"a->ht", "the same address as a->h0"}));
  fwd = full_fwd_args();
  fwd.o = static_cast<char*>(const_cast<void*>(fwd.v)) + 4096;  // partly over v
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"a->o", "a range overlapping a->v"}));
  fwd = full_fwd_args();
  fwd.workspace = fwd.o;
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT, {"a->o", "a->workspace"}));

  gdn_bwd_args bwd = full_bwd_args();
  bwd.dq = bwd.dk;
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, &bwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_bwd", "a->dq", "the same address as a->dk"}));
  bwd = full_bwd_args();
  bwd.dv = const_cast<void*>(bwd.d_o);
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, &bwd), GDN_ERROR_INVALID_ARGUMENT, {"a->dv", "a->d_o"}));

  fwd = full_fwd_args();
  fwd.k = fwd.q;  // inputs may share memory (k = q is a legal, if odd, call)
  EXPECT_EQ(gdn_validate_fwd(&p, &fwd), GDN_OK) << gdn_last_error();
}

// gdn_validate_fwd / gdn_validate_bwd run the checks gdn_fwd / gdn_bwd run before the device,
// the launch-plan pins included; no environment variable is read.
TEST(ValidateArgs, ValidateRunsTheEntryPointsLaunchPinCheck) {
  const gdn_problem p = valid_batched_problem();
  gdn_fwd_args fwd = valid_fwd_args();
  gdn_bwd_args bwd = valid_bwd_args();
  gdn_launch_options pins;
  gdn_launch_options_init(&pins);
  pins.prepare_overlap = 7;
  fwd.launch = &pins;
  bwd.launch = &pins;
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_fwd", "a->launch->prepare_overlap", "got 7"}));
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, &bwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_bwd", "a->launch->prepare_overlap"}));
  ::setenv("GDN_PREPARE_OVERLAP", "sometimes", 1);  // once an override; now without effect
  pins.prepare_overlap = GDN_PLAN_RULE;
  EXPECT_EQ(gdn_validate_fwd(&p, &fwd), GDN_OK) << gdn_last_error();
  ::unsetenv("GDN_PREPARE_OVERLAP");
}

}  // namespace
