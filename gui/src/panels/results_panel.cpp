// Results table: every field of every result of sweep A, sortable by any column (shift-click
// for several keys) and filtered by the filter line. Rows are clipped, so only the visible ones
// are laid out: 100k rows cost the same per frame as 100. Clicking a row focuses it in the plots.
#include <imgui.h>

#include <cstring>
#include <string>

#include "../panels.hpp"
#include "../ui_util.hpp"
#include "gdn/gui/model/filter.hpp"

namespace gdn::gui {
namespace {

// Columns visible by default; the rest are one right-click on the header away.
bool shown_by_default(db::Field f) {
  switch (f) {
    case db::Field::VariantName: case db::Field::RowIndex: case db::Field::HQk:
    case db::Field::HV: case db::Field::K: case db::Field::V: case db::Field::DType:
    case db::Field::NumSeqs: case db::Field::TotalTokens: case db::Field::Outcome:
    case db::Field::LatencyP20: case db::Field::LatencyP50: case db::Field::LatencyP80:
    case db::Field::RelSpread: case db::Field::SmBusyPct: case db::Field::TensorPipePct:
    case db::Field::DramPct: case db::Field::AchievedOccupancyPct: case db::Field::Registers:
    case db::Field::LocalBytes: case db::Field::MaxRelRms:
    // the launch plan each result ran with: the decisions the pins and rules made
    case db::Field::PlanPrepareOverlap: case db::Field::PlanFirstSegment:
    case db::Field::PlanPrepareSplitChunk: case db::Field::PlanPrepareHeads:
    case db::Field::PlanFixupCols: case db::Field::PlanLocalHeads:
    case db::Field::PlanRecomputeCpChunks: case db::Field::PlanPass1BesideRecompute:
    case db::Field::PlanGroupSumBeside:
      return true;
    default:
      return false;
  }
}

}  // namespace

void ResultsPanel::update(DashboardState& state) { table_.update(state.rows); }

void ResultsPanel::draw(DashboardState& state) {
  ImGui::SetNextItemWidth(-260);
  if (ImGui::InputTextWithHint("##filter", "filter: block_v=64 outcome=Passed p50<0.5 fused",
                               filter_buffer_, sizeof filter_buffer_))
    filter_error_ = table_.set_filter(filter_buffer_);
  ui::hover_text(model::filter_help());
  ImGui::SameLine();
  ImGui::Text("%zu of %zu results", table_.size(), state.rows.rows().size());
  if (!filter_error_.empty()) ImGui::TextColored(ui::error_color(), "%s", filter_error_.c_str());

  const auto& columns = table_.columns();
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Sortable | ImGuiTableFlags_SortMulti | ImGuiTableFlags_ScrollX |
      ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
      ImGuiTableFlags_Resizable | ImGuiTableFlags_Reorderable | ImGuiTableFlags_Hideable |
      ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("results", static_cast<int>(columns.size()), flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (db::Field f : columns) {
    const auto& info = db::field_info(f);
    ImGuiTableColumnFlags cf = shown_by_default(f) ? 0 : ImGuiTableColumnFlags_DefaultHide;
    if (f == db::Field::VariantName) cf |= ImGuiTableColumnFlags_NoHide;
    ImGui::TableSetupColumn(std::string(info.label).c_str(), cf, 0.0f,
                            static_cast<ImGuiID>(f));
  }
  ImGui::TableHeadersRow();

  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
    std::vector<db::SortKey> keys;
    for (int i = 0; i < specs->SpecsCount; ++i) {
      const ImGuiTableColumnSortSpecs& s = specs->Specs[i];
      keys.push_back({static_cast<db::Field>(s.ColumnUserID),
                      s.SortDirection == ImGuiSortDirection_Descending});
    }
    table_.set_sort(std::move(keys));
    table_.update(state.rows);  // same frame: the clipper below must see the new order
    specs->SpecsDirty = false;
  }

  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(table_.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const std::size_t pos = table_.source_index(static_cast<std::size_t>(i));
      const db::ResultRow& row = state.rows.rows()[pos];
      ImGui::TableNextRow();
      for (std::size_t c = 0; c < columns.size(); ++c) {
        if (!ImGui::TableSetColumnIndex(static_cast<int>(c))) continue;
        const std::string text = db::format_value(db::field_value(row, columns[c]));
        if (columns[c] == db::Field::VariantName) {
          ImGui::PushID(i);
          const bool focused = state.focused_row == pos;
          if (ImGui::Selectable(text.c_str(), focused, ImGuiSelectableFlags_SpanAllColumns))
            state.focused_row = pos;
          ImGui::PopID();
          ui::hover_text("click: show this result in the plots tab");
        } else if (columns[c] == db::Field::Outcome) {
          ImGui::TextColored(ui::outcome_color(row.result.outcome), "%s", text.c_str());
          ui::hover_text(row.result.message);
        } else {
          ImGui::TextUnformatted(text.c_str());
        }
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace gdn::gui
