// Named CTA barriers (PTX bar.sync / bar.arrive) for warp-specialised kernels: a producer
// group arrives (does not wait), a consumer group syncs (waits for the producers' arrivals);
// `threads` counts both groups. Arrive releases, sync acquires: shared-memory writes before
// the arrive are visible after the sync. Id 0 is __syncthreads(); ids 1..15 are free.
#pragma once

namespace gdn::fused {

__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace gdn::fused
