// Per-chunk building blocks shared by the staged kernels (and meant for the fused ones):
// the chunk-local gate cumsum and the 64 x 64 unit-lower-triangular inverse of docs/spec.md
// section 2, both on shared memory, fp32.
#pragma once

#include "common/block_tile.cuh"
#include "common/problem.cuh"

namespace gdn::staged {

// gamma[r] = sum_{s <= r} g[s] over the 64 rows of a chunk (inclusive scan), by the calling
// warp (any warp, all its lanes; lane = threadIdx.x % 32, passed so that warp 0's callers keep
// threadIdx.x itself); each lane scans rows lane and lane + 32. in may alias out.
__device__ __forceinline__ void chunk_cumsum_warp(const float* in, float* out, int lane) {
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

// The same, executed by warp 0 only (other threads return).
__device__ __forceinline__ void chunk_cumsum_warp0(const float* in, float* out) {
  if (threadIdx.x >= 32) return;
  chunk_cumsum_warp(in, out, static_cast<int>(threadIdx.x));
}

// Reverse inclusive scan: out[r] = sum_{s >= r} in[s] over 64 rows, by the calling warp (as
// chunk_cumsum_warp).
__device__ __forceinline__ void chunk_reverse_cumsum_warp(const float* in, float* out, int lane) {
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

// The same, executed by warp 0 only (other threads return).
__device__ __forceinline__ void chunk_reverse_cumsum_warp0(const float* in, float* out) {
  if (threadIdx.x >= 32) return;
  chunk_reverse_cumsum_warp(in, out, static_cast<int>(threadIdx.x));
}

// ---- X = (I + N)^-1 of a strictly lower triangular 64 x 64 N, blocked over 16 x 16 blocks ----
//
// docs/spec.md section 2's gate-free inverse, written for throughput: the prepare kernel runs it once
// per (chunk, head), so it must be cheap in instructions, not just correct. Blocks i, j in 0..3.
//   X_ii = (I + N_ii)^-1       forward substitution; warp i, lane c < 16 keeps column c in
//                              registers (same order as the scalar definition: bit-identical)
// The blocks below the diagonal merge 16 -> 32 -> 64 (the 2 x 2 block inverse twice):
//   X_10 = -X_11 N_10 X_00,  X_32 = -X_33 N_32 X_22                  (X_AA, X_BB: 32 x 32)
//   L = X[32:64, 0:32] = -X_BB (N_BA X_AA) = -X_BB M                  (N_BA = N[32:64, 0:32])
// Every product runs on the tensor cores (mma.sync m16n8k8 tf32) with fp32-accurate split
// operands ("3xTF32": x = hi + lo, both tf32; a b ~ a_hi b_hi + a_hi b_lo + a_lo b_hi, the
// dropped a_lo b_lo and the rounding of lo are ~2^-21 relative, fp32 FFMA order of accuracy).
// Tiles are 16 x 8 (one warp each); A fragments come from fp32 shared memory by ldmatrix (an
// 8 x 4 fp32 block is an 8 x 8 b16 matrix, so lane (g, t) gets A(g, t) as the tf32 layout
// wants), B fragments by two scalar loads per k-step.
// The caller sequences the phases (prepare/prepare_kernel.cu: the diagonal blocks go to
// registers first, so other warps can still read X's bytes meanwhile): diagonal_block_inverse
// on warps 0-3, store_diagonal_block, a block barrier, invert_off_diagonal_blocks. Only the
// blocks on and below the diagonal of X are written (and read): X is lower triangular.
// n.ld and x.ld multiples of 4 with 16-byte aligned rows; the scratch's placement is the
// caller's (see invert_off_diagonal_blocks).
namespace inverse64 {

constexpr int kBlock = 16;

// x = hi + lo exactly: hi is x with its low 13 bits cleared (a tf32 value, truncated), lo =
// x - hi (exact in fp32, |lo| < 2^-10 |x|, same sign). The tensor cores read lo's top 19 bits
// only (they ignore the low 13), so lo loses under 2^-10 of itself: x is carried to about
// 2^-20 relative, and the 3xTF32 product (lo hi + hi lo + hi hi, lo lo dropped) to the same
// order. One integer and one float operation per value; rounding both parts to nearest
// (2^-21) took four, and the splits were most of the off-diagonal inverse's instructions.
__device__ __forceinline__ void split_tf32(float x, uint32_t& hi, uint32_t& lo) {
  hi = __float_as_uint(x) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi));
}

// c += a b, m16n8k8, tf32 inputs, fp32 accumulators. Fragments (g = lane / 4, t = lane % 4):
//   A 16 x 8: a0 (g, t) a1 (g + 8, t) a2 (g, t + 4) a3 (g + 8, t + 4)
//   B 8 x 8:  b0 (k t, n g) b1 (k t + 4, n g)
//   C 16 x 8: c0 c1 (g, 2t .. 2t + 1) c2 c3 (g + 8, 2t .. 2t + 1)
__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The A fragment of the 16 x 8 fp32 block at a (row stride lda floats, rows 16-byte aligned):
// ldmatrix.x4, lanes 8m .. 8m + 7 address rows l % 8 + 8 (m % 2) at column 4 (m / 2) of matrix
// m, so r[m] is a0 .. a3 above.
__device__ __forceinline__ void load_a_tf32(uint32_t (&r)[4], const float* a, int lda) {
  const int lane = threadIdx.x % 32, m = lane / 8;
  const float* p = a + (lane % 8 + 8 * (m % 2)) * lda + 4 * (m / 2);
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// The same fragment of A = B^T for the 8 x 16 fp32 block at a (row stride lda floats): element
// (r, c) of A is a[c * lda + r]. Four scalar loads: ldmatrix transposes 16-bit elements, not
// 32-bit ones.
__device__ __forceinline__ void load_a_tf32_transposed(uint32_t (&r)[4], const float* a, int lda) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  r[0] = __float_as_uint(a[t * lda + g]);
  r[1] = __float_as_uint(a[t * lda + g + 8]);
  r[2] = __float_as_uint(a[(t + 4) * lda + g]);
  r[3] = __float_as_uint(a[(t + 4) * lda + g + 8]);
}

// acc += A B for one k-step with A already split (ahi, alo) and B's two values of this lane
// (rows t and t + 4 of its column g): B split, then the three products, small terms first.
__device__ __forceinline__ void mma_3xtf32_b(float (&acc)[4], const uint32_t (&ahi)[4],
                                             const uint32_t (&alo)[4], float b0, float b1) {
  uint32_t bhi[2], blo[2];
  split_tf32(b0, bhi[0], blo[0]);
  split_tf32(b1, bhi[1], blo[1]);
  mma_tf32(acc, alo, bhi[0], bhi[1]);
  mma_tf32(acc, ahi, blo[0], blo[1]);
  mma_tf32(acc, ahi, bhi[0], bhi[1]);
}

// acc += A B over one k-step of 8, fp32-accurate: A the 16 x 8 block at a (stride lda), B the
// 8 x 8 block at b (rows k, stride ldb).
__device__ __forceinline__ void mma_3xtf32_step(float (&acc)[4], const float* a, int lda,
                                                const float* b, int ldb) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  uint32_t araw[4], ahi[4], alo[4];
  load_a_tf32(araw, a, lda);
#pragma unroll
  for (int e = 0; e < 4; ++e) split_tf32(__uint_as_float(araw[e]), ahi[e], alo[e]);
  mma_3xtf32_b(acc, ahi, alo, b[t * ldb + g], b[(t + 4) * ldb + g]);
}

// acc += A B for the k-steps s0 <= s < s1 (columns of A / rows of B 8 s .. 8 s + 7), A the
// 16-row block at a, B the 8-column block at b.
__device__ __forceinline__ void mma_3xtf32(float (&acc)[4], const float* a, int lda, const float* b,
                                           int ldb, int s0, int s1) {
  for (int s = s0; s < s1; ++s) mma_3xtf32_step(acc, a + 8 * s, lda, b + 8 * s * ldb, ldb);
}

// acc[nt] += A B_nt over one k-step of 8 for NT n-tiles side by side (A the 16 x 8 block at
// a, B_nt the 8 x 8 block at b + 8 nt, rows k): A is loaded and split once for all of them.
// Per element the same sums in the same order as mma_3xtf32_step.
// kTransposedA: a holds A's transpose (load_a_tf32_transposed).
template <int NT, bool kTransposedA = false>
__device__ __forceinline__ void mma_3xtf32_step_tiles(float (&acc)[NT][4], const float* a, int lda,
                                                      const float* b, int ldb) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  uint32_t araw[4], ahi[4], alo[4];
  if constexpr (kTransposedA)
    load_a_tf32_transposed(araw, a, lda);
  else
    load_a_tf32(araw, a, lda);
#pragma unroll
  for (int e = 0; e < 4; ++e) split_tf32(__uint_as_float(araw[e]), ahi[e], alo[e]);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
    mma_3xtf32_b(acc[nt], ahi, alo, b[t * ldb + 8 * nt + g], b[(t + 4) * ldb + 8 * nt + g]);
}

// Writes scale * acc (a 16 x 8 C fragment) to the block at dst (row stride ld, even).
__device__ __forceinline__ void store_c(float* dst, int ld, const float (&acc)[4], float scale) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  *reinterpret_cast<float2*>(dst + g * ld + 2 * t) = make_float2(scale * acc[0], scale * acc[1]);
  *reinterpret_cast<float2*>(dst + (g + 8) * ld + 2 * t) =
      make_float2(scale * acc[2], scale * acc[3]);
}

// Writes diag(row_scale) acc (a 16 x 8 C fragment; row_scale[r] scales row r of the block)
// to the block at dst (row stride ld, even).
__device__ __forceinline__ void store_c_rows(float* dst, int ld, const float (&acc)[4],
                                             const float* row_scale) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const float s0 = row_scale[g], s8 = row_scale[g + 8];
  *reinterpret_cast<float2*>(dst + g * ld + 2 * t) = make_float2(s0 * acc[0], s0 * acc[1]);
  *reinterpret_cast<float2*>(dst + (g + 8) * ld + 2 * t) = make_float2(s8 * acc[2], s8 * acc[3]);
}

// The inverse below is of I + N with N = StrictLower(diag(beta) R), R = K K^T: it reads R's
// strictly lower part (rkk, never above the diagonal) and applies beta to the rows of the
// products, so N is never formed: every block of N it reads lies wholly below the diagonal.

// Two diagonal blocks per warp: lanes 0-15 block 2 pair, lanes 16-31 block 2 pair + 1 (the
// two half-warps' rows lie 16 columns, so 16 banks, apart: no conflicts).
__device__ __forceinline__ int diagonal_block_base(int pair) {
  return kBlock * (2 * pair + (threadIdx.x % 32) / kBlock);
}

// Column lane % 16 of X_bb = (I + N_bb)^-1 for the lane's diagonal block b (see
// diagonal_block_base), by forward substitution into registers:
//   x_r = -beta_r sum_{k < r} R(r, k) x_k.
// Row r of R_bb is read four floats at a time (36 vector loads per lane instead of 120 scalar
// ones), the sum runs over k = 0 .. r - 1 in order. Terms with k < c multiply zeros of X, so
// the sum equals the scalar one from k = c.
__device__ __forceinline__ void diagonal_block_inverse(SmemMat rkk, const float* beta, int pair,
                                                       float (&xc)[kBlock]) {
  const int c = threadIdx.x % kBlock, base = diagonal_block_base(pair);
#pragma unroll
  for (int r = 0; r < kBlock; ++r) {
    float s = 0.f;
#pragma unroll
    for (int k4 = 0; k4 < r; k4 += 4) {
      const float4 v = *reinterpret_cast<const float4*>(&rkk(base + r, base + k4));
      const float nv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (k4 + i < r) s = fmaf(nv[i], xc[k4 + i], s);
    }
    xc[r] = r < c ? 0.f : (r == c ? 1.f : -beta[base + r] * s);
  }
}

// Writes the lane's whole diagonal block column (its zeros above the diagonal too: the
// products below read full 16 x 16 diagonal blocks).
__device__ __forceinline__ void store_diagonal_block(SmemMat x, int pair, const float (&xc)[kBlock]) {
  const int c = threadIdx.x % kBlock, base = diagonal_block_base(pair);
#pragma unroll
  for (int r = 0; r < kBlock; ++r) x(base + r, base + c) = xc[r];
}

// The blocks below the diagonal (see above), in three barrier-separated phases of 16 x 8
// tiles, one tile per warp. k-steps (of 8) that only meet zeros of a triangular X are skipped:
// X(k, c) = 0 for k < c, so a product by X's columns 8 nt .. 8 nt + 7 starts at k-step nt.
//   1. warps 0-3: X_10, X_32 (block 2b + 1, 2b for b = warp / 2; columns 8 (warp % 2) ..):
//        S = N_ij X_jj = diag(beta_i) (R_ij X_jj) (16 x 8, depth 16, in the warp's scratch),
//        X_ij = -X_ii S (depth 16)
//      warps 4-7: M[:, 16:32] = N_BA[:, 16:32] X_11 = diag(beta_B) (R_BA[:, 16:32] X_11) (row
//        block (warp - 4) / 2, n-tile 2 + warp % 2 of M)
//   2. warps 0-3: M[:, 0:16] = N_BA X_AA[:, 0:16] (row block warp / 2, n-tile warp % 2; X_10
//      from phase 1; beta applied the same way)
//   3. all 8: L = -X_BB M (row block warp / 4 of L, n-tile warp % 4; X_BB's row block rb
//      has columns < 16 (rb + 1), k-steps 0 .. 2 rb + 1)
// Needs X's diagonal blocks written and every thread of a block of exactly 8 warps; ends
// synchronised. Scratch placement: M (32 x 32) at m with row stride ldm; warp w < 4's S
// (16 x 8) at s0 + w s_step with row stride lds (strides multiples of 2, 8-byte aligned rows);
// neither may overlap what the phases read or write of rkk and x.
__device__ inline void invert_off_diagonal_blocks(SmemMat rkk, const float* beta, SmemMat x,
                                                  float* m, int ldm, float* s0, int s_step,
                                                  int lds) {
  const int warp = threadIdx.x / 32;
  float acc[4] = {};
  if (warp < 4) {
    const int i = 2 * (warp / 2) + 1, j = i - 1, c0 = 8 * (warp % 2);
    float* s = s0 + warp * s_step;  // 16 x 8, stride lds
    mma_3xtf32(acc, &rkk(kBlock * i, kBlock * j), rkk.ld, &x(kBlock * j, kBlock * j + c0), x.ld,
               warp % 2, 2);
    store_c_rows(s, lds, acc, beta + kBlock * i);
    __syncwarp();
    float out[4] = {};
    mma_3xtf32(out, &x(kBlock * i, kBlock * i), x.ld, s, lds, 0, 2);
    store_c(&x(kBlock * i, kBlock * j + c0), x.ld, out, -1.f);
  } else {
    const int rb = (warp - 4) / 2, nt = 2 + warp % 2;
    mma_3xtf32(acc, &rkk(32 + kBlock * rb, 0), rkk.ld, &x(0, 8 * nt), x.ld, nt, 4);
    store_c_rows(m + kBlock * rb * ldm + 8 * nt, ldm, acc, beta + 32 + kBlock * rb);
  }
  __syncthreads();
  if (warp < 4) {
    const int rb = warp / 2, nt = warp % 2;
    float mm[4] = {};
    mma_3xtf32(mm, &rkk(32 + kBlock * rb, 0), rkk.ld, &x(0, 8 * nt), x.ld, nt, 4);
    store_c_rows(m + kBlock * rb * ldm + 8 * nt, ldm, mm, beta + 32 + kBlock * rb);
  }
  __syncthreads();
  {
    const int rb = warp / 4, nt = warp % 4;
    float l[4] = {};
    mma_3xtf32(l, &x(32 + kBlock * rb, 32), x.ld, m + 8 * nt, ldm, 0, 2 * rb + 2);
    store_c(&x(32 + kBlock * rb, 8 * nt), x.ld, l, -1.f);
  }
  __syncthreads();
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
