// The hidden `gdnlab worker` subcommand: reads requests from stdin, answers on stdout, one
// line each (wire.hpp). Protocol:
//   worker -> coordinator, once at start:  ready  pid=<pid>  mode=gpu|replay  gpu=<n>
//                              or         fatal  message=<why it cannot work>   (then exits 2)
//   coordinator -> worker:  gate ... | measure ...  (trial_io.hpp: encode_request)
//                           quit                    (worker exits 0; so does EOF on stdin)
//   worker -> coordinator:  result ...              (trial_io.hpp: encode_output), one per request
// A request the worker cannot parse makes it exit 3 (the coordinator records a crash and
// restarts it); an exception while measuring is answered as outcome LaunchFailed.
//
// Test hooks (environment, read per request; used by the crash-isolation tests):
//   GDN_TEST_FAULT_VARIANT=<name>[,<name>...]  the worker dies by SIGSEGV on that variant
//   GDN_TEST_HANG_VARIANT=<name>[,<name>...]   the worker stops answering (sleeps)
//   GDN_TEST_WORKER_DELAY_MS=<ms>              every request takes at least that long (so a
//                                              test can kill -9 a replay sweep half-way)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gdn::tuner {

struct WorkerOptions {
  int gpu = 0;
  std::string replay_db;                      // non-empty: replay backend
  std::optional<std::int64_t> replay_sweep;
};

int run_worker(const WorkerOptions& options);

// The same loop over a backend made by `make_backend` (may throw: the worker then reports
// "fatal"). run_worker(options) uses the GPU or the replay backend; the GPU fault tests wrap the
// GPU backend in a test backend that injects device faults, in a test-only worker executable.
class MeasureBackend;
using BackendFactory = std::function<std::unique_ptr<MeasureBackend>(const WorkerOptions&)>;
int run_worker(const WorkerOptions& options, const BackendFactory& make_backend);

}  // namespace gdn::tuner
