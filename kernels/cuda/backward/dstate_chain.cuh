// The reverse state-gradient chain of the chunked backward. One CTA of 4 warps per
// (sequence or CP segment, v-head, V-block of BV columns) walks its chunks from last to first
// with the fp32 gradient dS (128 x BV) of the current chunk's end state in registers, as mma
// accumulators (warp w owns state rows 32w..32w+31 and chunk rows 16w..16w+15). Per chunk, with
// e = exp(gamma), f = exp(gamma_last - gamma), and the dS-independent inputs dVin = scale P^T dO
// and Xq = scale Q^T diag(e) dO from chain_inputs.cu:
//   1. dS' = dS -> 16-bit in shared memory (the next products' B operand) and to dstate16
//   2. Y = K dS' (depth 128);  dVn = dVin + diag(f) Y          (64 x BV) -> dvnew16, shared
//   3. dW' = diag(beta) T^T dVn (depth 64) -> dv (= dW'), and -diag(e) dW' -> shared
//   4. dS = e_last dS + Xq - K^T diag(e) dW'                   (128 x BV, depth 64)
// The adjoint of the forward's chunk step: the same three dependent products (K., T^T., K^T.)
// per chunk, transposed. The next chunk's k, T, dVin, Xq and gamma stream in over a 2-stage
// cp.async ring while this one computes (a third stage, one CTA per SM, measured no faster at
// 16/32 heads and slower where CP leaves many CTAs); the table entries are read a chunk ahead,
// so that no load waits on another inside the loop, and the next chunk's beta is prefetched.
// After a sequence's first chunk dS is dh0.
#pragma once

#include "bwd_params.cuh"
#include "forward/chunk_steps.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::bwd {

using fused::load_a;
using fused::load_a_trans;
using fused::load_b_kn;
using fused::load_b_nk;
using fused::SmemTile16;

inline constexpr int kChainThreads = 128;
inline constexpr int kChainStages = 2;

// Shared memory of one chain CTA. Per ring stage: k (64 x 128), T (64 x 64), dVin (64 x BV) and
// Xq (128 x BV), 16-bit, padded rows; gamma (64 fp32). Then the chain buffers: dS' (128 x BV),
// dVn and -diag(e) dW' (64 x BV each), 16-bit. 105 KB at BV = 32: two CTAs per SM.
template <int BV>
struct ChainSmem {
  static constexpr int kLdV = BV + 8;
  static constexpr size_t kKBytes = size_t(kC) * fused::kLdQK * 2;
  static constexpr size_t kVBytes = size_t(kC) * kLdV * 2;
  static constexpr size_t kTBytes = size_t(kC) * fused::kLdT * 2;
  static constexpr size_t kStateBytes = size_t(kK) * kLdV * 2;
  static constexpr size_t kGateBytes = size_t(kC) * 4;
  static constexpr size_t kStageBytes = kKBytes + kTBytes + kVBytes + kStateBytes + kGateBytes;
  static constexpr size_t kChainOffset = kChainStages * kStageBytes;
  static constexpr size_t bytes() { return kChainOffset + kStateBytes + 2 * kVBytes; }

  char* base;
  __device__ __forceinline__ char* stage(int s) const { return base + s * kStageBytes; }
  __device__ __forceinline__ SmemTile16 k(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s)), fused::kLdQK};
  }
  __device__ __forceinline__ SmemTile16 t(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + kKBytes), fused::kLdT};
  }
  __device__ __forceinline__ SmemTile16 dvin(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + kKBytes + kTBytes), kLdV};
  }
  __device__ __forceinline__ SmemTile16 xq(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + kKBytes + kTBytes + kVBytes), kLdV};
  }
  __device__ __forceinline__ float* gam(int s) const {
    return reinterpret_cast<float*>(stage(s) + kKBytes + kTBytes + kVBytes + kStateBytes);
  }
  __device__ __forceinline__ SmemTile16 ds16() const {
    return {reinterpret_cast<uint16_t*>(base + kChainOffset), kLdV};
  }
  __device__ __forceinline__ SmemTile16 dvn() const {
    return {reinterpret_cast<uint16_t*>(base + kChainOffset + kStateBytes), kLdV};
  }
  __device__ __forceinline__ SmemTile16 e_dw() const {
    return {reinterpret_cast<uint16_t*>(base + kChainOffset + kStateBytes + kVBytes), kLdV};
  }
};

// cp.async loads of chunk `chunk` (table entry ci) into ring stage s: k (the v-head's q/k head),
// T, the dVin and Xq blocks and gamma (padded rows repeat the last valid one). Rows past the
// chunk's end are zero-filled.
template <int BV, class Elem>
__device__ __forceinline__ void issue_chain_loads(const ChainParams& p, const ChainSmem<BV>& sm,
                                                  int64_t chunk, const ChunkInfo& ci, int s, int h,
                                                  int v0) {
  const Dims& d = p.d;
  const int kh = h / d.group;
  const Elem* kbase = static_cast<const Elem*>(p.k);
  for (int e = threadIdx.x; e < kC * (kK / 8); e += kChainThreads) {
    const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
    const bool valid = r < ci.len;
    const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hk + kh) * kK + c;
    fused::cp_async_16(sm.k(s).at(r, c), kbase + off, valid ? 16 : 0);
  }
  const uint16_t* tsrc = p.t16 + (chunk * d.Hv + h) * int64_t(kC * kC);
  for (int e = threadIdx.x; e < kC * (kC / 8); e += kChainThreads) {
    const int r = e / (kC / 8), c = (e % (kC / 8)) * 8;
    fused::cp_async_16(sm.t(s).at(r, c), tsrc + r * kC + c, 16);
  }
  for (int e = threadIdx.x; e < kC * (BV / 8); e += kChainThreads) {
    const int r = e / (BV / 8), c = (e % (BV / 8)) * 8;
    const bool valid = r < ci.len;
    const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * d.Hv + h) * kV + v0 + c;
    fused::cp_async_16(sm.dvin(s).at(r, c), p.dvin16 + off, valid ? 16 : 0);
  }
  const uint16_t* xsrc = p.xq16 + (chunk * d.Hv + h) * int64_t(kK * kV) + v0;
  for (int e = threadIdx.x; e < kK * (BV / 8); e += kChainThreads) {
    const int r = e / (BV / 8), c = (e % (BV / 8)) * 8;
    fused::cp_async_16(sm.xq(s).at(r, c), xsrc + r * kV + c, 16);
  }
  if (threadIdx.x < kC) {
    const int r = threadIdx.x, rr = r < ci.len ? r : ci.len - 1;
    fused::cp_async_4(sm.gam(s) + r, p.gcum + (ci.tok_begin + rr) * d.Hv + h);
  }
}

__device__ __forceinline__ float chain_beta(const ChainParams& p, const ChunkInfo& ci, int h, int r) {
  return r < ci.len ? staged::load_beta(p.beta, (ci.tok_begin + r) * p.d.Hv + h, p.d) : 0.f;
}

// A chain CTA's item: the sequence or CP segment (blockIdx.x), the v-head (blockIdx.y) and the
// V-block of bv columns (blockIdx.z) of the gradient, which in CP pass 1 (transition) is N of
// the augmented [M | N] (bwd_params.cuh); and where its dS starts from and ends up, as strided
// views formed once (row: state row, c: column within the V-block). Both chains (this file's
// and dstate_chain_wg.cuh's) take it.
struct ChainItem {
  fused::Segment seg;
  int h, v0;  // the v-head; the V-block's first value column
  bool transition;
  // dS before the segment's last chunk: dht on a sequence's last segment, the fixed-up
  // end-state gradient on the others, zero in pass 1 (src null) or without dht.
  const float* src;
  int64_t src_row, src_col;
  // dS after its first chunk: pass 1's transfer, else dh0 where the segment starts its
  // sequence (null: not stored).
  float* dst;
  int64_t dst_row, dst_col;

  __device__ float start(int row, int c) const {
    return src ? src[row * src_row + c * src_col] : 0.f;
  }
  __device__ void store_end(int row, int c, float x) const { dst[row * dst_row + c * dst_col] = x; }
};

// The item of this CTA; false (no work) for an unused segment and, in pass 1, for a
// sequence's first segment.
__device__ __forceinline__ bool chain_item(const ChainParams& p, int bv, ChainItem& it) {
  const Dims& d = p.d;
  const int64_t item = blockIdx.x;
  it.seg = p.segs ? p.segs[item]
                  : fused::Segment{p.chunk_first[item], p.chunk_first[item + 1],
                                   static_cast<int32_t>(item),
                                   fused::Segment::kUsed | fused::Segment::kFirst |
                                       fused::Segment::kLast};
  it.transition = p.transition;
  if (!(it.seg.flags & fused::Segment::kUsed) ||
      (it.transition && (it.seg.flags & fused::Segment::kFirst)))
    return false;
  const int64_t n = it.seg.seq;
  // The segment's place in the fix-up's order: reversed within its sequence.
  const int64_t rev = p.segs ? p.seg_first[n] + p.seg_first[n + 1] - 1 - item : item;
  it.h = blockIdx.y;
  it.v0 = blockIdx.z * bv;
  const int col0 = (it.transition ? kV : 0) + it.v0;  // in pass 1, of N in transfer's [M | N]
  // The caller's states in its layout (KV or VK: state_index), the workspace's in KV.
  const int64_t at = staged::state_index(d, n, it.h, 0, it.v0);
  const int64_t user_row = staged::state_index(d, n, it.h, 1, it.v0) - at;
  const int64_t user_col = staged::state_index(d, n, it.h, 0, it.v0 + 1) - at;
  const int64_t ws = (rev * d.Hv + it.h) * kK;  // this segment's rows of the workspace states
  it.src = nullptr, it.src_row = 0, it.src_col = 0;
  if (it.seg.flags & fused::Segment::kLast) {
    if (p.dht) it.src = p.dht + at, it.src_row = user_row, it.src_col = user_col;
  } else if (!it.transition) {
    it.src = p.starts + ws * kV + it.v0, it.src_row = kV, it.src_col = 1;
  }
  it.dst = nullptr, it.dst_row = 0, it.dst_col = 0;
  if (it.transition)
    it.dst = p.transfer + ws * (2 * kV) + col0, it.dst_row = 2 * kV, it.dst_col = 1;
  else if (p.dh0 && (it.seg.flags & fused::Segment::kFirst))
    it.dst = p.dh0 + at, it.dst_row = user_row, it.dst_col = user_col;
  return true;
}

template <int BV, class Elem>
__global__ void __launch_bounds__(kChainThreads, 2) dstate_chain_kernel(ChainParams p) {
  using Ops = fused::ElemOps<Elem>;
  constexpr int NT = BV / 8;
  const Dims& d = p.d;
  ChainItem ch;
  if (!chain_item(p, BV, ch)) return;
  const int h = ch.h, v0 = ch.v0;
  const bool outputs = !ch.transition;
  const fused::Segment& seg = ch.seg;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  extern __shared__ __align__(128) char smem_raw[];
  const ChainSmem<BV> sm{smem_raw};

  // dS (this warp's 32 rows) from the item's start.
  float S[2][NT][4];
  fused::for_each_state_element<NT>(S, warp, g, t,
                                    [&](float& x, int row, int c) { x = ch.start(row, c); });

  const int64_t first = seg.chunk_begin, last = seg.chunk_end;
  const int r0 = 16 * warp, ra = r0 + g, rb = ra + 8;
  // Table entries: of the chunk in hand, of the next one (its loads are issued this iteration)
  // and of the one after (read now, used next iteration).
  // Table entries of the chunk in hand (cur) and of the next one (n1, whose loads this
  // iteration issues; read an iteration before they are needed).
  ChunkInfo cur = last > first ? p.table[last - 1] : ChunkInfo{};
  ChunkInfo n1 = last - 1 > first ? p.table[last - 2] : ChunkInfo{};
  if (last > first) issue_chain_loads<BV, Elem>(p, sm, last - 1, cur, 0, h, v0);
  fused::cp_async_commit();
  float beta_a = 0.f, beta_b = 0.f;
  if (last > first) beta_a = chain_beta(p, cur, h, ra), beta_b = chain_beta(p, cur, h, rb);
  const SmemTile16 sDS = sm.ds16(), sDvn = sm.dvn(), sEdw = sm.e_dw();

  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c);
    const int s = it % kChainStages;
    fused::cp_async_wait(0);
    __syncthreads();  // chunk c landed; every reader of the other stage and the chain buffers done
    if (c - 1 >= first)
      issue_chain_loads<BV, Elem>(p, sm, c - 1, n1, (it + 1) % kChainStages, h, v0);
    fused::cp_async_commit();
    const float ba = beta_a, bb = beta_b;
    if (c - 1 >= first) beta_a = chain_beta(p, n1, h, ra), beta_b = chain_beta(p, n1, h, rb);
    const ChunkInfo ci_here = cur;
    cur = n1;
    if (c - 2 >= first) n1 = p.table[c - 2];
    const SmemTile16 sK = sm.k(s), sT = sm.t(s), sIn = sm.dvin(s), sXq = sm.xq(s);
    const float* gam = sm.gam(s);
    const float glast = gam[kC - 1];

    // 1. dS' -> shared and dstate16.
    fused::store_state16<NT, Elem>(sDS, S, warp, g, t);
    if (outputs) {
      uint32_t* dst = reinterpret_cast<uint32_t*>(p.dstate16 +
                                                  (c * d.Hv + h) * int64_t(kK * kV) + v0);
      // The pairs this thread just wrote to the 16-bit copy (store_state16's placement).
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nj = 0; nj < NT; ++nj) {
          const int row = 32 * warp + 16 * mi + g, col = 8 * nj + 2 * t;
          dst[(row * kV + col) / 2] = sDS.pair(row, col);
          dst[((row + 8) * kV + col) / 2] = sDS.pair(row + 8, col);
        }
    }
    __syncthreads();

    // 2. Y = K dS'; dVn = dVin + diag(f) Y.
    float Y[NT][4] = {}, unused_oi[NT][4], unused_p[kC / 8][4];
    fused::chunk_products<NT, Elem, true>(Y, unused_oi, unused_p, sK, sK, sDS, r0, false);
    const float ga = gam[ra], gb = gam[rb];
    {
      const float fa = expf(glast - ga), fb = expf(glast - gb);
      uint32_t* dvn = reinterpret_cast<uint32_t*>(p.dvnew16);
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        const int col = 8 * nj + 2 * t;
        const float2 ia = Ops::unpack(sIn.pair(ra, col)), ib = Ops::unpack(sIn.pair(rb, col));
        const float a0 = ia.x + fa * Y[nj][0], a1 = ia.y + fa * Y[nj][1];
        const float b0 = ib.x + fb * Y[nj][2], b1 = ib.y + fb * Y[nj][3];
        const uint32_t xa = Ops::pack(a0, a1), xb = Ops::pack(b0, b1);
        sDvn.pair(ra, col) = xa;
        sDvn.pair(rb, col) = xb;
        if (outputs) {
          const int64_t ia_off = (((ci_here.tok_begin + ra) * d.Hv + h) * kV + v0 + col) / 2;
          const int64_t ib_off = (((ci_here.tok_begin + rb) * d.Hv + h) * kV + v0 + col) / 2;
          if (ra < ci_here.len) dvn[ia_off] = xa;
          if (rb < ci_here.len) dvn[ib_off] = xb;
        }
      }
    }
    __syncthreads();  // all of dVn is in shared memory

    // 3. dW' = diag(beta) T^T dVn -> dv; -diag(e) dW' -> shared.
    {
      float W[NT][4] = {};
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk) {
        uint32_t a[4];
        load_a_trans(a, sT, r0, 16 * kk);
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
          uint32_t b[4];
          load_b_kn(b, sDvn, 16 * kk, 16 * np);
          Ops::mma(W[2 * np], a, b[0], b[1]);
          Ops::mma(W[2 * np + 1], a, b[2], b[3]);
        }
      }
      const float ea = expf(ga), eb = expf(gb);
      uint32_t* dv = static_cast<uint32_t*>(p.dv);
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        const int col = 8 * nj + 2 * t;
        const float w0 = ba * W[nj][0], w1 = ba * W[nj][1], w2 = bb * W[nj][2], w3 = bb * W[nj][3];
        if (outputs && ra < ci_here.len) dv[(((ci_here.tok_begin + ra) * d.Hv + h) * kV + v0 + col) / 2] = Ops::pack(w0, w1);
        if (outputs && rb < ci_here.len) dv[(((ci_here.tok_begin + rb) * d.Hv + h) * kV + v0 + col) / 2] = Ops::pack(w2, w3);
        sEdw.pair(ra, col) = Ops::pack(-ea * w0, -ea * w1);
        sEdw.pair(rb, col) = Ops::pack(-eb * w2, -eb * w3);
      }
    }
    __syncthreads();  // -diag(e) dW' complete

    // 4. dS = e_last dS + Xq + K^T (-diag(e) dW').
    const float elast = expf(glast);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < NT; ++nj) {
        const int row = 32 * warp + 16 * mi + g, col = 8 * nj + 2 * t;
        const float2 x0 = Ops::unpack(sXq.pair(row, col)), x1 = Ops::unpack(sXq.pair(row + 8, col));
        S[mi][nj][0] = fmaf(S[mi][nj][0], elast, x0.x);
        S[mi][nj][1] = fmaf(S[mi][nj][1], elast, x0.y);
        S[mi][nj][2] = fmaf(S[mi][nj][2], elast, x1.x);
        S[mi][nj][3] = fmaf(S[mi][nj][3], elast, x1.y);
      }
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) {
      uint32_t aKt[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) load_a_trans(aKt[mi], sK, 32 * warp + 16 * mi, 16 * kk);
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        uint32_t bw[4];
        load_b_kn(bw, sEdw, 16 * kk, 16 * np);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          Ops::mma(S[mi][2 * np], aKt[mi], bw[0], bw[1]);
          Ops::mma(S[mi][2 * np + 1], aKt[mi], bw[2], bw[3]);
        }
      }
    }
  }

  if (ch.dst)
    fused::for_each_state_element<NT>(S, warp, g, t,
                                      [&](float& x, int row, int c) { ch.store_end(row, c, x); });
}

}  // namespace gdn::bwd
