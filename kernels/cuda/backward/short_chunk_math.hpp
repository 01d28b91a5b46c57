// The backward of a sequence's short last chunk (fewer than kSplitDagRows = 16 rows) in fp32,
// from the caller's fp32 dht (and h0 where the chunk also starts the sequence): the repair of
// the chunked backward's outputs there (docs/decisions/backward-precision-at-sequence-ends.md).
// In such a chunk a single dot product can be all of an output (one-token dbeta = dV_new . W',
// dq = scale (e S dO + (dO . V_new) k)) and may nearly cancel, so the 16-bit operands of the
// tensor-core path (dS', V_new, W', dV_new, dW', S) show in full; here every intermediate stays
// in fp32 and dS' = dht, S = h0 are read as the caller gave them (other chunks' S: the 16-bit
// states of the recompute).
//
// The math is the float64 reference's (kernels/reference/chunked_backward.cpp, chunk_backward)
// step for step, written against an executor so that the same code runs on a CUDA block and,
// in a host test, serially: x.each(n, f) calls f(i) for every i in [0, n) (a block spreads them
// over its threads, then waits at a barrier), x.single(f) calls f() once, x.sum(n, f) returns
// the sum of f(i) in a fixed order. Shapes: L rows (1 <= L < 16), K = V = 128.
#pragma once

#include <cmath>

#include "arch/host_device.cuh"

namespace gdn::bwd::short_chunk {

inline constexpr int kRows = 16;
inline constexpr int kDim = 128;

// The q/k head's rows (shared by its group's value heads) and dq, dk summed over the group.
struct GroupWork {
  float q[kRows][kDim], k[kRows][kDim];
  float dq[kRows][kDim], dk[kRows][kDim];
};

// One value head's working set; rows >= L are not read.
struct HeadWork {
  float w[kRows][kDim];      // V, then W' = V - diag(e) K S in place
  float d_o[kRows][kDim];
  float ks[kRows][kDim];     // K S
  float qs[kRows][kDim];     // Q S
  float kds[kRows][kDim];    // K dS'
  float vnew[kRows][kDim];   // V_new = Ag W'
  float dvnew[kRows][kDim];  // dV_new
  float dw[kRows][kDim];     // dW' (= dv)
  float gam[kRows], beta[kRows], e[kRows], f[kRows];
  float kkt[kRows][kRows], p[kRows][kRows], gm[kRows][kRows];  // K K^T, Q K^T, Gam
  float a0[kRows][kRows], ag[kRows][kRows];                     // (I + N)^-1, (Gam o A0) diag(beta)
  float dpg[kRows][kRows], dgam[kRows][kRows], dag[kRows][kRows], m[kRows][kRows];
  float de[kRows], df[kRows], dg[kRows], dbeta[kRows];
  float el, del;  // exp(gamma_{L-1}), <dS', S>
};

// One value head: inputs in hw (w = V, d_o, gam = the chunk-local cumsum of g, beta) and gw
// (q, k); S(kk, j) and dS(kk, j) read the start state and dS' = dht (kk: state row, j: value
// column). Leaves dv in hw.dw, dg and dbeta in hw.dg, hw.dbeta, adds this head's dq, dk to
// gw.dq, gw.dk, and, with dh0 given, calls dh0(kk, j, value) for the gradient of the start
// state (the sequence's first chunk).
template <class Exec, class SFn, class DSFn, class Dh0Fn>
GDN_HOST_DEVICE void head_backward(Exec& x, GroupWork& gw, HeadWork& hw, int L, float scale,
                                   SFn S, DSFn dS, bool want_dh0, Dh0Fn dh0) {
  // Gates.
  x.single([&] {
    hw.el = expf(hw.gam[L - 1]);
    for (int r = 0; r < L; ++r) {
      hw.e[r] = expf(hw.gam[r]);
      hw.f[r] = expf(hw.gam[L - 1] - hw.gam[r]);
    }
  });
  // K S, Q S, K dS' (L x 128, depth 128): each thread an (r, j), S and dS' read as given.
  x.each(L * kDim, [&](int i) {
    const int r = i / kDim, j = i % kDim;
    float ks = 0.f, qs = 0.f, kds = 0.f;
    for (int kk = 0; kk < kDim; ++kk) {
      const float s = S(kk, j), ds = dS(kk, j);
      ks = fmaf(gw.k[r][kk], s, ks);
      qs = fmaf(gw.q[r][kk], s, qs);
      kds = fmaf(gw.k[r][kk], ds, kds);
    }
    hw.ks[r][j] = ks;
    hw.qs[r][j] = qs;
    hw.kds[r][j] = kds;
  });
  // K K^T, Q K^T, Gam (L x L).
  x.each(L * L, [&](int i) {
    const int r = i / L, s = i % L;
    float kk = 0.f, qk = 0.f;
    for (int c = 0; c < kDim; ++c) {
      kk = fmaf(gw.k[r][c], gw.k[s][c], kk);
      qk = fmaf(gw.q[r][c], gw.k[s][c], qk);
    }
    hw.kkt[r][s] = kk;
    hw.p[r][s] = qk;
    hw.gm[r][s] = r >= s ? expf(hw.gam[r] - hw.gam[s]) : 0.f;
  });
  // A0 = (I + N)^-1, N = StrictLower(diag(beta) K K^T), by forward substitution; Ag.
  x.single([&] {
    for (int r = 0; r < L; ++r) {
      for (int s = 0; s < r; ++s) {
        float acc = 0.f;
        for (int t = s; t < r; ++t) acc = fmaf(hw.beta[r] * hw.kkt[r][t], hw.a0[t][s], acc);
        hw.a0[r][s] = -acc;
      }
      hw.a0[r][r] = 1.f;
      for (int s = r + 1; s < L; ++s) hw.a0[r][s] = 0.f;
    }
    for (int r = 0; r < L; ++r)
      for (int s = 0; s < L; ++s) hw.ag[r][s] = r >= s ? hw.gm[r][s] * hw.a0[r][s] * hw.beta[s] : 0.f;
  });
  // W' = V - diag(e) K S.
  x.each(L * kDim, [&](int i) {
    const int r = i / kDim, j = i % kDim;
    hw.w[r][j] -= hw.e[r] * hw.ks[r][j];
  });
  // V_new = Ag W';  dV_new = scale Pm^T dO + diag(f) K dS'  (Pm = P o Gam, lower).
  x.each(L * kDim, [&](int i) {
    const int r = i / kDim, j = i % kDim;
    float vn = 0.f, dvn = 0.f;
    for (int s = 0; s <= r; ++s) vn = fmaf(hw.ag[r][s], hw.w[s][j], vn);
    for (int s = r; s < L; ++s) dvn = fmaf(hw.p[s][r] * hw.gm[s][r], hw.d_o[s][j], dvn);
    hw.vnew[r][j] = vn;
    hw.dvnew[r][j] = scale * dvn + hw.f[r] * hw.kds[r][j];
  });
  // dPm = scale dO V_new^T (lower) -> dGam += dPm o P, dP = dPm o Gam;  dAg = dV_new W'^T.
  x.each(L * L, [&](int i) {
    const int r = i / L, s = i % L;
    float dp = 0.f, dag = 0.f;
    for (int j = 0; j < kDim; ++j) {
      dp = fmaf(hw.d_o[r][j], hw.vnew[s][j], dp);
      dag = fmaf(hw.dvnew[r][j], hw.w[s][j], dag);
    }
    const float dpm = s <= r ? scale * dp : 0.f;
    hw.dgam[r][s] = dpm * hw.p[r][s];
    hw.dpg[r][s] = dpm * hw.gm[r][s];
    hw.dag[r][s] = dag;
  });
  // dW' = Ag^T dV_new.
  x.each(L * kDim, [&](int i) {
    const int r = i / kDim, j = i % kDim;
    float acc = 0.f;
    for (int s = r; s < L; ++s) acc = fmaf(hw.ag[s][r], hw.dvnew[s][j], acc);
    hw.dw[r][j] = acc;
  });
  // de_r = scale dO_r . (Q S)_r - dW'_r . (K S)_r,  df_r = (K dS')_r . V_new_r.
  x.each(L, [&](int r) {
    float a = 0.f, b = 0.f, c = 0.f;
    for (int j = 0; j < kDim; ++j) {
      a = fmaf(hw.d_o[r][j], hw.qs[r][j], a);
      b = fmaf(hw.dw[r][j], hw.ks[r][j], b);
      c = fmaf(hw.kds[r][j], hw.vnew[r][j], c);
    }
    hw.de[r] = scale * a - b;
    hw.df[r] = c;
  });
  const float del = x.sum(kDim * kDim, [&](int i) { return S(i / kDim, i % kDim) * dS(i / kDim, i % kDim); });
  // Through Ag, A0 and N (L x L): dbeta, dGam, M = diag(beta) StrictLower(-dN); then the gates.
  x.single([&] {
    hw.del = del;
    float da0[kRows][kRows], t[kRows][kRows];
    for (int s = 0; s < L; ++s) hw.dbeta[s] = 0.f;
    for (int r = 0; r < L; ++r)
      for (int s = 0; s < L; ++s) {
        da0[r][s] = 0.f;
        if (s > r) continue;
        da0[r][s] = hw.dag[r][s] * hw.gm[r][s] * hw.beta[s];
        hw.dgam[r][s] += hw.dag[r][s] * hw.a0[r][s] * hw.beta[s];
        hw.dbeta[s] += hw.dag[r][s] * hw.gm[r][s] * hw.a0[r][s];
      }
    // dN = A0^T dA0 A0^T: t = A0^T dA0, then t A0^T.
    for (int r = 0; r < L; ++r)
      for (int s = 0; s < L; ++s) {
        float acc = 0.f;
        for (int u = 0; u < L; ++u) acc = fmaf(hw.a0[u][r], da0[u][s], acc);
        t[r][s] = acc;
      }
    for (int r = 0; r < L; ++r)
      for (int s = 0; s < L; ++s) {
        float dn = 0.f;
        for (int u = 0; u < L; ++u) dn = fmaf(t[r][u], hw.a0[s][u], dn);
        const float dnrs = -dn;
        hw.m[r][s] = 0.f;
        if (s < r) {
          hw.dbeta[r] += dnrs * hw.kkt[r][s];
          hw.m[r][s] = hw.beta[r] * dnrs;
        }
      }
    // dgamma (the s = r terms and f_{L-1}'s cancel exactly and are left out, as in the
    // reference), then dg = its reverse cumsum.
    float dgamma[kRows];
    for (int r = 0; r < L; ++r) dgamma[r] = 0.f;
    for (int r = 0; r < L; ++r) {
      dgamma[r] += hw.de[r] * hw.e[r];
      if (r < L - 1) dgamma[r] -= hw.df[r] * hw.f[r];
      for (int s = 0; s < r; ++s) {
        const float w = hw.dgam[r][s] * hw.gm[r][s];
        dgamma[r] += w;
        dgamma[s] -= w;
      }
    }
    float to_last = hw.del * hw.el;
    for (int r = 0; r < L - 1; ++r) to_last += hw.df[r] * hw.f[r];
    dgamma[L - 1] += to_last;
    float suffix = 0.f;
    for (int r = L - 1; r >= 0; --r) hw.dg[r] = suffix += dgamma[r];
  });
  // dq += scale diag(e) dO S^T + dP K;
  // dk += dP^T Q + diag(f) V_new dS'^T + dKS S^T + M K + M^T K   (dKS = -diag(e) dW').
  x.each(L * kDim, [&](int i) {
    const int r = i / kDim, c = i % kDim;
    float dq_s = 0.f, dk_s = 0.f, dk_ds = 0.f;
    for (int j = 0; j < kDim; ++j) {
      const float s = S(c, j);
      dq_s = fmaf(hw.d_o[r][j], s, dq_s);
      dk_s = fmaf(hw.dw[r][j], s, dk_s);
      dk_ds = fmaf(hw.vnew[r][j], dS(c, j), dk_ds);
    }
    float dq = scale * hw.e[r] * dq_s, dk = hw.f[r] * dk_ds - hw.e[r] * dk_s;
    for (int s = 0; s < L; ++s) {
      if (s <= r) dq = fmaf(hw.dpg[r][s], gw.k[s][c], dq);
      if (s >= r) dk = fmaf(hw.dpg[s][r], gw.q[s][c], dk);
      dk = fmaf(hw.m[r][s] + hw.m[s][r], gw.k[s][c], dk);
    }
    gw.dq[r][c] += dq;
    gw.dk[r][c] += dk;
  });
  // dS = eL dS' + scale Q^T diag(e) dO + K^T dKS: dh0 where the chunk starts its sequence.
  if (want_dh0)
    x.each(kDim * kDim, [&](int i) {
      const int kk = i / kDim, j = i % kDim;
      float acc = hw.el * dS(kk, j);
      for (int r = 0; r < L; ++r)
        acc = fmaf(gw.q[r][kk], scale * hw.e[r] * hw.d_o[r][j], fmaf(gw.k[r][kk], -hw.e[r] * hw.dw[r][j], acc));
      dh0(kk, j, acc);
    });
}

}  // namespace gdn::bwd::short_chunk
