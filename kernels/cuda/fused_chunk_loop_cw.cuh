// The column-warp fused chunk loop (WarpRoles::ColumnWarps; included by one .cu per V-block
// width). One CTA of BV / 16 warps (BV / 64 warpgroups) per (segment, v-head, V-block), Output
// mode only (CP pass 1 keeps the cooperative loop). Every warp owns 16 value columns, and a
// warpgroup's 64 columns are the M = 64 rows of its wgmma products, on the state held
// transposed:
//   S^T (64 value columns x 128 state rows, fp32, 16 rows per warp) is the register A operand
//   of U^T | O^T = S16^T [K; Q]^T (one m64n128 product per depth step) straight from the
//   accumulator registers (an m16n8 C fragment pair is an m16k16 A fragment), and so are W'^T
//   for Vd^T = W'^T (T diag(beta))^T, Vd^T for O^T += Vd^T P^T and V'^T for S^T += V'^T K.
//   The B operands (k, q, T diag(beta), P) are read by the tensor cores from the ring through
//   128-byte-swizzle descriptors, once per warpgroup. No product of a chunk crosses
//   warpgroups, so they meet only at the ring's one barrier per chunk; the 16-bit copies (S16,
//   W', Vd, V') never leave the registers.
// The products that do not depend on the state come from the prepare kernel, once per
// (chunk, head) for every V-block: T diag(beta), P = Gam o causal o Q K^T, e and f.
// Same roundings as the other layouts (S16, W', Vd, V', P in the input dtype; fp32
// accumulation), in a different summation order inside each product: results agree within the
// forward tolerance, not bit for bit.
//
// Fragments of warp w (g = lane / 4, t = lane % 4; value columns vw = 16 w .. vw + 15 of the
// V-block; chunk rows and state rows are the C fragments' columns 8 nj + 2t, + 1):
//   S[16][4]  S^T      rows vw + g, vw + g + 8  x state rows 8 nj + 2t, +1     (64 regs)
//   U, O[8][4]         rows vw + g, vw + g + 8  x chunk rows 8 nj + 2t, +1     (32 each)
#pragma once

#include "fused_chunk_steps.cuh"
#include "fused_wgmma.cuh"
#include "launch_smem.cuh"

namespace gdn::fused {

// cp.async of the 64 rows of a [rows, kCols] 16-bit tile (row r at src + r src_stride) into a
// swizzled tile by kThreads threads; rows >= valid_rows are zero-filled. Each thread keeps one
// column group and steps rows by a multiple of 8, so its swizzle mask and both addresses are a
// base plus a compile-time offset per copy.
template <int kCols, int kThreads>
__device__ __forceinline__ void cp_async_tile(const SwizzledTile16<kCols>& dst, const uint16_t* src,
                                              int64_t src_stride, int valid_rows) {
  constexpr int kGroups = kCols / 8, kStep = kThreads / kGroups;
  static_assert(kStep % 8 == 0 && kC % kStep == 0, "rows per step: a multiple of 8 dividing 64");
  const int cg = threadIdx.x % kGroups, r0 = threadIdx.x / kGroups;
  const uint32_t d0 = dst.addr() + r0 * SwizzledTile16<kCols>::kRowBytes + 16 * cg;
  const uint32_t mask = (r0 % 8) << 4;
  const uint16_t* s0 = src + r0 * src_stride + 8 * cg;
#pragma unroll
  for (int i = 0; i < kC / kStep; ++i) {
    const bool valid = r0 + i * kStep < valid_rows;
    cp_async_16_at((d0 + i * kStep * SwizzledTile16<kCols>::kRowBytes) ^ mask,
                   valid ? s0 + i * kStep * src_stride : src, valid ? 16 : 0);
  }
}

// cp.async loads of one chunk into ring stage s by the CTA's kThreads threads: q, k, the
// V-block (rows past the chunk's end zero-filled), T diag(beta), P and e, f of the prepare.
template <int BV, int kThreads>
__device__ __forceinline__ void issue_cw_loads(const FusedParams& p, const FusedCwSmem<BV>& sm,
                                               int64_t chunk, int s, int h, int v0) {
  const Dims& d = p.d;
  const ChunkInfo ci = p.table[chunk];
  const int64_t qk_row0 = (ci.tok_begin * d.Hk + h / d.group) * kK;
  const auto* k = static_cast<const uint16_t*>(p.k) + qk_row0;
  const auto* q = static_cast<const uint16_t*>(p.q) + qk_row0;
  const int64_t qk_stride = int64_t(d.Hk) * kK;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    cp_async_tile<64, kThreads>(sm.k(s, half), k + 64 * half, qk_stride, ci.len);
    cp_async_tile<64, kThreads>(sm.q(s, half), q + 64 * half, qk_stride, ci.len);
  }
  cp_async_tile<BV, kThreads>(sm.v(s),
                              static_cast<const uint16_t*>(p.v) + (ci.tok_begin * d.Hv + h) * kV + v0,
                              int64_t(d.Hv) * kV, ci.len);
  const int64_t pair = chunk * d.Hv + h;
  cp_async_tile<kC, kThreads>(sm.t(s), p.tbeta16 + pair * (kC * kC), kC, kC);
  cp_async_tile<kC, kThreads>(sm.scores(s), p.scores16 + pair * (kC * kC), kC, kC);
  if (threadIdx.x < 2 * kC / 4)
    cp_async_16(sm.ef(s) + 4 * threadIdx.x, p.gate_ef + pair * (2 * kC) + 4 * threadIdx.x, 16);
}

// Calls f(S^T element, state row, column within the V-block) for this warp's fragment.
template <class Float, class F>
__device__ __forceinline__ void for_each_state_t_element(Float (&S)[kK / 8][4], int vw, int g,
                                                         int t, F f) {
#pragma unroll
  for (int nj = 0; nj < kK / 8; ++nj)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      f(S[nj][e], 8 * nj + 2 * t + (e & 1), vw + g + (e >= 2 ? 8 : 0));
}

// The A fragment (depth step kk: C columns 16 kk .. 16 kk + 15) of a 16-row C fragment array,
// each pair scaled by s(column) and rounded to the input dtype.
template <class Elem, int N, class Scale>
__device__ __forceinline__ void pack_a(uint32_t (&a)[4], const float (&C)[N][4], int kk, int t,
                                       Scale s) {
  using Ops = ElemOps<Elem>;
  const int c0 = 16 * kk + 2 * t;
  const float s0 = s(c0), s1 = s(c0 + 1), s8 = s(c0 + 8), s9 = s(c0 + 9);
  a[0] = Ops::pack(s0 * C[2 * kk][0], s1 * C[2 * kk][1]);
  a[1] = Ops::pack(s0 * C[2 * kk][2], s1 * C[2 * kk][3]);
  a[2] = Ops::pack(s8 * C[2 * kk + 1][0], s9 * C[2 * kk + 1][1]);
  a[3] = Ops::pack(s8 * C[2 * kk + 1][2], s9 * C[2 * kk + 1][3]);
}

template <int BV, class Elem>
__global__ void __launch_bounds__(cw_threads(BV), BV == 64 ? 2 : 1)
    chunk_loop_cw_kernel(FusedParams p) {
  using Ops = ElemOps<Elem>;
  constexpr int kThreadsCw = cw_threads(BV);
  // One flat grid, the V-block fastest, then the head: the CTAs that read the same k, q
  // (a GQA group's heads) and the same T, P (the V-blocks of one head) are launched together
  // and stream them through L2 at the same pace instead of fetching them from DRAM again a
  // wave later.
  constexpr int kVBlocks = kV / BV;
  const int h = static_cast<int>((blockIdx.x / kVBlocks) % p.d.Hv);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t item = blockIdx.x / kVBlocks / p.d.Hv;
  const Segment seg = segment_of(p, item);
  if (!(seg.flags & Segment::kUsed)) return;
  const Dims& d = p.d;
  const int v0 = static_cast<int>(blockIdx.x % kVBlocks) * BV;
  const int vw = kCwWarpCols * warp;  // this warp's first column within the V-block
  extern __shared__ __align__(1024) char smem_raw[];  // wgmma operand tiles: 1024-byte aligned
  const FusedCwSmem<BV> sm{smem_raw};
  using VTile = typename FusedCwSmem<BV>::VTile;
  const auto unit = [](int) { return 1.f; };

  // S^T from h0 (or zero) on a sequence's first segment, else the segment's fixed-up start.
  float S[kK / 8][4];
  for_each_state_t_element(S, vw, g, t, [&](float& x, int row, int c) {
    const int col = v0 + c;
    if (seg.flags & Segment::kFirst)
      x = p.h0 ? p.h0[staged::state_index(d, seg.seq, h, row, col)] : 0.f;
    else
      x = p.starts[((item * d.Hv + h) * kK + row) * kV + col];
  });

  const int64_t c_begin = seg.chunk_begin, c_end = seg.chunk_end;
  if (c_begin < c_end) issue_cw_loads<BV, kThreadsCw>(p, sm, c_begin, 0, h, v0);
  cp_async_commit();
  for (int64_t c = c_begin; c < c_end; ++c) {
    const int b = static_cast<int>((c - c_begin) % 2);  // ring stage
    cp_async_wait(0);
    fence_proxy_async_shared();  // this thread's copies of chunk c, visible to wgmma
    __syncthreads();  // chunk c landed (every thread's copies); stage 1 - b is free (chunk c-1)
    if (c + 1 < c_end) issue_cw_loads<BV, kThreadsCw>(p, sm, c + 1, 1 - b, h, v0);
    cp_async_commit();
    const uint32_t kq = smem_addr(sm.k(b, 0).p);  // [k0 | q0 | k1 | q1], 8 KB each
    const auto sV = sm.v(b);
    const uint32_t sT = smem_addr(sm.t(b).p), sP = smem_addr(sm.scores(b).p);
    const float* ev = sm.ef(b);
    const float* fv = ev + kC;

    // 1. U^T | O^T = S16^T [K; Q]^T: 64 x 128, depth 128 (8 steps of m64n128k16). The n-rows
    //    of depth step kk are half kk / 4 (k rows then q rows: 16 groups of 8 rows, 1024 B
    //    apart), 32-byte slice kk % 4 of each 128-byte row.
    float U[kC / 8][4], O[kC / 8][4];
    {
      uint32_t sa[kK / 16][4];
#pragma unroll
      for (int kk = 0; kk < kK / 16; ++kk) pack_a<Elem>(sa[kk], S, kk, t, unit);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kK / 16; ++kk) {
        const uint32_t at = kq + (kk / 4) * 2 * FusedCwSmem<BV>::kHalfBytes + 32 * (kk % 4);
        wgmma_m64n64k16<Elem, false>(U, sa[kk], sw128_desc(at, 16, 1024), kk > 0);
        wgmma_m64n64k16<Elem, false>(O, sa[kk],
                                     sw128_desc(at + FusedCwSmem<BV>::kHalfBytes, 16, 1024), kk > 0);
      }
      wgmma_commit();
    }
    // V^T in A layout (ldmatrix.trans: the C layout of U^T pair for pair) while they run.
    uint32_t va[kC / 16][4];
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) ldsm_x4_trans_at(va[kk], sV.frag_nk(16 * kk, vw));
    wgmma_wait<0>();
    fence_accumulators(U);
    fence_accumulators(O);

    // 2. W'^T = V^T - U^T diag(e), packed as A fragments (depth = chunk rows).
    uint32_t wa[kC / 16][4];
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) {
      const int c0 = 16 * kk + 2 * t;
      const float e0 = ev[c0], e1 = ev[c0 + 1], e8 = ev[c0 + 8], e9 = ev[c0 + 9];
      float2 x = Ops::unpack(va[kk][0]);
      wa[kk][0] = Ops::pack(x.x - e0 * U[2 * kk][0], x.y - e1 * U[2 * kk][1]);
      x = Ops::unpack(va[kk][1]);
      wa[kk][1] = Ops::pack(x.x - e0 * U[2 * kk][2], x.y - e1 * U[2 * kk][3]);
      x = Ops::unpack(va[kk][2]);
      wa[kk][2] = Ops::pack(x.x - e8 * U[2 * kk + 1][0], x.y - e9 * U[2 * kk + 1][1]);
      x = Ops::unpack(va[kk][3]);
      wa[kk][3] = Ops::pack(x.x - e8 * U[2 * kk + 1][2], x.y - e9 * U[2 * kk + 1][3]);
    }

    // 3. Vd^T = W'^T (T diag(beta))^T: 64 x 64, depth 64 (T rows = n, k-major).
    float VD[kC / 8][4];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk)
      wgmma_m64n64k16<Elem, false>(VD, wa[kk], sw128_desc(sT + 32 * kk, 16, 1024), kk > 0);
    wgmma_commit();
    // O^T diag(e) meanwhile (O is not an operand of step 3).
#pragma unroll
    for (int nj = 0; nj < kC / 8; ++nj) {
      const float e0 = ev[8 * nj + 2 * t], e1 = ev[8 * nj + 2 * t + 1];
      O[nj][0] *= e0;
      O[nj][1] *= e1;
      O[nj][2] *= e0;
      O[nj][3] *= e1;
    }
    const float elast = ev[kC - 1];
#pragma unroll
    for (int nj = 0; nj < kK / 8; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) S[nj][e] *= elast;
    wgmma_wait<0>();
    fence_accumulators(VD);

    // 4. O^T += Vd16^T P^T (depth 64; P rows = n, k-major) and
    //    S^T = e_last S^T + V'^T K with V'^T = Vd^T diag(f) (64 x 128, depth = chunk rows:
    //    K read n-contiguous, its two 64-column halves 16 KB apart, 8-row depth groups 1024 B
    //    apart, depth step kk at rows 16 kk).
    {
      uint32_t da[kC / 16][4], fa[kC / 16][4];
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk) {
        pack_a<Elem>(da[kk], VD, kk, t, unit);
        pack_a<Elem>(fa[kk], VD, kk, t, [&](int r) { return fv[r]; });
      }
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
        wgmma_m64n64k16<Elem, false>(O, da[kk], sw128_desc(sP + 32 * kk, 16, 1024), true);
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
        wgmma_m64n128k16<Elem, true>(
            S, fa[kk], sw128_desc(kq + 2048 * kk, 2 * FusedCwSmem<BV>::kHalfBytes, 1024), true);
      wgmma_commit();
      wgmma_wait<0>();
    }
    fence_accumulators(O);
    fence_accumulators(S);

    // 5. o = scale O, transposed through this warp's own 16 columns of the V tile (read only
    //    in step 2, by this warp), then 16-byte stores of the rows inside the chunk. The
    //    swizzle of row 8 nj + r' is that of row r' (r' < 8), so each element's address is a
    //    per-thread base plus a constant: no per-element address registers live across chunks.
    uint16_t* const vt = sV.p;
#pragma unroll
    for (int nj = 0; nj < kC / 8; ++nj) {
      const uint32_t lo = Ops::pack(d.scale * O[nj][0], d.scale * O[nj][1]);
      const uint32_t hi = Ops::pack(d.scale * O[nj][2], d.scale * O[nj][3]);
      uint16_t* const rows = vt + 8 * nj * BV;
      rows[VTile::offset(2 * t, vw + g)] = static_cast<uint16_t>(lo & 0xffffu);
      rows[VTile::offset(2 * t + 1, vw + g)] = static_cast<uint16_t>(lo >> 16);
      rows[VTile::offset(2 * t, vw + g + 8)] = static_cast<uint16_t>(hi & 0xffffu);
      rows[VTile::offset(2 * t + 1, vw + g + 8)] = static_cast<uint16_t>(hi >> 16);
    }
    __syncwarp();
    const ChunkInfo ci = p.table[c];
    uint16_t* const o = static_cast<uint16_t*>(p.o) + (ci.tok_begin * d.Hv + h) * kV + v0 + vw;
    const int r0 = lane / 2, c8 = 8 * (lane % 2);
    const uint4* const src = reinterpret_cast<const uint4*>(vt + VTile::offset(r0, vw + c8));
#pragma unroll
    for (int i = 0; i < 2 * kC / 32; ++i) {  // rows r0 + 16 i
      const int r = r0 + 16 * i;
      if (r < ci.len)
        *reinterpret_cast<uint4*>(o + int64_t(r) * d.Hv * kV + c8) = src[i * 16 * BV / 8];
    }
  }

  if ((seg.flags & Segment::kLast) && p.ht)
    for_each_state_t_element(S, vw, g, t, [&](const float& x, int row, int c) {
      p.ht[staged::state_index(d, seg.seq, h, row, v0 + c)] = x;
    });
}

template <int BV, class Elem>
cudaError_t launch_chunk_loop_cw_typed(const FusedParams& p, unsigned items, cudaStream_t stream) {
  const auto kernel = chunk_loop_cw_kernel<BV, Elem>;
  const size_t smem = FusedCwSmem<BV>::bytes();
  // Two 113 KB CTAs per SM at BV = 64.
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const uint64_t ctas = uint64_t(items) * static_cast<uint64_t>(p.d.Hv) * (kV / BV);
  if (ctas > 0x7fffffffu) return cudaErrorInvalidConfiguration;  // gridDim.x limit
  kernel<<<static_cast<unsigned>(ctas), cw_threads(BV), smem, stream>>>(p);
  return cudaGetLastError();
}

#define GDN_FUSED_INSTANTIATE_CHUNK_LOOP_CW(BV)                                               \
  template <>                                                                                 \
  cudaError_t launch_chunk_loop_cw<BV>(const FusedParams& p, unsigned items,                  \
                                       cudaStream_t stream) {                                 \
    return p.d.in_bf16 ? launch_chunk_loop_cw_typed<BV, __nv_bfloat16>(p, items, stream)      \
                       : launch_chunk_loop_cw_typed<BV, __half>(p, items, stream);            \
  }                                                                                           \
  template <>                                                                                 \
  const void* chunk_loop_cw_symbol<BV>(bool bf16) {                                           \
    return bf16 ? reinterpret_cast<const void*>(chunk_loop_cw_kernel<BV, __nv_bfloat16>)      \
                : reinterpret_cast<const void*>(chunk_loop_cw_kernel<BV, __half>);            \
  }

}  // namespace gdn::fused
