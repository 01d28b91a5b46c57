#include "gdn/gui/cli_options.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace gdn::gui {
namespace {

// Default number of frames of a screenshot run: ImGui lays out tables and auto-sized columns
// over the first two or three frames, so the picture settles only after a few.
constexpr int kScreenshotFrames = 5;

// An option whose text `parse` turns into a value, throwing std::invalid_argument with the reason
// on a bad one: CLI11 reports that as the option's validation error.
template <class Parse>
CLI::Option* add_parsed_option(CLI::App& app, const std::string& name, Parse parse,
                               const std::string& help) {
  return app.add_option_function<std::string>(
      name,
      [name, parse](const std::string& text) {
        try {
          parse(text);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(name, e.what());
        }
      },
      help);
}

}  // namespace

void add_dashboard_options(CLI::App& app, DashboardOptions& options) {
  app.add_option("--db", options.db_path, "Results database (SQLite) to show; opened read-only")
      ->required();
  app.add_option("--screenshot", options.screenshot_png,
                 "Render headless, write the last frame to this PNG and exit (use xvfb-run "
                 "without a display)");
  app.add_option("--frames", options.frames,
                 "Frames to render before exiting (0: run until the window is closed; default "
                 "5 with --screenshot)")
      ->check(CLI::NonNegativeNumber);
  add_parsed_option(
      app, "--tab", [&options](const std::string& text) { options.tab = parse_tab(text); },
      "Tab shown first: results | plots | compare | selection")
      ->default_str("results");
  add_parsed_option(
      app, "--compare-by",
      [&options](const std::string& text) { options.compare_by = parse_compare_by_option(text); },
      "Rows of the compare tab: problem (each sweep's fastest) | candidate (the same variant and "
      "pins in both) | pin (each candidate with --compare-pin against the same one without it)")
      ->default_str("problem");
  add_parsed_option(
      app, "--compare-pin",
      [&options](const std::string& text) { options.compare_pin = parse_compare_pin_option(text); },
      "With --compare-by pin: FIELD=VALUE, a plan field by name or token (pb=1)");
  app.add_option_function<std::string>(
         "--size",
         [&options](const std::string& text) {
           int w = 0, h = 0;
           char tail = 0;
           if (std::sscanf(text.c_str(), "%dx%d%c", &w, &h, &tail) != 2 || w < 320 || h < 240 ||
               w > 8192 || h > 8192)
             throw CLI::ValidationError(
                 "--size", "expected WIDTHxHEIGHT between 320x240 and 8192x8192, got '" + text + "'");
           options.width = w;
           options.height = h;
         },
         "Window / framebuffer size, WIDTHxHEIGHT")
      ->default_str("1600x1000");
  app.add_flag("--frame-stats", options.print_frame_stats,
               "Print frame-time statistics (first frame, median, p90, max) at exit");
  app.add_option("--refresh", options.refresh_interval_s,
                 "Seconds between checks for new results while a sweep writes")
      ->check(CLI::Range(0.05, 60.0));
}

void finish_dashboard_options(DashboardOptions& options) {
  if (!options.screenshot_png.empty() && options.frames == 0) options.frames = kScreenshotFrames;
  try {
    check_compare_options(options);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--compare-pin", e.what());
  }
}

}  // namespace gdn::gui
