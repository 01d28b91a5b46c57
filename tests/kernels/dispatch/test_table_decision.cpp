// The table-first dispatch decision (kernels/src/table_dispatch.cpp) as a pure host function,
// over the table `gdnlab export` writes from the bundled H200 database (generated at build
// time, see CMakeLists.txt) and variants carrying the real registry names. No device.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "candidates.hpp"
#include "gdn/testing/fake_variant.hpp"
#include "gdn_dispatch_table.hpp"  // generated from tests/data/smoke_h200.sqlite
#include "table_dispatch.hpp"

namespace {

namespace dispatch = gdn::dispatch;
namespace generated = gdn::dispatch::generated;
using gdn::detail::decide_variant;
using gdn::detail::DispatchDecision;
using gdn::detail::DispatchTable;
using gdn::detail::SelectionInput;
using gdn::testing::FakeVariant;

constexpr int kH200Sms = 132;

DispatchTable smoke_table() { return {generated::kEntries, &generated::kTableInfo}; }

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// A shape in an entry's bucket: the smallest sequence count and longest sequence, and the
// fewest tokens of the bucket that give its balance.
dispatch::Shape shape_in(const dispatch::BucketKey& k) {
  dispatch::Shape s;
  s.pass = k.pass;
  s.h_qk = k.h_qk;
  s.h_v = k.h_v;
  s.k = k.k;
  s.v = k.v;
  s.dtype = k.dtype;
  s.num_seqs = dispatch::bucket_floor(k.num_seqs_bucket);
  s.total_tokens = dispatch::bucket_floor(k.total_tokens_bucket);
  s.max_seqlen = k.max_seqlen_bucket == dispatch::kUnknownBucket
                     ? 0
                     : dispatch::bucket_floor(k.max_seqlen_bucket);
  if (k.balance_bucket == dispatch::kUnknownBucket || s.max_seqlen == 0) return s;
  // The balance needs the right tokens for the sequences' capacity: try each end of the
  // sequence-count and longest-sequence buckets, then the tokens that reach each balance.
  const auto top = [](int b) { return dispatch::bucket_floor(b + 1) - 1; };
  const std::int64_t t_lo = s.total_tokens, t_hi = top(k.total_tokens_bucket);
  for (const std::int64_t n : {s.num_seqs, top(k.num_seqs_bucket)})
    for (const std::int64_t m : {s.max_seqlen, top(k.max_seqlen_bucket)})
      for (const std::int64_t tokens : {t_lo, (n * m + 1) / 2, n * m, t_hi})
        if (tokens >= t_lo && tokens <= t_hi &&
            dispatch::balance_bucket(n, tokens, m) == k.balance_bucket) {
          s.num_seqs = n, s.max_seqlen = m, s.total_tokens = tokens;
          return s;
        }
  return s;
}

SelectionInput selection_for(const dispatch::Shape& s) {
  SelectionInput in;
  in.num_seqs = s.num_seqs;
  in.longest = s.max_seqlen > 0 ? s.max_seqlen : s.total_tokens;
  in.Hv = s.h_v;
  in.V = s.v;
  in.sm_count = kH200Sms;
  return in;
}

// Fakes of the forward variants of the real registry: `refused` ones cannot implement the
// problem, `missing` ones are left out (as a pruned build would).
class Pool {
 public:
  explicit Pool(std::string_view refused = {}, std::string_view missing = {}) {
    for (const gdn::Variant* real : gdn::registry()) {
      if (real->pass() != gdn::Pass::Forward || real->name() == missing) continue;
      owned_.push_back(std::make_unique<FakeVariant>(*real, real->name() != refused));
      compiled_.push_back(owned_.back().get());
      if (real->name() != refused) implementable_.push_back(owned_.back().get());
    }
  }
  std::span<const gdn::Variant* const> implementable() const { return implementable_; }
  std::span<const gdn::Variant* const> compiled() const { return compiled_; }

  DispatchDecision decide(const DispatchTable& table, const dispatch::Shape& s) const {
    return decide_variant(table, s, implementable_, compiled_, selection_for(s));
  }
  const gdn::Variant* default_rule(const dispatch::Shape& s) const {
    return gdn::detail::select_default_variant(selection_for(s), implementable_);
  }

 private:
  std::vector<std::unique_ptr<FakeVariant>> owned_;
  std::vector<const gdn::Variant*> compiled_, implementable_;
};

// Entries of the table with the same exact fields (pass, heads, dims, dtype) as `e`.
int same_exact_fields(const dispatch::Entry& e) {
  int n = 0;
  for (const dispatch::Entry& other : generated::kEntries)
    n += other.key.pass == e.key.pass && other.key.h_qk == e.key.h_qk &&
         other.key.h_v == e.key.h_v && other.key.k == e.key.k && other.key.v == e.key.v &&
         other.key.dtype == e.key.dtype;
  return n;
}

TEST(DispatchSmokeTable, HasEntriesAndNamesOnlyRegisteredVariants) {
  ASSERT_FALSE(generated::kEntries.empty());
  for (std::string_view name : generated::kVariantNames)
    EXPECT_NE(gdn::find_variant(name), nullptr) << name << " is not in the registry";
  for (const dispatch::Entry& e : generated::kEntries)
    EXPECT_NE(gdn::find_variant(e.variant), nullptr) << e.variant << " is not in the registry";
}

TEST(DispatchTableDecision, ExactBucketTakesItsEntry) {
  const Pool pool;
  for (const dispatch::Entry& e : generated::kEntries) {
    const DispatchDecision d = pool.decide(smoke_table(), shape_in(e.key));
    ASSERT_NE(d.variant, nullptr);
    EXPECT_EQ(d.entry, &e);
    EXPECT_EQ(d.distance, 0);
    EXPECT_EQ(d.variant->name(), e.variant);
    EXPECT_TRUE(starts_with(d.source, "table: exact bucket {")) << d.source;
    EXPECT_NE(d.source.find(std::string(generated::kTableInfo.device_name)), std::string::npos);
    EXPECT_NE(d.source.find("sweep " + std::to_string(generated::kTableInfo.sweep_id)),
              std::string::npos)
        << d.source;
  }
}

TEST(DispatchTableDecision, UnknownLongestSequenceStillMatchesTheBucket) {
  const Pool pool;
  const dispatch::Entry& e = generated::kEntries.front();
  dispatch::Shape s = shape_in(e.key);
  s.max_seqlen = 0;  // packed, no host offsets, no hint
  const DispatchDecision d = pool.decide(smoke_table(), s);
  EXPECT_EQ(d.entry, &e);
  EXPECT_EQ(d.distance, 0);
}

TEST(DispatchTableDecision, InBetweenShapeTakesTheNearestEntry) {
  const Pool pool;
  for (const dispatch::Entry& e : generated::kEntries) {
    ASSERT_EQ(same_exact_fields(e), 1) << "the test expects one entry per head configuration";
    // One bucket up in tokens and in the longest sequence, the same count and balance.
    dispatch::BucketKey up = e.key;
    ++up.total_tokens_bucket;
    if (up.max_seqlen_bucket != dispatch::kUnknownBucket) ++up.max_seqlen_bucket;
    const dispatch::Shape s = shape_in(up);
    ASSERT_EQ(dispatch::bucket_of(s), up) << "no shape in the bucket above " << e.variant;
    const DispatchDecision d = pool.decide(smoke_table(), s);
    EXPECT_EQ(d.entry, &e);
    EXPECT_EQ(d.distance, 2);
    EXPECT_EQ(d.variant->name(), e.variant);
    EXPECT_TRUE(starts_with(d.source, "table: nearest bucket {")) << d.source;
    EXPECT_NE(d.source.find("at distance 2"), std::string::npos) << d.source;
  }
}

TEST(DispatchTableDecision, FarShapeFallsBackToTheDefaultRule) {
  const Pool pool;
  for (const dispatch::Entry& e : generated::kEntries) {
    dispatch::Shape s = shape_in(e.key);
    s.total_tokens <<= dispatch::kDefaultMaxDistance + 1;  // one bucket step too far
    s.max_seqlen = 0;
    const DispatchDecision d = pool.decide(smoke_table(), s);
    EXPECT_EQ(d.entry, nullptr);
    EXPECT_EQ(d.variant, pool.default_rule(s));
    EXPECT_TRUE(starts_with(d.source, "default rule (no table entry within bucket distance 4"))
        << d.source;
  }
}

TEST(DispatchTableDecision, UnseenHeadConfigurationFallsBackToTheDefaultRule) {
  const Pool pool;
  dispatch::Shape s = shape_in(generated::kEntries.front().key);
  s.h_qk = 4;
  s.h_v = 32;
  const DispatchDecision d = pool.decide(smoke_table(), s);
  EXPECT_EQ(d.entry, nullptr);
  EXPECT_EQ(d.variant, pool.default_rule(s));
  EXPECT_NE(d.source.find("h_qk=4 h_v=32"), std::string::npos) << d.source;
}

TEST(DispatchTableDecision, EntryVariantNotCompiledFallsBackToTheDefaultRule) {
  const dispatch::Entry& e = generated::kEntries.front();
  const Pool pool(/*refused=*/{}, /*missing=*/e.variant);
  const dispatch::Shape s = shape_in(e.key);
  const DispatchDecision d = pool.decide(smoke_table(), s);
  EXPECT_EQ(d.entry, nullptr);
  ASSERT_NE(d.variant, nullptr);
  EXPECT_NE(d.variant->name(), e.variant);
  EXPECT_EQ(d.variant, pool.default_rule(s));
  EXPECT_NE(d.source.find(std::string(e.variant) + ", which is not compiled into this build"),
            std::string::npos)
      << d.source;
}

TEST(DispatchTableDecision, EntryVariantThatCannotImplementFallsBackToTheDefaultRule) {
  const dispatch::Entry& e = generated::kEntries.front();
  const Pool pool(/*refused=*/e.variant);
  const dispatch::Shape s = shape_in(e.key);
  const DispatchDecision d = pool.decide(smoke_table(), s);
  EXPECT_EQ(d.entry, nullptr);
  EXPECT_EQ(d.variant, pool.default_rule(s));
  EXPECT_NE(d.source.find("cannot implement this problem"), std::string::npos) << d.source;
}

TEST(DispatchTableDecision, WithoutATableTheDefaultRuleDecides) {
  const Pool pool;
  for (const dispatch::Entry& e : generated::kEntries) {
    const dispatch::Shape s = shape_in(e.key);
    const DispatchDecision d = pool.decide(DispatchTable{}, s);
    EXPECT_EQ(d.variant, pool.default_rule(s));
    EXPECT_EQ(d.source, "default rule (no dispatch table compiled into this build or loaded)");
  }
}

// The table's winners on the real registry, with candidates from the real can_implement.
TEST(DispatchTableDecision, RealCandidatesTakeTheTableWinner) {
  for (const dispatch::Entry& e : generated::kEntries) {
    gdn_problem p;
    gdn_problem_init(&p, 1, dispatch::bucket_floor(e.key.total_tokens_bucket), e.key.h_qk,
                     e.key.h_v, e.key.k, e.key.v);
    p.qkv_dtype = static_cast<gdn_dtype>(e.key.dtype);
    const auto c = gdn::detail::find_candidates(gdn::Pass::Forward, p, gdn::registry());
    ASSERT_FALSE(c.implementable.empty()) << c.rejections;
    const dispatch::Shape s = shape_in(e.key);
    const DispatchDecision d =
        decide_variant(smoke_table(), s, c.implementable, gdn::registry(), selection_for(s));
    ASSERT_NE(d.variant, nullptr);
    EXPECT_EQ(d.variant->name(), e.variant);
  }
}

}  // namespace
