// Plot content built from one sweep's rows: what the plots panel shows for one problem.
// Only Passed results with a p50 carry a latency; everything else is left out of latency plots.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/model.hpp"
#include "gdn/gui/model/plot_data.hpp"
#include "gdn/gui/model/sweep_rows.hpp"

namespace gdn::gui::model {

// KernelConfig fields (FieldInfo::is_config), the choices of the x axis and heatmap axes.
std::vector<db::Field> config_fields();
// CUPTI metric fields, the choices of the metric scatter.
std::vector<db::Field> metric_fields();

// p50 latency of every Passed result of the problem against a config field shown as
// categories (distinct values in natural order). One series per kernel family; points of a
// category are spread sideways so they do not hide each other; a line joins the best p50 of
// each category.
XYPlot latency_vs_field(const SweepRows& data, std::int64_t problem_id, db::Field x_field);

// p50 latency against a CUPTI metric (SM busy %, tensor pipe % ...), one series per family.
// Results whose metric is NULL are left out; their number is written to *without_metric.
XYPlot latency_vs_metric(const SweepRows& data, std::int64_t problem_id, db::Field metric,
                         std::size_t* without_metric = nullptr);

// Best p50 per (x value, y value) cell over two config fields; each cell's note names the
// variant that achieved it. lo/hi span the finite cells.
HeatmapGrid latency_heatmap(const SweepRows& data, std::int64_t problem_id, db::Field x_field,
                            db::Field y_field);

// The samples of one result as a histogram, marked with p20/p50/p80 computed from the samples
// (the stored quantiles are shown next to it by the panel; a test checks they agree).
Distribution sample_distribution(const std::vector<double>& samples_ms, const std::string& title);

// PM-sampling timeline: one line per counter that was recorded, x in microseconds.
XYPlot pm_timeline_plot(const std::vector<db::PmSample>& timeline, const std::string& title);

// The best Passed result of a problem and the runner-up (by p50), when they exist.
struct BestPair {
  std::optional<std::size_t> best, runner_up;  // positions in data.rows()
};
BestPair best_two(const SweepRows& data, std::int64_t problem_id);

// Two results side by side, field by field (variant, config, latency, metrics, resources):
// what makes the winner win. ratio = b / a for numeric fields when both are present and a != 0.
struct SideBySideRow {
  db::Field field;
  std::string a, b;
  std::optional<double> ratio;
};
std::vector<SideBySideRow> side_by_side(const db::ResultRow& a, const db::ResultRow& b);

// One line per problem for pickers: "#3 fwd h_qk=16 h_v=32 k=128 v=128 bf16 seqs=4 tokens=16384".
std::string describe_problem(const db::ProblemRecord& problem);

}  // namespace gdn::gui::model
