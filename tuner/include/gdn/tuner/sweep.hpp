// The sweep coordinator: resolves space and problems, registers provenance, starts or resumes
// the sweep row, drives the strategy through the worker pool and commits every result in its
// own transaction as it arrives. Pipeline per (variant, problem):
//   can_implement -> correctness gate (once per variant and problem family) -> timing phase
//   -> profiling phase (CUPTI range profiler unless --metrics none) -> optional PM timeline.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gdn/db/records.hpp"
#include "gdn/tuner/sweep_options.hpp"

namespace gdn::tuner {

struct SweepEnvironment {
  std::string gdnlab_exe;  // the binary whose hidden `worker` subcommand runs the trials
};

// The runner's own cost per configuration, measured (stated in docs/design.md).
struct OverheadStats {
  std::size_t measured = 0;           // trials that went through a worker this run
  double round_trip_ms = 0;           // mean: request written -> answer decoded, minus worker busy time
  double db_write_ms = 0;             // mean: one result's transaction
  double per_config_ms = 0;           // mean: wall time of the run not spent inside workers, per trial
};

struct SweepOutcome {
  std::int64_t sweep_id = 0;
  bool resumed = false;
  std::array<std::int64_t, db::kOutcomeCount> counts{};  // results of the sweep, whole (incl. earlier runs)
  std::size_t committed_now = 0;      // results written by this run
  std::size_t answered_from_db = 0;   // trials already committed by an earlier run (resume)
  int worker_restarts = 0;
  double wall_s = 0;
  OverheadStats overhead;
};

// The sweep stopped because of SIGINT or SIGTERM (StopSignals): marked interrupted, resumable.
class SweepStopped : public std::runtime_error {
 public:
  SweepStopped(int signal, const std::string& what) : std::runtime_error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Committing a result (or the sweep's status) failed: the database's trouble, not the variant's.
// The sweep is marked interrupted where the database still allows it, and is resumable.
class RecordingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws std::invalid_argument for bad options (before touching the database),
// db::DbError for database trouble before the sweep starts, RecordingError when a result cannot
// be committed, SweepStopped after a stop signal, std::runtime_error when no worker can be
// started.
SweepOutcome run_sweep(const SweepOptions& options, const SweepEnvironment& env);

std::string format_outcome(const SweepOutcome& o);

// Provenance of this gdnlab build, as a GPU sweep records it: the commit it was built from
// (read at build time, "-dirty" with uncommitted changes), the kernel-shaping options and the
// variant set.
db::BuildRecord this_build();

}  // namespace gdn::tuner
