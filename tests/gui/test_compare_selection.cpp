// Compare and selection views over the db library's comparison, selection and export.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gdn/gui/model/compare_view.hpp"
#include "gdn/gui/model/selection_view.hpp"
#include "temp_dir.hpp"
#include "test_db.hpp"

using namespace gdn;
using namespace gdn::gui::model;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(CompareView, RatioPlotHasOnePointPerComparableProblemInItsClassSeries) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("c.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 12, .problems = 6});
  db::Database db = db::Database::open(path);
  const db::SweepComparison cmp = db::compare_sweeps(db, ids.sweeps[0], ids.sweeps[1]);
  ASSERT_EQ(cmp.problems.size(), 6u);
  const std::vector<ComparedRow> rows = compared_rows(cmp);
  ASSERT_EQ(rows.size(), 6u);
  const XYPlot plot = comparison_ratio_plot(rows, false);
  ASSERT_EQ(plot.series.size(), 4u);
  std::size_t points = 0;
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(plot.series[c].name, db::to_string(static_cast<db::Difference>(c)));
    points += plot.series[c].size();
    for (std::size_t i = 0; i < plot.series[c].size(); ++i) {
      const auto& p = cmp.problems[static_cast<std::size_t>(plot.series[c].x[i])];
      EXPECT_EQ(static_cast<std::size_t>(p.difference), c);
      EXPECT_DOUBLE_EQ(plot.series[c].y[i], *p.ratio);
    }
  }
  std::size_t with_ratio = 0, log_n = 0;
  double log_sum = 0;
  for (const auto& p : cmp.problems)
    if (p.ratio) {
      ++with_ratio;
      ++log_n;
      log_sum += std::log(*p.ratio);
    }
  EXPECT_EQ(points, with_ratio);
  ASSERT_TRUE(geomean_ratio(rows).has_value());
  EXPECT_NEAR(*geomean_ratio(rows), std::exp(log_sum / double(log_n)), 1e-12);
  // The second build is 5% faster on the larger problems: at least one of those is classed Faster.
  EXPECT_GT(cmp.difference_counts[static_cast<std::size_t>(db::Difference::Faster)], 0);
  const auto counts = class_counts(rows);
  std::size_t total = 0;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(counts[static_cast<std::size_t>(c)], cmp.difference_counts[static_cast<std::size_t>(c)]);
    total += comparison_rows(rows, static_cast<db::Difference>(c)).size();
  }
  EXPECT_EQ(total, cmp.problems.size());
  EXPECT_EQ(comparison_rows(rows, std::nullopt).size(), cmp.problems.size());
}

TEST(CompareView, ByCandidateEveryCandidateOfBothSweepsIsARow) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("c.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 12, .problems = 6});
  db::Database db = db::Database::open(path);
  const auto candidates = db::compare_candidates(db, ids.sweeps[0], ids.sweeps[1]);
  ASSERT_FALSE(candidates.empty());
  const std::vector<ComparedRow> rows = compared_rows(candidates);
  ASSERT_EQ(rows.size(), candidates.size());
  std::vector<double> ratios;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NE(rows[i].label.find(candidates[i].candidate), std::string::npos) << rows[i].label;
    EXPECT_DOUBLE_EQ(*rows[i].ratio, candidates[i].ratio);
    EXPECT_EQ(rows[i].difference, candidates[i].difference);
    ratios.push_back(candidates[i].ratio);
  }
  EXPECT_EQ(*geomean_ratio(rows), *db::geometric_mean(ratios));
  const XYPlot plot = comparison_ratio_plot(rows, true);
  EXPECT_EQ(plot.x_label, "candidate");
  std::size_t points = 0;
  for (const auto& series : plot.series) points += series.size();
  EXPECT_EQ(points, rows.size());
}

// By pin a row names both candidates: the one without the pin (A) and the one with it (B).
TEST(CompareView, ByPinARowNamesBothCandidates) {
  db::CandidateComparison c;
  c.problem.h_qk = 2, c.problem.h_v = 4;
  c.candidate = "gdn_bwd_P_cp64";
  c.candidate_b = "gdn_bwd_P_cp64+pb1";
  c.ratio = 0.8;
  c.difference = db::Difference::Faster;
  const std::vector<ComparedRow> rows = compared_rows(std::vector<db::CandidateComparison>{c});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].label.find("gdn_bwd_P_cp64 -> gdn_bwd_P_cp64+pb1"), std::string::npos) << rows[0].label;
  EXPECT_DOUBLE_EQ(*rows[0].ratio, 0.8);
}

TEST(SelectionView, PreviewIsExactlyWhatTheExportWrites) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("s.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 12, .problems = 6});
  DbSession session(path, 1.0);
  ASSERT_TRUE(session.poll(0.0));
  SelectionView view;
  view.refresh(session.db(), ids.sweeps[0]);
  ASSERT_TRUE(view.selection().has_value());
  ASSERT_FALSE(view.selection()->buckets.empty());
  EXPECT_FALSE(view.preview_json().empty());
  EXPECT_NE(view.preview_header().find("kEntries"), std::string::npos);

  const ActionResult exported = view.export_to(session, dir.path() / "out");
  ASSERT_TRUE(exported.ok) << exported.message;
  EXPECT_EQ(read_file(dir.path() / "out" / db::kDispatchJsonName), view.preview_json());
  EXPECT_EQ(read_file(dir.path() / "out" / db::kDispatchHeaderName), view.preview_header());
}

TEST(SelectionView, OverrideWithReasonChangesTheChoiceAndClears) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("o.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 12, .problems = 6});
  DbSession session(path, 1.0);
  ASSERT_TRUE(session.poll(0.0));
  SelectionView view;
  view.refresh(session.db(), ids.sweeps[0]);
  const auto& buckets = view.selection()->buckets;
  std::size_t index = buckets.size();
  for (std::size_t i = 0; i < buckets.size(); ++i)
    if (buckets[i].candidates.size() >= 2) index = i;
  ASSERT_LT(index, buckets.size()) << "need a bucket with two eligible candidates";
  const std::string original = buckets[index].variant;
  std::string other;
  for (const auto& c : buckets[index].candidates)
    if (c.variant != original) other = c.variant;

  const ActionResult no_reason = view.set_override(session, index, other, "");
  EXPECT_FALSE(no_reason.ok);
  EXPECT_NE(no_reason.message.find("reason"), std::string::npos) << no_reason.message;

  const ActionResult set = view.set_override(session, index, other, "fewer registers, same speed");
  ASSERT_TRUE(set.ok) << set.message;
  view.refresh(session.db(), ids.sweeps[0]);
  EXPECT_EQ(view.selection()->buckets[index].variant, other);
  EXPECT_TRUE(view.selection()->buckets[index].overridden);
  EXPECT_EQ(view.selection()->buckets[index].override_reason, "fewer registers, same speed");

  const ActionResult cleared = view.clear_override(session, index);
  ASSERT_TRUE(cleared.ok) << cleared.message;
  view.refresh(session.db(), ids.sweeps[0]);
  EXPECT_EQ(view.selection()->buckets[index].variant, original);
  EXPECT_FALSE(view.selection()->buckets[index].overridden);

  EXPECT_FALSE(view.set_override(session, buckets.size() + 5, other, "x").ok);
}

TEST(SelectionView, ExportErrorsComeBackAsMessages) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("e.db");
  const auto ids = gdn::gui::testing::make_test_db(path, {.variants = 6, .problems = 3});
  DbSession session(path, 1.0);
  SelectionView view;
  EXPECT_FALSE(view.export_to(session, dir.path() / "out").ok) << "not opened yet";
  ASSERT_TRUE(session.poll(0.0));
  EXPECT_FALSE(view.export_to(session, dir.path() / "out").ok) << "no sweep selected";
  view.refresh(session.db(), ids.sweeps[0]);
  // A regular file where the output directory should be.
  std::ofstream(dir.path() / "blocked") << "x";
  const ActionResult r = view.export_to(session, dir.path() / "blocked");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("export failed"), std::string::npos);
}
