#include "ui_util.hpp"

#include <cstdio>

namespace gdn::gui::ui {

ImVec4 outcome_color(db::Outcome o) {
  switch (o) {
    case db::Outcome::Passed: return {0.45f, 0.85f, 0.45f, 1};
    case db::Outcome::Incorrect: return {1.0f, 0.35f, 0.35f, 1};
    case db::Outcome::Crashed: return {1.0f, 0.25f, 0.6f, 1};
    case db::Outcome::Timeout: return {1.0f, 0.6f, 0.2f, 1};
    case db::Outcome::LaunchFailed: return {1.0f, 0.5f, 0.3f, 1};
    case db::Outcome::CompileRejected:
    case db::Outcome::Unsupported: return {0.6f, 0.6f, 0.65f, 1};
  }
  return {1, 1, 1, 1};
}

ImVec4 difference_color(db::Difference d) {
  switch (d) {
    case db::Difference::Same: return {0.75f, 0.75f, 0.8f, 1};
    case db::Difference::Faster: return {0.45f, 0.85f, 0.45f, 1};
    case db::Difference::Slower: return {1.0f, 0.4f, 0.35f, 1};
    case db::Difference::Unclear: return {0.95f, 0.8f, 0.3f, 1};
  }
  return {1, 1, 1, 1};
}

ImVec4 error_color() { return {1.0f, 0.4f, 0.35f, 1}; }
ImVec4 dim_color() { return ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled); }

bool field_combo(const char* label, db::Field& field, const std::vector<db::Field>& choices,
                 float width) {
  bool changed = false;
  ImGui::SetNextItemWidth(width);
  const std::string current(db::field_info(field).name);
  if (ImGui::BeginCombo(label, current.c_str())) {
    for (db::Field f : choices) {
      const std::string name(db::field_info(f).name);
      if (ImGui::Selectable(name.c_str(), f == field)) {
        changed = f != field;
        field = f;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

void hover_text(const std::string& text) {
  if (!text.empty() && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 45.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

std::string device_line(const db::DeviceRecord& d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %d MHz SM / %d MHz mem, driver %s, CUDA %s)",
                d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.sm_clock_mhz,
                d.mem_clock_mhz, d.driver_version.c_str(), d.cuda_version.c_str());
  return buf;
}

std::string short_sha(const std::string& sha) { return sha.size() > 10 ? sha.substr(0, 10) : sha; }

std::string build_line(const db::BuildRecord& b) {
  return short_sha(b.git_sha) + ", variants " + b.variant_set + ", built " + b.created_at +
         (b.flags.empty() ? "" : "\nflags: " + b.flags);
}

std::string protocol_line(const db::ProtocolRecord& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "warm-up %d, samples %d..%d until (p80-p20)/p50 < %.3g or %.0f ms, L2 flush %lld B, "
                "%s",
                p.warmup_iters, p.min_samples, p.max_samples, p.target_rel_spread, p.time_cap_ms,
                static_cast<long long>(p.l2_flush_bytes),
                p.use_graphs ? "CUDA graphs" : "no graphs");
  return buf;
}

}  // namespace gdn::gui::ui
