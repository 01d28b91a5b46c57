// The backward of a sequence's short last chunk (fewer than kShortChunkRows = 16 rows) in fp32,
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
// over its threads, then waits at a barrier), x.each_nowait(n, f) the same without the barrier
// (for a step whose items the next step's items do not read: the next barrier covers both),
// x.sum(n, f) returns the sum of f(i) in a fixed order (and waits at a barrier). Every sum inside
// an item runs in a fixed order too, so a result does not depend on the executor's thread count.
// Shapes: L rows (1 <= L <= kRows), K = V = 128.
//
// The item of the L x 128 x 128 products (K S, Q S, K dS'; dO S^T, dW' S^T, V_new dS'^T) is a
// tile: one value of S feeds up to four rows, one row value two columns, so that a thread reads
// shared memory about once per four multiply-adds.
#pragma once

#include <cmath>

#include "arch/host_device.cuh"

#if defined(__CUDA_ARCH__)
// Fully unrolled on the device, so that a tile's accumulators stay in registers.
#define GDN_SHORT_CHUNK_UNROLL _Pragma("unroll")
#else
#define GDN_SHORT_CHUNK_UNROLL
#endif

namespace gdn::bwd::short_chunk {

inline constexpr int kRows = 15;  // the most rows of a short chunk (fewer than 16)
inline constexpr int kDim = 128;

// The L x 128 x 128 products: item i takes columns c and c + 64 (c = i mod 64) of rows g, g + 4,
// g + 8, g + 12 (g = i / 64).
inline constexpr int kRowGroups = 4;
inline constexpr int kGroupRows = (kRows + kRowGroups - 1) / kRowGroups;
inline constexpr int kColPairs = kDim / 2;
inline constexpr int kTiles = kRowGroups * kColPairs;
// The L x 128 products of depth L (V_new, dV_new, dW'): item i takes column i mod 128 of rows
// h, h + 2, ... (h = i / 128).
inline constexpr int kRowHalves = 2;
inline constexpr int kHalfRows = (kRows + kRowHalves - 1) / kRowHalves;
// dh0 (128 x 128, depth L): item i takes state rows 16 (i / 32) .. + 15 and value columns
// i mod 32 + {0, 32, 64, 96}.
inline constexpr int kDh0Rows = 16, kDh0Cols = 4;
static_assert(kDh0Rows * kDh0Cols * kTiles == kDim * kDim, "dh0 items cover the state");
static_assert(kGroupRows * kRowGroups >= kRows && kHalfRows * kRowHalves >= kRows);

// The q/k head's rows (shared by its group's value heads) and dq, dk summed over the group.
struct GroupWork {
  alignas(16) float q[kRows][kDim];
  alignas(16) float k[kRows][kDim];
  alignas(16) float dq[kRows][kDim];
  alignas(16) float dk[kRows][kDim];
};

// One value head's working set; rows >= L are not read. The L x L matrices have rows of kSq
// floats (16-byte aligned: read four at a time); of the triangular ones only the triangle that
// is read is written (kkt, p, gm, dpg, dgam, dag: s <= r; pgt, dpgt: s >= r).
inline constexpr int kSq = 16;
struct HeadWork {
  // V, then W' = V - diag(e) K S in place, then dW' (= dv) once dAg, its last reader, is done.
  alignas(16) float w[kRows][kDim];
  alignas(16) float d_o[kRows][kDim];
  alignas(16) float ks[kRows][kDim];     // K S
  alignas(16) float qs[kRows][kDim];     // Q S
  alignas(16) float kds[kRows][kDim];    // K dS'
  alignas(16) float vnew[kRows][kDim];   // V_new = Ag W'
  alignas(16) float dvnew[kRows][kDim];  // dV_new
  alignas(16) float kkt[kRows][kSq];     // K K^T
  alignas(16) float p[kRows][kSq];       // Q K^T
  alignas(16) float gm[kRows][kSq];      // Gam
  alignas(16) float pgt[kRows][kSq];     // (P o Gam)^T
  alignas(16) float a0[kRows][kSq];      // (I + N)^-1
  alignas(16) float ag[kRows][kSq];      // Ag = (Gam o A0) diag(beta)
  alignas(16) float agt[kRows][kSq];     // Ag^T
  alignas(16) float dpg[kRows][kSq];     // dP = dPm o Gam
  alignas(16) float dpgt[kRows][kSq];    // dP^T
  alignas(16) float dgam[kRows][kSq], dag[kRows][kSq];
  alignas(16) float mm[kRows][kSq];      // M + M^T, M = diag(beta) StrictLower(-dN)
  alignas(16) float da0[kRows][kSq], t[kRows][kSq], dn[kRows][kSq];  // dA0, A0^T dA0, dN = t A0^T
  float gam[kRows], beta[kRows], e[kRows], f[kRows];
  float de[kRows], df[kRows], dgamma[kRows], dg[kRows], dbeta[kRows];
  float el;  // exp(gamma_{L-1})
};

// Which of the start state S and the end-state gradient dS' the chunk has (a missing one is
// zero: its products, which would add exact zeros, are skipped and S, dS are not called for
// it), and whether the gradient of the start state is wanted.
struct StateInputs {
  bool has_s, has_ds, want_dh0;
};

struct Vec4 {
  float v[4];
};

// Four consecutive floats from a 16-byte aligned address (one vector load on the device).
GDN_HOST_DEVICE inline Vec4 load4(const float* p) {
#if defined(__CUDA_ARCH__)
  const float4 x = *reinterpret_cast<const float4*>(p);
  return {{x.x, x.y, x.z, x.w}};
#else
  return {{p[0], p[1], p[2], p[3]}};
#endif
}

// Item i of the lower triangle (s <= r) in row order: (0,0), (1,0), (1,1), (2,0), ...
GDN_HOST_DEVICE inline void lower_pair(int i, int& r, int& s) {
  r = 0;
  while (i > r) i -= ++r;
  s = i;
}

// out[n] = a[n] . b[n] (kDim values) for item i of a step: the item starts at the 4-value chunk
// i mod 32 and wraps, so that neighbouring items, each on its own rows, read different banks;
// four partial sums (one per position in a chunk) are added at the end.
template <int N>
GDN_HOST_DEVICE void dots_rotated(const float* const (&a)[N], const float* const (&b)[N], int i,
                                  float (&out)[N]) {
  constexpr int kChunks = kDim / 4;
  float s[N][4] = {};
  for (int c = 0; c < kChunks; ++c) {
    const int col = 4 * ((c + i) % kChunks);
    GDN_SHORT_CHUNK_UNROLL
    for (int n = 0; n < N; ++n) {
      const Vec4 x = load4(a[n] + col), y = load4(b[n] + col);
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v) s[n][v] = fmaf(x.v[v], y.v[v], s[n][v]);
    }
  }
  GDN_SHORT_CHUNK_UNROLL
  for (int n = 0; n < N; ++n) out[n] = (s[n][0] + s[n][1]) + (s[n][2] + s[n][3]);
}

// Item i of K S, Q S and K dS' (each element a sum over kk in order), for a chunk with S
// (kS) and dS' (kDS) or without; one pass reads both.
template <bool kS, bool kDS, class SFn, class DSFn>
GDN_HOST_DEVICE void state_tile(const GroupWork& gw, HeadWork& hw, int L, SFn S, DSFn dS, int i) {
  const int g = i / kColPairs, c0 = i % kColPairs, c1 = c0 + kColPairs;
  float ks[kGroupRows][2] = {}, qs[kGroupRows][2] = {}, kds[kGroupRows][2] = {};
  if constexpr (kS || kDS) {
    for (int kk = 0; kk < kDim; kk += 4) {
      float s0[4] = {}, s1[4] = {}, d0[4] = {}, d1[4] = {};
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v) {
        if constexpr (kS) s0[v] = S(kk + v, c0), s1[v] = S(kk + v, c1);
        if constexpr (kDS) d0[v] = dS(kk + v, c0), d1[v] = dS(kk + v, c1);
      }
      GDN_SHORT_CHUNK_UNROLL
      for (int u = 0; u < kGroupRows; ++u) {
        const int r = g + kRowGroups * u;
        if (r >= L) continue;
        const Vec4 k4 = load4(&gw.k[r][kk]);
        if constexpr (kS) {
          const Vec4 q4 = load4(&gw.q[r][kk]);
          GDN_SHORT_CHUNK_UNROLL
          for (int v = 0; v < 4; ++v) {
            ks[u][0] = fmaf(k4.v[v], s0[v], ks[u][0]);
            ks[u][1] = fmaf(k4.v[v], s1[v], ks[u][1]);
            qs[u][0] = fmaf(q4.v[v], s0[v], qs[u][0]);
            qs[u][1] = fmaf(q4.v[v], s1[v], qs[u][1]);
          }
        }
        if constexpr (kDS) {
          GDN_SHORT_CHUNK_UNROLL
          for (int v = 0; v < 4; ++v) {
            kds[u][0] = fmaf(k4.v[v], d0[v], kds[u][0]);
            kds[u][1] = fmaf(k4.v[v], d1[v], kds[u][1]);
          }
        }
      }
    }
  }
  GDN_SHORT_CHUNK_UNROLL
  for (int u = 0; u < kGroupRows; ++u) {
    const int r = g + kRowGroups * u;
    if (r >= L) continue;
    hw.ks[r][c0] = ks[u][0], hw.ks[r][c1] = ks[u][1];
    hw.qs[r][c0] = qs[u][0], hw.qs[r][c1] = qs[u][1];
    hw.kds[r][c0] = kds[u][0], hw.kds[r][c1] = kds[u][1];
  }
}

// Item i of dq += scale diag(e) dO S^T + dP K and
// dk += dP^T Q + diag(f) V_new dS'^T + dKS S^T + M K + M^T K   (dKS = -diag(e) dW'),
// for a chunk with S (kS) and dS' (kDS) or without.
template <bool kS, bool kDS, class SFn, class DSFn>
GDN_HOST_DEVICE void key_tile(GroupWork& gw, const HeadWork& hw, int L, float scale, SFn S, DSFn dS,
                              int i) {
  const int g = i / kColPairs, c0 = i % kColPairs, c1 = c0 + kColPairs;
  float os[kGroupRows][2] = {}, ws[kGroupRows][2] = {}, vds[kGroupRows][2] = {};
  if constexpr (kS || kDS) {
    for (int j = 0; j < kDim; j += 4) {
      float s0[4] = {}, s1[4] = {}, d0[4] = {}, d1[4] = {};
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v) {
        if constexpr (kS) s0[v] = S(c0, j + v), s1[v] = S(c1, j + v);
        if constexpr (kDS) d0[v] = dS(c0, j + v), d1[v] = dS(c1, j + v);
      }
      GDN_SHORT_CHUNK_UNROLL
      for (int u = 0; u < kGroupRows; ++u) {
        const int r = g + kRowGroups * u;
        if (r >= L) continue;
        if constexpr (kS) {
          const Vec4 o4 = load4(&hw.d_o[r][j]), w4 = load4(&hw.w[r][j]);  // w: dW'
          GDN_SHORT_CHUNK_UNROLL
          for (int v = 0; v < 4; ++v) {
            os[u][0] = fmaf(o4.v[v], s0[v], os[u][0]);
            os[u][1] = fmaf(o4.v[v], s1[v], os[u][1]);
            ws[u][0] = fmaf(w4.v[v], s0[v], ws[u][0]);
            ws[u][1] = fmaf(w4.v[v], s1[v], ws[u][1]);
          }
        }
        if constexpr (kDS) {
          const Vec4 n4 = load4(&hw.vnew[r][j]);
          GDN_SHORT_CHUNK_UNROLL
          for (int v = 0; v < 4; ++v) {
            vds[u][0] = fmaf(n4.v[v], d0[v], vds[u][0]);
            vds[u][1] = fmaf(n4.v[v], d1[v], vds[u][1]);
          }
        }
      }
    }
  }
  float dq[kGroupRows][2] = {}, dk[kGroupRows][2] = {};
  GDN_SHORT_CHUNK_UNROLL
  for (int u = 0; u < kGroupRows; ++u) {
    const int r = g + kRowGroups * u;
    if (r >= L) continue;
    GDN_SHORT_CHUNK_UNROLL
    for (int c = 0; c < 2; ++c) {
      dq[u][c] = scale * hw.e[r] * os[u][c];
      dk[u][c] = hw.f[r] * vds[u][c] - hw.e[r] * ws[u][c];
    }
  }
  for (int s0 = 0; s0 < L; s0 += 4) {
    float k0[4], k1[4], q0[4], q1[4];
    GDN_SHORT_CHUNK_UNROLL
    for (int v = 0; v < 4; ++v) {
      const bool row = s0 + v < L;
      k0[v] = row ? gw.k[s0 + v][c0] : 0.f, k1[v] = row ? gw.k[s0 + v][c1] : 0.f;
      q0[v] = row ? gw.q[s0 + v][c0] : 0.f, q1[v] = row ? gw.q[s0 + v][c1] : 0.f;
    }
    GDN_SHORT_CHUNK_UNROLL
    for (int u = 0; u < kGroupRows; ++u) {
      const int r = g + kRowGroups * u;
      if (r >= L) continue;
      const Vec4 dp4 = load4(&hw.dpg[r][s0]), dpt4 = load4(&hw.dpgt[r][s0]);
      const Vec4 m4 = load4(&hw.mm[r][s0]);
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v) {
        const int s = s0 + v;
        if (s >= L) continue;
        if (s <= r) {
          dq[u][0] = fmaf(dp4.v[v], k0[v], dq[u][0]);
          dq[u][1] = fmaf(dp4.v[v], k1[v], dq[u][1]);
        }
        if (s >= r) {
          dk[u][0] = fmaf(dpt4.v[v], q0[v], dk[u][0]);
          dk[u][1] = fmaf(dpt4.v[v], q1[v], dk[u][1]);
        }
        dk[u][0] = fmaf(m4.v[v], k0[v], dk[u][0]);
        dk[u][1] = fmaf(m4.v[v], k1[v], dk[u][1]);
      }
    }
  }
  GDN_SHORT_CHUNK_UNROLL
  for (int u = 0; u < kGroupRows; ++u) {
    const int r = g + kRowGroups * u;
    if (r >= L) continue;
    gw.dq[r][c0] += dq[u][0], gw.dq[r][c1] += dq[u][1];
    gw.dk[r][c0] += dk[u][0], gw.dk[r][c1] += dk[u][1];
  }
}

// state_tile / key_tile for the chunk's inputs.
template <class SFn, class DSFn>
GDN_HOST_DEVICE void state_products(const GroupWork& gw, HeadWork& hw, int L, StateInputs in, SFn S,
                                    DSFn dS, int i) {
  if (in.has_s && in.has_ds)
    state_tile<true, true>(gw, hw, L, S, dS, i);
  else if (in.has_s)
    state_tile<true, false>(gw, hw, L, S, dS, i);
  else if (in.has_ds)
    state_tile<false, true>(gw, hw, L, S, dS, i);
  else
    state_tile<false, false>(gw, hw, L, S, dS, i);
}

template <class SFn, class DSFn>
GDN_HOST_DEVICE void key_grads(GroupWork& gw, const HeadWork& hw, int L, float scale,
                               StateInputs in, SFn S, DSFn dS, int i) {
  if (in.has_s && in.has_ds)
    key_tile<true, true>(gw, hw, L, scale, S, dS, i);
  else if (in.has_s)
    key_tile<true, false>(gw, hw, L, scale, S, dS, i);
  else if (in.has_ds)
    key_tile<false, true>(gw, hw, L, scale, S, dS, i);
  else
    key_tile<false, false>(gw, hw, L, scale, S, dS, i);
}

// Item i of dS = eL dS' + scale Q^T diag(e) dO + K^T dKS, handed to dh0(kk, j, value).
template <class DSFn, class Dh0Fn>
GDN_HOST_DEVICE void start_state_grad(const GroupWork& gw, const HeadWork& hw, int L, float scale,
                                      StateInputs in, DSFn dS, Dh0Fn dh0, int i) {
  constexpr int kStride = kDim / kDh0Cols;
  const int j0 = i % kStride, k0 = (i / kStride) * kDh0Rows;
  float acc[kDh0Rows][kDh0Cols];
  GDN_SHORT_CHUNK_UNROLL
  for (int a = 0; a < kDh0Rows; ++a)
    GDN_SHORT_CHUNK_UNROLL
    for (int b = 0; b < kDh0Cols; ++b)
      acc[a][b] = in.has_ds ? hw.el * dS(k0 + a, j0 + kStride * b) : 0.f;
  for (int r = 0; r < L; ++r) {
    float od[kDh0Cols], wd[kDh0Cols];
    GDN_SHORT_CHUNK_UNROLL
    for (int b = 0; b < kDh0Cols; ++b) {
      od[b] = scale * hw.e[r] * hw.d_o[r][j0 + kStride * b];
      wd[b] = -hw.e[r] * hw.w[r][j0 + kStride * b];  // w: dW'
    }
    GDN_SHORT_CHUNK_UNROLL
    for (int a = 0; a < kDh0Rows; a += 4) {
      const Vec4 q4 = load4(&gw.q[r][k0 + a]), k4 = load4(&gw.k[r][k0 + a]);
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v)
        GDN_SHORT_CHUNK_UNROLL
        for (int b = 0; b < kDh0Cols; ++b)
          acc[a + v][b] = fmaf(q4.v[v], od[b], fmaf(k4.v[v], wd[b], acc[a + v][b]));
    }
  }
  GDN_SHORT_CHUNK_UNROLL
  for (int a = 0; a < kDh0Rows; ++a)
    GDN_SHORT_CHUNK_UNROLL
    for (int b = 0; b < kDh0Cols; ++b) dh0(k0 + a, j0 + kStride * b, acc[a][b]);
}

// One value head: inputs in hw (w = V, d_o, gam = the chunk-local cumsum of g, beta) and gw
// (q, k); S(kk, j) and dS(kk, j) read the start state and dS' = dht (kk: state row, j: value
// column). Leaves dv in hw.w, dg and dbeta in hw.dg, hw.dbeta, adds this head's dq, dk to
// gw.dq, gw.dk, and, with in.want_dh0, calls dh0(kk, j, value) for the gradient of the start
// state (the sequence's first chunk), after the last call of S (a caller may keep dh0 where S
// was).
template <class Exec, class SFn, class DSFn, class Dh0Fn>
GDN_HOST_DEVICE void head_backward(Exec& x, GroupWork& gw, HeadWork& hw, int L, float scale,
                                   StateInputs in, SFn S, DSFn dS, Dh0Fn dh0) {
  // Gates; K S, Q S, K dS' (L x 128, depth 128); K K^T, Q K^T, Gam (lower, depth 128).
  x.each_nowait(L, [&](int r) {
    hw.e[r] = expf(hw.gam[r]);
    hw.f[r] = expf(hw.gam[L - 1] - hw.gam[r]);
    if (r == L - 1) hw.el = hw.e[r];
  });
  x.each_nowait(kTiles, [&](int i) { state_products(gw, hw, L, in, S, dS, i); });
  x.each(L * (L + 1) / 2, [&](int i) {
    int r, s;
    lower_pair(i, r, s);
    float d[2];
    dots_rotated<2>({gw.k[r], gw.q[r]}, {gw.k[s], gw.k[s]}, i, d);
    hw.kkt[r][s] = d[0];
    hw.p[r][s] = d[1];
    hw.gm[r][s] = expf(hw.gam[r] - hw.gam[s]);
    hw.pgt[s][r] = hw.p[r][s] * hw.gm[r][s];
  });
  // A0 = (I + N)^-1, N = StrictLower(diag(beta) K K^T), by forward substitution down each column
  // (a column needs only itself: it stays in registers); Ag.  W' = V - diag(e) K S.
  x.each_nowait(L, [&](int s) {
    float col[kRows];
    GDN_SHORT_CHUNK_UNROLL
    for (int r = 0; r < kRows; ++r) {
      if (r >= L) break;
      float acc = 0.f;
      GDN_SHORT_CHUNK_UNROLL
      for (int t = 0; t < r; ++t)
        if (t >= s) acc = fmaf(hw.beta[r] * hw.kkt[r][t], col[t], acc);
      col[r] = r < s ? 0.f : r == s ? 1.f : -acc;
    }
    GDN_SHORT_CHUNK_UNROLL
    for (int r = 0; r < kRows; ++r) {
      if (r >= L) break;
      const float ag = r >= s ? hw.gm[r][s] * col[r] * hw.beta[s] : 0.f;
      hw.a0[r][s] = col[r];
      hw.ag[r][s] = ag;
      hw.agt[s][r] = ag;
    }
  });
  x.each(L * kDim, [&](int i) {
    const int r = i / kDim, j = i % kDim;
    hw.w[r][j] -= hw.e[r] * hw.ks[r][j];
  });
  // V_new = Ag W';  dV_new = scale Pm^T dO + diag(f) K dS'  (Pm = P o Gam, lower).
  x.each(kRowHalves * kDim, [&](int i) {
    const int j = i % kDim, h = i / kDim;
    float vn[kHalfRows] = {}, dvn[kHalfRows] = {};
    for (int s0 = 0; s0 < L; s0 += 4) {
      float ws[4], os[4];
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v) {
        const bool row = s0 + v < L;
        ws[v] = row ? hw.w[s0 + v][j] : 0.f;
        os[v] = row ? hw.d_o[s0 + v][j] : 0.f;
      }
      GDN_SHORT_CHUNK_UNROLL
      for (int u = 0; u < kHalfRows; ++u) {
        const int r = h + kRowHalves * u;
        if (r >= L) continue;
        const Vec4 a4 = load4(&hw.ag[r][s0]), p4 = load4(&hw.pgt[r][s0]);
        GDN_SHORT_CHUNK_UNROLL
        for (int v = 0; v < 4; ++v) {
          const int s = s0 + v;
          if (s <= r) vn[u] = fmaf(a4.v[v], ws[v], vn[u]);
          if (s >= r && s < L) dvn[u] = fmaf(p4.v[v], os[v], dvn[u]);
        }
      }
    }
    GDN_SHORT_CHUNK_UNROLL
    for (int u = 0; u < kHalfRows; ++u) {
      const int r = h + kRowHalves * u;
      if (r >= L) continue;
      hw.vnew[r][j] = vn[u];
      hw.dvnew[r][j] = scale * dvn[u] + hw.f[r] * hw.kds[r][j];
    }
  });
  // dPm = scale dO V_new^T (lower) -> dGam = dPm o P, dP = dPm o Gam;  dAg = dV_new W'^T (lower).
  x.each(L * (L + 1) / 2, [&](int i) {
    int r, s;
    lower_pair(i, r, s);
    float d[2];
    dots_rotated<2>({hw.d_o[r], hw.dvnew[r]}, {hw.vnew[s], hw.w[s]}, i, d);
    const float dpm = scale * d[0];
    hw.dgam[r][s] = dpm * hw.p[r][s];
    hw.dpg[r][s] = hw.dpgt[s][r] = dpm * hw.gm[r][s];
    hw.dag[r][s] = d[1];
  });
  // Through Ag: dA0 = dAg o Gam diag(beta), dGam += dAg o A0 diag(beta).  dW' = Ag^T dV_new,
  // over W' (dAg above was its last reader).
  x.each_nowait(L * L, [&](int i) {
    const int r = i / L, s = i % L;
    hw.da0[r][s] = s <= r ? hw.dag[r][s] * hw.gm[r][s] * hw.beta[s] : 0.f;
    if (s <= r) hw.dgam[r][s] += hw.dag[r][s] * hw.a0[r][s] * hw.beta[s];
  });
  x.each(kRowHalves * kDim, [&](int i) {
    const int j = i % kDim, h = i / kDim;
    float acc[kHalfRows] = {};
    for (int s0 = 0; s0 < L; s0 += 4) {
      float dv[4];
      GDN_SHORT_CHUNK_UNROLL
      for (int v = 0; v < 4; ++v) dv[v] = s0 + v < L ? hw.dvnew[s0 + v][j] : 0.f;
      GDN_SHORT_CHUNK_UNROLL
      for (int u = 0; u < kHalfRows; ++u) {
        const int r = h + kRowHalves * u;
        if (r >= L) continue;
        const Vec4 a4 = load4(&hw.agt[r][s0]);
        GDN_SHORT_CHUNK_UNROLL
        for (int v = 0; v < 4; ++v) {
          const int s = s0 + v;
          if (s >= r && s < L) acc[u] = fmaf(a4.v[v], dv[v], acc[u]);
        }
      }
    }
    GDN_SHORT_CHUNK_UNROLL
    for (int u = 0; u < kHalfRows; ++u) {
      const int r = h + kRowHalves * u;
      if (r < L) hw.w[r][j] = acc[u];
    }
  });
  // de_r = scale dO_r . (Q S)_r - dW'_r . (K S)_r,  df_r = (K dS')_r . V_new_r;
  // t = A0^T dA0 (the first half of dN = A0^T dA0 A0^T);  <dS', S>.
  x.each_nowait(L, [&](int r) {
    float d[3];
    dots_rotated<3>({hw.d_o[r], hw.w[r], hw.kds[r]}, {hw.qs[r], hw.ks[r], hw.vnew[r]}, r, d);
    hw.de[r] = scale * d[0] - d[1];
    hw.df[r] = d[2];
  });
  x.each_nowait(L * L, [&](int i) {
    const int r = i / L, s = i % L;
    float acc = 0.f;
    for (int u = 0; u < L; ++u) acc = fmaf(hw.a0[u][r], hw.da0[u][s], acc);
    hw.t[r][s] = acc;
  });
  const float del = x.sum(in.has_s && in.has_ds ? kDim * kDim : 0, [&](int i) {
    const int kk = i / kDim, j = i % kDim;
    return S(kk, j) * dS(kk, j);
  });
  // dN = t A0^T, M = diag(beta) StrictLower(-dN) (kept as M + M^T).  dgamma (the s = r terms
  // and f_{L-1}'s cancel exactly and are left out, as in the reference), each row's terms in the
  // order the reference adds them.
  x.each_nowait(L * L, [&](int i) {
    const int r = i / L, s = i % L;
    float dn = 0.f;
    for (int u = 0; u < L; ++u) dn = fmaf(hw.t[r][u], hw.a0[s][u], dn);
    hw.dn[r][s] = dn;
    if (s < r)
      hw.mm[r][s] = hw.mm[s][r] = hw.beta[r] * -dn;  // M[r][s] + M[s][r] with one term 0
    else if (s == r)
      hw.mm[r][r] = 0.f;
  });
  x.each(L, [&](int r) {
    float acc = hw.de[r] * hw.e[r];
    if (r < L - 1) acc -= hw.df[r] * hw.f[r];
    for (int s = 0; s < r; ++s) acc += hw.dgam[r][s] * hw.gm[r][s];
    for (int s = r + 1; s < L; ++s) acc -= hw.dgam[s][r] * hw.gm[s][r];
    if (r == L - 1) {
      float to_last = del * hw.el;
      for (int s = 0; s < L - 1; ++s) to_last += hw.df[s] * hw.f[s];
      acc += to_last;
    }
    hw.dgamma[r] = acc;
  });
  // dbeta (through Ag, then through N), dg = the reverse cumsum of dgamma;  dq, dk.
  x.each_nowait(L, [&](int s) {
    float acc = 0.f;
    for (int r = s; r < L; ++r) acc += hw.dag[r][s] * hw.gm[r][s] * hw.a0[r][s];
    for (int t = 0; t < s; ++t) acc += -hw.dn[s][t] * hw.kkt[s][t];
    hw.dbeta[s] = acc;
    float suffix = 0.f;
    for (int r = L - 1; r >= s; --r) suffix += hw.dgamma[r];
    hw.dg[s] = suffix;
  });
  x.each(kTiles, [&](int i) { key_grads(gw, hw, L, scale, in, S, dS, i); });
  // dS = eL dS' + scale Q^T diag(e) dO + K^T dKS: dh0 where the chunk starts its sequence.
  if (in.want_dh0)
    x.each(kTiles, [&](int i) { start_state_grad(gw, hw, L, scale, in, dS, dh0, i); });
}

}  // namespace gdn::bwd::short_chunk

#undef GDN_SHORT_CHUNK_UNROLL
