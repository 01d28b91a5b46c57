// The header-only lookup rule, checked at compile time and at run time.
#include <gtest/gtest.h>

#include <array>

#include "gdn/dispatch_table.hpp"

namespace gdn::dispatch {
namespace {

static_assert(log2_bucket(0) == 0 && log2_bucket(1) == 0 && log2_bucket(2) == 1);
static_assert(log2_bucket(3) == 1 && log2_bucket(4) == 2 && log2_bucket(4095) == 11);
static_assert(log2_bucket(4096) == 12 && log2_bucket(std::int64_t{1} << 40) == 40);
static_assert(bucket_floor(12) == 4096 && bucket_floor(kUnknownBucket) == 0);

constexpr BucketKey fwd(int seqs_b, int tokens_b, int maxlen_b, int h_qk = 16) {
  return {Pass::Forward, h_qk, 32, 128, 128, DType::BF16, seqs_b, tokens_b, maxlen_b};
}
constexpr std::array<Entry, 4> kTable{{
    {fwd(0, 12, 12), "A", 0.07},
    {fwd(0, 16, 16), "B", 0.25},
    {fwd(3, 13, 11), "A", 0.25},
    {fwd(0, 12, 12, 32), "C", kNoRunnerUp},
}};
constexpr Shape shape(std::int64_t seqs, std::int64_t tokens, std::int64_t maxlen, int h_qk = 16) {
  return {Pass::Forward, h_qk, 32, 128, 128, DType::BF16, seqs, tokens, maxlen};
}

// Exact bucket.
static_assert(lookup(kTable, shape(1, 4500, 4500)).exact());
static_assert(lookup(kTable, shape(1, 4500, 4500)).entry == &kTable[0]);
static_assert(lookup(kTable, shape(1, 4096, 4096, 32)).entry->variant == "C");
// Between buckets: 32768 tokens is one bucket below B's and three above A's.
static_assert(lookup(kTable, shape(1, 32768, 32768)).entry == &kTable[1]);
static_assert(lookup(kTable, shape(1, 32768, 32768)).distance == 2);
// max_seqlen unknown: that term is free; 8192 tokens is one bucket from A's (0,12).
static_assert(lookup(kTable, shape(1, 8192, 0)).entry == &kTable[0]);
static_assert(lookup(kTable, shape(1, 8192, 0)).distance == 1);
// Beyond the measured range: 2^24 tokens is 8 + 8 buckets from B: no entry.
static_assert(!lookup(kTable, shape(1, 1 << 24, 1 << 24)).found());
static_assert(lookup(kTable, shape(1, 1 << 24, 1 << 24), 16).entry == &kTable[1]);
// Different heads, dtype or pass never match.
static_assert(!lookup(kTable, shape(1, 4096, 4096, 8)).found());

// Balance: total tokens over the sequences' capacity at the longest length.
static_assert(balance_bucket(1, 4096, 4096) == kBalanceEqual);
static_assert(balance_bucket(2, 32768, 16384) == kBalanceEqual);    // 16384 + 16384
static_assert(balance_bucket(2, 32768, 24576) == kBalanceHalf);     // 24576 + 8192: 2/3
static_assert(balance_bucket(2, 16384, 12288) == kBalanceHalf);     // 12288 + 4096: 2/3
static_assert(balance_bucket(8, 8192, 4096) == kBalanceRagged);     // one long, seven short: 1/4
static_assert(balance_bucket(4, 8192, 0) == kUnknownBucket && balance_bucket(0, 0, 64) == kUnknownBucket);
static_assert(bucket_of(shape(2, 32768, 16384)).balance_bucket == kBalanceEqual);
// A table written before the balance was keyed (-1 on every entry) matches any balance exactly.
static_assert(lookup(kTable, shape(2, 4500, 4500)).distance == 1);  // seqs one bucket off only

TEST(DispatchLookup, BalanceSeparatesEqualFromRaggedBatchesOfOneLongestBucket) {
  constexpr auto pair = [](int balance) {
    BucketKey k = fwd(1, 15, 14);
    k.balance_bucket = balance;
    return k;
  };
  constexpr std::array<Entry, 2> table{{{pair(kBalanceHalf), "segments", 0.2}, {pair(kBalanceEqual), "unsplit", 0.3}}};
  // Two sequences of 32768 tokens in all, longest 16384 (equal) or 24576 / 28672 (ragged).
  EXPECT_EQ(lookup(table, shape(2, 32768, 16384)).entry->variant, "unsplit");
  EXPECT_TRUE(lookup(table, shape(2, 32768, 16384)).exact());
  EXPECT_EQ(lookup(table, shape(2, 32768, 24576)).entry->variant, "segments");
  EXPECT_EQ(lookup(table, shape(2, 32768, 28672)).entry->variant, "segments");
  // Longest unknown: the balance is unknown too and matches either; table order decides.
  EXPECT_EQ(lookup(table, shape(2, 32768, 0)).entry->variant, "segments");
  EXPECT_EQ(lookup(table, shape(2, 32768, 0)).distance, 0);
  // Three sequences, one long (0.37 of their capacity, ragged): one balance bucket from
  // "segments", two from "unsplit".
  const Match m = lookup(table, shape(3, 33000, 30000));
  EXPECT_EQ(m.entry->variant, "segments");
  EXPECT_EQ(m.distance, 1);
}

TEST(DispatchLookup, TiesGoToTheSmallerTokenDistanceThenTableOrder) {
  // Query (seqs 2, tokens 13, maxlen 11): A@(0,12,12) is 2+1+1 = 4 away, A@(3,13,11) is 1 away.
  EXPECT_EQ(lookup(kTable, BucketKey{fwd(2, 13, 11)}).entry, &kTable[2]);
  // Two entries at distance 2: (1,12,12) vs a seqs-only neighbour and a tokens-only neighbour.
  constexpr std::array<Entry, 2> two{{{fwd(0, 14, 12), "tokens_far", 0.1}, {fwd(2, 12, 12), "seqs_far", 0.1}}};
  EXPECT_EQ(lookup(two, BucketKey{fwd(0, 12, 12)}).entry->variant, "seqs_far");
  constexpr std::array<Entry, 2> same{{{fwd(0, 13, 12), "first", 0.1}, {fwd(0, 11, 12), "second", 0.1}}};
  EXPECT_EQ(lookup(same, BucketKey{fwd(0, 12, 12)}).entry->variant, "first");
}

TEST(DispatchLookup, OtherDtypeAndPassFindNothing) {
  Shape s = shape(1, 4096, 4096);
  s.dtype = DType::FP16;
  EXPECT_FALSE(lookup(kTable, s).found());
  s = shape(1, 4096, 4096);
  s.pass = Pass::Backward;
  EXPECT_FALSE(lookup(kTable, s).found());
  EXPECT_FALSE(lookup(std::span<const Entry>{}, shape(1, 4096, 4096)).found());
}

}  // namespace
}  // namespace gdn::dispatch
