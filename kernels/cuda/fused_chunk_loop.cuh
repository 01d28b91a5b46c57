// The fused forward chunk loop (included by one .cu per V-block width). One CTA of 4 warps per
// (segment, v-head, V-block of BV columns) walks its chunks in order with the fp32 state slice
// S (128 x BV) held in registers as mma accumulators (warp w owns state rows 32w..32w+31 and
// chunk rows 16w..16w+15). Per chunk, with e = exp(gamma), f = exp(gamma_last - gamma):
//   1. S16 = 16-bit copy of S in shared memory (the B operand of the next products)
//   2. U = K S16, OI = Q S16, P = Q K^T                 (tensor cores, depth 128)
//   3. W' = V - diag(e) U -> shared;  P o= Gam o causal (kept in registers as A fragments)
//   4. Vd = (T diag(beta)) W'      with T = Gam o A0; T diag(beta) comes 16-bit from the
//      prepare kernel -> shared as Vd (for O) and V' = diag(f) Vd (for S), in S16's bytes
//   5. S = e_last S + K^T V';  O = scale (diag(e) OI + P Vd) -> global
// The next chunks' q, k, v, T diag(beta) stream in with cp.async over a ring of `stages`
// buffers while this one computes; the gates of the next chunk are prefetched into registers.
// Shared memory (fused_params.cuh) is sized so that two BV = 32, 2-stage CTAs share an SM:
// with one 4-warp CTA per SM the per-chunk chain of dependent mma/ldmatrix/barriers left the
// tensor cores idle most of the time; a second resident CTA fills those gaps.
#pragma once

#include "fused_kernels.cuh"
#include "gdn/variant_config.hpp"

namespace gdn::fused {

template <int BV, class Elem>
__global__ void __launch_bounds__(kThreads, 1) chunk_loop_kernel(FusedParams p) {
  using Ops = ElemOps<Elem>;
  constexpr int NT = BV / 8;  // 8-column n-tiles of the V-block
  const Dims& d = p.d;
  const int h = blockIdx.y, kh = h / d.group;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t item = blockIdx.x;

  Segment seg;
  if (p.segs) {
    seg = p.segs[item];
  } else {
    seg = {p.chunk_first[item], p.chunk_first[item + 1], static_cast<int32_t>(item),
           Segment::kUsed | Segment::kFirst | Segment::kLast};
  }
  const bool transition = p.mode == Mode::Transition;
  if (!(seg.flags & Segment::kUsed) || (transition && (seg.flags & Segment::kLast))) return;
  const int col0 = blockIdx.z * BV;  // column in the (augmented, in pass 1) state
  const bool m_part = transition && col0 < kV;
  const int v0 = col0 % kV;
  const bool use_v = !m_part;
  const bool out = !transition;
  const int stages = p.stages;
  extern __shared__ __align__(128) char smem_raw[];
  const FusedSmem<BV> sm{smem_raw};

  // ---- start state -------------------------------------------------------------------
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
        if (transition)
          x = m_part && row == col ? 1.f : 0.f;
        else if (seg.flags & Segment::kFirst)
          x = p.h0 ? p.h0[staged::state_index(d, seg.seq, h, row, col)] : 0.f;
        else
          x = p.starts[((item * d.Hv + h) * kK + row) * kV + col];
        S[mi][nj][e] = x;
      }

  // ---- asynchronous loads of one chunk into ring stage s -------------------------------
  auto issue_loads = [&](int64_t chunk, int s) {
    const ChunkInfo ci = p.table[chunk];
    const Elem* kbase = static_cast<const Elem*>(p.k);
    const Elem* qbase = static_cast<const Elem*>(p.q);
    for (int e = threadIdx.x; e < kC * (kK / 8); e += kThreads) {
      const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
      const bool valid = r < ci.len;
      const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hk + kh) * kK + c;
      cp_async_16(sm.k(s).at(r, c), kbase + off, valid ? 16 : 0);
      if (out) cp_async_16(sm.q(s).at(r, c), qbase + off, valid ? 16 : 0);
    }
    if (use_v) {
      const Elem* vbase = static_cast<const Elem*>(p.v);
      for (int e = threadIdx.x; e < kC * (BV / 8); e += kThreads) {
        const int r = e / (BV / 8), c = (e % (BV / 8)) * 8;
        const bool valid = r < ci.len;
        const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hv + h) * kV + v0 + c;
        cp_async_16(sm.v(s).at(r, c), vbase + off, valid ? 16 : 0);
      }
    }
    const uint16_t* tsrc = p.tbeta16 + (chunk * d.Hv + h) * int64_t(kC * kC);
    for (int e = threadIdx.x; e < kC * (kC / 8); e += kThreads) {
      const int r = e / (kC / 8), c = (e % (kC / 8)) * 8;
      cp_async_16(sm.t(s).at(r, c), tsrc + r * kC + c, 16);
    }
  };
  // gamma (padded rows repeat the last valid one), thread r < 64.
  auto fetch_gamma = [&](int64_t chunk) {
    const ChunkInfo ci = p.table[chunk];
    const int r = threadIdx.x;
    const int rr = r < ci.len ? r : ci.len - 1;
    return p.gcum[(ci.tok_begin + rr) * d.Hv + h];
  };

  const int64_t c_begin = seg.chunk_begin, c_end = seg.chunk_end;
  for (int i = 0; i < stages - 1; ++i) {
    if (c_begin + i < c_end) issue_loads(c_begin + i, i);
    cp_async_commit();
  }
  float gam_next = 0.f;
  if (threadIdx.x < kC && c_begin < c_end) {
    gam_next = fetch_gamma(c_begin);
    sm.gam(0)[threadIdx.x] = gam_next;
  }

  const SmemTile16 sS = sm.s16(stages), sW = sm.w(stages), sVd = sm.vd(stages),
                   sVp = sm.vp(stages);
  const int r0 = 16 * warp, ra = r0 + g, rb = ra + 8;

  for (int64_t c = c_begin; c < c_end; ++c) {
    const int it = static_cast<int>(c - c_begin);
    const int s = it % stages;
    cp_async_wait(stages - 2);
    __syncthreads();  // chunk c landed; every reader of the stage refilled below is done
    if (c + stages - 1 < c_end) issue_loads(c + stages - 1, (it + stages - 1) % stages);
    cp_async_commit();
    if (threadIdx.x < kC && c + 1 < c_end) gam_next = fetch_gamma(c + 1);
    const SmemTile16 sK = sm.k(s), sQ = sm.q(s), sVin = sm.v(s), sT = sm.t(s);
    const float* gam = sm.gam(s);

    // 1. 16-bit copy of the state.
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        const int row = 32 * warp + 16 * mi + g, col = 8 * nj + 2 * t;
        sS.pair(row, col) = Ops::pack(S[mi][nj][0], S[mi][nj][1]);
        sS.pair(row + 8, col) = Ops::pack(S[mi][nj][2], S[mi][nj][3]);
      }
    __syncthreads();

    // 2. U = K S, OI = Q S, P = Q K^T for this warp's 16 chunk rows.
    float U[NT][4] = {}, OI[NT][4] = {}, P[kC / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) {
      uint32_t aK[4], aQ[4], b[4];
      load_a(aK, sK, r0, 16 * kk);
      if (out) load_a(aQ, sQ, r0, 16 * kk);
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        load_b_kn(b, sS, 16 * kk, 16 * np);
        Ops::mma(U[2 * np], aK, b[0], b[1]);
        Ops::mma(U[2 * np + 1], aK, b[2], b[3]);
        if (out) {
          Ops::mma(OI[2 * np], aQ, b[0], b[1]);
          Ops::mma(OI[2 * np + 1], aQ, b[2], b[3]);
        }
      }
      if (out) {
#pragma unroll
        for (int np = 0; np < kC / 16; ++np) {
          load_b_nk(b, sK, 16 * kk, 16 * np);
          Ops::mma(P[2 * np], aQ, b[0], b[1]);
          Ops::mma(P[2 * np + 1], aQ, b[2], b[3]);
        }
      }
    }

    // 3. W' = V - diag(e) U; gate and mask P; scale OI by e.
    const float ga = gam[ra], gb = gam[rb];
    const float ea = expf(ga), eb = expf(gb);
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const int col = 8 * nj + 2 * t;
      const float2 va = use_v ? Ops::unpack(sVin.pair(ra, col)) : make_float2(0.f, 0.f);
      const float2 vb = use_v ? Ops::unpack(sVin.pair(rb, col)) : make_float2(0.f, 0.f);
      sW.pair(ra, col) = Ops::pack(va.x - ea * U[nj][0], va.y - ea * U[nj][1]);
      sW.pair(rb, col) = Ops::pack(vb.x - eb * U[nj][2], vb.y - eb * U[nj][3]);
    }
    uint32_t pa[kC / 16][4];
    if (out) {
#pragma unroll
      for (int nj = 0; nj < kC / 8; ++nj) {
        const int s0 = 8 * nj + 2 * t;
        const float gs0 = gam[s0], gs1 = gam[s0 + 1];
        // exp only on or below the diagonal, where it is <= 1 (never overflows)
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
    __syncthreads();  // all of W' is in shared memory

    // 4. Vd = (T diag(beta)) W'   (A: this warp's 16 rows of T diag(beta), 16-bit from prepare)
    float VD[NT][4] = {};
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
    const float glast = gam[kC - 1];
    const float fa = expf(glast - ga), fb = expf(glast - gb);
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const int col = 8 * nj + 2 * t;
      if (out) {
        sVd.pair(ra, col) = Ops::pack(VD[nj][0], VD[nj][1]);
        sVd.pair(rb, col) = Ops::pack(VD[nj][2], VD[nj][3]);
      }
      sVp.pair(ra, col) = Ops::pack(fa * VD[nj][0], fa * VD[nj][1]);
      sVp.pair(rb, col) = Ops::pack(fb * VD[nj][2], fb * VD[nj][3]);
    }
    __syncthreads();  // Vd and V' complete (in S16's bytes: S16 was last read in step 2)

    // 5. S = e_last S + K^T V'  (this warp's 32 state rows); O = scale (OI + P Vd).
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
        uint32_t b[4];
        load_b_kn(b, sVp, 16 * kk, 16 * np);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          Ops::mma(S[mi][2 * np], aKt[mi], b[0], b[1]);
          Ops::mma(S[mi][2 * np + 1], aKt[mi], b[2], b[3]);
        }
      }
    }
    if (out) {
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
          uint32_t b[4];
          load_b_kn(b, sVd, 16 * kk, 16 * np);
          Ops::mma(OI[2 * np], pa[kk], b[0], b[1]);
          Ops::mma(OI[2 * np + 1], pa[kk], b[2], b[3]);
        }
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
    if (threadIdx.x < kC && c + 1 < c_end) sm.gam((it + 1) % stages)[threadIdx.x] = gam_next;
  }

  // ---- end state ------------------------------------------------------------------------
  const bool write_ht = !transition && (seg.flags & Segment::kLast) && p.ht;
  if (!transition && !write_ht) return;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int nj = 0; nj < NT; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = 32 * warp + 16 * mi + g + (e >= 2 ? 8 : 0);
        const int col = 8 * nj + 2 * t + (e & 1);
        if (transition)
          p.transfer[((item * d.Hv + h) * kK + row) * (2 * kV) + col0 + col] = S[mi][nj][e];
        else
          p.ht[staged::state_index(d, seg.seq, h, row, v0 + col)] = S[mi][nj][e];
      }
}

template <int BV, class Elem>
cudaError_t launch_chunk_loop_typed(const FusedParams& p, unsigned items, unsigned col_blocks,
                                    cudaStream_t stream) {
  static_assert(check_config(KernelConfig{.family = Family::Fused, .block_v = BV}).ok,
                "block_v outside the valid fused space");
  const size_t smem = FusedSmem<BV>::bytes(p.stages);
  cudaError_t err = cudaFuncSetAttribute(chunk_loop_kernel<BV, Elem>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  // All of the unified L1/shared array as shared memory: the carveout the driver would pick
  // for one CTA leaves no room for a second resident one (the kernel streams through L2).
  if (err == cudaSuccess)
    err = cudaFuncSetAttribute(chunk_loop_kernel<BV, Elem>,
                               cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(items, static_cast<unsigned>(p.d.Hv), col_blocks);
  chunk_loop_kernel<BV, Elem><<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

// Definitions behind the declarations in fused_kernels.cuh, instantiated per V-block width.
#define GDN_FUSED_INSTANTIATE_CHUNK_LOOP(BV)                                                  \
  template <>                                                                                 \
  cudaError_t launch_chunk_loop<BV>(const FusedParams& p, unsigned items, unsigned col_blocks, \
                                    cudaStream_t stream) {                                    \
    return p.d.in_bf16                                                                        \
               ? launch_chunk_loop_typed<BV, __nv_bfloat16>(p, items, col_blocks, stream)     \
               : launch_chunk_loop_typed<BV, __half>(p, items, col_blocks, stream);           \
  }                                                                                           \
  template <>                                                                                 \
  const void* chunk_loop_symbol<BV>(bool bf16) {                                              \
    return bf16 ? reinterpret_cast<const void*>(chunk_loop_kernel<BV, __nv_bfloat16>)         \
                : reinterpret_cast<const void*>(chunk_loop_kernel<BV, __half>);               \
  }

}  // namespace gdn::fused
