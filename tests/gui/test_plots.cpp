// Plot content: latency by field, metric scatter, heatmap, distributions, timelines, side by side.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gdn/gui/model/plots.hpp"
#include "temp_dir.hpp"
#include "test_db.hpp"

using namespace gdn;
using namespace gdn::gui::model;

namespace {

struct Fixture {
  gdn::gui::testing::TempDir dir;
  std::string path = dir.file("p.db");
  gdn::gui::testing::TestDbIds ids =
      gdn::gui::testing::make_test_db(path, {.variants = 24, .problems = 4});
  db::Database db = db::Database::open(path);
  SweepRows rows;
  std::int64_t problem = 0;
  Fixture() {
    rows.load(db, ids.sweeps[0]);
    problem = rows.problem_ids().front();
  }
  // Passed p50s of the problem, the ground truth the plots are checked against.
  std::vector<const db::ResultRow*> passed() const {
    std::vector<const db::ResultRow*> out;
    for (std::size_t i : rows.rows_of_problem(problem))
      if (rows.rows()[i].result.outcome == db::Outcome::Passed) out.push_back(&rows.rows()[i]);
    return out;
  }
};

}  // namespace

TEST(Plots, ConfigAndMetricFieldLists) {
  const auto config = config_fields();
  EXPECT_NE(std::find(config.begin(), config.end(), db::Field::BlockV), config.end());
  EXPECT_EQ(std::find(config.begin(), config.end(), db::Field::LatencyP50), config.end());
  const auto metrics = metric_fields();
  EXPECT_NE(std::find(metrics.begin(), metrics.end(), db::Field::TensorPipePct), metrics.end());
}

TEST(Plots, LatencyByFieldHasOnePointPerPassedResultAndTheBestLine) {
  Fixture f;
  const XYPlot plot = latency_vs_field(f.rows, f.problem, db::Field::BlockV);
  EXPECT_EQ(plot.x_categories, (std::vector<std::string>{"32", "64", "128"}));
  std::size_t points = 0;
  const XYSeries* best = nullptr;
  for (const auto& s : plot.series) {
    if (s.connect) {
      best = &s;
      continue;
    }
    points += s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      EXPECT_GE(s.x[i], -0.31);
      EXPECT_LE(s.x[i], 2.31);
      EXPECT_FALSE(s.labels[i].empty());
    }
  }
  EXPECT_EQ(points, f.passed().size());
  ASSERT_NE(best, nullptr);
  ASSERT_EQ(best->size(), 3u);
  for (std::size_t c = 0; c < 3; ++c) {
    double expected = INFINITY;
    for (const auto* r : f.passed())
      if (std::to_string(r->variant.config.block_v) == plot.x_categories[c])
        expected = std::min(expected, *r->result.latency_p50_ms);
    EXPECT_DOUBLE_EQ(best->y[c], expected);
  }
}

TEST(Plots, MetricScatterSkipsAndCountsResultsWithoutTheMetric) {
  Fixture f;
  std::size_t without = 0;
  const XYPlot plot = latency_vs_metric(f.rows, f.problem, db::Field::SmBusyPct, &without);
  std::size_t points = 0;
  for (const auto& s : plot.series) points += s.size();
  std::size_t expected_missing = 0;
  for (const auto* r : f.passed()) expected_missing += !r->result.metrics.sm_busy_pct;
  EXPECT_GT(expected_missing, 0u) << "the fixture leaves some metrics NULL";
  EXPECT_EQ(without, expected_missing);
  EXPECT_EQ(points + without, f.passed().size());
}

TEST(Plots, HeatmapCellsHoldTheBestP50AndNameTheWinner) {
  Fixture f;
  const HeatmapGrid grid = latency_heatmap(f.rows, f.problem, db::Field::BlockV, db::Field::Stages);
  ASSERT_EQ(grid.x_labels.size(), 3u);
  ASSERT_EQ(grid.y_labels, (std::vector<std::string>{"2", "3"}));
  for (std::size_t yi = 0; yi < 2; ++yi)
    for (std::size_t xi = 0; xi < 3; ++xi) {
      double expected = INFINITY;
      std::string winner;
      for (const auto* r : f.passed())
        if (std::to_string(r->variant.config.block_v) == grid.x_labels[xi] &&
            std::to_string(r->variant.config.stages) == grid.y_labels[yi] &&
            *r->result.latency_p50_ms < expected) {
          expected = *r->result.latency_p50_ms;
          winner = r->variant.name;
        }
      if (std::isinf(expected)) {
        EXPECT_TRUE(std::isnan(grid.at(xi, yi)));
      } else {
        EXPECT_DOUBLE_EQ(grid.at(xi, yi), expected);
        EXPECT_EQ(grid.cell_notes[yi * 3 + xi], "best: " + winner);
        EXPECT_GE(expected, grid.lo);
        EXPECT_LE(expected, grid.hi);
      }
    }
}

TEST(Plots, SampleDistributionMarksQuantilesOfTheSamples) {
  std::vector<double> samples;
  for (int i = 1; i <= 10; ++i) samples.push_back(i);
  const Distribution d = sample_distribution(samples, "t");
  EXPECT_EQ(d.sample_count, 10u);
  EXPECT_DOUBLE_EQ(d.marks.p20, 2.8);
  EXPECT_DOUBLE_EQ(d.marks.p50, 5.5);
  EXPECT_DOUBLE_EQ(d.marks.p80, 8.2);
  int total = 0;
  for (int c : d.histogram.counts) total += c;
  EXPECT_EQ(total, 10);
  EXPECT_EQ(sample_distribution({}, "none").sample_count, 0u);
}

TEST(Plots, SamplesOfAStoredResultLieAroundItsStoredP50) {
  Fixture f;
  const auto pair = best_two(f.rows, f.problem);
  ASSERT_TRUE(pair.best && pair.runner_up);
  const auto& best = f.rows.rows()[*pair.best];
  const auto& second = f.rows.rows()[*pair.runner_up];
  EXPECT_LE(*best.result.latency_p50_ms, *second.result.latency_p50_ms);
  for (const auto* r : f.passed()) EXPECT_GE(*r->result.latency_p50_ms, *best.result.latency_p50_ms);
  const Distribution d = sample_distribution(db::samples_of(f.db, best.result.id), "best");
  EXPECT_EQ(d.sample_count, static_cast<std::size_t>(best.result.sample_count));
  EXPECT_NEAR(d.marks.p50, *best.result.latency_p50_ms, *best.result.latency_p50_ms * 0.04);
}

TEST(Plots, PmTimelineHasOneLinePerRecordedCounter) {
  Fixture f;
  // The fixture records timelines for variants 0..2 on problem 0.
  const auto& row = f.rows.rows()[f.rows.rows_of_problem(f.ids.problems[0]).front()];
  const XYPlot plot = pm_timeline_plot(db::pm_timeline_of(f.db, row.result.id), "pm");
  ASSERT_EQ(plot.series.size(), 3u);  // sm busy, tensor, dram (issue active not recorded)
  for (const auto& s : plot.series) {
    EXPECT_TRUE(s.connect);
    EXPECT_EQ(s.size(), 40u);
    EXPECT_DOUBLE_EQ(s.x[1] - s.x[0], 2.0);  // 2000 ns apart, in microseconds
  }
  EXPECT_TRUE(pm_timeline_plot({}, "none").empty());
}

TEST(Plots, SideBySideListsResultFieldsWithRatios) {
  Fixture f;
  const auto pair = best_two(f.rows, f.problem);
  ASSERT_TRUE(pair.best && pair.runner_up);
  const auto& a = f.rows.rows()[*pair.best];
  const auto& b = f.rows.rows()[*pair.runner_up];
  const auto rows = side_by_side(a, b);
  const auto p50 = std::find_if(rows.begin(), rows.end(),
                                [](const auto& r) { return r.field == db::Field::LatencyP50; });
  ASSERT_NE(p50, rows.end());
  ASSERT_TRUE(p50->ratio.has_value());
  EXPECT_DOUBLE_EQ(*p50->ratio, *b.result.latency_p50_ms / *a.result.latency_p50_ms);
  EXPECT_GE(*p50->ratio, 1.0);
  const bool has_problem_field = std::any_of(rows.begin(), rows.end(), [](const auto& r) {
    return r.field == db::Field::TotalTokens;
  });
  EXPECT_FALSE(has_problem_field) << "both sides share the problem; its fields are noise here";
  EXPECT_NE(describe_problem(a.problem).find("tokens="), std::string::npos);
}
