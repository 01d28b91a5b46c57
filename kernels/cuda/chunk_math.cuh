// Per-chunk building blocks shared by the staged kernels (and meant for the fused ones):
// the chunk-local gate cumsum and the 64 x 64 unit-lower-triangular inverse of gdn.md
// section 2, both on shared memory, fp32.
#pragma once

#include "block_tile.cuh"
#include "staged_common.cuh"

namespace gdn::staged {

// gamma[r] = sum_{s <= r} g[s] over the 64 rows of a chunk (inclusive scan).
// Executed by warp 0 only; each lane scans rows lane and lane + 32. in may alias out.
__device__ __forceinline__ void chunk_cumsum_warp0(const float* in, float* out) {
  if (threadIdx.x >= 32) return;
  const int lane = threadIdx.x;
  float lo = in[lane], hi = in[lane + 32];
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float l = __shfl_up_sync(0xffffffffu, lo, off);
    const float h = __shfl_up_sync(0xffffffffu, hi, off);
    if (lane >= off) {
      lo += l;
      hi += h;
    }
  }
  const float lo_total = __shfl_sync(0xffffffffu, lo, 31);
  out[lane] = lo;
  out[lane + 32] = hi + lo_total;
}

// Reverse inclusive scan: out[r] = sum_{s >= r} in[s] over 64 rows. Warp 0 only.
__device__ __forceinline__ void chunk_reverse_cumsum_warp0(const float* in, float* out) {
  if (threadIdx.x >= 32) return;
  const int lane = threadIdx.x;
  // Reverse the order so the forward scan becomes a suffix scan.
  float lo = in[63 - lane], hi = in[31 - lane];  // rows 63..32 and 31..0
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float l = __shfl_up_sync(0xffffffffu, lo, off);
    const float h = __shfl_up_sync(0xffffffffu, hi, off);
    if (lane >= off) {
      lo += l;
      hi += h;
    }
  }
  const float lo_total = __shfl_sync(0xffffffffu, lo, 31);
  out[63 - lane] = lo;
  out[31 - lane] = hi + lo_total;
}

// X = (I + N)^-1 for a strictly lower triangular 64 x 64 N (entries on and above the
// diagonal of N are ignored). X is unit lower triangular; the whole 64 x 64 of X is written.
// scratch is a 64 x 64 work matrix. Needs every thread of the block; ends synchronised.
//
// Method (gdn.md section 2): the four 16 x 16 diagonal blocks by forward substitution, then
// merges 16 -> 32 -> 64 with [[A, 0], [C, D]]^-1 = [[A^-1, 0], [-D^-1 C A^-1, D^-1]].
__device__ inline void invert_unit_lower_64(SmemMat n_mat, SmemMat x, SmemMat scratch) {
  block_for(kC * kC, [&](int e) { x(e / kC, e % kC) = 0.f; });
  __syncthreads();
  // Diagonal 16 x 16 blocks: thread t solves column t % 16 of block t / 16.
  if (threadIdx.x < kC) {
    const int base = (threadIdx.x / 16) * 16;
    const int c = threadIdx.x % 16;
    x(base + c, base + c) = 1.f;
    for (int r = c + 1; r < 16; ++r) {
      float s = 0.f;
      for (int k = c; k < r; ++k) s = fmaf(n_mat(base + r, base + k), x(base + k, base + c), s);
      x(base + r, base + c) = -s;
    }
  }
  __syncthreads();
  for (int size = 16; size < kC; size *= 2) {
    const int pairs = kC / (2 * size);
    const int per_pair = size * size;
    // scratch(off + size + i, off + j) = (C A^-1)(i, j); A^-1 is lower so k >= j.
    block_for(pairs * per_pair, [&](int e) {
      const int off = (e / per_pair) * 2 * size;
      const int i = (e % per_pair) / size, j = e % size;
      float s = 0.f;
      for (int k = j; k < size; ++k) s = fmaf(n_mat(off + size + i, off + k), x(off + k, off + j), s);
      scratch(off + size + i, off + j) = s;
    });
    __syncthreads();
    // X(off + size + i, off + j) = -(D^-1 scratch)(i, j); D^-1 is lower so k <= i.
    block_for(pairs * per_pair, [&](int e) {
      const int off = (e / per_pair) * 2 * size;
      const int i = (e % per_pair) / size, j = e % size;
      float s = 0.f;
      for (int k = 0; k <= i; ++k)
        s = fmaf(x(off + size + i, off + size + k), scratch(off + size + k, off + j), s);
      x(off + size + i, off + j) = -s;
    });
    __syncthreads();
  }
}

// Loads a chunk's rows of a [Ttot, H, 128] input (q, k, v or do) into a 64 x 128 fp32 tile;
// rows >= len are zero, so padded rows drop out of every product.
__device__ __forceinline__ void load_rows_128(SmemMat dst, const void* src, const ChunkInfo& ci,
                                              int heads, int head, bool bf16) {
  block_for(kC * 128, [&](int e) {
    const int r = e / 128, c = e % 128;
    float v = 0.f;
    if (r < ci.len) v = load_in(src, ((ci.tok_begin + r) * heads + head) * 128 + c, bf16);
    dst(r, c) = v;
  });
}

// Same for a column block [col0, col0 + width) of a [Ttot, H, 128] fp32 workspace tensor.
__device__ __forceinline__ void load_rows_f32(SmemMat dst, const float* src, const ChunkInfo& ci,
                                              int heads, int head, int col0, int width) {
  block_for(kC * width, [&](int e) {
    const int r = e / width, c = e % width;
    float v = 0.f;
    if (r < ci.len) v = src[((ci.tok_begin + r) * heads + head) * 128 + col0 + c];
    dst(r, c) = v;
  });
}

// Chunk gate vectors: gamma (padded rows repeat the last valid value, so they neither decay
// nor grow the state), e = exp(gamma), f = exp(gamma_last - gamma), beta (0 on padded rows).
struct GateVectors {
  float gam[kC], e[kC], f[kC], beta[kC];
  float e_last;
};

// Reads gamma from the cumsum workspace gcum [Ttot, Hv] and beta from the input.
__device__ inline void load_gates(GateVectors& gv, const float* gcum, const void* beta,
                                  const ChunkInfo& ci, int h, const Dims& d) {
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    const int rr = r < ci.len ? r : ci.len - 1;
    gv.gam[r] = gcum[(ci.tok_begin + rr) * d.Hv + h];
    gv.beta[r] = r < ci.len ? load_beta(beta, (ci.tok_begin + r) * d.Hv + h, d) : 0.f;
  }
  __syncthreads();
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    gv.e[r] = expf(gv.gam[r]);
    gv.f[r] = expf(gv.gam[kC - 1] - gv.gam[r]);
  }
  if (threadIdx.x == 0) gv.e_last = expf(gv.gam[kC - 1]);
}

// Gam(r, s) = exp(gamma_r - gamma_s) for r >= s, 0 above the diagonal. Never evaluates the
// exponential above the diagonal, where it could overflow to inf.
__device__ __forceinline__ float causal_gate(const GateVectors& gv, int r, int s) {
  return r >= s ? expf(gv.gam[r] - gv.gam[s]) : 0.f;
}

}  // namespace gdn::staged
