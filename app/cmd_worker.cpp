// gdnlab worker (hidden): the per-GPU measuring process `sweep` spawns; protocol in
// gdn/tuner/worker_main.hpp.
#include <limits>

#include "commands.hpp"
#include "option_checks.hpp"
#include "gdn/tuner/worker_main.hpp"

namespace gdn::cli {

void add_worker(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("worker", "Internal: measuring process spawned by sweep (line protocol on stdin/stdout)");
  sub->group("");  // hidden from --help
  auto opt = std::make_shared<tuner::WorkerOptions>();
  auto sweep_id = std::make_shared<std::int64_t>(0);
  sub->add_option("--gpu", opt->gpu, "CUDA device ordinal")->check(integer_in(0, std::numeric_limits<int>::max()));
  sub->add_option("--replay", opt->replay_db, "Answer from this recorded database instead of a GPU");
  sub->add_option("--replay-sweep", *sweep_id, "Sweep id of the recording")->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->callback([&run, opt, sweep_id] {
    if (*sweep_id > 0) opt->replay_sweep = *sweep_id;
    run = [opt] { return tuner::run_worker(*opt); };
  });
}

}  // namespace gdn::cli
