// The table-first dispatch decision (see table_dispatch.hpp) and the words that explain it.
#include "table_dispatch.hpp"

#include <algorithm>

#include "status.hpp"

namespace gdn::detail {

namespace {

const char* dtype_token(dispatch::DType d) {
  switch (d) {
    case dispatch::DType::BF16:
      return "bf16";
    case dispatch::DType::FP16:
      return "fp16";
    case dispatch::DType::FP32:
      return "fp32";
  }
  return "?";
}

std::string log2_range(int bucket) {
  if (bucket == dispatch::kUnknownBucket) return "unknown";
  return cat("[", dispatch::bucket_floor(bucket), ",", dispatch::bucket_floor(bucket + 1), ")");
}

// The same words as the comments of a generated header, so a source line can be found there.
std::string describe_bucket(const dispatch::BucketKey& k) {
  return cat(k.pass == dispatch::Pass::Forward ? "fwd" : "bwd", " h_qk=", k.h_qk, " h_v=", k.h_v,
             " k=", k.k, " v=", k.v, " ", dtype_token(k.dtype),
             " seqs=", log2_range(k.num_seqs_bucket), " tokens=", log2_range(k.total_tokens_bucket),
             " maxlen=", log2_range(k.max_seqlen_bucket),
             " balance=", dispatch::balance_text(k.balance_bucket));
}

std::string describe_tuning(const DispatchTable& table) {
  const dispatch::TableInfo& info = *table.info;
  return cat(table.origin.empty() ? "" : cat("loaded from ", table.origin, ", "), "tuned on ",
             info.device_name, " (", info.device_uuid, "), sweep ", info.sweep_id, " started ",
             info.sweep_started_at, ", git ", info.git_sha);
}

const Variant* find_by_name(std::span<const Variant* const> pool, std::string_view name) {
  const auto it = std::find_if(pool.begin(), pool.end(),
                               [&](const Variant* v) { return v != nullptr && v->name() == name; });
  return it == pool.end() ? nullptr : *it;
}

DispatchDecision by_default_rule(const SelectionInput& selection,
                                 std::span<const Variant* const> implementable,
                                 std::string why_not_table) {
  DispatchDecision d;
  d.variant = select_default_variant(selection, implementable);
  d.source = cat("default rule (", why_not_table, ")");
  return d;
}

}  // namespace

dispatch::Shape dispatch_shape(Pass pass, const gdn_problem& p, const ProblemFacts& facts) {
  dispatch::Shape s;
  s.pass = pass == Pass::Forward ? dispatch::Pass::Forward : dispatch::Pass::Backward;
  s.h_qk = p.Hk;
  s.h_v = p.Hv;
  s.k = p.K;
  s.v = p.V;
  s.dtype = static_cast<dispatch::DType>(p.qkv_dtype);
  s.num_seqs = facts.num_seqs;
  s.total_tokens = facts.tokens;
  // facts.longest is exact from the host offsets or the batched layout, and equals the hint
  // when the caller gave one; otherwise it is only the bound T and must not pick a bucket.
  const bool longest_known = facts.longest_exact || p.max_seqlen_hint > 0;
  s.max_seqlen = longest_known ? facts.longest : 0;
  return s;
}

DispatchDecision decide_variant(const DispatchTable& table, const dispatch::Shape& shape,
                                std::span<const Variant* const> implementable,
                                std::span<const Variant* const> compiled,
                                const SelectionInput& selection) {
  if (table.entries.empty() || table.info == nullptr)
    return by_default_rule(selection, implementable,
                           "no dispatch table compiled into this build or loaded");
  const dispatch::BucketKey key = dispatch::bucket_of(shape);
  const dispatch::Match match = dispatch::lookup(table.entries, key);
  if (!match.found())
    return by_default_rule(selection, implementable,
                           cat("no table entry within bucket distance ",
                               dispatch::kDefaultMaxDistance, " of {", describe_bucket(key), "}"));
  const dispatch::Entry& entry = *match.entry;
  const std::string bucket = cat("{", describe_bucket(entry.key), "}");
  if (const Variant* v = find_by_name(implementable, entry.variant); v != nullptr) {
    DispatchDecision d;
    d.variant = v;
    d.entry = &entry;
    d.plan = entry.plan;
    d.table_owner = table.owner;
    d.distance = match.distance;
    const std::string pins = pins_suffix(entry.plan);
    d.source = cat("table: ", match.exact() ? "exact bucket " : "nearest bucket ", bucket,
                   match.exact() ? "" : cat(" at distance ", match.distance),
                   pins.empty() ? "" : cat(", plan pins ", pins), ", ", describe_tuning(table));
    return d;
  }
  const bool compiled_here = find_by_name(compiled, entry.variant) != nullptr;
  DispatchDecision d = by_default_rule(
      selection, implementable,
      cat("table entry ", bucket, " names ", entry.variant, ", which ",
          compiled_here ? "cannot implement this problem" : "is not compiled into this build"));
  d.distance = match.distance;
  return d;
}

}  // namespace gdn::detail
