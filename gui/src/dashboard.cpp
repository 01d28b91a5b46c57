// The frame loop: poll the database, apply panel requests, update the panels' models (the only
// place database errors can arise, caught here and shown in the window), then draw.
#include "gdn/gui/dashboard.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <utility>

#include "app_window.hpp"
#include "dashboard_state.hpp"
#include "frame_stats.hpp"
#include "panels.hpp"
#include "screenshot.hpp"
#include "ui_util.hpp"

namespace gdn::gui {

Tab parse_tab(const std::string& text) {
  for (Tab t : {Tab::Results, Tab::Plots, Tab::Compare, Tab::Selection})
    if (text == tab_name(t)) return t;
  throw std::invalid_argument("--tab: expected results, plots, compare or selection, got '" +
                              text + "'");
}

db::CompareBy parse_compare_by_option(const std::string& text) {
  const auto by = db::parse_compare_by(text);
  if (!by) throw std::invalid_argument("--compare-by: expected problem, candidate or pin, got '" + text + "'");
  return *by;
}

db::PinChoice parse_compare_pin_option(const std::string& text) {
  std::string error;
  const auto pin = db::parse_pin_choice(text, &error);
  if (!pin) throw std::invalid_argument("--compare-pin: " + error);
  return *pin;
}

void check_compare_options(const DashboardOptions& options) {
  if (options.compare_by == db::CompareBy::Pin && !options.compare_pin)
    throw std::invalid_argument("--compare-by pin: expected --compare-pin FIELD=VALUE, got none");
  if (options.compare_by != db::CompareBy::Pin && options.compare_pin)
    throw std::invalid_argument("--compare-pin: expected only with --compare-by pin");
}

const char* tab_name(Tab tab) {
  switch (tab) {
    case Tab::Results: return "results";
    case Tab::Plots: return "plots";
    case Tab::Compare: return "compare";
    case Tab::Selection: return "selection";
  }
  return "results";
}

namespace {

struct Panels {
  SweepsPanel sweeps;
  ResultsPanel results;
  PlotsPanel plots;
  ComparePanel compare;
  SelectionPanel selection;
};

// The compare partner defaults to the newest other sweep, so the compare tab shows something
// as soon as a database holds two sweeps.
std::int64_t default_partner(const DashboardState& state) {
  for (const auto& s : state.sweeps)
    if (s.sweep.id != state.sweep_a) return s.sweep.id;
  return 0;
}

// Reloads what the database changed; throws db::DbError on trouble.
void reload(DashboardState& state, bool database_changed) {
  const db::Database& db = state.session.db();
  if (database_changed) state.sweeps = db::list_sweeps(db);
  if (state.requested_sweep_a) state.sweep_a = *std::exchange(state.requested_sweep_a, {});
  if (state.requested_sweep_b) state.sweep_b = *std::exchange(state.requested_sweep_b, {});
  if (state.sweep_a != 0 && !state.find_sweep(state.sweep_a)) state.sweep_a = 0;
  if (state.sweep_a == 0 && !state.sweeps.empty())
    state.sweep_a = db::latest_sweep_with_passes(db).value_or(state.sweeps.front().sweep.id);
  if (state.sweep_b != 0 && !state.find_sweep(state.sweep_b)) state.sweep_b = 0;
  if (state.sweep_b == 0) state.sweep_b = default_partner(state);

  if (state.rows.sweep_id() != state.sweep_a) {
    state.focused_row.reset();
    state.rows.load(db, state.sweep_a);
  } else if (database_changed) {
    state.rows.append_new(db);
  }
  ++state.data_generation;
}

void update_models(DashboardState& state, Panels& panels, Tab active, double now_s) {
  try {
    const bool changed = state.session.poll(now_s);
    if (!state.session.is_open()) return;
    if (changed || state.requested_sweep_a || state.requested_sweep_b) reload(state, changed);
    panels.results.update(state);
    panels.plots.update(state);
    panels.compare.update(state, active == Tab::Compare);
    panels.selection.update(state, active == Tab::Selection);
  } catch (const std::exception& e) {
    state.session.fail(e);
  }
  if (!state.session.is_open()) {  // forget what the lost connection showed
    state.sweeps.clear();
    state.rows.clear();
    state.focused_row.reset();
  }
}

void draw_problem(const DashboardState& state) {
  const auto& problem = state.session.problem();
  ImGui::Dummy({0, 40});
  ImGui::SetWindowFontScale(1.4f);
  ImGui::TextColored(ui::error_color(), "%s",
                     problem ? problem->headline.c_str() : "Opening the database...");
  ImGui::SetWindowFontScale(1.0f);
  if (problem) {
    ImGui::Spacing();
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(problem->detail.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::Spacing();
  ImGui::TextDisabled("Checking again every %.1f s.", state.options.refresh_interval_s);
}

// Returns the tab drawn this frame.
Tab draw_frame(DashboardState& state, Panels& panels, Tab active, bool select_initial_tab,
               double frame_ms) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::Begin("gdnlab dashboard", nullptr, flags);
  ImGui::Text("gdnlab dashboard");
  ImGui::SameLine();
  ImGui::TextDisabled("%s", state.options.db_path.c_str());
  if (const auto* a = state.find_sweep(state.sweep_a)) {
    ImGui::SameLine();
    ImGui::TextDisabled("| sweep A %lld (%s), %zu results loaded", (long long)a->sweep.id,
                        a->device.name.c_str(), state.rows.rows().size());
  }
  ImGui::SameLine(ImGui::GetWindowWidth() - 150);
  ImGui::TextDisabled("frame %.1f ms", frame_ms);
  ImGui::Separator();

  if (!state.session.is_open()) {
    draw_problem(state);
    ImGui::End();
    return active;
  }

  const float sweeps_height =
      std::min(ImGui::GetContentRegionAvail().y * 0.25f,
               ImGui::GetFrameHeightWithSpacing() * float(state.sweeps.size() + 2));
  ImGui::BeginChild("sweeps_panel", {0, std::max(sweeps_height, 60.0f)}, false);
  panels.sweeps.draw(state);
  ImGui::EndChild();

  Tab drawn = active;
  if (ImGui::BeginTabBar("tabs")) {
    struct TabDef {
      Tab tab;
      const char* label;
    };
    constexpr TabDef tabs[] = {{Tab::Results, "Results"},
                               {Tab::Plots, "Plots"},
                               {Tab::Compare, "Compare"},
                               {Tab::Selection, "Selection & export"}};
    for (const TabDef& t : tabs) {
      const ImGuiTabItemFlags tf =
          (select_initial_tab && t.tab == active) ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(t.label, nullptr, tf)) continue;
      drawn = t.tab;
      switch (t.tab) {
        case Tab::Results: panels.results.draw(state); break;
        case Tab::Plots: panels.plots.draw(state); break;
        case Tab::Compare: panels.compare.draw(state); break;
        case Tab::Selection: panels.selection.draw(state); break;
      }
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::End();
  return drawn;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int run_dashboard(const DashboardOptions& options) {
  const bool headless = options.frames > 0 || !options.screenshot_png.empty();
  std::unique_ptr<AppWindow> window;
  try {
    window = std::make_unique<AppWindow>(
        WindowOptions{"gdnlab dashboard - " + options.db_path, options.width, options.height,
                      headless});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdnlab gui: cannot open a window: %s\n", e.what());
    return 1;
  }

  DashboardState state(options);
  Panels panels;
  panels.compare.set_by(options.compare_by, options.compare_pin);
  FrameStats stats;
  Tab active = options.tab;
  const auto start = std::chrono::steady_clock::now();
  double last_frame_ms = 0;
  for (int frame = 0; options.frames == 0 || frame < options.frames; ++frame) {
    if (window->should_close()) break;
    const auto frame_start = std::chrono::steady_clock::now();
    update_models(state, panels, active, seconds_since(start));
    window->begin_frame();
    active = draw_frame(state, panels, active, frame == 0, last_frame_ms);
    window->render();
    const bool last = options.frames > 0 && frame + 1 == options.frames;
    if (last && !options.screenshot_png.empty()) {
      try {
        write_framebuffer_png(options.screenshot_png, window->framebuffer_width(),
                              window->framebuffer_height());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gdnlab gui: %s\n", e.what());
        return 1;
      }
    }
    window->present();
    last_frame_ms = seconds_since(frame_start) * 1000.0;
    stats.add(last_frame_ms);
  }
  if (options.print_frame_stats) std::printf("%s\n", stats.summary().c_str());
  if (const auto& problem = state.session.problem(); problem && headless)
    std::fprintf(stderr, "gdnlab gui: shown in the window: %s\n", problem->headline.c_str());
  return 0;
}

}  // namespace gdn::gui
