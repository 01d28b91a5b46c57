// One test per rule on cu_seqlens, its host copy, num_seqs and max_seqlen_hint.
#include <limits>

#include "api_test_support.hpp"

namespace {

using gdn::api_test::fails_with;
using gdn::api_test::fake_device_pointer;
using gdn::api_test::PackedProblem;
using gdn::api_test::valid_batched_problem;

TEST(ValidateSequences, AcceptsPackedSequencesWithZeroLengths) {
  PackedProblem packed;  // 0 + 100 + 156
  EXPECT_EQ(gdn_validate_problem(&packed.p), GDN_OK) << gdn_last_error();
}

TEST(ValidateSequences, AcceptsInt64HostOffsets) {
  PackedProblem packed;
  const int64_t offsets[4] = {0, 10, 10, 256};
  packed.p.cu_seqlens_dtype = GDN_INT64;
  packed.p.cu_seqlens_host = offsets;
  EXPECT_EQ(gdn_validate_problem(&packed.p), GDN_OK) << gdn_last_error();
}

TEST(ValidateSequences, AcceptsDeviceOffsetsWithoutHostCopy) {
  PackedProblem packed;
  packed.p.cu_seqlens_host = nullptr;  // contents cannot be checked; the device copy is not read
  EXPECT_EQ(gdn_validate_problem(&packed.p), GDN_OK) << gdn_last_error();
}

TEST(ValidateSequences, RejectsCuSeqlensWithBatchOtherThanOne) {
  PackedProblem packed;
  packed.p.B = 2;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->B", "B = 1 when cu_seqlens is given", "got 2"}));
}

TEST(ValidateSequences, RejectsOutOfRangeIndexDtype) {
  PackedProblem packed;
  packed.p.cu_seqlens_dtype = static_cast<gdn_index_dtype>(3);
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens_dtype", "GDN_INT32 (0) or GDN_INT64 (1)", "got 3"}));
}

TEST(ValidateSequences, RejectsNegativeNumSeqs) {
  PackedProblem packed;
  packed.p.num_seqs = -1;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->num_seqs", "num_seqs >= 0", "got -1"}));
}

TEST(ValidateSequences, RejectsTokensWithoutSequences) {
  PackedProblem packed;
  packed.p.num_seqs = 0;
  packed.p.cu_seqlens_host = nullptr;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->num_seqs", "at least one sequence", "T = 256", "got 0"}));
}

TEST(ValidateSequences, RejectsInt32OffsetsForMoreThanInt32Tokens) {
  PackedProblem packed;
  packed.p.cu_seqlens_host = nullptr;
  packed.p.Hk = packed.p.Hv = 1;
  packed.p.T = int64_t{std::numeric_limits<int32_t>::max()} + 1;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens_dtype", "GDN_INT64 for p->T = 2147483648", "GDN_INT32"}));
  packed.p.cu_seqlens_dtype = GDN_INT64;
  EXPECT_EQ(gdn_validate_problem(&packed.p), GDN_OK) << gdn_last_error();
}

TEST(ValidateSequences, RejectsOffsetsNotStartingAtZero) {
  PackedProblem packed;
  packed.offsets[0] = 4;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens_host[0]", "expected 0", "got 4"}));
}

TEST(ValidateSequences, RejectsDecreasingOffsets) {
  PackedProblem packed;
  packed.offsets[2] = 300;  // 0, 0, 300, 256
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens_host[3]", "non-decreasing", "cu_seqlens_host[2] = 300",
                          "got 256"}));
}

TEST(ValidateSequences, RejectsOffsetsNotEndingAtT) {
  PackedProblem packed;
  packed.offsets[3] = 200;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens_host[3]", "p->T = 256", "got 200"}));
}

TEST(ValidateSequences, RejectsHostCopyWithoutDeviceOffsets) {
  gdn_problem p = valid_batched_problem();
  const int32_t offsets[3] = {0, 256, 512};
  p.cu_seqlens_host = offsets;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->cu_seqlens_host", "NULL when p->cu_seqlens is NULL",
                          "got a non-NULL pointer"}));
}

TEST(ValidateSequences, RejectsNumSeqsOtherThanBatchWithoutCuSeqlens) {
  gdn_problem p = valid_batched_problem();  // B = 2
  p.num_seqs = 5;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->num_seqs", "0 or p->B = 2", "got 5"}));
  p.num_seqs = 0;
  EXPECT_EQ(gdn_validate_problem(&p), GDN_OK) << gdn_last_error();
}

TEST(ValidateSequences, RejectsNegativeMaxSeqlenHint) {
  PackedProblem packed;
  packed.p.max_seqlen_hint = -1;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->max_seqlen_hint", "got -1"}));
}

TEST(ValidateSequences, RejectsMaxSeqlenHintAboveT) {
  PackedProblem packed;
  packed.p.cu_seqlens_host = nullptr;
  packed.p.max_seqlen_hint = 257;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->max_seqlen_hint", "at most p->T = 256", "got 257"}));
}

TEST(ValidateSequences, RejectsMaxSeqlenHintBelowTheKnownLongest) {
  PackedProblem packed;  // longest sequence: 156
  packed.p.max_seqlen_hint = 100;
  EXPECT_TRUE(fails_with(gdn_validate_problem(&packed.p), GDN_ERROR_INVALID_ARGUMENT,
                         {"p->max_seqlen_hint", "at least the longest sequence, 156", "got 100"}));
  packed.p.max_seqlen_hint = 156;
  EXPECT_EQ(gdn_validate_problem(&packed.p), GDN_OK) << gdn_last_error();
}

}  // namespace
