// The local warpgroup of the fused backward (fused_bwd.cuh): per chunk P, W', V_new, dPm and
// dq before the chain's products, then dAg, dT, X, dA and Z with the chunk's dgamma and dbeta
// sums. Warp w holds chunk rows 16 w + g and + 8 of every 64-row product; a 64 x 64 result is
// one m64n64 accumulator, a 64 x 128 one two (n64 halves).
#pragma once

#include "fused_bwd.cuh"
#include "wg_fragments.cuh"

namespace gdn::bwd {

template <class Elem>
__device__ __forceinline__ void fused_local_wg(const FusedBwdParams& p, const FusedSmem& sm) {
  const FusedThread th(p);
  using Ops = fused::ElemOps<Elem>;
  const Dims& d = p.c.d;
  const int h = th.ch.h;
  const Tile sS = sm.s(), sQ = sm.q(), sK = sm.k(), sV = sm.v(), sDO = sm.d_o(), sVN = sm.vn(),
             sDVN = sm.dvn(), sT = sm.t(), sDPM = sm.dpm(), sDTZ = sm.dtz();
  const int64_t first = th.ch.seg.chunk_begin, last = th.ch.seg.chunk_end;

  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c);
    const ChunkInfo ci = p.c.table[c];
    sm.wait_inputs(it);
    if (ci.len < kC) {  // a sequence's last chunk, cut short: zero q, k, v, dO past its end
      zero_rows_past_end(sQ.p, 8, static_cast<int>(ci.len), th.tid);
      fused::fence_proxy_async_shared();
      fused::named_sync(kBarInputs, 384);
    } else {
      fused::named_sync(kBarLocalWg, 128);
    }
    const float ea = sm.e()[th.ra], eb = sm.e()[th.rb];
    const float* bv = sm.beta();

    // (P = scale Q K^T o Gam, i >= j, the chain's P^T dO operand, is the state warpgroup's:
    // off this warpgroup's path, the longest of the three.)
    // 2. W' = V - diag(e) K S, its 16-bit rounding in V's place (each thread rewrites the
    //    elements it read).
    {
      float u[2][8][4];
      wg_product_halves<kK, Elem, false, true, true>(u, sK, sS);
#pragma unroll
      for (int nh = 0; nh < 2; ++nh)
#pragma unroll
        for (int nj = 0; nj < 8; ++nj) {
          const int col = 64 * nh + 8 * nj + 2 * th.t;
          const float2 va = Ops::unpack(sV.pair(th.ra, col)), vb = Ops::unpack(sV.pair(th.rb, col));
          sV.pair(th.ra, col) = Ops::pack(va.x - ea * u[nh][nj][0], va.y - ea * u[nh][nj][1]);
          sV.pair(th.rb, col) = Ops::pack(vb.x - eb * u[nh][nj][2], vb.y - eb * u[nh][nj][3]);
        }
    }
    fused::fence_proxy_async_shared();
    fused::named_sync(kBarLocalWg, 128);

    // 3. V_new = (T diag(beta)) W' (A from registers: T's rows, each depth column scaled by
    //    beta) -> its tile.
    {
      uint32_t ta[4][4];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        fused::load_a(ta[kk], sT, th.rm, 16 * kk);
#pragma unroll
        for (int i = 0; i < 4; ++i) {  // a0, a1: depth 2t, 2t + 1; a2, a3: + 8
          const int j = 16 * kk + 2 * th.t + (i >= 2 ? 8 : 0);
          const float2 x = Ops::unpack(ta[kk][i]);
          ta[kk][i] = Ops::pack(bv[j] * x.x, bv[j + 1] * x.y);
        }
      }
      float vn[2][8][4];
      fused::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int nh = 0; nh < 2; ++nh)
          fused::wgmma_m64n64k16<Elem, true>(vn[nh], ta[kk], sV.desc_kn(16 * kk, 64 * nh), kk > 0);
      fused::wgmma_commit();
      wg_wait_halves(vn);
#pragma unroll
      for (int nh = 0; nh < 2; ++nh) store16<8, Elem>(sVN, vn[nh], th.rm, 64 * nh);
    }
    fused::fence_proxy_async_shared();
    fused::named_arrive(kBarVn, 256);
    fused::named_sync(kBarLocalWg, 128);  // dP reads all of V_new

    // 4. dPm = scale (dO V_new^T) o Gam, i >= j -> its tile; dgamma's dPm o Q K^T (Q K^T
    //    formed here again: held from P, its registers would spill). The chunk's gamma is the
    //    state warpgroup's to write.
    float dp[8][4], qk[8][4];
    wg_issue<8, kV, Elem, false, true, true>(dp, sDO, sVN, 0);
    wg_issue<8, kK, Elem, false, true, true>(qk, sQ, sK, 0);
    fused::named_sync(kBarGamma, 256);
    const FusedGates gates(sm.gam(), th);
    wg_wait<0>(dp);
    fused::fence_accumulators(qk);
    gates.scale_causal(dp, 0, d.scale, th.t);
    {
      FragSums<8> mg;  // stored now: held to Z, its registers would spill
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int e = 0; e < 4; ++e) mg.add(nj, e, dp[nj][e] * qk[nj][e]);
      FusedSums& sums = sm.sums(it % 2);
      store_row_sums(mg.row, sums.mg_rows[0], th.rm);
      store_column_sums<8>(mg.col, sums.mg_cols[0][th.warp], 0);
    }
    store16<8, Elem>(sDPM, dp, th.rm, 0);
    fused::fence_proxy_async_shared();
    fused::named_arrive(kBarDpm, 256);

    // 5. dq = scale diag(e) dO S^T + dPm K (A of the second from dPm's registers); dgamma's
    //    scale e (Q o dO S^T) 1.
    {
      uint32_t pa[4][4];
      pack_a_fragments<Elem>(pa, dp);
      float dq[2][8][4];
      wg_product_halves<kV, Elem, false, false, true>(dq, sDO, sS);
      scale_rows_halves(dq, d.scale * ea, d.scale * eb);
      const float2 a = row_dot_parts<8, Elem>(dq[0], sQ, th.rm, 0);
      const float2 b = row_dot_parts<8, Elem>(dq[1], sQ, th.rm, 64);
      const float qs_a = quad_sum(a.x + b.x), qs_b = quad_sum(a.y + b.y);
      FusedSums& sums = sm.sums(it % 2);
      if (th.t == 0) sums.qs[th.ra] = qs_a, sums.qs[th.rb] = qs_b;
      fused::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int nh = 0; nh < 2; ++nh)
          fused::wgmma_m64n64k16<Elem, true>(dq[nh], pa[kk], sK.desc_kn(16 * kk, 64 * nh), true);
      fused::wgmma_commit();
      wg_wait_halves(dq);
      store_head_part<Elem>(p.dq, p.dq_h, d, h, ci, dq, th.rm);
    }

    // 6. dAg = dVn W'^T once the chain has formed dVn: dbeta's columns of dAg o T;
    //    dT = dAg diag(beta) -> its tile.
    fused::named_sync(kBarDvn, 256);
    {
      FragSums<8> dbc;  // columns of dAg o T
      float dag[8][4];
      wg_issue<8, kV, Elem, false, true, true>(dag, sDVN, sV, 0);
      wg_wait<0>(dag);
      sm.release_a(th.lane);  // W' (v's tile), q, dO and S^T read for the last time
#pragma unroll
      for (int nj = 0; nj < 8; ++nj) {
        const int c0 = 8 * nj + 2 * th.t;
        const float2 ta = Ops::unpack(sT.pair(th.ra, c0)), tb = Ops::unpack(sT.pair(th.rb, c0));
        dbc.add(nj, 0, dag[nj][0] * ta.x);
        dbc.add(nj, 1, dag[nj][1] * ta.y);
        dbc.add(nj, 2, dag[nj][2] * tb.x);
        dbc.add(nj, 3, dag[nj][3] * tb.y);
#pragma unroll
        for (int e = 0; e < 4; ++e) dag[nj][e] *= bv[c0 + (e & 1)];
      }
      store16<8, Elem>(sDTZ, dag, th.rm, 0);
      store_column_sums<8>(dbc.col, sm.sums(it % 2).db_cols[th.warp], 0);
    }
    fused::fence_proxy_async_shared();
    fused::named_sync(kBarLocalWg, 128);

    // 7. X = T^T dT (A = T^T: T's tile, rows = depth); dA = X T^T (A from X's registers);
    //    K K^T. Then Z = -diag(beta) dA o Gam, i > j -> dT's tile; dbeta's rows of
    //    -dA o K K^T o Gam; dgamma's Z o K K^T.
    {
      float x[8][4];
      wg_issue<8, kC, Elem, true, false, true>(x, sT, sDTZ, 0);
      wg_wait<0>(x);
      uint32_t xa[4][4];
      pack_a_fragments<Elem>(xa, x);
      float da[8][4], kkm[8][4];
      fused::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        fused::wgmma_m64n64k16<Elem, false>(da, xa[kk], sT.desc_nk(0, 16 * kk), kk > 0);
      fused::wgmma_commit();
      wg_issue<8, kK, Elem, false, true, true>(kkm, sK, sK, 0);
      wg_wait<0>(da);
      fused::fence_accumulators(kkm);
      fused::named_sync(kBarLocalWg, 128);  // every X product has read dT: Z takes its tile
      float db_row[2] = {0.f, 0.f};
      FragSums<8> mg;
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = e >= 2 ? th.rb : th.ra, j = 8 * nj + 2 * th.t + (e & 1);
          const float grad_a = -da[nj][e];
          const float gm = gates.decay(i, j);
          const float kkg = kkm[nj][e] * gm;
          float z = 0.f;
          if (i > j) {
            db_row[e >> 1] = fmaf(grad_a, kkg, db_row[e >> 1]);
            z = grad_a * (i == th.ra ? bv[th.ra] : bv[th.rb]) * gm;
            mg.add(nj, e, z * kkm[nj][e]);
          }
          da[nj][e] = z;
        }
      store16<8, Elem>(sDTZ, da, th.rm, 0);
      FusedSums& sums = sm.sums(it % 2);
      store_row_sums(db_row, sums.db_rows, th.rm);
      store_row_sums(mg.row, sums.mg_rows[1], th.rm);
      store_column_sums<8>(mg.col, sums.mg_cols[1][th.warp], 0);
    }
    fused::fence_proxy_async_shared();
    fused::named_arrive(kBarZ, 256);
    sm.release_b(th.lane);  // k, T and the gates read for the last time
  }
}

}  // namespace gdn::bwd
