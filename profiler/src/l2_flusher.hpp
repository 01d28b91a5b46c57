// Defeats the L2 between samples: a memset of a scratch buffer at least as large as the L2
// evicts the previous sample's lines, so every sample starts from DRAM like a cold call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gdn::profiler::detail {

class L2Flusher {
 public:
  explicit L2Flusher(std::size_t bytes);  // 0: flushing disabled (flush() does nothing)
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  void flush(cudaStream_t stream) const;  // throws MeasurementError
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
  void* buffer_ = nullptr;
};

}  // namespace gdn::profiler::detail
