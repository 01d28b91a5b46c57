// The dashboard's panels, one class and one file each. update() may query the database and
// throw (the frame loop catches and shows the error); draw() only renders and never touches
// the database directly, so it never throws mid-frame.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dashboard_state.hpp"
#include "gdn/gui/model/compare_view.hpp"
#include "gdn/gui/model/plots.hpp"
#include "gdn/gui/model/results_table.hpp"
#include "gdn/gui/model/selection_view.hpp"

namespace gdn::gui {

// Views whose queries scan whole sweeps (compare, selection) take seconds on 100k results.
// While a sweep writes, recomputing them on every change would freeze the window, so when the
// last computation was slow, new data only marks the view stale and a button recomputes it.
class RecomputeGate {
 public:
  static constexpr double kAutoLimitS = 0.25;
  // True when the view must be rebuilt now: its inputs changed, or the data changed and the
  // last build was quick, or the user asked.
  bool should_build(bool inputs_changed, bool data_changed);
  void built(double seconds) { last_cost_s_ = seconds; stale_ = false; requested_ = false; }
  void request() { requested_ = true; }
  bool stale() const { return stale_; }
  double last_cost_s() const { return last_cost_s_; }
  // Draws the "data changed" notice with a recompute button when stale.
  void draw_notice();

 private:
  double last_cost_s_ = 0;
  bool stale_ = false;
  bool requested_ = false;
};

class SweepsPanel {
 public:
  void draw(DashboardState& state);
};

class ResultsPanel {
 public:
  void update(DashboardState& state);
  void draw(DashboardState& state);

 private:
  model::ResultsTable table_;
  char filter_buffer_[512] = "";
  std::string filter_error_;
};

class PlotsPanel {
 public:
  void update(DashboardState& state);
  void draw(DashboardState& state);

 private:
  void draw_controls(DashboardState& state);
  void draw_why_it_wins(const DashboardState& state);
  void draw_distributions(const DashboardState& state);

  std::int64_t problem_id_ = 0;
  db::Field x_field_ = db::Field::BlockV;
  db::Field metric_ = db::Field::SmBusyPct;
  db::Field heat_x_ = db::Field::BlockV;
  db::Field heat_y_ = db::Field::Stages;
  std::optional<std::size_t> focus_;  // the config whose samples and timeline are shown
  model::BestPair best_;
  // Caches keyed on (data generation, choices) so plots rebuild only on change.
  std::uint64_t built_generation_ = ~0ull;
  std::int64_t built_problem_ = -1;
  db::Field built_x_{}, built_metric_{}, built_heat_x_{}, built_heat_y_{};
  model::XYPlot by_field_, by_metric_;
  std::size_t without_metric_ = 0;
  model::HeatmapGrid heatmap_;
  // Samples and timelines of the shown results, loaded once per result id.
  struct Loaded {
    std::int64_t result_id = 0;
    std::vector<double> samples;
    model::Distribution distribution;
    std::vector<db::PmSample> timeline;
    model::XYPlot timeline_plot;
  };
  Loaded focus_data_, runner_up_data_;
};

class ComparePanel {
 public:
  void update(DashboardState& state, bool visible);
  void draw(DashboardState& state);
  // The granularity first shown; by pin, the pin (else the first field at its first value).
  void set_by(db::CompareBy by, const std::optional<db::PinChoice>& pin);

 private:
  std::uint64_t built_generation_ = ~0ull;
  std::int64_t built_a_ = -1, built_b_ = -1;
  std::optional<db::SweepComparison> comparison_;
  std::vector<db::CandidateComparison> candidates_;  // by candidate or by pin
  std::vector<model::ComparedRow> rows_;  // of the granularity shown
  model::XYPlot ratio_plot_;
  std::string error_;
  int class_filter_ = -1;  // -1: all, else a db::Difference
  int by_ = 0;             // 0: by problem, 1: by candidate, 2: by pin
  int built_by_ = -1;
  int pin_field_ = 0, pin_value_ = 0;  // by pin: indices into gdn::kPlanFields and its values
  int built_pin_field_ = -1, built_pin_value_ = -1;
  RecomputeGate gate_;
};

class SelectionPanel {
 public:
  void update(DashboardState& state, bool visible);
  void draw(DashboardState& state);

 private:
  model::SelectionView view_;
  std::uint64_t built_generation_ = ~0ull;
  std::int64_t built_sweep_ = -1;
  std::string error_;
  int bucket_ = -1;
  int candidate_ = -1;
  char reason_[256] = "";
  char out_dir_[512] = "dispatch-out";
  model::ActionResult last_action_;
  RecomputeGate gate_;
};

}  // namespace gdn::gui
