// Worker process loop (see worker_main.hpp).
#include "gdn/tuner/worker_main.hpp"

#include <chrono>
#include <iostream>
#include <unistd.h>

#include "gdn/tuner/backend.hpp"
#include "gdn/tuner/stop_signals.hpp"

namespace gdn::tuner {

namespace {

void send(const wire::Message& m) { std::cout << wire::encode(m) << '\n' << std::flush; }

}  // namespace

int run_worker(const WorkerOptions& opt) {
  return run_worker(opt, [](const WorkerOptions& o) {
    return o.replay_db.empty() ? make_gpu_backend(o.gpu) : make_replay_backend(o.replay_db, o.replay_sweep);
  });
}

int run_worker(const WorkerOptions& opt, const BackendFactory& make_backend) {
  ignore_stop_signals();  // a Ctrl-C or `timeout` reaches the whole group: the coordinator decides
  std::unique_ptr<MeasureBackend> backend;
  try {
    backend = make_backend(opt);
  } catch (const std::exception& e) {
    wire::Message fatal;
    fatal.verb = "fatal";
    send(fatal.set("message", std::string(e.what())));
    return 2;
  }
  wire::Message ready;
  ready.verb = "ready";
  ready.set("pid", static_cast<long long>(::getpid()))
      .set("mode", std::string(opt.replay_db.empty() ? "gpu" : "replay"))
      .set("gpu", static_cast<long long>(opt.gpu));
  send(ready);

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit") return 0;
    if (line.empty()) continue;
    TrialRequest req;
    try {
      req = decode_request(wire::decode(line));
    } catch (const std::exception& e) {
      std::cerr << "gdnlab worker: unreadable request: " << e.what() << '\n';
      return 3;
    }
    const auto t0 = std::chrono::steady_clock::now();
    TrialOutput out;
    try {
      out = req.kind == RequestKind::Gate ? backend->gate(req) : backend->measure(req);
    } catch (const std::exception& e) {
      out = TrialOutput{};
      out.result.outcome = db::Outcome::LaunchFailed;
      out.result.message = std::string("worker error: ") + e.what();
    }
    out.id = req.id;
    out.worker_exiting = backend->context_lost();
    out.worker_busy_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    send(encode_output(out));
    if (out.worker_exiting) return 4;
  }
  return 0;
}

}  // namespace gdn::tuner
