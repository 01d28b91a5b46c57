// The reverse state-gradient chain on wgmma with TMA loads (the chunked backward's
// ColumnWarps roles): the chunk step of dstate_chain.cuh with its three dependent products
// issued as warpgroup products, both operands in shared memory, and its inputs brought in by a
// producer warp, so that the math warps issue only the chain's own instructions (the mma.sync
// chain spends most of a step issuing its cp.async address arithmetic and waiting on it: ncu,
// 2/4 heads, 1 x 32768, 0.27 issued warps per scheduler, fixed-latency waits the top stall).
// One CTA of 288 threads per (sequence or CP segment, v-head, 64-column V-block): warps 0-7
// are two math warpgroups, each the whole chain of 32 of the block's columns (the chain never
// mixes columns, so the two share only the loaded tiles and never wait for each other), warp 8
// the producer (one thread issues every TMA copy of a 2-stage ring as the math warps release
// its stages; mbarriers full and empty). A warpgroup's dS (128 x 32, fp32) lives in the
// accumulators of two m64n32 products: half mi holds state rows 64 mi .. + 63, warp w of the
// warpgroup its rows 64 mi + 16 w + g (+ 8), columns 8 j + 2 t (+ 1). Two warpgroups of 32
// columns rather than one of 64 halve each thread's epilogue work, which with the stores is
// most of a step's instructions. Per chunk (e, f, beta from
// the prepare kernel's gate_ef; dVin = scale P^T dO and Xq = scale Q^T diag(e) dO from
// chain_inputs.cu):
//   1. dS' = dS -> 16-bit tile (the next two products' B operand) and to dstate16
//   2. Y = K dS'            64 x 32, depth 128: A = k (K-major), B = dS' (MN-major)
//      dVn = dVin + diag(f) Y -> dvnew16 (+ its residual in short chunks), 16-bit tile
//   3. W = T^T dVn          64 x 32, depth 64: A = T^T (T's tile, M-major), B = dVn
//      dW' = diag(beta) W -> dv;  Edw = -diag(e) dW' -> 16-bit tile
//   4. dS = e_last dS + Xq + K^T Edw   two m64 halves, depth 64: A = K^T (k's tile, M-major,
//      64-column half mi), B = Edw
// The same roundings as the mma.sync chain (16-bit dS', dVn, Edw; fp32 sums; e and f the same
// expf of the same gamma), so the two agree to the fp32 summation order.
#pragma once

#include "arch/named_barrier.cuh"
#include "arch/tma.cuh"
#include "arch/wgmma.cuh"
#include "bwd_run.cuh"  // kChainWgBV, the V-block
#include "dstate_chain.cuh"

namespace gdn::bwd {

inline constexpr int kChainWgGroups = 2;                          // math warpgroups
inline constexpr int kChainWgMathThreads = 128 * kChainWgGroups;
inline constexpr int kChainWgThreads = kChainWgMathThreads + 32;  // and the producer warp
inline constexpr int kChainWgBarrier = 1;  // named barriers 1, 2: one per math warpgroup
inline constexpr int kChainWgCols = kChainWgBV / kChainWgGroups;  // a warpgroup's: m64n32

// Shared memory: every 16-bit tile is a fused::WgTile16 (128-byte swizzle) at a 1024-byte
// aligned offset. Per ring stage: k (64 x 128, two 64-column halves, 16 KB), T (64 x 64,
// 8 KB), dVin (64 x 64, 8 KB), Xq (128 x 64, 16 KB), e, f, beta (3 x 64 fp32 in 1 KB). Then
// each warpgroup's chain tiles dS' (128 x 32, 16 KB), dVn and Edw (64 x 32, 8 KB each; the
// 32 columns at the start of each 128-byte row, so that every product's B operand starts on
// an atom), and the mbarriers. 163 KB: one CTA per SM.
struct ChainWgSmem {
  static constexpr size_t kKBytes = size_t(kC) * kK * 2;
  static constexpr size_t kTBytes = size_t(kC) * 64 * 2;
  static constexpr size_t kVBytes = size_t(kC) * 64 * 2;
  static constexpr size_t kStateBytes = size_t(kK) * 64 * 2;
  static constexpr size_t kGateBytes = 3 * kC * 4;
  static constexpr size_t kStageBytes = kKBytes + kTBytes + kVBytes + kStateBytes + 1024;
  static constexpr size_t kChainOffset = kChainStages * kStageBytes;
  static constexpr size_t kGroupBytes = kStateBytes + 2 * kVBytes;  // one warpgroup's tiles
  static constexpr size_t kBarrierOffset = kChainOffset + kChainWgGroups * kGroupBytes;
  static constexpr size_t bytes() { return kBarrierOffset + 4 * sizeof(uint64_t); }
  static_assert(kStageBytes % 1024 == 0 && kChainOffset % 1024 == 0 && kGateBytes <= 1024,
                "wgmma operand tiles start on 1024-byte boundaries");
  // Transaction bytes of one stage: k, T, e/f/beta, and dVin and Xq where dO enters.
  static constexpr uint32_t tx_bytes(bool with_do) {
    return uint32_t(kKBytes + kTBytes + kGateBytes + (with_do ? kVBytes + kStateBytes : 0));
  }

  char* base;
  __device__ __forceinline__ char* stage(int s) const { return base + s * kStageBytes; }
  __device__ __forceinline__ fused::WgTile16 tile(char* at, int rows) const {
    return {reinterpret_cast<uint16_t*>(at), rows};
  }
  __device__ __forceinline__ fused::WgTile16 k(int s) const { return tile(stage(s), kC); }
  __device__ __forceinline__ fused::WgTile16 t(int s) const { return tile(stage(s) + kKBytes, kC); }
  __device__ __forceinline__ fused::WgTile16 dvin(int s) const {
    return tile(stage(s) + kKBytes + kTBytes, kC);
  }
  __device__ __forceinline__ fused::WgTile16 xq(int s) const {
    return tile(stage(s) + kKBytes + kTBytes + kVBytes, kK);
  }
  __device__ __forceinline__ float* ef(int s) const {  // e, f, beta: 64 each
    return reinterpret_cast<float*>(stage(s) + kKBytes + kTBytes + kVBytes + kStateBytes);
  }
  __device__ __forceinline__ char* group(int wg) const { return base + kChainOffset + wg * kGroupBytes; }
  __device__ __forceinline__ fused::WgTile16 ds16(int wg) const { return tile(group(wg), kK); }
  __device__ __forceinline__ fused::WgTile16 dvn(int wg) const {
    return tile(group(wg) + kStateBytes, kC);
  }
  __device__ __forceinline__ fused::WgTile16 e_dw(int wg) const {
    return tile(group(wg) + kStateBytes + kVBytes, kC);
  }
  __device__ __forceinline__ uint64_t* full(int s) const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + s;
  }
  __device__ __forceinline__ uint64_t* empty(int s) const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + 2 + s;
  }
};

// The producer thread: chunk n of the segment (walked from its last chunk) into ring stage
// n % 2 once the math warps have released that stage's previous chunk (n - 2): k (two 64-column
// halves of the q/k head), T, e/f/beta, and where dO enters (not the M columns of CP pass 1)
// the dVin and Xq blocks. Rows past a chunk's end arrive with the next sequence's tokens; the
// math warps zero them.
__device__ __forceinline__ void produce_chain_chunks(const ChainParams& p, const ChainWgSmem& sm,
                                                     int64_t first, int64_t last, int h, int v0,
                                                     bool with_do) {
  const Dims& d = p.d;
  const int hk = h / d.group;
  const uint32_t bytes = ChainWgSmem::tx_bytes(with_do);
  for (int64_t c = last - 1; c >= first; --c) {
    const int n = static_cast<int>(last - 1 - c), b = n % 2;
    // The k-th release of stage b ends chunk b + 2 k: chunk n - 2's is release n / 2 - 1.
    if (n >= 2) fused::mbarrier_wait_parity(sm.empty(b), static_cast<uint32_t>((n / 2 - 1) % 2));
    const int tok = static_cast<int>(p.table[c].tok_begin);
    const int pair = static_cast<int>(c * d.Hv + h);  // the rows below fit the encoders' int32
    uint64_t* bar = sm.full(b);
    fused::mbarrier_arrive_expect_tx(bar, bytes);
    fused::tma_load_3d(sm.k(b).p, &p.tmap_k, 0, hk, tok, bar);
    fused::tma_load_3d(sm.k(b).at(0, 64), &p.tmap_k, 64, hk, tok, bar);
    fused::tma_load_2d(sm.t(b).p, &p.tmap_t, 0, pair * kC, bar);
    fused::bulk_load(sm.ef(b), p.gate_ef + int64_t(pair) * (3 * kC),
                     uint32_t(ChainWgSmem::kGateBytes), bar);
    if (with_do) {
      fused::tma_load_3d(sm.dvin(b).p, &p.tmap_dvin, v0, h, tok, bar);
      fused::tma_load_2d(sm.xq(b).p, &p.tmap_xq, v0, pair * kK, bar);
    }
  }
}

// Zeroes rows [len, 64) of stage s's k halves and dVin (a chunk that ends its sequence early:
// the tokens there belong to the next sequence). Whole 128-byte rows: the swizzle keeps a row's
// bytes within the row. Each warpgroup zeroes them all (tid: its thread, 0 .. 127) and waits at
// its own barrier only: the other's writes are the same zeros.
__device__ __forceinline__ void zero_chain_rows_past_end(const ChainWgSmem& sm, int s, int len,
                                                         bool with_do, int tid) {
  const int rows = kC - len, tiles = with_do ? 3 : 2;
  for (int u = tid; u < tiles * rows * 8; u += 128) {
    const int tile = u / (rows * 8), r = len + (u / 8) % rows, c = u % 8;
    uint16_t* base = tile == 0 ? sm.k(s).p : tile == 1 ? sm.k(s).at(0, 64) : sm.dvin(s).p;
    *reinterpret_cast<uint4*>(base + r * 64 + 8 * c) = make_uint4(0, 0, 0, 0);
  }
}

// Makes warpgroup wg's shared-memory writes visible to its next wgmma (async proxy) and to its
// other threads.
__device__ __forceinline__ void chain_wg_publish(int wg) {
  fused::fence_proxy_async_shared();
  fused::named_sync(kChainWgBarrier + wg, 128);
}

template <class Elem>
__global__ void __launch_bounds__(kChainWgThreads, 1)
    dstate_chain_wg_kernel(const __grid_constant__ ChainParams p) {
  using Ops = fused::ElemOps<Elem>;
  constexpr int NT = kChainWgCols / 8;
  const Dims& d = p.d;
  ChainItem ch;
  if (!chain_item(p, kChainWgBV, ch)) return;
  const int h = ch.h, v0 = ch.v0;
  const bool m_part = ch.m_part, outputs = !ch.transition;
  extern __shared__ __align__(1024) char smem_raw[];  // wgmma operand tiles: 1024-byte aligned
  const ChainWgSmem sm{smem_raw};
  const int64_t first = ch.seg.chunk_begin, last = ch.seg.chunk_end;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kChainStages; ++s) {
      fused::mbarrier_init(sm.full(s), 1);
      fused::mbarrier_init(sm.empty(s), kChainWgMathThreads / 32);  // every math warp
    }
    fused::fence_mbarrier_init();
  }
  __syncthreads();  // the last CTA-wide barrier: the producer warp leaves below
  if (threadIdx.x >= kChainWgMathThreads) {
    if (threadIdx.x == kChainWgMathThreads)
      produce_chain_chunks(p, sm, first, last, h, v0, !m_part);
    return;
  }

  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;  // warpgroup, its thread
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wc = kChainWgCols * wg;  // the warpgroup's first column within the V-block
  // The M columns of pass 1 have no dO: their dVin and Xq stay zero (never loaded; each
  // warpgroup zeroes them all, as zero_chain_rows_past_end).
  if (m_part) {
    for (int s = 0; s < kChainStages; ++s) {
      fused::zero_tile<128, ChainWgSmem::kVBytes>(sm.dvin(s).p, tid);
      fused::zero_tile<128, ChainWgSmem::kStateBytes>(sm.xq(s).p, tid);
    }
    chain_wg_publish(wg);
  }

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
  constexpr uint64_t kRowStep16 = 16 * 128 / 16;  // MN-major: 16 rows of 128 bytes
  const auto nk_step = [](int kk) -> uint64_t {     // K-major k tile: 32 bytes, halves 8 KB apart
    return uint64_t((kk / 4) * (kC * 128) + (kk % 4) * 32) / 16;
  };
  ChunkInfo next = last > first ? p.table[last - 1] : ChunkInfo{};

  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c), s = it % kChainStages;
    const ChunkInfo ci = next;
    if (c - 1 >= first) next = p.table[c - 1];  // used next chunk: its latency hides here
    fused::mbarrier_wait_parity(sm.full(s), static_cast<uint32_t>((it / 2) % 2));
    if (ci.len < kC) {  // a sequence's last chunk, cut short (uniform over the CTA)
      zero_chain_rows_past_end(sm, s, static_cast<int>(ci.len), !m_part, tid);
      chain_wg_publish(wg);
    }
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
    // 1. dS' -> the 16-bit tile (rows 64 mi + ra and + 8: 2048 mi and 256 pairs further).
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        ds_a[2048 * mi + xo[nj]] = Ops::pack(S[mi][nj][0], S[mi][nj][1]);
        ds_a[2048 * mi + 256 + xo[nj]] = Ops::pack(S[mi][nj][2], S[mi][nj][3]);
      }
    chain_wg_publish(wg);

    // 2. Y = K dS' (64 x 32, depth 128); meanwhile dS' -> dstate16 and dS = e_last dS + Xq
    //    (step 4's first half: dS is not read again before it).
    float Y[NT][4];
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) Y[nj][0] = Y[nj][1] = Y[nj][2] = Y[nj][3] = 0.f;
    fused::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk)
      fused::wgmma_ss<NT, Elem, false, true>(Y, d_knk + nk_step(kk), d_ds + kk * kRowStep16, true);
    fused::wgmma_commit();
    const float elast = ev[kC - 1];  // e of the chunk's last row (padded rows repeat it)
    {
      // dstate16 [chunk, Hv, K, V]: this thread's pairs at row (64 mi + ra (+ 8)) x 64 + 4 nj.
      uint32_t* const dst = reinterpret_cast<uint32_t*>(p.dstate16 + (c * d.Hv + h) * int64_t(kK * kV) +
                                                        v0 + wc) + ra * (kV / 2) + t;
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nj = 0; nj < NT; ++nj) {
          if (outputs) {
            dst[mi * 64 * (kV / 2) + 4 * nj] = Ops::pack(S[mi][nj][0], S[mi][nj][1]);
            dst[mi * 64 * (kV / 2) + 8 * (kV / 2) + 4 * nj] = Ops::pack(S[mi][nj][2], S[mi][nj][3]);
          }
          const float2 x0 = Ops::unpack(xq_a[2048 * mi + xs[nj]]);
          const float2 x1 = Ops::unpack(xq_a[2048 * mi + 256 + xs[nj]]);
          S[mi][nj][0] = fmaf(S[mi][nj][0], elast, x0.x);
          S[mi][nj][1] = fmaf(S[mi][nj][1], elast, x0.y);
          S[mi][nj][2] = fmaf(S[mi][nj][2], elast, x1.x);
          S[mi][nj][3] = fmaf(S[mi][nj][3], elast, x1.y);
        }
    }
    const float fa = fv[ra], fb = fv[rb], ea = ev[ra], eb = ev[rb], ba = bv[ra], bb = bv[rb];
    fused::wgmma_wait<0>();
    fused::fence_accumulators(Y);
    // dVn = dVin + diag(f) Y -> the tile; the 16-bit pairs (and in a short chunk their rounding
    // residuals: the local kernel's dAg in split precision, bwd_params.cuh) kept for the stores.
    uint32_t dvn_a[NT], dvn_b[NT], lo_a[NT], lo_b[NT];
    const bool residual = outputs && ci.len < kSplitDagRows;
#pragma unroll
    for (int nj = 0; nj < NT; ++nj) {
      const float2 ia = Ops::unpack(in_a[xs[nj]]), ib = Ops::unpack(in_a[256 + xs[nj]]);
      const float a0 = ia.x + fa * Y[nj][0], a1 = ia.y + fa * Y[nj][1];
      const float b0 = ib.x + fb * Y[nj][2], b1 = ib.y + fb * Y[nj][3];
      dvn_a[nj] = Ops::pack(a0, a1);
      dvn_b[nj] = Ops::pack(b0, b1);
      dvn_s[xo[nj]] = dvn_a[nj];
      dvn_s[256 + xo[nj]] = dvn_b[nj];
      if (residual) {
        const float2 ha = Ops::unpack(dvn_a[nj]), hb = Ops::unpack(dvn_b[nj]);
        lo_a[nj] = Ops::pack(a0 - ha.x, a1 - ha.y);
        lo_b[nj] = Ops::pack(b0 - hb.x, b1 - hb.y);
      }
    }
    chain_wg_publish(wg);  // all of dVn in the tile

    // 3. W = T^T dVn (64 x 32, depth 64); meanwhile dVn -> dvnew16 (+ residual).
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
      uint32_t* const la = reinterpret_cast<uint32_t*>(p.dvnew16_lo + el_a) + t;
      uint32_t* const lb = reinterpret_cast<uint32_t*>(p.dvnew16_lo + el_b) + t;
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        if (in_row_a) {
          na[4 * nj] = dvn_a[nj];
          if (residual) la[4 * nj] = lo_a[nj];
        }
        if (in_row_b) {
          nb[4 * nj] = dvn_b[nj];
          if (residual) lb[4 * nj] = lo_b[nj];
        }
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
    // Every read of stage s (k, T, dVin, Xq, e/f/beta) is done: the producer may refill it.
    if (lane == 0) fused::mbarrier_arrive(sm.empty(s));
  }

  if (ch.dst)
    fused::for_each_state_element<NT, 16, 64>(
        S, warp, g, t, [&](float& x, int row, int c) { ch.store_end(row, wc + c, x); });
}

}  // namespace gdn::bwd
