// Where each piece of a training-mode forward's saved block lies (gdn_saved, gdn.h). The
// forward writes them in place of its own workspace buffers; the backward reads them in place
// of its prepare kernel's outputs and, when its forward recompute runs in CP segments of the
// same length, of the recompute's CP pass 1 and fix-up. Both carve the block with this one
// function, so the two sides agree on the layout by construction.
#pragma once

#include <cstdint>

#include "forward/params.cuh"
#include "staged/params.cuh"
#include "training/saved_size.hpp"

namespace gdn::fused {

// Upper bound on the segment count of segments of cp chunks (the segment table's size):
// sum_n max(1, ceil(chunks_n / cp)) <= ceil(chunks / cp) + N.
int64_t max_segments(const Dims& d, int cp);

// The buffers of the exact CP in segments of cp chunks: the segment table, pass 1's [M | N]
// per segment and the fix-up's start states. The forward's workspace, the backward's and the
// saved block each carve them with carve_cp.
struct CpBuffers {
  int64_t max_segs = 0;
  int64_t* seg_first = nullptr;   // [N + 1] the segment table's sequence offsets
  Segment* segs = nullptr;        // [max_segs]
  float* transfer = nullptr;      // [max_segs, Hv, K, 2 V] pass 1's [M | N] per segment
  float* starts = nullptr;        // [max_segs, Hv, K, V] each segment's start state (fix-up)
};
CpBuffers carve_cp(staged::WorkspaceCarver& c, const Dims& d, int cp);

struct SavedBuffers {
  // The prepare kernel's outputs, as the backward's own prepare launch writes them.
  float* gcum = nullptr;          // [Ttot, Hv] chunk-local cumulative sums of g
  uint16_t* t16 = nullptr;        // [chunk, Hv, 64, 64] T lower-packed (the recompute's operand)
  uint16_t* t16_rows = nullptr;   // [chunk, Hv, 64, 64] T row-major (the backward's kernels)
  float* gate_ef = nullptr;       // [chunk, Hv, 3, 64] exp gates and beta
  // With segment_chunks > 0: the forward's exact CP in segments of that length.
  int segment_chunks = 0;
  CpBuffers cp_bufs;
};

// base == nullptr measures (carver.used); the pieces come in the order above.
SavedBuffers carve_saved(staged::WorkspaceCarver& c, const Dims& d, int segment_chunks);

}  // namespace gdn::fused
