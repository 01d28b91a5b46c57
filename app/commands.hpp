// The gdnlab subcommands. Each add_* registers its options on the app and sets `run` to the
// action main() calls after a successful parse; actions return the process exit status.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <iosfwd>
#include <string>

#include "gdn/db/database.hpp"
#include "gdn/db/report.hpp"

namespace gdn::cli {

using Action = std::function<int()>;

void add_devices(CLI::App& app, Action& run);
void add_space(CLI::App& app, Action& run);
void add_sweep(CLI::App& app, Action& run);
void add_report(CLI::App& app, Action& run);
void add_export(CLI::App& app, Action& run);
void add_gap(CLI::App& app, Action& run);
void add_compare(CLI::App& app, Action& run);
void add_merge(CLI::App& app, Action& run);
void add_gui(CLI::App& app, Action& run);
void add_worker(CLI::App& app, Action& run);

// For a merged sweep (gdnlab merge), which shard and device its results came from; nothing for
// an ordinary sweep.
void print_origins(std::ostream& out, const db::Database& database, std::int64_t sweep_id);

// The --format option of report, gap and compare: table, csv or json; anything else throws
// std::invalid_argument naming the option and the value (main() reports it with the usage
// status).
db::ReportFormat report_format_option(const std::string& text);

// The --out option of gap and compare. `refuse_directory_out`: the usage error when it names a
// directory, else nullopt. `write_output`: the rendering on stdout when out is empty, else into
// that file through a temporary name and a rename, so that a failed write leaves no partial
// file nor replaces an older one ("wrote OUT" on stdout; a failed write throws DbError::Io,
// a failure of the run, not of the arguments). Returns the exit status.
std::optional<int> refuse_directory_out(const std::string& sub, const std::string& out);
int write_output(const std::string& out, const std::string& text);

// "gdnlab <sub>: error: <message>" on stderr; returns the usage-error status (2).
int usage_error(const std::string& sub, const std::string& message);

}  // namespace gdn::cli
