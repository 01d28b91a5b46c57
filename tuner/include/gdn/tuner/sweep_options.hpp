// Everything `gdnlab sweep` is told, validated before any database is touched.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gdn/profiler/metrics.hpp"
#include "gdn/profiler/protocol.hpp"
#include "gdn/tuner/shard.hpp"
#include "gdn/tuner/strategy.hpp"

namespace gdn::tuner {

// The longest --timeout / --gate-timeout accepted, in seconds (a week).
inline constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;

struct SweepOptions {
  std::string space = "default";      // default | all | <file of variant names>
  std::string shapes;                 // shape-set name or CSV file; may be empty with --replay
  std::string db_path;                // results database (created if missing)
  StrategyOptions strategy;
  std::vector<int> gpus{0};
  profiler::MetricSet metrics = profiler::MetricSet::Basic;
  bool resume = false;
  // Resume the sweep with the same arguments when the database holds one (a finished one then
  // has nothing left to measure), else start it: what a batch job that may be requeued or
  // resubmitted runs. Excludes resume.
  bool resume_or_start = false;
  bool pm_sampling = false;
  std::string replay_db;              // non-empty: replay runner, no GPU
  std::optional<std::int64_t> replay_sweep;
  std::string variant_filter;         // comma-separated globs on candidate names ('*', '?')
  std::string plans = "rule";         // plan space: rule | axes | grid (space.hpp)
  // The executable spawned as `<worker_exe> worker ...` (empty: this gdnlab). Tests point it
  // at a worker with fault hooks; not part of what is measured.
  std::string worker_exe;
  double timeout_s = 120;             // per measurement
  double gate_timeout_s = 600;        // per correctness gate (float64 CPU reference inside)
  bool progress = true;               // live progress line on stderr
  // The protocol of every precise measurement: all of exhaustive and random, and the final
  // rung of halving (its cheap rungs only rank, with their own quick protocol, see
  // fidelity.hpp). --warmup, --min-samples, --max-samples, --target-spread and --time-cap-ms
  // set it; stored with the sweep and part of what --resume matches.
  profiler::Protocol precise = profiler::Protocol::precise();
  // --shard I/N: measure part I of N of the sweep (shard.hpp); part of what --resume matches.
  ShardSpec shard;
};

// Throws std::invalid_argument naming the option, what was expected and what was given.
// Pure: reads files only to check they exist, never opens the database.
void validate(const SweepOptions& o);

// "0,1,3" -> {0,1,3}; throws std::invalid_argument naming --gpus on anything else.
std::vector<int> parse_gpu_list(const std::string& text);

// The command line that reproduces the sweep, in a canonical order: stored as the sweep's
// args and compared on --resume (everything but --resume, --resume-or-start, --gpus and
// --progress, which do not
// change what is measured). Protocol options appear only when they differ from
// Protocol::precise(), so sweeps recorded before they existed still resume; --shard appears
// (last) only on a sharded sweep.
std::string canonical_args(const SweepOptions& o);

// Glob match with '*' (any run) and '?' (one character).
bool glob_match(const std::string& pattern, const std::string& text);
// True when the filter is empty or any of its comma-separated globs matches.
bool passes_filter(const std::string& filter, const std::string& name);

}  // namespace gdn::tuner
