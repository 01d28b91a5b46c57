// The dashboard's command-line flags, registered on any CLI11 (sub)command: `gdnlab gui` and
// the standalone `gdnlab-gui` call this so both accept exactly the same options.
#pragma once

#include <CLI/CLI.hpp>

#include "gdn/gui/dashboard.hpp"

namespace gdn::gui {

// Registers --db, --screenshot, --frames, --tab, --size, --frame-stats, --refresh on `app`,
// writing into `options`. Call finish_dashboard_options() after parsing.
void add_dashboard_options(CLI::App& app, DashboardOptions& options);

// Applies defaults that depend on several flags (a screenshot without --frames renders 5
// frames) and checks the combination; throws CLI::ValidationError naming the flag.
void finish_dashboard_options(DashboardOptions& options);

}  // namespace gdn::gui
