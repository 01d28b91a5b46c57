// Small ImGui helpers shared by the panels: outcome colours, a field picker, tooltips.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "gdn/db/model.hpp"

namespace gdn::gui::ui {

ImVec4 outcome_color(db::Outcome o);
ImVec4 difference_color(db::Difference d);
ImVec4 error_color();
ImVec4 dim_color();

// A combo over the given fields by FieldInfo::name; returns true when the choice changed.
bool field_combo(const char* label, db::Field& field, const std::vector<db::Field>& choices,
                 float width = 180.0f);

// Shows `text` as a tooltip when the previous item is hovered.
void hover_text(const std::string& text);

// "NVIDIA H200 (132 SMs, 1980 MHz, driver 580.65)" and friends.
std::string device_line(const db::DeviceRecord& device);
std::string build_line(const db::BuildRecord& build);
std::string protocol_line(const db::ProtocolRecord& protocol);
std::string short_sha(const std::string& sha);

}  // namespace gdn::gui::ui
