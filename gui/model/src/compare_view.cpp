#include "gdn/gui/model/compare_view.hpp"

#include <cmath>
#include <string>

#include "gdn/gui/model/plots.hpp"

namespace gdn::gui::model {

XYPlot comparison_ratio_plot(const db::SweepComparison& comparison) {
  XYPlot plot;
  plot.title = "B p50 / A p50 per problem (below 1: B is faster)";
  plot.x_label = "problem";
  plot.y_label = "ratio";
  constexpr db::Difference kOrder[] = {db::Difference::Same, db::Difference::Faster,
                                       db::Difference::Slower, db::Difference::Unclear};
  // The same colours as the class column of the compare table (gui/src/ui_util.cpp).
  constexpr std::uint32_t kColors[] = {0xbfbfcc, 0x73d973, 0xff6659, 0xf2cc4d};
  for (db::Difference d : kOrder)
    plot.series.push_back(XYSeries{std::string(db::to_string(d)), {}, {}, {}, false,
                                   kColors[static_cast<std::size_t>(d)]});
  for (std::size_t i = 0; i < comparison.problems.size(); ++i) {
    const auto& p = comparison.problems[i];
    if (!p.ratio) continue;
    plot.series[static_cast<std::size_t>(p.difference)].add(double(i), *p.ratio,
                                                              describe_problem(p.problem));
  }
  return plot;
}

std::vector<std::size_t> comparison_rows(const db::SweepComparison& comparison,
                                         std::optional<db::Difference> only) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < comparison.problems.size(); ++i)
    if (!only || comparison.problems[i].difference == *only) rows.push_back(i);
  return rows;
}

std::optional<double> geomean_ratio(const db::SweepComparison& comparison) {
  std::vector<double> ratios;
  for (const auto& p : comparison.problems)
    if (p.ratio) ratios.push_back(*p.ratio);
  return db::geometric_mean(ratios);
}

}  // namespace gdn::gui::model
