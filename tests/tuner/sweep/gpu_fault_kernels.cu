// Device faults for the GPU fault tests (test code, never part of gdnlab): a kernel that
// writes to an address no allocation holds (cudaErrorIllegalAddress, a sticky error), and one
// that never finishes (it waits for a flag nothing sets). Both wait for the device, so the
// fault is in place before the real backend's next call.
#include "gpu_fault_kernels.hpp"

#include <cuda_runtime_api.h>

namespace gdn::tuner::testing {

namespace {

__global__ void write_to_nowhere(int* nowhere) { *nowhere = 1; }

__global__ void wait_forever(const volatile int* flag) {
  while (*flag == 0) {
  }
}

}  // namespace

void illegal_address_fault() {
  // Near the top of the address space: mapped by no allocation on any device.
  write_to_nowhere<<<1, 1>>>(reinterpret_cast<int*>(~std::uintptr_t{0} - 4095));
  (void)cudaDeviceSynchronize();  // the fault has happened; every later call of the process sees it
}

void endless_kernel() {
  int* flag = nullptr;
  if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess || cudaMemset(flag, 0, sizeof(int)) != cudaSuccess) return;
  wait_forever<<<1, 1>>>(flag);  // the flag stays 0
  (void)cudaDeviceSynchronize();  // waits for ever, as a hung variant's caller does
}

}  // namespace gdn::tuner::testing
