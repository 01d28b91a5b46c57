// Plots for one problem of sweep A: latency by a config field, latency against a CUPTI metric,
// a heatmap over two config fields, then "why does the winner win": the best and runner-up
// (or a focused result) side by side, field by field, with their sample distributions
// (p20/p50/p80) and PM-sampling timelines when recorded.
#include <imgui.h>

#include <cstdio>
#include <string>

#include "../panels.hpp"
#include "../plot_draw.hpp"
#include "../ui_util.hpp"

namespace gdn::gui {
namespace {

constexpr float kPlotHeight = 300;

void load_result(const db::Database& db, const model::SweepRows& rows, std::size_t pos,
                 const char* role, auto& loaded) {
  const db::ResultRow& row = rows.rows()[pos];
  if (loaded.result_id == row.result.id) return;
  loaded.result_id = row.result.id;
  loaded.samples = db::samples_of(db, row.result.id);
  loaded.distribution =
      model::sample_distribution(loaded.samples, std::string(role) + ": " + row.variant.name);
  loaded.timeline = db::pm_timeline_of(db, row.result.id);
  loaded.timeline_plot = model::pm_timeline_plot(
      loaded.timeline, std::string("PM sampling timeline, ") + role + ": " + row.variant.name);
}

std::string quantile_line(const db::ResultRow& row) {
  const auto& r = row.result;
  if (!r.latency_p50_ms) return "no latency (" + std::string(db::to_string(r.outcome)) + ")";
  char buf[160];
  std::snprintf(buf, sizeof buf, "stored p20 %.4g  p50 %.4g  p80 %.4g ms, %d samples",
                r.latency_p20_ms.value_or(NAN), *r.latency_p50_ms, r.latency_p80_ms.value_or(NAN),
                r.sample_count);
  return buf;
}

}  // namespace

void PlotsPanel::update(DashboardState& state) {
  const auto& problems = state.rows.problem_ids();
  if (problems.empty()) {
    problem_id_ = 0;
    focus_.reset();
    return;
  }
  // A result clicked in the results table selects its problem and becomes the focus.
  if (state.focused_row && *state.focused_row < state.rows.rows().size()) {
    const auto& row = state.rows.rows()[*state.focused_row];
    if (focus_ != state.focused_row) {
      focus_ = state.focused_row;
      problem_id_ = row.problem.id;
    }
  }
  if (state.rows.rows_of_problem(problem_id_).empty()) problem_id_ = problems.front();

  const bool rebuild = built_generation_ != state.rows.generation() ||
                       built_problem_ != problem_id_ || built_x_ != x_field_ ||
                       built_metric_ != metric_ || built_heat_x_ != heat_x_ ||
                       built_heat_y_ != heat_y_;
  if (rebuild) {
    by_field_ = model::latency_vs_field(state.rows, problem_id_, x_field_);
    by_metric_ = model::latency_vs_metric(state.rows, problem_id_, metric_, &without_metric_);
    heatmap_ = model::latency_heatmap(state.rows, problem_id_, heat_x_, heat_y_);
    best_ = model::best_two(state.rows, problem_id_);
    built_generation_ = state.rows.generation();
    built_problem_ = problem_id_;
    built_x_ = x_field_;
    built_metric_ = metric_;
    built_heat_x_ = heat_x_;
    built_heat_y_ = heat_y_;
  }
  // The focus must belong to the shown problem; otherwise show the best.
  if (!focus_ || state.rows.rows()[*focus_].problem.id != problem_id_) focus_ = best_.best;
  if (!state.session.is_open()) return;
  if (focus_) load_result(state.session.db(), state.rows, *focus_, "focus", focus_data_);
  const auto other = (focus_ == best_.best) ? best_.runner_up : best_.best;
  if (other) load_result(state.session.db(), state.rows, *other, "compared", runner_up_data_);
}

void PlotsPanel::draw_controls(DashboardState& state) {
  ImGui::SetNextItemWidth(520);
  const std::string current =
      problem_id_ ? model::describe_problem(state.rows.problem(problem_id_)) : "no problem";
  if (ImGui::BeginCombo("problem", current.c_str())) {
    for (std::int64_t pid : state.rows.problem_ids()) {
      const std::string label = model::describe_problem(state.rows.problem(pid));
      if (ImGui::Selectable(label.c_str(), pid == problem_id_)) {
        problem_id_ = pid;
        focus_.reset();
        state.focused_row.reset();
      }
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("(%zu results)", state.rows.rows_of_problem(problem_id_).size());
}

void PlotsPanel::draw_why_it_wins(const DashboardState& state) {
  const auto other = (focus_ == best_.best) ? best_.runner_up : best_.best;
  if (!focus_ || !other) {
    ImGui::TextDisabled("Need two passed results of this problem to compare side by side.");
    return;
  }
  const db::ResultRow& a = state.rows.rows()[*focus_];
  const db::ResultRow& b = state.rows.rows()[*other];
  ImGui::Text("%s: %s   vs   %s: %s", focus_ == best_.best ? "best" : "focus",
              a.variant.name.c_str(), other == best_.runner_up ? "runner-up" : "best",
              b.variant.name.c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("side_by_side", 4, flags, {0, kPlotHeight - 24})) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("field", 0, 1.2f);
  ImGui::TableSetupColumn("this", 0, 1.5f);
  ImGui::TableSetupColumn("other", 0, 1.5f);
  ImGui::TableSetupColumn("other / this", 0, 0.8f);
  ImGui::TableHeadersRow();
  for (const model::SideBySideRow& r : model::side_by_side(a, b)) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::string(db::field_info(r.field).label).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.a.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.b.c_str());
    ImGui::TableNextColumn();
    if (r.ratio) {
      const bool differs = *r.ratio > 1.05 || *r.ratio < 0.95;
      if (differs)
        ImGui::TextColored({0.95f, 0.8f, 0.3f, 1}, "%.3g", *r.ratio);
      else
        ImGui::TextDisabled("%.3g", *r.ratio);
    }
  }
  ImGui::EndTable();
}

void PlotsPanel::draw_distributions(const DashboardState& state) {
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  const bool has_other = runner_up_data_.result_id != 0 && focus_ &&
                         (best_.runner_up || best_.best != focus_);
  ImGui::BeginGroup();
  draw::distribution("dist_focus", focus_data_.distribution, {half, kPlotHeight});
  if (focus_) ImGui::TextDisabled("%s", quantile_line(state.rows.rows()[*focus_]).c_str());
  ImGui::EndGroup();
  if (has_other) {
    ImGui::SameLine();
    ImGui::BeginGroup();
    draw::distribution("dist_other", runner_up_data_.distribution, {half, kPlotHeight});
    const auto other = (focus_ == best_.best) ? best_.runner_up : best_.best;
    if (other) ImGui::TextDisabled("%s", quantile_line(state.rows.rows()[*other]).c_str());
    ImGui::EndGroup();
  }
  const bool focus_timeline = !focus_data_.timeline.empty();
  const bool other_timeline = has_other && !runner_up_data_.timeline.empty();
  if (focus_timeline) draw::xy_plot("pm_focus", focus_data_.timeline_plot, {has_other && other_timeline ? half : -1, kPlotHeight});
  if (focus_timeline && other_timeline) ImGui::SameLine();
  if (other_timeline) draw::xy_plot("pm_other", runner_up_data_.timeline_plot, {focus_timeline ? half : -1, kPlotHeight});
  if (!focus_timeline && !other_timeline)
    ImGui::TextDisabled("No PM-sampling timeline recorded for these results (sweep with PM "
                        "sampling to get one).");
}

void PlotsPanel::draw(DashboardState& state) {
  if (problem_id_ == 0) {
    ImGui::TextDisabled("Sweep A has no results yet.");
    return;
  }
  draw_controls(state);
  ImGui::BeginChild("plots_scroll", {0, 0}, false);
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;

  ImGui::BeginGroup();
  ui::field_combo("x field", x_field_, model::config_fields());
  draw::xy_plot("by_field", by_field_, {half, kPlotHeight});
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  ui::field_combo("metric", metric_, model::metric_fields());
  if (without_metric_ > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("%zu passed results have no value for this metric", without_metric_);
  }
  draw::xy_plot("by_metric", by_metric_, {half, kPlotHeight});
  ImGui::EndGroup();

  ImGui::BeginGroup();
  ui::field_combo("heatmap x", heat_x_, model::config_fields(), 140);
  ImGui::SameLine();
  ui::field_combo("heatmap y", heat_y_, model::config_fields(), 140);
  draw::heatmap("heatmap", heatmap_, {half, kPlotHeight});
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  draw_why_it_wins(state);
  ImGui::EndGroup();

  draw_distributions(state);
  ImGui::EndChild();
}

}  // namespace gdn::gui
