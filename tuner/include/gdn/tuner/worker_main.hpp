// The hidden `gdnlab worker` subcommand: reads requests from stdin, answers on stdout, one
// line each (wire.hpp). Protocol:
//   worker -> coordinator, once at start:  ready  pid=<pid>  mode=gpu|replay  gpu=<n>
//                              or         fatal  message=<why it cannot work>   (then exits 2)
//   coordinator -> worker:  gate ... | measure ...  (trial_io.hpp: encode_request)
//                           quit                    (worker exits 0; so does EOF on stdin)
//   worker -> coordinator:  result ...              (trial_io.hpp: encode_output), one per request
// A request the worker cannot parse makes it exit 3 (the coordinator records a crash and
// restarts it); an exception while measuring is answered as outcome LaunchFailed. The
// production worker has no fault hooks: the crash-isolation tests spawn a worker of their own
// (sweep --worker-exe) that wraps the backend in one (tests/tuner/sweep/fault_worker.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gdn/tuner/backend.hpp"

namespace gdn::tuner {

struct WorkerOptions {
  int gpu = 0;
  std::string replay_db;                      // non-empty: replay backend
  std::optional<std::int64_t> replay_sweep;
};

int run_worker(const WorkerOptions& options);

// The same loop over a backend made by `make_backend` (may throw: the worker then reports
// "fatal"). run_worker(options) uses the GPU or the replay backend; the fault tests wrap it in a
// test backend that injects process and device faults, in a test-only worker executable.
class MeasureBackend;
using BackendFactory = std::function<std::unique_ptr<MeasureBackend>(const WorkerOptions&)>;
int run_worker(const WorkerOptions& options, const BackendFactory& make_backend);

}  // namespace gdn::tuner
