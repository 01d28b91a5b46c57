// The local gradients of the chunked backward: persistent CTAs of 8 warps, one per SM, each
// walking its share of the items (chunk, group of the launch plan's local_heads value heads of
// one q/k head; the heads in order, q and k kept in shared memory, dq and dk summed over them;
// the next (item, head)'s states load during the current one's 64 x 64 phase), on tensor
// cores: warpgroup products (wgmma, both operands from swizzled shared memory; 16-bit
// operands, fp32 accumulators), and one 64 x 64 product (X) on mma.sync, whose B would start
// mid-atom.
// Inputs per head: the chunk's start state S (stored transposed, S^T) and end-state gradient
// dS' (128 x 128), v, dO, dV_new and dW' = dv (64 x 128), T (64 x 64), gamma and beta; q, k
// (64 x 128) once. Warpgroup w / 4 computes, of a 64 x 128 result, columns 64 (w / 4) .. +63
// (of a 64 x 64 one, 32 (w / 4) .. +31), its warp w holding chunk rows 16 (w % 4) .. +15 (the
// m64nNk16 accumulator layout). With e = exp(gamma), f = exp(gamma_last - gamma), Gam[i][j] =
// exp(gamma_i - gamma_j) (i >= j):
//   A. W' = V - diag(e) K S                       (64 x 128, depth 128) -> shared, in V's place
//      (its 16-bit high part; in a short chunk the low part joins dV_new's for dAg, in
//      split precision)
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
//   C. dg = reverse chunk-local cumsum of dgamma (with the f terms' exclusive prefix added
//      directly, as the staged family does: summed the other way the O(1) terms cancel only up
//      to rounding), dbeta; dq, dk per value head to the workspace.
// The row sums replace three 64 x 128 x 128 products of the staged family by elementwise
// work on the G's: (Q S) . dO = (Q o dO S^T) 1, and likewise for (K S) . dW' and (K dS') . V_new.
#pragma once

#include "bwd_params.cuh"
#include "common/chunk_math.cuh"
#include "arch/mma.cuh"
#include "arch/wgmma.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::bwd {

inline constexpr int kLocalThreads = 256;
inline constexpr int kLdF = kC + 1;    // fp32 64 x 64 scratch rows

struct LocalVectors {
  float gam[kC], e[kC], f[kC], beta[kC];
  float rs_qs[2][kC], rs_kds[2][kC], rs_ksw[2][kC], db_rows[2][kC];
  float dgam[kC], dbeta[kC], fsum[kC];
  float sdot[kLocalThreads / 32];
};

// Shared memory, every 16-bit tile in wgmma's 128-byte swizzle (fused::WgTile16) at a
// 1024-byte aligned offset: S^T and dS' (128 x 128; in phase B they take the next unit's),
// q, k, then dO, V_new (64 x 128; reused in phase B as four 64 x 64 operand tiles), dV_new,
// V (W' in place), dW' and W''s low part (a short chunk's, for dAg in split precision: a tile
// of its own frees W''s 32 fp32 registers per thread at once) (64 x 128; reused in phase B as
// three fp32 64 x 64 scratch matrices), T and T diag(beta) (64 x 64), and the per-row vectors.
// 212 KB + the vectors: one CTA per SM.
struct LocalSmem {
  static constexpr size_t kStateBytes = size_t(kK) * kV * 2;
  static constexpr size_t kRowsBytes = size_t(kC) * kK * 2;
  static constexpr size_t kTBytes = size_t(kC) * kC * 2;
  static constexpr size_t kScratchBytes = size_t(kC) * kLdF * 4;
  static constexpr size_t kTile64Bytes = size_t(kC) * kC * 2;
  static_assert(3 * kScratchBytes <= 4 * kRowsBytes, "fp32 scratch fits in the row tiles 4..7");
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
  // Half i of S^T's bytes as a 64 x 128 tile.
  __device__ __forceinline__ fused::WgTile16 s_half(int i) const { return tile(i * kRowsBytes, kC); }
  __device__ __forceinline__ fused::WgTile16 ds() const { return tile(kStateBytes, kK); }
  // Rows tiles: 0 q, 1 k, 2 dO, 3 V_new, 4 dV_new, 5 V / W', 6 dW', 7 W''s low part.
  __device__ __forceinline__ fused::WgTile16 rows(int i) const {
    return tile(kRowsOffset + i * kRowsBytes, kC);
  }
  __device__ __forceinline__ fused::WgTile16 t() const { return tile(kTOffset, kC); }
  __device__ __forceinline__ fused::WgTile16 t_beta() const {  // T diag(beta)
    return tile(kTOffset + kTBytes, kC);
  }
  __device__ __forceinline__ LocalVectors& vec() const {
    return *reinterpret_cast<LocalVectors*>(base + kVecOffset);
  }
  // Phase B.
  __device__ __forceinline__ float* scratch(int i) const {  // in the row tiles 4..7
    return reinterpret_cast<float*>(base + kRowsOffset + 4 * kRowsBytes + i * kScratchBytes);
  }
  __device__ __forceinline__ fused::WgTile16 tile64(int i) const {  // in the row tiles 2..3
    return tile(kRowsOffset + 2 * kRowsBytes + i * kTile64Bytes, kC);
  }
};

cudaError_t launch_local_grads(const LocalParams& p, cudaStream_t stream);
const void* local_grads_symbol(bool bf16);

}  // namespace gdn::bwd
