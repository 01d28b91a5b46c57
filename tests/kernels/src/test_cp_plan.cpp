// gdn_cp_plan (where a rank stands when tokens are split over ranks) and the argument checks
// of the rank-local calls of gdn_cp.h, which run before any device use. CPU only.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "api_test_support.hpp"
#include "gdn/gdn_cp.h"

namespace {

using gdn::api_test::fails_with;

struct Planned {
  gdn_cp_rank_plan plan{};
  std::vector<int64_t> local;
};

Planned plan_of(const std::vector<int64_t>& cu, const std::vector<int64_t>& ranks, int rank) {
  Planned out;
  out.local.assign(cu.size(), -1);
  const int64_t n = static_cast<int64_t>(cu.size()) - 1;
  EXPECT_EQ(gdn_cp_plan(cu.data(), n, ranks.data(), static_cast<int32_t>(ranks.size()) - 1, rank,
                        &out.plan, out.local.data(), static_cast<int64_t>(out.local.size())),
            GDN_OK)
      << gdn_last_error();
  out.local.resize(out.plan.num_local_seqs + 1);
  return out;
}

TEST(CpPlan, OneSequenceOverThreeRanksChainsThroughTheMiddleRank) {
  const std::vector<int64_t> cu = {0, 900}, ranks = {0, 300, 600, 900};
  const Planned first = plan_of(cu, ranks, 0), middle = plan_of(cu, ranks, 1),
                last = plan_of(cu, ranks, 2);
  EXPECT_EQ(first.plan.head_continues, 0);
  EXPECT_EQ(first.plan.tail_continues, 1);
  EXPECT_EQ(first.plan.bwd_chain_first, 1);
  EXPECT_EQ(first.plan.bwd_chain_count, 2);  // ranks 1 and 2, to where the sequence ends
  EXPECT_EQ(middle.plan.head_continues, 1);
  EXPECT_EQ(middle.plan.tail_continues, 1);
  EXPECT_EQ(middle.plan.fwd_chain_first, 0);
  EXPECT_EQ(middle.plan.fwd_chain_count, 1);
  EXPECT_EQ(middle.plan.bwd_chain_count, 1);
  EXPECT_EQ(last.plan.fwd_chain_first, 0);
  EXPECT_EQ(last.plan.fwd_chain_count, 2);
  EXPECT_EQ(last.plan.tail_continues, 0);
  EXPECT_EQ(last.plan.bwd_chain_count, 0);
  EXPECT_EQ(middle.local, (std::vector<int64_t>{0, 300}));
}

TEST(CpPlan, PackedPiecesAreClippedToTheRankAndChainsStopWhereTheirSequenceDoes) {
  const std::vector<int64_t> cu = {0, 410, 841, 1135, 2126, 2512, 4096};
  const std::vector<int64_t> ranks = {0, 1365, 2730, 4096};
  const Planned r1 = plan_of(cu, ranks, 1);
  EXPECT_EQ(r1.plan.token_begin, 1365);
  EXPECT_EQ(r1.plan.first_seq, 3);
  EXPECT_EQ(r1.plan.num_local_seqs, 3);
  EXPECT_EQ(r1.local, (std::vector<int64_t>{0, 2126 - 1365, 2512 - 1365, 1365}));
  EXPECT_EQ(r1.plan.head_continues, 1);
  EXPECT_EQ(r1.plan.fwd_chain_first, 0);
  EXPECT_EQ(r1.plan.fwd_chain_count, 1);
  EXPECT_EQ(r1.plan.tail_continues, 1);
  EXPECT_EQ(r1.plan.bwd_chain_first, 2);
  EXPECT_EQ(r1.plan.bwd_chain_count, 1);
}

TEST(CpPlan, ZeroLengthSequencesBelongToTheRankHoldingTheirOffset) {
  const std::vector<int64_t> cu = {0, 0, 300, 300, 500, 1000, 1000};
  const std::vector<int64_t> ranks = {0, 300, 1000};
  const Planned r0 = plan_of(cu, ranks, 0), r1 = plan_of(cu, ranks, 1);
  EXPECT_EQ(r0.plan.first_seq, 0);
  EXPECT_EQ(r0.plan.num_local_seqs, 2);  // the empty sequence at 0 and [0, 300)
  EXPECT_EQ(r0.plan.tail_continues, 0);  // the boundary falls between two sequences
  EXPECT_EQ(r1.plan.first_seq, 2);
  EXPECT_EQ(r1.plan.num_local_seqs, 4);  // empty at 300, [300, 500), [500, 1000), empty at T
  EXPECT_EQ(r1.plan.head_continues, 0);
  EXPECT_EQ(r1.local, (std::vector<int64_t>{0, 0, 200, 700, 700}));
}

TEST(CpPlan, WithoutOffsetsTheTokensAreOneSequence) {
  const std::vector<int64_t> ranks = {0, 10, 20};
  gdn_cp_rank_plan plan{};
  ASSERT_EQ(gdn_cp_plan(nullptr, 1, ranks.data(), 2, 1, &plan, nullptr, 0), GDN_OK)
      << gdn_last_error();
  EXPECT_EQ(plan.head_continues, 1);
  EXPECT_EQ(plan.num_local_seqs, 1);
}

TEST(CpPlan, RejectsBadRanksAndOffsetsNamingTheArgument) {
  const std::vector<int64_t> cu = {0, 10, 20};
  gdn_cp_rank_plan plan{};
  const std::vector<int64_t> empty_rank = {0, 10, 10, 20};
  EXPECT_TRUE(fails_with(gdn_cp_plan(cu.data(), 2, empty_rank.data(), 3, 0, &plan, nullptr, 0),
                         GDN_ERROR_INVALID_ARGUMENT, {"gdn_cp_plan", "rank_offsets[2]", "got 10"}));
  const std::vector<int64_t> ranks = {0, 10, 21};
  EXPECT_TRUE(fails_with(gdn_cp_plan(cu.data(), 2, ranks.data(), 2, 0, &plan, nullptr, 0),
                         GDN_ERROR_INVALID_ARGUMENT, {"cu_seqlens_host[2]", "21", "got 20"}));
  const std::vector<int64_t> good = {0, 5, 20};
  EXPECT_TRUE(fails_with(gdn_cp_plan(cu.data(), 2, good.data(), 2, 2, &plan, nullptr, 0),
                         GDN_ERROR_INVALID_ARGUMENT, {"rank", "0 .. num_ranks - 1 = 1", "got 2"}));
  int64_t local[2];
  EXPECT_TRUE(fails_with(gdn_cp_plan(cu.data(), 2, good.data(), 2, 1, &plan, local, 2),
                         GDN_ERROR_INVALID_ARGUMENT, {"capacity", "at least 3", "got 2"}));
  EXPECT_TRUE(fails_with(gdn_cp_plan(nullptr, 2, good.data(), 2, 1, &plan, nullptr, 0),
                         GDN_ERROR_INVALID_ARGUMENT, {"num_seqs", "1 when cu_seqlens_host is NULL"}));
}

TEST(CpCarry, BytesAreTheTransitionAndTheStatePerHead) {
  gdn_problem p;
  gdn_problem_init(&p, 1, 100000, 4, 16, 128, 128);
  EXPECT_EQ(gdn_cp_fwd_carry_bytes(&p), size_t{16} * 128 * 256 * 4);
  EXPECT_EQ(gdn_cp_bwd_carry_bytes(&p), size_t{16} * 128 * 128 * 4);
  p.T = 7;  // independent of the tokens
  EXPECT_EQ(gdn_cp_fwd_carry_bytes(&p), size_t{16} * 128 * 256 * 4);
  p.V = 64;  // an invalid problem: no carry size
  EXPECT_EQ(gdn_cp_fwd_carry_bytes(&p), 0u);
  EXPECT_NE(std::string(gdn_last_error()).find("p->V"), std::string::npos) << gdn_last_error();
}

class CpCalls : public ::testing::Test {
 protected:
  void SetUp() override {
    gdn_problem_init(&p_, 1, 256, 2, 8, 128, 128);
    plan_.num_ranks = 2;
    plan_.rank = 1;
    plan_.token_begin = 256;
    plan_.token_end = 512;
    plan_.num_local_seqs = 1;
    plan_.head_continues = 1;
    fwd_ = gdn::api_test::valid_fwd_args();
    bwd_ = gdn::api_test::valid_bwd_args();
  }
  gdn_problem p_{};
  gdn_cp_rank_plan plan_{};
  gdn_fwd_args fwd_{};
  gdn_bwd_args bwd_{};
  float* state_ = static_cast<float*>(gdn::api_test::fake_device_pointer(40));
};

TEST_F(CpCalls, RejectAPlanThatDoesNotMatchTheLocalProblem) {
  plan_.token_end = 500;
  EXPECT_TRUE(fails_with(gdn_cp_fwd_begin(&p_, &plan_, &fwd_, state_, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"gdn_cp_fwd_begin", "p->T", "244", "got 256"}));
  SetUp();
  plan_.num_local_seqs = 2;
  EXPECT_TRUE(fails_with(gdn_cp_fwd_end(&p_, &plan_, &fwd_, state_, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"p->num_seqs", "num_local_seqs = 2", "got 1"}));
  SetUp();
  p_.B = 2;
  p_.num_seqs = 2;
  EXPECT_TRUE(fails_with(gdn_cp_fwd_begin(&p_, &plan_, &fwd_, state_, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"p->B", "got 2"}));
}

TEST_F(CpCalls, RejectMissingCarriesAndStartStates) {
  plan_.tail_continues = 1;
  EXPECT_TRUE(fails_with(gdn_cp_fwd_begin(&p_, &plan_, &fwd_, nullptr, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"carry", "when plan->tail_continues", "NULL"}));
  EXPECT_TRUE(fails_with(gdn_cp_fwd_end(&p_, &plan_, &fwd_, nullptr, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"start_state", "head_continues"}));
  EXPECT_TRUE(fails_with(gdn_cp_bwd_begin(&p_, &plan_, &bwd_, state_, nullptr, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"dcarry", "NULL"}));
  EXPECT_TRUE(fails_with(gdn_cp_bwd_end(&p_, &plan_, &bwd_, state_, nullptr, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"end_dstate", "tail_continues"}));
  EXPECT_TRUE(fails_with(gdn_cp_fwd_begin(&p_, &plan_, &fwd_, state_ + 1, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"carry", "16-byte aligned"}));
}

TEST_F(CpCalls, RejectTheFusedArgumentsAsGdnFwdDoes) {
  fwd_.o = nullptr;
  EXPECT_TRUE(fails_with(gdn_cp_fwd_end(&p_, &plan_, &fwd_, state_, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"gdn_cp_fwd_end", "a->o"}));
}

// Training mode is a whole call's: the rank calls refuse a saved block rather than ignore it.
TEST_F(CpCalls, RefuseASavedBlock) {
  gdn_saved saved{};
  saved.data = gdn::api_test::fake_device_pointer(120);
  saved.bytes = gdn_saved_size(&p_, 0);
  fwd_.save = &saved;
  EXPECT_TRUE(fails_with(gdn_cp_fwd_end(&p_, &plan_, &fwd_, state_, nullptr),
                         GDN_ERROR_UNSUPPORTED, {"gdn_cp_fwd_end", "a->save", "gdn_cp_*"}));
  bwd_.saved = &saved;
  EXPECT_TRUE(fails_with(gdn_cp_bwd_end(&p_, &plan_, &bwd_, state_, state_ + 4096, nullptr),
                         GDN_ERROR_UNSUPPORTED, {"gdn_cp_bwd_end", "a->saved", "gdn_cp_*"}));
}

TEST_F(CpCalls, ChainsRejectAnEmptyChainAndAnOverlappingOutput) {
  const auto* carries = static_cast<const float*>(gdn::api_test::fake_device_pointer(50));
  EXPECT_TRUE(fails_with(gdn_cp_fwd_chain(&p_, carries, 0, state_, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"gdn_cp_fwd_chain", "count", "got 0"}));
  EXPECT_TRUE(fails_with(gdn_cp_fwd_chain(&p_, carries, 2, const_cast<float*>(carries) + 4, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"start_state", "overlapping"}));
  EXPECT_TRUE(fails_with(gdn_cp_bwd_chain(&p_, carries, nullptr, 1, state_, nullptr),
                         GDN_ERROR_INVALID_ARGUMENT, {"gdn_cp_bwd_chain", "dcarries", "NULL"}));
}

}  // namespace
