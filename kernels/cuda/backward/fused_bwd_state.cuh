// The state warpgroup of the fused backward (fused_bwd.cuh): dS, the gradient of the current
// chunk's end state, fp32 in registers for the whole item. Thread layout: dS[mi][nh] is the
// m64n64 accumulator of state rows 64 mi .. + 63 and value columns 64 nh .. + 63; warp w holds
// its rows 64 mi + 16 w + g (+ 8), columns 64 nh + 8 nj + 2 t (+ 1).
#pragma once

#include "fused_bwd.cuh"
#include "wg_fragments.cuh"

namespace gdn::bwd {

// Calls f(element, state row, value column) for every element of this thread's dS.
template <class F>
__device__ __forceinline__ void each_state(float (&S)[2][2][8][4], int warp, F f) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nh = 0; nh < 2; ++nh)
    {
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          f(S[mi][nh][nj][e], 64 * mi + 16 * warp + g + (e >= 2 ? 8 : 0), 64 * nh + 8 * nj + 2 * t + (e & 1));
      // One m64n64 block's memory accesses at a time: hoisted, the loads of all four would
      // hold a register each beside dS.
      asm volatile("" ::: "memory");
    }
}

// dS from an fp32 state view (ChainItem's start) or into one (its end): the workspace's starts
// and the caller's KV layout (value columns contiguous, rows kV apart: float2 accesses) or the
// caller's VK layout (state rows contiguous, columns kK apart). The offsets from this lane's
// first element are compile-time constants either way, so no per-element address is kept.
template <bool kLoad, class Ptr>
__device__ __forceinline__ void move_state(float (&S)[2][2][8][4], Ptr base, int64_t row_stride,
                                           int64_t col_stride, int warp) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  if (col_stride == 1) {  // KV: row_stride == kV
    const auto lane_base = base + (16 * warp + g) * kV + 2 * t;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int nh = 0; nh < 2; ++nh)
#pragma unroll
          for (int nj = 0; nj < 8; ++nj) {
            const auto at = lane_base + (64 * mi + 8 * half) * kV + 64 * nh + 8 * nj;
            float* x = &S[mi][nh][nj][2 * half];
            if constexpr (kLoad) {
              const float2 v = *reinterpret_cast<const float2*>(at);
              x[0] = v.x, x[1] = v.y;
            } else {
              *reinterpret_cast<float2*>(at) = make_float2(x[0], x[1]);
            }
          }
        asm volatile("" ::: "memory");  // one row's accesses at a time beside dS
      }
    return;
  }
  (void)row_stride;  // VK: row_stride == 1, col_stride == kK
  const auto lane_base = base + (16 * warp + g) + 2 * t * kK;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) {
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const auto at = lane_base + 64 * mi + (e >= 2 ? 8 : 0) + (64 * nh + 8 * nj + (e & 1)) * kK;
          if constexpr (kLoad) S[mi][nh][nj][e] = *at;
          else *at = S[mi][nh][nj][e];
        }
      asm volatile("" ::: "memory");  // one block's accesses at a time beside dS
    }
}

template <class Elem>
__device__ __forceinline__ void fused_state_wg(const FusedBwdParams& p, const FusedSmem& sm) {
  const FusedThread th(p);
  using Ops = fused::ElemOps<Elem>;
  const Dims& d = p.c.d;
  const Tile sS = sm.s(), sDS = sm.ds(), sQ = sm.q(), sK = sm.k(), sDO = sm.d_o(), sEdw = sm.edw(),
             sP = sm.p();
  // The ldmatrix rows of this lane, formed once: the swizzle group of every 8 x 8 block this
  // lane addresses is the same (its rows are lane % 8 modulo 8, its column group fixed by the
  // warp), so every block is a constant offset from these (the compiler would otherwise keep an
  // address per block, which dS leaves no registers for).
  //   s_lane: <S, dS'>'s transposing loads of S^T (row 8 (m / 2) + lane % 8 of block (mi, nh, q),
  //           columns 64 mi + 16 warp + 8 (m % 2), m = lane / 8)
  //   q_lane: Xq's transposing loads of q (row 16 kk + lane % 8 + 8 (lane / 16), columns
  //           64 mi + 16 warp + 8 ((lane / 8) % 2))
  const int lane_group = ((2 * th.warp + (th.lane / 8) % 2) ^ (th.lane % 8)) << 3;
  const uint16_t* const s_lane = sS.p + (8 * (th.lane / 16) + th.lane % 8) * 64 + lane_group;
  const uint16_t* const q_lane = sQ.p + (th.lane % 8 + 8 * (th.lane / 16)) * 64 + lane_group;
  float S[2][2][8][4];
  if (th.ch.src)
    move_state<true>(S, static_cast<const float*>(th.ch.src), th.ch.src_row, th.ch.src_col, th.warp);
  else
    each_state(S, th.warp, [&](float& x, int, int) { x = 0.f; });
  const int64_t first = th.ch.seg.chunk_begin, last = th.ch.seg.chunk_end;
  if (th.tid == 0) sm.end_view() = {th.ch.dst, th.ch.dst_row, th.ch.dst_col};
  fused::named_sync(kBarStateWg, 128);
  float gam_next = last > first ? th.chunk_gamma(p, last - 1) : 0.f;

  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c);
    const ChunkInfo ci = p.c.table[c];
    sm.wait_inputs(it);
    if (ci.len < kC) fused::named_sync(kBarInputs, 384);

    // 1. The chunk's gamma into its slot (free: group B's full barrier follows every math
    //    warp's release of the chunk before); dS' -> its 16-bit tile (the chain's Y and dk
    //    operand).
    if (th.tid < kC) sm.gam()[th.tid] = gam_next;
    if (c - 1 >= first) gam_next = th.chunk_gamma(p, c - 1);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nh = 0; nh < 2; ++nh)
        store16<8, Elem>(sDS, S[mi][nh], 64 * mi + 16 * th.warp, 64 * nh);
    fused::fence_proxy_async_shared();
    fused::named_sync(kBarStateWg, 128);  // every row's gamma written
    fused::named_arrive(kBarDs, 256);
    fused::named_arrive(kBarGamma, 256);

    // 1b. P = scale Q K^T o Gam, i >= j -> its tile (the chain's P^T dO), in two 32-column
    //     halves (m64n32: dS leaves room for 16 accumulators, not 32).
    {
      const FusedGates gates(sm.gam(), th);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float pm[4][4];
        wg_issue<4, kK, Elem, false, true, true>(pm, sQ, sK, 32 * half);
        wg_wait<0>(pm);
        gates.scale_causal(pm, 32 * half, d.scale, th.t);
        store16<4, Elem>(sP, pm, th.rm, 32 * half);
        asm volatile("" ::: "memory");  // one half's gate loads at a time beside dS
      }
    }
    fused::fence_proxy_async_shared();
    fused::named_arrive(kBarP, 256);

    // 2. e_last <S, dS'> (dgamma of the chunk's last row), in a fixed order: the thread's
    //    elements, the warp's butterfly, then the chain adds the four warps in order. S comes
    //    from the recompute's 16-bit S^T: a transposing ldmatrix of its 8 x 8 blocks gives each
    //    lane the elements of its own accumulator positions (state row g, columns 2t, 2t + 1).
    //    (A sequence's short first chunk is recomputed from the caller's h0 in fp32 by the
    //    short-chunk repair.)
    float sdot = 0.f;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nh = 0; nh < 2; ++nh)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          // matrices: (rows +0, nj = 2q), (rows +8, 2q), (rows +0, 2q + 1), (rows +8, 2q + 1)
          uint32_t sv[4];
          fused::ldsm_x4_trans(sv, s_lane + mi * (kV * 64) + nh * (64 * 64) + q * (16 * 64));
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const float2 x = Ops::unpack(sv[i]);
            const float(&a)[4] = S[mi][nh][2 * q + i / 2];
            const int e = 2 * (i % 2);
            sdot = fmaf(a[e], x.x, fmaf(a[e + 1], x.y, sdot));
          }
          asm volatile("" ::: "memory");  // one ldmatrix in flight beside dS
        }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sdot += __shfl_xor_sync(0xffffffffu, sdot, off);
    const float elast = sm.e()[kC - 1];  // padded rows repeat the last row's gamma
    if (th.lane == 0) sm.sums(it % 2).sdot[th.warp] = elast * sdot;
    fused::named_arrive(kBarSdot, 256);

    // 3. dS = e_last dS' + (scale diag(e) Q)^T dO: A = Q^T from the q tile (rows = depth),
    //    each depth row scaled in registers; two k16 steps of one m64 row half at a time (their
    //    A fragments live until their products complete: dS leaves room for no more).
    each_state(S, th.warp, [&](float& x, int, int) { x *= elast; });
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)  // the scaling stays above the products' fence
#pragma unroll
      for (int nh = 0; nh < 2; ++nh) fused::fence_accumulators(S[mi][nh]);
    const float* ev = sm.e();
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int kp = 0; kp < 2; ++kp) {  // two k16 steps at a time: their A fragments only
        uint32_t fa[2][4];
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
          const int kk = 2 * kp + ks;
          fused::ldsm_x4_trans(fa[ks], q_lane + mi * (kC * 64) + kk * (16 * 64));
#pragma unroll
          for (int i = 0; i < 4; ++i) {  // a0, a1: depth 2t, 2t + 1; a2, a3: + 8
            const int j = 16 * kk + 2 * th.t + (i >= 2 ? 8 : 0);
            const float2 x = Ops::unpack(fa[ks][i]);
            fa[ks][i] = Ops::pack(d.scale * ev[j] * x.x, d.scale * ev[j + 1] * x.y);
          }
        }
        fused::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 2; ++ks)
#pragma unroll
          for (int nh = 0; nh < 2; ++nh)
            fused::wgmma_m64n64k16<Elem, true>(S[mi][nh], fa[ks], sDO.desc_kn(16 * (2 * kp + ks), 64 * nh),
                                               true);
        fused::wgmma_commit();
        fused::wgmma_wait<0>();
        fused::fence_accumulators(S[mi][0]);
        fused::fence_accumulators(S[mi][1]);
      }
    sm.release_a(th.lane);  // q, dO and S^T read for the last time

    // 4. dS += K^T Edw once the chain has formed Edw: A = K^T (k's tile, rows = depth).
    fused::named_sync(kBarEdw, 256);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nh = 0; nh < 2; ++nh)
        wg_issue<8, kC, Elem, true, false>(S[mi][nh], sK, sEdw, 64 * nh, 64 * mi);
    fused::wgmma_wait<0>();
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nh = 0; nh < 2; ++nh) fused::fence_accumulators(S[mi][nh]);
    sm.release_b(th.lane);  // k and e read for the last time
  }
  // dS after the item's first chunk: dh0 where it starts its sequence.
  const FusedEndView end = sm.end_view();
  if (end.dst) move_state<false>(S, end.dst, end.row, end.col, th.warp);
}

}  // namespace gdn::bwd
