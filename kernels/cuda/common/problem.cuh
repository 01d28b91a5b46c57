// Shared pieces of the staged (multi-kernel) GDN family: the device-side problem description,
// the per-chunk index table, dtype-agnostic loads/stores and index helpers.
//
// Index conventions (token-major, FLA layout, all global offsets in int64 because
// tokens * heads * dim exceeds 2^31 for long packed batches):
//   q, k        [Ttot, Hk, 128]     v, o   [Ttot, Hv, 128]     g, beta   [Ttot, Hv]
//   state S     [N, Hv, K, V] (KV layout) or [N, Hv, V, K] (VK layout)
// Ttot = B * T; a "chunk" is up to 64 consecutive tokens of one sequence.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gdn/gdn.h"
#include "gdn/variant_config.hpp"

namespace gdn::staged {

inline constexpr int kC = kChunk;  // 64 tokens per chunk
inline constexpr int kK = 128;     // key head dim (the only one these kernels implement)
inline constexpr int kV = 128;     // value head dim

// One entry of the chunk table, built on the device from cu_seqlens (never copied to host).
// Entries past the real chunk count have len == 0; every per-chunk kernel exits on them.
struct ChunkInfo {
  int64_t tok_begin;  // global token index of row 0
  int32_t seq;        // sequence index n
  int32_t len;        // valid rows, 1..64 (0 = unused entry)
};

// Everything a kernel needs to know about the problem, passed by value.
struct Dims {
  int64_t Ttot;      // B * T
  int64_t num_seqs;  // N
  int64_t max_chunks;  // size of the chunk table (an upper bound on the real chunk count)
  int Hk, Hv, group;   // group = Hv / Hk value heads per k head
  float scale;
  bool in_bf16;        // q/k/v/o dtype: bf16 (true) or fp16
  bool beta_f32;       // beta/dbeta dtype: fp32 or the q dtype
  bool state_vk;       // state layout [V, K] instead of [K, V]
};

__device__ __forceinline__ float load_in(const void* p, int64_t i, bool bf16) {
  return bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i])
              : __half2float(static_cast<const __half*>(p)[i]);
}

__device__ __forceinline__ void store_in(void* p, int64_t i, float x, bool bf16) {
  if (bf16)
    static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(x);
  else
    static_cast<__half*>(p)[i] = __float2half(x);
}

__device__ __forceinline__ float load_beta(const void* p, int64_t i, const Dims& d) {
  return d.beta_f32 ? static_cast<const float*>(p)[i] : load_in(p, i, d.in_bf16);
}

__device__ __forceinline__ void store_beta(void* p, int64_t i, float x, const Dims& d) {
  if (d.beta_f32)
    static_cast<float*>(p)[i] = x;
  else
    store_in(p, i, x, d.in_bf16);
}

// Offset of state element (kk, vv) of (sequence n, v-head h) in the caller's layout.
__device__ __forceinline__ int64_t state_index(const Dims& d, int64_t n, int h, int kk, int vv) {
  const int64_t base = (n * d.Hv + h) * int64_t(kK * kV);
  return base + (d.state_vk ? int64_t(vv) * kK + kk : int64_t(kk) * kV + vv);
}

// Offset of a per-chunk workspace state [max_chunks, Hv, K, V] (always KV).
__device__ __forceinline__ int64_t chunk_state_index(int64_t chunk, int Hv, int h) {
  return (chunk * Hv + h) * int64_t(kK * kV);
}

// k-head serving value head h under GVA.
__device__ __forceinline__ int k_head(const Dims& d, int h) { return h / d.group; }

}  // namespace gdn::staged
