// SweepRows: loading a sweep, the per-problem index, and the problem lookup.
#include <gtest/gtest.h>

#include "gdn/gui/model/sweep_rows.hpp"
#include "temp_dir.hpp"
#include "test_db.hpp"

using namespace gdn;
using namespace gdn::gui::model;

TEST(SweepRows, LoadsOneSweepAndIndexesItsProblems) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("s.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 7, .problems = 4});
  db::Database db = db::Database::open(path);
  SweepRows rows;
  rows.load(db, ids.sweeps[1]);
  EXPECT_EQ(rows.sweep_id(), ids.sweeps[1]);
  EXPECT_EQ(rows.rows().size(), 28u);
  ASSERT_EQ(rows.problem_ids().size(), 4u);
  for (std::int64_t pid : rows.problem_ids()) {
    EXPECT_EQ(rows.rows_of_problem(pid).size(), 7u);
    for (std::size_t i : rows.rows_of_problem(pid)) {
      EXPECT_EQ(rows.rows()[i].problem.id, pid);
      EXPECT_EQ(rows.rows()[i].result.sweep_id, ids.sweeps[1]);
    }
  }
  EXPECT_TRUE(rows.rows_of_problem(987654).empty());
  EXPECT_THROW(rows.problem(987654), std::invalid_argument);

  const auto generation = rows.generation();
  rows.load(db, ids.sweeps[0]);
  EXPECT_NE(rows.generation(), generation);
  rows.clear();
  EXPECT_EQ(rows.sweep_id(), 0);
  EXPECT_TRUE(rows.rows().empty());
  EXPECT_EQ(rows.append_new(db), 0u);
}
