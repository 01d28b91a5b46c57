// gdnlab sweep: verify, time and profile variants over a shape set into the results database.
#include <iostream>
#include <limits>

#include "commands.hpp"
#include "option_checks.hpp"
#include "gdn/tuner/sweep.hpp"
#include "gdn/tuner/worker_process.hpp"

namespace gdn::cli {

namespace {
struct SweepArgs {
  tuner::SweepOptions o;
  std::string strategy = "exhaustive";
  std::string gpus = "0";
  std::string metrics = "basic";
  std::int64_t replay_sweep = 0;
  // Signed so that a negative value is reported, not wrapped around to a huge unsigned one.
  std::int64_t budget = 0;
  std::int64_t seed = 0;
  bool no_progress = false;
  std::string shard = "1/1";  // 1/1: not sharded
};
}  // namespace

void add_sweep(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("sweep", "Run a sweep: can_implement, correctness gate, timing, CUPTI profiling; "
                                          "one committed transaction per result");
  auto a = std::make_shared<SweepArgs>();
  sub->add_option("--space", a->o.space, "Variant space: default (compiled variants), all (full config space), "
                                         "or a file listing variant names")->capture_default_str();
  sub->add_option("--shapes", a->o.shapes, "Shape set: a name in scripts/shapes (smoke, edge, fwd_anchors, ...) "
                                           "or a CSV file; optional with --replay (default: the recorded problems)");
  sub->add_option("--db", a->o.db_path, "Results database (SQLite; created when missing)")->required();
  sub->add_option("--strategy", a->strategy, "exhaustive | random | halving")->capture_default_str();
  sub->add_option("--budget", a->budget, "random: (variant, problem) pairs to measure; "
                                                   "halving: variants drawn per problem (0 = all)")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--seed", a->seed, "Seed of the random and halving strategies")
      ->capture_default_str()->check(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--halving-eta", a->o.strategy.halving_eta, "Successive halving keeps the best 1/eta per rung")
      ->capture_default_str()->check(integer_in(2, 16));
  sub->add_option("--gpus", a->gpus, "Comma-separated GPU ordinals, one worker process each")->capture_default_str();
  sub->add_option("--metrics", a->metrics, "CUPTI counters: none | basic (one-pass set) | full (+ SOL)")
      ->capture_default_str();
  sub->add_flag("--pm-sampling", a->o.pm_sampling, "Record a PM-sampling timeline per precise measurement");
  sub->add_flag("--resume", a->o.resume, "Continue the newest unfinished sweep with the same arguments");
  sub->add_flag("--resume-or-start", a->o.resume_or_start,
                "Continue the sweep with the same arguments when --db holds one (a finished one measures nothing "
                "more), else start it: for batch jobs that may be requeued (scripts/slurm)");
  sub->add_option("--replay", a->o.replay_db, "Replay runner: answer from this recorded database (no GPU)");
  sub->add_option("--replay-sweep", a->replay_sweep, "Sweep of the --replay database (default: newest with results)")
      ->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--variants", a->o.variant_filter, "Comma-separated globs on candidate names, e.g. '*fused*v64*'");
  sub->add_option("--plans", a->o.plans, "Launch-plan space per variant: rule (the default rules only), axes (plus "
                                         "each plan field that applies pinned alone, at each of its values), "
                                         "grid (every combination); see `gdnlab space`")
      ->capture_default_str();
  sub->add_option("--worker-exe", a->o.worker_exe, "Executable spawned as '<exe> worker ...' (default: this gdnlab)")
      ->group("");  // hidden: tests spawn a worker with fault hooks
  sub->add_option("--timeout", a->o.timeout_s, "Seconds before a measurement is killed and recorded Timeout")
      ->capture_default_str()->check(finite_number());
  sub->add_option("--gate-timeout", a->o.gate_timeout_s, "Seconds before a correctness gate is killed (Timeout)")
      ->capture_default_str()->check(finite_number());
  sub->add_flag("--no-progress", a->no_progress, "No live progress line on stderr");
  sub->add_option("--shard", a->shard, "Measure part I of N of the sweep (I/N, e.g. 2/4) into this --db; "
                                       "the parts are merged with `gdnlab merge`")
      ->capture_default_str();
  // The precise protocol: every measurement of exhaustive and random, and halving's final
  // rung. Halving's cheap rungs keep their quick protocol (they only rank the survivors).
  const std::string group = "Precise measurement protocol";
  sub->footer(group + " options apply to every measurement of --strategy exhaustive and random and to "
                      "the final (precise) rung of halving; halving's cheap rungs keep their own quick "
                      "protocol, as they only rank variants. Defaults are the precise protocol's. The "
                      "values are stored with the sweep and --resume continues only a sweep with the same.\n");
  auto& p = a->o.precise;
  sub->add_option("--warmup", p.warmup_calls, "Untimed calls before the first sample")
      ->capture_default_str()->check(integer_in(std::numeric_limits<int>::min(), std::numeric_limits<int>::max()))->group(group);
  sub->add_option("--min-samples", p.min_samples, "The stop rule never stops before this many samples")
      ->capture_default_str()->check(integer_in(std::numeric_limits<int>::min(), std::numeric_limits<int>::max()))->group(group);
  sub->add_option("--max-samples", p.max_samples, "... and always stops at this many")
      ->capture_default_str()->check(integer_in(std::numeric_limits<int>::min(), std::numeric_limits<int>::max()))->group(group);
  sub->add_option("--target-spread", p.target_rel_spread,
                  "Stop once (p80 - p20) / p50 <= this (0.003 = 0.3 %) after --min-samples")
      ->capture_default_str()->check(finite_number())->group(group);
  sub->add_option("--time-cap-ms", p.time_cap_ms,
                  "Wall-clock cap of the sampling loop per (variant, problem); keep it well below --timeout")
      ->capture_default_str()->check(finite_number())->group(group);
  sub->callback([&run, a, sub] {
    run = [a, sub]() -> int {
      auto& o = a->o;
      // An empty value given on purpose ("--replay ''", an unset shell variable) is an error,
      // not the option's absence: absent --replay means a GPU sweep, absent --shapes another set.
      for (const char* name : {"--db", "--shapes", "--space", "--replay", "--variants"})
        for (const auto& value : sub->get_option(name)->results())
          if (value.empty())
            return usage_error("sweep", std::string(name) + ": expected a non-empty value, got ''");
      try {
        o.strategy.kind = tuner::parse_strategy(a->strategy);
        o.metrics = profiler::parse_metric_set(a->metrics);
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        return usage_error("sweep", what.rfind("--", 0) == 0 ? what : "--metrics: " + what);
      }
      o.gpus = tuner::parse_gpu_list(a->gpus);
      o.shard = tuner::parse_shard(a->shard);
      o.strategy.budget = static_cast<std::size_t>(a->budget);
      o.strategy.seed = static_cast<std::uint64_t>(a->seed);
      if (a->replay_sweep != 0) o.replay_sweep = a->replay_sweep;
      o.progress = !a->no_progress;
      tuner::validate(o);
      const auto outcome = tuner::run_sweep(o, {tuner::self_executable()});
      std::cout << tuner::format_outcome(outcome) << '\n';
      return 0;
    };
  });
}

}  // namespace gdn::cli
