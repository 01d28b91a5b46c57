#include "call_runner.hpp"

namespace gdn::profiler::detail {

void check_cuda(cudaError_t e, const char* operation) {
  if (e != cudaSuccess) throw MeasurementError(operation, e);
}

void synchronize(cudaStream_t stream, const char* operation) {
  check_cuda(cudaStreamSynchronize(stream), operation);
  check_cuda(cudaGetLastError(), operation);
}

MeasurementStream::MeasurementStream(cudaStream_t given) : stream_(given) {
  if (stream_ == nullptr) {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    owned_ = true;
  }
}

MeasurementStream::~MeasurementStream() {
  if (owned_) cudaStreamDestroy(stream_);
}

CallRunner::CallRunner(const LaunchFn& launch, cudaStream_t stream, bool use_graph)
    : launch_(launch), stream_(stream) {
  if (!use_graph) return;
  // Thread-local capture: other threads of the process may keep using CUDA meanwhile.
  check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    launch_(stream_);
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  const cudaError_t captured = cudaStreamEndCapture(stream_, &graph);
  const cudaError_t launched = cudaGetLastError();
  if (captured != cudaSuccess || launched != cudaSuccess || graph == nullptr) {
    const cudaError_t e = captured != cudaSuccess ? captured : launched;
    graph_fallback_reason_ = std::string("graph capture failed (") + cudaGetErrorName(e) +
                             "): launched directly";
    if (graph) cudaGraphDestroy(graph);
    return;
  }
  const cudaError_t inst = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  if (inst != cudaSuccess) {
    cudaGetLastError();
    exec_ = nullptr;
    graph_fallback_reason_ = std::string("graph instantiation failed (") + cudaGetErrorName(inst) +
                             "): launched directly";
  }
}

CallRunner::~CallRunner() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

void CallRunner::run() const {
  if (exec_) {
    check_cuda(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch of the call");
  } else {
    launch_(stream_);
    check_cuda(cudaGetLastError(), "launch of the call");
  }
}

}  // namespace gdn::profiler::detail
