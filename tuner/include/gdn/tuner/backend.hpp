// What a worker process measures with. Two implementations: the GPU backend (libgdn's
// registry, the float64 reference for the gate, the profiler for timing and counters) and
// the replay backend (answers from a recorded database, no GPU).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gdn/tuner/trial_io.hpp"

namespace gdn::tuner {

class MeasureBackend {
 public:
  virtual ~MeasureBackend() = default;
  // Correctness gate of request.variant on request.problem (already the representative).
  virtual TrialOutput gate(const TrialRequest& request) = 0;
  // can_implement, then the timing phase, then the profiling phase (and PM sampling if asked).
  virtual TrialOutput measure(const TrialRequest& request) = 0;
  // True after a sticky device error: the worker answers, then exits to be restarted.
  virtual bool context_lost() const { return false; }
};

// Throws std::runtime_error (e.g. no usable device) with a message for the coordinator.
std::unique_ptr<MeasureBackend> make_gpu_backend(int gpu);
std::unique_ptr<MeasureBackend> make_replay_backend(const std::string& db_path,
                                                    std::optional<std::int64_t> sweep_id);

}  // namespace gdn::tuner
