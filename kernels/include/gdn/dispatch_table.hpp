// The dispatch-table format: entries, shape buckets and the lookup rule. Part of libgdn's
// public headers, header-only, standard library and libgdn's own headers only (no SQLite, no
// CUDA): libgdn reads tables of these entries (compiled in, or loaded from a dispatch.json at
// run time with gdn_load_dispatch_table), `gdnlab export` writes them, and the lab's selection
// model buckets problems with the same functions. A header written by `gdnlab export` compiles
// with -I on libgdn's include folder alone.
//
// Buckets. A problem is keyed by
//   exact:  pass, h_qk, h_v, k, v, dtype
//   log2:   num_seqs, total_tokens, max_seqlen, each as log2_bucket(n) = floor(log2(n)) for
//           n >= 1, so bucket b holds [2^b, 2^(b+1)); 0 tokens falls in bucket 0 with 1.
//           max_seqlen may be unknown at dispatch (cu_seqlens live on the device and dispatch
//           never copies them to the host): kUnknownBucket then matches any bucket.
//   balance: how evenly the tokens fill the sequences, total_tokens / (num_seqs x max_seqlen)
//           in (0, 1], as balance_bucket(): 2 when every sequence is as long as the longest,
//           1 from 1/2, 0 below. Equal and ragged batches of the same longest sequence want
//           different variants (two sequences of 16384 tokens ran best unsplit, 24576 + 8192
//           and 28672 + 4096 in 128-chunk segments: the longest chain is the critical path
//           and the short sequences leave SMs idle beside it). Unknown with max_seqlen.
//
// Lookup rule (lookup() below), in order:
//   1. an entry whose exact fields and four buckets equal the query's: that entry;
//   2. else, among entries with the same exact fields, the nearest by the L1 distance in
//      bucket space, |d num_seqs| + |d total_tokens| + |d max_seqlen| + |d balance| (the last
//      two terms 0 when either side is unknown), if that distance is <= max_distance (default
//      4: at most 16x away in total); ties go to the smaller total_tokens distance, then to the earlier entry
//      (tables are sorted by key, so the smaller bucket);
//   3. else no entry: the caller uses its default selection.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "gdn/gdn.h"
#include "gdn/launch_plan.hpp"
#include "gdn/variant_config.hpp"

namespace gdn::dispatch {

// Same numeric values as gdn_dtype in gdn/gdn.h (GDN_BF16 = 0, GDN_FP16 = 1, GDN_FP32 = 2).
enum class DType : std::uint8_t { BF16 = 0, FP16 = 1, FP32 = 2 };
using Pass = ::gdn::Pass;

inline constexpr int kUnknownBucket = -1;
inline constexpr int kDefaultMaxDistance = 4;

constexpr int log2_bucket(std::int64_t n) {
  int b = 0;
  while (n > 1) {
    n >>= 1;
    ++b;
  }
  return b;
}
// Smallest value in bucket b (2^b): for display and for tests.
constexpr std::int64_t bucket_floor(int b) { return b < 0 ? 0 : (std::int64_t{1} << b); }

// Balance buckets (see the top of this file).
inline constexpr int kBalanceEqual = 2, kBalanceHalf = 1, kBalanceRagged = 0;
constexpr int balance_bucket(std::int64_t num_seqs, std::int64_t total_tokens,
                             std::int64_t max_seqlen) {
  if (num_seqs <= 0 || max_seqlen <= 0) return kUnknownBucket;
  const std::int64_t capacity = num_seqs * max_seqlen;
  if (total_tokens >= capacity) return kBalanceEqual;
  return 2 * total_tokens >= capacity ? kBalanceHalf : kBalanceRagged;
}
// A balance bucket in words, as table comments and dispatch sources print it.
constexpr std::string_view balance_text(int b) {
  switch (b) {
    case kBalanceEqual: return "equal";
    case kBalanceHalf: return "[1/2,1)";
    case kBalanceRagged: return "<1/2";
    default: return "any";
  }
}

struct BucketKey {
  Pass pass = Pass::Forward;
  int h_qk = 0;
  int h_v = 0;
  int k = 0;
  int v = 0;
  DType dtype = DType::BF16;
  int num_seqs_bucket = 0;
  int total_tokens_bucket = 0;
  int max_seqlen_bucket = kUnknownBucket;
  int balance_bucket = kUnknownBucket;  // last: tables written before it match any balance

  friend constexpr bool operator==(const BucketKey&, const BucketKey&) = default;
  friend constexpr auto operator<=>(const BucketKey&, const BucketKey&) = default;
};

// A shape as libgdn sees it at dispatch time. max_seqlen <= 0 means unknown.
struct Shape {
  Pass pass = Pass::Forward;
  int h_qk = 0;
  int h_v = 0;
  int k = 0;
  int v = 0;
  DType dtype = DType::BF16;
  std::int64_t num_seqs = 1;
  std::int64_t total_tokens = 0;
  std::int64_t max_seqlen = 0;
};

constexpr BucketKey bucket_of(const Shape& s) {
  return BucketKey{s.pass,
                   s.h_qk,
                   s.h_v,
                   s.k,
                   s.v,
                   s.dtype,
                   log2_bucket(s.num_seqs),
                   log2_bucket(s.total_tokens),
                   s.max_seqlen > 0 ? log2_bucket(s.max_seqlen) : kUnknownBucket,
                   balance_bucket(s.num_seqs, s.total_tokens, s.max_seqlen)};
}

// Margin of an entry whose bucket had a single eligible variant (real margins are > -1).
inline constexpr double kNoRunnerUp = -1.0;

struct Entry {
  BucketKey key;
  std::string_view variant;  // procedural variant name (gdn::config_name)
  double margin;             // runner-up time / winner time - 1 on the tuning sweep, or
                             // kNoRunnerUp; negative when the near-tie rule chose the slower
  // The launch-plan fields the winner was measured with (GDN_PLAN_RULE: the default rule);
  // a call's own gdn_launch_options pins override them field by field. Tables written before
  // plans existed leave it out: every field the rule.
  gdn_launch_options plan = kRulePins;
};

struct Match {
  const Entry* entry = nullptr;  // nullptr: no entry, use the default selection
  int distance = -1;             // 0 for an exact bucket
  constexpr bool found() const { return entry != nullptr; }
  constexpr bool exact() const { return entry != nullptr && distance == 0; }
};

namespace detail {
constexpr int abs_diff(int a, int b) { return a > b ? a - b : b - a; }
constexpr bool same_exact_fields(const BucketKey& a, const BucketKey& b) {
  return a.pass == b.pass && a.h_qk == b.h_qk && a.h_v == b.h_v && a.k == b.k && a.v == b.v &&
         a.dtype == b.dtype;
}
constexpr int seqlen_distance(int a, int b) {
  return (a == kUnknownBucket || b == kUnknownBucket) ? 0 : abs_diff(a, b);
}
}  // namespace detail

// The rule stated at the top of this file.
constexpr Match lookup(std::span<const Entry> table, const BucketKey& query,
                       int max_distance = kDefaultMaxDistance) {
  Match best;
  int best_tokens_distance = 0;
  for (const Entry& e : table) {
    if (!detail::same_exact_fields(e.key, query)) continue;
    const int tokens = detail::abs_diff(e.key.total_tokens_bucket, query.total_tokens_bucket);
    const int distance = detail::abs_diff(e.key.num_seqs_bucket, query.num_seqs_bucket) + tokens +
                         detail::seqlen_distance(e.key.max_seqlen_bucket, query.max_seqlen_bucket) +
                         detail::seqlen_distance(e.key.balance_bucket, query.balance_bucket);
    if (distance > max_distance) continue;
    const bool better = best.entry == nullptr || distance < best.distance ||
                        (distance == best.distance && tokens < best_tokens_distance);
    if (better) {
      best = Match{&e, distance};
      best_tokens_distance = tokens;
    }
  }
  return best;
}

constexpr Match lookup(std::span<const Entry> table, const Shape& shape,
                       int max_distance = kDefaultMaxDistance) {
  return lookup(table, bucket_of(shape), max_distance);
}

// Metadata a generated table carries next to its entries.
struct TableInfo {
  std::string_view device_name;
  std::string_view device_uuid;
  std::int64_t sweep_id;
  std::string_view git_sha;
  std::string_view sweep_started_at;  // ISO-8601 UTC: when the measurements were taken
};

}  // namespace gdn::dispatch
