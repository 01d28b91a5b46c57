// Winner selection per bucket: eligibility, margins, the near-tie rule, overrides.
#include <cmath>

#include "gdn/db/selection.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

namespace dsp = gdn::dispatch;

// Balance: the scenario's single sequences and its 64-sequence batch fill their longest
// sequence's length (equal); its 8 x 1024-token batch with a 2048-token longest, half.
dsp::BucketKey key(int h_qk, int h_v, int seqs_b, int tokens_b, int maxlen_b,
                   int balance = dsp::kBalanceEqual) {
  return {dsp::Pass::Forward, h_qk, h_v, 128, 128, dsp::DType::BF16, seqs_b, tokens_b, maxlen_b,
          balance};
}

const BucketChoice* find(const Selection& s, const dsp::BucketKey& k) {
  for (const BucketChoice& b : s.buckets)
    if (b.key == k) return &b;
  return nullptr;
}

TEST(Buckets, OfProblemsAndTheirDescription) {
  const ProblemRecord p = problem(0, 16, 32, 8, 8192, 2048);
  EXPECT_EQ(bucket_of(p, gdn::Pass::Forward), key(16, 32, 3, 13, 11, dsp::kBalanceHalf));
  EXPECT_EQ(bucket_of(p, gdn::Pass::Backward).pass, dsp::Pass::Backward);
  EXPECT_EQ(describe_bucket(key(16, 32, 3, 13, 11, dsp::kBalanceHalf)),
            "fwd h_qk=16 h_v=32 k=128 v=128 bf16 seqs=[8,16) tokens=[8192,16384) maxlen=[2048,4096) "
            "balance=[1/2,1)");
  ProblemRecord unknown_len = p;
  unknown_len.max_seqlen = 0;
  EXPECT_EQ(bucket_of(unknown_len, gdn::Pass::Forward).max_seqlen_bucket, dsp::kUnknownBucket);
  EXPECT_EQ(bucket_of(unknown_len, gdn::Pass::Forward).balance_bucket, dsp::kUnknownBucket);
  EXPECT_EQ(parse_dtype("fp16"), dsp::DType::FP16);
  EXPECT_FALSE(parse_dtype("half").has_value());
}

TEST(Selection, WinnersMarginsAndEligibility) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const Scenario sc = write_scenario(db);
  const Selection sel = select_winners(db, sc.sweep);
  ASSERT_EQ(sel.buckets.size(), 4u);
  EXPECT_TRUE(sel.skipped.empty());

  const BucketChoice* shared = find(sel, key(16, 32, 0, 12, 12));
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->problem_ids.size(), 2u);
  EXPECT_EQ(shared->variant, "gdn_fwd_A");
  EXPECT_NEAR(shared->score_ms, std::sqrt(1.0 * 1.2), 1e-12);
  EXPECT_EQ(shared->runner_up, "gdn_fwd_B");
  EXPECT_NEAR(*shared->margin, std::sqrt(1.1 * 1.25) / std::sqrt(1.0 * 1.2) - 1, 1e-12);
  EXPECT_EQ(shared->candidates.size(), 3u);  // S failed both problems: not eligible
  EXPECT_FALSE(shared->near_tie_rule_applied);

  const BucketChoice* long_seq = find(sel, key(16, 32, 0, 16, 16));
  ASSERT_TRUE(long_seq);
  EXPECT_EQ(long_seq->variant, "gdn_fwd_B");
  EXPECT_NEAR(*long_seq->margin, 0.25, 1e-12);

  const BucketChoice* packed = find(sel, key(16, 32, 3, 13, 11, dsp::kBalanceHalf));
  ASSERT_TRUE(packed);
  EXPECT_EQ(packed->variant, "gdn_fwd_A");
  EXPECT_EQ(packed->candidates.size(), 3u);  // C crashed there

  const BucketChoice* mha = find(sel, key(32, 32, 0, 12, 12));
  ASSERT_TRUE(mha);
  EXPECT_EQ(mha->variant, "gdn_fwd_C");
  EXPECT_FALSE(mha->runner_up.has_value());
  EXPECT_FALSE(mha->margin.has_value());

  EXPECT_EQ(sel.variants_used(), (std::vector<std::string>{"gdn_fwd_A", "gdn_fwd_B", "gdn_fwd_C"}));
  EXPECT_EQ(shared->candidates[0].buckets_won, 2);  // A is the raw winner of two buckets
}

TEST(Selection, NearTiePrefersTheVariantThatWinsMoreBuckets) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  // A takes 8.1 ms on P2 against B's 8.0: B is 1.25% faster, inside the 2% measured noise.
  const Scenario sc = write_scenario(db, 8.1);
  const Selection sel = select_winners(db, sc.sweep);
  const BucketChoice* long_seq = find(sel, key(16, 32, 0, 16, 16));
  ASSERT_TRUE(long_seq);
  EXPECT_EQ(long_seq->variant, "gdn_fwd_A");
  EXPECT_TRUE(long_seq->near_tie_rule_applied);
  EXPECT_EQ(long_seq->runner_up, "gdn_fwd_B");
  EXPECT_NEAR(*long_seq->margin, 8.0 / 8.1 - 1, 1e-12);  // negative: honest about the choice
  EXPECT_EQ(sel.variants_used(), (std::vector<std::string>{"gdn_fwd_A", "gdn_fwd_C"}));

  // Outside the noise (A at 8.3: 3.75% slower) the fastest keeps the bucket.
  ScratchDir dir2;
  Database db2 = Database::open(dir2.file("r.db"));
  const Scenario sc2 = write_scenario(db2, 8.3);
  EXPECT_EQ(find(select_winners(db2, sc2.sweep), key(16, 32, 0, 16, 16))->variant, "gdn_fwd_B");
}

TEST(Selection, BucketWithoutAnEligibleVariantIsSkippedWithAReason) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const Scenario sc = write_scenario(db);
  ResultsWriter w(db);
  const std::int64_t big = w.register_problem(problem(5, 16, 32, 64, 1 << 20, 1 << 14));
  insert(w, failed(sc.sweep, sc.a, big, Outcome::Timeout, "too slow"));
  insert(w, failed(sc.sweep, sc.b, big, Outcome::Crashed, "fault"));
  const Selection sel = select_winners(db, sc.sweep);
  EXPECT_EQ(sel.buckets.size(), 4u);
  ASSERT_EQ(sel.skipped.size(), 1u);
  EXPECT_EQ(sel.skipped[0].key, key(16, 32, 6, 20, 14));
  EXPECT_EQ(sel.skipped[0].reason, "no variant passed all 1 problem(s) of the bucket");
}

TEST(Selection, OverridesReplaceTheWinnerWithAReason) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const Scenario sc = write_scenario(db);
  const dsp::BucketKey shared = key(16, 32, 0, 12, 12);
  set_override(db, sc.sweep, shared, "gdn_fwd_C", "C keeps shared memory free for the fused norm");
  Selection sel = select_winners(db, sc.sweep);
  const BucketChoice* b = find(sel, shared);
  EXPECT_EQ(b->variant, "gdn_fwd_C");
  EXPECT_TRUE(b->overridden);
  EXPECT_EQ(b->override_reason, "C keeps shared memory free for the fused norm");
  EXPECT_EQ(b->runner_up, "gdn_fwd_A");
  EXPECT_LT(*b->margin, 0);
  // Replacing keeps one override per bucket.
  set_override(db, sc.sweep, shared, "gdn_fwd_B", "second thoughts");
  ASSERT_EQ(list_overrides(db, sc.sweep).size(), 1u);
  EXPECT_EQ(list_overrides(db, sc.sweep)[0].variant, "gdn_fwd_B");
  EXPECT_EQ(list_overrides(db, sc.sweep)[0].key, shared);
  EXPECT_TRUE(clear_override(db, sc.sweep, shared));
  EXPECT_FALSE(clear_override(db, sc.sweep, shared));
  EXPECT_EQ(find(select_winners(db, sc.sweep), shared)->variant, "gdn_fwd_A");
}

TEST(Selection, BadOverridesAreRefused) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const Scenario sc = write_scenario(db);
  auto message = [&](const dsp::BucketKey& k, const std::string& v, const std::string& reason) {
    try {
      set_override(db, sc.sweep, k, v, reason);
    } catch (const DbError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(key(16, 32, 0, 12, 12), "gdn_fwd_A", "").find("reason"), std::string::npos);
  EXPECT_NE(message(key(16, 32, 0, 12, 12), "gdn_fwd_S", "r").find("'gdn_fwd_S' is not eligible"),
            std::string::npos);
  EXPECT_NE(message(key(16, 32, 9, 9, 9), "gdn_fwd_A", "r").find("no selectable bucket"),
            std::string::npos);
  EXPECT_TRUE(list_overrides(db, sc.sweep).empty());
}

}  // namespace
}  // namespace gdn::db::test
