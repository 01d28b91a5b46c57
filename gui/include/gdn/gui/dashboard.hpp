// Entry point of the tuning dashboard, shared by `gdnlab gui` (tuner/) and the standalone
// `gdnlab-gui` executable, so both accept the same options with the same meaning.
#pragma once

#include <optional>
#include <string>

#include "gdn/db/report.hpp"

namespace gdn::gui {

// The tab shown first (headless screenshots pick one per panel).
enum class Tab { Results, Plots, Compare, Selection };
// "results" | "plots" | "compare" | "selection"; throws std::invalid_argument naming the
// option and the accepted values otherwise.
Tab parse_tab(const std::string& text);
// --compare-by: db::parse_compare_by, std::invalid_argument naming the option otherwise.
db::CompareBy parse_compare_by_option(const std::string& text);
// --compare-pin FIELD=VALUE: db::parse_pin_choice, std::invalid_argument naming the option
// otherwise.
db::PinChoice parse_compare_pin_option(const std::string& text);
const char* tab_name(Tab tab);

struct DashboardOptions {
  std::string db_path;         // --db: the results database (opened read-only)
  std::string screenshot_png;  // --screenshot: render headless, write this PNG, exit
  int frames = 0;              // --frames: frames to render before exiting; 0 = until closed
  Tab tab = Tab::Results;      // --tab
  db::CompareBy compare_by = db::CompareBy::Problem;  // --compare-by: the compare tab's rows
  std::optional<db::PinChoice> compare_pin;           // --compare-pin: with --compare-by pin
  int width = 1600, height = 1000;  // --size WxH of the window / framebuffer
  bool print_frame_stats = false;   // --frame-stats: frame time summary on stdout at exit
  double refresh_interval_s = 1.0;  // how often the live view polls the database for changes
};

// Opens the window and runs the dashboard until it is closed or `frames` frames have been
// rendered. Never throws for database problems (they are shown in the window). Returns 0 on
// success, 1 when the window or GL context cannot be created or the screenshot cannot be
// written (the reason goes to stderr).
int run_dashboard(const DashboardOptions& options);

// --compare-by pin needs --compare-pin, which goes with it alone: std::invalid_argument naming
// the options otherwise.
void check_compare_options(const DashboardOptions& options);

}  // namespace gdn::gui
