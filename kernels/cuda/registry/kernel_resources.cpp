#include "registry/kernel_resources.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <sstream>

namespace gdn {

Variant::Resources query_kernel_resources(const void* kernel, size_t dynamic_smem_bytes,
                                          int threads) {
  Variant::Resources r;
  r.threads = threads;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return r;
  }
  cudaFuncAttributes attr{};
  if (!kernel || cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    cudaGetLastError();
    return r;
  }
  r.registers = attr.numRegs;
  r.shared_bytes = static_cast<int>(attr.sharedSizeBytes + dynamic_smem_bytes);
  r.local_bytes = static_cast<int>(attr.localSizeBytes);
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    const SmLimits sm{static_cast<int>(prop.sharedMemPerMultiprocessor),
                      static_cast<int>(prop.reservedSharedMemPerBlock), prop.regsPerMultiprocessor,
                      prop.maxThreadsPerMultiProcessor, prop.maxBlocksPerMultiProcessor};
    r.ctas_per_sm = resident_ctas_per_sm(sm, r.registers, r.shared_bytes, threads);
  } else {
    cudaGetLastError();
  }
  return r;
}

std::string describe_resources(const char* label, const Variant::Resources& r) {
  if (r.registers < 0) return "";
  std::ostringstream s;
  s << "; " << label << ' ' << r.registers << " regs, " << r.shared_bytes << " B smem, "
    << r.local_bytes << " B local, " << r.ctas_per_sm << " CTA/SM";
  return s.str();
}

}  // namespace gdn
