// The query model: sweep summaries, filtered/sorted results, fields, best per problem.
#include <cmath>

#include "gdn/db/model.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

struct ModelTest : ::testing::Test {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  Scenario sc = write_scenario(db);
};

std::vector<std::string> names(const std::vector<ResultRow>& rows) {
  std::vector<std::string> out;
  for (const ResultRow& r : rows) out.push_back(r.variant.name + "@" + std::to_string(r.problem.row_index));
  return out;
}

TEST_F(ModelTest, SweepSummaryCountsOutcomes) {
  const std::vector<SweepSummary> sweeps = list_sweeps(db);
  ASSERT_EQ(sweeps.size(), 1u);
  const SweepSummary& s = sweeps[0];
  EXPECT_EQ(s.result_count, 20);
  EXPECT_EQ(s.count(Outcome::Passed), 13);
  EXPECT_EQ(s.count(Outcome::Incorrect), 3);
  EXPECT_EQ(s.count(Outcome::Timeout), 1);
  EXPECT_EQ(s.count(Outcome::Crashed), 1);
  EXPECT_EQ(s.count(Outcome::Unsupported), 1);
  EXPECT_EQ(s.count(Outcome::LaunchFailed), 1);
  EXPECT_EQ(s.count(Outcome::CompileRejected), 0);
  EXPECT_EQ(s.sweep.status, SweepStatus::Finished);
  EXPECT_EQ(latest_sweep_with_passes(db), sc.sweep);
  EXPECT_THROW(sweep_summary(db, 42), DbError);
}

TEST_F(ModelTest, FiltersCombine) {
  ResultQuery q{.sweep_id = sc.sweep};
  q.conditions = {{Field::Outcome, CompareOp::Eq, std::string("Passed")},
                  {Field::BlockV, CompareOp::Eq, std::int64_t{64}},
                  {Field::TotalTokens, CompareOp::Lt, std::int64_t{6000}}};
  q.sort = {{Field::RowIndex}, {Field::VariantName}};
  EXPECT_EQ(names(query_results(db, q)),
            (std::vector<std::string>{"gdn_fwd_A@0", "gdn_fwd_C@0", "gdn_fwd_A@1", "gdn_fwd_C@1", "gdn_fwd_C@4"}));
  EXPECT_EQ(count_results(db, q), 5);
  q.conditions = {{Field::Message, CompareOp::Contains, std::string("rel rms")}};
  EXPECT_EQ(count_results(db, q), 3);
  q.conditions = {{Field::Roles, CompareOp::Eq, std::string("cooperative")}};
  EXPECT_EQ(count_results(db, q), 5);  // the staged variant
  q.conditions = {{Field::LatencyP50, CompareOp::Eq, std::monostate{}}};
  EXPECT_EQ(count_results(db, q), 7);  // the failures have no time
  q.conditions = {{Field::LatencyP50, CompareOp::Ge, 2.5}};
  EXPECT_EQ(count_results(db, q), 6);
}

TEST_F(ModelTest, SortsByMetricWithNullsLastAndPages) {
  ResultQuery q{.sweep_id = sc.sweep, .sort = {{Field::LatencyP50, true}}};
  const std::vector<ResultRow> all = query_results(db, q);
  ASSERT_EQ(all.size(), 20u);
  EXPECT_EQ(all.front().result.latency_p50_ms, 12.0);
  EXPECT_FALSE(all.back().result.latency_p50_ms.has_value());
  for (std::size_t i = 1; i < 13; ++i)
    EXPECT_GE(*all[i - 1].result.latency_p50_ms, *all[i].result.latency_p50_ms);
  q.limit = 3;
  q.offset = 1;
  const std::vector<ResultRow> page = query_results(db, q);
  ASSERT_EQ(page.size(), 3u);
  EXPECT_EQ(page[0].result.id, all[1].result.id);
  EXPECT_EQ(page[2].result.id, all[3].result.id);
  q = {.sweep_id = sc.sweep, .sort = {{Field::VariantName, false}, {Field::LatencyP50, false}}};
  EXPECT_EQ(names(query_results(db, q)).front(), "gdn_fwd_A@0");
}

TEST_F(ModelTest, BadConditionsNameTheField) {
  ResultQuery q{.sweep_id = sc.sweep};
  q.conditions = {{Field::BlockV, CompareOp::Eq, std::string("64")}};
  try {
    query_results(db, q);
    FAIL();
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("conditions[0] on field 'block_v': expected a number value, got a text"),
              std::string::npos) << e.what();
  }
  q.conditions = {{Field::LatencyP50, CompareOp::Contains, 1.0}};
  EXPECT_THROW(query_results(db, q), DbError);
  q.conditions = {{Field::LatencyP50, CompareOp::Lt, std::monostate{}}};
  EXPECT_THROW(query_results(db, q), DbError);
  EXPECT_THROW(query_results(db, ResultQuery{}), DbError);  // no sweep id
}

TEST_F(ModelTest, FieldsAreListedParsedAndValued) {
  EXPECT_EQ(all_fields().size(), static_cast<std::size_t>(Field::PlanGroupSumBeside) + 1);
  for (const FieldInfo& f : all_fields()) EXPECT_EQ(parse_field(f.name), f.field) << f.name;
  EXPECT_FALSE(parse_field("no_such_field").has_value());
  EXPECT_TRUE(field_info(Field::BlockV).is_config);
  EXPECT_FALSE(field_info(Field::LatencyP50).is_config);
  const auto row = result_by_id(db, 1);
  ASSERT_TRUE(row);
  EXPECT_EQ(format_value(field_value(*row, Field::VariantName)), "gdn_fwd_A");
  EXPECT_EQ(format_value(field_value(*row, Field::Roles)), "producer_consumer");
  EXPECT_EQ(format_value(field_value(*row, Field::Family)), "fused");
  EXPECT_EQ(format_value(field_value(*row, Field::LatencyP50)), "1");
  EXPECT_EQ(format_value(field_value(*row, Field::DramPct)), "");  // NULL
  EXPECT_EQ(std::get<std::int64_t>(field_value(*row, Field::HV)), 32);
}

TEST_F(ModelTest, BestPerProblemWithMarginsAndCounts) {
  const std::vector<ProblemBest> best = best_per_problem(db, sc.sweep);
  ASSERT_EQ(best.size(), 5u);
  EXPECT_EQ(best[0].best->variant.name, "gdn_fwd_A");
  EXPECT_EQ(best[0].runner_up->variant.name, "gdn_fwd_B");
  EXPECT_NEAR(*best[0].margin, 0.10, 1e-12);
  EXPECT_EQ(best[2].best->variant.name, "gdn_fwd_B");
  EXPECT_NEAR(*best[2].margin, 0.25, 1e-12);
  EXPECT_EQ(best[3].outcome_counts[static_cast<std::size_t>(Outcome::Crashed)], 1);
  EXPECT_EQ(best[4].best->variant.name, "gdn_fwd_C");
  EXPECT_FALSE(best[4].runner_up.has_value());
  EXPECT_FALSE(best[4].margin.has_value());
  EXPECT_EQ(best[4].outcome_counts[static_cast<std::size_t>(Outcome::Passed)], 1);
}

TEST_F(ModelTest, SamplesOfAResult) {
  EXPECT_EQ(samples_of(db, 1), (std::vector<double>{0.99, 1.0, 1.01}));
  EXPECT_TRUE(samples_of(db, 4).empty());  // an Incorrect result has no samples
  EXPECT_TRUE(pm_timeline_of(db, 1).empty());
}

}  // namespace
}  // namespace gdn::db::test
