// The producer/consumer fused chunk loop (WarpRoles::ProducerConsumer; included by one .cu per
// V-block width). Same math, same order of every product as the cooperative loop
// (fused_chunk_loop.cuh), so its outputs are bit-identical; what changes is who waits for
// what. One CTA of 2 warpgroups per (segment, v-head, V-block of BV columns), Output mode
// only (CP pass 1 keeps the cooperative loop):
//   chain  (warps 0-3): the recurrence, the only serial part: S16 = 16-bit S, U = K S16,
//          W' = V - diag(e) U, Vd = (T diag(beta)) W', V' = diag(f) Vd, S = e_last S + K^T V'.
//          It also streams q, k, v, T diag(beta) of the next chunk in with cp.async and owns
//          the fp32 state in registers (warp w: state rows 32w..32w+31, chunk rows 16w..+15).
//   output (warps 4-7): O = scale (diag(e) Q S16 + (Gam o causal o Q K^T) Vd), the products
//          that are not on the chain (over half of the cooperative loop's mma.sync work),
//          for chunk c while the chain already works on chunk c+1 (warp w: chunk rows 16w..).
// Per chunk c with parity b = (c - first chunk) % 2, four named barriers pair the groups:
//   kReady+b    chain arrives: chunk c's stage landed, S16[b] written   -> output syncs
//   kQkFree+b   output arrives: done with q, k, gamma of chunk c, S16[b] -> chain syncs before
//               refilling that stage (next iteration) and rewriting S16[b] (two chunks on)
//   kVdReady+b  chain arrives: Vd[b] written                           -> output syncs
//   kDone+b     output arrives: done with Vd[b]                         -> chain syncs before
//               rewriting Vd[b] (two chunks on)
// The ring is 2 deep (stage = parity). After its loop the chain syncs the arrivals it has not
// consumed yet, so every barrier phase is matched when the CTA exits.
#pragma once

#include "fused_kernels.cuh"
#include "fused_named_barrier.cuh"
#include "gdn/variant_config.hpp"

namespace gdn::fused {

namespace pc {
inline constexpr int kGroup = 128;  // threads per warpgroup
inline constexpr int kBoth = 256;
inline constexpr int kChainSync = 1;  // chain warpgroup only
inline constexpr int kReady = 2;      // + parity
inline constexpr int kVdReady = 4;    // + parity
inline constexpr int kQkFree = 6;     // + parity
inline constexpr int kDone = 8;       // + parity
}  // namespace pc

template <int BV, class Elem>
__global__ void __launch_bounds__(kPcThreads, 1) chunk_loop_pc_kernel(FusedParams p) {
  using Ops = ElemOps<Elem>;
  constexpr int NT = BV / 8;  // 8-column n-tiles of the V-block
  const Dims& d = p.d;
  const int h = blockIdx.y, kh = h / d.group;
  const bool chain = threadIdx.x < pc::kGroup;
  const int tid = threadIdx.x % pc::kGroup;  // thread within its warpgroup
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int64_t item = blockIdx.x;

  Segment seg;
  if (p.segs) {
    seg = p.segs[item];
  } else {
    seg = {p.chunk_first[item], p.chunk_first[item + 1], static_cast<int32_t>(item),
           Segment::kUsed | Segment::kFirst | Segment::kLast};
  }
  if (!(seg.flags & Segment::kUsed)) return;  // both warpgroups: no barrier is touched
  const int v0 = blockIdx.z * BV;
  extern __shared__ __align__(128) char smem_raw[];
  const FusedPcSmem<BV> sm{FusedSmem<BV>{smem_raw}};
  const int64_t c_begin = seg.chunk_begin, c_end = seg.chunk_end;
  const int r0 = 16 * warp, ra = r0 + g, rb = ra + 8;

  if (!chain) {
    // ================================ output warpgroup ================================
    for (int64_t c = c_begin; c < c_end; ++c) {
      const int b = static_cast<int>((c - c_begin) % 2);  // parity = ring stage
      named_sync(pc::kReady + b, pc::kBoth);
      const SmemTile16 sQ = sm.ring.q(b), sK = sm.ring.k(b), sS = sm.s16(b);
      const float* gam = sm.ring.gam(b);
      // OI = Q S16, P = Q K^T for this warp's 16 chunk rows (depth 128).
      float OI[NT][4] = {}, P[kC / 8][4] = {};
#pragma unroll
      for (int kk = 0; kk < kK / 16; ++kk) {
        uint32_t aQ[4], bf[4];
        load_a(aQ, sQ, r0, 16 * kk);
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
          load_b_kn(bf, sS, 16 * kk, 16 * np);
          Ops::mma(OI[2 * np], aQ, bf[0], bf[1]);
          Ops::mma(OI[2 * np + 1], aQ, bf[2], bf[3]);
        }
#pragma unroll
        for (int np = 0; np < kC / 16; ++np) {
          load_b_nk(bf, sK, 16 * kk, 16 * np);
          Ops::mma(P[2 * np], aQ, bf[0], bf[1]);
          Ops::mma(P[2 * np + 1], aQ, bf[2], bf[3]);
        }
      }
      // Gate and mask P (exp only on or below the diagonal, where it is <= 1); OI *= e.
      const float ga = gam[ra], gb = gam[rb];
      const float ea = expf(ga), eb = expf(gb);
#pragma unroll
      for (int nj = 0; nj < kC / 8; ++nj) {
        const int s0 = 8 * nj + 2 * t;
        const float gs0 = gam[s0], gs1 = gam[s0 + 1];
        P[nj][0] = ra >= s0 ? P[nj][0] * expf(ga - gs0) : 0.f;
        P[nj][1] = ra >= s0 + 1 ? P[nj][1] * expf(ga - gs1) : 0.f;
        P[nj][2] = rb >= s0 ? P[nj][2] * expf(gb - gs0) : 0.f;
        P[nj][3] = rb >= s0 + 1 ? P[nj][3] * expf(gb - gs1) : 0.f;
      }
      uint32_t pa[kC / 16][4];
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
      named_arrive(pc::kQkFree + b, pc::kBoth);  // q, k, gamma, S16[b] no longer read

      named_sync(pc::kVdReady + b, pc::kBoth);
      const SmemTile16 sVd = sm.vd(b);
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
          uint32_t bf[4];
          load_b_kn(bf, sVd, 16 * kk, 16 * np);
          Ops::mma(OI[2 * np], pa[kk], bf[0], bf[1]);
          Ops::mma(OI[2 * np + 1], pa[kk], bf[2], bf[3]);
        }
      named_arrive(pc::kDone + b, pc::kBoth);  // Vd[b] no longer read

      const ChunkInfo ci = p.table[c];
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
    return;
  }

  // ================================= chain warpgroup ==================================
  float S[2][NT][4];
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < NT; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = 32 * warp + 16 * mi + g + (e >= 2 ? 8 : 0);
        const int col = v0 + 8 * nj + 2 * t + (e & 1);
        float x = 0.f;
        if (seg.flags & Segment::kFirst)
          x = p.h0 ? p.h0[staged::state_index(d, seg.seq, h, row, col)] : 0.f;
        else
          x = p.starts[((item * d.Hv + h) * kK + row) * kV + col];
        S[mi][nj][e] = x;
      }

  // Asynchronous loads of one chunk into ring stage s, by the chain's 128 threads.
  auto issue_loads = [&](int64_t chunk, int s) {
    const ChunkInfo ci = p.table[chunk];
    const Elem* kbase = static_cast<const Elem*>(p.k);
    const Elem* qbase = static_cast<const Elem*>(p.q);
    const Elem* vbase = static_cast<const Elem*>(p.v);
    for (int e = tid; e < kC * (kK / 8); e += pc::kGroup) {
      const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
      const bool valid = r < ci.len;
      const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hk + kh) * kK + c;
      cp_async_16(sm.ring.k(s).at(r, c), kbase + off, valid ? 16 : 0);
      cp_async_16(sm.ring.q(s).at(r, c), qbase + off, valid ? 16 : 0);
    }
    for (int e = tid; e < kC * (BV / 8); e += pc::kGroup) {
      const int r = e / (BV / 8), c = (e % (BV / 8)) * 8;
      const bool valid = r < ci.len;
      const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hv + h) * kV + v0 + c;
      cp_async_16(sm.ring.v(s).at(r, c), vbase + off, valid ? 16 : 0);
    }
    const uint16_t* tsrc = p.tbeta16 + (chunk * d.Hv + h) * int64_t(kC * kC);
    for (int e = tid; e < kC * (kC / 8); e += pc::kGroup) {
      const int r = e / (kC / 8), c = (e % (kC / 8)) * 8;
      cp_async_16(sm.ring.t(s).at(r, c), tsrc + r * kC + c, 16);
    }
  };
  // gamma (padded rows repeat the last valid one), thread tid < 64.
  auto fetch_gamma = [&](int64_t chunk) {
    const ChunkInfo ci = p.table[chunk];
    const int rr = tid < ci.len ? tid : ci.len - 1;
    return p.gcum[(ci.tok_begin + rr) * d.Hv + h];
  };

  if (c_begin < c_end) issue_loads(c_begin, 0);
  cp_async_commit();
  float gam_next = 0.f;
  if (tid < kC && c_begin < c_end) sm.ring.gam(0)[tid] = fetch_gamma(c_begin);

  for (int64_t c = c_begin; c < c_end; ++c) {
    const int it = static_cast<int>(c - c_begin);
    const int b = it % 2;  // parity = ring stage
    cp_async_wait(0);
    named_sync(pc::kChainSync, pc::kGroup);  // chunk c landed; the chain's reads of c-1 done
    if (it >= 1) named_sync(pc::kQkFree + (1 - b), pc::kBoth);  // output's reads of c-1 done
    if (c + 1 < c_end) issue_loads(c + 1, 1 - b);
    cp_async_commit();
    if (tid < kC && c + 1 < c_end) gam_next = fetch_gamma(c + 1);
    const SmemTile16 sK = sm.ring.k(b), sVin = sm.ring.v(b), sT = sm.ring.t(b), sS = sm.s16(b),
                     sW = sm.w(), sVd = sm.vd(b), sVp = sm.vp();
    const float* gam = sm.ring.gam(b);

    // 1. S16[b] (its last reader, the output's chunk c-2, arrived kQkFree before c-1 began).
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        const int row = 32 * warp + 16 * mi + g, col = 8 * nj + 2 * t;
        sS.pair(row, col) = Ops::pack(S[mi][nj][0], S[mi][nj][1]);
        sS.pair(row + 8, col) = Ops::pack(S[mi][nj][2], S[mi][nj][3]);
      }
    named_sync(pc::kChainSync, pc::kGroup);
    named_arrive(pc::kReady + b, pc::kBoth);

    // 2. U = K S16 for this warp's 16 chunk rows.
    float U[NT][4] = {};
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) {
      uint32_t aK[4];
      load_a(aK, sK, r0, 16 * kk);
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        uint32_t bf[4];
        load_b_kn(bf, sS, 16 * kk, 16 * np);
        Ops::mma(U[2 * np], aK, bf[0], bf[1]);
        Ops::mma(U[2 * np + 1], aK, bf[2], bf[3]);
      }
    }

    // 3. W' = V - diag(e) U.
    const float ga = gam[ra], gb = gam[rb];
    const float ea = expf(ga), eb = expf(gb);
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const int col = 8 * nj + 2 * t;
      const float2 va = Ops::unpack(sVin.pair(ra, col));
      const float2 vb = Ops::unpack(sVin.pair(rb, col));
      sW.pair(ra, col) = Ops::pack(va.x - ea * U[nj][0], va.y - ea * U[nj][1]);
      sW.pair(rb, col) = Ops::pack(vb.x - eb * U[nj][2], vb.y - eb * U[nj][3]);
    }
    named_sync(pc::kChainSync, pc::kGroup);  // all of W'

    // 4. Vd = (T diag(beta)) W'; Vd[b] for the output, V' = diag(f) Vd for the state.
    float VD[NT][4] = {};
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) {
      uint32_t a[4];
      load_a(a, sT, r0, 16 * kk);
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        uint32_t bf[4];
        load_b_kn(bf, sW, 16 * kk, 16 * np);
        Ops::mma(VD[2 * np], a, bf[0], bf[1]);
        Ops::mma(VD[2 * np + 1], a, bf[2], bf[3]);
      }
    }
    const float glast = gam[kC - 1];
    const float fa = expf(glast - ga), fb = expf(glast - gb);
    if (it >= 2) named_sync(pc::kDone + b, pc::kBoth);  // the output's chunk c-2 read Vd[b]
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const int col = 8 * nj + 2 * t;
      sVd.pair(ra, col) = Ops::pack(VD[nj][0], VD[nj][1]);
      sVd.pair(rb, col) = Ops::pack(VD[nj][2], VD[nj][3]);
      sVp.pair(ra, col) = Ops::pack(fa * VD[nj][0], fa * VD[nj][1]);
      sVp.pair(rb, col) = Ops::pack(fb * VD[nj][2], fb * VD[nj][3]);
    }
    named_sync(pc::kChainSync, pc::kGroup);  // Vd[b], V' complete
    named_arrive(pc::kVdReady + b, pc::kBoth);

    // 5. S = e_last S + K^T V' (this warp's 32 state rows).
    const float elast = expf(glast);
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
        uint32_t bf[4];
        load_b_kn(bf, sVp, 16 * kk, 16 * np);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          Ops::mma(S[mi][2 * np], aKt[mi], bf[0], bf[1]);
          Ops::mma(S[mi][2 * np + 1], aKt[mi], bf[2], bf[3]);
        }
      }
    }
    // gamma of chunk c+1 (its stage's previous readers: chunk c-1, released above).
    if (tid < kC && c + 1 < c_end) sm.ring.gam(1 - b)[tid] = gam_next;
  }

  // Match the output's arrivals not consumed in the loop: kQkFree of the last chunk, kDone of
  // the last two.
  const int64_t n = c_end - c_begin;
  if (n >= 1) named_sync(pc::kQkFree + static_cast<int>((n - 1) % 2), pc::kBoth);
  for (int64_t k = n >= 2 ? n - 2 : 0; k < n; ++k)
    named_sync(pc::kDone + static_cast<int>(k % 2), pc::kBoth);

  if (!((seg.flags & Segment::kLast) && p.ht)) return;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < NT; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = 32 * warp + 16 * mi + g + (e >= 2 ? 8 : 0);
        const int col = v0 + 8 * nj + 2 * t + (e & 1);
        p.ht[staged::state_index(d, seg.seq, h, row, col)] = S[mi][nj][e];
      }
}

template <int BV, class Elem>
cudaError_t launch_chunk_loop_pc_typed(const FusedParams& p, unsigned items, cudaStream_t stream) {
  const size_t smem = FusedPcSmem<BV>::bytes();
  cudaError_t err = cudaFuncSetAttribute(chunk_loop_pc_kernel<BV, Elem>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(items, static_cast<unsigned>(p.d.Hv), static_cast<unsigned>(kV / BV));
  chunk_loop_pc_kernel<BV, Elem><<<grid, kPcThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

#define GDN_FUSED_INSTANTIATE_CHUNK_LOOP_PC(BV)                                               \
  template <>                                                                                 \
  cudaError_t launch_chunk_loop_pc<BV>(const FusedParams& p, unsigned items,                  \
                                       cudaStream_t stream) {                                 \
    return p.d.in_bf16 ? launch_chunk_loop_pc_typed<BV, __nv_bfloat16>(p, items, stream)      \
                       : launch_chunk_loop_pc_typed<BV, __half>(p, items, stream);            \
  }                                                                                           \
  template <>                                                                                 \
  const void* chunk_loop_pc_symbol<BV>(bool bf16) {                                           \
    return bf16 ? reinterpret_cast<const void*>(chunk_loop_pc_kernel<BV, __nv_bfloat16>)      \
                : reinterpret_cast<const void*>(chunk_loop_pc_kernel<BV, __half>);            \
  }

}  // namespace gdn::fused
