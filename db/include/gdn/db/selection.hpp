// Winner selection per shape bucket (buckets: gdn/dispatch_table.hpp), with manual
// overrides. Shared by the dashboard's selection panel, the export and `gdnlab report`.
//
// Rule, per bucket of one sweep:
//   - eligible: variants with a Passed result (and a p50) on EVERY problem of the bucket;
//   - score: geometric mean of p50 over the bucket's problems; noise: the largest
//     (p80 - p20) / p50 among those results;
//   - the fastest score wins, except that variants within the noise of it (score <=
//     fastest * (1 + max(noise of both))) are near-ties, and among near-ties the variant that
//     is the raw fastest in more buckets of the sweep wins (then the faster score, then the
//     name): fewer distinct variants, same speed within what was measurable;
//   - margin: runner-up score / winner score - 1 (negative when a near-tie picked the slower);
//   - an override (stored per sweep and bucket, with a reason) replaces the winner; it must
//     name an eligible variant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/dispatch_table.hpp"
#include "gdn/db/model.hpp"

namespace gdn::db {

// "bf16" -> DType::BF16 ...; nullopt for anything else.
std::optional<gdn::dispatch::DType> parse_dtype(std::string_view text);
std::string_view to_string(gdn::dispatch::DType d);
gdn::dispatch::BucketKey bucket_of(const ProblemRecord& problem, gdn::Pass pass);
// "fwd h_qk=16 h_v=32 k=128 v=128 bf16 seqs=[4,8) tokens=[8192,16384) maxlen=[2048,4096)"
std::string describe_bucket(const gdn::dispatch::BucketKey& key);

// A candidate is a variant row of the sweep: a compiled variant with the plan fields it pins
// (VariantRecord); `variant` is its full name (pins' suffix included).
struct Candidate {
  std::string variant;
  std::int64_t variant_id = 0;
  gdn_launch_options pins = gdn::kRulePins;
  double score_ms = 0;   // geometric mean p50 over the bucket's problems
  double noise = 0;      // largest (p80 - p20) / p50
  int buckets_won = 0;   // raw wins across the sweep (the near-tie preference)
};

struct BucketChoice {
  gdn::dispatch::BucketKey key;
  std::vector<std::int64_t> problem_ids;
  std::vector<Candidate> candidates;  // eligible, fastest first
  std::string variant;                // the choice (candidate name: variant and pins' suffix)
  gdn_launch_options pins = gdn::kRulePins;  // the plan fields the choice pins
  double score_ms = 0;
  std::optional<std::string> runner_up;
  std::optional<double> margin;       // runner-up score / choice score - 1
  bool near_tie_rule_applied = false;  // the raw fastest was passed over for a wider winner
  bool overridden = false;
  std::string override_reason;
};
struct SkippedBucket {
  gdn::dispatch::BucketKey key;
  std::string reason;  // e.g. "no variant passed all 3 problems of the bucket"
};
struct Selection {
  SweepSummary sweep;
  std::vector<std::int64_t> merged_sweeps;  // sweeps whose buckets were merged in (export)
  std::string merged_db;                    // their database's file name when not this one's
  std::vector<BucketChoice> buckets;  // sorted by key
  std::vector<SkippedBucket> skipped;
  // The compiled variants the choices run (their names without the pins' suffix): sorted, unique.
  std::vector<std::string> variants_used() const;
};

// Throws DbError::Invalid if the sweep does not exist.
Selection select_winners(const Database& db, std::int64_t sweep_id);

struct OverrideRecord {
  std::int64_t id = 0;
  std::int64_t sweep_id = 0;
  gdn::dispatch::BucketKey key;
  std::string variant;
  std::string reason;
  std::string created_at;
};
// Replaces any override of that bucket. Throws DbError::Invalid when the reason is empty, the
// bucket has no problems in the sweep, or the variant is not eligible there (names it).
void set_override(Database& db, std::int64_t sweep_id, const gdn::dispatch::BucketKey& key,
                  const std::string& variant, const std::string& reason);
bool clear_override(Database& db, std::int64_t sweep_id, const gdn::dispatch::BucketKey& key);
std::vector<OverrideRecord> list_overrides(const Database& db, std::int64_t sweep_id);

}  // namespace gdn::db
