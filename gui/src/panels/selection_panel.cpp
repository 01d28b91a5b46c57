// Selection & export: the winner per shape bucket of sweep A (db::select_winners), its
// eligible candidates, manual overrides with a reason, a preview of the exact dispatch.json and
// header an export writes, and the export itself (db::export_dispatch, as `gdnlab export`).
#include <imgui.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "../panels.hpp"
#include "../ui_util.hpp"

namespace gdn::gui {

bool RecomputeGate::should_build(bool inputs_changed, bool data_changed) {
  if (inputs_changed || requested_) return true;
  if (!data_changed) return false;
  if (last_cost_s_ <= kAutoLimitS) return true;
  stale_ = true;
  return false;
}

void RecomputeGate::draw_notice() {
  if (!stale_) return;
  ImGui::TextColored({0.95f, 0.8f, 0.3f, 1},
                     "New results arrived; this view took %.1f s to compute last time.",
                     last_cost_s_);
  ImGui::SameLine();
  if (ImGui::SmallButton("Recompute")) request();
}

void SelectionPanel::update(DashboardState& state, bool visible) {
  if (!visible || !state.session.is_open()) return;
  const bool inputs_changed = built_sweep_ != state.sweep_a;
  if (!gate_.should_build(inputs_changed, built_generation_ != state.data_generation)) return;
  const auto start = std::chrono::steady_clock::now();
  if (inputs_changed) {
    bucket_ = -1;
    candidate_ = -1;
  }
  built_generation_ = state.data_generation;
  built_sweep_ = state.sweep_a;
  error_.clear();
  try {
    view_.refresh(state.session.db(), state.sweep_a);
  } catch (const db::DbError& e) {
    if (e.kind() != db::DbError::Kind::Invalid) throw;
    error_ = e.what();
  }
  if (view_.selection() && bucket_ >= static_cast<int>(view_.selection()->buckets.size()))
    bucket_ = -1;
  gate_.built(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void SelectionPanel::draw(DashboardState& state) {
  if (!error_.empty()) ImGui::TextColored(ui::error_color(), "%s", error_.c_str());
  gate_.draw_notice();
  const auto& selection = view_.selection();
  if (!selection) {
    ImGui::TextDisabled("Select a sweep to see its winners.");
    return;
  }
  ImGui::Text("%zu buckets selected, %zu skipped, %zu distinct variants", selection->buckets.size(),
              selection->skipped.size(), selection->variants_used().size());
  ui::hover_text(
      "Per bucket: variants that passed every problem of the bucket are eligible; the fastest "
      "geometric-mean p50 wins unless another is within the measured noise and wins more "
      "buckets; an override replaces the winner.");

  const float left_width = ImGui::GetContentRegionAvail().x * 0.55f;
  ImGui::BeginChild("buckets", {left_width, 0}, false);
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingStretchProp;
  const float table_height = ImGui::GetContentRegionAvail().y * 0.5f;
  if (ImGui::BeginTable("bucket_table", 5, flags, {0, table_height})) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("bucket", 0, 3.0f);
    ImGui::TableSetupColumn("choice", 0, 2.0f);
    ImGui::TableSetupColumn("score ms", 0, 0.7f);
    ImGui::TableSetupColumn("margin", 0, 0.6f);
    ImGui::TableSetupColumn("note", 0, 0.9f);
    ImGui::TableHeadersRow();
    for (std::size_t i = 0; i < selection->buckets.size(); ++i) {
      const db::BucketChoice& b = selection->buckets[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::Selectable(db::describe_bucket(b.key).c_str(), bucket_ == int(i),
                            ImGuiSelectableFlags_SpanAllColumns)) {
        bucket_ = static_cast<int>(i);
        candidate_ = -1;
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(b.variant.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.4g", b.score_ms);
      ImGui::TableNextColumn();
      if (b.margin) ImGui::Text("%+.1f%%", *b.margin * 100);
      ImGui::TableNextColumn();
      if (b.overridden) {
        ImGui::TextColored({0.4f, 0.8f, 1.0f, 1}, "override");
        ui::hover_text(b.override_reason);
      } else if (b.near_tie_rule_applied) {
        ImGui::TextColored({0.95f, 0.8f, 0.3f, 1}, "near tie");
        ui::hover_text("the raw fastest was within noise and won fewer buckets");
      }
    }
    for (const db::SkippedBucket& s : selection->skipped) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", db::describe_bucket(s.key).c_str());
      ImGui::TableNextColumn();
      ImGui::TextColored(ui::error_color(), "skipped");
      ui::hover_text(s.reason);
    }
    ImGui::EndTable();
  }

  if (bucket_ >= 0 && bucket_ < static_cast<int>(selection->buckets.size())) {
    const db::BucketChoice& b = selection->buckets[static_cast<std::size_t>(bucket_)];
    ImGui::Text("Candidates of %s (%zu problems)", db::describe_bucket(b.key).c_str(),
                b.problem_ids.size());
    if (ImGui::BeginTable("candidates", 4, flags, {0, ImGui::GetContentRegionAvail().y - 90})) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("variant", 0, 3.0f);
      ImGui::TableSetupColumn("score ms", 0, 1.0f);
      ImGui::TableSetupColumn("noise", 0, 1.0f);
      ImGui::TableSetupColumn("buckets won", 0, 1.0f);
      ImGui::TableHeadersRow();
      for (std::size_t c = 0; c < b.candidates.size(); ++c) {
        const db::Candidate& cand = b.candidates[c];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(c));
        const std::string label = (cand.variant == b.variant ? "* " : "  ") + cand.variant;
        if (ImGui::Selectable(label.c_str(), candidate_ == int(c),
                              ImGuiSelectableFlags_SpanAllColumns))
          candidate_ = static_cast<int>(c);
        ImGui::PopID();
        ImGui::TableNextColumn();
        ImGui::Text("%.4g", cand.score_ms);
        ImGui::TableNextColumn();
        ImGui::Text("%.1f%%", cand.noise * 100);
        ImGui::TableNextColumn();
        ImGui::Text("%d", cand.buckets_won);
      }
      ImGui::EndTable();
    }
    ImGui::SetNextItemWidth(-1);
    ImGui::InputTextWithHint("##reason", "reason for the override (required)", reason_,
                             sizeof reason_);
    const bool can_override = candidate_ >= 0 && candidate_ < int(b.candidates.size());
    if (!can_override) ImGui::BeginDisabled();
    if (ImGui::Button("Override with the selected candidate")) {
      last_action_ = view_.set_override(state.session, static_cast<std::size_t>(bucket_),
                                        b.candidates[static_cast<std::size_t>(candidate_)].variant,
                                        reason_);
      gate_.request();  // recompute the selection next frame, however long it takes
    }
    if (!can_override) ImGui::EndDisabled();
    ImGui::SameLine();
    if (!b.overridden) ImGui::BeginDisabled();
    if (ImGui::Button("Clear override")) {
      last_action_ = view_.clear_override(state.session, static_cast<std::size_t>(bucket_));
      gate_.request();
    }
    if (!b.overridden) ImGui::EndDisabled();
  } else {
    ImGui::TextDisabled("Select a bucket to see its candidates and override the choice.");
  }
  ImGui::EndChild();

  ImGui::SameLine();
  ImGui::BeginChild("export", {0, 0}, false);
  ImGui::SetNextItemWidth(-200);
  ImGui::InputText("##outdir", out_dir_, sizeof out_dir_);
  ui::hover_text("output directory for dispatch.json and gdn_dispatch_table.hpp");
  ImGui::SameLine();
  if (ImGui::Button("Export dispatch table")) last_action_ = view_.export_to(state.session, out_dir_);
  if (!last_action_.message.empty())
    ImGui::TextColored(last_action_.ok ? ImVec4{0.45f, 0.85f, 0.45f, 1} : ui::error_color(), "%s",
                       last_action_.message.c_str());
  if (ImGui::BeginTabBar("preview")) {
    // InputTextMultiline needs a mutable buffer; ReadOnly keeps the text as rendered.
    auto show = [](const char* id, const std::string& text) {
      ImGui::InputTextMultiline(id, const_cast<char*>(text.c_str()), text.size() + 1, {-1, -1},
                                ImGuiInputTextFlags_ReadOnly);
    };
    if (ImGui::BeginTabItem("dispatch.json")) {
      show("##json", view_.preview_json());
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("gdn_dispatch_table.hpp")) {
      show("##header", view_.preview_header());
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

}  // namespace gdn::gui
