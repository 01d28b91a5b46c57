// Parameter block and workspace of the chunked backward family (kernels/cuda/backward/).
//
// The backward runs in these launches after the forward's chunk table and prepare kernel
// (gamma, the 16-bit gated inverse T):
//   1. the forward recompute: the column-warp fused chunk loop (in CP segments: the config's,
//      else the launch plan's recompute_cp_chunks) writes each chunk's start state S^T,
//      16-bit, and no output;
//   2. the reverse state-gradient chain, serial over a sequence's (or CP segment's) chunks,
//      one CTA per (sequence, v-head, V-block) with dS in registers: each chunk's end-state
//      gradient dS', dV_new and dv. The cooperative roles' chain (dstate_chain.cuh) takes its
//      dS-independent inputs from a launch before it (chain_inputs.cu, parallel over (chunk,
//      v-head)); the column-warp roles' (dstate_chain_wg.cuh) forms them in a warpgroup of
//      its own;
//   3. the local gradients (local_grads.cu), parallel over (chunk, group of value heads): one
//      CTA walks the launch plan's local_heads value heads of one q/k head in order, summing
//      their dq, dk (dg with its reverse chunk-local cumsum fused, dbeta per head);
//      without CP on the wgmma chain, when its CTAs leave SMs idle, beside the chain: on those
//      SMs at once, each unit after its chunk's counts (ChainParams::ready);
//   4. when local_heads is less than the group (Hv / Hk), the deterministic sum of those
//      partial dq, dk over the group;
//   5. the fp32 repair of each sequence's short last chunk (short_chunk.cu), from the caller's
//      dht and h0, over the 16-bit outputs there.
// Workspace (beyond the forward's tables, gamma and T):
//   states16  [max_chunks, Hv, V, K] 16-bit  S^T at each chunk's start (transposed: the
//                                             column-warp loop's register layout)
//   dstate16  [max_chunks, Hv, K, V] 16-bit  dS' at each chunk's end
//   dvin16    [Ttot, Hv, V]          16-bit  scale P^T dO (the cooperative chain's input)
//   xq16      [max_chunks, Hv, K, V] 16-bit  scale Q^T diag(e) dO (the cooperative chain's
//                                             input)
//   dvnew16   [Ttot, Hv, V]          16-bit  gradient of V_new
//   dq_h, dk_h [Ttot, Hv / local_heads, K] fp32  partial dq, dk per group of local_heads value
//                                             heads (before the group sum; while a CTA walks
//                                             its heads, its running sum); the fused kernel's
//                                             per value head in the input dtype, [Ttot, Hv, K]
//                                             in the first half of each plane
//   ready     [max_chunks, Hv] + 1   int     the chain's per-chunk counts when the local
//                                             kernel runs beside it (ChainParams::ready), then
//                                             the local kernel's queue (LocalParams::queue); or
//                                             the fused kernel's published counts and the queue
//                                             of the group sum beside it
#pragma once

#include "forward/params.cuh"

namespace gdn::bwd {

using fused::ChunkInfo;
using fused::Dims;
using fused::kC;
using fused::kK;
using fused::kV;

// A sequence's last chunk of fewer than kShortChunkRows rows is recomputed in fp32 by
// short_chunk.cu over the 16-bit outputs: there a dbeta is a sum of few dot products of dV_new
// and W' rows (the last row's, one), and a whole problem's dbeta or dq may be nothing else (a
// one-token sequence: one element, whose rounding shows in full against the oracle).
inline constexpr int kShortChunkRows = 16;

struct ChainParams {
  Dims d;
  const void* k;
  const void* beta;
  const uint16_t* dvin16;  // scale P^T dO   [Ttot, Hv, V]      (chain_inputs.cuh; the
  const uint16_t* xq16;    // scale Q^T diag(e) dO [chunk, Hv, K, V]  cooperative chain's)
  const float* dht;  // optional
  float* dh0;        // optional
  void* dv;          // output: dv = dW' (input dtype)
  const int64_t* chunk_first;
  const ChunkInfo* table;
  const float* gcum;
  const uint16_t* t16;
  uint16_t* dstate16;
  uint16_t* dvnew16;
  // Exact CP (segs != nullptr): the reverse chain runs per segment. Pass 1 (transition) walks
  // every segment but a sequence's first over N, the columns kV .. 2 kV of the augmented
  // gradient [M | N] (grid.z spans N's V-blocks): from zero (from dht on a sequence's last
  // segment) with dO; it writes transfer's N columns and no output. M is not walked: the
  // reverse chain is the adjoint of the forward recurrence, so a segment's M is the transpose
  // of the forward's, which the recompute's pass 1 (in the same segments) left in transfer's M
  // columns. The forward fix-up then chains the segments, which pass 1 stores in reverse
  // order within each sequence (a sequence's last segment first), so that its
  // h_{i+1} = M_i h_i + N_i walks the reverse recurrence, reading each M transposed from the
  // segment's forward slot (fused::TransferM::ForwardTransposed): starts holds each segment's
  // end-state gradient. Pass 2 runs every segment from it.
  const fused::Segment* segs;
  const int64_t* seg_first;
  float* transfer;
  const float* starts;
  bool transition;
  // The wgmma chain's TMA loads (dstate_chain_wg.cuh; column-warp roles only): k and q as
  // [Ttot, Hk, K] and dO as [Ttot, Hv, V] in 64-token x 64-column boxes, t16 (row-major) as a
  // [chunk x Hv x 64, 64] 2-D view, all landing 128-byte swizzled; e, f, beta per (chunk,
  // v-head) from the prepare kernel, [chunk, Hv, 3, 64]. That chain forms dVin and Xq itself:
  // dvin16 and xq16 are the cooperative chain's.
  CUtensorMap tmap_k, tmap_q, tmap_t, tmap_do;
  const float* gate_ef;
  // Beside the local kernel (column-warp roles, the pass with outputs; else null):
  // [max_chunks, Hv] counts, zero before the launch; each CTA raises (chunk, v-head)'s by one
  // once its dstate16, dvnew16 and dv of the chunk are visible, and lets the local kernel
  // launch as soon as it runs.
  int* ready;
  // CP pass 1 followed by the forward recompute's state loop (BackwardPlan::
  // pass1_beside_recompute): every CTA lets that loop launch as soon as it runs, so that the
  // loop's CTAs take the SMs pass 1 leaves (the loop reads nothing pass 1 writes).
  bool early_dependents;
};

struct LocalParams {
  Dims d;
  int heads_per_cta;  // value heads one CTA walks (a divisor of d.group); == d.group: dq, dk
                      // are written whole, in the input dtype, and need no group sum
  const int64_t* chunk_first;
  const float* h0;   // optional: a sequence's first chunk takes <S, dS'> from it in fp32
  const float* dht;  // optional: a sequence's last chunk takes <S, dS'> from it in fp32
  const void* q;
  const void* k;
  const void* v;
  const void* d_o;
  const void* dv;
  const void* beta;
  const ChunkInfo* table;
  const float* gcum;
  const uint16_t* t16;
  const uint16_t* states16;  // S^T per chunk
  const uint16_t* dstate16;
  const uint16_t* dvnew16;
  float* dq_h;  // [Ttot, Hv / heads_per_cta, K]: the running and partial sums
  float* dk_h;
  void* dq;     // output (input dtype), written when heads_per_cta == d.group
  void* dk;
  float* dg;
  void* dbeta;
  // Beside the chain (null: after it): the chain's counts (ChainParams::ready); a unit waits
  // until its (chunk, v-head) count reaches ready_target (the chain's V-blocks) before it
  // loads dS', dv and dV_new, and the CTAs take the chunks in the order the chain finishes
  // them (each sequence's from its end).
  const int* ready;
  int ready_target;
  unsigned* queue;  // beside the chain: the items' queue (ordinals), zero before the launch
};

}  // namespace gdn::bwd
