// gdnlab: the lab's command line. Subcommands: devices, space, sweep, merge, report, export, gap,
// compare, gui, and the hidden worker that `sweep` spawns per GPU.
#include <iostream>

#include "commands.hpp"
#include "exit_status.hpp"
#include "gdn/gdn.h"
#include "gdn/tuner/sweep.hpp"

namespace gdn::cli {
int usage_error(const std::string& sub, const std::string& message) {
  std::cerr << "gdnlab" << (sub.empty() ? "" : " " + sub) << ": error: " << message << '\n';
  return kExitUsage;
}
}  // namespace gdn::cli

int main(int argc, char** argv) {
  CLI::App app{"gdnlab: sweep, verify, profile and select Gated DeltaNet kernel variants"};
  const auto build = gdn::tuner::this_build();
  app.set_version_flag("--version", std::string("gdnlab ") + gdn_version() + " (git " + build.git_sha +
                                        ", variant set " + build.variant_set + ")");
  app.require_subcommand(1);
  gdn::cli::Action run;
  gdn::cli::add_devices(app, run);
  gdn::cli::add_space(app, run);
  gdn::cli::add_sweep(app, run);
  gdn::cli::add_report(app, run);
  gdn::cli::add_export(app, run);
  gdn::cli::add_gap(app, run);
  gdn::cli::add_compare(app, run);
  gdn::cli::add_merge(app, run);
  gdn::cli::add_gui(app, run);
  gdn::cli::add_worker(app, run);
  if (argc > 1 && argv[1][0] != '-') {
    bool known = true;
    try {
      app.get_subcommand(argv[1]);
    } catch (const CLI::OptionNotFound&) {
      known = false;
    }
    if (!known)
      return gdn::cli::usage_error(argv[1], std::string("unknown subcommand '") + argv[1] +
                                                "'; expected devices, space, sweep, merge, report, export, gap, compare or gui");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every refused command line exits with the usage status,
    // not CLI11's own codes (105, 106, 109, ...), and in the same message form as the rest.
    if (e.get_exit_code() == 0) return app.exit(e);
    const auto parsed = app.get_subcommands();
    return gdn::cli::usage_error(parsed.empty() ? std::string() : parsed.front()->get_name(),
                                 std::string(e.what()) + " (run with --help for the options)");
  }
  // Every subcommand's errors end here: one message form, one status per kind of failure.
  const auto parsed = app.get_subcommands();
  const std::string sub = parsed.empty() ? "" : parsed.front()->get_name();
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "gdnlab" << (sub.empty() ? "" : " " + sub) << ": error: " << e.what() << '\n';
    return gdn::cli::exit_status_of(e);
  }
}
