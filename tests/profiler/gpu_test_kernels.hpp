// Known kernels for the profiler's GPU tests: a streaming copy (memory-bound, its bytes are
// known, so its time has a hard lower bound) and an FMA loop (compute-bound).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace gdn::profiler::testing {

// Owns a device allocation; throws std::runtime_error with the CUDA error on failure.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// dst <- src, `bytes` (multiple of 16) read and written once; grid sized from the SM count.
void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);
// `iters` dependent FMAs per thread over `blocks` x 256 threads; writes one float to out.
void launch_fma(float* out, int iters, int blocks, cudaStream_t stream);
// A launch the runtime refuses (4096 threads per block): cudaErrorInvalidConfiguration.
void launch_invalid(cudaStream_t stream);

// Peak DRAM bandwidth from the device attributes (2 transfers per clock x bus width);
// 0 when the attributes are not reported.
double peak_dram_bytes_per_s(int device);

}  // namespace gdn::profiler::testing
