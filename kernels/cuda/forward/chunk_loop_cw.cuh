// The column-warp fused chunk loop (WarpRoles::ColumnWarps; included by one .cu per V-block
// width). One CTA per (segment, v-head, V-block), in both modes: Output, and Transition (CP
// pass 1 over the [M | N] columns, no output). Warpgroup 0 is the producer: one thread issues
// the TMA copies of a 2-stage ring as the math warps release its stages (mbarriers full and
// empty per stage, and per q buffer), and the warpgroup drops to 24 registers (setmaxnreg) so
// the BV / 64 math warpgroups can take 232 (BV = 64, two CTAs per SM) or 240 (BV = 128). Every
// math warp owns 16 value columns, and a warpgroup's 64 columns are the M = 64 rows of its
// wgmma products, on the state held transposed:
//   S^T (64 value columns x 128 state rows, fp32, 16 rows per warp) is the register A operand
//   of U^T = S16^T K^T and O^T = S16^T Q^T (m64n64k16, 8 depth steps each) straight from the
//   accumulator registers (an m16n8 C fragment pair is an m16k16 A fragment), and so are W'^T
//   for Vd^T = (diag(beta) W')^T T^T, Vd^T for O^T += Vd^T P^T and V'^T for S^T += V'^T K
//   (m64n128k16, K read n-contiguous). The B operands (k, q, T, P) are read by the
//   tensor cores from the TMA-filled ring through 128-byte-swizzle descriptors (T and P:
//   32-byte swizzle, one slab per depth step, copied lower-packed: wgmma_lower_packed),
//   once per warpgroup. No product of a chunk crosses warpgroups, and the math warps never
//   meet at a CTA barrier inside the loop. The 16-bit copies (S16, W', Vd, V') never leave the
//   registers; a chunk's output is stored (stmatrix into a staging tile, 16-byte rows to
//   global) while the next chunk's state update runs.
// The products that do not depend on the state come from the prepare kernel, once per
// (chunk, head) for every V-block: T, P = Gam o causal o Q K^T, e, f and beta.
// Same roundings as the other layouts (S16, diag(beta) W', Vd, V', P in the input dtype; fp32
// accumulation), in a different summation order inside each product: results agree within the
// forward tolerance, not bit for bit.
//
// Fragments of warp w (g = lane / 4, t = lane % 4; value columns vw = 16 w .. vw + 15 of the
// V-block; chunk rows and state rows are the C fragments' columns 8 nj + 2t, + 1):
//   S[16][4]  S^T      rows vw + g, vw + g + 8  x state rows 8 nj + 2t, +1     (64 regs)
//   U, O[8][4]         rows vw + g, vw + g + 8  x chunk rows 8 nj + 2t, +1     (32 each)
#pragma once

#include "forward/chunk_steps.cuh"
#include "arch/named_barrier.cuh"
#include "arch/tma.cuh"
#include "arch/wgmma.cuh"
#include "arch/grid_dependency.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::fused {

// The four slab copies of a lower-packed tile at src into the operand image at dst (rows
// 16 kk .. 63 of slab kk; the rows above stay zero: zero_lower_packed_prefixes).
__device__ __forceinline__ void load_lower_packed(uint16_t* dst, const uint16_t* src, uint64_t* bar) {
  using L = LowerPackedTile;
  char* const d = reinterpret_cast<char*>(dst);
  const char* const g = reinterpret_cast<const char*>(src);
#pragma unroll
  for (int kk = 0; kk < L::kSlabs; ++kk)
    bulk_load(d + L::copy_offset(kk), g + L::slab_offset(kk), L::slab_bytes(kk), bar);
}

// Zeroes rows 0 .. 16 kk - 1 of every slab kk of the T and P operand images of both stages
// (no copy ever lands there), `tid` of `threads`, before the CTA's first barrier (the caller
// fences them for the tensor cores).
template <int BV>
__device__ __forceinline__ void zero_lower_packed_prefixes(const FusedCwSmem<BV>& sm, int tid,
                                                           int threads) {
  using L = LowerPackedTile;
  for (int tile = 0; tile < 2 * FusedCwSmem<BV>::kStages; ++tile) {
    char* const base = reinterpret_cast<char*>(tile % 2 ? sm.scores(tile / 2) : sm.t(tile / 2));
    for (int kk = 1; kk < L::kSlabs; ++kk) {
      const int units = int(L::copy_offset(kk) - L::smem_slab_offset(kk)) / 16;  // 16-byte stores
      for (int u = tid; u < units; u += threads)
        *reinterpret_cast<uint4*>(base + L::smem_slab_offset(kk) + 16 * u) = make_uint4(0, 0, 0, 0);
    }
  }
}

// TMA loads of chunk `chunk` into ring stage s (one thread): k (two 64-column halves), the
// V-block (BV / 64 halves), then T, P and e, f, beta of the prepare kernel (contiguous per
// (chunk, head); T and P written lower-packed, four slab copies each, 5120 bytes in all), all
// completing on the stage's barrier.
// Rows past the chunk's end arrive with the next sequence's tokens (zeros past the tensor's
// end); the consumer zeroes k and V there (zero_past_end).
// kTransition (CP pass 1): no P (there is no output); with_v false: the M columns, whose v is
// zero (their V tiles are zeroed once and never loaded).
template <int BV, bool kTransition>
__device__ __forceinline__ void issue_chunk_loads(const FusedParams& p, const FusedCwSmem<BV>& sm,
                                                  int64_t chunk, int s, int h, int v0, bool with_v) {
  using Smem = FusedCwSmem<BV>;
  const Dims& d = p.d;
  const int tok = static_cast<int>(p.table[chunk].tok_begin);
  uint64_t* bar = sm.full(s);
  constexpr uint32_t kVBytes = Smem::kVHalves * uint32_t(Smem::kHalfBytes);
  constexpr uint32_t kPBytes = kTransition ? LowerPackedTile::kBytes : 0;
  mbarrier_arrive_expect_tx(bar, Smem::kStageTxBytes - kPBytes - (with_v ? 0 : kVBytes));
  const int hk = h / d.group;
  tma_load_3d(sm.k(s, 0).p, &p.tmap_k, 0, hk, tok, bar);
  tma_load_3d(sm.k(s, 1).p, &p.tmap_k, 64, hk, tok, bar);
  if (with_v)
#pragma unroll
    for (int j = 0; j < Smem::kVHalves; ++j) tma_load_3d(sm.v(s, j).p, &p.tmap_v, v0 + 64 * j, h, tok, bar);
  const int64_t pair = chunk * d.Hv + h;
  load_lower_packed(sm.t(s), p.t16 + pair * (kC * kC), bar);
  if (!kTransition) load_lower_packed(sm.scores(s), p.scores16 + pair * (kC * kC), bar);
  bulk_load(sm.ef(s), p.gate_ef + pair * (3 * kC), uint32_t(Smem::kGateBytes), bar);
}

// TMA load of chunk `chunk`'s q (two halves) into the q buffer (one thread).
template <int BV>
__device__ __forceinline__ void issue_q_load(const FusedParams& p, const FusedCwSmem<BV>& sm,
                                             int64_t chunk, int h) {
  const int tok = static_cast<int>(p.table[chunk].tok_begin);
  const int hk = h / p.d.group;
  mbarrier_arrive_expect_tx(sm.q_full(), FusedCwSmem<BV>::kQTxBytes);
  tma_load_3d(sm.q(0).p, &p.tmap_q, 0, hk, tok, sm.q_full());
  tma_load_3d(sm.q(1).p, &p.tmap_q, 64, hk, tok, sm.q_full());
}

// The producer thread's loop: chunk n of this CTA into ring stage n % 2 once the math warps
// have released that stage's previous chunk (n - 2) and (launched beside the prepare kernel)
// the chunk's prepared tiles are all written, and its q once they are done with chunk n - 1's
// q. Stage loads run a chunk ahead; q (one buffer) lands during chunk n - 1's tail.
template <int BV, bool kTransition>
__device__ __forceinline__ void produce_chunks(const FusedParams& p, const FusedCwSmem<BV>& sm,
                                               int64_t c_begin, int64_t c_end, int h, int v0,
                                               bool with_v) {
  // 32-bit chunk indices (they stay below 2^31: launch_prepare's bound on max_chunks x Hv), so
  // that the loop fits the producer's 24 registers without spilling.
  const int first = static_cast<int>(c_begin), count = static_cast<int>(c_end - c_begin);
  for (int n = 0; n < count; ++n) {
    const int c = first + n;
    const int b = n % 2;
    // The chunk's T, P, e, f written (checked before the stage's release: the poll's L2 round
    // trip then overlaps the math warps' use of the stage instead of delaying its refill).
    if (p.ready) wait_until_at_least(p.ready + c, p.d.Hv);
    // The k-th release of stage b ends chunk b + 2 k: chunk n - 2's is release n / 2 - 1.
    if (n >= 2) mbarrier_wait_parity(sm.empty(b), static_cast<uint32_t>((n / 2 - 1) % 2));
    issue_chunk_loads<BV, kTransition>(p, sm, c, b, h, v0, with_v);
    if (!kTransition) {
      if (n >= 1) mbarrier_wait_parity(sm.q_empty(), static_cast<uint32_t>((n - 1) % 2));
      issue_q_load<BV>(p, sm, c, h);
    }
  }
}

// Zeroes rows [len, 64) of stage s's k and V tiles (a chunk that ends a sequence early): the
// tokens there belong to the next sequence, and only exact zeros keep them (even non-finite
// ones) out of this sequence's products. Whole 128-byte rows, so the swizzle does not matter.
// `tid` counts the kThreads math threads.
template <int BV, int kThreads>
__device__ __forceinline__ void zero_past_end(const FusedCwSmem<BV>& sm, int s, int len, int tid) {
  constexpr int kTiles = 2 + FusedCwSmem<BV>::kVHalves, kRowChunks = 128 / 16;
  const int rows = kC - len;
  for (int u = tid; u < kTiles * rows * kRowChunks; u += kThreads) {
    const int tile = u / (rows * kRowChunks), r = len + (u / kRowChunks) % rows, c = u % kRowChunks;
    uint16_t* base = tile < 2 ? sm.k(s, tile).p : sm.v(s, tile - 2).p;
    *reinterpret_cast<uint4*>(base + r * 64 + 8 * c) = make_uint4(0, 0, 0, 0);
  }
}

// Chunk ci's output, this warp's 16 columns (o16[nj]: the scaled O^T fragment pairs packed to
// 16 bits, value columns g and g + 8 x chunk rows 8 nj + 2t, + 1), transposed into the warp's
// own columns of the staging tile by stmatrix .trans (8 x 8 matrices: chunk rows 8 nj .. + 7 x
// value columns vc .. + 7 and vc + 8 .. + 15, one 16-byte row segment each, which the 128-byte
// swizzle keeps contiguous), then 16-byte stores of the rows inside the chunk. Warp-private:
// only __syncwarp (this warp's reads of the previous chunk's rows are done before the writes).
template <int BV>
__device__ __forceinline__ void store_output_cw(const FusedParams& p, const FusedCwSmem<BV>& sm,
                                                const uint32_t (&o16)[kC / 8][2],
                                                const ChunkInfo& ci, int h, int v0, int vw,
                                                int lane) {
  using HalfTile = typename FusedCwSmem<BV>::HalfTile;
  const Dims& d = p.d;
  const int vc = vw % 64;
  const HalfTile tile = sm.out(vw / 64);
  __syncwarp();
  // Lane l addresses row l % 8 of matrix l / 8: chunk rows 8 (nj + m / 2) + l % 8, columns
  // vc + 8 (m % 2).
  const int m = lane / 8;
  const uint32_t row_addr = tile.addr() + 2 * HalfTile::offset(8 * (m / 2) + lane % 8, vc + 8 * (m % 2));
#pragma unroll
  for (int nj = 0; nj < kC / 8; nj += 2) {
    const uint32_t r[4] = {o16[nj][0], o16[nj][1], o16[nj + 1][0], o16[nj + 1][1]};
    stsm_x4_trans_at(row_addr + 8 * nj * HalfTile::kRowBytes, r);
  }
  __syncwarp();
  uint16_t* const o = static_cast<uint16_t*>(p.o) + (ci.tok_begin * d.Hv + h) * kV + v0 + vw;
  const int r0 = lane / 2, c8 = 8 * (lane % 2);
  const uint4* const src = reinterpret_cast<const uint4*>(tile.p + HalfTile::offset(r0, vc + c8));
#pragma unroll
  for (int i = 0; i < 2 * kC / 32; ++i) {  // rows r0 + 16 i
    const int r = r0 + 16 * i;
    if (r < ci.len) *reinterpret_cast<uint4*>(o + int64_t(r) * d.Hv * kV + c8) = src[i * 16 * 64 / 8];
  }
}

// D (64 x 64) = A B^T (+ D when accumulate), depth 64, with B^T a lower-triangular tile
// (T or P, rows = D's columns) in its shared operand image at sB (LowerPackedTile) and a[kk]
// the A fragment of depth step kk, which reads slab kk (m64n64k16, 32-byte swizzle).
template <class Elem>
__device__ __forceinline__ void wgmma_lower_packed(float (&d)[kC / 8][4], const uint32_t (&a)[kC / 16][4],
                                                   uint32_t sB, bool accumulate) {
  using L = LowerPackedTile;
  static_assert(kC == 16 * L::kSlabs, "a slab per depth step of 16");
#pragma unroll
  for (int kk = 0; kk < L::kSlabs; ++kk)
    wgmma_m64n64k16<Elem, false>(d, a[kk], sw32_desc(sB + L::smem_slab_offset(kk), L::kAtomBytes),
                                 accumulate || kk > 0);
}

// Calls f(S^T element, state row, column within the V-block) for this warp's fragment.
template <class Float, class F>
__device__ __forceinline__ void for_each_state_t_element(Float (&S)[kK / 8][4], int vw, int g,
                                                         int t, F f) {
#pragma unroll
  for (int nj = 0; nj < kK / 8; ++nj)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      f(S[nj][e], 8 * nj + 2 * t + (e & 1), vw + g + (e >= 2 ? 8 : 0));
}

// The A fragment (depth step kk: C columns 16 kk .. 16 kk + 15) of a 16-row C fragment array,
// each pair scaled by s(column) and rounded to the input dtype.
template <class Elem, int N, class Scale>
__device__ __forceinline__ void pack_a(uint32_t (&a)[4], const float (&C)[N][4], int kk, int t,
                                       Scale s) {
  using Ops = ElemOps<Elem>;
  const int c0 = 16 * kk + 2 * t;
  const float s0 = s(c0), s1 = s(c0 + 1), s8 = s(c0 + 8), s9 = s(c0 + 9);
  a[0] = Ops::pack(s0 * C[2 * kk][0], s1 * C[2 * kk][1]);
  a[1] = Ops::pack(s0 * C[2 * kk][2], s1 * C[2 * kk][3]);
  a[2] = Ops::pack(s8 * C[2 * kk + 1][0], s9 * C[2 * kk + 1][1]);
  a[3] = Ops::pack(s8 * C[2 * kk + 1][2], s9 * C[2 * kk + 1][3]);
}

// One CTA's chunk loop over segment `seg` (unit `item`) of v-head h. kTransition: CP pass 1
// (Mode::Transition) over the augmented state [M | N] (2 x 128 columns), columns col0 ..
// col0 + BV - 1: M columns start from the identity with v = 0, N columns from zero (h0 on a
// sequence's first segment) with the real v; no output, and only U, Vd and the state update
// per chunk; the end state goes to transfer. Otherwise the output of V-block col0 (its end
// state to ht on a sequence's last segment), and with to_transfer (a sequence's first segment
// run in pass 1, see chunk_loop_cw_kernel) also to transfer's N columns kV + col0 .., as pass 1
// leaves them for the fix-up.
// Warp roles: warpgroup 0 is the producer (thread 0 issues every TMA copy, waiting on the
// math warps' releases; the warpgroup keeps 24 registers), warpgroups 1.. are the math
// warpgroups (64 value columns each, the registers the producer gave back). They never meet
// at a CTA barrier inside the loop: only the ring's mbarriers order them.
template <int BV, class Elem, bool kTransition, bool kStates = false>
__device__ __forceinline__ void run_chunk_loop_cw(const FusedParams& p, const Segment& seg,
                                                  int64_t item, int h, int col0,
                                                  bool to_transfer) {
  using Ops = ElemOps<Elem>;
  // kStates: the backward's recompute (an Output-mode launch with chunk_states): the products
  // of pass 1 (no q, P or output) from the real start state, and each chunk's start state S^T,
  // 16-bit, to chunk_states [chunk, Hv, V, K] (the transposed layout the fragments hold).
  constexpr bool kNoOut = kTransition || kStates;
  constexpr int kMathThreads = cw_math_threads(BV);
  constexpr int kMathWarps = kMathThreads / 32;
  constexpr int kMathBarrier = 1;  // named barrier of the math warpgroups
  const Dims& d = p.d;
  const bool m_part = kTransition && col0 < kV;
  const int v0 = col0 % kV;
  extern __shared__ __align__(1024) char smem_raw[];  // wgmma operand tiles: 1024-byte aligned
  const FusedCwSmem<BV> sm{smem_raw};
  const int64_t c_begin = seg.chunk_begin, c_end = seg.chunk_end;
  if (threadIdx.x == 0) {
    mbarrier_init(sm.full(0), 1);
    mbarrier_init(sm.full(1), 1);
    mbarrier_init(sm.q_full(), 1);
    mbarrier_init(sm.empty(0), kMathWarps);
    mbarrier_init(sm.empty(1), kMathWarps);
    mbarrier_init(sm.q_empty(), kMathWarps);
    fence_mbarrier_init();
  }
  zero_lower_packed_prefixes<BV>(sm, threadIdx.x, blockDim.x);
  fence_proxy_async_shared();  // the zeros before the tensor cores' (async proxy) reads
  __syncthreads();  // the last CTA-wide barrier: the producer warps exit below
  if (threadIdx.x < kCwProducerThreads) {
    setmaxnreg_dec<kCwProducerRegs>();
    if (threadIdx.x == 0)
      produce_chunks<BV, kNoOut>(p, sm, c_begin, c_end, h, v0, !m_part);
    return;
  }
  setmaxnreg_inc<cw_math_regs(BV)>();

  const int tid = threadIdx.x - kCwProducerThreads;  // math thread
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int vw = kCwWarpCols * warp;  // this warp's first column within the V-block
  using HalfTile = typename FusedCwSmem<BV>::HalfTile;
  const int vh = vw / 64, vc = vw % 64;  // this warp's V half and its first column there
  const auto unit = [](int) { return 1.f; };

  // S^T from h0 (or zero) on a sequence's first segment, else the segment's fixed-up start;
  // in pass 1 the identity (M) or zero (N).
  float S[kK / 8][4];
  for_each_state_t_element(S, vw, g, t, [&](float& x, int row, int c) {
    load_start_element(x, p, seg, item, h, row, v0 + c, kTransition, m_part);
  });
  if (m_part) {  // v = 0 for the M columns: their V tiles stay zero (never loaded)
    for (int j = 0; j < FusedCwSmem<BV>::kVHalves; ++j) {
      zero_tile<kMathThreads>(sm.v(0, j).p, tid);
      zero_tile<kMathThreads>(sm.v(1, j).p, tid);
    }
    named_sync(kMathBarrier, kMathThreads);
  }

  // The previous chunk's output, packed, stored while the next chunk's last products run.
  uint32_t o16[kC / 8][2];
  ChunkInfo ci_prev{};
  ChunkInfo ci_next = c_begin < c_end ? p.table[c_begin] : ChunkInfo{};
  for (int64_t c = c_begin; c < c_end; ++c) {
    const int64_t n = c - c_begin;  // chunks done by this CTA
    const int b = static_cast<int>(n % 2);  // ring stage; its barrier's phase parity (n / 2) % 2
    const ChunkInfo ci = ci_next;
    if (c + 1 < c_end) ci_next = p.table[c + 1];  // used next chunk: its latency hides here
    mbarrier_wait_parity(sm.full(b), static_cast<uint32_t>((n / 2) % 2));
    if (ci.len < kC) {  // a sequence's last chunk, cut short (uniform over the CTA)
      zero_past_end<BV, kMathThreads>(sm, b, ci.len, tid);
      fence_proxy_async_shared();  // the zeros before the tensor cores' (async proxy) reads
      named_sync(kMathBarrier, kMathThreads);
    }
    const uint32_t sK = smem_addr(sm.k(b, 0).p), sQ = smem_addr(sm.q(0).p);
    const HalfTile sV = sm.v(b, vh);
    const uint32_t sT = smem_addr(sm.t(b)), sP = smem_addr(sm.scores(b));
    const float* ev = sm.ef(b);
    const float* fv = ev + kC;
    const float* bv = ev + 2 * kC;  // beta (0 past the chunk's end)

    // 1. U^T = S16^T K^T and O^T = S16^T Q^T: 64 x 64 each, depth 128 (8 steps of two
    //    m64n64k16). Depth step kk reads half kk / 4 of k and q, the 32-byte slice kk % 4 of
    //    each 128-byte row (n-rows = chunk rows, 8-row groups 1024 B apart).
    float U[kC / 8][4], O[kC / 8][4];
    {
      uint32_t sa[kK / 16][4];
#pragma unroll
      for (int kk = 0; kk < kK / 16; ++kk) pack_a<Elem>(sa[kk], S, kk, t, unit);
      if constexpr (kStates) {
        // A fragment kk: (rows g, g + 8) x (columns 16 kk + 2t, + 8) of S^T, as 16-bit pairs.
        uint32_t* st = reinterpret_cast<uint32_t*>(
            p.chunk_states + (c * d.Hv + h) * int64_t(kK * kV) + int64_t(v0 + vw + g) * kK);
#pragma unroll
        for (int kk = 0; kk < kK / 16; ++kk) {
          const int col = 16 * kk + 2 * t;
          st[col / 2] = sa[kk][0];
          st[(8 * kK + col) / 2] = sa[kk][1];
          st[(col + 8) / 2] = sa[kk][2];
          st[(8 * kK + col + 8) / 2] = sa[kk][3];
        }
      }
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kK / 16; ++kk) {
        const uint32_t off = (kk / 4) * FusedCwSmem<BV>::kHalfBytes + 32 * (kk % 4);
        wgmma_m64n64k16<Elem, false>(U, sa[kk], sw128_desc(sK + off, 16, 1024), kk > 0);
      }
      wgmma_commit();  // U first: the chain waits only for it; O^T runs behind W'
      if (!kNoOut) {
        mbarrier_wait_parity(sm.q_full(), static_cast<uint32_t>(n % 2));
        wgmma_fence();  // (after the wait's branch: the fragments sa are read again)
#pragma unroll
        for (int kk = 0; kk < kK / 16; ++kk) {
          const uint32_t off = (kk / 4) * FusedCwSmem<BV>::kHalfBytes + 32 * (kk % 4);
          wgmma_m64n64k16<Elem, false>(O, sa[kk], sw128_desc(sQ + off, 16, 1024), kk > 0);
        }
      }
      wgmma_commit();  // (empty in pass 1: keeps the group count of wgmma_wait<1> below)
    }
    // V^T in A layout (ldmatrix.trans: the C layout of U^T pair for pair) while they run.
    uint32_t va[kC / 16][4];
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) ldsm_x4_trans_at(va[kk], sV.frag_nk(16 * kk, vc));
    wgmma_wait<1>();
    fence_accumulators(U);

    // 2. (diag(beta) W')^T = (V^T - U^T diag(e)) diag(beta), packed as A fragments (depth =
    //    chunk rows): beta scales W' in fp32 and is rounded with it, never alone.
    uint32_t wa[kC / 16][4];
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) {
      const int c0 = 16 * kk + 2 * t;
      const float e0 = ev[c0], e1 = ev[c0 + 1], e8 = ev[c0 + 8], e9 = ev[c0 + 9];
      const float b0 = bv[c0], b1 = bv[c0 + 1], b8 = bv[c0 + 8], b9 = bv[c0 + 9];
      float2 x = Ops::unpack(va[kk][0]);
      wa[kk][0] = Ops::pack(b0 * (x.x - e0 * U[2 * kk][0]), b1 * (x.y - e1 * U[2 * kk][1]));
      x = Ops::unpack(va[kk][1]);
      wa[kk][1] = Ops::pack(b0 * (x.x - e0 * U[2 * kk][2]), b1 * (x.y - e1 * U[2 * kk][3]));
      x = Ops::unpack(va[kk][2]);
      wa[kk][2] = Ops::pack(b8 * (x.x - e8 * U[2 * kk + 1][0]), b9 * (x.y - e9 * U[2 * kk + 1][1]));
      x = Ops::unpack(va[kk][3]);
      wa[kk][3] = Ops::pack(b8 * (x.x - e8 * U[2 * kk + 1][2]), b9 * (x.y - e9 * U[2 * kk + 1][3]));
    }

    // 3. Vd^T = (diag(beta) W')^T T^T: 64 x 64, depth 64 (T rows = n, k-major, lower-packed).
    float VD[kC / 8][4];
    wgmma_fence();
    wgmma_lower_packed<Elem>(VD, wa, sT, false);
    wgmma_commit();
    // S^T e_last meanwhile (S is no operand of the products in flight).
    const float elast = ev[kC - 1];
#pragma unroll
    for (int nj = 0; nj < kK / 8; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) S[nj][e] *= elast;
    wgmma_wait<0>();  // Vd, and O^T's group before it
    fence_accumulators(VD);
    if constexpr (!kNoOut) {
      fence_accumulators(O);
      if (lane == 0) mbarrier_arrive(sm.q_empty());  // this warp's reads of q are done
#pragma unroll
      for (int nj = 0; nj < kC / 8; ++nj) {
        const float e0 = ev[8 * nj + 2 * t], e1 = ev[8 * nj + 2 * t + 1];
        O[nj][0] *= e0;
        O[nj][1] *= e1;
        O[nj][2] *= e0;
        O[nj][3] *= e1;
      }
    }

    // 4. O^T += Vd16^T P^T (depth 64; P rows = n, k-major, lower-packed) and
    //    S^T = e_last S^T + V'^T K with V'^T = Vd^T diag(f) (64 x 128, depth = chunk rows:
    //    K read n-contiguous, its two 64-column halves 8 KB apart, 8-row depth groups 1024 B
    //    apart, depth step kk at rows 16 kk).
    {
      uint32_t da[kC / 16][4], fa[kC / 16][4];
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk) {
        if (!kNoOut) pack_a<Elem>(da[kk], VD, kk, t, unit);
        pack_a<Elem>(fa[kk], VD, kk, t, [&](int r) { return fv[r]; });
      }
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kC / 16; ++kk)
        wgmma_m64n128k16<Elem, true>(
            S, fa[kk], sw128_desc(sK + 2048 * kk, FusedCwSmem<BV>::kHalfBytes, 1024), true);
      if (!kNoOut) wgmma_lower_packed<Elem>(O, da, sP, true);
      wgmma_commit();
      // The previous chunk's output while the tensor cores run the state update and O += P
      // Vd (the warp would only wait for them: the chain's longest idle stretch).
      if (!kNoOut && n > 0) store_output_cw<BV>(p, sm, o16, ci_prev, h, v0, vw, lane);
      wgmma_wait<0>();
    }
    fence_accumulators(S);
    // Every product reading stage b (k, V, T, P, e, f) is done: the producer may refill it.
    if (lane == 0) mbarrier_arrive(sm.empty(b));
    if constexpr (kNoOut) continue;  // no output in pass 1 (or the recompute)
    fence_accumulators(O);

    // 5. o = scale O, packed; stored during the next chunk's state update (or after the loop).
#pragma unroll
    for (int nj = 0; nj < kC / 8; ++nj) {
      o16[nj][0] = Ops::pack(d.scale * O[nj][0], d.scale * O[nj][1]);
      o16[nj][1] = Ops::pack(d.scale * O[nj][2], d.scale * O[nj][3]);
    }
    ci_prev = ci;
  }
  if (!kNoOut && c_end > c_begin) store_output_cw<BV>(p, sm, o16, ci_prev, h, v0, vw, lane);

  if (kTransition || to_transfer) {  // columns .. of the segment's [M | N] transfer
    // (the base made opaque here: formed before the loop, its 64 element addresses would be
    // kept live across it, past the math warps' registers)
    float* base = p.transfer + (item * d.Hv + h) * int64_t(kK * 2 * kV) + (kTransition ? col0 : kV + col0);
    asm volatile("" : "+l"(base));
    for_each_state_t_element(S, vw, g, t, [&](const float& x, int row, int c) {
      base[row * (2 * kV) + c] = x;
    });
  } else if ((seg.flags & Segment::kLast) && p.ht) {
    for_each_state_t_element(S, vw, g, t, [&](const float& x, int row, int c) {
      p.ht[staged::state_index(d, seg.seq, h, row, v0 + c)] = x;
    });
  }
  // Beside the prepare kernel: this grid completes only after it has (what follows in the
  // stream waits for this grid alone). Beside the backward's CP pass 1, CTA 0 alone waits for
  // it, so that the others free their SMs at once. Otherwise the wait at the kernel's top has
  // returned: a no-op. (The math warps' exit: the producer warpgroup, at 24 registers, returns
  // earlier.)
  if (!p.beside_prior || blockIdx.x == 0) wait_for_prior_grids();
}

// One CTA per (segment, v-head, V-block) of the launch's mode (run_chunk_loop_cw).
// A sequence's first segment (when another follows) needs no M columns in CP pass 1 (the
// fix-up takes its N, started from h0, as the next start): those CTAs exit. With
// p.first_in_pass1, pass 1 runs the segment as its output: its N columns' CTAs run the Output
// loop over the segment, V-block for V-block, and leave the end state in transfer's N columns
// as pass 1 would, so that the main pass (where such segments then exit at once) has one
// segment fewer per sequence to run after the fix-up.
template <int BV, class Elem, bool kTransition, bool kStates = false>
__global__ void __launch_bounds__(cw_threads(BV), cw_ctas_per_sm(BV))
    chunk_loop_cw_kernel(const __grid_constant__ FusedParams p) {
  // Launched as a programmatic dependent of the previous kernel. Beside the prepare kernel
  // (p.ready), only its per-chunk counts order the reads; the grids before it completed before
  // it let this grid launch, and the wait moves to the exits. Beside the backward's CP pass 1
  // (p.beside_prior) nothing this grid reads waits: the wait moves to CTA 0's exit.
  if (!p.ready && !p.beside_prior) wait_for_prior_grids();
  // (after the wait: the tail prepare reads what the grids before this one wrote)
  if (p.early_dependents) allow_dependents_to_launch();
  // One flat grid, the V-block fastest, then the head: the CTAs that read the same k, q
  // (a GQA group's heads) and the same T, P (the V-blocks of one head) are launched together
  // and stream them through L2 at the same pace instead of fetching them from DRAM again a
  // wave later.
  constexpr int kVBlocks = (kTransition ? 2 : 1) * kV / BV;
  const int h = static_cast<int>((blockIdx.x / kVBlocks) % p.d.Hv);
  const int64_t item = blockIdx.x / kVBlocks / p.d.Hv;
  const Segment seg = segment_of(p, item);
  const int col0 = static_cast<int>(blockIdx.x % kVBlocks) * BV;  // in the [M | N] state in pass 1
  // A sequence's first segment when another follows: run by pass 1 (see above).
  const bool first_of_many = (seg.flags & Segment::kFirst) && !(seg.flags & Segment::kLast);
  // Pass 1 skips a sequence's last segment (nothing follows it) and the M columns of its first.
  const bool m_cols = kTransition && col0 < kV;
  if (!(seg.flags & Segment::kUsed) || (kTransition && (seg.flags & Segment::kLast)) ||
      (m_cols && first_of_many) || (!kTransition && first_of_many && p.first_in_pass1)) {
    // Beside the prepare kernel, CTA 0 waits for it before it exits, so that this grid
    // completes after it (see the end); the other idle CTAs leave their SM at once.
    if (blockIdx.x == 0) wait_for_prior_grids();
    return;
  }
  if (kTransition && first_of_many && p.first_in_pass1)
    run_chunk_loop_cw<BV, Elem, false>(p, seg, item, h, col0 - kV, true);
  else
    run_chunk_loop_cw<BV, Elem, kTransition, kStates>(p, seg, item, h, col0, false);
}

template <int BV, class Elem, bool kTransition, bool kStates = false>
cudaError_t launch_chunk_loop_cw_mode(const FusedParams& p, unsigned items, cudaStream_t stream) {
  const auto kernel = chunk_loop_cw_kernel<BV, Elem, kTransition, kStates>;
  // Two 106 KB CTAs per SM at BV = 64; one alone on its SM (p.sm_alone) when padded past half.
  const size_t smem = p.sm_alone && FusedCwSmem<BV>::bytes() < kAloneLaunchSmem
                          ? kAloneLaunchSmem
                          : FusedCwSmem<BV>::bytes();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const uint64_t ctas =
      uint64_t(items) * static_cast<uint64_t>(p.d.Hv) * ((kTransition ? 2 : 1) * kV / BV);
  if (ctas > 0x7fffffffu) return cudaErrorInvalidConfiguration;  // gridDim.x limit
  return launch_after_prior(kernel, static_cast<unsigned>(ctas), cw_threads(BV), smem, stream, p);
}

template <int BV, class Elem>
cudaError_t launch_chunk_loop_cw_typed(const FusedParams& p, unsigned items, cudaStream_t stream) {
  if (p.mode == Mode::Transition) return launch_chunk_loop_cw_mode<BV, Elem, true>(p, items, stream);
  if (p.chunk_states) return launch_chunk_loop_cw_mode<BV, Elem, false, true>(p, items, stream);
  return launch_chunk_loop_cw_mode<BV, Elem, false>(p, items, stream);
}

#define GDN_FUSED_INSTANTIATE_CHUNK_LOOP_CW(BV)                                               \
  template <>                                                                                 \
  cudaError_t launch_chunk_loop_cw<BV>(const FusedParams& p, unsigned items,                  \
                                       cudaStream_t stream) {                                 \
    return p.d.in_bf16 ? launch_chunk_loop_cw_typed<BV, __nv_bfloat16>(p, items, stream)      \
                       : launch_chunk_loop_cw_typed<BV, __half>(p, items, stream);            \
  }                                                                                           \
  template <>                                                                                 \
  const void* chunk_loop_cw_symbol<BV>(bool bf16) {                                           \
    return bf16 ? reinterpret_cast<const void*>(chunk_loop_cw_kernel<BV, __nv_bfloat16, false>) \
                : reinterpret_cast<const void*>(chunk_loop_cw_kernel<BV, __half, false>);     \
  }

}  // namespace gdn::fused
