// The exit statuses of every gdnlab subcommand (docs/reliability.md lists them). One mapping
// from what went wrong to the status, so that the same failure exits the same way whichever
// subcommand met it.
#pragma once

#include <exception>

namespace gdn::cli {

enum ExitStatus : int {
  kExitOk = 0,
  // The inputs were acceptable but the work failed: the database could not be written (disk
  // full, locked, I/O error), no worker could start, an output file could not be written.
  kExitFailure = 1,
  // Bad arguments or bad inputs, refused before any work: an unknown or out-of-range option, a
  // missing, foreign, corrupt or too new database, a bad shape set, a refused --resume.
  kExitUsage = 2,
  // Stopped by SIGINT or SIGTERM: 128 + the signal number, as a shell reports a process the
  // signal killed (130, 143); the sweep is marked interrupted and --resume continues it.
  kExitSignalBase = 128,
};

// The status for an error that ended a subcommand.
int exit_status_of(const std::exception& e);

}  // namespace gdn::cli
