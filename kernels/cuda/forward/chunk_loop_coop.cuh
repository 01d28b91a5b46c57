// The fused forward chunk loop (included by one .cu per V-block width). One CTA of 4 warps per
// (segment, v-head, V-block of BV columns) walks its chunks in order with the fp32 state slice
// S (128 x BV) held in registers as mma accumulators (warp w owns state rows 32w..32w+31 and
// chunk rows 16w..16w+15). Per chunk, with e = exp(gamma), f = exp(gamma_last - gamma):
//   1. S16 = 16-bit copy of S in shared memory (the B operand of the next products)
//   2. U = K S16, OI = Q S16, P = Q K^T                 (tensor cores, depth 128)
//   3. diag(beta) W' = diag(beta) (V - diag(e) U) -> shared (beta applied in fp32, rounded
//      with W');  P o= Gam o causal (kept in registers as A fragments)
//   4. Vd = T (diag(beta) W')      with T = Gam o A0; T comes 16-bit from the
//      prepare kernel -> shared as Vd (for O) and V' = diag(f) Vd (for S), in S16's bytes
//   5. S = e_last S + K^T V';  O = scale (diag(e) OI + P Vd) -> global
// The next chunks' q, k, v, T stream in with cp.async over a ring of `stages`
// buffers while this one computes; the gates and beta of the next chunk are prefetched into
// registers.
// Shared memory (forward/params.cuh) is sized so that two BV = 32, 2-stage CTAs share an SM:
// with one 4-warp CTA per SM the per-chunk chain of dependent mma/ldmatrix/barriers left the
// tensor cores idle most of the time; a second resident CTA fills those gaps.
#pragma once

#include "forward/chunk_steps.cuh"
#include "gdn/variant_config.hpp"
#include "arch/launch_smem.cuh"

namespace gdn::fused {

template <int BV, class Elem>
__global__ void __launch_bounds__(kThreads, 1) chunk_loop_kernel(FusedParams p) {
  constexpr int NT = BV / 8;  // 8-column n-tiles of the V-block
  const int h = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t item = blockIdx.x;

  const Segment seg = segment_of(p, item);
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
  load_start_state<NT>(S, p, seg, item, h, v0, transition, m_part, warp, g, t);

  const int64_t c_begin = seg.chunk_begin, c_end = seg.chunk_end;
  for (int i = 0; i < stages - 1; ++i) {
    if (c_begin + i < c_end)
      issue_chunk_loads<BV, Elem>(p, sm, c_begin + i, i, h, v0, out, use_v, threadIdx.x, kThreads);
    cp_async_commit();
  }
  float gam_next = 0.f;
  if (threadIdx.x < kC && c_begin < c_end) {
    gam_next = fetch_gamma(p, c_begin, h, threadIdx.x);
    sm.gam(0)[threadIdx.x] = gam_next;
  }

  const SmemTile16 sS = sm.s16(stages), sW = sm.w(stages), sVd = sm.vd(stages),
                   sVp = sm.vp(stages);
  const int r0 = 16 * warp, ra = r0 + g, rb = ra + 8;
  // beta of this thread's W' rows, a chunk ahead (the loads' latency hides behind a chunk)
  float beta_a = 0.f, beta_b = 0.f;
  if (c_begin < c_end) beta_a = fetch_beta(p, c_begin, h, ra), beta_b = fetch_beta(p, c_begin, h, rb);

  for (int64_t c = c_begin; c < c_end; ++c) {
    const int it = static_cast<int>(c - c_begin);
    const int s = it % stages;
    cp_async_wait(stages - 2);
    __syncthreads();  // chunk c landed; every reader of the stage refilled below is done
    if (c + stages - 1 < c_end)
      issue_chunk_loads<BV, Elem>(p, sm, c + stages - 1, (it + stages - 1) % stages, h, v0, out,
                                  use_v, threadIdx.x, kThreads);
    cp_async_commit();
    if (threadIdx.x < kC && c + 1 < c_end) gam_next = fetch_gamma(p, c + 1, h, threadIdx.x);
    const float ba = beta_a, bb = beta_b;
    if (c + 1 < c_end) beta_a = fetch_beta(p, c + 1, h, ra), beta_b = fetch_beta(p, c + 1, h, rb);
    const SmemTile16 sK = sm.k(s), sQ = sm.q(s), sVin = sm.v(s), sT = sm.t(s);
    const float* gam = sm.gam(s);

    // 1. 16-bit copy of the state.
    store_state16<NT, Elem>(sS, S, warp, g, t);
    __syncthreads();

    // 2. U = K S, OI = Q S, P = Q K^T for this warp's 16 chunk rows.
    float U[NT][4] = {}, OI[NT][4] = {}, P[kC / 8][4] = {};
    chunk_products<NT, Elem, true>(U, OI, P, sK, sQ, sS, r0, out);

    // 3. diag(beta) W' = diag(beta) (V - diag(e) U); gate and mask P; scale OI by e.
    const float ga = gam[ra], gb = gam[rb];
    const float ea = expf(ga), eb = expf(gb);
    store_w_prime<NT, Elem>(sW, sVin, U, ea, eb, ba, bb, ra, rb, t, use_v);
    uint32_t pa[kC / 16][4];
    if (out) gate_scores<NT, Elem>(P, pa, OI, gam, ga, gb, ea, eb, ra, rb, t);
    __syncthreads();  // all of W' is in shared memory

    // 4. Vd = T (diag(beta) W')   (A: this warp's 16 rows of T, 16-bit from prepare)
    float VD[NT][4] = {};
    vd_product<NT, Elem>(VD, sT, sW, r0);
    const float glast = gam[kC - 1];
    const float fa = expf(glast - ga), fb = expf(glast - gb);
    store_vd<NT, Elem>(out, sVd, sVp, VD, fa, fb, ra, rb, t);
    __syncthreads();  // Vd and V' complete (in S16's bytes: S16 was last read in step 2)

    // 5. S = e_last S + K^T V'  (this warp's 32 state rows); O = scale (OI + P Vd).
    update_state<NT, Elem>(S, sK, sVp, expf(glast), warp);
    if (out) {
      accumulate_pvd<NT, Elem>(OI, pa, sVd);
      store_output<NT, Elem>(p, OI, c, h, v0, ra, rb, t);
    }
    if (threadIdx.x < kC && c + 1 < c_end) sm.gam((it + 1) % stages)[threadIdx.x] = gam_next;
  }

  // ---- end state ------------------------------------------------------------------------
  const bool write_ht = !transition && (seg.flags & Segment::kLast) && p.ht;
  if (transition || write_ht)
    store_end_state<NT>(S, p, seg, item, h, v0, col0, transition, warp, g, t);
}

template <int BV, class Elem>
cudaError_t launch_chunk_loop_typed(const FusedParams& p, unsigned items, unsigned col_blocks,
                                    cudaStream_t stream) {
  static_assert(check_config(KernelConfig{.family = Family::Fused, .block_v = BV}).ok,
                "block_v outside the valid fused space");
  const size_t smem = FusedSmem<BV>::bytes(p.stages);
  // Two CTAs per SM (the kernel streams through L2, it has no use for L1).
  const cudaError_t err = opt_into_shared_memory(
      reinterpret_cast<const void*>(chunk_loop_kernel<BV, Elem>), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(items, static_cast<unsigned>(p.d.Hv), col_blocks);
  chunk_loop_kernel<BV, Elem><<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

// Definitions behind the declarations in forward/kernels.cuh, instantiated per V-block width.
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
