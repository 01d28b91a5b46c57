// Comparing two sweeps: provenance stated, differences classed by measured noise.
#include "gdn/db/model.hpp"
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

}  // namespace
}  // namespace gdn::db::test
