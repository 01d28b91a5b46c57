#include "gdn/gui/model/compare_view.hpp"

#include <string>

#include "gdn/gui/model/plots.hpp"

namespace gdn::gui::model {

std::vector<ComparedRow> compared_rows(const db::SweepComparison& comparison) {
  std::vector<ComparedRow> rows;
  for (const auto& p : comparison.problems) rows.push_back({describe_problem(p.problem), p.ratio, p.difference});
  return rows;
}

std::vector<ComparedRow> compared_rows(const std::vector<db::CandidateComparison>& candidates) {
  std::vector<ComparedRow> rows;
  for (const auto& c : candidates)
    rows.push_back({describe_problem(c.problem) + "  " + c.candidate +
                        (c.candidate_b.empty() ? std::string() : " -> " + c.candidate_b),
                    c.ratio, c.difference});
  return rows;
}

XYPlot comparison_ratio_plot(const std::vector<ComparedRow>& rows, bool by_candidate) {
  XYPlot plot;
  plot.title = by_candidate ? "B p50 / A p50 per candidate (below 1: B is faster)"
                            : "B p50 / A p50 per problem (below 1: B is faster)";
  plot.x_label = by_candidate ? "candidate" : "problem";
  plot.y_label = "ratio";
  constexpr db::Difference kOrder[] = {db::Difference::Same, db::Difference::Faster,
                                       db::Difference::Slower, db::Difference::Unclear};
  // The same colours as the class column of the compare table (gui/src/ui_util.cpp).
  constexpr std::uint32_t kColors[] = {0xbfbfcc, 0x73d973, 0xff6659, 0xf2cc4d};
  for (db::Difference d : kOrder)
    plot.series.push_back(XYSeries{std::string(db::to_string(d)), {}, {}, {}, false,
                                   kColors[static_cast<std::size_t>(d)]});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].ratio) continue;
    plot.series[static_cast<std::size_t>(rows[i].difference)].add(double(i), *rows[i].ratio, rows[i].label);
  }
  return plot;
}

std::vector<std::size_t> comparison_rows(const std::vector<ComparedRow>& rows,
                                         std::optional<db::Difference> only) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!only || rows[i].difference == *only) out.push_back(i);
  return out;
}

std::array<std::int64_t, 4> class_counts(const std::vector<ComparedRow>& rows) {
  std::array<std::int64_t, 4> counts{};
  for (const auto& r : rows) ++counts[static_cast<std::size_t>(r.difference)];
  return counts;
}

std::optional<double> geomean_ratio(const std::vector<ComparedRow>& rows) {
  std::vector<double> ratios;
  for (const auto& r : rows)
    if (r.ratio) ratios.push_back(*r.ratio);
  return db::geometric_mean(ratios);
}

}  // namespace gdn::gui::model
