// Warpgroup-product helpers of the chunked backward's kernels (local_grads.cu, fused_bwd.cu):
// wgmma products with both operands in 128-byte swizzled shared tiles (fused::WgTile16), and
// the epilogue walks of their accumulators. An accumulator of NT n8 blocks holds, for warp w of
// the warpgroup, rows 16 w + g and 16 w + g + 8 (g = lane / 4) of the 64-row result, columns
// 8 nj + 2 t and + 1 (t = lane % 4): the m64nNk16 layout.
#pragma once

#include "arch/mma.cuh"
#include "arch/wgmma.cuh"
#include "bwd_params.cuh"  // kC
#include "common/chunk_math.cuh"

namespace gdn::bwd {

using Tile = fused::WgTile16;

// Sum over the four lanes (t = lane % 4) that hold one fragment row.
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  return x;
}

// acc (this warp's 16 rows of the warpgroup's 64 x 8 NT result, columns n0..) += A B, A (64 x
// kDepth) from tile `a` (kTransA: A = X^T, the tile storing X, rows = depth, A's rows from m0;
// else rows = the 64 product rows from m0) and B from tile `b` (kBnk: the tile stores B^T, rows
// = n from n0; else B, rows = depth, n0 a multiple of 64). wg_issue queues one product as a
// commit group; wg_wait<kPending> waits until at most kPending groups are in flight and fences
// acc against early reads. kSet: acc = A B, its first k-step with scale-d off, so acc needs no
// zero fill (which the compiler may place between the fence and the product, and ptxas then
// serialises with an injected warpgroup.arrive).
template <int NT, int kDepth, class Elem, bool kTransA, bool kBnk, bool kSet = false>
__device__ __forceinline__ void wg_issue(float (&acc)[NT][4], const Tile& a, const Tile& b, int n0,
                                         int m0 = 0) {
  fused::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kDepth / 16; ++kk) {
    const uint64_t da = kTransA ? a.desc_kn(16 * kk, m0) : a.desc_nk(m0, 16 * kk);
    const uint64_t db = kBnk ? b.desc_nk(n0, 16 * kk) : b.desc_kn(16 * kk, n0);
    fused::wgmma_ss<NT, Elem, kTransA, !kBnk>(acc, da, db, !(kSet && kk == 0));
  }
  fused::wgmma_commit();
}

template <int kPending, int NT>
__device__ __forceinline__ void wg_wait(float (&acc)[NT][4]) {
  fused::wgmma_wait<kPending>();
  fused::fence_accumulators(acc);
}

// A 64 x 128 result held as two n64 accumulators (columns 0 and 64): waited for, the second
// half fenced against early reads too.
__device__ __forceinline__ void wg_wait_halves(float (&acc)[2][8][4]) {
  wg_wait<0>(acc[0]);
  fused::fence_accumulators(acc[1]);
}

// The same result's product from shared tiles: both halves queued (B from columns or rows 0
// and 64), then waited for.
template <int kDepth, class Elem, bool kTransA, bool kBnk, bool kSet = false>
__device__ __forceinline__ void wg_product_halves(float (&acc)[2][8][4], const Tile& a, const Tile& b) {
#pragma unroll
  for (int nh = 0; nh < 2; ++nh) wg_issue<8, kDepth, Elem, kTransA, kBnk, kSet>(acc[nh], a, b, 64 * nh);
  wg_wait_halves(acc);
}

// Scales this thread's rows of that result (row rm + g by a, rm + g + 8 by b), fenced so that
// the scaling stays above the next products on it.
__device__ __forceinline__ void scale_rows_halves(float (&acc)[2][8][4], float a, float b) {
#pragma unroll
  for (int nh = 0; nh < 2; ++nh)
#pragma unroll
    for (int nj = 0; nj < 8; ++nj) {
      acc[nh][nj][0] *= a, acc[nh][nj][1] *= a, acc[nh][nj][2] *= b, acc[nh][nj][3] *= b;
    }
  fused::fence_accumulators(acc[0]);
  fused::fence_accumulators(acc[1]);
}

// Calls f(element, row, column) for a 16 x 8 NT accumulator at (r0, c0).
template <int NT, class F>
__device__ __forceinline__ void each(float (&acc)[NT][4], int r0, int c0, F f) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int nj = 0; nj < NT; ++nj)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(acc[nj][e], r0 + g + (e >= 2 ? 8 : 0), c0 + 8 * nj + 2 * t + (e & 1));
}

// This thread's parts of the row sums of X o acc over its columns (rows r0 + g and + 8).
template <int NT, class Elem>
__device__ __forceinline__ float2 row_dot_parts(const float (&acc)[NT][4], const Tile& x, int r0,
                                                int c0) {
  using Ops = fused::ElemOps<Elem>;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float sa = 0.f, sb = 0.f;
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    const int col = c0 + 8 * nj + 2 * t;
    const float2 xa = Ops::unpack(x.pair(r0 + g, col)), xb = Ops::unpack(x.pair(r0 + g + 8, col));
    sa = fmaf(xa.x, acc[nj][0], fmaf(xa.y, acc[nj][1], sa));
    sb = fmaf(xb.x, acc[nj][2], fmaf(xb.y, acc[nj][3], sb));
  }
  return make_float2(sa, sb);
}

// Row sums of X o acc over this warp's columns, reduced over the quad and stored by lane t = 0
// into out[row] (rows r0 + g and r0 + g + 8).
template <int NT, class Elem>
__device__ __forceinline__ void row_dot(const float (&acc)[NT][4], const Tile& x, int r0, int c0,
                                        float* out) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const float2 s = row_dot_parts<NT, Elem>(acc, x, r0, c0);
  const float sa = quad_sum(s.x), sb = quad_sum(s.y);
  if (t == 0) {
    out[r0 + g] = sa;
    out[r0 + g + 8] = sb;
  }
}

template <int NT, class Elem>
__device__ __forceinline__ void store16(const Tile& dst, const float (&acc)[NT][4], int r0, int c0) {
  using Ops = fused::ElemOps<Elem>;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    const int col = c0 + 8 * nj + 2 * t;
    dst.pair(r0 + g, col) = Ops::pack(acc[nj][0], acc[nj][1]);
    dst.pair(r0 + g + 8, col) = Ops::pack(acc[nj][2], acc[nj][3]);
  }
}

// Per-thread partial sums of a 64 x 8 NT matrix held as this warp's fragment (rows rm + g and
// rm + g + 8, columns c0 + 8 nj + 2 t + {0, 1}): its row sums over the thread's 2 NT columns,
// its column sums over the thread's 2 rows.
template <int NT>
struct FragSums {
  float row[2] = {0.f, 0.f};
  float col[NT][2] = {};
  __device__ __forceinline__ void add(int nj, int e, float x) {
    row[e >> 1] += x;
    col[nj][e & 1] += x;
  }
};

// The row sums over the warp's columns (a quad's four lanes) -> out[row] by lane t = 0.
__device__ __forceinline__ void store_row_sums(const float (&row)[2], float* out, int rm) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const float a = quad_sum(row[0]), b = quad_sum(row[1]);
  if (t == 0) {
    out[rm + g] = a;
    out[rm + g + 8] = b;
  }
}

// The column sums over the warp's 16 rows (the eight row groups g, butterfly: every lane ends
// with the same bits) -> out[column] by the lanes of g = 0.
template <int NT>
__device__ __forceinline__ void store_column_sums(const float (&col)[NT][2], float* out, int c0) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int nj = 0; nj < NT; ++nj)
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      float x = col[nj][b];
      x += __shfl_xor_sync(0xffffffffu, x, 4);
      x += __shfl_xor_sync(0xffffffffu, x, 8);
      x += __shfl_xor_sync(0xffffffffu, x, 16);
      if (g == 0) out[c0 + 8 * nj + 2 * t + b] = x;
    }
}

// The A fragments (m16k16, one per k16 step) of this warp's 16 rows of a 64 x 64 accumulator:
// an m16n8 C fragment pair packed to 16 bits is an m16k16 A fragment (the product's depth is
// the accumulator's columns).
template <class Elem>
__device__ __forceinline__ void pack_a_fragments(uint32_t (&a)[4][4], const float (&acc)[8][4]) {
  using Ops = fused::ElemOps<Elem>;
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float(&x)[4] = acc[2 * kk + half];
      a[kk][2 * half] = Ops::pack(x[0], x[1]);
      a[kk][2 * half + 1] = Ops::pack(x[2], x[3]);
    }
}

// Zeroes rows [len, 64) of `tiles` consecutive 64-row x 128-byte tiles from `first` (8 KB
// apart: the 64-column halves of k and q and the dO block; whole rows, since the swizzle keeps
// a row's bytes within the row): a chunk that ends its sequence early, whose rows past its end
// hold the next sequence's tokens. The tile is found by arithmetic, not from an array of
// pointers, which would live in local memory. tid: the thread among its warpgroup's 128.
__device__ __forceinline__ void zero_rows_past_end(uint16_t* first, int tiles, int len, int tid) {
  const int rows = kC - len;
  for (int u = tid; u < tiles * rows * 8; u += 128) {
    const int tile = u / (rows * 8), r = len + (u / 8) % rows, c = u % 8;
    *reinterpret_cast<uint4*>(first + tile * (kC * 64) + r * 64 + 8 * c) = make_uint4(0, 0, 0, 0);
  }
}

// Stores a 64 x 128 result (this thread's rows rm + g and + 8 below len) in the input dtype to
// a token-major [Ttot, heads, 128] tensor at head `head`.
template <class Elem>
__device__ __forceinline__ void store_rows(void* dst, int heads, int head, const ChunkInfo& ci,
                                           const float (&acc)[2][8][4], int rm) {
  using Ops = fused::ElemOps<Elem>;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = rm + g + 8 * half;
    if (r >= ci.len) continue;
    const int64_t row = ((ci.tok_begin + r) * heads + head) * 128;
#pragma unroll
    for (int nh = 0; nh < 2; ++nh)
#pragma unroll
      for (int nj = 0; nj < 8; ++nj) {
        const int col = 64 * nh + 8 * nj + 2 * t;
        const float x0 = acc[nh][nj][2 * half], x1 = acc[nh][nj][2 * half + 1];
        *reinterpret_cast<uint32_t*>(static_cast<Elem*>(dst) + row + col) = Ops::pack(x0, x1);
      }
  }
}

// dq or dk rows of a (chunk, v-head h) (this thread's rows rm + g and + 8 below the chunk's
// length): the output itself ([Ttot, Hk, K]) when each q/k head serves one value head, else the
// head's part ([Ttot, Hv, K]) for the group sum, both in the input dtype: 16-bit parts halve
// their traffic and stay within the bars (the rounding model's head_parts16,
// docs/decisions/backward-fused-kernel.md).
template <class Elem>
__device__ __forceinline__ void store_head_part(void* out, void* part, const Dims& d, int h,
                                                const ChunkInfo& ci, const float (&acc)[2][8][4],
                                                int rm) {
  if (d.group == 1)
    store_rows<Elem>(out, d.Hk, h, ci, acc, rm);  // q/k head h
  else
    store_rows<Elem>(part, d.Hv, h, ci, acc, rm);
}

// A chunk's dg and dbeta from its per-row sums, by one warp (two rows a lane): dg = the reverse
// chunk-local cumsum of dgam plus the cumsum of fsum (the f terms' exclusive prefix: the caller
// stores row r's term at r + 1), each row below the chunk's length into [Ttot, Hv] at v-head h.
// dgam and fsum are scanned in place.
__device__ __forceinline__ void store_dg_dbeta(float* dgam, float* fsum, const float* dbeta,
                                               const ChunkInfo& ci, int h, const Dims& d, float* dg,
                                               void* dbeta_out, int lane) {
  __syncwarp();
  staged::chunk_reverse_cumsum_warp(dgam, dgam, lane);
  staged::chunk_cumsum_warp(fsum, fsum, lane);
  __syncwarp();
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = lane + 32 * half;
    if (r < ci.len) {
      const int64_t gi = (ci.tok_begin + r) * d.Hv + h;
      dg[gi] = dgam[r] + fsum[r];
      staged::store_beta(dbeta_out, gi, dbeta[r], d);
    }
  }
}

}  // namespace gdn::bwd
