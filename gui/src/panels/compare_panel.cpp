// Compare: sweep A against sweep B per problem (best Passed variant on each side), per
// candidate (the same variant and plan pins Passed on both sides: an A/B of two builds) or per
// pin (each candidate of B with one plan pin against the same candidate without it, the same
// sweep allowed: what the pin does), each
// difference classed same / faster / slower / unclear by the measured p20..p80 bands, with the
// device and build differences stated above the table.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "../panels.hpp"
#include "../plot_draw.hpp"
#include "../ui_util.hpp"

namespace gdn::gui {
namespace {

std::string side_text(const std::optional<db::ResultRow>& row) {
  if (!row) return "no passed result";
  const auto& r = row->result;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s  %.4g ms [%.4g, %.4g]", row->variant.name.c_str(),
                r.latency_p50_ms.value_or(NAN), r.latency_p20_ms.value_or(NAN),
                r.latency_p80_ms.value_or(NAN));
  return buf;
}

}  // namespace

void ComparePanel::set_by(db::CompareBy by, const std::optional<db::PinChoice>& pin) {
  by_ = by == db::CompareBy::Candidate ? 1 : by == db::CompareBy::Pin ? 2 : 0;
  if (!pin) return;
  for (std::size_t f = 0; f < gdn::kPlanFields.size(); ++f) {
    if (&gdn::kPlanFields[f] != pin->field) continue;
    const auto& values = gdn::kPlanFields[f].values;
    pin_field_ = static_cast<int>(f);
    pin_value_ = static_cast<int>(std::find(values.begin(), values.end(), pin->value) - values.begin());
  }
}

void ComparePanel::update(DashboardState& state, bool visible) {
  // The comparison runs queries over both sweeps: only when the tab is shown and something
  // changed, never per frame.
  if (!visible || !state.session.is_open()) return;
  const bool inputs_changed = built_a_ != state.sweep_a || built_b_ != state.sweep_b || built_by_ != by_ ||
                              built_pin_field_ != pin_field_ || built_pin_value_ != pin_value_;
  if (!gate_.should_build(inputs_changed, built_generation_ != state.data_generation)) return;
  const auto start = std::chrono::steady_clock::now();
  built_generation_ = state.data_generation;
  built_a_ = state.sweep_a;
  built_b_ = state.sweep_b;
  built_by_ = by_;
  built_pin_field_ = pin_field_;
  built_pin_value_ = pin_value_;
  comparison_.reset();
  candidates_.clear();
  rows_.clear();
  error_.clear();
  // By pin, one sweep against itself is the usual question (candidates with and without a pin).
  if (state.sweep_a != 0 && state.sweep_b != 0 && state.sweep_a == state.sweep_b && by_ != 2)
    error_ = "A and B are the same sweep: pick another sweep as B in the sweeps table, or compare by pin.";
  if (state.sweep_a != 0 && state.sweep_b != 0 && error_.empty()) {
    try {
      comparison_ = db::compare_sweeps(state.session.db(), state.sweep_a, state.sweep_b);
      const db::SweepRef a{state.session.db(), state.sweep_a}, b{state.session.db(), state.sweep_b};
      if (by_ == 1) candidates_ = db::compare_candidates(a, b);
      if (by_ == 2) {
        const gdn::PlanField& field = gdn::kPlanFields[static_cast<std::size_t>(pin_field_)];
        candidates_ = db::compare_pinned(a, b, field, field.values[static_cast<std::size_t>(pin_value_)]);
      }
      rows_ = by_ != 0 ? model::compared_rows(candidates_) : model::compared_rows(*comparison_);
      ratio_plot_ = model::comparison_ratio_plot(rows_, by_ != 0);
    } catch (const db::DbError& e) {
      if (e.kind() != db::DbError::Kind::Invalid) throw;  // file trouble: the session shows it
      error_ = e.what();
    }
  }
  gate_.built(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void ComparePanel::draw(DashboardState& state) {
  if (state.sweep_b == 0) {
    ImGui::TextDisabled("Pick sweep B with the B column of the sweeps table to compare it "
                        "with sweep A.");
    return;
  }
  if (!error_.empty()) {
    ImGui::TextColored(ui::error_color(), "%s", error_.c_str());
    return;
  }
  gate_.draw_notice();
  if (!comparison_) return;
  const db::SweepComparison& cmp = *comparison_;
  ImGui::Text("A: sweep %lld on %s, build %s", (long long)cmp.a.sweep.id,
              cmp.a.device.name.c_str(), ui::short_sha(cmp.a.build.git_sha).c_str());
  ImGui::Text("B: sweep %lld on %s, build %s", (long long)cmp.b.sweep.id,
              cmp.b.device.name.c_str(), ui::short_sha(cmp.b.build.git_sha).c_str());
  if (!cmp.device_differences.empty())
    ImGui::TextColored({0.95f, 0.8f, 0.3f, 1}, "device differs: %s",
                       cmp.device_differences.c_str());
  if (!cmp.build_differences.empty())
    ImGui::TextColored({0.95f, 0.8f, 0.3f, 1}, "build differs: %s",
                       cmp.build_differences.c_str());

  ImGui::RadioButton("by problem", &by_, 0);
  ImGui::SameLine();
  ImGui::RadioButton("by candidate (the same variant and pins in both)", &by_, 1);
  ImGui::SameLine();
  ImGui::RadioButton("by pin", &by_, 2);
  if (by_ == 2) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(220);
    if (ImGui::BeginCombo("##pin field", std::string(gdn::kPlanFields[pin_field_].name).c_str())) {
      for (int f = 0; f < static_cast<int>(gdn::kPlanFields.size()); ++f)
        if (ImGui::Selectable(std::string(gdn::kPlanFields[f].name).c_str(), f == pin_field_))
          pin_field_ = f, pin_value_ = 0;
      ImGui::EndCombo();
    }
    const auto& values = gdn::kPlanFields[pin_field_].values;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(80);
    if (ImGui::BeginCombo("##pin value", std::to_string(values[pin_value_]).c_str())) {
      for (int v = 0; v < static_cast<int>(values.size()); ++v)
        if (ImGui::Selectable(std::to_string(values[v]).c_str(), v == pin_value_)) pin_value_ = v;
      ImGui::EndCombo();
    }
    ui::hover_text("each candidate of B pinning this field to this value against the same candidate "
                   "without the pin in A");
  }
  if (built_by_ != by_ || built_pin_field_ != pin_field_ || built_pin_value_ != pin_value_)
    return;  // rebuilt by the next update

  constexpr db::Difference kClasses[] = {db::Difference::Same, db::Difference::Faster,
                                         db::Difference::Slower, db::Difference::Unclear};
  const auto counts = model::class_counts(rows_);
  ImGui::RadioButton("all", &class_filter_, -1);
  for (db::Difference d : kClasses) {
    ImGui::SameLine();
    const std::string label = std::string(db::to_string(d)) + " (" +
                              std::to_string(counts[static_cast<std::size_t>(d)]) + ")";
    ImGui::PushStyleColor(ImGuiCol_Text, ui::difference_color(d));
    ImGui::RadioButton(label.c_str(), &class_filter_, static_cast<int>(d));
    ImGui::PopStyleColor();
  }
  if (const auto g = model::geomean_ratio(rows_)) {
    ImGui::SameLine();
    ImGui::Text("   geometric mean B/A: %.3f", *g);
  }

  draw::xy_plot("ratio", ratio_plot_, {-1, 240});

  const auto rows = model::comparison_rows(
      rows_, class_filter_ < 0 ? std::nullopt
                               : std::optional<db::Difference>(static_cast<db::Difference>(class_filter_)));
  const bool by_candidate = by_ != 0;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("compare", 5, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("problem", 0, 2.2f);
  ImGui::TableSetupColumn(by_candidate ? "A  p50 [p20, p80]" : "best A  p50 [p20, p80]", 0, 2.0f);
  ImGui::TableSetupColumn(by_candidate ? "B  p50 [p20, p80]" : "best B  p50 [p20, p80]", 0, 2.0f);
  ImGui::TableSetupColumn("B / A", 0, 0.5f);
  ImGui::TableSetupColumn("class", 0, 1.0f);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const std::size_t at = rows[static_cast<std::size_t>(i)];
      const db::ProblemRecord& problem = by_candidate ? candidates_[at].problem : cmp.problems[at].problem;
      const std::string a = by_candidate ? side_text(candidates_[at].a) : side_text(cmp.problems[at].best_a);
      const std::string b = by_candidate ? side_text(candidates_[at].b) : side_text(cmp.problems[at].best_b);
      const std::string note = by_candidate ? std::string() : cmp.problems[at].note;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(model::describe_problem(problem).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(a.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(b.c_str());
      ImGui::TableNextColumn();
      if (rows_[at].ratio) ImGui::Text("%.3f", *rows_[at].ratio);
      ImGui::TableNextColumn();
      ImGui::TextColored(ui::difference_color(rows_[at].difference), "%s",
                         std::string(db::to_string(rows_[at].difference)).c_str());
      ui::hover_text(note);
    }
  }
  ImGui::EndTable();
}

}  // namespace gdn::gui
