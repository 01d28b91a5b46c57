// The per-chunk steps of the fused chunk loops, shared by the cooperative loop
// (forward/chunk_loop_coop.cuh) and the producer/consumer loop (forward/chunk_loop_pc.cuh), so
// both do the same products in the same order (their outputs are bit-identical; a GPU test holds them
// to it). Fragment ownership, with g = lane / 4, t = lane % 4 and the warp index within its
// 4-warp group:
//   state S (128 x BV fp32, registers): warp w owns rows 32w..32w+31 as S[2][NT][4]
//   chunk rows (U, OI, P, VD: 16 x BV or 16 x 64): warp w owns rows r0 = 16w, ra = r0 + g,
//   rb = ra + 8, columns 8 nj + 2t (+1)
// Every function is warp-synchronous (ldmatrix/mma); barriers are the caller's.
#pragma once

#include "forward/kernels.cuh"

namespace gdn::fused {

// The segment a CTA walks: an entry of the CP segment table, or (no CP) the whole sequence.
__device__ __forceinline__ Segment segment_of(const FusedParams& p, int64_t item) {
  if (p.segs) return p.segs[item];
  return {p.chunk_first[item], p.chunk_first[item + 1], static_cast<int32_t>(item),
          Segment::kUsed | Segment::kFirst | Segment::kLast};
}

// cp.async loads of one chunk into ring stage s, by `threads` threads numbered from tid:
// k (always), q (with_q: the output needs it), the V-block (with_v: not the M columns of CP
// pass 1) and T. Rows past the chunk's end are zero-filled.
template <int BV, class Elem>
__device__ __forceinline__ void issue_chunk_loads(const FusedParams& p, const FusedSmem<BV>& sm,
                                                  int64_t chunk, int s, int h, int v0,
                                                  bool with_q, bool with_v, int tid,
                                                  int threads) {
  const Dims& d = p.d;
  const int kh = h / d.group;
  const ChunkInfo ci = p.table[chunk];
  const Elem* kbase = static_cast<const Elem*>(p.k);
  const Elem* qbase = static_cast<const Elem*>(p.q);
  for (int e = tid; e < kC * (kK / 8); e += threads) {
    const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
    const bool valid = r < ci.len;
    const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hk + kh) * kK + c;
    cp_async_16(sm.k(s).at(r, c), kbase + off, valid ? 16 : 0);
    if (with_q) cp_async_16(sm.q(s).at(r, c), qbase + off, valid ? 16 : 0);
  }
  if (with_v) {
    const Elem* vbase = static_cast<const Elem*>(p.v);
    for (int e = tid; e < kC * (BV / 8); e += threads) {
      const int r = e / (BV / 8), c = (e % (BV / 8)) * 8;
      const bool valid = r < ci.len;
      const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hv + h) * kV + v0 + c;
      cp_async_16(sm.v(s).at(r, c), vbase + off, valid ? 16 : 0);
    }
  }
  const uint16_t* tsrc = p.t16 + (chunk * d.Hv + h) * int64_t(kC * kC);
  for (int e = tid; e < kC * (kC / 8); e += threads) {
    const int r = e / (kC / 8), c = (e % (kC / 8)) * 8;
    cp_async_16(sm.t(s).at(r, c), tsrc + r * kC + c, 16);
  }
}

// gamma of chunk row r < 64 (padded rows repeat the last valid one).
__device__ __forceinline__ float fetch_gamma(const FusedParams& p, int64_t chunk, int h, int r) {
  const ChunkInfo ci = p.table[chunk];
  const int rr = r < ci.len ? r : ci.len - 1;
  return p.gcum[(ci.tok_begin + rr) * p.d.Hv + h];
}

// beta of chunk row r < 64 (0 past the chunk's end, so that the row drops out of Vd).
__device__ __forceinline__ float fetch_beta(const FusedParams& p, int64_t chunk, int h, int r) {
  const ChunkInfo ci = p.table[chunk];
  return r < ci.len ? staged::load_beta(p.beta, (ci.tok_begin + r) * p.d.Hv + h, p.d) : 0.f;
}

// Calls f(S element, state row, column within the V-block) for this warp's state rows: two
// 16-row m-tiles, tile mi at row kWarpRows warp + kTileRows mi (mma.sync layouts: a warp's 32
// consecutive rows; two m64 warpgroup products: kWarpRows 16, kTileRows 64).
template <int NT, int kWarpRows = 32, int kTileRows = 16, class Float, class F>
__device__ __forceinline__ void for_each_state_element(Float (&S)[2][NT][4], int warp, int g,
                                                       int t, F f) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < NT; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        f(S[mi][nj][e], kWarpRows * warp + kTileRows * mi + g + (e >= 2 ? 8 : 0),
          8 * nj + 2 * t + (e & 1));
}

// The start state of this warp's 32 rows: CP pass 1 (transition) starts the M columns from
// the identity and the N columns from zero; otherwise h0 (or zero) on a sequence's first
// segment, the fixed-up start of the segment on the others.
// One element of it: state row `row`, value column `col` (every layout's loop reads its own
// fragment through this).
__device__ __forceinline__ void load_start_element(float& x, const FusedParams& p,
                                                   const Segment& seg, int64_t item, int h,
                                                   int row, int col, bool transition,
                                                   bool m_part) {
  const Dims& d = p.d;
  // Pass 1: M from the identity; N from zero, except on a sequence's first segment, whose N
  // starts from h0: its end state is then the next segment's start itself, and the fix-up
  // needs no M for it (cp_fixup_kernel; the first segment's M columns are not computed).
  if (transition)
    x = m_part ? (row == col ? 1.f : 0.f)
               : ((seg.flags & Segment::kFirst) && p.h0
                      ? p.h0[staged::state_index(d, seg.seq, h, row, col)]
                      : 0.f);
  else if (seg.flags & Segment::kFirst)
    x = p.h0 ? p.h0[staged::state_index(d, seg.seq, h, row, col)] : 0.f;
  else
    x = p.starts[((item * d.Hv + h) * kK + row) * kV + col];
}

template <int NT>
__device__ __forceinline__ void load_start_state(float (&S)[2][NT][4], const FusedParams& p,
                                                 const Segment& seg, int64_t item, int h, int v0,
                                                 bool transition, bool m_part, int warp, int g,
                                                 int t) {
  for_each_state_element<NT>(S, warp, g, t, [&](float& x, int row, int c) {
    load_start_element(x, p, seg, item, h, row, v0 + c, transition, m_part);
  });
}

// The end state of this warp's 32 rows: [M | N] columns col0.. of the transfer tensor (CP
// pass 1), or ht (a sequence's last segment, when the caller asked for it).
template <int NT>
__device__ __forceinline__ void store_end_state(const float (&S)[2][NT][4], const FusedParams& p,
                                                const Segment& seg, int64_t item, int h, int v0,
                                                int col0, bool transition, int warp, int g,
                                                int t) {
  const Dims& d = p.d;
  for_each_state_element<NT>(S, warp, g, t, [&](const float& x, int row, int c) {
    if (transition)
      p.transfer[((item * d.Hv + h) * kK + row) * (2 * kV) + col0 + c] = x;
    else
      p.ht[staged::state_index(d, seg.seq, h, row, v0 + c)] = x;
  });
}

// Step 1: the 16-bit copy of this warp's 32 state rows.
template <int NT, class Elem>
__device__ __forceinline__ void store_state16(const SmemTile16& sS, const float (&S)[2][NT][4],
                                              int warp, int g, int t) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const int row = 32 * warp + 16 * mi + g, col = 8 * nj + 2 * t;
      sS.pair(row, col) = Ops::pack(S[mi][nj][0], S[mi][nj][1]);
      sS.pair(row + 8, col) = Ops::pack(S[mi][nj][2], S[mi][nj][3]);
    }
}

// Step 2 for this warp's 16 chunk rows, depth 128: U = K S16 (kU), and OI = Q S16 and
// P = Q K^T (kOut; a run-time flag, as the cooperative loop decides it per launch: two
// specialised copies would cost it registers). One pass over depth shares the S16 fragments
// between U and OI.
template <int NT, class Elem, bool kU>
__device__ __forceinline__ void chunk_products(float (&U)[NT][4], float (&OI)[NT][4],
                                               float (&P)[kC / 8][4], const SmemTile16& sK,
                                               const SmemTile16& sQ, const SmemTile16& sS,
                                               int r0, bool kOut) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t aK[4], aQ[4], b[4];
    if (kU) load_a(aK, sK, r0, 16 * kk);
    if (kOut) load_a(aQ, sQ, r0, 16 * kk);
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      load_b_kn(b, sS, 16 * kk, 16 * np);
      if (kU) {
        Ops::mma(U[2 * np], aK, b[0], b[1]);
        Ops::mma(U[2 * np + 1], aK, b[2], b[3]);
      }
      if (kOut) {
        Ops::mma(OI[2 * np], aQ, b[0], b[1]);
        Ops::mma(OI[2 * np + 1], aQ, b[2], b[3]);
      }
    }
    if (kOut) {
#pragma unroll
      for (int np = 0; np < kC / 16; ++np) {
        load_b_nk(b, sK, 16 * kk, 16 * np);
        Ops::mma(P[2 * np], aQ, b[0], b[1]);
        Ops::mma(P[2 * np + 1], aQ, b[2], b[3]);
      }
    }
  }
}

// Step 3: diag(beta) W' = diag(beta) (V - diag(e) U) for this warp's rows (V = 0 for the M
// columns of CP pass 1), beta applied in fp32 before the rounding to 16 bits (T, the other
// operand of Vd, comes without beta: beta is never rounded alone).
template <int NT, class Elem>
__device__ __forceinline__ void store_w_prime(const SmemTile16& sW, const SmemTile16& sVin,
                                              const float (&U)[NT][4], float ea, float eb,
                                              float ba, float bb, int ra, int rb, int t,
                                              bool use_v) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    const int col = 8 * nj + 2 * t;
    const float2 va = use_v ? Ops::unpack(sVin.pair(ra, col)) : make_float2(0.f, 0.f);
    const float2 vb = use_v ? Ops::unpack(sVin.pair(rb, col)) : make_float2(0.f, 0.f);
    sW.pair(ra, col) = Ops::pack(ba * (va.x - ea * U[nj][0]), ba * (va.y - ea * U[nj][1]));
    sW.pair(rb, col) = Ops::pack(bb * (vb.x - eb * U[nj][2]), bb * (vb.y - eb * U[nj][3]));
  }
}

// Step 3 (output side): P o= Gam o causal (exp only on or below the diagonal, where it is
// <= 1), packed as A fragments; OI scaled by e.
template <int NT, class Elem>
__device__ __forceinline__ void gate_scores(float (&P)[kC / 8][4], uint32_t (&pa)[kC / 16][4],
                                            float (&OI)[NT][4], const float* gam, float ga,
                                            float gb, float ea, float eb, int ra, int rb, int t) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int nj = 0; nj < kC / 8; ++nj) {
    const int s0 = 8 * nj + 2 * t;
    const float gs0 = gam[s0], gs1 = gam[s0 + 1];
    P[nj][0] = ra >= s0 ? P[nj][0] * expf(ga - gs0) : 0.f;
    P[nj][1] = ra >= s0 + 1 ? P[nj][1] * expf(ga - gs1) : 0.f;
    P[nj][2] = rb >= s0 ? P[nj][2] * expf(gb - gs0) : 0.f;
    P[nj][3] = rb >= s0 + 1 ? P[nj][3] * expf(gb - gs1) : 0.f;
  }
#pragma unroll
  for (int kk = 0; kk < kC / 16; ++kk) {
    pa[kk][0] = Ops::pack(P[2 * kk][0], P[2 * kk][1]);
    pa[kk][1] = Ops::pack(P[2 * kk][2], P[2 * kk][3]);
    pa[kk][2] = Ops::pack(P[2 * kk + 1][0], P[2 * kk + 1][1]);
    pa[kk][3] = Ops::pack(P[2 * kk + 1][2], P[2 * kk + 1][3]);
  }
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    OI[nj][0] *= ea;
    OI[nj][1] *= ea;
    OI[nj][2] *= eb;
    OI[nj][3] *= eb;
  }
}

// Step 4: VD = T (diag(beta) W') for this warp's 16 rows (depth 64).
template <int NT, class Elem>
__device__ __forceinline__ void vd_product(float (&VD)[NT][4], const SmemTile16& sT,
                                           const SmemTile16& sW, int r0) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int kk = 0; kk < kC / 16; ++kk) {
    uint32_t a[4];
    load_a(a, sT, r0, 16 * kk);
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t b[4];
      load_b_kn(b, sW, 16 * kk, 16 * np);
      Ops::mma(VD[2 * np], a, b[0], b[1]);
      Ops::mma(VD[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// Step 4: Vd (for the output, when write_vd) and V' = diag(f) Vd (for the state).
template <int NT, class Elem>
__device__ __forceinline__ void store_vd(bool write_vd, const SmemTile16& sVd, const SmemTile16& sVp,
                                         const float (&VD)[NT][4], float fa, float fb, int ra,
                                         int rb, int t) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    const int col = 8 * nj + 2 * t;
    if (write_vd) {
      sVd.pair(ra, col) = Ops::pack(VD[nj][0], VD[nj][1]);
      sVd.pair(rb, col) = Ops::pack(VD[nj][2], VD[nj][3]);
    }
    sVp.pair(ra, col) = Ops::pack(fa * VD[nj][0], fa * VD[nj][1]);
    sVp.pair(rb, col) = Ops::pack(fb * VD[nj][2], fb * VD[nj][3]);
  }
}

// Step 5: S = e_last S + K^T V' for this warp's 32 state rows (depth 64).
template <int NT, class Elem>
__device__ __forceinline__ void update_state(float (&S)[2][NT][4], const SmemTile16& sK,
                                             const SmemTile16& sVp, float elast, int warp) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < NT; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) S[mi][nj][e] *= elast;
#pragma unroll
  for (int kk = 0; kk < kC / 16; ++kk) {
    uint32_t aKt[2][4];
    load_a_trans(aKt[0], sK, 32 * warp, 16 * kk);
    load_a_trans(aKt[1], sK, 32 * warp + 16, 16 * kk);
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t b[4];
      load_b_kn(b, sVp, 16 * kk, 16 * np);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        Ops::mma(S[mi][2 * np], aKt[mi], b[0], b[1]);
        Ops::mma(S[mi][2 * np + 1], aKt[mi], b[2], b[3]);
      }
    }
  }
}

// Step 5 (output side): OI += P Vd (depth 64).
template <int NT, class Elem>
__device__ __forceinline__ void accumulate_pvd(float (&OI)[NT][4], const uint32_t (&pa)[kC / 16][4],
                                               const SmemTile16& sVd) {
  using Ops = ElemOps<Elem>;
#pragma unroll
  for (int kk = 0; kk < kC / 16; ++kk)
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t b[4];
      load_b_kn(b, sVd, 16 * kk, 16 * np);
      Ops::mma(OI[2 * np], pa[kk], b[0], b[1]);
      Ops::mma(OI[2 * np + 1], pa[kk], b[2], b[3]);
    }
}

// o = scale OI for this warp's rows that lie inside the chunk.
template <int NT, class Elem>
__device__ __forceinline__ void store_output(const FusedParams& p, const float (&OI)[NT][4],
                                             int64_t chunk, int h, int v0, int ra, int rb,
                                             int t) {
  using Ops = ElemOps<Elem>;
  const Dims& d = p.d;
  const ChunkInfo ci = p.table[chunk];
  uint32_t* o = static_cast<uint32_t*>(p.o);
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    const int col = v0 + 8 * nj + 2 * t;
    if (ra < ci.len)
      o[(((ci.tok_begin + ra) * d.Hv + h) * kV + col) / 2] =
          Ops::pack(d.scale * OI[nj][0], d.scale * OI[nj][1]);
    if (rb < ci.len)
      o[(((ci.tok_begin + rb) * d.Hv + h) * kV + col) / 2] =
          Ops::pack(d.scale * OI[nj][2], d.scale * OI[nj][3]);
  }
}

}  // namespace gdn::fused
