// Programmatic dependent launch (Hopper) for the forward's chain of small kernels: each kernel
// of the chain is launched with programmatic stream serialisation, so the GPU sets up its grid
// while the previous kernel drains instead of after it has completed (about a microsecond per
// kernel boundary, which is most of a small problem's gaps), and each such kernel starts with
// wait_for_prior_grids(): it blocks until every prior grid in the stream has completed and its
// memory is visible, so nothing is read early. In a kernel launched the ordinary way the wait
// returns at once.
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace gdn {

__device__ __forceinline__ void wait_for_prior_grids() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

// kernel<<<grid, block, smem, stream>>>(args...) with programmatic stream serialisation; the
// kernel must call wait_for_prior_grids() before it touches memory an earlier kernel writes.
template <class... Params, class... Args>
cudaError_t launch_after_prior(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                               cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace gdn
