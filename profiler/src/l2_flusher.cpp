#include "l2_flusher.hpp"

#include "call_runner.hpp"

namespace gdn::profiler::detail {

L2Flusher::L2Flusher(std::size_t bytes) : bytes_(bytes) {
  if (bytes_ != 0) check_cuda(cudaMalloc(&buffer_, bytes_), "cudaMalloc of the L2 flush buffer");
}

L2Flusher::~L2Flusher() {
  if (buffer_) cudaFree(buffer_);
}

void L2Flusher::flush(cudaStream_t stream) const {
  if (bytes_ == 0) return;
  check_cuda(cudaMemsetAsync(buffer_, 0, bytes_, stream), "cudaMemsetAsync (L2 flush)");
}

}  // namespace gdn::profiler::detail
