// Runs one "call" of a launch callable: a replay of its CUDA graph when capture works (fewer
// launch gaps between the call's kernels, cheaper to issue), else the callable directly.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gdn/profiler/launch.hpp"

namespace gdn::profiler::detail {

class CallRunner {
 public:
  // use_graph: try to capture the call once; on failure fall back to direct launches and
  // keep the reason. Throws MeasurementError when the call itself fails to launch.
  CallRunner(const LaunchFn& launch, cudaStream_t stream, bool use_graph);
  ~CallRunner();
  CallRunner(const CallRunner&) = delete;
  CallRunner& operator=(const CallRunner&) = delete;

  void run() const;  // enqueues one call; throws MeasurementError on a launch error
  bool uses_graph() const { return exec_ != nullptr; }
  const std::string& graph_fallback_reason() const { return graph_fallback_reason_; }

 private:
  const LaunchFn& launch_;
  cudaStream_t stream_;
  cudaGraphExec_t exec_ = nullptr;
  std::string graph_fallback_reason_;
};

// A stream for the measurement: the caller's, or a private non-blocking one (owned).
class MeasurementStream {
 public:
  explicit MeasurementStream(cudaStream_t given);
  ~MeasurementStream();
  MeasurementStream(const MeasurementStream&) = delete;
  MeasurementStream& operator=(const MeasurementStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  bool owned_ = false;
};

// Throws MeasurementError(operation, e) unless e == cudaSuccess.
void check_cuda(cudaError_t e, const char* operation);
// Waits for the stream and surfaces an asynchronous fault of the call.
void synchronize(cudaStream_t stream, const char* operation);

}  // namespace gdn::profiler::detail
