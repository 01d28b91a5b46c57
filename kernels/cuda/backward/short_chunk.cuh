// The fp32 repair of a sequence's short last chunk (short_chunk_math.hpp): after the chunked
// backward, one CTA per (sequence whose last chunk has fewer than kShortChunkRows rows, value
// head) recomputes that chunk's dv, dg, dbeta, the head's part of dq, dk and, where the chunk
// also starts the sequence, dh0, and overwrites them; with more than one value head per q/k
// head, a second launch sums the heads' dq, dk parts in head order (the order one CTA walking
// the group added them in) and writes them.
#pragma once

#include "bwd_params.cuh"

namespace gdn::bwd {

struct ShortChunkParams {
  Dims d;
  const int64_t* chunk_first;  // [num_seqs + 1]
  const ChunkInfo* table;
  const float* gcum;           // chunk-local cumsum of g [Ttot, Hv]
  const uint16_t* states16;    // S^T per chunk, 16-bit (S where the chunk does not start its sequence)
  const float* h0;             // optional
  const float* dht;            // optional
  const void* q;
  const void* k;
  const void* v;
  const void* d_o;
  const void* beta;
  void* dq;   // input dtype, [Ttot, Hk, K]
  void* dk;
  void* dv;   // input dtype, [Ttot, Hv, V]
  float* dg;
  void* dbeta;
  float* dh0;  // optional
  // Scratch for the heads' fp32 dq, dk parts (group > 1): the dstate16 slot of the short chunk
  // and the head, [2][kShortChunkRows - 1][K] floats in its 32 KB (no kernel after the local
  // gradients reads dstate16).
  uint16_t* dstate16;
};

cudaError_t launch_short_chunk_repair(const ShortChunkParams& p, cudaStream_t stream);

}  // namespace gdn::bwd
