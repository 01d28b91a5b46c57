#include "gdn/gui/model/plots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "gdn/gui/model/results_table.hpp"

namespace gdn::gui::model {
namespace {

std::optional<double> p50_of(const db::ResultRow& row) {
  if (row.result.outcome != db::Outcome::Passed) return std::nullopt;
  return row.result.latency_p50_ms;
}

std::optional<double> as_double(const db::FieldValue& v) {
  if (auto i = std::get_if<std::int64_t>(&v)) return double(*i);
  if (auto d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

std::string family_name(const db::ResultRow& row) {
  return row.variant.config.family == gdn::Family::Fused ? "fused" : "staged";
}

// Series per family, created on first use so absent families leave no empty legend entry.
XYSeries& series_for(XYPlot& plot, const std::string& name) {
  for (auto& s : plot.series)
    if (s.name == name) return s;
  plot.series.push_back(XYSeries{name, {}, {}, {}});
  return plot.series.back();
}

// Distinct non-NULL values of a field over the given rows, in compare_cells order.
std::vector<db::FieldValue> categories(const SweepRows& data, const std::vector<std::size_t>& rows,
                                       db::Field field) {
  std::vector<db::FieldValue> values;
  for (std::size_t i : rows) {
    db::FieldValue v = db::field_value(data.rows()[i], field);
    if (std::holds_alternative<std::monostate>(v)) continue;
    const bool seen = std::any_of(values.begin(), values.end(),
                                  [&](const db::FieldValue& x) { return compare_cells(x, v) == 0; });
    if (!seen) values.push_back(std::move(v));
  }
  std::sort(values.begin(), values.end(),
            [](const auto& a, const auto& b) { return compare_cells(a, b) < 0; });
  return values;
}

std::size_t category_index(const std::vector<db::FieldValue>& cats, const db::FieldValue& v) {
  const auto it = std::lower_bound(cats.begin(), cats.end(), v, [](const auto& a, const auto& b) {
    return compare_cells(a, b) < 0;
  });
  return static_cast<std::size_t>(it - cats.begin());
}

std::string latency_label(const db::ResultRow& row) {
  return row.variant.name;
}

}  // namespace

std::vector<db::Field> config_fields() {
  std::vector<db::Field> out;
  for (const auto& info : db::all_fields())
    if (info.is_config) out.push_back(info.field);
  return out;
}

std::vector<db::Field> metric_fields() {
  return {db::Field::SmBusyPct,       db::Field::TensorPipePct,  db::Field::AchievedOccupancyPct,
          db::Field::IssueActivePct,  db::Field::DramPct,        db::Field::SmThroughputPct,
          db::Field::MemorySolPct,    db::Field::ClockMhz};
}

XYPlot latency_vs_field(const SweepRows& data, std::int64_t problem_id, db::Field x_field) {
  XYPlot plot;
  const auto& info = db::field_info(x_field);
  plot.title = "p50 latency by " + std::string(info.name);
  plot.x_label = std::string(info.name);
  plot.y_label = "p50 ms";
  const auto& positions = data.rows_of_problem(problem_id);
  const std::vector<db::FieldValue> cats = categories(data, positions, x_field);
  for (const auto& c : cats) plot.x_categories.push_back(db::format_value(c));

  std::vector<double> best(cats.size(), std::numeric_limits<double>::infinity());
  std::vector<int> placed(cats.size(), 0);
  for (std::size_t i : positions) {
    const db::ResultRow& row = data.rows()[i];
    const auto p50 = p50_of(row);
    const db::FieldValue v = db::field_value(row, x_field);
    if (!p50 || std::holds_alternative<std::monostate>(v)) continue;
    const std::size_t ci = category_index(cats, v);
    // Deterministic sideways spread: 0, +1, -1, +2, ... steps of 0.04, bounded to +-0.3.
    const int k = placed[ci]++;
    const double offset = std::clamp(((k + 1) / 2) * (k % 2 ? 0.04 : -0.04), -0.3, 0.3);
    series_for(plot, family_name(row)).add(double(ci) + offset, *p50, latency_label(row));
    best[ci] = std::min(best[ci], *p50);
  }
  XYSeries best_line{"best per value", {}, {}, {}, true};
  for (std::size_t ci = 0; ci < cats.size(); ++ci)
    if (std::isfinite(best[ci])) best_line.add(double(ci), best[ci], "best at " + plot.x_categories[ci]);
  if (best_line.size() > 0) plot.series.push_back(std::move(best_line));
  return plot;
}

XYPlot latency_vs_metric(const SweepRows& data, std::int64_t problem_id, db::Field metric,
                         std::size_t* without_metric) {
  XYPlot plot;
  plot.title = "p50 latency against " + std::string(db::field_info(metric).label);
  plot.x_label = std::string(db::field_info(metric).name);
  plot.y_label = "p50 ms";
  std::size_t missing = 0;
  for (std::size_t i : data.rows_of_problem(problem_id)) {
    const db::ResultRow& row = data.rows()[i];
    const auto p50 = p50_of(row);
    if (!p50) continue;
    const auto x = as_double(db::field_value(row, metric));
    if (!x) {
      ++missing;
      continue;
    }
    series_for(plot, family_name(row)).add(*x, *p50, latency_label(row));
  }
  if (without_metric) *without_metric = missing;
  return plot;
}

HeatmapGrid latency_heatmap(const SweepRows& data, std::int64_t problem_id, db::Field x_field,
                            db::Field y_field) {
  HeatmapGrid grid;
  grid.x_label = std::string(db::field_info(x_field).name);
  grid.y_label = std::string(db::field_info(y_field).name);
  grid.value_label = "best p50 ms";
  grid.title = "best p50 ms over " + grid.x_label + " x " + grid.y_label;
  const auto& positions = data.rows_of_problem(problem_id);
  const auto xs = categories(data, positions, x_field);
  const auto ys = categories(data, positions, y_field);
  for (const auto& v : xs) grid.x_labels.push_back(db::format_value(v));
  for (const auto& v : ys) grid.y_labels.push_back(db::format_value(v));
  grid.cells.assign(xs.size() * ys.size(), std::numeric_limits<double>::quiet_NaN());
  grid.cell_notes.assign(grid.cells.size(), "");
  for (std::size_t i : positions) {
    const db::ResultRow& row = data.rows()[i];
    const auto p50 = p50_of(row);
    const db::FieldValue vx = db::field_value(row, x_field), vy = db::field_value(row, y_field);
    if (!p50 || std::holds_alternative<std::monostate>(vx) ||
        std::holds_alternative<std::monostate>(vy))
      continue;
    const std::size_t k = category_index(ys, vy) * xs.size() + category_index(xs, vx);
    if (!(grid.cells[k] <= *p50)) {  // NaN or slower: take this one
      grid.cells[k] = *p50;
      grid.cell_notes[k] = "best: " + row.variant.name;
    }
  }
  const Range r = padded_range(grid.cells, 0.0);
  grid.lo = r.lo;
  grid.hi = r.hi;
  return grid;
}

Distribution sample_distribution(const std::vector<double>& samples_ms, const std::string& title) {
  Distribution d;
  d.title = title;
  d.x_label = "sample latency ms";
  d.sample_count = samples_ms.size();
  d.histogram = make_histogram(samples_ms, suggested_bin_count(samples_ms));
  if (!samples_ms.empty()) d.marks = quantiles_20_50_80(samples_ms);
  return d;
}

XYPlot pm_timeline_plot(const std::vector<db::PmSample>& timeline, const std::string& title) {
  XYPlot plot;
  plot.title = title;
  plot.x_label = "time us";
  plot.y_label = "%";
  struct Counter {
    const char* name;
    std::optional<double> db::PmSample::*member;
  };
  const Counter counters[] = {{"sm busy %", &db::PmSample::sm_busy_pct},
                              {"tensor pipe %", &db::PmSample::tensor_pipe_pct},
                              {"dram %", &db::PmSample::dram_pct},
                              {"issue active %", &db::PmSample::issue_active_pct}};
  for (const Counter& c : counters) {
    XYSeries s{c.name, {}, {}, {}, true};
    for (const db::PmSample& p : timeline)
      if ((p.*c.member).has_value()) s.add(double(p.t_ns) / 1000.0, *(p.*c.member));
    if (s.size() > 0) plot.series.push_back(std::move(s));
  }
  return plot;
}

BestPair best_two(const SweepRows& data, std::int64_t problem_id) {
  BestPair pair;
  double best = INFINITY, second = INFINITY;
  for (std::size_t i : data.rows_of_problem(problem_id)) {
    const auto p50 = p50_of(data.rows()[i]);
    if (!p50) continue;
    if (*p50 < best) {
      pair.runner_up = pair.best;
      second = best;
      pair.best = i;
      best = *p50;
    } else if (*p50 < second) {
      pair.runner_up = i;
      second = *p50;
    }
  }
  return pair;
}

std::vector<SideBySideRow> side_by_side(const db::ResultRow& a, const db::ResultRow& b) {
  std::vector<SideBySideRow> rows;
  for (const db::FieldInfo& info : db::all_fields()) {
    // The problem is the same on both sides; show what differs between the variants' results.
    switch (info.field) {
      case db::Field::ShapeSet: case db::Field::RowIndex: case db::Field::HQk:
      case db::Field::HV: case db::Field::K: case db::Field::V: case db::Field::DType:
      case db::Field::Batch: case db::Field::NumSeqs: case db::Field::TotalTokens:
      case db::Field::MaxSeqlen:
        continue;
      default:
        break;
    }
    const db::FieldValue va = db::field_value(a, info.field), vb = db::field_value(b, info.field);
    SideBySideRow row{info.field, db::format_value(va), db::format_value(vb), std::nullopt};
    const auto na = as_double(va), nb = as_double(vb);
    if (na && nb && *na != 0) row.ratio = *nb / *na;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string describe_problem(const db::ProblemRecord& p) {
  return "#" + std::to_string(p.row_index) + " h_qk=" + std::to_string(p.h_qk) +
         " h_v=" + std::to_string(p.h_v) + " k=" + std::to_string(p.k) + " v=" +
         std::to_string(p.v) + " " + p.dtype + " seqs=" + std::to_string(p.num_seqs) +
         " tokens=" + std::to_string(p.total_tokens) +
         (p.max_seqlen > 0 ? " maxlen=" + std::to_string(p.max_seqlen) : "");
}

}  // namespace gdn::gui::model
