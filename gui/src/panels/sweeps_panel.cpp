// Sweeps: one row per sweep with device, build, date, protocol, status and outcome counts.
// Radio columns pick sweep A (shown everywhere) and sweep B (the compare partner). Counts move
// live while a sweep writes: the frame loop reloads the list when the database changes.
#include <imgui.h>

#include <string>

#include "../panels.hpp"
#include "gdn/db/merge.hpp"
#include "../ui_util.hpp"

namespace gdn::gui {
namespace {

// Short headers for the seven outcome columns; the tooltip names them in full.
constexpr const char* kOutcomeHeaders[db::kOutcomeCount] = {"Pass", "Incorr", "Reject", "Launch",
                                                            "Tmout", "Unsup", "Crash"};

// Read only while hovered: a merged sweep also says which shard and device its results came from.
void sweep_tooltip(const db::SweepSummary& s, const db::Database& database) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::Text("sweep %lld: %s over %s, strategy %s, metrics %s", (long long)s.sweep.id,
              s.sweep.space.c_str(), s.sweep.shapes.c_str(), s.sweep.strategy.c_str(),
              s.sweep.metrics_level.c_str());
  ImGui::Text("device: %s", ui::device_line(s.device).c_str());
  ImGui::Text("build: %s", ui::build_line(s.build).c_str());
  ImGui::Text("protocol: %s", ui::protocol_line(s.sweep.protocol).c_str());
  ImGui::Text("started %s%s%s", s.sweep.started_at.c_str(),
              s.sweep.finished_at.empty() ? "" : ", finished ", s.sweep.finished_at.c_str());
  ImGui::TextDisabled("%s", s.sweep.args.c_str());
  if (const auto shard = db::sweep_shard(database, s.sweep.id))
    ImGui::Text("shard %d/%d of a sharded sweep (gdnlab merge combines the shards)", shard->index, shard->count);
  const auto origins = db::shard_origins(database, s.sweep.id);
  if (!origins.empty()) ImGui::Text("merged from:\n%s", db::describe_origins(origins).c_str());
  ImGui::EndTooltip();
}

}  // namespace

void SweepsPanel::draw(DashboardState& state) {
  if (state.sweeps.empty()) {
    ImGui::TextDisabled("No sweeps in this database yet. Run gdnlab sweep --db %s",
                        state.options.db_path.c_str());
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("sweeps", 11 + int(db::kOutcomeCount), flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("A");
  ImGui::TableSetupColumn("B");
  ImGui::TableSetupColumn("id");
  ImGui::TableSetupColumn("started");
  ImGui::TableSetupColumn("device");
  ImGui::TableSetupColumn("build");
  ImGui::TableSetupColumn("space / shapes");
  ImGui::TableSetupColumn("strategy");
  ImGui::TableSetupColumn("protocol");
  ImGui::TableSetupColumn("status");
  ImGui::TableSetupColumn("results");
  for (const char* h : kOutcomeHeaders) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();

  for (const db::SweepSummary& s : state.sweeps) {
    const auto id = s.sweep.id;
    ImGui::PushID(static_cast<int>(id));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (ImGui::RadioButton("##a", state.sweep_a == id)) state.requested_sweep_a = id;
    ui::hover_text("show this sweep (results, plots, selection); compare side A");
    ImGui::TableNextColumn();
    if (ImGui::RadioButton("##b", state.sweep_b == id)) state.requested_sweep_b = id;
    ui::hover_text("compare side B");
    ImGui::TableNextColumn();
    ImGui::Text("%lld", (long long)id);
    sweep_tooltip(s, state.session.db());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s.sweep.started_at.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s (%d SMs)", s.device.name.c_str(), s.device.sm_count);
    ui::hover_text(ui::device_line(s.device));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(ui::short_sha(s.build.git_sha).c_str());
    ui::hover_text(ui::build_line(s.build));
    ImGui::TableNextColumn();
    ImGui::Text("%s / %s", s.sweep.space.c_str(), s.sweep.shapes.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s %s", s.sweep.strategy.c_str(), s.sweep.metrics_level.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%d..%d samples", s.sweep.protocol.min_samples, s.sweep.protocol.max_samples);
    ui::hover_text(ui::protocol_line(s.sweep.protocol));
    ImGui::TableNextColumn();
    const bool running = s.sweep.status == db::SweepStatus::Running;
    if (running)
      ImGui::TextColored({0.4f, 0.8f, 1.0f, 1}, "running (live)");
    else
      ImGui::TextUnformatted(std::string(db::to_string(s.sweep.status)).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld", (long long)s.result_count);
    for (db::Outcome o : db::kAllOutcomes) {
      ImGui::TableNextColumn();
      const auto n = s.count(o);
      if (n == 0)
        ImGui::TextDisabled("0");
      else
        ImGui::TextColored(ui::outcome_color(o), "%lld", (long long)n);
      ui::hover_text(std::string(db::to_string(o)));
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace gdn::gui
