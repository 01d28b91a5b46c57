// The producer/consumer fused chunk loop (WarpRoles::ProducerConsumer; included by one .cu per
// V-block width). Same math, same order of every product as the cooperative loop
// (forward/chunk_loop_coop.cuh), so its outputs are bit-identical; what changes is who waits for
// what. One CTA of 2 warpgroups per (segment, v-head, V-block of BV columns), Output mode
// only (CP pass 1 keeps the cooperative loop):
//   chain  (warps 0-3): the recurrence, the only serial part: S16 = 16-bit S, U = K S16,
//          diag(beta) W' = diag(beta) (V - diag(e) U), Vd = T (diag(beta) W'), V' = diag(f) Vd,
//          S = e_last S + K^T V'. It also streams q, k, v, T of the next chunk in with cp.async
//          and owns the fp32 state in registers (warp w: state rows 32w..32w+31, chunk rows
//          16w..+15).
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

#include "forward/chunk_steps.cuh"
#include "arch/named_barrier.cuh"
#include "gdn/variant_config.hpp"
#include "arch/launch_smem.cuh"

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
  constexpr int NT = BV / 8;  // 8-column n-tiles of the V-block
  const int h = blockIdx.y;
  const bool chain = threadIdx.x < pc::kGroup;
  const int tid = threadIdx.x % pc::kGroup;  // thread within its warpgroup
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int64_t item = blockIdx.x;

  const Segment seg = segment_of(p, item);
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
      float U[NT][4], OI[NT][4] = {}, P[kC / 8][4] = {};  // U: not computed here
      chunk_products<NT, Elem, false>(U, OI, P, sK, sQ, sS, r0, true);
      const float ga = gam[ra], gb = gam[rb];
      uint32_t pa[kC / 16][4];
      gate_scores<NT, Elem>(P, pa, OI, gam, ga, gb, expf(ga), expf(gb), ra, rb, t);
      named_arrive(pc::kQkFree + b, pc::kBoth);  // q, k, gamma, S16[b] no longer read

      named_sync(pc::kVdReady + b, pc::kBoth);
      accumulate_pvd<NT, Elem>(OI, pa, sm.vd(b));
      named_arrive(pc::kDone + b, pc::kBoth);  // Vd[b] no longer read
      store_output<NT, Elem>(p, OI, c, h, v0, ra, rb, t);
    }
    return;
  }

  // ================================= chain warpgroup ==================================
  float S[2][NT][4];
  load_start_state<NT>(S, p, seg, item, h, v0, false, false, warp, g, t);

  // The chain's 128 threads stream the chunks in (q for the output warpgroup too).
  if (c_begin < c_end)
    issue_chunk_loads<BV, Elem>(p, sm.ring, c_begin, 0, h, v0, true, true, tid, pc::kGroup);
  cp_async_commit();
  float gam_next = 0.f;
  if (tid < kC && c_begin < c_end) sm.ring.gam(0)[tid] = fetch_gamma(p, c_begin, h, tid);
  // beta of this thread's W' rows, a chunk ahead (the loads' latency hides behind a chunk)
  float beta_a = 0.f, beta_b = 0.f;
  if (c_begin < c_end) beta_a = fetch_beta(p, c_begin, h, ra), beta_b = fetch_beta(p, c_begin, h, rb);

  for (int64_t c = c_begin; c < c_end; ++c) {
    const int it = static_cast<int>(c - c_begin);
    const int b = it % 2;  // parity = ring stage
    cp_async_wait(0);
    named_sync(pc::kChainSync, pc::kGroup);  // chunk c landed; the chain's reads of c-1 done
    if (it >= 1) named_sync(pc::kQkFree + (1 - b), pc::kBoth);  // output's reads of c-1 done
    if (c + 1 < c_end)
      issue_chunk_loads<BV, Elem>(p, sm.ring, c + 1, 1 - b, h, v0, true, true, tid, pc::kGroup);
    cp_async_commit();
    if (tid < kC && c + 1 < c_end) gam_next = fetch_gamma(p, c + 1, h, tid);
    const float ba = beta_a, bb = beta_b;
    if (c + 1 < c_end) beta_a = fetch_beta(p, c + 1, h, ra), beta_b = fetch_beta(p, c + 1, h, rb);
    const SmemTile16 sK = sm.ring.k(b), sVin = sm.ring.v(b), sT = sm.ring.t(b), sS = sm.s16(b),
                     sW = sm.w(), sVd = sm.vd(b), sVp = sm.vp();
    const float* gam = sm.ring.gam(b);

    // 1. S16[b] (its last reader, the output's chunk c-2, arrived kQkFree before c-1 began).
    store_state16<NT, Elem>(sS, S, warp, g, t);
    named_sync(pc::kChainSync, pc::kGroup);
    named_arrive(pc::kReady + b, pc::kBoth);

    // 2. U = K S16 for this warp's 16 chunk rows.
    float U[NT][4] = {}, OI[NT][4], P[kC / 8][4];  // OI, P: the output warpgroup's
    chunk_products<NT, Elem, true>(U, OI, P, sK, sK, sS, r0, false);

    // 3. diag(beta) W' = diag(beta) (V - diag(e) U).
    const float ga = gam[ra], gb = gam[rb];
    store_w_prime<NT, Elem>(sW, sVin, U, expf(ga), expf(gb), ba, bb, ra, rb, t, true);
    named_sync(pc::kChainSync, pc::kGroup);  // all of W'

    // 4. Vd = T (diag(beta) W'); Vd[b] for the output, V' = diag(f) Vd for the state.
    float VD[NT][4] = {};
    vd_product<NT, Elem>(VD, sT, sW, r0);
    const float glast = gam[kC - 1];
    if (it >= 2) named_sync(pc::kDone + b, pc::kBoth);  // the output's chunk c-2 read Vd[b]
    store_vd<NT, Elem>(true, sVd, sVp, VD, expf(glast - ga), expf(glast - gb), ra, rb, t);
    named_sync(pc::kChainSync, pc::kGroup);  // Vd[b], V' complete
    named_arrive(pc::kVdReady + b, pc::kBoth);

    // 5. S = e_last S + K^T V' (this warp's 32 state rows).
    update_state<NT, Elem>(S, sK, sVp, expf(glast), warp);
    // gamma of chunk c+1 (its stage's previous readers: chunk c-1, released above).
    if (tid < kC && c + 1 < c_end) sm.ring.gam(1 - b)[tid] = gam_next;
  }

  // Match the output's arrivals not consumed in the loop: kQkFree of the last chunk, kDone of
  // the last two.
  const int64_t n = c_end - c_begin;
  if (n >= 1) named_sync(pc::kQkFree + static_cast<int>((n - 1) % 2), pc::kBoth);
  for (int64_t k = n >= 2 ? n - 2 : 0; k < n; ++k)
    named_sync(pc::kDone + static_cast<int>(k % 2), pc::kBoth);

  if ((seg.flags & Segment::kLast) && p.ht)
    store_end_state<NT>(S, p, seg, item, h, v0, v0, false, warp, g, t);
}

template <int BV, class Elem>
cudaError_t launch_chunk_loop_pc_typed(const FusedParams& p, unsigned items, cudaStream_t stream) {
  const size_t smem = FusedPcSmem<BV>::bytes();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(chunk_loop_pc_kernel<BV, Elem>), smem);
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
