// Sweep comparison on real data: the H200 anchor database
// (tests/data/anchors_sweeps_h200.sqlite) holds the tuning sweep of the
// forward anchor set (sweep 2, rows 0-60 complete) and an independent re-measurement of those 61
// rows from another shape-set file (sweep 3). Comparison matches problems by shape, not by id
// (the two sets have different problem rows), on the same device and build: every row of
// sweep 3 must find its twin, and the same GPU must give the same best time within a few
// percent (a regression here means matching or best-per-problem broke, or the file changed).
// Opened read-only on a copy.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "db_fixture.hpp"
#include "gdn/db/database.hpp"
#include "gdn/db/model.hpp"
#include "gdn/launch_plan.hpp"

namespace gdn::db::test {
namespace {

const char* kAnchors = "tests/data/anchors_sweeps_h200.sqlite";

// Best Passed p50 per (h_qk, h_v, seqlens) of a sweep, straight from the rows.
std::map<std::tuple<int, int, std::string>, double> best_by_sql(const std::string& path,
                                                                 int sweep) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT p.h_qk, p.h_v, p.seqlens, min(r.latency_p50_ms) FROM results r "
                               "JOIN problems p ON p.id = r.problem_id JOIN variants v ON v.id = r.variant_id "
                               "WHERE r.sweep_id = ? AND r.outcome = 'Passed' AND v.pass = 'fwd' "
                               "GROUP BY p.id",
                               -1, &st, nullptr),
            SQLITE_OK);
  sqlite3_bind_int(st, 1, sweep);
  std::map<std::tuple<int, int, std::string>, double> out;
  while (sqlite3_step(st) == SQLITE_ROW)
    out[{sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
         reinterpret_cast<const char*>(sqlite3_column_text(st, 2))}] = sqlite3_column_double(st, 3);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(CompareH200Anchors, ReMeasurementMatchesEveryRowOnTheSameGpu) {
  ASSERT_TRUE(std::filesystem::exists(kAnchors)) << kAnchors;
  ScratchDir dir;
  const std::string copy = dir.file("anchors.sqlite");
  std::filesystem::copy_file(kAnchors, copy);
  const auto best2 = best_by_sql(copy, 2);
  const auto best3 = best_by_sql(copy, 3);
  ASSERT_EQ(best3.size(), 61u);

  OpenOptions ro;
  ro.read_only = true;
  ro.create_if_missing = false;
  const Database db = Database::open(copy, ro);
  const SweepComparison cmp = compare_sweeps(db, 2, 3);
  EXPECT_EQ(cmp.device_differences, "");
  int matched = 0;
  double log_sum = 0;
  for (const ProblemComparison& c : cmp.problems) {
    if (!c.best_a || !c.best_b) continue;
    ++matched;
    ASSERT_TRUE(c.ratio.has_value());
    const auto key = std::make_tuple(c.problem.h_qk, c.problem.h_v, c.problem.seqlens);
    ASSERT_TRUE(best2.count(key) && best3.count(key)) << c.problem.seqlens;
    EXPECT_DOUBLE_EQ(*c.best_a->result.latency_p50_ms, best2.at(key));
    EXPECT_DOUBLE_EQ(*c.best_b->result.latency_p50_ms, best3.at(key));
    EXPECT_NEAR(*c.ratio, best3.at(key) / best2.at(key), 1e-12);
    EXPECT_LT(std::abs(std::log(*c.ratio)), std::log(1.10)) << c.problem.seqlens;
    log_sum += std::log(*c.ratio);
  }
  EXPECT_EQ(matched, 61);
  EXPECT_LT(std::abs(log_sum / matched), std::log(1.02));  // same GPU, same build
}

// A committed database opened read-only through a copy in dir (never the file itself).
Database open_copy(const std::string& path, const ScratchDir& dir) {
  const std::string copy = dir.file("copy.sqlite");
  std::filesystem::copy_file(path, copy);
  OpenOptions ro;
  ro.read_only = true;
  return Database::open(copy, ro);
}

TEST(CompareH200Anchors, EveryCandidateOfTheReMeasurementIsPairedWithinItsNoise) {
  ASSERT_TRUE(std::filesystem::exists(kAnchors)) << kAnchors;
  ScratchDir dir;
  const Database db = open_copy(kAnchors, dir);
  const std::vector<CandidateComparison> c = compare_candidates(db, 2, 3);
  // Sweep 3 re-measured sweep 2's candidates on its 61 rows: 32 forward candidates a row.
  EXPECT_EQ(c.size(), 61u * 32u);
  std::vector<double> ratios;
  for (const CandidateComparison& x : c) {
    EXPECT_EQ(x.candidate, x.a.variant.name);
    EXPECT_EQ(x.candidate, x.b.variant.name);
    EXPECT_EQ(x.a.problem.seqlens, x.b.problem.seqlens);
    EXPECT_NEAR(x.ratio, 1.0, 0.02) << x.candidate << " on " << x.a.problem.seqlens;
    ratios.push_back(x.ratio);
  }
  EXPECT_NEAR(*geometric_mean(ratios), 1.0, 0.002);
}

// By pin on a real recording: the H200 backward anchor sweep holds the column-warp variant
// without CP at the plan's rules and with the recompute's CP segments pinned (+rc0 .. +rc128).
// Compared with itself by the pin recompute_cp_chunks=0, every one of the 32 rows pairs the rule
// with the unsplit recompute, and the plans recorded beside each result say what each ran: the
// unsplit one no recompute CP, the rule its own segments on the long rows.
TEST(CompareH200Anchors, ThePinOfTheUnsplitRecomputeIsPairedWithTheRuleOnEveryBackwardRow) {
  const std::string path = GDN_BWD_SWEEP_DB;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  ScratchDir dir;
  const Database db = open_copy(path, dir);
  const gdn::PlanField& rc = *gdn::find_plan_field("recompute_cp_chunks");
  const std::vector<CandidateComparison> c = compare_pinned(SweepRef{db, 1}, SweepRef{db, 1}, rc, 0);
  ASSERT_EQ(c.size(), 32u);
  int split_by_rule = 0;
  for (const CandidateComparison& x : c) {
    EXPECT_EQ(x.candidate, "gdn_bwd_sm90_fused_v64_s2_cw_cp0");
    EXPECT_EQ(x.candidate_b, "gdn_bwd_sm90_fused_v64_s2_cw_cp0+rc0");
    EXPECT_EQ(x.a.problem.id, x.b.problem.id);
    ASSERT_TRUE(x.b.result.plan.recompute_cp_chunks.has_value());
    EXPECT_EQ(*x.b.result.plan.recompute_cp_chunks, 0);
    ASSERT_TRUE(x.a.result.plan.recompute_cp_chunks.has_value());
    split_by_rule += *x.a.result.plan.recompute_cp_chunks > 0;
    EXPECT_NEAR(x.ratio, *x.b.result.latency_p50_ms / *x.a.result.latency_p50_ms, 1e-12);
  }
  EXPECT_GT(split_by_rule, 0);
}

}  // namespace
}  // namespace gdn::db::test
