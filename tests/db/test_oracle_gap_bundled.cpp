// Oracle gap of the bundled H200 sweep's own table, measured on itself (on a copy: the bundled
// file is never opened for writing). The expected rows are recomputed here with plain SQL:
// every forward problem with a Passed result, its fastest p50, and, for a problem alone in its
// bucket, the table's pick is the fastest on it unless the near-tie rule picked a variant
// within the measured noise (checked as in test_export_bundled.cpp).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "db_fixture.hpp"
#include "gdn/db/oracle_gap.hpp"
#include "gdn/db/model.hpp"

namespace gdn::db::test {
namespace {

namespace fs = std::filesystem;

const char* kBundled = "tests/data/smoke_h200.sqlite";  // ctest runs in the repository root

struct Expected {
  double fastest_p50 = 0;
  std::map<std::string, double> p50;    // every Passed variant
  std::map<std::string, double> noise;  // (p80 - p20) / p50 of each
  std::string fastest;
  int problems_in_bucket = 0;
};

// Per forward problem with a Passed result: the p50 of each Passed variant, and how many
// problems of the sweep share its bucket (same heads, dims, dtype and log2 buckets).
std::map<std::int64_t, Expected> expected_rows(sqlite3* db, std::int64_t sweep) {
  std::map<std::int64_t, Expected> out;
  const char* passed_sql =
      "SELECT r.problem_id, v.name, r.latency_p50_ms, r.latency_p20_ms, r.latency_p80_ms FROM results r JOIN variants v ON v.id = r.variant_id"
      " WHERE r.sweep_id = ?1 AND v.pass = 'fwd' AND r.outcome = 'Passed' AND r.latency_p50_ms IS NOT NULL";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, passed_sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_bind_int64(st, 1, sweep);
  while (sqlite3_step(st) == SQLITE_ROW) {
    Expected& e = out[sqlite3_column_int64(st, 0)];
    const double p50 = sqlite3_column_double(st, 2);
    const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    e.p50[name] = p50;
    e.noise[name] = (sqlite3_column_double(st, 4) - sqlite3_column_double(st, 3)) / p50;
    if (e.fastest.empty() || p50 < e.fastest_p50) e.fastest_p50 = p50, e.fastest = name;
  }
  sqlite3_finalize(st);
  // Buckets in SQL: floor(log2(n)) as the position of the highest set bit, via a recursive
  // table of powers of two (SQLite's log2 is an optional build feature).
  const char* bucket_sql =
      "WITH RECURSIVE pow2(b, v) AS (SELECT 0, 1 UNION ALL SELECT b + 1, v * 2 FROM pow2 WHERE b < 62),"
      " fwd AS (SELECT DISTINCT p.* FROM problems p JOIN results r ON r.problem_id = p.id"
      "         JOIN variants v ON v.id = r.variant_id WHERE r.sweep_id = ?1 AND v.pass = 'fwd'),"
      " keyed AS (SELECT id, h_qk, h_v, k, v, dtype,"
      "   (SELECT max(b) FROM pow2 WHERE v <= max(num_seqs, 1)) AS bs,"
      "   (SELECT max(b) FROM pow2 WHERE v <= max(total_tokens, 1)) AS bt,"
      "   (SELECT max(b) FROM pow2 WHERE v <= max(max_seqlen, 1)) AS bm FROM fwd)"
      " SELECT a.id, count(*) FROM keyed a JOIN keyed b ON a.h_qk = b.h_qk AND a.h_v = b.h_v"
      "   AND a.k = b.k AND a.v = b.v AND a.dtype = b.dtype AND a.bs = b.bs AND a.bt = b.bt AND a.bm = b.bm"
      " GROUP BY a.id";
  EXPECT_EQ(sqlite3_prepare_v2(db, bucket_sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_bind_int64(st, 1, sweep);
  while (sqlite3_step(st) == SQLITE_ROW) {
    const auto it = out.find(sqlite3_column_int64(st, 0));
    if (it != out.end()) it->second.problems_in_bucket = sqlite3_column_int(st, 1);
  }
  sqlite3_finalize(st);
  return out;
}

TEST(OracleGapBundled, TableOfTheH200SweepMeasuredOnItself) {
  ScratchDir dir;
  const std::string copy = dir.file("smoke_h200.sqlite");
  ASSERT_TRUE(fs::exists(kBundled)) << "run from the repository root";
  fs::copy_file(kBundled, copy);
  const Database db = Database::open(copy, OpenOptions{.create_if_missing = false});
  const std::int64_t sweep = *latest_sweep_with_passes(db);
  const auto expected = expected_rows(db.handle(), sweep);
  ASSERT_FALSE(expected.empty());

  const OracleGap g = oracle_gap(db, sweep, sweep);
  EXPECT_EQ(g.table_sweep.device.name, "NVIDIA H200");
  ASSERT_EQ(g.rows.size(), expected.size());
  EXPECT_EQ(g.default_rule_rows, 0);
  EXPECT_EQ(g.unmeasured_picks, 0);
  EXPECT_EQ(g.measured_rows, static_cast<std::int64_t>(expected.size()));

  double log_sum = 0;
  int single = 0, picked_fastest = 0;
  for (const GapRow& r : g.rows) {
    SCOPED_TRACE("problem row " + std::to_string(r.problem.row_index));
    const Expected& e = expected.at(r.problem.id);
    EXPECT_EQ(r.answer, TableAnswer::ExactBucket);
    EXPECT_EQ(r.fastest_p50_ms, e.fastest_p50);
    ASSERT_TRUE(e.p50.count(r.picked)) << r.picked << " did not pass this problem";
    ASSERT_TRUE(r.ratio);
    EXPECT_EQ(*r.picked_p50_ms, e.p50.at(r.picked));
    EXPECT_EQ(*r.ratio, e.p50.at(r.picked) / e.fastest_p50);
    log_sum += std::log(e.p50.at(r.picked) / e.fastest_p50);
    if (e.problems_in_bucket != 1) continue;
    ++single;
    // Alone in its bucket: the winner is the fastest here (ratio exactly 1), or a near-tie
    // pick within the measured noise of both.
    if (r.picked == e.fastest) {
      EXPECT_EQ(*r.ratio, 1.0);
      ++picked_fastest;
    } else {
      EXPECT_LE(*r.ratio, 1.0 + std::max(e.noise.at(r.picked), e.noise.at(e.fastest))) << r.picked;
    }
  }
  EXPECT_GT(single, 0) << "the bundled sweep should have buckets holding one problem";
  EXPECT_GT(picked_fastest, 0);
  ASSERT_TRUE(g.geomean_ratio);
  EXPECT_NEAR(*g.geomean_ratio, std::exp(log_sum / static_cast<double>(g.rows.size())), 1e-12);
}

}  // namespace
}  // namespace gdn::db::test
