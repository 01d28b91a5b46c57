// A CPU model of the CUDA chunked backward's 16-bit roundings (kernels/cuda/backward/): the
// chunked backward of reference_chunk.hpp computed the way the kernels compute it, in float64
// everywhere except at the points where a kernel rounds a value to the input dtype (a tensor-core
// operand or a 16-bit workspace plane), where the model rounds it the same way. With every point
// off it is the float64 chunked backward; with the kernels' points on, its error against the
// oracle is the kernels' error up to their fp32 accumulation (about 1e-7 relative, which the
// 16-bit roundings dwarf). It exists to find which rounding makes a backward output miss its
// bar and what repairs it (docs/decisions/backward-precision-at-sequence-ends.md); it is a test
// and study tool, not a reference: the oracle stays the float64 token loop.
//
// Rounding points, in the kernels' order (names as in bwd_params.cuh and the kernels' header
// comments; e = exp(gamma), f = exp(gamma_last - gamma), T = Gam o A0):
//   prepare:          T16
//   forward recompute (chunk_loop_cw.cuh): S16 (each chunk's start state, also states16, the
//                     local kernel's S), diag(beta) W', V' = diag(f) Vd
//   chain inputs:     P^T (gated scores), dVin = scale P^T dO, E = scale diag(e) dO, Xq = Q^T E
//   reverse chain:    dS' (dstate16, the B operand of K dS'), dV_new (dvnew16), dW' (= dv, the
//                     output, and the local kernel's operand), -diag(e) dW'
//   local gradients:  W', T diag(beta), V_new, dPm, dT = dAg diag(beta), X = T^T dT, Z
//   outputs:          dq, dk in the input dtype (after the sum over a GVA group)
// The fused kernel (fused_bwd.cuh, Model::fused) rounds at the same points but for: P^T with
// scale in it (no dVin rounding: dV_new = diag(f) K dS' + P^T dO summed in fp32), Xq's operand
// scale diag(e) Q (kQe; no E, no Xq rounding: Xq accumulates into fp32 dS), G3 from
// -diag(e) dW' (kEdw), G2 from diag(f) V_new (kFVnew), and <S, dS'> from S16 and the fp32 dS'.
// A "split" point keeps, in the chunks a SplitWhere selects, the value's high part and the
// 16-bit rounding of its residual (hi + lo): what a kernel pays two extra products for; or,
// with SplitWhere::to_fp32, the value rounded to fp32 (a product on CUDA cores in fp32).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gdn/reference.hpp"

namespace gdn::ref::rounding {

enum Point : uint32_t {
  kT16 = 1u << 0,
  kStates = 1u << 1,       // S16: recompute operand, states16
  kRecomputeW = 1u << 2,   // diag(beta) W' in the recompute
  kRecomputeVp = 1u << 3,  // V' = diag(f) Vd in the recompute
  kScoresT = 1u << 4,      // P^T in chain_inputs
  kDvin = 1u << 5,
  kEdO = 1u << 6,          // E = scale diag(e) dO
  kXq = 1u << 7,
  kDstate = 1u << 8,       // dS' (dstate16)
  kDvnew = 1u << 9,        // dV_new (dvnew16)
  kDv = 1u << 10,          // dW' = dv: the output and the local kernel's operand
  kEdw = 1u << 11,         // -diag(e) dW' (the chain's operand for K^T)
  kLocalW = 1u << 12,      // W' in the local kernel
  kTbeta = 1u << 13,       // T diag(beta)
  kVnew = 1u << 14,        // V_new recomputed in the local kernel
  kDpm = 1u << 15,
  kDt = 1u << 16,
  kX = 1u << 17,
  kZ = 1u << 18,
  kOutputs = 1u << 19,     // dq, dk stored in the input dtype
  kQe = 1u << 20,          // scale diag(e) Q, the fused kernel's A operand of Xq
  kFVnew = 1u << 21,       // diag(f) V_new, the fused kernel's A operand of G2
  kAllPoints = (1u << 22) - 1,
};

// The points' names, in bit order ("T16", "S16", ...); point_name(kDvin) == "dVin".
const std::vector<std::string>& point_names();
std::string point_name(uint32_t point);

// Where split precision (hi + lo) replaces a point's rounding: a bitmask of points per kind of
// chunk. A chunk may be of several kinds; a point is split when any of its kinds selects it.
struct SplitWhere {
  uint32_t short_chunks = 0;  // chunks of fewer than short_rows rows
  int short_rows = 16;
  uint32_t first_chunks = 0;  // a sequence's first chunk
  uint32_t last_chunks = 0;   // a sequence's last chunk
  uint32_t short_first_chunks = 0;  // a short chunk that also starts its sequence (S = h0)
  // A split point rounds to fp32 instead (products on CUDA cores in fp32, or fp32 planes).
  bool to_fp32 = false;
};

struct Model {
  // Rounds one value to the input dtype (for example gdn::testing::round_to_half).
  std::function<double(double)> round16;
  uint32_t points = kAllPoints;  // the roundings that are on
  SplitWhere split;
  // The 16-bit kernels' path as measured on the H200 seeds this model reproduces (on: as
  // measured). dAg = dV_new W'^T in split precision (dV_new and W' both hi + lo) in short
  // chunks: the kernels computed it so when measured; today the fp32 short-chunk repair
  // (short_chunk.cu) overwrites those rows instead, so the switch only keeps the measured path.
  bool split_dag_short = true;
  // <S, dS'> from the caller's fp32 h0 (dht) in a sequence's first (last) chunk.
  bool exact_sdot_at_ends = true;
  // Candidate repairs (off: the kernels today):
  // The local kernel's S in a sequence's first chunk is the caller's fp32 h0 (for all of its
  // products: K S, dO S^T, dW' S^T), not states16.
  bool exact_h0_first = false;
  // The chain's dS' in a sequence's last chunk is the caller's fp32 dht (for K dS' and, in the
  // local kernel, V_new dS'^T), not dstate16.
  bool exact_dht_last = false;
  // The fused kernel's path (see the header) instead of the reverse chain's and the local
  // kernel's; split_dag_short and exact_sdot_at_ends do not apply to it.
  bool fused = false;
  // Each value head's dq and dk rounded to the input dtype before the sum over its GVA group
  // (the fused kernel's parts; the local kernel's, where a CTA walks part of a group, are
  // fp32). No effect without a group.
  bool head_parts16 = false;
};

// The chunked backward under the model; outputs as oracle_backward's (dq, dk summed over the
// GVA group, then rounded when kOutputs is on).
BwdOutputs rounded_backward(const Shape& s, const Inputs& in, const Grads& gr, const Model& m,
                            const RunOptions& run = {});

}  // namespace gdn::ref::rounding
