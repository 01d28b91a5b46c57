// The chain warpgroup of the fused backward (fused_bwd.cuh): per chunk the two middle products
// of the reverse chain (dVn, then dW' and Edw), then dk, then (warp 0) the chunk's dg and
// dbeta. Warp w holds chunk rows 16 w + g and + 8 of every 64-row product.
#pragma once

#include "fused_bwd.cuh"
#include "wg_fragments.cuh"

namespace gdn::bwd {

// Chain warp 0: dg (the reverse chunk-local cumsum of dgamma plus the exclusive prefix of the
// f terms, as local_grads.cuh) and dbeta of the chunk's rows from the warpgroups' sums.
__device__ __forceinline__ void store_gate_gradients(const FusedBwdParams& p, FusedSums& s,
                                                     const ChunkInfo& ci, int h, int lane) {
  const Dims& d = p.c.d;
  const float sdot = ((s.sdot[0] + s.sdot[1]) + s.sdot[2]) + s.sdot[3];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = lane + 32 * half;
    float mg = 0.f;  // rows - columns of dPm o Q K^T, then of Z o K K^T
#pragma unroll
    for (int part = 0; part < 2; ++part) {
      const float(&cols)[4][kC] = s.mg_cols[part];
      mg += s.mg_rows[part][r] - (((cols[0][r] + cols[1][r]) + cols[2][r]) + cols[3][r]);
    }
    float dgam = mg + s.qs[r] + s.ksw[r];
    if (r == kC - 1) dgam += sdot;  // gamma_last scales the carried state
    s.dgam[r] = dgam;
    s.dbeta[r] =
        (((s.db_cols[0][r] + s.db_cols[1][r]) + s.db_cols[2][r]) + s.db_cols[3][r]) + s.db_rows[r];
    s.fsum[r] = r > 0 ? s.kds[r - 1] : 0.f;
  }
  store_dg_dbeta(s.dgam, s.fsum, s.dbeta, ci, h, d, p.dg, p.dbeta, lane);
}

// Row sums of K o acc over a 64 x 128 result, this thread's rows (quad-reduced).
template <class Elem>
__device__ __forceinline__ float2 k_row_dot(const Tile& sK, const float (&acc)[2][8][4], int rm) {
  const float2 a = row_dot_parts<8, Elem>(acc[0], sK, rm, 0);
  const float2 b = row_dot_parts<8, Elem>(acc[1], sK, rm, 64);
  return make_float2(quad_sum(a.x + b.x), quad_sum(a.y + b.y));
}

template <class Elem>
__device__ __forceinline__ void fused_chain_wg(const FusedBwdParams& p, const FusedSmem& sm) {
  const FusedThread th(p);
  using Ops = fused::ElemOps<Elem>;
  const Dims& d = p.c.d;
  const int h = th.ch.h;
  const Tile sS = sm.s(), sDS = sm.ds(), sQ = sm.q(), sK = sm.k(), sDO = sm.d_o(), sVN = sm.vn(),
             sDVN = sm.dvn(), sEdw = sm.edw(), sT = sm.t(), sP = sm.p(), sDPM = sm.dpm(),
             sDTZ = sm.dtz();
  const int64_t first = th.ch.seg.chunk_begin, last = th.ch.seg.chunk_end;

  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c);
    const ChunkInfo ci = p.c.table[c];
    sm.wait_inputs(it);
    if (ci.len < kC) fused::named_sync(kBarInputs, 384);
    const float fa = sm.f()[th.ra], fb = sm.f()[th.rb], ea = sm.e()[th.ra], eb = sm.e()[th.rb];
    const float ba = sm.beta()[th.ra], bb = sm.beta()[th.rb];  // 0 past the chunk's end

    // 1. dVn = diag(f) K dS' + P^T dO (A = P^T: the P tile, rows = depth).
    fused::named_sync(kBarDs, 256);
    fused::named_sync(kBarP, 256);
    float Y[2][8][4];
    wg_product_halves<kK, Elem, false, false, true>(Y, sK, sDS);
    scale_rows_halves(Y, fa, fb);
    wg_product_halves<kC, Elem, true, false>(Y, sP, sDO);
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) store16<8, Elem>(sDVN, Y[nh], th.rm, 64 * nh);
    fused::fence_proxy_async_shared();
    fused::named_arrive(kBarDvn, 256);
    fused::named_sync(kBarChainWg, 128);  // W reads all of dVn

    // 2. W = T^T dVn (A = T^T: T's tile, rows = depth); dW' = diag(beta) W -> dv;
    //    Edw = -diag(e) dW' -> its tile.
    float W[2][8][4];
    wg_product_halves<kC, Elem, true, false, true>(W, sT, sDVN);
    {
      const int64_t row_a = ((ci.tok_begin + th.ra) * d.Hv + h) * kV, row_b = row_a + int64_t(8) * d.Hv * kV;
      Elem* const dv = static_cast<Elem*>(p.c.dv);
#pragma unroll
      for (int nh = 0; nh < 2; ++nh)
#pragma unroll
        for (int nj = 0; nj < 8; ++nj) {
          const int col = 64 * nh + 8 * nj + 2 * th.t;
          const float w0 = ba * W[nh][nj][0], w1 = ba * W[nh][nj][1];
          const float w2 = bb * W[nh][nj][2], w3 = bb * W[nh][nj][3];
          if (th.ra < ci.len) *reinterpret_cast<uint32_t*>(dv + row_a + col) = Ops::pack(w0, w1);
          if (th.rb < ci.len) *reinterpret_cast<uint32_t*>(dv + row_b + col) = Ops::pack(w2, w3);
          sEdw.pair(th.ra, col) = Ops::pack(-ea * w0, -ea * w1);
          sEdw.pair(th.rb, col) = Ops::pack(-eb * w2, -eb * w3);
        }
    }
    fused::fence_proxy_async_shared();
    fused::named_arrive(kBarEdw, 256);

    // 3. dk. (diag(f) V_new) dS'^T first (A from registers: V_new's rows scaled by f), then
    //    Edw S^T: the rows of K o dk after each give the f and e terms of dgamma.
    fused::named_sync(kBarVn, 256);  // (also: every chain thread's Edw is in its tile)
    float dk[2][8][4];
    {
      uint32_t va[8][4];
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        fused::load_a(va[kk], sVN, th.rm, 16 * kk);
#pragma unroll
        for (int i = 0; i < 4; ++i) {  // a0, a2: row g; a1, a3: row g + 8
          const float s = (i & 1) ? fb : fa;
          const float2 x = Ops::unpack(va[kk][i]);
          va[kk][i] = Ops::pack(s * x.x, s * x.y);
        }
      }
      fused::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 8; ++kk)
#pragma unroll
        for (int nh = 0; nh < 2; ++nh)
          fused::wgmma_m64n64k16<Elem, false>(dk[nh], va[kk], sDS.desc_nk(64 * nh, 16 * kk), kk > 0);
      fused::wgmma_commit();
      wg_wait_halves(dk);
    }
    const float2 t1 = k_row_dot<Elem>(sK, dk, th.rm);
    wg_product_halves<kV, Elem, false, false>(dk, sEdw, sS);
    const float2 t2 = k_row_dot<Elem>(sK, dk, th.rm);
    FusedSums& sums = sm.sums(it % 2);
    if (th.t == 0) {
      sums.kds[th.ra] = t1.x, sums.kds[th.rb] = t1.y;
      sums.ksw[th.ra] = t2.x - t1.x, sums.ksw[th.rb] = t2.y - t1.y;
    }
    // dPm^T Q (A = dPm^T: its tile, rows = depth), Z K and Z^T K.
    fused::named_sync(kBarDpm, 256);
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) wg_issue<8, kC, Elem, true, false>(dk[nh], sDPM, sQ, 64 * nh);
    wg_wait_halves(dk);
    sm.release_a(th.lane);  // q and S^T read for the last time: the next chunk's group A loads
    fused::named_sync(kBarZ, 256);
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) {
      wg_issue<8, kC, Elem, false, false>(dk[nh], sDTZ, sK, 64 * nh);
      wg_issue<8, kC, Elem, true, false>(dk[nh], sDTZ, sK, 64 * nh);
    }
    wg_wait_halves(dk);
    fused::named_sync(kBarSdot, 256);  // before the release: the state's next arrival waits for it
    sm.release_b(th.lane);  // k, T and the gates read for the last time

    store_head_part<Elem>(p.dk, p.dk_h, d, h, ci, dk, th.rm);
    fused::named_sync(kBarChainWg, 128);  // every row's kds and ksw written
    if (th.warp == 0) store_gate_gradients(p, sums, ci, h, th.lane);
  }
}

}  // namespace gdn::bwd
