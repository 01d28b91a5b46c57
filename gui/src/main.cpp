// gdnlab-gui: the dashboard on its own, with exactly the flags of `gdnlab gui` (the headless
// render tests and README screenshots use it without building the whole lab CLI).
#include <CLI/CLI.hpp>

#include "gdn/gui/cli_options.hpp"
#include "gdn/gui/dashboard.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gdnlab tuning dashboard: sweeps, results, plots, compare, selection & export"};
  gdn::gui::DashboardOptions options;
  gdn::gui::add_dashboard_options(app, options);
  CLI11_PARSE(app, argc, argv);
  gdn::gui::finish_dashboard_options(options);
  return gdn::gui::run_dashboard(options);
}
