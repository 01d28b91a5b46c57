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

// ---- X = (I + N)^-1 of a strictly lower triangular 64 x 64 N, blocked over 16 x 16 blocks ----
//
// gdn.md section 2's gate-free inverse, written for throughput: the prepare kernel runs it once
// per (chunk, head), so it must be cheap in instructions, not just correct. Blocks i, j in 0..3:
//   X_ii = (I + N_ii)^-1                         forward substitution; warp i, lane c < 16 keeps
//                                                column c in registers (same order as the
//                                                scalar definition: bit-identical blocks)
//   X_ij = -X_ii (sum_{k=j}^{i-1} N_ik X_kj)     i > j, by block distance d = i - j = 1, 2, 3
//                                                (3, 2, 1 blocks, one warp each)
// Each 16 x 16 x 16 block product is register-tiled on one warp: lane owns row lane % 16 and
// columns 8 (lane / 16) .. + 7 (8 accumulators), A row read as 4 float4, B as 2 float4 per step.
// The caller sequences the phases (fwd_prepare.cu: the diagonal blocks go to registers first,
// so other warps can still read X's bytes meanwhile): diagonal_block_inverse on warps 0-3,
// store_diagonal_block, a block barrier, invert_off_diagonal_blocks. Only the blocks on and
// below the diagonal of X are written (and read): X is lower triangular.
// n.ld and x.ld multiples of 4 with 16-byte aligned rows; scratch: kScratchFloats floats,
// 16-byte aligned.
namespace inverse64 {

constexpr int kBlock = 16;
constexpr int kLdScratch = kBlock + 4;  // 16-byte rows for float4 access
// Floats of the scratch a block inverse needs: one 16 x 16 partial sum per working warp.
constexpr int kScratchFloats = 3 * kBlock * kLdScratch;

// acc += A (16 x 16 at a, row stride lda) * B (16 x 16 at b, row stride ldb) for this lane's
// row and 8 columns. lda, ldb multiples of 4 and both blocks 16-byte aligned.
__device__ __forceinline__ void block_product(float (&acc)[8], const float* a, int lda, const float* b,
                                              int ldb) {
  const int lane = threadIdx.x % 32, r = lane % kBlock, c0 = 8 * (lane / kBlock);
  float av[kBlock];
#pragma unroll
  for (int q = 0; q < kBlock / 4; ++q) {
    const float4 v = *reinterpret_cast<const float4*>(a + r * lda + 4 * q);
    av[4 * q] = v.x;
    av[4 * q + 1] = v.y;
    av[4 * q + 2] = v.z;
    av[4 * q + 3] = v.w;
  }
#pragma unroll
  for (int k = 0; k < kBlock; ++k) {
    const float4 b0 = *reinterpret_cast<const float4*>(b + k * ldb + c0);
    const float4 b1 = *reinterpret_cast<const float4*>(b + k * ldb + c0 + 4);
    acc[0] = fmaf(av[k], b0.x, acc[0]);
    acc[1] = fmaf(av[k], b0.y, acc[1]);
    acc[2] = fmaf(av[k], b0.z, acc[2]);
    acc[3] = fmaf(av[k], b0.w, acc[3]);
    acc[4] = fmaf(av[k], b1.x, acc[4]);
    acc[5] = fmaf(av[k], b1.y, acc[5]);
    acc[6] = fmaf(av[k], b1.z, acc[6]);
    acc[7] = fmaf(av[k], b1.w, acc[7]);
  }
}

// Writes scale * acc to this lane's row and 8 columns of the 16 x 16 block at dst.
__device__ __forceinline__ void store_block(float* dst, int ld, const float (&acc)[8], float scale) {
  const int lane = threadIdx.x % 32, r = lane % kBlock, c0 = 8 * (lane / kBlock);
  *reinterpret_cast<float4*>(dst + r * ld + c0) =
      make_float4(scale * acc[0], scale * acc[1], scale * acc[2], scale * acc[3]);
  *reinterpret_cast<float4*>(dst + r * ld + c0 + 4) =
      make_float4(scale * acc[4], scale * acc[5], scale * acc[6], scale * acc[7]);
}

// Column `lane` (lanes < 16) of X_bb = (I + N_bb)^-1 for diagonal block b, by forward
// substitution into registers (one warp; lanes >= 16 leave xc untouched). Terms with k < c
// multiply zeros of X, so the sum equals the scalar one from k = c.
__device__ __forceinline__ void diagonal_block_inverse(SmemMat n, int b, float (&xc)[kBlock]) {
  const int c = threadIdx.x % 32, base = kBlock * b;
  if (c >= kBlock) return;
#pragma unroll
  for (int r = 0; r < kBlock; ++r) {
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < r; ++k) s = fmaf(n(base + r, base + k), xc[k], s);
    xc[r] = r < c ? 0.f : (r == c ? 1.f : -s);
  }
}

__device__ __forceinline__ void store_diagonal_block(SmemMat x, int b, const float (&xc)[kBlock]) {
  const int c = threadIdx.x % 32, base = kBlock * b;
  if (c >= kBlock) return;
#pragma unroll
  for (int r = 0; r < kBlock; ++r) x(base + r, base + c) = xc[r];
}

// The blocks below the diagonal, by block distance d = 1, 2, 3 (warps 0 .. 3 - d, one block
// each): X_ij = -X_ii sum_{k=j}^{i-1} N_ik X_kj. Needs X's diagonal blocks written and every
// thread of a block of >= 8 warps; ends synchronised.
__device__ inline void invert_off_diagonal_blocks(SmemMat n, SmemMat x, float* scratch) {
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int d = 1; d < 4; ++d) {
    if (warp < 4 - d) {
      const int j = warp, i = warp + d;
      float* s = scratch + warp * kBlock * kLdScratch;
      float acc[8] = {};
      for (int k = j; k < i; ++k)
        block_product(acc, &n(kBlock * i, kBlock * k), n.ld, &x(kBlock * k, kBlock * j), x.ld);
      store_block(s, kLdScratch, acc, 1.f);
      __syncwarp();
      float out[8] = {};
      block_product(out, &x(kBlock * i, kBlock * i), x.ld, s, kLdScratch);
      store_block(&x(kBlock * i, kBlock * j), x.ld, out, -1.f);
    }
    __syncthreads();
  }
}

}  // namespace inverse64

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
