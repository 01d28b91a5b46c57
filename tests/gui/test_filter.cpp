// The filter line: parsing, error messages, and row-for-row agreement with db::query_results.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gdn/gui/model/filter.hpp"
#include "gdn/gui/model/sweep_rows.hpp"
#include "temp_dir.hpp"
#include "test_db.hpp"

using namespace gdn;
using namespace gdn::gui::model;

TEST(Filter, ParsesTypedClausesAndAliases) {
  const ParsedFilter f = parse_filter("block_v=64, outcome!=Passed p50<=0.5 \"fused_v\"");
  ASSERT_TRUE(f.ok()) << f.error;
  ASSERT_EQ(f.conditions.size(), 4u);
  EXPECT_EQ(f.conditions[0].field, db::Field::BlockV);
  EXPECT_EQ(f.conditions[0].op, db::CompareOp::Eq);
  EXPECT_EQ(std::get<std::int64_t>(f.conditions[0].value), 64);
  EXPECT_EQ(f.conditions[1].op, db::CompareOp::Ne);
  EXPECT_EQ(std::get<std::string>(f.conditions[1].value), "Passed");
  EXPECT_EQ(f.conditions[2].field, db::Field::LatencyP50);
  EXPECT_EQ(f.conditions[2].op, db::CompareOp::Le);
  EXPECT_DOUBLE_EQ(std::get<double>(f.conditions[2].value), 0.5);
  EXPECT_EQ(f.conditions[3].field, db::Field::VariantName);
  EXPECT_EQ(f.conditions[3].op, db::CompareOp::Contains);
  EXPECT_EQ(std::get<std::string>(f.conditions[3].value), "fused_v");
}

// The plan columns filter by their names and short aliases, the backward recompute's CP among them.
TEST(Filter, PlanColumnsByNameAndAlias) {
  const ParsedFilter f = parse_filter("recompute_cp=16 pin_recompute_cp_chunks=-1 plan_recompute_cp_chunks!=null");
  ASSERT_TRUE(f.ok()) << f.error;
  ASSERT_EQ(f.conditions.size(), 3u);
  EXPECT_EQ(f.conditions[0].field, db::Field::PlanRecomputeCpChunks);
  EXPECT_EQ(std::get<std::int64_t>(f.conditions[0].value), 16);
  EXPECT_EQ(f.conditions[1].field, db::Field::PinRecomputeCpChunks);
  EXPECT_EQ(std::get<std::int64_t>(f.conditions[1].value), -1);
  EXPECT_EQ(f.conditions[2].field, db::Field::PlanRecomputeCpChunks);
  EXPECT_NE(filter_help().find("recompute_cp"), std::string::npos);
  const ParsedFilter beside = parse_filter("pass1_beside=1 pin_pass1_beside_recompute>=0");
  ASSERT_TRUE(beside.ok()) << beside.error;
  ASSERT_EQ(beside.conditions.size(), 2u);
  EXPECT_EQ(beside.conditions[0].field, db::Field::PlanPass1BesideRecompute);
  EXPECT_EQ(std::get<std::int64_t>(beside.conditions[0].value), 1);
  EXPECT_EQ(beside.conditions[1].field, db::Field::PinPass1BesideRecompute);
  EXPECT_NE(filter_help().find("pass1_beside"), std::string::npos);
  const ParsedFilter sum = parse_filter("group_sum_beside=0");
  ASSERT_TRUE(sum.ok()) << sum.error;
  EXPECT_EQ(sum.conditions[0].field, db::Field::PlanGroupSumBeside);
}

TEST(Filter, EmptyTextIsNoCondition) {
  const ParsedFilter f = parse_filter("   ");
  EXPECT_TRUE(f.ok());
  EXPECT_TRUE(f.conditions.empty());
}

TEST(Filter, ErrorsNameTheClauseAndTheProblem) {
  auto error_of = [](const char* text) { return parse_filter(text).error; };
  EXPECT_NE(error_of("bogus=3").find("unknown field 'bogus'"), std::string::npos);
  EXPECT_NE(error_of("block_v=sixty").find("block_v expects an integer, got 'sixty'"),
            std::string::npos);
  EXPECT_NE(error_of("p50<fast").find("expects a number"), std::string::npos);
  EXPECT_NE(error_of("block_v~6").find("needs a text field"), std::string::npos);
  EXPECT_NE(error_of("name=\"open").find("unterminated"), std::string::npos);
  EXPECT_NE(error_of("registers<null").find("null can only be compared"), std::string::npos);
}

// The in-memory evaluation must select exactly what SQLite selects for the same conditions.
TEST(Filter, AgreesWithQueryResultsRowForRow) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("f.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 30, .problems = 8});
  db::Database db = db::Database::open(path);
  SweepRows rows;
  rows.load(db, ids.sweeps[0]);
  ASSERT_EQ(rows.rows().size(), 240u);

  const char* filters[] = {"block_v=64",          "outcome!=Passed",     "p50<0.05",
                           "p50>=0.05 stages=3",  "FUSED",               "roles~producer",
                           "sm_busy_pct=null",    "registers!=null",     "h_qk>16 family=staged",
                           "message~signal",      "local_bytes>0",       "tensor<30",
                           "roles=column_warps"};
  for (const char* text : filters) {
    const ParsedFilter f = parse_filter(text);
    ASSERT_TRUE(f.ok()) << text << ": " << f.error;
    std::set<std::int64_t> in_memory;
    for (const auto& row : rows.rows())
      if (matches_all(row, f.conditions)) in_memory.insert(row.result.id);
    db::ResultQuery q;
    q.sweep_id = ids.sweeps[0];
    q.conditions = f.conditions;
    std::set<std::int64_t> in_sql;
    for (const auto& row : db::query_results(db, q)) in_sql.insert(row.result.id);
    EXPECT_EQ(in_memory, in_sql) << "filter: " << text;
    EXPECT_FALSE(in_sql.empty()) << "filter selects nothing, so it tests nothing: " << text;
    EXPECT_LT(in_sql.size(), rows.rows().size()) << "filter selects everything: " << text;
  }
}
