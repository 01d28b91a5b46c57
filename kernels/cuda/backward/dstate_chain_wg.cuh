// The reverse state-gradient chain on wgmma with TMA loads (the chunked backward's
// ColumnWarps roles): the chunk step of dstate_chain.cuh with its three dependent products
// issued as warpgroup products, both operands in shared memory, its inputs brought in by a
// producer and the products that do not depend on dS formed beside the chain by a warpgroup of
// their own, so that the chain's warps issue only the chain's instructions (the mma.sync chain
// spends most of a step issuing its cp.async address arithmetic and waiting on it: ncu, 2/4
// heads, 1 x 32768, 0.27 issued warps per scheduler, fixed-latency waits the top stall).
// One CTA of 512 threads per (sequence or CP segment, v-head, 64-column V-block):
//   warpgroups 0, 1  the chain, each for 32 of the block's columns (the chain never mixes
//                    columns, so the two share only the loaded tiles and never wait for each
//                    other); 160 registers (setmaxnreg);
//   warpgroup 2      the inputs: per chunk, where dO enters, dVin = scale P^T dO (64 x 64) and
//                    Xq = scale Q^T diag(e) dO (128 x 64) as 16-bit tiles; 152 registers;
//   warpgroup 3      the producer: warp 0's first thread issues the chain's TMA copies (k, T,
//                    e/f/beta) into a 2-stage ring, warp 1's the inputs' (k, q, the dO
//                    block, e/f/beta) into one buffer of their own; 40 registers (two
//                    loops of TMA coordinates spill at 24).
// The inputs do not wait for the chain's ring: they release their buffer as soon as their
// products have read it and hand dVin and Xq over through a 2-slot ring of their own, so they
// run up to two chunks ahead of the chain (sharing the chain's ring, they waited for the
// chain's release of a stage, and the chain then waited for them: ncu, 2/4 heads, 1 x 32768,
// the chain warps' top stall). mbarriers: the chain ring's full and empty, the inputs' full and
// empty, the hand-over's ready and free. With the inputs in the kernel the backward writes and
// reads back no dVin or Xq (48 KB per (chunk, v-head, V-block) through HBM, and a launch,
// before: chain_inputs.cu, which the cooperative chain still uses, with the same products and
// roundings).
// A chain warpgroup's dS (128 x 32, fp32) lives in the accumulators of two m64n32 products:
// half mi holds state rows 64 mi .. + 63, warp w of the warpgroup its rows 64 mi + 16 w + g
// (+ 8), columns 8 j + 2 t (+ 1). Two warpgroups of 32 columns rather than one of 64 halve
// each thread's epilogue work, which with the stores is most of a step's instructions. Per
// chunk (e, f, beta from the prepare kernel's gate_ef):
//   0. (inputs) P^T = K Q^T o Gam^T, anti-causal (64 x 64, depth 128: A = k, B = q, both
//      K-major), gated and packed in registers; dVin = scale P^T dO (depth 64: A registers,
//      B = dO, MN-major); E = scale diag(e) dO -> 16-bit tile; Xq = Q^T E, two m64 halves
//      (depth 64: A = Q^T, q's tile M-major, B = E)
//   1. dS' = dS -> 16-bit tile (the next two products' B operand) and to dstate16
//   2. Y = K dS'            64 x 32, depth 128: A = k (K-major), B = dS' (MN-major)
//      dVn = dVin + diag(f) Y -> dvnew16 (+ its residual in short chunks), 16-bit tile
//   3. W = T^T dVn          64 x 32, depth 64: A = T^T (T's tile, M-major), B = dVn
//      dW' = diag(beta) W -> dv;  Edw = -diag(e) dW' -> 16-bit tile
//   4. dS = e_last dS + Xq + K^T Edw   two m64 halves, depth 64: A = K^T (k's tile, M-major,
//      64-column half mi), B = Edw
// The same roundings as the mma.sync chain and chain_inputs.cu (16-bit P^T, E, dVin, Xq, dS',
// dVn, Edw; fp32 sums; e and f the same expf of the same gamma), so the two agree to the fp32
// summation order.
#pragma once

#include "arch/grid_dependency.cuh"
#include "arch/named_barrier.cuh"
#include "arch/tma.cuh"
#include "arch/wgmma.cuh"
#include "bwd_run.cuh"  // kChainWgBV, the V-block
#include "dstate_chain.cuh"
#include "wg_fragments.cuh"  // zero_rows_past_end

namespace gdn::bwd {

inline constexpr int kChainWgGroups = 2;                          // chain warpgroups
inline constexpr int kChainWgMathThreads = 128 * kChainWgGroups;
inline constexpr int kChainWgInputsGroup = kChainWgGroups;        // warpgroup 2
inline constexpr int kChainWgProducerGroup = kChainWgGroups + 1;  // warpgroup 3
inline constexpr int kChainWgThreads = 128 * (kChainWgGroups + 2);
inline constexpr int kChainWgBarrier = 1;  // named barriers 1, 2: one per chain warpgroup
inline constexpr int kChainWgInputsBarrier = kChainWgBarrier + kChainWgGroups;  // 3
inline constexpr int kChainWgCols = kChainWgBV / kChainWgGroups;  // a warpgroup's: m64n32
// Beside the local kernel (ChainParams::ready): the chain warps hand each chunk, once its
// stores are issued, to a publisher thread (warp 2 of the producer warpgroup) through a ring
// of this many mbarrier pairs; the publisher's fence and count release stay off the chain.
inline constexpr int kChainWgPublishSlots = 4;
// Registers per thread after setmaxnreg: 128 x (40 + 2 x 160 + 152) = 65,536.
inline constexpr int kChainWgProducerRegs = 40;
inline constexpr int kChainWgChainRegs = 160;
inline constexpr int kChainWgInputsRegs = 152;
static_assert(128 * (kChainWgProducerRegs + kChainWgGroups * kChainWgChainRegs + kChainWgInputsRegs) <=
                  65536,
              "the register file of one CTA per SM");

// Shared memory: every 16-bit tile is a fused::WgTile16 (128-byte swizzle) at a 1024-byte
// aligned offset. Per chain ring stage: k (64 x 128, two 64-column halves, 16 KB), T (64 x 64,
// 8 KB), e, f, beta (3 x 64 fp32 in 1 KB). The inputs' buffer: k and q (16 KB each), the dO
// block (64 x 64, 8 KB), e, f, beta and gamma (4 x 64 fp32 in 1 KB). Per hand-over slot: dVin
// (64 x 64, 8 KB) and Xq (128 x 64, 16 KB). Each chain warpgroup's tiles dS' (128 x 32, 16 KB),
// dVn and Edw (64 x 32, 8 KB each; the 32 columns at the start of each 128-byte row, so that
// every product's B operand starts on an atom); the inputs' E (64 x 64, 8 KB); the mbarriers.
// 211 KB: one CTA per SM.
struct ChainWgSmem {
  static constexpr size_t kKBytes = size_t(kC) * kK * 2;
  static constexpr size_t kTBytes = size_t(kC) * 64 * 2;
  static constexpr size_t kVBytes = size_t(kC) * 64 * 2;
  static constexpr size_t kStateBytes = size_t(kK) * 64 * 2;
  static constexpr size_t kGateBytes = 3 * kC * 4;  // e, f, beta: the bulk copy; gamma after
  static constexpr size_t kStageBytes = kKBytes + kTBytes + 1024;        // chain ring
  static constexpr size_t kInputsOffset = kChainStages * kStageBytes;    // inputs' buffer
  static constexpr size_t kInputsBytes = 2 * kKBytes + kVBytes + 1024;
  static constexpr size_t kSlotOffset = kInputsOffset + kInputsBytes;    // hand-over ring
  static constexpr size_t kSlotBytes = kVBytes + kStateBytes;
  static constexpr size_t kChainOffset = kSlotOffset + kChainStages * kSlotBytes;
  static constexpr size_t kGroupBytes = kStateBytes + 2 * kVBytes;  // one warpgroup's tiles
  static constexpr size_t kEOffset = kChainOffset + kChainWgGroups * kGroupBytes;
  static constexpr size_t kBarrierOffset = kEOffset + kVBytes;
  static constexpr int kBarriers = 4 * kChainStages + 2 + 2 * kChainWgPublishSlots;
  static constexpr size_t bytes() { return kBarrierOffset + kBarriers * sizeof(uint64_t); }
  static_assert(kStageBytes % 1024 == 0 && kInputsBytes % 1024 == 0 && kSlotBytes % 1024 == 0 &&
                    kGateBytes + kC * 4 <= 1024,
                "wgmma operand tiles start on 1024-byte boundaries");
  // Transaction bytes: the chain's stage (k, T, e/f/beta) and the inputs' (k, q, dO, e/f/beta).
  static constexpr uint32_t kStageTx = uint32_t(kKBytes + kTBytes + kGateBytes);
  static constexpr uint32_t kInputsTx = uint32_t(2 * kKBytes + kVBytes + kGateBytes);

  char* base;
  __device__ __forceinline__ fused::WgTile16 tile(char* at, int rows) const {
    return {reinterpret_cast<uint16_t*>(at), rows};
  }
  // The chain ring.
  __device__ __forceinline__ char* stage(int s) const { return base + s * kStageBytes; }
  __device__ __forceinline__ fused::WgTile16 k(int s) const { return tile(stage(s), kC); }
  __device__ __forceinline__ fused::WgTile16 t(int s) const { return tile(stage(s) + kKBytes, kC); }
  __device__ __forceinline__ float* ef(int s) const {  // e, f, beta: 64 each
    return reinterpret_cast<float*>(stage(s) + kKBytes + kTBytes);
  }
  // The inputs' buffer.
  __device__ __forceinline__ char* in() const { return base + kInputsOffset; }
  __device__ __forceinline__ fused::WgTile16 in_k() const { return tile(in(), kC); }
  __device__ __forceinline__ fused::WgTile16 in_q() const { return tile(in() + kKBytes, kC); }
  __device__ __forceinline__ fused::WgTile16 in_do() const { return tile(in() + 2 * kKBytes, kC); }
  __device__ __forceinline__ float* in_ef() const {  // e, f, beta, gamma: 64 each
    return reinterpret_cast<float*>(in() + 2 * kKBytes + kVBytes);
  }
  // The hand-over ring.
  __device__ __forceinline__ char* slot(int s) const { return base + kSlotOffset + s * kSlotBytes; }
  __device__ __forceinline__ fused::WgTile16 dvin(int s) const { return tile(slot(s), kC); }
  __device__ __forceinline__ fused::WgTile16 xq(int s) const { return tile(slot(s) + kVBytes, kK); }
  // The chain warpgroups' tiles and the inputs' E.
  __device__ __forceinline__ char* group(int wg) const { return base + kChainOffset + wg * kGroupBytes; }
  __device__ __forceinline__ fused::WgTile16 ds16(int wg) const { return tile(group(wg), kK); }
  __device__ __forceinline__ fused::WgTile16 dvn(int wg) const {
    return tile(group(wg) + kStateBytes, kC);
  }
  __device__ __forceinline__ fused::WgTile16 e_dw(int wg) const {
    return tile(group(wg) + kStateBytes + kVBytes, kC);
  }
  __device__ __forceinline__ fused::WgTile16 e_do() const { return tile(base + kEOffset, kC); }
  // mbarriers.
  __device__ __forceinline__ uint64_t* bar(int i) const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + i;
  }
  __device__ __forceinline__ uint64_t* full(int s) const { return bar(s); }
  __device__ __forceinline__ uint64_t* empty(int s) const { return bar(kChainStages + s); }
  __device__ __forceinline__ uint64_t* ready(int s) const { return bar(2 * kChainStages + s); }
  __device__ __forceinline__ uint64_t* free_slot(int s) const { return bar(3 * kChainStages + s); }
  __device__ __forceinline__ uint64_t* in_full() const { return bar(4 * kChainStages); }
  __device__ __forceinline__ uint64_t* in_empty() const { return bar(4 * kChainStages + 1); }
  // Chunk n's stores issued by every chain warp (pub_full), published (pub_empty): slot
  // n % kChainWgPublishSlots.
  __device__ __forceinline__ uint64_t* pub_full(int i) const { return bar(4 * kChainStages + 2 + i); }
  __device__ __forceinline__ uint64_t* pub_empty(int i) const {
    return bar(4 * kChainStages + 2 + kChainWgPublishSlots + i);
  }
};

// The chain's producer thread: chunk n of the segment (walked from its last chunk) into ring
// stage n % 2 once the chain has released that stage's previous chunk (n - 2): k (two
// 64-column halves of the q/k head), T, e/f/beta.
__device__ __forceinline__ void produce_chain_chunks(const ChainParams& p, const ChainWgSmem& sm,
                                                     int64_t first, int64_t last, int h) {
  const Dims& d = p.d;
  const int hk = h / d.group;
  for (int64_t c = last - 1; c >= first; --c) {
    const int n = static_cast<int>(last - 1 - c), b = n % 2;
    // The k-th release of stage b ends chunk b + 2 k: chunk n - 2's is release n / 2 - 1.
    if (n >= 2) fused::mbarrier_wait_parity(sm.empty(b), static_cast<uint32_t>((n / 2 - 1) % 2));
    const int tok = static_cast<int>(p.table[c].tok_begin);
    const int pair = static_cast<int>(c * d.Hv + h);  // the rows below fit the encoders' int32
    uint64_t* bar = sm.full(b);
    fused::mbarrier_arrive_expect_tx(bar, ChainWgSmem::kStageTx);
    fused::tma_load_3d(sm.k(b).p, &p.tmap_k, 0, hk, tok, bar);
    fused::tma_load_3d(sm.k(b).at(0, 64), &p.tmap_k, 64, hk, tok, bar);
    fused::tma_load_2d(sm.t(b).p, &p.tmap_t, 0, pair * kC, bar);
    fused::bulk_load(sm.ef(b), p.gate_ef + int64_t(pair) * (3 * kC),
                     uint32_t(ChainWgSmem::kGateBytes), bar);
  }
}

// The publisher thread (beside the local kernel): once every chain warp has handed chunk c
// over (its dstate16, dvnew16 and dv stores issued before the warp's arrival, which releases
// them to the CTA), a GPU-scope fence makes them visible to other CTAs (cumulative) and the
// chunk's count for this v-head rises by one; the local kernel waits for one per V-block.
__device__ __forceinline__ void publish_chunk_counts(const ChainParams& p, const ChainWgSmem& sm,
                                                     int64_t first, int64_t last, int h) {
  int it = 0;
  for (int64_t c = last - 1; c >= first; --c, ++it) {
    const int ps = it % kChainWgPublishSlots, round = it / kChainWgPublishSlots;
    fused::mbarrier_wait_parity(sm.pub_full(ps), static_cast<uint32_t>(round % 2));
    __threadfence();
    atomicAdd(p.ready + c * p.d.Hv + h, 1);
    fused::mbarrier_arrive(sm.pub_empty(ps));
  }
}

// The inputs' producer thread: chunk n into the inputs' buffer once the inputs have read chunk
// n - 1: k and q (two 64-column halves each), the dO block of the V-block, e/f/beta.
__device__ __forceinline__ void produce_input_chunks(const ChainParams& p, const ChainWgSmem& sm,
                                                     int64_t first, int64_t last, int h, int v0) {
  const Dims& d = p.d;
  const int hk = h / d.group;
  for (int64_t c = last - 1; c >= first; --c) {
    const int n = static_cast<int>(last - 1 - c);
    if (n >= 1) fused::mbarrier_wait_parity(sm.in_empty(), static_cast<uint32_t>((n - 1) % 2));
    const int tok = static_cast<int>(p.table[c].tok_begin);
    const int pair = static_cast<int>(c * d.Hv + h);
    uint64_t* bar = sm.in_full();
    fused::mbarrier_arrive_expect_tx(bar, ChainWgSmem::kInputsTx);
    fused::tma_load_3d(sm.in_k().p, &p.tmap_k, 0, hk, tok, bar);
    fused::tma_load_3d(sm.in_k().at(0, 64), &p.tmap_k, 64, hk, tok, bar);
    fused::tma_load_3d(sm.in_q().p, &p.tmap_q, 0, hk, tok, bar);
    fused::tma_load_3d(sm.in_q().at(0, 64), &p.tmap_q, 64, hk, tok, bar);
    fused::tma_load_3d(sm.in_do().p, &p.tmap_do, v0, h, tok, bar);
    fused::bulk_load(sm.in_ef(), p.gate_ef + int64_t(pair) * (3 * kC),
                     uint32_t(ChainWgSmem::kGateBytes), bar);
  }
}

// Makes warpgroup wg's shared-memory writes visible to its next wgmma (async proxy) and to its
// other threads.
__device__ __forceinline__ void chain_wg_publish(int wg) {
  fused::fence_proxy_async_shared();
  fused::named_sync(kChainWgBarrier + wg, 128);
}

// A wgmma descriptor's start-address step (bytes / 16) for k16 step kk from its depth-0
// descriptor: K-major 64 x 128 tile, k steps of 32 bytes, its two 64-column halves 8 KB apart
// (nk_step); MN-major, 16 rows of 128 bytes per step (kRowStep16). Shared addresses stay below
// 2^18 bytes, so the field never carries.
__device__ __forceinline__ constexpr uint64_t nk_step(int kk) {
  return uint64_t((kk / 4) * (kC * 128) + (kk % 4) * 32) / 16;
}
inline constexpr uint64_t kRowStep16 = 16 * 128 / 16;

// Warpgroup 2, where dO enters: per chunk of the segment, once the inputs' buffer holds it, the
// rows past a short chunk's end zeroed, dVin and Xq formed (step 0 above), the buffer released,
// and the two handed over in slot n % 2 once the chain has released that slot's chunk n - 2.
// tid: 0 .. 127.
template <class Elem>
__device__ __forceinline__ void chain_inputs_wg(const ChainParams& p, const ChainWgSmem& sm,
                                                int64_t first, int64_t last, int h, int tid) {
  using Ops = fused::ElemOps<Elem>;
  const Dims& d = p.d;
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int ra = 16 * warp + g, rb = ra + 8;  // this thread's rows of the 64-row products
  const fused::WgTile16 sK = sm.in_k(), sQ = sm.in_q(), sO = sm.in_do(), sE = sm.e_do();
  const uint64_t d_k = sK.desc_nk(0, 0), d_q = sQ.desc_nk(0, 0), d_o = sO.desc_kn(0, 0),
                 d_e = sE.desc_kn(0, 0);
  const uint64_t d_qt[2] = {sQ.desc_kn(0, 0), sQ.desc_kn(0, 64)};
  float* const gam = sm.in_ef() + 3 * kC;
  const float* const ev = sm.in_ef();
  // gamma of row tid (< 64) of a chunk (rows past a chunk's end repeat its last row's, as
  // chain_inputs.cu's); [Ttot, Hv] has no TMA box per head. Read a chunk ahead, after the
  // chunk's last fence: a proxy fence waits for every load the thread has in flight.
  const auto gamma_of = [&](const ChunkInfo& ci) {
    const int r = tid < ci.len ? tid : static_cast<int>(ci.len) - 1;
    return tid < kC ? p.gcum[(ci.tok_begin + r) * d.Hv + h] : 0.f;
  };
  ChunkInfo ci = last > first ? p.table[last - 1] : ChunkInfo{};
  ChunkInfo ahead = last - 1 > first ? p.table[last - 2] : ChunkInfo{};  // the next chunk's
  float gam_next = last > first ? gamma_of(ci) : 0.f;
  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c), s = it % kChainStages;
    const int len = static_cast<int>(ci.len);
    // gamma's quarter of the buffer is not a copy's: it is free once chunk it - 1 was read.
    if (tid < kC) gam[tid] = gam_next;
    fused::mbarrier_wait_parity(sm.in_full(), static_cast<uint32_t>(it % 2));
    if (len < kC) {
      static_assert(ChainWgSmem::kKBytes == 2 * ChainWgSmem::kVBytes, "k, q, dO: 8 KB tiles in a row");
      zero_rows_past_end(sK.p, 5, len, tid);  // k's halves, q's, the dO block
      fused::fence_proxy_async_shared();
    }
    fused::named_sync(kChainWgInputsBarrier, 128);  // rows zeroed, gamma in place
    // P^T = K Q^T (64 x 64, depth 128); meanwhile E = scale diag(e) dO -> its tile.
    float PT[8][4];
    fused::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk)
      fused::wgmma_ss<8, Elem, false, false>(PT, d_k + nk_step(kk), d_q + nk_step(kk), kk > 0);
    fused::wgmma_commit();
#pragma unroll
    for (int u = tid; u < kC * 8; u += 128) {  // 16-byte groups: E and dO share the layout
      const float w = d.scale * ev[u / 8];
      const uint4 o = reinterpret_cast<const uint4*>(sO.p)[u];
      const uint32_t in[4] = {o.x, o.y, o.z, o.w};
      uint32_t out[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 x = Ops::unpack(in[e]);
        out[e] = Ops::pack(w * x.x, w * x.y);
      }
      reinterpret_cast<uint4*>(sE.p)[u] = make_uint4(out[0], out[1], out[2], out[3]);
    }
    fused::wgmma_wait<0>();
    fused::fence_accumulators(PT);
    // P^T[i][j] = (k_i . q_j) exp(gamma_j - gamma_i) for j >= i, else 0; packed as the A
    // fragments of depth j (an m16n8 C fragment pair is an m16k16 A fragment).
    const float ga = gam[ra], gb = gam[rb];
    uint32_t pa[kC / 16][4];
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int nj = 2 * kk + half, j0 = 8 * nj + 2 * t;
        // Every exponential formed, then selected (no divergent branches): above the diagonal
        // it may overflow, and the select drops it.
        const float gj0 = gam[j0], gj1 = gam[j0 + 1];
        const float e0a = expf(gj0 - ga), e1a = expf(gj1 - ga), e0b = expf(gj0 - gb),
                    e1b = expf(gj1 - gb);
        const float x0 = j0 >= ra ? PT[nj][0] * e0a : 0.f;
        const float x1 = j0 + 1 >= ra ? PT[nj][1] * e1a : 0.f;
        const float x2 = j0 >= rb ? PT[nj][2] * e0b : 0.f;
        const float x3 = j0 + 1 >= rb ? PT[nj][3] * e1b : 0.f;
        pa[kk][2 * half] = Ops::pack(x0, x1);
        pa[kk][2 * half + 1] = Ops::pack(x2, x3);
      }
    fused::fence_proxy_async_shared();
    fused::named_sync(kChainWgInputsBarrier, 128);  // E complete
    // The next chunk's gamma and the one after's table entry, in flight beside the products.
    if (c - 1 >= first) {
      gam_next = gamma_of(ahead);
      ci = ahead;
      if (c - 2 >= first) ahead = p.table[c - 2];
    }
    // dVin = P^T dO (depth 64, A from registers) and Xq = Q^T E (two m64 halves, depth 64).
    float DV[8][4], XQ[2][8][4];  // the first depth step overwrites
    fused::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk)
      fused::wgmma_m64n64k16<Elem, true>(DV, pa[kk], d_o + kk * kRowStep16, kk > 0);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
        fused::wgmma_ss<8, Elem, true, true>(XQ[mi], d_qt[mi] + kk * kRowStep16,
                                             d_e + kk * kRowStep16, kk > 0);
    fused::wgmma_commit();
    fused::wgmma_wait<0>();
    fused::fence_accumulators(DV);
    fused::fence_accumulators(XQ[0]);
    fused::fence_accumulators(XQ[1]);
    // Every read of the buffer (and of E) is done: the producer may load the next chunk.
    __syncwarp();
    if (lane == 0) fused::mbarrier_arrive(sm.in_empty());
    // The hand-over: slot s once the chain has read its chunk it - 2 (the k-th release of slot
    // s ends chunk s + 2 k).
    if (it >= 2) fused::mbarrier_wait_parity(sm.free_slot(s), static_cast<uint32_t>((it / 2 - 1) % 2));
    const fused::WgTile16 sDvin = sm.dvin(s), sXq = sm.xq(s);
#pragma unroll
    for (int nj = 0; nj < 8; ++nj) {
      const int col = 8 * nj + 2 * t;
      sDvin.pair(ra, col) = Ops::pack(d.scale * DV[nj][0], d.scale * DV[nj][1]);
      sDvin.pair(rb, col) = Ops::pack(d.scale * DV[nj][2], d.scale * DV[nj][3]);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        sXq.pair(64 * mi + ra, col) = Ops::pack(XQ[mi][nj][0], XQ[mi][nj][1]);
        sXq.pair(64 * mi + rb, col) = Ops::pack(XQ[mi][nj][2], XQ[mi][nj][3]);
      }
    }
    __syncwarp();
    if (lane == 0) fused::mbarrier_arrive(sm.ready(s));
  }
}

// kPublish: beside the local kernel (p.ready set, the pass with outputs); a separate
// instance, so that the chain without it keeps its code (its step time moves with it).
template <class Elem, bool kPublish>
__global__ void __launch_bounds__(kChainWgThreads, 1)
    dstate_chain_wg_kernel(const __grid_constant__ ChainParams p) {
  using Ops = fused::ElemOps<Elem>;
  constexpr int NT = kChainWgCols / 8;
  const Dims& d = p.d;
  // Beside the local kernel: it may launch once every CTA of this grid runs, so that the
  // chunks it waits for always come (grid_dependency.cuh). CP pass 1 before the recompute's
  // state loop: that loop may launch at once (it reads nothing this grid writes).
  if (kPublish || p.early_dependents) allow_dependents_to_launch();
  ChainItem ch;
  if (!chain_item(p, kChainWgBV, ch)) return;
  const int h = ch.h, v0 = ch.v0;
  const bool outputs = !ch.transition;
  extern __shared__ __align__(1024) char smem_raw[];  // wgmma operand tiles: 1024-byte aligned
  const ChainWgSmem sm{smem_raw};
  const int64_t first = ch.seg.chunk_begin, last = ch.seg.chunk_end;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kChainStages; ++s) {
      fused::mbarrier_init(sm.full(s), 1);
      fused::mbarrier_init(sm.empty(s), kChainWgMathThreads / 32);  // every chain warp
      fused::mbarrier_init(sm.ready(s), 4);                          // the inputs' warps
      fused::mbarrier_init(sm.free_slot(s), kChainWgMathThreads / 32);
    }
    fused::mbarrier_init(sm.in_full(), 1);
    fused::mbarrier_init(sm.in_empty(), 4);
    for (int i = 0; i < (kPublish ? kChainWgPublishSlots : 0); ++i) {
      fused::mbarrier_init(sm.pub_full(i), kChainWgMathThreads / 32);  // every chain warp
      fused::mbarrier_init(sm.pub_empty(i), 1);                        // the publisher
    }
    fused::fence_mbarrier_init();
  }
  __syncthreads();  // the last CTA-wide barrier: the roles part below
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;  // warpgroup, its thread
  if (wg == kChainWgProducerGroup) {
    fused::setmaxnreg_dec<kChainWgProducerRegs>();
    if (tid == 0) produce_chain_chunks(p, sm, first, last, h);
    if (tid == 32) produce_input_chunks(p, sm, first, last, h, v0);
    if (tid == 64 && kPublish) publish_chunk_counts(p, sm, first, last, h);
    return;
  }
  if (wg == kChainWgInputsGroup) {
    fused::setmaxnreg_inc<kChainWgInputsRegs>();
    chain_inputs_wg<Elem>(p, sm, first, last, h, tid);
    return;
  }
  fused::setmaxnreg_inc<kChainWgChainRegs>();

  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wc = kChainWgCols * wg;  // the warpgroup's first column within the V-block
  // dS (this warpgroup's 32 columns of the block) from the item's start.
  float S[2][NT][4];
  fused::for_each_state_element<NT, 16, 64>(
      S, warp, g, t, [&](float& x, int row, int c) { x = ch.start(row, wc + c); });

  const int ra = 16 * warp + g, rb = ra + 8;  // this thread's chunk rows in 64-row products
  const fused::WgTile16 sDS = sm.ds16(wg), sDvn = sm.dvn(wg), sEdw = sm.e_dw(wg);
  // Addresses formed once: integer arithmetic was most of a step's instructions (ncu SASS
  // counts: IMAD, LOP3, SHF and IADD3 over half of 2,600 per warp-step), so the loop only adds
  // compile-time offsets to these.
  // - The 32-bit pair of (row, 8 j + 2 t) in a tile: row 32 + xo[j] (this warpgroup's tiles,
  //   columns 0 .. 31) or row 32 + xs[j] (the shared 64-column tiles, columns wc + ...): every
  //   row this thread touches is g modulo 8, so its swizzled 16-byte group is (group ^ g).
  int xo[NT], xs[NT];
#pragma unroll
  for (int nj = 0; nj < NT; ++nj) {
    xo[nj] = ((nj ^ g) << 2) + t;
    xs[nj] = (((wc / 8 + nj) ^ g) << 2) + t;
  }
  uint32_t* const ds_a = reinterpret_cast<uint32_t*>(sDS.p) + ra * 32;   // rows ra (+ 8, + 64 mi)
  uint32_t* const dvn_s = reinterpret_cast<uint32_t*>(sDvn.p) + ra * 32;
  uint32_t* const edw_s = reinterpret_cast<uint32_t*>(sEdw.p) + ra * 32;
  // - wgmma descriptors at depth 0; a k16 step adds its byte offset / 16 to the start-address
  //   field (shared addresses stay below 2^18 bytes, so the field never carries).
  const uint64_t d_ds = sDS.desc_kn(0, 0), d_dvn = sDvn.desc_kn(0, 0), d_edw = sEdw.desc_kn(0, 0);
  ChunkInfo next = last > first ? p.table[last - 1] : ChunkInfo{};

  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c), s = it % kChainStages;
    const ChunkInfo ci = next;
    if (c - 1 >= first) next = p.table[c - 1];  // used next chunk: its latency hides here
    // The stage's loads (and rows past a short chunk's end zeroed), then dVin and Xq in the
    // hand-over slot of the same index.
    fused::mbarrier_wait_parity(sm.full(s), static_cast<uint32_t>((it / 2) % 2));
    if (ci.len < kC) {  // a sequence's last chunk, cut short (uniform over the CTA)
      zero_rows_past_end(sm.k(s).p, 2, static_cast<int>(ci.len), tid);  // k's two halves
      chain_wg_publish(wg);
    }
    fused::mbarrier_wait_parity(sm.ready(s), static_cast<uint32_t>((it / 2) % 2));
    const fused::WgTile16 sK = sm.k(s), sT = sm.t(s);
    const uint32_t* const in_a = reinterpret_cast<const uint32_t*>(sm.dvin(s).p) + ra * 32;
    const uint32_t* const xq_a = reinterpret_cast<const uint32_t*>(sm.xq(s).p) + ra * 32;
    const uint64_t d_knk = sK.desc_nk(0, 0), d_kkn0 = sK.desc_kn(0, 0), d_kkn1 = sK.desc_kn(0, 64);
    const uint64_t d_t = sT.desc_kn(0, 0);
    const float* ev = sm.ef(s);
    const float* fv = ev + kC;
    const float* bv = ev + 2 * kC;  // beta (0 past the chunk's end)

    // Every global store is issued while the next product runs, after the barrier that
    // publishes its operand: the stores stay off the chain's critical path.
    // 1. dS' -> the 16-bit tile (rows 64 mi + ra and + 8: 2048 mi and 256 pairs further), the
    //    pairs kept for dstate16.
    uint32_t ds_pairs[2][NT][2];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        ds_pairs[mi][nj][0] = Ops::pack(S[mi][nj][0], S[mi][nj][1]);
        ds_pairs[mi][nj][1] = Ops::pack(S[mi][nj][2], S[mi][nj][3]);
        ds_a[2048 * mi + xo[nj]] = ds_pairs[mi][nj][0];
        ds_a[2048 * mi + 256 + xo[nj]] = ds_pairs[mi][nj][1];
      }
    chain_wg_publish(wg);

    // 2. Y = K dS' (64 x 32, depth 128); meanwhile dS' -> dstate16 from the kept pairs (dS
    //    itself is not touched while a product is in flight: ptxas would make its reads wait for
    //    the product, as it did for the former dS = e_last dS + Xq here).
    float Y[NT][4];
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) Y[nj][0] = Y[nj][1] = Y[nj][2] = Y[nj][3] = 0.f;
    fused::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk)
      fused::wgmma_ss<NT, Elem, false, true>(Y, d_knk + nk_step(kk), d_ds + kk * kRowStep16, true);
    fused::wgmma_commit();
    if (outputs) {
      // dstate16 [chunk, Hv, K, V]: this thread's pairs at row (64 mi + ra (+ 8)) x 64 + 4 nj.
      uint32_t* const dst = reinterpret_cast<uint32_t*>(p.dstate16 + (c * d.Hv + h) * int64_t(kK * kV) +
                                                        v0 + wc) + ra * (kV / 2) + t;
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nj = 0; nj < NT; ++nj) {
          dst[mi * 64 * (kV / 2) + 4 * nj] = ds_pairs[mi][nj][0];
          dst[mi * 64 * (kV / 2) + 8 * (kV / 2) + 4 * nj] = ds_pairs[mi][nj][1];
        }
    }
    const float elast = ev[kC - 1];  // e of the chunk's last row (padded rows repeat it)
    const float fa = fv[ra], fb = fv[rb], ea = ev[ra], eb = ev[rb], ba = bv[ra], bb = bv[rb];
    fused::wgmma_wait<0>();
    fused::fence_accumulators(Y);
    // dS = e_last dS + Xq: step 4's first half (dS is not read again before it).
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        const float2 x0 = Ops::unpack(xq_a[2048 * mi + xs[nj]]);
        const float2 x1 = Ops::unpack(xq_a[2048 * mi + 256 + xs[nj]]);
        S[mi][nj][0] = fmaf(S[mi][nj][0], elast, x0.x);
        S[mi][nj][1] = fmaf(S[mi][nj][1], elast, x0.y);
        S[mi][nj][2] = fmaf(S[mi][nj][2], elast, x1.x);
        S[mi][nj][3] = fmaf(S[mi][nj][3], elast, x1.y);
      }
    // dVn = dVin + diag(f) Y -> the tile; the 16-bit pairs kept for the stores.
    uint32_t dvn_a[NT], dvn_b[NT];
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const float2 ia = Ops::unpack(in_a[xs[nj]]), ib = Ops::unpack(in_a[256 + xs[nj]]);
      const float a0 = ia.x + fa * Y[nj][0], a1 = ia.y + fa * Y[nj][1];
      const float b0 = ib.x + fb * Y[nj][2], b1 = ib.y + fb * Y[nj][3];
      dvn_a[nj] = Ops::pack(a0, a1);
      dvn_b[nj] = Ops::pack(b0, b1);
      dvn_s[xo[nj]] = dvn_a[nj];
      dvn_s[256 + xo[nj]] = dvn_b[nj];
    }
    // This warp has read the hand-over slot (dVin here, Xq above): the inputs may refill it.
    __syncwarp();
    if (lane == 0) fused::mbarrier_arrive(sm.free_slot(s));
    chain_wg_publish(wg);  // all of dVn in the tile

    // 3. W = T^T dVn (64 x 32, depth 64); meanwhile dVn -> dvnew16.
    // [Ttot, Hv, V] rows of this thread's two chunk rows, as pair pointers at column 2 t.
    const int64_t el_a = ((ci.tok_begin + ra) * d.Hv + h) * kV + v0 + wc;
    const int64_t el_b = el_a + int64_t(8) * d.Hv * kV;
    const bool in_row_a = outputs && ra < ci.len, in_row_b = outputs && rb < ci.len;
    float W[NT][4];
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) W[nj][0] = W[nj][1] = W[nj][2] = W[nj][3] = 0.f;
    fused::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk)
      fused::wgmma_ss<NT, Elem, true, true>(W, d_t + kk * kRowStep16, d_dvn + kk * kRowStep16, true);
    fused::wgmma_commit();
    {
      uint32_t* const na = reinterpret_cast<uint32_t*>(p.dvnew16 + el_a) + t;
      uint32_t* const nb = reinterpret_cast<uint32_t*>(p.dvnew16 + el_b) + t;
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        if (in_row_a) na[4 * nj] = dvn_a[nj];
        if (in_row_b) nb[4 * nj] = dvn_b[nj];
      }
    }
    fused::wgmma_wait<0>();
    fused::fence_accumulators(W);
    // dW' = diag(beta) W (kept packed for dv); -diag(e) dW' -> the tile.
    uint32_t dv_a[NT], dv_b[NT];
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const float w0 = ba * W[nj][0], w1 = ba * W[nj][1], w2 = bb * W[nj][2], w3 = bb * W[nj][3];
      dv_a[nj] = Ops::pack(w0, w1);
      dv_b[nj] = Ops::pack(w2, w3);
      edw_s[xo[nj]] = Ops::pack(-ea * w0, -ea * w1);
      edw_s[256 + xo[nj]] = Ops::pack(-eb * w2, -eb * w3);
    }
    chain_wg_publish(wg);  // -diag(e) dW' complete

    // 4. dS += K^T (-diag(e) dW'): two m64 halves, depth 64; meanwhile dW' -> dv.
    fused::wgmma_fence();
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
        fused::wgmma_ss<NT, Elem, true, true>(S[mi], (mi ? d_kkn1 : d_kkn0) + kk * kRowStep16,
                                              d_edw + kk * kRowStep16, true);
    fused::wgmma_commit();
    {
      uint32_t* const va = reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(p.dv) + el_a) + t;
      uint32_t* const vb = reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(p.dv) + el_b) + t;
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        if (in_row_a) va[4 * nj] = dv_a[nj];
        if (in_row_b) vb[4 * nj] = dv_b[nj];
      }
    }
    fused::wgmma_wait<0>();
    fused::fence_accumulators(S[0]);
    fused::fence_accumulators(S[1]);
    // This warp's reads of stage s (k, T, e/f/beta) are done: the producer may refill it.
    if (lane == 0) fused::mbarrier_arrive(sm.empty(s));
    if (kPublish) {  // chunk c's stores of every lane issued: hand it to the publisher
      __syncwarp();
      const int ps = it % kChainWgPublishSlots, round = it / kChainWgPublishSlots;
      if (lane == 0) {
        if (round > 0) fused::mbarrier_wait_parity(sm.pub_empty(ps), static_cast<uint32_t>((round - 1) % 2));
        fused::mbarrier_arrive(sm.pub_full(ps));
      }
    }
  }

  if (ch.dst)
    fused::for_each_state_element<NT, 16, 64>(
        S, warp, g, t, [&](float& x, int row, int c) { ch.store_end(row, wc + c, x); });
}

}  // namespace gdn::bwd
