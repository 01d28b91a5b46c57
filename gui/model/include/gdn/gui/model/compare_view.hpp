// The compare panel's aggregation over db::compare_sweeps (by problem) and
// db::compare_candidates (by candidate): the rows of either as ratio and class, a ratio plot
// coloured by class, the rows of one class for the table, the counts and the geometric mean.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/model.hpp"
#include "gdn/gui/model/plot_data.hpp"

namespace gdn::gui::model {

// One compared row of either granularity: what the plot, the filter and the summary need.
struct ComparedRow {
  std::string label;            // the problem, and for a candidate row the candidate after it
  std::optional<double> ratio;  // B p50 / A p50
  db::Difference difference = db::Difference::Unclear;
};
std::vector<ComparedRow> compared_rows(const db::SweepComparison& comparison);
std::vector<ComparedRow> compared_rows(const std::vector<db::CandidateComparison>& candidates);

// x: row position, y: B p50 / A p50 (1 = same speed, < 1 = B faster); one series per class so
// the legend doubles as the class key. Rows without a ratio are left out.
XYPlot comparison_ratio_plot(const std::vector<ComparedRow>& rows, bool by_candidate);

// Positions of the rows whose class is `only` (all when nullopt).
std::vector<std::size_t> comparison_rows(const std::vector<ComparedRow>& rows,
                                         std::optional<db::Difference> only);

// Rows per class, indexed by db::Difference.
std::array<std::int64_t, 4> class_counts(const std::vector<ComparedRow>& rows);

// Geometric mean of the ratios that exist; nullopt when none.
std::optional<double> geomean_ratio(const std::vector<ComparedRow>& rows);

}  // namespace gdn::gui::model
