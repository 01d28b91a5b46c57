// The local gradients of the chunked backward: persistent CTAs of 8 warps, one per SM, each
// walking its share of the items (chunk, group of the launch plan's local_heads value heads of
// one q/k head; the heads in order, q and k kept in shared memory, dq and dk summed over them)
// as units (item, head). Everything of the next unit that its phase A reads first (S^T, dS',
// v, dW', dV_new, T and, on a new item, k) loads while the current unit's 64 x 64 phase runs,
// into tiles that phase does not touch (T and k alternate between two slots); only dO and q
// load at a unit's start. Products on tensor cores: warpgroup products (wgmma, both operands
// from swizzled shared memory; 16-bit operands, fp32 accumulators), and one 64 x 64 product (X)
// on mma.sync, whose B would start mid-atom.
// Inputs per head: the chunk's start state S (stored transposed, S^T) and end-state gradient
// dS' (128 x 128), v, dO, dV_new and dW' = dv (64 x 128), T (64 x 64), gamma and beta; q, k
// (64 x 128) once. Warpgroup w / 4 computes, of a 64 x 128 result, columns 64 (w / 4) .. +63
// (of a 64 x 64 one, 32 (w / 4) .. +31), its warp w holding chunk rows 16 (w % 4) .. +15 (the
// m64nNk16 accumulator layout). With e = exp(gamma), f = exp(gamma_last - gamma), Gam[i][j] =
// exp(gamma_i - gamma_j) (i >= j):
//   A. W' = V - diag(e) K S                       (64 x 128, depth 128) -> shared, in V's place
//      V_new = (T diag(beta)) W'                  (64 x 128, depth 64) -> shared (recomputed:
//      cheaper than a store from the recompute, whose fragments hold it transposed)
//      G1 = dO S^T: dq = scale diag(e) G1, and the row sums (Q o G1) 1 for dgamma
//      G2 = V_new dS'^T: dk = diag(f) G2, (K o G2) 1
//      G3 = dW' S^T:    dk -= diag(e) G3, (K o G3) 1
//      dP = dO V_new^T, dAg = dV_new W'^T, Q K^T   (64 x 64, depth 128); <S, dS'>
//   B. dPm = scale dP o Gam o causal: dq += dPm K, dk += dPm^T Q, dgamma += rows - columns of
//      dPm o Q K^T; dbeta += columns of dAg o T; dT = dAg diag(beta); X = T^T dT;
//      dA = -X T^T (strictly lower); Z = diag(beta) dA o Gam: dk += Z K + Z^T K;
//      dbeta += rows of dA o K K^T o Gam; dgamma += rows - columns of Z o K K^T
//      (the row and column sums straight from the accumulator fragments: quad shuffles for the
//      rows, shuffles over the fragment's row groups for the columns, then the warps' partials
//      added in a fixed order)
//   C. dg = reverse chunk-local cumsum of dgamma (with the f terms' exclusive prefix added
//      directly, as the staged family does: summed the other way the O(1) terms cancel only up
//      to rounding), dbeta; dq, dk per value head to the workspace.
// The row sums replace three 64 x 128 x 128 products of the staged family by elementwise
// work on the G's: (Q S) . dO = (Q o dO S^T) 1, and likewise for (K S) . dW' and (K dS') . V_new.
// A sequence's short last chunk (fewer than kShortChunkRows rows) is computed here in 16 bits
// like any other and then recomputed in fp32 by short_chunk.cu, which overwrites its rows.
#pragma once

#include "bwd_params.cuh"
#include "common/chunk_math.cuh"
#include "arch/mma.cuh"
#include "arch/wgmma.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::bwd {

inline constexpr int kLocalThreads = 256;

struct LocalVectors {
  float gam[kC], e[kC], f[kC], beta[kC];
  // Per warpgroup (columns) or warp row block (rows) partial sums, added in a fixed order.
  float rs_qs[2][kC], rs_kds[2][kC], rs_ksw[2][kC], db_rows[2][kC];
  float dgam_rows[2][kC], dgam_cols[4][kC], dbeta_cols[4][kC];
  float dgam[kC], dbeta[kC], fsum[kC];
  float sdot[kLocalThreads / 32];
};

// Shared memory, every 16-bit tile in wgmma's 128-byte swizzle (fused::WgTile16) at a
// 1024-byte aligned offset: S^T and dS' (128 x 128), then eight 64 x 128 row tiles: q, k (slot
// 0), dO, V_new (both reused in phase B as four 64 x 64 operand tiles), dV_new, V (W' in
// place), dW', k (slot 1); two 64 x 64 T slots (the unit's T, and T diag(beta) in the other,
// which the next unit's T takes in phase B); the per-row vectors. 208 KB + the vectors: one CTA
// per SM.
struct LocalSmem {
  static constexpr size_t kStateBytes = size_t(kK) * kV * 2;
  static constexpr size_t kRowsBytes = size_t(kC) * kK * 2;
  static constexpr size_t kTBytes = size_t(kC) * kC * 2;
  static constexpr size_t kTile64Bytes = size_t(kC) * kC * 2;
  static_assert(4 * kTile64Bytes <= 2 * kRowsBytes, "phase-B tiles fit in the row tiles 2..3");
  static_assert(kStateBytes % 1024 == 0 && kRowsBytes % 1024 == 0 && kTBytes % 1024 == 0,
                "wgmma operand tiles start on 1024-byte boundaries");
  static constexpr size_t kRowsOffset = 2 * kStateBytes;
  static constexpr size_t kTOffset = kRowsOffset + 8 * kRowsBytes;
  static constexpr size_t kVecOffset = kTOffset + 2 * kTBytes;
  static constexpr size_t bytes() { return kVecOffset + sizeof(LocalVectors); }

  char* base;
  __device__ __forceinline__ fused::WgTile16 tile(size_t offset, int rows) const {
    return {reinterpret_cast<uint16_t*>(base + offset), rows};
  }
  // S^T: rows = value columns, columns = state rows.
  __device__ __forceinline__ fused::WgTile16 s() const { return tile(0, kV); }
  __device__ __forceinline__ fused::WgTile16 ds() const { return tile(kStateBytes, kK); }
  // Rows tiles: 0 q, 1 k (slot 0), 2 dO, 3 V_new, 4 dV_new, 5 V / W', 6 dW', 7 k (slot 1).
  __device__ __forceinline__ fused::WgTile16 rows(int i) const {
    return tile(kRowsOffset + i * kRowsBytes, kC);
  }
  __device__ __forceinline__ fused::WgTile16 k(int slot) const { return rows(slot ? 7 : 1); }
  __device__ __forceinline__ fused::WgTile16 t(int slot) const {
    return tile(kTOffset + slot * kTBytes, kC);
  }
  __device__ __forceinline__ LocalVectors& vec() const {
    return *reinterpret_cast<LocalVectors*>(base + kVecOffset);
  }
  // Phase B: 64 x 64 operand tiles in the row tiles 2..3.
  __device__ __forceinline__ fused::WgTile16 tile64(int i) const {
    return tile(kRowsOffset + 2 * kRowsBytes + i * kTile64Bytes, kC);
  }
};

cudaError_t launch_local_grads(const LocalParams& p, cudaStream_t stream);
const void* local_grads_symbol(bool bf16);

}  // namespace gdn::bwd
