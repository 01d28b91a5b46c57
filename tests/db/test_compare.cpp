// Comparing two sweeps: provenance stated, differences classed by measured noise, per problem
// and per candidate, and the renderings of `gdnlab compare`.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gdn/db/model.hpp"
#include "gdn/db/report.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

TEST(Classify, ByNoiseBands) {
  // Disjoint bands.
  EXPECT_EQ(classify_difference(1.0, 1.05, 1.1, 0.8, 0.85, 0.9), Difference::Faster);
  EXPECT_EQ(classify_difference(1.0, 1.05, 1.1, 1.2, 1.25, 1.3), Difference::Slower);
  // Each median inside the other band.
  EXPECT_EQ(classify_difference(1.0, 1.05, 1.1, 1.01, 1.06, 1.12), Difference::Same);
  // Bands overlap but B's median lies outside A's band.
  EXPECT_EQ(classify_difference(1.0, 1.02, 1.04, 1.03, 1.06, 1.09), Difference::Unclear);
  // A noisy side: identical medians are the same even with a wide band.
  EXPECT_EQ(classify_difference(0.5, 1.0, 1.5, 0.99, 1.0, 1.01), Difference::Same);
  EXPECT_EQ(to_string(Difference::Unclear), "unclear");
}

TEST(Compare, TwoSweepsOnDifferentDriversAndBuilds) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const Scenario sc = write_scenario(db);
  ResultsWriter w(db);
  const std::int64_t device_b = w.register_device(h200("575.51"));
  const std::int64_t build_b = w.register_build(build("fff0000"));
  const std::int64_t sweep_b = w.begin_sweep(sweep_of(device_b, build_b));
  // B: P0 clearly faster (0.8 vs 1.0 with 2% bands), P1 the same (1.2), P2 slower (9 vs 8),
  // P3 unclear (2.0 -> 2.03 with 2% bands: overlapping, medians outside), P4 not measured.
  insert(w, passed(sweep_b, sc.a, sc.p[0], 0.8));
  insert(w, passed(sweep_b, sc.a, sc.p[1], 1.2));
  insert(w, passed(sweep_b, sc.b, sc.p[2], 9.0));
  insert(w, passed(sweep_b, sc.a, sc.p[3], 2.03));
  // A problem only B has: a new shape set row.
  ProblemRecord extra = problem(9, 8, 8, 1, 128, 128);
  extra.shape_set_hash = "other";
  insert(w, passed(sweep_b, sc.a, w.register_problem(extra), 0.1));

  const SweepComparison cmp = compare_sweeps(db, sc.sweep, sweep_b);
  EXPECT_EQ(cmp.device_differences, "driver 580.65.06 vs 575.51");
  EXPECT_EQ(cmp.build_differences, "git abc1234 vs fff0000");
  ASSERT_EQ(cmp.problems.size(), 6u);
  EXPECT_EQ(cmp.problems[0].difference, Difference::Faster);
  EXPECT_NEAR(*cmp.problems[0].ratio, 0.8, 1e-12);
  EXPECT_EQ(cmp.problems[1].difference, Difference::Same);
  EXPECT_EQ(cmp.problems[2].difference, Difference::Slower);
  EXPECT_EQ(cmp.problems[3].difference, Difference::Unclear);
  EXPECT_NE(cmp.problems[3].note.find("overlap"), std::string::npos);
  EXPECT_EQ(cmp.problems[4].difference, Difference::Unclear);
  EXPECT_EQ(cmp.problems[4].note, "problem measured in only one sweep");
  EXPECT_FALSE(cmp.problems[4].best_b.has_value());
  EXPECT_EQ(cmp.problems[5].problem.h_qk, 8);
  EXPECT_FALSE(cmp.problems[5].best_a.has_value());
  EXPECT_EQ(cmp.difference_counts[static_cast<std::size_t>(Difference::Unclear)], 3);

  const SweepComparison same = compare_sweeps(db, sc.sweep, sc.sweep);
  EXPECT_EQ(same.device_differences, "");
  EXPECT_EQ(same.build_differences, "");
  EXPECT_EQ(same.difference_counts[static_cast<std::size_t>(Difference::Same)], 5);
  EXPECT_THROW(compare_sweeps(db, sc.sweep, 999), DbError);
}

TEST(Compare, GeometricMeanSkipsRatiosThatAreNotPositiveAndFinite) {
  EXPECT_FALSE(geometric_mean({}).has_value());
  EXPECT_NEAR(*geometric_mean({0.5, 2.0}), 1.0, 1e-15);
  EXPECT_NEAR(*geometric_mean({4.0, 0.0, -1.0, std::nan(""), 1.0}), 2.0, 1e-15);
  EXPECT_FALSE(geometric_mean({0.0, std::numeric_limits<double>::infinity()}).has_value());
}

// B re-measures the scenario's candidates as a second build would: A and B of P0 (B 10 % faster
// only for A), C where the scenario only failed it, and the staged variant nowhere Passed in A.
struct TwoBuilds {
  Scenario sc;
  std::int64_t sweep_b = 0;
};
TwoBuilds write_two_builds(Database& db) {
  TwoBuilds t;
  t.sc = write_scenario(db);
  ResultsWriter w(db);
  const std::int64_t build_b = w.register_build(build("fff0000"));
  const std::int64_t device = w.register_device(h200());
  t.sweep_b = w.begin_sweep(sweep_of(device, build_b));
  insert(w, passed(t.sweep_b, t.sc.a, t.sc.p[0], 0.90));  // faster (1.00 in A)
  insert(w, passed(t.sweep_b, t.sc.b, t.sc.p[0], 1.10));  // same
  insert(w, passed(t.sweep_b, t.sc.c, t.sc.p[3], 2.2));   // Crashed in A: not compared
  insert(w, passed(t.sweep_b, t.sc.b, t.sc.p[2], 9.0));   // slower (8.0 in A)
  insert(w, failed(t.sweep_b, t.sc.c, t.sc.p[4], Outcome::Incorrect, "o rel rms 0.1"));  // Passed in A only
  w.set_sweep_status(t.sweep_b, SweepStatus::Finished);
  return t;
}

TEST(Compare, CandidatesPassedInBothSweepsArePairedByNameAndProblem) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const TwoBuilds t = write_two_builds(db);
  const std::vector<CandidateComparison> c = compare_candidates(db, t.sc.sweep, t.sweep_b);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].candidate, "gdn_fwd_A");
  EXPECT_EQ(c[0].problem.row_index, 0);
  EXPECT_NEAR(c[0].ratio, 0.9, 1e-12);
  EXPECT_EQ(c[0].difference, Difference::Faster);
  EXPECT_EQ(c[1].candidate, "gdn_fwd_B");
  EXPECT_EQ(c[1].difference, Difference::Same);
  EXPECT_EQ(c[2].problem.row_index, 2);
  EXPECT_NEAR(c[2].ratio, 9.0 / 8.0, 1e-12);
  EXPECT_EQ(c[2].difference, Difference::Slower);
  EXPECT_EQ(c[2].a.result.sweep_id, t.sc.sweep);
  EXPECT_EQ(c[2].b.result.sweep_id, t.sweep_b);
  // Against itself: every Passed candidate, each the same.
  const auto self = compare_candidates(db, t.sc.sweep, t.sc.sweep);
  EXPECT_EQ(self.size(), 13u);
  for (const auto& x : self) EXPECT_EQ(x.difference, Difference::Same) << x.candidate;
}

TEST(Compare, RenderingsStateBothSweepsAndSummariseTheRows) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const TwoBuilds t = write_two_builds(db);
  const std::string table = render_comparison(db, t.sc.sweep, t.sweep_b, CompareBy::Candidate, ReportFormat::Table);
  EXPECT_NE(table.find("A: sweep 1"), std::string::npos) << table;
  EXPECT_NE(table.find("B: sweep 2"), std::string::npos) << table;
  EXPECT_NE(table.find("build differences: git abc1234 vs fff0000"), std::string::npos) << table;
  EXPECT_NE(table.find("device differences: none"), std::string::npos) << table;
  EXPECT_NE(table.find("rows 3, compared 3: faster 1, slower 1, same 1, unclear 0"), std::string::npos) << table;
  // (0.9 x 1.0 x 1.125)^(1/3)
  EXPECT_NE(table.find("geometric mean of B/A: 1.0041 (lowest 0.9000, highest 1.1250)"), std::string::npos)
      << table;

  const std::string csv = render_comparison(db, t.sc.sweep, t.sweep_b, CompareBy::Candidate, ReportFormat::Csv);
  EXPECT_EQ(csv.rfind("shape_set,row_index,pass,h_qk,h_v,num_seqs,total_tokens,seqlens,candidate,a_p20_ms,", 0), 0u)
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4) << csv;
  EXPECT_NE(csv.find(",0.9,"), std::string::npos) << csv;  // exact, not rounded

  const auto doc = nlohmann::json::parse(
      render_comparison(db, t.sc.sweep, t.sweep_b, CompareBy::Problem, ReportFormat::Json));
  EXPECT_EQ(doc["a"]["id"], t.sc.sweep);
  EXPECT_EQ(doc["b"]["git_sha"], "fff0000");
  EXPECT_EQ(doc["by"], "problem");
  EXPECT_EQ(doc["build_differences"], "git abc1234 vs fff0000");
  // By problem: P0 (A 1.00 -> A 0.90), P2 (B 8.0 -> B 9.0), P3 (A 2.0 -> C 2.2), P1 and P4 in
  // A only.
  EXPECT_EQ(doc["summary"]["rows"], 5);
  EXPECT_EQ(doc["summary"]["compared"], 3);
  EXPECT_EQ(doc["summary"]["classes"]["slower"], 2);
  ASSERT_EQ(doc["rows"].size(), 5u);
  EXPECT_EQ(doc["rows"][3]["best_a"], "gdn_fwd_A");
  EXPECT_EQ(doc["rows"][3]["best_b"], "gdn_fwd_C");
  EXPECT_TRUE(doc["rows"][1]["ratio"].is_null());
  EXPECT_EQ(doc["rows"][1]["note"], "problem measured in only one sweep");

  EXPECT_THROW(render_comparison(db, t.sc.sweep, 99, CompareBy::Problem, ReportFormat::Table), DbError);
  EXPECT_EQ(parse_compare_by("candidate"), CompareBy::Candidate);
  EXPECT_FALSE(parse_compare_by("variant").has_value());
}

// By pin: each candidate that pins a field to the value against the same candidate without it
// (its other pins kept), within one sweep or across two; candidates pinning another value, or
// without a twin, are not paired.
TEST(Compare, PinnedCandidatesArePairedWithTheirTwinWithoutThePin) {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  const Scenario sc = write_scenario(db);
  ResultsWriter w(db);
  const std::int64_t sweep = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
  // A candidate pinning fixup_cols and pass1_beside_recompute (GDN_PLAN_RULE: not pinned), named
  // as the lab names it.
  const auto candidate = [&w](int fixup_cols, int beside) {
    VariantRecord v = backward_variant("", gdn::WarpRoles::ProducerConsumer, 128, 64);
    v.pins.fixup_cols = fixup_cols;
    v.pins.pass1_beside_recompute = beside;
    v.name = "gdn_bwd_P_cp64" + gdn::pins_suffix(v.pins);
    return w.register_variant(v);
  };
  constexpr int kRule = GDN_PLAN_RULE;
  const std::int64_t base = candidate(kRule, kRule), beside = candidate(kRule, 1), serial = candidate(kRule, 0),
                     fix = candidate(16, kRule), fix_beside = candidate(16, 1), orphan = candidate(8, 1);
  for (int p = 0; p < 2; ++p) {
    insert(w, passed(sweep, base, sc.p[p], 2.0));
    insert(w, passed(sweep, beside, sc.p[p], p == 0 ? 1.5 : 2.0));
    insert(w, passed(sweep, serial, sc.p[p], 2.0));
    insert(w, passed(sweep, fix, sc.p[p], 4.0));
    insert(w, passed(sweep, fix_beside, sc.p[p], 5.0));
    insert(w, passed(sweep, orphan, sc.p[p], 1.0));  // no +fx8 without the pin: unpaired
  }
  w.set_sweep_status(sweep, SweepStatus::Finished);
  std::string error;
  const gdn::PlanField& pb = *gdn::find_plan_field("pass1_beside_recompute");
  const std::vector<CandidateComparison> c = compare_pinned(SweepRef{db, sweep}, SweepRef{db, sweep}, pb, 1);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].candidate, "gdn_bwd_P_cp64");
  EXPECT_EQ(c[0].candidate_b, "gdn_bwd_P_cp64+pb1");
  EXPECT_NEAR(c[0].ratio, 0.75, 1e-12);
  EXPECT_EQ(c[0].difference, Difference::Faster);
  EXPECT_EQ(c[1].candidate, "gdn_bwd_P_cp64+fx16");
  EXPECT_EQ(c[1].candidate_b, "gdn_bwd_P_cp64+fx16+pb1");
  EXPECT_NEAR(c[1].ratio, 1.25, 1e-12);
  EXPECT_EQ(c[1].difference, Difference::Slower);
  EXPECT_EQ(c[2].problem.row_index, 1);
  EXPECT_EQ(c[2].difference, Difference::Same);
  // The value chooses the candidates: pb0 pairs its one twin per problem.
  EXPECT_EQ(compare_pinned(SweepRef{db, sweep}, SweepRef{db, sweep}, pb, 0).size(), 2u);

  const PinChoice choice{&pb, 1};
  const auto doc = nlohmann::json::parse(render_comparison(db, sweep, sweep, CompareBy::Pin, ReportFormat::Json, &choice));
  EXPECT_EQ(doc["by"], "pin");
  EXPECT_EQ(doc["pin"]["field"], "pass1_beside_recompute");
  EXPECT_EQ(doc["pin"]["value"], 1);
  EXPECT_EQ(doc["summary"]["compared"], 4);
  EXPECT_EQ(doc["rows"][0]["candidate_a"], "gdn_bwd_P_cp64");
  EXPECT_EQ(doc["rows"][0]["candidate_b"], "gdn_bwd_P_cp64+pb1");
  const std::string table = render_comparison(db, sweep, sweep, CompareBy::Pin, ReportFormat::Table, &choice);
  EXPECT_NE(table.find("by pin pass1_beside_recompute=1: each candidate of B with the pin against the same "
                       "candidate without it in A"),
            std::string::npos)
      << table;
  EXPECT_THROW(render_comparison(db, sweep, sweep, CompareBy::Pin, ReportFormat::Table), DbError);

  const auto by_token = parse_pin_choice("pb=1", &error);
  ASSERT_TRUE(by_token.has_value()) << error;
  EXPECT_EQ(by_token->field, &pb);
  EXPECT_EQ(by_token->value, 1);
  ASSERT_TRUE(parse_pin_choice("recompute_cp_chunks=0", &error).has_value()) << error;
  EXPECT_FALSE(parse_pin_choice("pb=2", &error).has_value());
  EXPECT_NE(error.find("pass1_beside_recompute: expected 0 or 1"), std::string::npos) << error;
  EXPECT_NE(error.find("got '2'"), std::string::npos) << error;
  for (const char* bad : {"pb", "zz=1", "=1", ""}) {
    EXPECT_FALSE(parse_pin_choice(bad, &error).has_value()) << bad;
    EXPECT_NE(error.find("expected FIELD=VALUE with FIELD one of prepare_overlap (ov)"), std::string::npos) << error;
  }
  EXPECT_EQ(parse_compare_by("pin"), CompareBy::Pin);
}

}  // namespace
}  // namespace gdn::db::test
