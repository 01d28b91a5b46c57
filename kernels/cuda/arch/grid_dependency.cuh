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

// Lets the programmatic dependent of this grid launch once every CTA of this grid has called
// it (or exited), instead of when this grid completes. Only for a producer whose dependent
// does not call wait_for_prior_grids() before reading what this grid writes, but waits on
// per-item flags this grid publishes (wait_until_at_least): every CTA of this grid is then
// resident or done when the dependent starts, so the dependent's waits always end.
__device__ __forceinline__ void allow_dependents_to_launch() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// Spins until *flag >= target (an acquire load at GPU scope, so that the writes published
// before the flag's release by another CTA are visible to this thread), then makes them
// visible to this thread's bulk and tensor copies too (the async proxy reads global memory
// without the generic proxy's ordering).
__device__ __forceinline__ void wait_until_at_least(const int* flag, int target) {
  // One asm block, so the loop costs the producer thread (24 registers) no more than its two
  // operands.
  asm volatile(
      "{\n"
      ".reg .pred ready;\n"
      ".reg .b32 value;\n"
      "WAIT_FLAG:\n"
      "ld.acquire.gpu.global.b32 value, [%0];\n"
      "setp.ge.s32 ready, value, %1;\n"
      "@ready bra.uni FLAG_DONE;\n"
      "nanosleep.u32 32;\n"
      "bra.uni WAIT_FLAG;\n"
      "FLAG_DONE:\n"
      "fence.proxy.async.global;\n"
      "}\n" ::"l"(flag),
      "r"(target)
      : "memory");
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
