// The launch-time shared-memory opt-in every kernel with more than 48 KB of dynamic shared
// memory needs, in one place.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace gdn {

enum class Carveout { Default, MaxShared };

// Lets `kernel` launch with `bytes` of dynamic shared memory. MaxShared also asks for all of the
// unified L1/shared array as shared memory: the carveout the driver would pick for one CTA
// leaves no room for the next resident one (two chunk loops, four prepare CTAs per SM).
inline cudaError_t opt_into_shared_memory(const void* kernel, size_t bytes,
                                          Carveout carveout = Carveout::Default) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes));
  if (err == cudaSuccess && carveout == Carveout::MaxShared)
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
  return err;
}

}  // namespace gdn
