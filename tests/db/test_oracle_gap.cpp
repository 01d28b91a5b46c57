// Oracle gap on a synthetic two-sweep database: the table comes from the scenario sweep
// (scenario.hpp), the measurements from a second sweep where the table's picks are slower in
// places, so every ratio below is known exactly. Plus the error cases.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "gdn/db/oracle_gap.hpp"
#include "gdn/db/selection.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

// Sweep B over the scenario's problems and two more:
//   P0 (table: A)  A 1.5, B 1.2, C 1.3 -> ratio 1.5 / 1.2 = 1.25
//   P1 (table: A)  A 1.2, B 1.25       -> 1
//   P2 (table: B)  A 10,  B 8          -> 1
//   P3 (table: A)  A Crashed, B 2.5    -> the pick has no Passed result
//   P4 (table: C)  C 3.0               -> 1
//   P5 8/8 heads, no entry with those heads: the default rule; B 1.0
//   P6 16/32, 2 seqs, 4096 tokens, longest 2048: bucket (1, 12, 11), nearest entry (0, 12, 12)
//      at distance 2 (A); A 2.0, B 1.0 -> 2
//   P7 16/32: only failures, so no row
struct OracleGapTwoSweeps : ::testing::Test {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  Scenario sc = write_scenario(db);
  std::int64_t b_sweep = 0;
  std::int64_t p5 = 0, p6 = 0, p7 = 0;

  void SetUp() override {
    ResultsWriter w(db);
    const std::int64_t device = w.register_device(h200());
    const std::int64_t build_id = w.register_build(build("def5678"));
    p5 = w.register_problem(problem(5, 8, 8, 1, 4096, 4096));
    p6 = w.register_problem(problem(6, 16, 32, 2, 4096, 2048));
    p7 = w.register_problem(problem(7, 16, 32, 1, 300, 300));
    b_sweep = w.begin_sweep(sweep_of(device, build_id));
    const std::int64_t s = b_sweep;
    insert(w, passed(s, sc.a, sc.p[0], 1.5));
    insert(w, passed(s, sc.b, sc.p[0], 1.2));
    insert(w, passed(s, sc.c, sc.p[0], 1.3));
    insert(w, passed(s, sc.a, sc.p[1], 1.2));
    insert(w, passed(s, sc.b, sc.p[1], 1.25));
    insert(w, passed(s, sc.a, sc.p[2], 10.0));
    insert(w, passed(s, sc.b, sc.p[2], 8.0));
    insert(w, failed(s, sc.a, sc.p[3], Outcome::Crashed, "illegal memory access"));
    insert(w, passed(s, sc.b, sc.p[3], 2.5));
    insert(w, passed(s, sc.c, sc.p[4], 3.0));
    insert(w, passed(s, sc.b, p5, 1.0));
    insert(w, passed(s, sc.a, p6, 2.0));
    insert(w, passed(s, sc.b, p6, 1.0));
    insert(w, failed(s, sc.a, p7, Outcome::Incorrect, "o rel rms 0.3"));
    w.set_sweep_status(s, SweepStatus::Finished);
  }

  const GapRow& row_of(const OracleGap& g, std::int64_t problem_id) {
    for (const GapRow& r : g.rows)
      if (r.problem.id == problem_id) return r;
    ADD_FAILURE() << "no row for problem " << problem_id;
    return g.rows.front();
  }
};

TEST_F(OracleGapTwoSweeps, RatiosAgainstTheSecondSweepAreExact) {
  const OracleGap g = oracle_gap(db, sc.sweep, b_sweep);
  EXPECT_EQ(g.table_sweep.sweep.id, sc.sweep);
  EXPECT_EQ(g.measured_sweep.sweep.id, b_sweep);
  EXPECT_EQ(g.measured_sweep.build.git_sha, "def5678");
  EXPECT_EQ(g.table_entries, 4u);
  ASSERT_EQ(g.rows.size(), 7u);  // P7 has no Passed result

  const GapRow& r0 = row_of(g, sc.p[0]);
  EXPECT_EQ(r0.answer, TableAnswer::ExactBucket);
  EXPECT_EQ(r0.distance, 0);
  EXPECT_EQ(r0.picked, "gdn_fwd_A");
  EXPECT_EQ(r0.fastest, "gdn_fwd_B");
  EXPECT_EQ(*r0.picked_p50_ms, 1.5);
  EXPECT_EQ(r0.fastest_p50_ms, 1.2);
  EXPECT_DOUBLE_EQ(*r0.ratio, 1.5 / 1.2);
  for (std::int64_t p : {sc.p[1], sc.p[2], sc.p[4]}) EXPECT_EQ(row_of(g, p).ratio, 1.0) << p;
  EXPECT_EQ(row_of(g, sc.p[2]).picked, "gdn_fwd_B");
  EXPECT_EQ(row_of(g, sc.p[4]).picked, "gdn_fwd_C");

  const GapRow& r3 = row_of(g, sc.p[3]);
  EXPECT_EQ(r3.picked, "gdn_fwd_A");
  EXPECT_EQ(r3.picked_outcome, Outcome::Crashed);
  EXPECT_FALSE(r3.ratio);
  EXPECT_NE(r3.note.find("no Passed result"), std::string::npos) << r3.note;

  const GapRow& r5 = row_of(g, p5);
  EXPECT_EQ(r5.answer, TableAnswer::DefaultRule);
  EXPECT_TRUE(r5.picked.empty());
  EXPECT_FALSE(r5.ratio);

  const GapRow& r6 = row_of(g, p6);
  EXPECT_EQ(r6.answer, TableAnswer::NearestBucket);
  EXPECT_EQ(r6.distance, 2);
  EXPECT_EQ(r6.picked, "gdn_fwd_A");
  EXPECT_EQ(r6.ratio, 2.0);

  EXPECT_EQ(g.measured_rows, 5);
  EXPECT_EQ(g.unmeasured_picks, 1);
  EXPECT_EQ(g.default_rule_rows, 1);
  ASSERT_TRUE(g.geomean_ratio);
  EXPECT_NEAR(*g.geomean_ratio, std::pow(1.25 * 2.0, 1.0 / 5.0), 1e-12);
  EXPECT_NEAR(*g.gap(), std::pow(2.5, 0.2) - 1.0, 1e-12);
  ASSERT_TRUE(g.worst_row);
  EXPECT_EQ(g.rows[*g.worst_row].problem.id, p6);
}

TEST_F(OracleGapTwoSweeps, TableSweepMeasuredOnItselfHasRatioOneWhereTheWinnerIsFastest) {
  const OracleGap g = oracle_gap(db, sc.sweep, sc.sweep);
  ASSERT_EQ(g.rows.size(), 5u);
  for (const GapRow& r : g.rows) {
    EXPECT_EQ(r.answer, TableAnswer::ExactBucket);
    // P1 shares its bucket with P0, where A wins on the geometric mean and is fastest too.
    EXPECT_EQ(r.ratio, 1.0) << r.problem.row_index;
  }
  EXPECT_EQ(g.geomean_ratio, 1.0);
}

TEST_F(OracleGapTwoSweeps, OverridesChangeThePick) {
  set_override(db, sc.sweep, bucket_of(problem(0, 16, 32, 1, 4096, 4096), gdn::Pass::Forward), "gdn_fwd_C",
               "test: prefer C");
  const OracleGap g = oracle_gap(db, sc.sweep, b_sweep);
  EXPECT_EQ(row_of(g, sc.p[0]).picked, "gdn_fwd_C");
  EXPECT_DOUBLE_EQ(*row_of(g, sc.p[0]).ratio, 1.3 / 1.2);
  EXPECT_EQ(row_of(g, sc.p[1]).note, "the pick has no result for this problem in the measured sweep");
}

TEST_F(OracleGapTwoSweeps, RenderingsCarryRowsAndSummary) {
  const OracleGap g = oracle_gap(db, sc.sweep, b_sweep);
  const std::string table = render_oracle_gap(g, ReportFormat::Table);
  EXPECT_NE(table.find("table:    sweep " + std::to_string(sc.sweep)), std::string::npos) << table;
  EXPECT_NE(table.find("measured: sweep " + std::to_string(b_sweep)), std::string::npos) << table;
  EXPECT_NE(table.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(table.find("def5678"), std::string::npos);
  EXPECT_NE(table.find("rows 7, with the pick measured 5"), std::string::npos) << table;
  EXPECT_NE(table.find("(oracle gap 20.11 %)"), std::string::npos) << table;  // 2.5^0.2 = 1.2011
  EXPECT_NE(table.find("worst row: test row 6: gdn_fwd_A 2 ms vs gdn_fwd_B 1 ms, ratio 2.0000"),
            std::string::npos) << table;
  EXPECT_NE(table.find("default rule (no entry within bucket distance 4): 1"), std::string::npos);

  const std::string csv = render_oracle_gap(g, ReportFormat::Csv);
  EXPECT_EQ(csv.rfind("shape_set,row_index,h_qk,h_v,num_seqs,total_tokens,max_seqlen,seqlens,answer,", 0), 0u)
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 8);  // header + 7 rows
  EXPECT_NE(csv.find(",1.25,"), std::string::npos) << csv;

  const std::string json = render_oracle_gap(g, ReportFormat::Json);
  const auto doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc["summary"]["measured_rows"], 5) << json;
  EXPECT_EQ(doc["summary"]["unmeasured_picks"], 1) << json;
  EXPECT_EQ(doc["summary"]["default_rule_rows"], 1) << json;
  bool nearest = false, ratio = false;
  for (const auto& r : doc["rows"]) {
    nearest |= r["answer"] == "nearest" && r["distance"] == 2;
    ratio |= r["ratio"] == 1.25;
  }
  EXPECT_TRUE(nearest && ratio) << json;
}

std::string gap_error(const Database& db, std::int64_t a, std::int64_t b) {
  try {
    oracle_gap(db, a, b);
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::Invalid);
    return e.what();
  }
  return "(no error)";
}

TEST_F(OracleGapTwoSweeps, UnknownSweepsAreNamed) {
  EXPECT_NE(gap_error(db, 99, b_sweep).find("99"), std::string::npos);
  EXPECT_NE(gap_error(db, sc.sweep, 98).find("98"), std::string::npos);
}

TEST_F(OracleGapTwoSweeps, SweepsWithoutPassedForwardResultsAreRefused) {
  ResultsWriter w(db);
  const std::int64_t empty = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  insert(w, failed(empty, sc.a, sc.p[0], Outcome::Incorrect, "o rel rms 0.3"));
  w.set_sweep_status(empty, SweepStatus::Finished);
  const std::string as_table = gap_error(db, empty, b_sweep);
  EXPECT_NE(as_table.find("table sweep " + std::to_string(empty)), std::string::npos) << as_table;
  EXPECT_NE(as_table.find("no table"), std::string::npos) << as_table;
  const std::string as_measured = gap_error(db, sc.sweep, empty);
  EXPECT_NE(as_measured.find("measured sweep " + std::to_string(empty) + " has no forward problem with a Passed"),
            std::string::npos) << as_measured;
}

// A sweep that did not finish is compared only when asked (allow_partial).
TEST_F(OracleGapTwoSweeps, UnfinishedSweepsNeedAllowPartial) {
  ResultsWriter w(db);
  w.set_sweep_status(b_sweep, SweepStatus::Interrupted);
  const std::string refused = gap_error(db, sc.sweep, b_sweep);
  EXPECT_NE(refused.find("sweep " + std::to_string(b_sweep) + " is interrupted, not finished"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("--allow-partial"), std::string::npos) << refused;
  const OracleGap g = oracle_gap(db, sc.sweep, b_sweep, gdn::Pass::Forward, /*allow_partial=*/true);
  EXPECT_EQ(g.measured_sweep.sweep.status, SweepStatus::Interrupted);
  EXPECT_NE(render_oracle_gap(g, ReportFormat::Table).find("PARTIAL: interrupted"), std::string::npos);
}

}  // namespace
}  // namespace gdn::db::test
