// Winner per shape bucket with the near-tie rule and overrides (rule: gdn/db/selection.hpp).
#include "gdn/db/selection.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "result_rows.hpp"

namespace gdn::db {

namespace dsp = gdn::dispatch;

std::optional<dsp::DType> parse_dtype(std::string_view text) {
  if (text == "bf16") return dsp::DType::BF16;
  if (text == "fp16") return dsp::DType::FP16;
  if (text == "fp32") return dsp::DType::FP32;
  return std::nullopt;
}

std::string_view to_string(dsp::DType d) {
  switch (d) {
    case dsp::DType::BF16: return "bf16";
    case dsp::DType::FP16: return "fp16";
    case dsp::DType::FP32: return "fp32";
  }
  return "bf16";
}

dsp::BucketKey bucket_of(const ProblemRecord& p, gdn::Pass pass) {
  const auto dtype = parse_dtype(p.dtype);
  if (!dtype)
    throw DbError(DbError::Kind::Invalid, "problem " + std::to_string(p.id) +
                                              ": dtype expected bf16, fp16 or fp32, got '" + p.dtype + "'");
  dsp::Shape shape{pass == gdn::Pass::Forward ? dsp::Pass::Forward : dsp::Pass::Backward,
                   p.h_qk, p.h_v, p.k, p.v, *dtype, p.num_seqs, p.total_tokens, p.max_seqlen};
  return dsp::bucket_of(shape);
}

namespace {
std::string range_text(int bucket) {
  if (bucket == dsp::kUnknownBucket) return "any";
  return "[" + std::to_string(dsp::bucket_floor(bucket)) + "," +
         std::to_string(dsp::bucket_floor(bucket + 1)) + ")";
}
}  // namespace

std::string describe_bucket(const dsp::BucketKey& k) {
  return std::string(k.pass == dsp::Pass::Forward ? "fwd" : "bwd") +
         " h_qk=" + std::to_string(k.h_qk) + " h_v=" + std::to_string(k.h_v) +
         " k=" + std::to_string(k.k) + " v=" + std::to_string(k.v) + " " +
         std::string(to_string(k.dtype)) + " seqs=" + range_text(k.num_seqs_bucket) +
         " tokens=" + range_text(k.total_tokens_bucket) + " maxlen=" + range_text(k.max_seqlen_bucket) +
         " balance=" + std::string(dsp::balance_text(k.balance_bucket));
}

std::vector<std::string> Selection::variants_used() const {
  std::set<std::string> names;
  for (const BucketChoice& b : buckets) names.insert(b.variant.substr(0, b.variant.find('+')));
  return {names.begin(), names.end()};
}

namespace {

struct VariantInBucket {
  std::string name;
  gdn_launch_options pins = gdn::kRulePins;
  std::vector<const ResultRecord*> passed;  // one per problem it passed
};
struct BucketData {
  std::set<std::int64_t> problems;
  std::map<std::int64_t, VariantInBucket> variants;  // by variant id
};

std::vector<Candidate> eligible_candidates(const BucketData& data) {
  std::vector<Candidate> out;
  for (const auto& [variant_id, v] : data.variants) {
    if (v.passed.size() != data.problems.size()) continue;
    double log_sum = 0, noise = 0;
    for (const ResultRecord* r : v.passed) {
      const double p50 = *r->latency_p50_ms;
      log_sum += std::log(p50);
      if (r->latency_p20_ms && r->latency_p80_ms)
        noise = std::max(noise, (*r->latency_p80_ms - *r->latency_p20_ms) / p50);
    }
    // One problem: its p50 exactly (exp(log(x)) would blur the last digit in the JSON).
    const double score = v.passed.size() == 1
                             ? *v.passed.front()->latency_p50_ms
                             : std::exp(log_sum / static_cast<double>(v.passed.size()));
    out.push_back(Candidate{v.name, variant_id, v.pins, score, noise, 0});
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.score_ms != b.score_ms ? a.score_ms < b.score_ms : a.variant < b.variant;
  });
  return out;
}

// The near-tie rule: within the noise of the fastest, the widest winner.
std::size_t choose(const std::vector<Candidate>& c) {
  std::size_t chosen = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    const double tolerance = std::max(c[0].noise, c[i].noise);
    if (c[i].score_ms > c[0].score_ms * (1.0 + tolerance)) continue;
    if (c[i].buckets_won > c[chosen].buckets_won) chosen = i;
  }
  return chosen;
}

void set_choice(BucketChoice& b, std::size_t index) {
  const Candidate& chosen = b.candidates[index];
  b.variant = chosen.variant;
  b.pins = chosen.pins;
  b.score_ms = chosen.score_ms;
  b.runner_up.reset();
  b.margin.reset();
  for (std::size_t i = 0; i < b.candidates.size(); ++i) {
    if (i == index) continue;
    b.runner_up = b.candidates[i].variant;  // first other is the fastest other
    b.margin = b.candidates[i].score_ms / chosen.score_ms - 1.0;
    break;
  }
}

}  // namespace

Selection select_winners(const Database& db, std::int64_t sweep_id) {
  Selection sel;
  sel.sweep = sweep_summary(db, sweep_id);
  const std::vector<ResultRow> rows = all_results_of_sweep(db, sweep_id);
  std::map<dsp::BucketKey, BucketData> buckets;
  for (const ResultRow& row : rows) {
    BucketData& data = buckets[bucket_of(row.problem, row.variant.pass)];
    data.problems.insert(row.problem.id);
    VariantInBucket& v = data.variants[row.variant.id];
    v.name = row.variant.name;
    v.pins = row.variant.pins;
    if (row.result.outcome == Outcome::Passed) v.passed.push_back(&row.result);
  }

  std::map<std::string, int> raw_wins;
  for (const auto& [key, data] : buckets) {
    BucketChoice choice;
    choice.key = key;
    choice.problem_ids.assign(data.problems.begin(), data.problems.end());
    choice.candidates = eligible_candidates(data);
    if (choice.candidates.empty()) {
      sel.skipped.push_back({key, "no variant passed all " + std::to_string(data.problems.size()) +
                                      " problem(s) of the bucket"});
      continue;
    }
    ++raw_wins[choice.candidates.front().variant];
    sel.buckets.push_back(std::move(choice));
  }

  std::map<dsp::BucketKey, OverrideRecord> overrides;
  for (OverrideRecord& o : list_overrides(db, sweep_id)) overrides.emplace(o.key, std::move(o));

  for (BucketChoice& b : sel.buckets) {
    for (Candidate& c : b.candidates) c.buckets_won = raw_wins[c.variant];
    const std::size_t chosen = choose(b.candidates);
    b.near_tie_rule_applied = chosen != 0;
    set_choice(b, chosen);
    // An override made before the balance was part of the key (-1) holds for every balance.
    auto o = overrides.find(b.key);
    if (o == overrides.end()) {
      dsp::BucketKey any_balance = b.key;
      any_balance.balance_bucket = dsp::kUnknownBucket;
      o = overrides.find(any_balance);
    }
    if (o == overrides.end()) continue;
    const auto it = std::find_if(b.candidates.begin(), b.candidates.end(),
                                 [&](const Candidate& c) { return c.variant == o->second.variant; });
    if (it == b.candidates.end()) {
      b.override_reason = "override to '" + o->second.variant +
                          "' ignored: not eligible (did not pass every problem of the bucket)";
      continue;
    }
    set_choice(b, static_cast<std::size_t>(it - b.candidates.begin()));
    b.overridden = true;
    b.override_reason = o->second.reason;
  }
  return sel;
}

}  // namespace gdn::db
