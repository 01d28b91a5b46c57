// What the profiler measures: one "call" = everything a launch callable enqueues on the
// stream it is given (it may launch several kernels). It must not synchronise the stream
// and must be repeatable (same work every time): it is captured into graphs and replayed.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace gdn::profiler {

using LaunchFn = std::function<void(cudaStream_t)>;

// A CUDA error while measuring (the call failed to launch, faulted, or the runtime refused an
// operation). what() names the operation and the CUDA error; code() is the runtime's code.
// A sticky error (e.g. an illegal address) leaves the context unusable: the caller's worker
// process should report it and exit.
class MeasurementError : public std::runtime_error {
 public:
  MeasurementError(const std::string& operation, cudaError_t code);
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// True when this build has CUPTI (CMake option GDN_WITH_CUPTI).
bool built_with_cupti() noexcept;

}  // namespace gdn::profiler
