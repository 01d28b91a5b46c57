// The fp32 repair of a sequence's short last chunk (short_chunk_math.hpp): after the chunked
// backward, one CTA per (sequence whose last chunk has fewer than kShortChunkRows rows, q/k head)
// recomputes that chunk's dq, dk (summed over the head's value heads in order), dv, dg, dbeta
// and, where the chunk also starts the sequence, dh0, and overwrites them.
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
};

cudaError_t launch_short_chunk_repair(const ShortChunkParams& p, cudaStream_t stream);

}  // namespace gdn::bwd
