// Parameter block, work items and shared-memory layout of the fused forward family.
//
// Workspace tensors (beyond the staged chunk table, gamma (not for the column-warp loop,
// which reads the gate vectors e, f instead) and the 16-bit T, with T = Gam o A0 (every loop
// scales W' by beta in fp32 before rounding it to 16 bits: Vd = T (diag(beta) W')),
// of the prepare kernel, which the fused kernel reads instead of recomputing):
//   CP only: seg_first [N + 1] int64, segs [max_segs] Segment,
//            transfer [max_segs, Hv, K, 2K] fp32: [M | N] of each segment (pass 1),
//            starts   [max_segs, Hv, K, V]  fp32: corrected start state of each segment.
#pragma once

#include <cuda.h>

#include "arch/mma.cuh"
#include "common/lower_packed_tile.cuh"
#include "staged/params.cuh"

namespace gdn::fused {

using staged::ChunkInfo;
using staged::Dims;
using staged::kC;
using staged::kK;
using staged::kV;

inline constexpr int kThreads = 128;  // 4 warps, Cooperative: every warp does every product
inline constexpr int kWarps = kThreads / 32;
inline constexpr int kPcThreads = 256;  // ProducerConsumer: a chain and an output warpgroup
inline constexpr int kCwWarpCols = 16;  // ColumnWarps: value columns per warp (one m16 tile)
// ColumnWarps: a producer warpgroup (one thread issues the TMA ring's copies; the warpgroup
// gives its registers back with setmaxnreg) and one math warpgroup per 64 columns of the
// V-block (a warp per 16 columns).
inline constexpr int kCwProducerThreads = 128;
constexpr int cw_math_threads(int block_v) { return block_v / kCwWarpCols * 32; }
constexpr int cw_threads(int block_v) { return kCwProducerThreads + cw_math_threads(block_v); }
// Two CTAs per SM at BV = 64 (108 KB each), one at 128.
constexpr int cw_ctas_per_sm(int block_v) { return block_v == 64 ? 2 : 1; }
// Register split (setmaxnreg): the producer keeps 24, the math warpgroups take what the CTA's
// launch allocation (65536 / (threads x CTAs per SM), rounded down to 8) leaves: 232 at
// BV = 64 (launch 128), 240 at 128 (launch 168).
inline constexpr int kCwProducerRegs = 24;
constexpr int cw_launch_regs(int block_v) {
  return 65536 / (cw_threads(block_v) * cw_ctas_per_sm(block_v)) / 8 * 8;
}
constexpr int cw_math_regs(int block_v) {
  const int r = (cw_launch_regs(block_v) * cw_threads(block_v) - kCwProducerRegs * kCwProducerThreads) /
                cw_math_threads(block_v) / 8 * 8;
  return r > 256 ? 256 : r;
}
static_assert(cw_math_regs(64) == 232 && cw_math_regs(128) == 240, "register split");

// A run of consecutive chunks of one sequence processed by one CTA (per head, V-block).
struct Segment {
  int64_t chunk_begin, chunk_end;  // [begin, end) in the chunk table; may be empty
  int32_t seq;
  int32_t flags;                   // kUsed | kFirst | kLast; 0 = unused table entry
  static constexpr int32_t kUsed = 1, kFirst = 2, kLast = 4;
};

// What a launch of the chunk loop computes.
//   Output:     o for every chunk, and ht on a sequence's last segment; the start state is
//               h0 (first segment) or starts[segment].
//   Transition: CP pass 1 over the augmented state [M | N] (2K columns, grid.z spans both):
//               M columns start from the identity with v = 0, N columns from zero with the
//               real v; the end state goes to transfer. No output. Last segments skip.
enum class Mode : int { Output = 0, Transition = 1 };

struct FusedParams {
  Dims d;
  const void* q;
  const void* k;
  const void* v;
  const void* beta;
  const float* h0;  // optional
  void* o;
  float* ht;        // optional
  const int64_t* chunk_first;
  const ChunkInfo* table;
  const float* gcum;
  const uint16_t* t16;  // [chunk, Hv, 64, 64] T in the input dtype (lower-packed
                            // tiles for the column-warp configs: ChunkWorkspace::lower_packed16)
  const uint16_t* scores16;  // [chunk, Hv, 64, 64] Gam o causal o Q K^T (column-warp loop,
                             // lower-packed)
  const float* gate_ef;      // [chunk, Hv, 3, 64] exp(gamma), exp(gamma_last - gamma), beta
                             // (beta 0 past the chunk's end; column-warp loop only)
  // Column-warp loop launched beside the prepare kernel (its programmatic dependent, before it
  // completes): the producer waits for ready[chunk] == Hv before loading a chunk's prepared
  // tiles, and the kernel waits for the prior grids only before it exits (so that its
  // completion still implies theirs). nullptr: launched after the prior grids completed.
  const int* ready;
  // Beside the prepare kernel in the exclusive overlap (the column-warp loop only): the launch
  // asks for kAloneLaunchSmem bytes of shared memory at least, so that no two of its CTAs share
  // an SM; they take the SMs the prepare grid left (staged::ChunkWorkspace::claims) one each.
  bool sm_alone;
  // CP with the column-warp loop: pass 1 runs each sequence's first segment (when another
  // follows) as its output, and the main pass skips it (the launch plan, plan/launch_plan.cpp).
  // Both passes read it.
  bool first_in_pass1;
  // CP pass 1 followed by the tail of a split prepare (plan/launch_plan.cpp,
  // staged::ChunkWorkspace::beside_loop): every CTA lets the dependent grid launch as soon as it
  // has started, so that the tail's CTAs take the room pass 1's last wave leaves.
  bool early_dependents;
  // Launched beside the grid before it (the backward's CP pass 1, which lets this grid launch
  // as soon as it runs and writes nothing this grid reads): no wait at the top, since the grids
  // before that one completed before it started; CTA 0 waits for it before it exits, so that
  // this grid completes after it and what follows in the stream waits for both. The other CTAs
  // leave their SM as soon as they are done.
  bool beside_prior;
  const Segment* segs;  // nullptr: one segment per sequence (no CP)
  const float* starts;  // CP: corrected start states
  float* transfer;      // CP pass 1 output
  Mode mode;
  int stages;           // ring depth, 2 or 3
  // The backward's forward recompute (column-warp loop, Output mode): each chunk's 16-bit
  // start state, transposed, S^T [chunk, Hv, V, K] in the input dtype (an operand of the
  // backward's local gradients), and no output (no q, P or o). nullptr: the forward.
  uint16_t* chunk_states;
  // Column-warp loop only: TMA descriptors of q, k ([Ttot, Hk, 128]) and v ([Ttot, Hv, 128])
  // (forward/tensor_maps.cuh); the kernel takes the block as a __grid_constant__ parameter.
  CUtensorMap tmap_q, tmap_k, tmap_v;
};

// More than half of an SM's 228 KB (Hopper) with the per-CTA reserve: one CTA per SM.
inline constexpr size_t kAloneLaunchSmem = 116 * 1024;

// Padded strides (elements): a 16-byte pad per row keeps ldmatrix conflict-free.
inline constexpr int kLdQK = kK + 8;   // 16-bit q, k rows
inline constexpr int kLdT = kC + 8;    // 16-bit T rows

// Shared memory of one CTA. Per ring stage: q, k (64 x 128), the V-block (64 x BV), T
// (64 x 64), all 16-bit, and gamma (64 fp32). Then the chain buffers: the 16-bit state copy
// S16 (128 x BV) and W' (64 x BV). Vd and V' (64 x BV each) live in S16's bytes: S16 is read
// only in step 2 and Vd/V' are written in step 4, with a block barrier between them, and read
// in step 5, before the next chunk's top barrier and S16 write. (128 rows = 2 x 64 rows, so
// they fit exactly.) That keeps a BV = 32, 2-stage CTA at 112 KB: two CTAs share an SM.
template <int BV>
struct FusedSmem {
  static constexpr int kLdV = BV + 8;  // 16-bit V-block rows
  // Per ring stage.
  static constexpr size_t kQBytes = size_t(kC) * kLdQK * 2;
  static constexpr size_t kVBytes = size_t(kC) * kLdV * 2;
  static constexpr size_t kTBytes = size_t(kC) * kLdT * 2;
  static constexpr size_t kGateBytes = size_t(kC) * 4;  // gamma
  static constexpr size_t kStageBytes = 2 * kQBytes + kVBytes + kTBytes + kGateBytes;
  // Single buffers of the per-chunk chain.
  static constexpr size_t kStateBytes = size_t(kK) * kLdV * 2;  // 16-bit copy of S
  static_assert(kStateBytes == 2 * kVBytes, "Vd and V' must fit exactly in S16's bytes");
  static constexpr size_t kChainBytes = kStateBytes + kVBytes;  // S16 (= Vd, V'), W'

  static size_t bytes(int stages) { return stages * kStageBytes + kChainBytes; }

  char* base;
  __device__ __forceinline__ char* stage(int s) const { return base + s * kStageBytes; }
  __device__ __forceinline__ SmemTile16 q(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s)), kLdQK};
  }
  __device__ __forceinline__ SmemTile16 k(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + kQBytes), kLdQK};
  }
  __device__ __forceinline__ SmemTile16 v(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + 2 * kQBytes), kLdV};
  }
  __device__ __forceinline__ SmemTile16 t(int s) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + 2 * kQBytes + kVBytes), kLdT};
  }
  __device__ __forceinline__ float* gam(int s) const {
    return reinterpret_cast<float*>(stage(s) + 2 * kQBytes + kVBytes + kTBytes);
  }
  __device__ __forceinline__ char* chain(int stages) const { return base + stages * kStageBytes; }
  __device__ __forceinline__ SmemTile16 s16(int stages) const {
    return {reinterpret_cast<uint16_t*>(chain(stages)), kLdV};
  }
  __device__ __forceinline__ SmemTile16 w(int stages) const {
    return {reinterpret_cast<uint16_t*>(chain(stages) + kStateBytes), kLdV};
  }
  __device__ __forceinline__ SmemTile16 vd(int stages) const {  // aliases S16 rows 0..63
    return {reinterpret_cast<uint16_t*>(chain(stages)), kLdV};
  }
  __device__ __forceinline__ SmemTile16 vp(int stages) const {  // aliases S16 rows 64..127
    return {reinterpret_cast<uint16_t*>(chain(stages) + kVBytes), kLdV};
  }
};

// Shared memory of the producer/consumer chunk loop (forward/chunk_loop_pc.cuh): the same ring
// stages, then per chunk parity b = c % 2 the buffers the output warpgroup reads while the
// chain warpgroup moves on (S16[b], Vd[b]), and the chain's own W' and V'. No aliasing: S16
// and Vd are read by the other warpgroup at times the chain does not control.
template <int BV>
struct FusedPcSmem {
  using Coop = FusedSmem<BV>;
  static constexpr size_t kStageBytes = Coop::kStageBytes;
  static constexpr size_t kStateBytes = Coop::kStateBytes;
  static constexpr size_t kVBytes = Coop::kVBytes;
  static constexpr int kStages = 2;  // parity-indexed buffers: the ring is 2 deep
  static constexpr size_t kChainBytes = 2 * kStateBytes + 2 * kVBytes + 2 * kVBytes;
  static size_t bytes() { return kStages * kStageBytes + kChainBytes; }

  Coop ring;  // q, k, v, t, gam of the 2 stages (ring.q(s) ...); its chain accessors unused
  __device__ __forceinline__ char* chain() const { return ring.base + kStages * kStageBytes; }
  __device__ __forceinline__ SmemTile16 s16(int b) const {
    return {reinterpret_cast<uint16_t*>(chain() + b * kStateBytes), Coop::kLdV};
  }
  __device__ __forceinline__ SmemTile16 vd(int b) const {
    return {reinterpret_cast<uint16_t*>(chain() + 2 * kStateBytes + b * kVBytes), Coop::kLdV};
  }
  __device__ __forceinline__ SmemTile16 w() const {
    return {reinterpret_cast<uint16_t*>(chain() + 2 * kStateBytes + 2 * kVBytes), Coop::kLdV};
  }
  __device__ __forceinline__ SmemTile16 vp() const {
    return {reinterpret_cast<uint16_t*>(chain() + 2 * kStateBytes + 3 * kVBytes), Coop::kLdV};
  }
};

// Shared memory of the column-warp chunk loop (forward/chunk_loop_cw.cuh): canonical wgmma
// operands as the copies land them, 1024-byte aligned. k, q and V in 64 x 64 16-bit tiles (64
// rows x 128 bytes, 128-byte swizzled); T and P as four 32-byte-swizzled slabs of 64 rows x
// 16 columns, whose zero rows above the diagonal stay zero from the kernel's start and whose
// other rows the copies of the lower-packed tiles land (LowerPackedTile). A 2-stage ring of, per stage, k as two halves (state rows
// 0..63, 64..127), the V-block as BV / 64 halves, T and P; then q (two halves, one buffer: a chunk's
// q is read only by its O product, so the next chunk's q streams in once every math warp's O
// product is done); then e and
// f and beta (3 x 64 fp32) of both stages, the mbarriers (stage full x 2, q full, stage empty x 2,
// q empty) and the output staging tile. 106 KB at BV = 64: two CTAs (16 warps) per SM; 130 KB
// at BV = 128.
//   The k halves, read k-major (rows = chunk rows = the product's n), are the B operand of
//   U^T = S16^T K^T; read n-contiguous (rows = depth) they are the B operand K of the state
//   update; q's halves are that of O^T = S16^T Q^T; T and P (rows = n) those of Vd^T and O^T,
//   one slab per depth step.
template <int BV>
struct FusedCwSmem {
  using HalfTile = SwizzledTile16<64>;  // 64 rows x 64 columns: one swizzle-atom column
  static constexpr int kVHalves = BV / 64;
  static constexpr size_t kHalfBytes = HalfTile::bytes(kC);
  static constexpr size_t kLowerBytes = LowerPackedTile::kSmemBytes;  // T, P (zero-prefixed slabs)
  static constexpr size_t kGateBytes = 3 * kC * sizeof(float);
  static constexpr size_t kStageBytes = (2 + kVHalves) * kHalfBytes + 2 * kLowerBytes;
  static constexpr int kStages = 2;
  static constexpr size_t kQOffset = kStages * kStageBytes;
  static constexpr size_t kGateOffset = kQOffset + 2 * kHalfBytes;
  static constexpr size_t kBarrierOffset = kGateOffset + kStages * kGateBytes;
  // The output staging tile (64 chunk rows x BV, BV / 64 swizzled halves): chunk c's output is
  // transposed through it during chunk c + 1's state update, apart from the ring (whose stage
  // of chunk c is then already being refilled).
  static constexpr size_t kOutOffset = (kBarrierOffset + 8 * sizeof(uint64_t) + 1023) / 1024 * 1024;
  static constexpr size_t bytes() { return kOutOffset + kVHalves * kHalfBytes; }
  // What one stage's copies deliver (the full barrier's transaction bytes), and q's.
  // (T and P deliver only their lower-packed bytes.)
  static constexpr uint32_t kStageTxBytes =
      uint32_t((2 + kVHalves) * kHalfBytes + 2 * LowerPackedTile::kBytes + kGateBytes);
  static constexpr uint32_t kQTxBytes = uint32_t(2 * kHalfBytes);
  static_assert(kStageBytes % 1024 == 0 && kHalfBytes % 1024 == 0 && kLowerBytes % 1024 == 0 &&
                    kQOffset % 1024 == 0,
                "every tile 1024-byte aligned: the 128-byte swizzle of TMA and wgmma keys on the "
                "address bits");
  static_assert(kC == 64 && kK == 128 && BV % 64 == 0, "64 x 64 tiles");

  char* base;  // 1024-byte aligned
  __device__ __forceinline__ char* stage(int s) const { return base + s * kStageBytes; }
  // Half h (state rows 64 h .. 64 h + 63) of k.
  __device__ __forceinline__ HalfTile k(int s, int h) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + h * kHalfBytes)};
  }
  // Columns 64 h .. 64 h + 63 of the V-block.
  __device__ __forceinline__ HalfTile v(int s, int h) const {
    return {reinterpret_cast<uint16_t*>(stage(s) + (2 + h) * kHalfBytes)};
  }
  __device__ __forceinline__ uint16_t* t(int s) const {
    return reinterpret_cast<uint16_t*>(stage(s) + (2 + kVHalves) * kHalfBytes);
  }
  __device__ __forceinline__ uint16_t* scores(int s) const {
    return reinterpret_cast<uint16_t*>(stage(s) + (2 + kVHalves) * kHalfBytes + kLowerBytes);
  }
  __device__ __forceinline__ HalfTile q(int h) const {
    return {reinterpret_cast<uint16_t*>(base + kQOffset + h * kHalfBytes)};
  }
  __device__ __forceinline__ float* ef(int s) const {  // e [64], f [64], then beta [64]
    return reinterpret_cast<float*>(base + kGateOffset + s * kGateBytes);
  }
  __device__ __forceinline__ uint64_t* full(int s) const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + s;
  }
  __device__ __forceinline__ HalfTile out(int h) const {
    return {reinterpret_cast<uint16_t*>(base + kOutOffset + h * kHalfBytes)};
  }
  __device__ __forceinline__ uint64_t* q_full() const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + kStages;
  }
  // Released by every math warp once the products reading the stage (or q) are done.
  __device__ __forceinline__ uint64_t* empty(int s) const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + kStages + 1 + s;
  }
  __device__ __forceinline__ uint64_t* q_empty() const {
    return reinterpret_cast<uint64_t*>(base + kBarrierOffset) + 2 * kStages + 1;
  }
};

}  // namespace gdn::fused
