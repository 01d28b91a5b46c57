// The fused backward kernel of the chunked backward (producer-consumer roles, the full 128
// value columns per CTA): one CTA of 512 threads per (sequence or CP segment, v-head) walks its
// chunks from last to first with the fp32 state gradient dS in registers and computes, per
// chunk, the reverse chain and every local gradient on chip. It replaces the reverse chain's
// outputs pass and the local-gradient kernel of the column-warp backward: no dS', dV_new or dv
// round trip through HBM, and the chain's products run beside the local ones.
//
// Warpgroups (setmaxnreg; 128 x (200 + 144 + 144 + 24) = 65,536 registers):
//   0 state  (200)  dS (128 x 128 fp32: two m64 row halves x two n64 column halves); per chunk
//                   the chunk's gamma, dS' -> its 16-bit tile, P, <S, dS'>,
//                   dS = e_last dS' + Xq + K^T Edw
//   1 chain  (144)  dVn = diag(f) K dS' + P^T dO, W = T^T dVn -> dv and Edw; then dk
//   2 local  (144)  W', V_new, dPm, dq; then dAg, dT, X, dA, Z and the dgamma, dbeta sums
//                   (the longest path of a step: P, which needs no dS either, is the state's)
//   3 producer (24) one thread: the chunk's TMA loads into a single buffer, two groups
// Every product is a wgmma of m64n64k16 steps (a 64 x 128 result is two n64 halves), 16-bit
// operands, fp32 accumulators; shared tiles in the 128-byte swizzle of fused::WgTile16.
//
// Per chunk (e = exp(gamma), f = exp(gamma_last - gamma), Gam[i][j] = exp(gamma_i - gamma_j),
// beta, T the gated inverse, S the chunk's start state (16-bit S^T from the recompute), dS' the
// gradient of its end state):
//   state  P    = scale Q K^T o Gam, i >= j                      (64 x 64, depth 128) -> tile
//   local  W'   = V - diag(e) K S                               (64 x 128, depth 128) -> V's tile
//   local  V_new = T diag(beta) W'                              (depth 64; A from registers)
//   local  dPm  = scale (dO V_new^T) o Gam, i >= j              (64 x 64, depth 128) -> tile
//   local  dq   = scale diag(e) dO S^T + dPm K                  (64 x 128) -> dq (or its part)
//   state  dS'  -> 16-bit tile; <S, dS'>; dS = e_last dS' + (scale diag(e) Q)^T dO
//   chain  dVn  = diag(f) K dS' + P^T dO                        (64 x 128) -> tile
//   chain  dW'  = diag(beta) T^T dVn -> dv; Edw = -diag(e) dW'  (64 x 128) -> tile
//   state  dS  += K^T Edw                                       (128 x 128, depth 64)
//   local  dAg  = dVn W'^T: dbeta columns of dAg o T; dT = dAg diag(beta) -> tile;
//          X = T^T dT; dA = X T^T; K K^T; Z = -diag(beta) dA o Gam, i > j -> tile (dT's);
//          the rows and columns of dPm o Q K^T + Z o K K^T (dgamma), the rows of
//          -dA o K K^T o Gam (dbeta)
//   chain  dk   = (diag(f) V_new) dS'^T + Edw S^T + dPm^T Q + Z K + Z^T K -> dk (or its part);
//          the rows of K o dk after the first two terms: f (K dS') . V_new and -e (K S) . dW'
//   chain  (warp 0) dg = reverse cumsum of dgamma + the exclusive prefix of the f terms; dbeta
// The formulas and their roundings are the local kernel's (local_grads.cuh) and the wgmma
// chain's (dstate_chain_wg.cuh), but for three operands rounded to 16 bits here: f o V_new,
// (scale e o Q)^T and f o K dS' + P^T dO summed in fp32 before it (dVin is not rounded alone).
//
// Hand-offs are named barriers (a producer warpgroup arrives, its consumer syncs). Every input
// is single-buffered, in two groups with a full and an empty mbarrier each, so the warpgroups
// run a chunk in lockstep: group A (q, v, dO, S^T: 80 KB) is released once its last readers are
// done (the state after Xq, the local after dAg, the chain after dPm^T Q), group B (k, T, the
// gates: 25 KB) at the chunk's end. The next chunk's group A then loads under the chunk's last
// products (X, dA, K K^T and Z; Z K and Z^T K), and only group B's round trip stays between
// chunks. dgamma and dbeta partial sums alternate between two buffers by chunk parity, since
// the chain warpgroup sums them after it has released the chunk's inputs.
#pragma once

#include "bwd_params.cuh"
#include "arch/tma.cuh"  // the input groups' mbarriers
#include "arch/wgmma.cuh"
#include "dstate_chain.cuh"  // ChainItem

namespace gdn::bwd {

inline constexpr int kFusedThreads = 512;
inline constexpr int kFusedStateWg = 0;
inline constexpr int kFusedChainWg = 1;
inline constexpr int kFusedLocalWg = 2;  // warpgroup 3: the producer
inline constexpr int kFusedMathWarps = 12;  // the empty barrier's arrivals: every math warp
inline constexpr int kFusedStateRegs = 200;
inline constexpr int kFusedChainRegs = 144;
inline constexpr int kFusedLocalRegs = 144;
inline constexpr int kFusedProducerRegs = 24;
static_assert(128 * (kFusedStateRegs + kFusedChainRegs + kFusedLocalRegs + kFusedProducerRegs) == 65536,
              "the register file of one CTA per SM");

// Named barrier ids (0 is __syncthreads) and their thread counts.
enum FusedBarrier : int {
  kBarInputs = 1,  // 384: rows past a short chunk's end zeroed (the local warpgroup)
  kBarP,           // 256: state -> chain, P
  kBarDs,          // 256: state -> chain, dS'
  kBarVn,          // 256: local -> chain, V_new
  kBarDvn,         // 256: chain -> local, dVn
  kBarEdw,         // 256: chain -> state, Edw
  kBarDpm,         // 256: local -> chain, dPm
  kBarZ,           // 256: local -> chain, Z and the local dgamma, dbeta sums
  kBarSdot,        // 256: state -> chain, e_last <S, dS'>
  kBarChainWg,     // 128: within the chain warpgroup
  kBarLocalWg,     // 128: within the local warpgroup
  kBarStateWg,     // 128: within the state warpgroup
  kBarGamma,       // 256: state -> local, the chunk's gamma in shared memory
};

// Where the state warpgroup stores dS after its item's first chunk (ChainItem's end view), kept
// in shared memory over the chunk loop: in registers beside dS it would spill.
struct FusedEndView {
  float* dst;
  int64_t row, col;
};

// The dgamma and dbeta partial sums of one chunk (rows r = 0 .. 63), each written by one
// warpgroup; per-warp column sums are added in warp order.
struct FusedSums {
  float qs[kC];           // local: scale e (Q o dO S^T) 1
  float kds[kC];          // chain: (K o (f o V_new) dS'^T) 1
  float ksw[kC];          // chain: (K o Edw S^T) 1 = -e (K S) . dW'
  float mg_rows[2][kC];     // local: rows of dPm o Q K^T, of Z o K K^T
  float mg_cols[2][4][kC];  // local: their columns, per warp
  float db_rows[kC];      // local: rows of -dA o K K^T o Gam
  float db_cols[4][kC];   // local: columns of dAg o T, per warp
  float dgam[kC], fsum[kC], dbeta[kC];  // chain warp 0's scans
  float sdot[4];          // state: e_last <S, dS'>, per warp
};

// Shared memory: 16-bit tiles (fused::WgTile16, 1024-byte aligned): S^T and dS' (128 x 128),
// q, k, v (then W'), dO, V_new, dVn, Edw (64 x 128), T, P, dPm, dT (then Z) (64 x 64); e, f,
// beta (the prepare kernel's gate_ef, one bulk copy) and gamma; two FusedSums; the state's end
// view; the full and empty mbarriers of input groups A and B. 219 KB: one CTA per SM.
struct FusedSmem {
  static constexpr size_t kStateBytes = size_t(kK) * kV * 2;
  static constexpr size_t kRowsBytes = size_t(kC) * 128 * 2;
  static constexpr size_t kSquareBytes = size_t(kC) * kC * 2;
  static constexpr size_t kS = 0, kDs = kS + kStateBytes;
  static constexpr size_t kQ = kDs + kStateBytes, kKt = kQ + kRowsBytes, kVt = kKt + kRowsBytes,
                          kDo = kVt + kRowsBytes, kVn = kDo + kRowsBytes, kDvn = kVn + kRowsBytes,
                          kEdw = kDvn + kRowsBytes;
  static constexpr size_t kT = kEdw + kRowsBytes, kP = kT + kSquareBytes, kDpm = kP + kSquareBytes,
                          kDtz = kDpm + kSquareBytes;
  static constexpr size_t kGateBytes = 3 * kC * 4;  // e, f, beta: the bulk copy
  static constexpr size_t kVec = kDtz + kSquareBytes;  // gate (768 B), then gamma (256 B)
  static constexpr size_t kSums = kVec + 1024;
  static constexpr size_t kEndView = kSums + 2 * sizeof(FusedSums);
  static constexpr size_t kBars = kEndView + sizeof(FusedEndView);
  static constexpr size_t bytes() { return kBars + 4 * sizeof(uint64_t); }
  static_assert(kT % 1024 == 0 && kVec % 1024 == 0 && sizeof(FusedSums) % 16 == 0,
                "wgmma operand tiles on 1024-byte boundaries, 16-byte aligned vectors");
  static_assert(kDo + kRowsBytes == kQ + 4 * kRowsBytes, "q, k, v and dO in a row (rows past "
                                                         "a short chunk's end zeroed at once)");
  // Bytes the producer's copies deliver per chunk and group: A (q, v, dO, S^T), read last by
  // the middle of the step; B (k, T, e/f/beta), read to its end.
  static constexpr uint32_t kTxA = uint32_t(3 * kRowsBytes + kStateBytes);
  static constexpr uint32_t kTxB = uint32_t(kRowsBytes + kSquareBytes + kGateBytes);

  char* base;
  __device__ __forceinline__ fused::WgTile16 tile(size_t offset, int rows) const {
    return {reinterpret_cast<uint16_t*>(base + offset), rows};
  }
  // S^T: rows = value columns, columns = state rows. dS': rows = state rows.
  __device__ __forceinline__ fused::WgTile16 s() const { return tile(kS, kV); }
  __device__ __forceinline__ fused::WgTile16 ds() const { return tile(kDs, kK); }
  __device__ __forceinline__ fused::WgTile16 q() const { return tile(kQ, kC); }
  __device__ __forceinline__ fused::WgTile16 k() const { return tile(kKt, kC); }
  __device__ __forceinline__ fused::WgTile16 v() const { return tile(kVt, kC); }
  __device__ __forceinline__ fused::WgTile16 d_o() const { return tile(kDo, kC); }
  __device__ __forceinline__ fused::WgTile16 vn() const { return tile(kVn, kC); }
  __device__ __forceinline__ fused::WgTile16 dvn() const { return tile(kDvn, kC); }
  __device__ __forceinline__ fused::WgTile16 edw() const { return tile(kEdw, kC); }
  __device__ __forceinline__ fused::WgTile16 t() const { return tile(kT, kC); }
  __device__ __forceinline__ fused::WgTile16 p() const { return tile(kP, kC); }
  __device__ __forceinline__ fused::WgTile16 dpm() const { return tile(kDpm, kC); }
  __device__ __forceinline__ fused::WgTile16 dtz() const { return tile(kDtz, kC); }
  __device__ __forceinline__ float* gate() const { return reinterpret_cast<float*>(base + kVec); }
  __device__ __forceinline__ const float* e() const { return gate(); }
  __device__ __forceinline__ const float* f() const { return gate() + kC; }
  __device__ __forceinline__ const float* beta() const { return gate() + 2 * kC; }
  __device__ __forceinline__ float* gam() const { return gate() + 3 * kC; }
  __device__ __forceinline__ FusedSums& sums(int parity) const {
    return reinterpret_cast<FusedSums*>(base + kSums)[parity];
  }
  __device__ __forceinline__ FusedEndView& end_view() const {
    return *reinterpret_cast<FusedEndView*>(base + kEndView);
  }
  // Input group A (q, v, dO, S^T) and B (k, T, e/f/beta): loaded (full, one arrival and the
  // bytes) and released (empty, one arrival per math warp).
  __device__ __forceinline__ uint64_t* full_a() const { return reinterpret_cast<uint64_t*>(base + kBars); }
  __device__ __forceinline__ uint64_t* empty_a() const { return full_a() + 1; }
  __device__ __forceinline__ uint64_t* full_b() const { return full_a() + 2; }
  __device__ __forceinline__ uint64_t* empty_b() const { return full_a() + 3; }
  // Both groups of chunk iteration it are in shared memory.
  __device__ __forceinline__ void wait_inputs(int it) const {
    const auto parity = static_cast<uint32_t>(it % 2);
    fused::mbarrier_wait_parity(full_a(), parity);
    fused::mbarrier_wait_parity(full_b(), parity);
  }
  // This warp has read its last of group A, or of group B (lane 0 arrives for the warp).
  __device__ __forceinline__ void release_a(int lane) const {
    __syncwarp();
    if (lane == 0) fused::mbarrier_arrive(empty_a());
  }
  __device__ __forceinline__ void release_b(int lane) const {
    __syncwarp();
    if (lane == 0) fused::mbarrier_arrive(empty_b());
  }
};

struct FusedBwdParams {
  // The chain's block (bwd_params.cuh): the problem, k, beta, dht, dh0, dv, the tables, the
  // CP segments and their fixed-up end-state gradients (starts), and the TMA views of k, q, T
  // (row-major) and dO, e/f/beta (gate_ef). transition is false: CP pass 1 stays the wgmma
  // chain's.
  ChainParams c;
  // v as [Ttot, Hv, 128] token tiles; the recompute's S^T [chunk x Hv x 128, 128] in 128-row
  // boxes of 64 columns.
  CUtensorMap tmap_v, tmap_s;
  // dq, dk: the input dtype, [Ttot, Hk, K], when a q/k head serves one value head (group 1);
  // else each value head's part, also in the input dtype, [Ttot, Hv, K], for the group sum
  // (in the workspace's fp32 planes, half of each used).
  void* dq;
  void* dk;
  void* dq_h;
  void* dk_h;
  float* dg;
  void* dbeta;
  // Beside the group sum (BackwardPlan::group_sum_beside; null: the group sum follows the
  // kernel): [max_chunks, Hv] counts, zero before the launch; the CTA of (item, v-head h)
  // raises (chunk, h)'s to one once its dq and dk parts of the chunk are visible to the GPU
  // (every chunk but the item's first, which the group sum takes after this grid completes),
  // and every CTA lets the group sum launch as soon as it runs.
  int* published;
};

// A math warpgroup's thread: its item (formed after the role split: ChainItem's fields, kept
// from the kernel's entry, would hold registers past setmaxnreg) and its place in the 64-row
// products: warp w holds chunk rows rm + g and rm + g + 8 (rm = 16 w), columns 8 j + 2 t, + 1.
struct FusedThread {
  ChainItem ch;
  int tid, warp, lane, g, t, rm, ra, rb;
  __device__ __forceinline__ explicit FusedThread(const FusedBwdParams& p)
      : tid(threadIdx.x % 128), warp(tid / 32), lane(tid % 32), g(lane / 4), t(lane % 4),
        rm(16 * warp), ra(rm + g), rb(ra + 8) {
    chain_item(p.c, kV, ch);
  }
  // gamma of row tid (< 64) of chunk c (rows past a chunk's end repeat its last row's), read
  // from HBM a chunk ahead of its use ([Ttot, Hv] has no TMA box per head).
  __device__ __forceinline__ float chunk_gamma(const FusedBwdParams& p, int64_t c) const {
    const ChunkInfo ci = p.c.table[c];
    const int r = tid < ci.len ? tid : static_cast<int>(ci.len) - 1;
    return tid < kC ? p.c.gcum[(ci.tok_begin + r) * p.c.d.Hv + ch.h] : 0.f;
  }
};

// The chunk's decay between this thread's rows (ra, rb) and any column j, Gam[i][j] =
// exp(gamma_i - gamma_j), from the chunk's gamma in shared memory.
struct FusedGates {
  const float* gam;
  float ga, gb;
  int ra, rb;
  __device__ __forceinline__ FusedGates(const float* gamma, const FusedThread& th)
      : gam(gamma), ga(gamma[th.ra]), gb(gamma[th.rb]), ra(th.ra), rb(th.rb) {}
  // Every exponential formed, then selected: above the diagonal it may overflow.
  __device__ __forceinline__ float decay(int i, int j) const { return expf((i == ra ? ga : gb) - gam[j]); }
  // x = scale x o Gam on and below the diagonal, 0 above, for an accumulator of NT n8 blocks
  // at columns n0.. (P from Q K^T, dPm from dP).
  template <int NT>
  __device__ __forceinline__ void scale_causal(float (&x)[NT][4], int n0, float scale, int t) const {
#pragma unroll
    for (int nj = 0; nj < NT; ++nj)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e >= 2 ? rb : ra, j = n0 + 8 * nj + 2 * t + (e & 1);
        const float y = scale * x[nj][e] * decay(i, j);
        x[nj][e] = i >= j ? y : 0.f;
      }
  }
};

// One CTA per (item, v-head); items: sequences (no CP) or the CP segments.
cudaError_t launch_fused_bwd(const FusedBwdParams& p, int64_t items, cudaStream_t stream);
const void* fused_bwd_symbol(bool bf16);
inline constexpr size_t fused_bwd_smem_bytes() { return FusedSmem::bytes(); }

}  // namespace gdn::bwd
