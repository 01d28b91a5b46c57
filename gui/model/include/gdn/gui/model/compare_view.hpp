// The compare panel's aggregation over db::compare_sweeps: a ratio plot per problem coloured
// by class, and the rows of one class for the table.
#pragma once

#include <optional>
#include <vector>

#include "gdn/db/model.hpp"
#include "gdn/gui/model/plot_data.hpp"

namespace gdn::gui::model {

// x: problem position in the comparison, y: B p50 / A p50 (1 = same speed, < 1 = B faster);
// one series per class so the legend doubles as the class key. Problems without a ratio are
// left out.
XYPlot comparison_ratio_plot(const db::SweepComparison& comparison);

// Positions of comparison.problems whose class is `only` (all when nullopt).
std::vector<std::size_t> comparison_rows(const db::SweepComparison& comparison,
                                         std::optional<db::Difference> only);

// Geometric mean of the ratios that exist; nullopt when none.
std::optional<double> geomean_ratio(const db::SweepComparison& comparison);

}  // namespace gdn::gui::model
