// Manual selection overrides: per sweep and bucket, with a reason (schema v2 table; the
// balance bucket since v4: files read as they are from before it have none, read as -1).
#include <algorithm>

#include "gdn/db/selection.hpp"
#include "statement.hpp"

namespace gdn::db {

namespace dsp = gdn::dispatch;

namespace {

// The key columns (balance_bucket since schema v4: a file kept at an older version has none).
std::string key_where(bool has_balance) {
  return std::string(
             "sweep_id = ?1 AND pass = ?2 AND h_qk = ?3 AND h_v = ?4 AND k = ?5 AND v = ?6 AND "
             "dtype = ?7 AND num_seqs_bucket = ?8 AND total_tokens_bucket = ?9 AND "
             "max_seqlen_bucket = ?10") +
         (has_balance ? " AND balance_bucket = ?11" : "");
}

bool has_balance_column(const Database& db) { return db.schema_version() >= 4; }

void bind_key(Statement& s, std::int64_t sweep_id, const dsp::BucketKey& k, bool has_balance) {
  s.bind(1, sweep_id).bind(2, k.pass == dsp::Pass::Forward ? "fwd" : "bwd");
  s.bind(3, k.h_qk).bind(4, k.h_v).bind(5, k.k).bind(6, k.v).bind(7, to_string(k.dtype));
  s.bind(8, k.num_seqs_bucket).bind(9, k.total_tokens_bucket).bind(10, k.max_seqlen_bucket);
  if (has_balance) s.bind(11, k.balance_bucket);
}

}  // namespace

void set_override(Database& db, std::int64_t sweep_id, const dsp::BucketKey& key,
                  const std::string& variant, const std::string& reason) {
  if (reason.empty())
    throw DbError(DbError::Kind::Invalid, "override reason: expected a non-empty explanation, got ''");
  const Selection sel = select_winners(db, sweep_id);
  const auto bucket = std::find_if(sel.buckets.begin(), sel.buckets.end(),
                                   [&](const BucketChoice& b) { return b.key == key; });
  if (bucket == sel.buckets.end())
    throw DbError(DbError::Kind::Invalid, "override bucket: sweep " + std::to_string(sweep_id) +
                                              " has no selectable bucket " + describe_bucket(key));
  const bool eligible = std::any_of(bucket->candidates.begin(), bucket->candidates.end(),
                                    [&](const Candidate& c) { return c.variant == variant; });
  if (!eligible)
    throw DbError(DbError::Kind::Invalid,
                  "override variant: '" + variant + "' is not eligible for bucket " +
                      describe_bucket(key) + " (it must have passed every problem of the bucket)");
  const bool has_balance = has_balance_column(db);
  Transaction tx(db);
  Statement erase(db, "DELETE FROM overrides WHERE " + key_where(has_balance));
  bind_key(erase, sweep_id, key, has_balance);
  erase.run();
  Statement insert(db, std::string("INSERT INTO overrides (sweep_id, pass, h_qk, h_v, k, v, dtype, "
                                   "num_seqs_bucket, total_tokens_bucket, max_seqlen_bucket, "
                                   "variant, reason, created_at") +
                           (has_balance ? ", balance_bucket" : "") +
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?12, ?13, "
                           "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')" +
                           (has_balance ? ", ?11" : "") + ")");
  bind_key(insert, sweep_id, key, has_balance);
  insert.bind(12, variant).bind(13, reason).run();
  tx.commit();
}

bool clear_override(Database& db, std::int64_t sweep_id, const dsp::BucketKey& key) {
  const bool has_balance = has_balance_column(db);
  Statement erase(db, "DELETE FROM overrides WHERE " + key_where(has_balance));
  bind_key(erase, sweep_id, key, has_balance);
  erase.run();
  return last_changes(db) > 0;
}

std::vector<OverrideRecord> list_overrides(const Database& db, std::int64_t sweep_id) {
  const bool has_balance = has_balance_column(db);
  Statement s(db, std::string("SELECT id, sweep_id, pass, h_qk, h_v, k, v, dtype, num_seqs_bucket, "
                              "total_tokens_bucket, max_seqlen_bucket, variant, reason, created_at, ") +
                      (has_balance ? "balance_bucket" : "-1") +
                      " FROM overrides WHERE sweep_id = ?1 ORDER BY id");
  s.bind(1, sweep_id);
  std::vector<OverrideRecord> out;
  while (s.step()) {
    OverrideRecord o;
    o.id = s.int64(0);
    o.sweep_id = s.int64(1);
    o.key.pass = s.text(2) == "bwd" ? dsp::Pass::Backward : dsp::Pass::Forward;
    o.key.h_qk = s.integer(3);
    o.key.h_v = s.integer(4);
    o.key.k = s.integer(5);
    o.key.v = s.integer(6);
    o.key.dtype = parse_dtype(s.text(7)).value_or(dsp::DType::BF16);
    o.key.num_seqs_bucket = s.integer(8);
    o.key.total_tokens_bucket = s.integer(9);
    o.key.max_seqlen_bucket = s.integer(10);
    o.key.balance_bucket = s.integer(14);
    o.variant = s.text(11);
    o.reason = s.text(12);
    o.created_at = s.text(13);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gdn::db
