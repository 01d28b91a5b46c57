// One worker process per GPU. A batch of independent requests is spread over the workers; each
// answer is handed to a callback as soon as it arrives (so the coordinator commits it at once).
// A worker that dies answers its request as Crashed (with how it died), one that does not
// answer within the timeout is killed and answers Timeout; either way it is restarted and the
// batch goes on.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gdn/tuner/trial_io.hpp"
#include "gdn/tuner/worker_process.hpp"

namespace gdn::tuner {

struct WorkerPoolOptions {
  std::vector<std::string> base_argv;  // e.g. {"/path/gdnlab", "worker", "--replay", "x.db"}
  std::vector<int> gpus;               // one worker per entry; "--gpu N" is appended
  std::chrono::milliseconds measure_timeout{std::chrono::minutes(2)};
  std::chrono::milliseconds gate_timeout{std::chrono::minutes(10)};  // CPU reference inside
  std::chrono::milliseconds startup_timeout{std::chrono::minutes(1)};
};

// Timing of one request as seen by the coordinator (overhead accounting).
struct RoundTrip {
  double wall_ms = 0;  // request written -> answer decoded
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolOptions options);
  ~WorkerPool();

  using OnDone = std::function<void(const TrialRequest&, TrialOutput&&, const RoundTrip&)>;
  // Runs every request; returns when all are answered. Throws std::runtime_error when a
  // worker cannot be started at all (then nothing more can be measured).
  void run(std::span<const TrialRequest> requests, const OnDone& on_done);

  int restarts() const { return restarts_; }

 private:
  struct Slot;
  void start_slot(Slot& s);
  TrialOutput failure(const TrialRequest& r, db::Outcome outcome, std::string message) const;
  WorkerPoolOptions opt_;
  std::vector<std::unique_ptr<Slot>> slots_;
  int restarts_ = 0;
};

}  // namespace gdn::tuner
