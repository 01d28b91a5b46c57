// The gdnlab subcommands. Each add_* registers its options on the app and sets `run` to the
// action main() calls after a successful parse; actions return the process exit status.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace gdn::cli {

using Action = std::function<int()>;

void add_devices(CLI::App& app, Action& run);
void add_space(CLI::App& app, Action& run);
void add_sweep(CLI::App& app, Action& run);
void add_report(CLI::App& app, Action& run);
void add_export(CLI::App& app, Action& run);
void add_gap(CLI::App& app, Action& run);
void add_gui(CLI::App& app, Action& run);
void add_worker(CLI::App& app, Action& run);

// "gdnlab <sub>: error: <message>" on stderr; returns the usage-error status (2).
int usage_error(const std::string& sub, const std::string& message);

}  // namespace gdn::cli
