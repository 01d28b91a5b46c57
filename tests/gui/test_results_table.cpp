// Sorting, filtering and live appends of the results table model.
#include <gtest/gtest.h>

#include <cmath>

#include "gdn/gui/model/results_table.hpp"
#include "gdn/gui/model/sweep_rows.hpp"
#include "temp_dir.hpp"
#include "test_db.hpp"

using namespace gdn;
using namespace gdn::gui::model;

namespace {

struct Fixture {
  gdn::gui::testing::TempDir dir;
  std::string path = dir.file("t.db");
  gdn::gui::testing::TestDbIds ids =
      gdn::gui::testing::make_test_db(path, {.variants = 20, .problems = 5});
  db::Database db = db::Database::open(path);
  SweepRows rows;
  Fixture() { rows.load(db, ids.sweeps[0]); }
};

}  // namespace

TEST(ResultsTable, SortsNumericColumnsWithNullsLastInBothDirections) {
  Fixture f;
  ResultsTable table;
  for (bool descending : {false, true}) {
    table.set_sort({{db::Field::LatencyP50, descending}});
    table.update(f.rows);
    ASSERT_EQ(table.size(), f.rows.rows().size());
    bool seen_null = false;
    double previous = descending ? INFINITY : -INFINITY;
    for (std::size_t i = 0; i < table.size(); ++i) {
      const auto& p50 = table.row(f.rows, i).result.latency_p50_ms;
      if (!p50) {
        seen_null = true;
        continue;
      }
      EXPECT_FALSE(seen_null) << "a value after a NULL at row " << i;
      if (descending)
        EXPECT_LE(*p50, previous);
      else
        EXPECT_GE(*p50, previous);
      previous = *p50;
    }
    EXPECT_TRUE(seen_null) << "the fixture has failed results without latency";
  }
}

TEST(ResultsTable, MultiKeySortUsesSecondKeyForTies) {
  Fixture f;
  ResultsTable table;
  table.set_sort({{db::Field::BlockV, false}, {db::Field::VariantName, true}});
  table.update(f.rows);
  for (std::size_t i = 1; i < table.size(); ++i) {
    const auto& a = table.row(f.rows, i - 1).variant;
    const auto& b = table.row(f.rows, i).variant;
    ASSERT_LE(a.config.block_v, b.config.block_v);
    if (a.config.block_v == b.config.block_v) EXPECT_GE(a.name, b.name);
  }
}

TEST(ResultsTable, FilterKeepsMatchingRowsAndBadFilterKeepsPrevious) {
  Fixture f;
  ResultsTable table;
  EXPECT_EQ(table.set_filter("outcome=Passed block_v=64"), "");
  table.update(f.rows);
  ASSERT_GT(table.size(), 0u);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table.row(f.rows, i).result.outcome, db::Outcome::Passed);
    EXPECT_EQ(table.row(f.rows, i).variant.config.block_v, 64);
  }
  const std::size_t before = table.size();
  EXPECT_NE(table.set_filter("block_v=abc"), "");
  table.update(f.rows);
  EXPECT_EQ(table.size(), before);
  EXPECT_EQ(table.filter_text(), "outcome=Passed block_v=64");
}

TEST(ResultsTable, SeesRowsAppendedWhileASweepWrites) {
  Fixture f;
  ResultsTable table;
  table.set_filter("p50>100");  // only the results appended below are that slow
  table.update(f.rows);
  EXPECT_EQ(table.size(), 0u);
  const std::size_t before = f.rows.rows().size();
  {
    db::Database writer = db::Database::open(f.path);
    const std::int64_t problem = gdn::gui::testing::register_test_problem(writer, 99);
    gdn::gui::testing::append_result(writer, f.ids.sweeps[0], f.ids.variants[0], problem, 150.0);
    gdn::gui::testing::append_result(writer, f.ids.sweeps[0], f.ids.variants[1], problem, 160.0);
  }
  EXPECT_EQ(f.rows.append_new(f.db), 2u);
  EXPECT_EQ(f.rows.rows().size(), before + 2);
  table.update(f.rows);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(f.rows.append_new(f.db), 0u) << "nothing new the second time";
}
